//! People set how much review there is; agents may ask for more, never for
//! less. An agent token cannot start a run whose gates pass without a
//! person, point webhooks anywhere, let its gates approve themselves on
//! timeout or name itself a decider; the review people configure
//! (`ServerConfig::oversight`) is what its runs get. A token never decides
//! a gate it opened unless the server allows self-review, and then the
//! decision says so.

use crate::common;

use common::TestServer;
use gatehouse_engine::Oversight;
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

async fn runs_count(s: &TestServer) -> usize {
    let (status, body) = s.get("/runs", &s.admin).await;
    assert_eq!(status, 200, "{body}");
    body.as_array().map(Vec::len).or_else(|| body["runs"].as_array().map(Vec::len)).expect("a list of runs")
}

#[tokio::test]
async fn an_agent_asking_for_an_auto_policy_is_refused_naming_the_field_and_nothing_is_stored() {
    let s = TestServer::start().await;
    let before = runs_count(&s).await;
    let (status, body) =
        s.post("/run", &s.agent, json!({"run_input": {}, "hitl_config": {"run_policy": "auto"}})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    assert!(message(&body).starts_with("hitl_config.run_policy:"), "{body}");
    assert!(message(&body).contains("never for less"), "{body}");
    assert_eq!(runs_count(&s).await, before, "nothing was stored");

    // The attack from the report: no way to get `rm -rf /prod` decided by the policy.
    let run = s.run().await;
    let (status, body) = s
        .post(
            &format!("/runs/{run}/tools/request_approval"),
            &s.agent,
            json!({"action": "rm -rf /prod", "mode": "sync", "wait": 0}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["gate"]["status"], "pending", "a person must decide it: {body}");
}

#[tokio::test]
async fn an_agent_cannot_loosen_thresholds_review_fewer_kinds_or_set_a_webhook() {
    let s = TestServer::start().await;
    let cases = [
        (
            json!({"run_policy": "auto_with_thresholds", "review_thresholds": {"confidence_min": 0.1}}),
            "hitl_config.run_policy",
        ),
        (json!({"allowed_actions": ["payload_review"]}), "hitl_config.allowed_actions"),
        (json!({"webhook_url": "http://169.254.169.254/latest/meta-data"}), "hitl_config.webhook_url"),
    ];
    for (config, field) in cases {
        let (status, body) = s.post("/run", &s.agent, json!({"run_input": {}, "hitl_config": config})).await;
        assert_eq!(status, 403, "{config}: {body}");
        assert!(message(&body).starts_with(&format!("{field}:")), "{config}: {body}");
    }
    let (status, body) =
        s.post("/run", &s.agent, json!({"run_input": {}, "protocol": {"auto_approve_threshold": 1.0}})).await;
    assert_eq!(status, 403, "{body}");
    assert!(message(&body).starts_with("protocol.auto_approve_threshold:"), "{body}");
    // Asking for more review is always fine.
    let (status, body) =
        s.post("/run", &s.agent, json!({"run_input": {}, "hitl_config": {"run_policy": "require_human"}})).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn an_agents_gate_may_not_approve_itself_on_timeout_or_name_itself_a_decider() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gates = format!("/runs/{run}/gates");
    let base = json!({"kind": "approval", "action": "deploy", "text": "Deploy?"});
    let with = |k: &str, v: Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    let cases = [
        (with("on_timeout", json!("approve")), "on_timeout"),
        (with("deciders", json!(["alice", "deployer"])), "deciders[1]"),
    ];
    for (body, field) in cases {
        let (status, reply) = s.post(&gates, &s.agent, body.clone()).await;
        assert_eq!(status, 403, "{body}: {reply}");
        assert!(message(&reply).starts_with(&format!("{field}:")), "{body}: {reply}");
    }
    let (status, body) = s.get(&format!("/gates?run_id={run}"), &s.reviewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["gates"].as_array().map(Vec::len).unwrap_or_else(|| body.as_array().map_or(0, Vec::len)), 0);
    // Rejecting when nobody answers is more care, not less.
    let mut stricter = with("on_timeout", json!("reject"));
    stricter["expires_in_secs"] = json!(60);
    let (status, body) = s.post(&gates, &s.agent, stricter).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn the_review_people_configure_is_what_an_agents_runs_get() {
    let oversight: Oversight = serde_json::from_value(json!({
        "agents": {"deployer": {"hitl_config": {"run_policy": "auto"}, "timeout_may_approve": true}}
    }))
    .unwrap();
    let s = TestServer::start_with(ServerConfig { oversight, ..ServerConfig::default() }).await;
    // Asking nothing, the agent gets what people set for it: its gates pass by the policy.
    let run = s.run().await;
    let (status, body) = s
        .post(
            &format!("/runs/{run}/gates"),
            &s.agent,
            json!({"kind": "approval", "action": "deploy", "text": "Deploy?",
            "on_timeout": "approve", "expires_in_secs": 60}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "resolved", "{body}");
    assert_eq!(body["gate"]["decision"]["decided_by"], "policy", "{body}");
    // Another agent, with no floor of its own, still waits for a person and may not ask for auto.
    let (status, body) =
        s.post("/run", &s.other_agent, json!({"run_input": {}, "hitl_config": {"run_policy": "auto"}})).await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn a_token_never_decides_a_gate_it_opened() {
    let s = TestServer::start().await;
    let run = s.run().await;
    // A reviewer token opens a gate on the run and tries to approve it itself.
    let (status, body) = s
        .post(
            &format!("/runs/{run}/gates"),
            &s.reviewer,
            json!({"kind": "approval", "action": "deploy", "text": "Deploy?"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let gate = body["gate_id"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 403, "{body}");
    assert!(message(&body).contains("same token"), "{body}");
    let (_, pending) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(pending["gate"]["status"], "pending", "{pending}");
    // Someone else decides it, and it is not marked self-decided.
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer2, json!({"action": "approve"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["decision"]["decided_by"], "bob");
    assert!(body["decision"].get("self_decided").is_none(), "{body}");
}

#[tokio::test]
async fn a_gate_holding_a_secret_still_remembers_who_opened_it() {
    // Redacting the request must not lose the opener: the secret makes the engine rewrite the gate.
    let s = TestServer::start().await;
    let run = s.run().await;
    let text = "Rotate the key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD now?";
    let (status, body) = s
        .post(&format!("/runs/{run}/gates"), &s.reviewer, json!({"kind": "approval", "action": "rotate", "text": text}))
        .await;
    assert_eq!(status, 201, "{body}");
    assert!(!body.to_string().contains("abcdefghijklmnopqrstuvwxyz0123456789"), "redacted: {body}");
    let gate = body["gate_id"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn with_self_review_allowed_the_decision_is_marked_self_decided() {
    let s = TestServer::start_with(ServerConfig { allow_self_review: true, ..ServerConfig::default() }).await;
    let run = s.run().await;
    let (status, body) = s
        .post(
            &format!("/runs/{run}/gates"),
            &s.reviewer,
            json!({"kind": "approval", "action": "deploy", "text": "Deploy?"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let gate = body["gate_id"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["decision"]["self_decided"], true, "{body}");
    let (status, metrics) = s.get("/metrics", &s.admin).await;
    assert_eq!(status, 200, "{metrics}");
    assert_eq!(metrics["overall"]["self_decided"], 1, "{metrics}");
}

#[tokio::test]
async fn webhook_targets_must_be_http_addresses_and_are_refused_otherwise() {
    let s = TestServer::start().await;
    for bad in ["file:///etc/passwd", "gopher://127.0.0.1:70/", "not a url"] {
        let (status, body) =
            s.post("/run", &s.reviewer, json!({"run_input": {}, "hitl_config": {"webhook_url": bad}})).await;
        assert_eq!(status, 422, "{bad}: {body}");
        assert!(message(&body).starts_with("hitl_config.webhook_url:"), "{bad}: {body}");
    }
    // A person may set one for a run.
    let (status, body) = s
        .post("/run", &s.reviewer, json!({"run_input": {}, "hitl_config": {"webhook_url": "http://127.0.0.1:9/hook"}}))
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn a_quality_gate_is_not_scored_by_the_token_that_opened_it_and_a_self_score_is_marked() {
    let quality = json!({"kind": "quality_score", "text": "Score the draft", "deliverable_id": "draft-1"});
    let score = json!({"score": 5.0, "justification": "fine"});
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, body) = s.post(&format!("/runs/{run}/gates"), &s.reviewer, quality.clone()).await;
    assert_eq!(status, 201, "{body}");
    let gate = body["gate_id"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&format!("/gates/{gate}/score"), &s.reviewer, score.clone()).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = s.post(&format!("/gates/{gate}/score"), &s.reviewer2, score.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["gate"]["decision"].get("self_decided").is_none(), "{body}");

    let s = TestServer::start_with(ServerConfig { allow_self_review: true, ..ServerConfig::default() }).await;
    let run = s.run().await;
    let (_, body) = s.post(&format!("/runs/{run}/gates"), &s.reviewer, quality).await;
    let gate = body["gate_id"].as_str().unwrap().to_owned();
    let (status, body) = s.post(&format!("/gates/{gate}/score"), &s.reviewer, score).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["gate"]["decision"]["self_decided"], true, "{body}");
}
