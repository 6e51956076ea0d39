//! `POST /run/{id}/resume` on a run awaiting a human: a reviewer lets it
//! go on without waiting. Its sync gates are released (async, still open),
//! an agent waiting on one is answered that it was released (never that it
//! passed), and the agent itself may not release its own review.

use crate::common;

use common::TestServer;
use serde_json::json;

fn deploy() -> serde_json::Value {
    json!({"kind": "approval", "action": "deploy", "text": "Deploy?", "payload": {"v": 1}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_resumes_a_waiting_run_and_its_waiting_agent_is_told_the_gate_was_released() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, deploy()).await;
    let (_, status) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status["status"], "awaiting_human");

    // The agent waits; the reviewer releases; the wait answers at once, undecided.
    let waiting = {
        let (http, url, agent) = (s.http.clone(), s.url(&format!("/gates/{gate}/wait?timeout=60")), s.agent.clone());
        tokio::spawn(
            async move { http.get(url).bearer_auth(agent).send().await.unwrap().json::<serde_json::Value>().await },
        )
    };
    let (code, resumed) = s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await;
    assert_eq!((code, resumed["status"].as_str()), (200, Some("active")), "{resumed}");
    let answered = waiting.await.unwrap().unwrap();
    assert_eq!(answered["status"], "pending", "a release is not a decision: {answered}");
    assert!(answered["decision"].is_null());
    assert_eq!(answered["released"]["by"], "alice", "{answered}");
    assert_eq!((answered["mode"].as_str(), answered["released"]["from_mode"].as_str()), (Some("async"), Some("sync")));

    // The log says who released it.
    let (_, events) = s.get(&format!("/runs/{run}/events"), &s.reviewer).await;
    let released: Vec<_> =
        events["events"].as_array().unwrap().iter().filter(|e| e["type"] == "gate_released").collect();
    assert_eq!(released.len(), 1, "{events}");
    assert_eq!((released[0]["gate_id"].as_str(), released[0]["actor"].as_str()), (Some(gate.as_str()), Some("alice")));

    // Waiting through the release holds until the decision, which is an ordinary one.
    let through = {
        let url = s.url(&format!("/gates/{gate}/wait?timeout=60&through_release=true"));
        let (http, agent) = (s.http.clone(), s.agent.clone());
        tokio::spawn(
            async move { http.get(url).bearer_auth(agent).send().await.unwrap().json::<serde_json::Value>().await },
        )
    };
    let (code, _) =
        s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "reject", "text": "not today"})).await;
    assert_eq!(code, 200);
    let decided = through.await.unwrap().unwrap();
    assert_eq!(
        (decided["status"].as_str(), decided["decision"]["action"].as_str()),
        (Some("resolved"), Some("reject"))
    );
    let (_, status) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status["status"], "active");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cannot_release_its_own_review() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, deploy()).await;
    let (code, body) = s.post(&format!("/run/{run}/resume"), &s.agent, json!({})).await;
    assert_eq!(code, 403, "{body}");
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert!(detail["gate"]["released"].is_null(), "{detail}");
    assert_eq!(detail["gate"]["mode"], "sync");
    let (_, status) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status["status"], "awaiting_human");
}
