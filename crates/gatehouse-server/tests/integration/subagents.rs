//! Sub-agents over HTTP: a run started with `parent_run_id`, its gates in
//! the queue with the chain of agents that led to them, and a parent's
//! pause and cancel reaching its sub-agents' runs.

use crate::common;

use common::TestServer;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_gate_carries_its_chain_and_the_parents_cancel_reaches_it() {
    let s = TestServer::start().await;
    let parent = s.run().await;
    // The parent at work (an async question starts it).
    s.gate(&parent, json!({"kind": "question", "text": "Which branch?", "mode": "async"})).await;
    let (status, body) = s
        .post(
            "/run",
            &s.agent,
            json!({"run_input": {"prompt": "write the tests"}, "parent_run_id": parent, "agent": "deployer"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let child = body["run_id"].as_str().unwrap().to_owned();
    let gate = s.gate(&child, json!({"kind": "question", "text": "Which test framework?"})).await;

    let (_, list) = s.get("/gates?status=pending", &s.reviewer).await;
    let row = list["gates"].as_array().unwrap().iter().find(|g| g["id"] == gate.as_str()).unwrap().clone();
    assert_eq!(row["agent_chain"], json!(["deployer", "deployer"]), "{row}");
    let (_, state) = s.get(&format!("/run/{child}/state"), &s.reviewer).await;
    assert_eq!(state["run"]["parent_run_id"], parent.as_str());

    let (status, _) = s.post(&format!("/run/{parent}/pause"), &s.reviewer, json!({})).await;
    assert_eq!(status, 200);
    let (_, child_status) = s.get(&format!("/run/{child}/status"), &s.reviewer).await;
    assert_eq!(child_status["status"], "paused", "{child_status}");

    let (status, _) =
        s.call(reqwest::Method::DELETE, &format!("/run/{parent}?reason=wrong%20plan"), &s.reviewer, None).await;
    assert_eq!(status, 200);
    let (_, child_status) = s.get(&format!("/run/{child}/status"), &s.reviewer).await;
    assert_eq!(child_status["status"], "cancelled", "{child_status}");
    assert_eq!(child_status["status_reason"], format!("cancelled with its parent run {parent}"));
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_must_exist_and_be_the_agents_own() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {}, "parent_run_id": "run_nope"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("parent_run_id: no run"), "{body}");
    let theirs = s.run().await;
    let (status, body) = s.post("/run", &s.other_agent, json!({"run_input": {}, "parent_run_id": theirs})).await;
    assert_eq!(status, 403, "{body}");
}
