//! Opening a gate and waiting for its decision in one request (`POST
//! /runs/{run_id}/gates?wait=SECONDS`): a decision during the wait comes
//! back in the answer, a wait that passes first answers the pending gate,
//! and a wait outside the long poll's bounds is refused naming `wait`.

use crate::common;

use common::TestServer;
use serde_json::{json, Value};

fn approval() -> Value {
    json!({"kind": "approval", "action": "deploy", "text": "Deploy?", "payload": {"env": "prod"}})
}

/// Resolves the run's gate as the reviewer as soon as it is listed
/// (polling the queue, no timers), answering the resolve call's status.
async fn resolve_once_open(s: &TestServer, run: &str) -> u16 {
    loop {
        let (status, list) = s.get(&format!("/gates?run_id={run}&status=pending"), &s.reviewer).await;
        assert_eq!(status, 200, "{list}");
        if let Some(id) = list["gates"][0]["id"].as_str() {
            let body = json!({"action": "approve", "text": "ship it"});
            return s.post(&format!("/gates/{id}/resolve"), &s.reviewer, body).await.0;
        }
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_during_the_wait_comes_back_with_the_opened_gate() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let path = format!("/runs/{run}/gates?wait=60");
    let open = s.post(&path, &s.agent, approval());
    let (opened, resolved) = tokio::join!(open, resolve_once_open(&s, &run));
    let (status, body) = opened;
    assert_eq!(status, 201, "{body}");
    assert_eq!(resolved, 200);
    assert_eq!(body["status"], "resolved", "the call was held until the decision: {body}");
    assert_eq!(body["gate"]["status"], "resolved");
    assert_eq!(body["gate"]["id"], body["gate_id"]);
    assert_eq!(body["gate"]["decision"]["action"], "approve");
    assert_eq!(body["gate"]["decision"]["text"], "ship it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_that_passes_first_answers_the_pending_gate() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, body) = s.post(&format!("/runs/{run}/gates?wait=0.2"), &s.agent, approval()).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "pending");
    assert!(body["gate"]["decision"].is_null(), "{body}");
    let gate = body["gate_id"].as_str().expect("gate_id");
    let (_, again) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(again["gate"]["status"], "pending", "still open for the reviewer: {again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_outside_zero_to_sixty_seconds_is_refused_naming_wait_and_opens_nothing() {
    let s = TestServer::start().await;
    let run = s.run().await;
    for wait in ["61", "-1", "soon", "NaN"] {
        let (status, body) = s.post(&format!("/runs/{run}/gates?wait={wait}"), &s.agent, approval()).await;
        assert_eq!(status, 422, "wait={wait}: {body}");
        assert_eq!(body["field"], "wait", "wait={wait}: {body}");
    }
    let (_, list) = s.get(&format!("/gates?run_id={run}&status=all"), &s.reviewer).await;
    assert_eq!(list["total"], 0, "{list}");
}
