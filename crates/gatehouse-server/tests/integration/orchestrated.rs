//! Orchestrated runs over HTTP: `POST /run` with a tool starts a run
//! Gatehouse drives; its gates are approved through the HITL run API's
//! approve endpoint like any other; bad inputs are 422s naming the field; the
//! caller (even an agent) follows its run.

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use serde_json::{json, Value};

const PROMPT: &str = "Summarise the release notes for the beta in three sentences";

/// Polls `path` until `done` holds for its body.
async fn until(s: &TestServer, path: &str, token: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = s.get(path, token).await;
        assert_eq!(status, 200, "{body}");
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "gave up waiting on {path}: {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn pending_kind(status: &Value, kind: &str) -> Option<String> {
    status["pending_actions"]
        .as_array()?
        .iter()
        .find(|g| g["kind"] == kind)
        .map(|g| g["id"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_naming_a_tool_is_driven_by_gatehouse_through_its_reviews() {
    let s = TestServer::start().await;
    let (status, body) = s
        .post("/run", &s.agent, json!({"run_input": {"tool": "scripted:chat", "prompt": PROMPT}, "user_id": "u1"}))
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["orchestrated"], true);
    let run = body["run_id"].as_str().unwrap().to_owned();
    let status_path = format!("/run/{run}/status");

    // The agent that asked follows the run; a reviewer approves the payload.
    let st = until(&s, &status_path, &s.agent, |b| pending_kind(b, "payload_review").is_some()).await;
    assert_eq!(st["status"], "awaiting_human");
    let gate = pending_kind(&st, "payload_review").unwrap();
    let (code, _) =
        s.post(&format!("/run/{run}/approve"), &s.reviewer, json!({"approval_id": gate, "action": "approve"})).await;
    assert_eq!(code, 200);
    // The response review: the reviewer edits the text.
    let st = until(&s, &status_path, &s.reviewer, |b| pending_kind(b, "response_review").is_some()).await;
    let gate = pending_kind(&st, "response_review").unwrap();
    let edit = json!({"approval_id": gate, "action": "edit", "edits": {"audited": "Short notes."}});
    let (code, body) = s.post(&format!("/run/{run}/approve"), &s.reviewer, edit).await;
    assert_eq!(code, 200, "{body}");

    let st = until(&s, &status_path, &s.agent, |b| b["status"] == "completed").await;
    assert_eq!(st["pending_actions"], json!([]));
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.agent).await;
    assert_eq!(state["run"]["agent"], "gatehouse");
    assert_eq!(state["run"]["result"]["text"], "Short notes.");
    let types: Vec<&str> =
        state["turns"].as_array().unwrap().iter().filter_map(|t| t["metadata"]["decision_type"].as_str()).collect();
    assert_eq!(types, ["human_approved", "human_edited"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_orchestrated_inputs_are_422s_naming_the_field() {
    let s = TestServer::start().await;
    for (input, expected) in [
        (json!({"tool": "gpt-99", "prompt": "x"}), "run_input.tool: no provider offers `gpt-99`"),
        (json!({"tool": "scripted:chat"}), "run_input.prompt: is required and not blank"),
        (json!({"tool": "scripted:chat", "prompt": "x", "collaborate": "yes"}), "run_input.collaborate: must be"),
        (
            json!({"prompt": "x", "agent_tool_config": {"REPLICATETOOL": {}}}),
            "run_input.agent_tool_config.REPLICATETOOL",
        ),
    ] {
        let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
        assert_eq!(status, 422, "{body}");
        assert!(body["message"].as_str().unwrap().starts_with(expected), "{body}");
        let field = body["field"].as_str().expect("the field is named");
        assert!(body["message"].as_str().unwrap().starts_with(&format!("{field}: ")), "{body}");
    }
    let (status, body) = s.post(
        "/run",
        &s.reviewer,
        json!({"run_input": {"tool": "scripted:chat", "prompt": "x"}, "hitl_config": {"run_policy": "auto_with_thresholds"}}),
    ).await;
    assert_eq!(status, 422, "{body}");
    let (_, runs) = s.get("/runs", &s.reviewer).await;
    assert_eq!(runs["runs"], json!([]), "nothing was stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collaboration_is_driven_over_http_and_a_rejected_plan_cancels_the_run() {
    let s = TestServer::start().await;
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": {"goal": false}});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input, "title": "Beta launch"})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let st = until(&s, &format!("/run/{run}/status"), &s.reviewer, |b| pending_kind(b, "plan_review").is_some()).await;
    assert_eq!(st["progress"]["total"], 3, "the plan's tasks count as progress: {st}");
    let gate = pending_kind(&st, "plan_review").unwrap();
    let reject = json!({"approval_id": gate, "action": "reject", "reason": "not this quarter"});
    assert_eq!(s.post(&format!("/run/{run}/approve"), &s.reviewer, reject).await.0, 200);
    let st = until(&s, &format!("/run/{run}/status"), &s.reviewer, |b| b["status"] == "cancelled").await;
    assert_eq!(st["status_reason"], "the plan was rejected by alice: not this quarter");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_created_without_starting_waits_for_its_start() {
    let s = TestServer::start().await;
    let input = json!({"tool": "scripted:chat", "prompt": PROMPT});
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": input, "start": false})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.agent).await;
    assert_eq!(state["run"]["status"], "created", "{state}");
    assert_eq!(state["run"]["input"]["wait_for_start"], true, "kept with the run, so a restart waits too");

    // Another agent may not start it; its own agent (a participant) or a reviewer may.
    let start = format!("/run/{run}/start");
    assert_eq!(s.post(&start, &s.other_agent, json!({})).await.0, 403, "not its run");
    let (_, st) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!((st["status"].clone(), st["pending_actions"].clone()), (json!("created"), json!([])), "{st}");
    let (status, started) = s.post(&start, &s.agent, json!({})).await;
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["status"], "active");
    let st =
        until(&s, &format!("/run/{run}/status"), &s.reviewer, |b| !b["pending_actions"].as_array().unwrap().is_empty())
            .await;
    assert_eq!(st["status"], "awaiting_human", "driven once started: {st}");
    let (status, again) = s.post(&start, &s.reviewer, json!({})).await;
    assert_eq!(status, 409, "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_run_created_without_starting_is_started_by_it() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {"task": "tidy"}, "start": false})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let (status, started) = s.post(&format!("/run/{run}/start"), &s.agent, json!({})).await;
    assert_eq!((status, started["status"].clone()), (200, json!("active")), "{started}");
    let (status, body) = s.post("/run/run_missing/start", &s.reviewer, json!({})).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_is_retried_from_the_step_that_stopped_it() {
    let s = TestServer::start().await;
    let (status, body) =
        s.post("/run", &s.reviewer, json!({"run_input": {"tool": "scripted:chat", "prompt": PROMPT}})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let status_path = format!("/run/{run}/status");
    let first = until(&s, &status_path, &s.reviewer, |b| !b["pending_actions"].as_array().unwrap().is_empty()).await;
    let (kind, withdrawn) = (first["pending_actions"][0]["kind"].clone(), first["pending_actions"][0]["id"].clone());
    let (code, _) =
        s.call(reqwest::Method::DELETE, &format!("/run/{run}?reason=wrong+prompt"), &s.reviewer, None).await;
    assert_eq!(code, 200);

    // Only a person retries, and only a run that ended without completing.
    let retry = format!("/run/{run}/retry");
    assert_eq!(s.post(&retry, &s.agent, json!({})).await.0, 403);
    let (status, retried) = s.post(&retry, &s.reviewer, json!({})).await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!((retried["status"].as_str(), retried["retries"].as_u64()), (Some("active"), Some(1)), "{retried}");
    assert_eq!(retried["status_reason"], "retried by alice (retry 1)");
    assert_eq!(s.post(&retry, &s.reviewer, json!({})).await.0, 409, "a live run is not retried");

    // Gatehouse drives it again: the step that stopped asks anew, with a new gate.
    let again = until(&s, &status_path, &s.reviewer, |b| {
        b["pending_actions"].as_array().unwrap().iter().any(|g| g["id"] != withdrawn)
    })
    .await;
    assert_eq!(again["status"], "awaiting_human", "{again}");
    assert_eq!(again["pending_actions"][0]["kind"], kind, "{again}");
    let (_, audit) = s.get("/audit/verify", &s.admin).await;
    assert_eq!(audit["problems"], json!([]), "{audit}");
}
