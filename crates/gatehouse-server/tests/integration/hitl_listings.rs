//! The HITL run API's listings over real HTTP: all runs, active runs, a session's
//! active runs and pending approvals, with their filters, limits, ordering
//! and what agents may see.

use crate::common;

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

/// Starts a run with `body` as `token`, returning its id.
async fn start(s: &TestServer, token: &str, body: Value) -> String {
    let (status, started) = s.post("/run", token, body).await;
    assert_eq!(status, 201, "{started}");
    started["run_id"].as_str().expect("run_id").to_owned()
}

fn payload_review(payload: Value) -> Value {
    json!({"kind": "payload_review", "text": "Send this payload?", "payload": payload})
}

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

fn ids(list: &Value, key: &str) -> Vec<String> {
    list[key].as_array().expect("array").iter().map(|r| r["id"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_runs_filters_by_user_and_status_limits_and_counts_pending_gates() {
    let s = TestServer::start().await;
    let a = start(&s, &s.agent, json!({"run_input": {}, "user_id": "u1"})).await;
    let b = start(&s, &s.agent, json!({"run_input": {}, "user_id": "u1"})).await;
    let c = start(&s, &s.agent, json!({"run_input": {}, "user_id": "u2"})).await;
    s.gate(&a, payload_review(json!({}))).await;
    s.gate(&a, json!({"kind": "question", "text": "?"})).await;
    s.call(Method::DELETE, &format!("/run/{c}"), &s.reviewer, None).await;

    let (status, list) = s.get("/runs?user_id=u1", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()], "newest first");
    let first = &list["runs"][1];
    assert_eq!((first["pending_gates"].as_u64(), first["progress"]["total"].as_u64()), (Some(2), Some(2)));
    assert_eq!(
        (first["agent"].as_str(), first["user_id"].as_str(), first["status"].as_str()),
        (Some("deployer"), Some("u1"), Some("awaiting_human"))
    );
    let (_, list) = s.get("/runs?status=cancelled", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![c.clone()]);
    let (_, list) = s.get("/runs?status=awaiting_human,created", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()]);
    let (_, list) = s.get("/runs?limit=1", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![c.clone()]);
    let (_, list) = s.get("/runs?user_id=&status=&limit=50", &s.reviewer).await;
    assert_eq!(ids(&list, "runs").len(), 3, "empty values mean no filter, as the HITL run API writes them");
    // Paging back in time: each page continues where the previous one ended.
    let (_, list) = s.get("/runs?limit=2&offset=1", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()]);
    let (_, list) = s.get("/runs?limit=2&offset=2", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![a.clone()]);
    let (_, list) = s.get("/runs/active?offset=1", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![a.clone()], "cancelled c is not active; b is skipped");
    let (_, list) = s.get("/runs?offset=3", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), Vec::<String>::new());
    let (_, list) = s.get("/runs?offset=1", &s.agent).await;
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()], "an agent's own runs page the same way");

    for (query, param) in [
        ("status=running", "status"),
        ("limit=abc", "limit"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("offset=-1", "offset"),
        ("offset=many", "offset"),
    ] {
        let (status, body) = s.get(&format!("/runs?{query}"), &s.reviewer).await;
        assert_eq!(status, 422, "{query}: {body}");
        assert!(message(&body).starts_with(param), "{query}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_list_only_the_runs_they_drive_or_take_part_in() {
    let s = TestServer::start().await;
    let mine = s.run().await;
    let theirs = start(&s, &s.other_agent, json!({"run_input": {}})).await;
    let shared =
        start(&s, &s.other_agent, json!({"run_input": {}, "participants": [{"name": "deployer", "role": "agent"}]}))
            .await;
    let (_, list) = s.get("/runs", &s.agent).await;
    assert_eq!(ids(&list, "runs"), vec![shared.clone(), mine.clone()]);
    let (_, list) = s.get("/runs/active", &s.other_agent).await;
    assert_eq!(ids(&list, "runs"), vec![shared.clone(), theirs.clone()]);
    let (_, list) = s.get("/runs", &s.reviewer).await;
    assert_eq!(ids(&list, "runs").len(), 3, "reviewers see every run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn active_runs_exclude_ended_ones_and_are_scoped_by_session_and_user() {
    let s = TestServer::start().await;
    let a = start(&s, &s.agent, json!({"run_input": {}, "session_id": "s1", "user_id": "u1"})).await;
    let b = start(&s, &s.agent, json!({"run_input": {}, "session_id": "s1", "user_id": "u2"})).await;
    let ended = start(&s, &s.agent, json!({"run_input": {}, "session_id": "s1", "user_id": "u1"})).await;
    let elsewhere = start(&s, &s.agent, json!({"run_input": {}, "session_id": "s2", "user_id": "u1"})).await;
    s.call(Method::DELETE, &format!("/run/{ended}"), &s.reviewer, None).await;

    let (_, list) = s.get("/runs/active?session_id=s1", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()]);
    let (_, list) = s.get("/runs/active?user_id=u1", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![elsewhere.clone(), a.clone()]);
    let (_, list) = s.get("/runs/active?status=created&session_id=s2", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![elsewhere.clone()]);
    let (status, body) = s.get("/runs/active?status=completed", &s.reviewer).await;
    assert_eq!(status, 422, "a terminal status is never active: {body}");
    assert!(message(&body).starts_with("status"), "{body}");

    let (status, list) = s.get("/sessions/s1/active", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(ids(&list, "runs"), vec![b.clone(), a.clone()]);
    let (_, list) = s.get("/sessions/s1/active?user_id=u2", &s.reviewer).await;
    assert_eq!(ids(&list, "runs"), vec![b]);
    let (_, list) = s.get("/sessions/none/active", &s.reviewer).await;
    assert_eq!(list["runs"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_approvals_are_the_users_gates_in_panel_order() {
    let s = TestServer::start().await;
    let mine = start(&s, &s.agent, json!({"run_input": {}, "user_id": "u1"})).await;
    let other_user = start(&s, &s.agent, json!({"run_input": {}, "user_id": "u2"})).await;
    let foreign = start(&s, &s.other_agent, json!({"run_input": {}, "user_id": "u1"})).await;
    let low_async =
        s.gate(&mine, json!({"kind": "question", "text": "later?", "mode": "async", "priority": "urgent"})).await;
    let normal = s.gate(&mine, json!({"kind": "question", "text": "normal?"})).await;
    let high = s.gate(&mine, json!({"kind": "question", "text": "high?", "priority": "high"})).await;
    let decided = s.gate(&mine, payload_review(json!({}))).await;
    s.post(&format!("/run/{mine}/approve"), &s.reviewer, json!({"approval_id": decided, "action": "approve"})).await;
    let theirs = s.gate(&other_user, json!({"kind": "question", "text": "u2?"})).await;
    let (status, body) =
        s.post(&format!("/runs/{foreign}/gates"), &s.other_agent, json!({"kind": "question", "text": "x?"})).await;
    assert_eq!(status, 201, "{body}");
    let intruders = body["gate_id"].as_str().unwrap().to_owned();

    let (status, list) = s.get("/approvals/pending?user_id=u1", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    let got = ids(&list, "gates");
    assert_eq!(got[..3], [high.clone(), normal.clone(), intruders.clone()], "sync first, then priority, then age");
    assert_eq!(got[3], low_async, "async last whatever its priority");
    assert_eq!(list["total"], 4);
    let (_, list) = s.get("/approvals/pending", &s.reviewer).await;
    assert_eq!(list["total"], 5, "every pending gate without a user");
    assert!(ids(&list, "gates").contains(&theirs));
    let (_, list) = s.get("/approvals/pending?user_id=u1", &s.agent).await;
    assert_eq!(ids(&list, "gates"), vec![high, normal, low_async], "an agent sees only its own gates");
    let (status, body) = s.get("/approvals/pending?limit=none", &s.reviewer).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("limit"), "{body}");
}
