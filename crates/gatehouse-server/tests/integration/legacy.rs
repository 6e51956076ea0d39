//! The older run endpoint, `POST /api/teams/run`: the body is the run input
//! itself, the answer 202 with the run's id; review is off unless asked for
//! a person's token, and never below what people set for an agent's.

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

async fn teams_run(s: &TestServer, token: &str, body: Value) -> (u16, Value) {
    let url = s.base.replace("/api/hitl", "/api/teams/run");
    let resp = s.http.request(Method::POST, url).bearer_auth(token).json(&body).send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Polls the run's status until `done` holds for it.
async fn until(s: &TestServer, run: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = s.get(&format!("/run/{run}/status"), &s.reviewer).await;
        assert_eq!(status, 200, "{body}");
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "gave up waiting on {run}: {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_run_is_accepted_and_runs_to_its_end_without_review_unless_asked() {
    let s = TestServer::start().await;
    let (status, body) = teams_run(
        &s,
        &s.reviewer,
        json!({"tool": "scripted:chat", "prompt": "Summarise the notes", "user_id": "u7", "system": "Be brief"}),
    )
    .await;
    assert_eq!(status, 202, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    assert!(body["status_url"].as_str().unwrap().ends_with(&format!("/api/hitl/run/{run}/status")), "{body}");
    let done = until(&s, &run, |b| b["status"] == "completed").await;
    assert_eq!(done["pending_actions"], json!([]));
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    assert_eq!(state["run"]["hitl_config"]["run_policy"], "auto", "{state}");
    assert_eq!(state["run"]["user_id"], "u7");
    assert_eq!(state["run"]["input"]["system"], "Be brief", "the rest of the input is passed on");

    // Asked for, review is the HITL API's: the payload waits for a person.
    let (status, body) =
        teams_run(&s, &s.reviewer, json!({"tool": "scripted:chat", "prompt": "Again", "hitl": true})).await;
    assert_eq!(status, 202, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let waiting = until(&s, &run, |b| b["status"] == "awaiting_human").await;
    assert_eq!(waiting["pending_actions"][0]["mode"], "sync", "{waiting}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_run_gets_the_review_people_set_not_less() {
    let s = TestServer::start().await;
    let (status, body) = teams_run(&s, &s.agent, json!({"tool": "scripted:chat", "prompt": "Deploy the notes"})).await;
    assert_eq!(status, 202, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let waiting = until(&s, &run, |b| b["status"] == "awaiting_human").await;
    assert_eq!(waiting["pending_actions"][0]["kind"], "payload_review", "{waiting}");
    // And it cannot ask for less.
    let (status, body) =
        teams_run(&s, &s.agent, json!({"tool": "scripted:chat", "prompt": "x", "hitl_config": {"run_policy": "auto"}}))
            .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["field"], "hitl_config.run_policy", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bodies_are_422s_naming_the_bodys_own_field_and_store_nothing() {
    let s = TestServer::start().await;
    for (body, field, says) in [
        (json!({"prompt": "x"}), "tool", "tool: is required"),
        (json!({"tool": "gpt-99", "prompt": "x"}), "tool", "tool: no provider offers `gpt-99`"),
        (json!({"tool": "scripted:chat", "prompt": "  "}), "prompt", "prompt: is required and not blank"),
        (json!({"tool": "scripted:chat"}), "prompt", "prompt: is required"),
        (json!({"tool": "scripted:chat", "prompt": 7}), "prompt", "prompt: invalid type"),
    ] {
        let (status, answer) = teams_run(&s, &s.reviewer, body.clone()).await;
        assert_eq!(status, 422, "{body}: {answer}");
        assert_eq!(answer["field"], field, "{body}: {answer}");
        assert!(answer["message"].as_str().unwrap().contains(says), "{body}: {answer}");
    }
    let (status, _) = teams_run(&s, "not-a-token", json!({"tool": "scripted:chat", "prompt": "x"})).await;
    assert_eq!(status, 401);
    let (_, runs) = s.get("/runs", &s.reviewer).await;
    assert_eq!(runs["runs"], json!([]), "nothing was stored");
}
