//! Allow-rules over HTTP: a reviewer approves with "always allow", the
//! agent's next identical gate comes back already approved (its wait
//! returns at once), rules are listed and revoked; agents get 403 and bad
//! input is 422 naming the field.

use crate::common;

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

fn deploy(env: &str) -> Value {
    json!({"kind": "approval", "action": "deploy", "text": "Deploy the web app?", "payload": {"env": env, "version": "1.4.2"}})
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn approving_with_always_allow_passes_the_agents_next_identical_gate_until_revoked() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let first = s.gate(&run, deploy("staging")).await;
    let decision = json!({"action": "approve", "allow_rule": {"for_secs": 3600}});
    let (status, body) = s.post(&format!("/gates/{first}/resolve"), &s.reviewer, decision).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, deploy("staging")).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "resolved", "already approved");
    let decided_by = body["gate"]["decision"]["decided_by"].as_str().unwrap().to_owned();
    assert!(decided_by.starts_with("rule:allow_"), "{decided_by}");
    assert_eq!(body["gate"]["decision"]["origin"]["by"], "auto");
    let second = body["gate_id"].as_str().unwrap().to_owned();
    let (status, waited) = s.get(&format!("/gates/{second}/wait?timeout=30"), &s.agent).await;
    assert_eq!((status, waited["status"].as_str()), (200, Some("resolved")));

    let (status, list) = s.get("/allow-rules", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    let rule = &list["rules"][0];
    assert_eq!(list["rules"].as_array().unwrap().len(), 1);
    assert_eq!(format!("rule:{}", rule["id"].as_str().unwrap()), decided_by);
    assert_eq!((rule["agent"].as_str(), rule["action"].as_str()), (Some("deployer"), Some("deploy")));
    assert_eq!((rule["created_by"].as_str(), rule["status"].as_str()), (Some("alice"), Some("live")));
    assert_eq!(rule["args"], json!({"env": "staging", "version": "1.4.2"}));
    assert_eq!((rule["uses"].as_u64(), rule["gate_id"].as_str()), (Some(1), Some(first.as_str())));

    // Other arguments wait for a human.
    let (_, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, deploy("prod")).await;
    assert_eq!(body["status"], "pending");

    let id = rule["id"].as_str().unwrap();
    let (status, revoked) = s.call(Method::DELETE, &format!("/allow-rules/{id}"), &s.reviewer2, None).await;
    assert_eq!(status, 200, "{revoked}");
    assert_eq!((revoked["status"].as_str(), revoked["revoked_by"].as_str()), (Some("revoked"), Some("bob")));
    let (status, again) = s.call(Method::DELETE, &format!("/allow-rules/{id}"), &s.reviewer, None).await;
    assert_eq!((status, again["revoked_by"].as_str()), (200, Some("bob")), "revoking again changes nothing");

    let (_, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, deploy("staging")).await;
    assert_eq!(body["status"], "pending", "revoked at once");
    let (_, live) = s.get("/allow-rules?status=live", &s.reviewer).await;
    assert_eq!(live["rules"], json!([]));
    let (_, past) = s.get("/allow-rules?status=revoked&agent=deployer", &s.admin).await;
    assert_eq!(past["rules"].as_array().unwrap().len(), 1);
    let (_, none) = s.get("/allow-rules?agent=intruder", &s.reviewer).await;
    assert_eq!(none["rules"], json!([]));
}

#[tokio::test]
async fn a_rule_made_directly_passes_matching_gates_with_a_glob() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let rule = json!({"agent": "deployer", "action": "deploy", "args": {"env": "staging", "version": "1.*"}, "note": "staging is fine"});
    let (status, made) = s.post("/allow-rules", &s.reviewer, rule).await;
    assert_eq!(status, 201, "{made}");
    assert_eq!((made["created_by"].as_str(), made["expires_at"].as_str()), (Some("alice"), None), "until revoked");

    let (_, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, deploy("staging")).await;
    assert_eq!(body["status"], "resolved");
    // The other agent's gates never borrow the rule, even naming the agent.
    let (_, theirs) = s.post("/run", &s.other_agent, json!({"run_input": {"prompt": "x"}})).await;
    let theirs = theirs["run_id"].as_str().unwrap();
    let mut posing = deploy("staging");
    posing["agent"] = json!("deployer");
    let (status, body) = s.post(&format!("/runs/{theirs}/gates"), &s.other_agent, posing).await;
    assert_eq!((status, body["status"].as_str()), (201, Some("pending")), "{body}");
}

#[tokio::test]
async fn agents_may_not_list_make_or_revoke_rules_nor_allow_their_own_gates() {
    let s = TestServer::start().await;
    let rule = json!({"agent": "deployer", "action": "deploy", "any_args": true});
    let (status, made) = s.post("/allow-rules", &s.admin, rule.clone()).await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["args"], Value::Null, "any arguments");
    let id = made["id"].as_str().unwrap();

    assert_eq!(s.get("/allow-rules", &s.agent).await.0, 403);
    assert_eq!(s.post("/allow-rules", &s.agent, rule).await.0, 403);
    assert_eq!(s.call(Method::DELETE, &format!("/allow-rules/{id}"), &s.agent, None).await.0, 403);
    let run = s.run().await;
    let mut human = deploy("prod");
    human["requires_human"] = json!(true);
    let gate = s.gate(&run, human).await;
    let (status, _) =
        s.post(&format!("/gates/{gate}/resolve"), &s.agent, json!({"action": "approve", "allow_rule": {}})).await;
    assert_eq!(status, 403);
    let (_, list) = s.get("/allow-rules", &s.reviewer).await;
    assert_eq!(list["rules"][0]["status"], "live", "still there, unrevoked");
}

#[tokio::test]
async fn bad_rules_are_422_naming_the_field_and_unknown_ones_404() {
    let s = TestServer::start().await;
    let bad = [
        (json!({"action": "deploy", "any_args": true}), "agent"),
        (json!({"agent": "deployer", "action": " ", "any_args": true}), "action"),
        (json!({"agent": "deployer", "action": "deploy"}), "args"),
        (json!({"agent": "deployer", "action": "deploy", "args": {"env": "*"}, "any_args": true}), "args"),
        (json!({"agent": "deployer", "action": "deploy", "any_args": true, "for_secs": 0}), "for_secs"),
        (json!({"agent": "deployer", "action": "deploy", "any_args": true, "for_secs": -5}), "for_secs"),
        (json!({"agent": "deployer", "action": "deploy", "any_args": true, "for_secs": 400_000_000}), "for_secs"),
    ];
    for (body, field) in bad {
        let (status, reply) = s.post("/allow-rules", &s.reviewer, body.clone()).await;
        assert_eq!(status, 422, "{body} → {reply}");
        let named =
            message(&reply).starts_with(&format!("{field}:")) || message(&reply).contains(&format!("`{field}`"));
        assert!(named, "{body} → {reply}");
    }
    for query in ["status=bogus", "limit=0", "limit=many"] {
        let (status, reply) = s.get(&format!("/allow-rules?{query}"), &s.reviewer).await;
        assert_eq!(status, 422, "{query} → {reply}");
    }
    let (status, reply) = s.call(Method::DELETE, "/allow-rules/allow_nope", &s.reviewer, None).await;
    assert_eq!(status, 404, "{reply}");

    // In a decision: the rule's fields, by their path; nothing is decided.
    let run = s.run().await;
    let gate = s.gate(&run, deploy("staging")).await;
    let decisions = [
        (json!({"action": "approve", "allow_rule": {"for_secs": 0}}), "allow_rule.for_secs"),
        (json!({"action": "approve", "allow_rule": {"for_secs": "soon"}}), "allow_rule.for_secs"),
        (json!({"action": "approve", "allow_rule": {"args": {"env": "prod", "version": "*"}}}), "allow_rule.args"),
        (json!({"action": "reject", "text": "no", "allow_rule": {}}), "allow_rule"),
    ];
    for (body, field) in decisions {
        let (status, reply) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, body.clone()).await;
        assert_eq!(status, 422, "{body} → {reply}");
        assert!(message(&reply).starts_with(&format!("{field}:")), "{body} → {reply}");
    }
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "pending");
    let (_, list) = s.get("/allow-rules", &s.reviewer).await;
    assert_eq!(list["rules"], json!([]));
}
