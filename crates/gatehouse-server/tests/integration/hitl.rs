//! The HITL run API over real HTTP: starting runs, status and full state,
//! approve/edit/reject through `/approve` (with merged edits and diffs),
//! pause/resume/cancel, providers, and who may do each. The listings are
//! tested in `hitl_listings.rs`.

use crate::common;

use common::TestServer;
use gatehouse_engine::plan::{PlanOperation, TaskStatus};
use gatehouse_engine::{NewTurn, Role, RunId};
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

/// Runs an engine call on the server's engine (for turns, context and plans,
/// which other modules expose over HTTP).
async fn engine<T: Send + 'static>(
    s: &TestServer,
    f: impl FnOnce(&gatehouse_engine::Engine) -> T + Send + 'static,
) -> T {
    let engine = s.server.state.engine_handle().clone();
    tokio::task::spawn_blocking(move || f(&engine)).await.expect("engine call")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_a_run_answers_201_with_the_hitl_run_api_fields_and_an_events_url() {
    let s = TestServer::start().await;
    // No tool named: an agent drives this run (tests/orchestrated.rs starts ones Gatehouse drives).
    let body = json!({"run_input": {"prompt": "a cat", "style": "watercolour"},
        "hitl_config": null, "user_id": "user-123", "session_id": "sess-456"});
    let (status, started) = s.post("/run", &s.agent, body).await;
    assert_eq!(status, 201, "{started}");
    let run = started["run_id"].as_str().unwrap();
    assert_eq!(started["status"], "created");
    assert_eq!(started["message"], "HITL run started successfully");
    assert_eq!(started["events_url"], format!("http://{}/api/hitl/events?run_id={run}", s.server.addr));
    assert_eq!(started["orchestrated"], false);

    let (_, state) = s.get(&format!("/run/{run}/state"), &s.agent).await;
    let stored = &state["run"];
    assert_eq!((stored["agent"].as_str(), stored["user_id"].as_str()), (Some("deployer"), Some("user-123")));
    assert_eq!(stored["session_id"], "sess-456");
    assert_eq!(stored["hitl_config"]["run_policy"], "require_human", "null means the default policy");
    assert_eq!(stored["input"]["prompt"], "a cat");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviewers_may_name_the_agent_but_an_agent_may_start_runs_only_for_itself() {
    let s = TestServer::start().await;
    let run = start(&s, &s.reviewer, json!({"run_input": {}, "agent": "deployer", "title": "On behalf"})).await;
    let (status, _) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status, 200, "the named agent may read its run");
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {}, "agent": "someone-else"})).await;
    assert_eq!(status, 403, "{body}");
    assert!(message(&body).starts_with("agent"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_start_body_is_422_naming_the_field_and_a_missing_token_is_401() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"user_id": "u"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("run_input"), "{body}");
    let (status, body) =
        s.post("/run", &s.agent, json!({"run_input": {}, "hitl_config": {"run_policy": "often"}})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("hitl_config.run_policy"), "{body}");
    let bad_policy = json!({"run_input": {}, "hitl_config": {"run_policy": "auto_with_thresholds"}});
    let (status, body) = s.post("/run", &s.agent, bad_policy).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("hitl_config.review_thresholds"), "{body}");

    for (method, path) in [(Method::POST, "/run"), (Method::GET, "/runs"), (Method::GET, "/approvals/pending")] {
        let resp = s.http.request(method, s.url(path)).json(&json!({"run_input": {}})).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_progress_the_current_step_and_pending_actions() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let first = s.gate(&run, payload_review(json!({"prompt": "x"}))).await;
    let second = s.gate(&run, json!({"kind": "question", "text": "Which model?"})).await;
    let (status, body) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run_id"], run.as_str());
    assert_eq!(body["status"], "awaiting_human");
    assert_eq!(body["current_step"], "question", "the newest pending gate's kind");
    assert_eq!((body["progress"]["total"].as_u64(), body["progress"]["completed"].as_u64()), (Some(2), Some(0)));
    let pending: Vec<_> = body["pending_actions"].as_array().unwrap().iter().map(|g| g["id"].clone()).collect();
    assert_eq!(pending.len(), 2);
    assert!(pending.contains(&json!(first)) && pending.contains(&json!(second)), "{body}");
    assert!(body["created_at"].is_string() && body["updated_at"].is_string());

    let id = RunId::from_string(run.clone());
    engine(&s, move |e| {
        e.plan_apply(&id, serde_json::from_value(json!({"op": "add_task", "description": "Render"})).unwrap(), "a")
            .unwrap();
        let start = PlanOperation::UpdateTask {
            task_id: "task_001".into(),
            status: Some(TaskStatus::InProgress),
            metadata: serde_json::from_value(json!({"progress": 30})).unwrap(),
        };
        e.plan_apply(&id, start, "a").unwrap();
    })
    .await;
    let (_, body) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(body["current_step"], "task_001", "a task in progress is the current step");
    let task = &body["tasks"][0];
    assert_eq!((task["task_id"].as_str(), task["status"].as_str()), (Some("task_001"), Some("in_progress")), "{body}");
    assert_eq!(task["percentage"], 30.0, "each task's own progress, as its agent reported it: {body}");
    assert_eq!(body["tasks"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_run_is_404_and_another_agents_run_is_403() {
    let s = TestServer::start().await;
    let run = s.run().await;
    for path in ["/run/run_nope/status", "/run/run_nope/state"] {
        let (status, body) = s.get(path, &s.reviewer).await;
        assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{path}: {body}");
    }
    for action in ["pause", "resume", "approve"] {
        let body = json!({"approval_id": "gate_x", "action": "approve"});
        let (status, _) = s.post(&format!("/run/run_nope/{action}"), &s.reviewer, body).await;
        assert_eq!(status, 404, "{action}");
    }
    let (status, _) = s.call(Method::DELETE, "/run/run_nope", &s.reviewer, None).await;
    assert_eq!(status, 404);
    let (status, _) = s.get(&format!("/run/{run}/status"), &s.other_agent).await;
    assert_eq!(status, 403);
    let (status, _) = s.get(&format!("/run/{run}/state"), &s.other_agent).await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_via_approve_merges_the_edited_fields_over_the_payload_and_records_the_diff() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, payload_review(json!({"prompt": "a cat", "steps": 20, "style": {"a": 1, "b": 2}}))).await;
    let body = json!({"approval_id": gate, "action": "edit", "edits": {"prompt": "a dog", "style": {"b": 3}, "steps": null},
        "reason": "dogs sell better", "approved_by": "mallory"});
    let (status, decided) = s.post(&format!("/run/{run}/approve"), &s.reviewer, body).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["status"], "resolved");
    let d = &decided["decision"];
    assert_eq!(d["action"], "edit");
    assert_eq!(d["decided_by"], "alice", "the token's identity, never approved_by");
    assert_eq!(d["text"], "dogs sell better");
    assert_eq!(d["payload"], json!({"prompt": "a dog", "style": {"a": 1, "b": 3}}));
    let changes: Vec<_> =
        d["diff"]["changes"].as_array().unwrap().iter().map(|c| (c["path"].clone(), c["op"].clone())).collect();
    assert_eq!(
        changes,
        vec![
            (json!("/prompt"), json!("changed")),
            (json!("/steps"), json!("removed")),
            (json!("/style/b"), json!("changed"))
        ]
    );
    let (_, stored) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(stored["gate"]["decision"], *d, "the stored decision is the one answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_and_reject_record_the_reason_and_release_the_run() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let a = s.gate(&run, payload_review(json!({"prompt": "x"}))).await;
    let b = s.gate(&run, json!({"kind": "approval", "action": "deploy", "text": "Deploy?"})).await;
    let approve = json!({"approval_id": a, "action": "approve", "reason": "looks right"});
    let (status, decided) = s.post(&format!("/run/{run}/approve"), &s.reviewer, approve).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(
        (decided["decision"]["action"].as_str(), decided["decision"]["text"].as_str()),
        (Some("approve"), Some("looks right"))
    );
    let (_, st) = s.get(&format!("/run/{run}/status"), &s.reviewer).await;
    assert_eq!(st["status"], "awaiting_human", "one sync gate still waits");
    let reject = json!({"approval_id": b, "action": "reject", "reason": "not on a Friday"});
    let (status, decided) = s.post(&format!("/run/{run}/approve"), &s.reviewer2, reject).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(
        (decided["decision"]["action"].as_str(), decided["decision"]["decided_by"].as_str()),
        (Some("reject"), Some("bob"))
    );
    assert_eq!(decided["decision"]["text"], "not on a Friday");
    let (_, st) = s.get(&format!("/run/{run}/status"), &s.reviewer).await;
    assert_eq!((st["status"].as_str(), st["pending_actions"].as_array().map(Vec::len)), (Some("active"), Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_refuses_agents_foreign_gates_bad_bodies_and_second_decisions() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let other = s.run().await;
    let gate = s.gate(&run, payload_review(json!({"prompt": "x"}))).await;
    let path = format!("/run/{run}/approve");

    let (status, body) = s.post(&path, &s.agent, json!({"approval_id": gate, "action": "approve"})).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")), "an agent must not approve itself");
    let (status, body) =
        s.post(&format!("/run/{other}/approve"), &s.reviewer, json!({"approval_id": gate, "action": "approve"})).await;
    assert_eq!(status, 404, "{body}");
    assert!(message(&body).contains(&gate) && message(&body).starts_with("approval_id"), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"approval_id": "gate_nope", "action": "approve"})).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"approval_id": gate, "action": "maybe"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("action"), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"approval_id": gate, "action": "edit"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("edits"), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("approval_id"), "{body}");

    let (status, _) = s.post(&path, &s.reviewer, json!({"approval_id": gate, "action": "approve"})).await;
    assert_eq!(status, 200);
    let (status, body) = s.post(&path, &s.reviewer2, json!({"approval_id": gate, "action": "reject"})).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "{body}");
    assert_eq!(body["resolved_by"], "alice");
    assert!(body["resolved_at"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_resume_and_cancel_move_the_run_and_forbidden_moves_are_409() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, payload_review(json!({"prompt": "x"}))).await;
    for (method, action) in [(Method::POST, "/pause"), (Method::POST, "/resume"), (Method::DELETE, "")] {
        let (status, _) = s.call(method, &format!("/run/{run}{action}"), &s.agent, None).await;
        assert_eq!(status, 403, "agents may not control runs: {action}");
    }
    let (status, paused) = s.post(&format!("/run/{run}/pause"), &s.reviewer, json!({})).await;
    assert_eq!((status, paused["status"].as_str()), (200, Some("paused")), "{paused}");
    let (status, body) = s.post(&format!("/run/{run}/pause"), &s.reviewer, json!({})).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "pausing twice: {body}");
    let (status, resumed) = s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await;
    assert_eq!((status, resumed["status"].as_str()), (200, Some("awaiting_human")), "a sync gate still waits");

    let (status, cancelled) =
        s.call(Method::DELETE, &format!("/run/{run}?reason=wrong%20model"), &s.reviewer, None).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(
        (cancelled["status"].as_str(), cancelled["status_reason"].as_str()),
        (Some("cancelled"), Some("wrong model"))
    );
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "cancelled", "its pending gate is withdrawn with it");
    let (status, _) = s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await;
    assert_eq!(status, 409, "an ended run cannot resume");
    let (status, _) = s.call(Method::DELETE, &format!("/run/{run}"), &s.admin, None).await;
    assert_eq!(status, 409, "an ended run cannot be cancelled again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_for_resume_holds_turns_gates_context_and_the_plan() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let first = s.gate(&run, payload_review(json!({"prompt": "x"}))).await;
    s.post(&format!("/run/{run}/approve"), &s.reviewer, json!({"approval_id": first, "action": "approve"})).await;
    let second = s.gate(&run, json!({"kind": "question", "text": "Colour?"})).await;
    let id = RunId::from_string(run.clone());
    engine(&s, move |e| {
        e.add_turn(&id, NewTurn::new(Role::Agent, "Rendering"), "deployer").unwrap();
        e.context_set(&id, "model", json!("sdxl"), "deployer").unwrap();
        let add = |d: &str| serde_json::from_value(json!({"op": "add_task", "description": d})).unwrap();
        e.plan_apply(&id, add("Render"), "deployer").unwrap();
        e.plan_apply(&id, add("Upscale"), "deployer").unwrap();
    })
    .await;

    let (status, state) = s.get(&format!("/run/{run}/state"), &s.agent).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["run"]["id"], run.as_str());
    assert_eq!(state["turns"].as_array().map(Vec::len), Some(1));
    assert_eq!(state["turns"][0]["content"], "Rendering");
    assert_eq!(ids(&state, "gates"), vec![first, second], "all gates, oldest first");
    assert_eq!(state["gates"][0]["decision"]["decided_by"], "alice");
    assert_eq!(state["context"], json!({"model": "sdxl"}));
    assert_eq!(state["plan"]["revision"], 2, "the newest revision");
    assert_eq!(state["plan"]["plan"]["tasks"].as_array().map(Vec::len), Some(2));
    assert_eq!(state["plan_revisions"].as_array().map(Vec::len), Some(2));
    assert_eq!((state["progress"]["total"].as_u64(), state["progress"]["completed"].as_u64()), (Some(2), Some(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_lists_the_scripted_provider_and_the_openapi_document_has_every_hitl_path() {
    let s = TestServer::start().await;
    let (status, body) = s.get("/providers", &s.agent).await;
    assert_eq!(status, 200);
    let providers = body["providers"].as_array().unwrap();
    assert_eq!(providers.len(), 1, "only the demo provider is configured: {body}");
    assert_eq!((providers[0]["name"].as_str(), providers[0]["kind"].as_str()), (Some("scripted"), Some("scripted")));
    assert_eq!(providers[0]["tools"], json!(["scripted:chat", "scripted:caption", "scripted:flaky"]));
    assert_eq!(providers[0]["tool_details"][1]["model"], "scripted-caption");
    let doc: Value = s
        .http
        .get(format!("http://{}/api/hitl/openapi.json", s.server.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/api/hitl/run", "post"),
        ("/api/hitl/run/{run_id}/status", "get"),
        ("/api/hitl/run/{run_id}/approve", "post"),
        ("/api/hitl/run/{run_id}/pause", "post"),
        ("/api/hitl/run/{run_id}/resume", "post"),
        ("/api/hitl/run/{run_id}", "delete"),
        ("/api/hitl/runs", "get"),
        ("/api/hitl/runs/active", "get"),
        ("/api/hitl/run/{run_id}/state", "get"),
        ("/api/hitl/sessions/{session_id}/active", "get"),
        ("/api/hitl/approvals/pending", "get"),
        ("/api/hitl/providers", "get"),
    ] {
        assert!(paths.get(path).and_then(|p| p.get(method)).is_some(), "{method} {path} missing");
    }
    let approve = &doc["components"]["schemas"]["ApproveRequest"]["properties"];
    assert!(approve["approved_by"]["description"].as_str().unwrap_or_default().contains("Ignored"), "{approve}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_may_say_when_it_expires_once() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {}, "expires_in_secs": 3600})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap();
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.agent).await;
    let at = chrono::DateTime::parse_from_rfc3339(state["run"]["expires_at"].as_str().expect("kept")).unwrap();
    let left = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(left > chrono::Duration::minutes(59) && left <= chrono::Duration::hours(1), "{left}");

    for (body, field) in [
        (json!({"run_input": {}, "expires_in_secs": 0}), "expires_in_secs"),
        (json!({"run_input": {}, "expires_in_secs": 31_536_001u64}), "expires_in_secs"),
        (json!({"run_input": {}, "expires_in_secs": 60, "expires_at": "2030-01-01T00:00:00Z"}), "expires_in_secs"),
        (json!({"run_input": {}, "expires_at": "2001-01-01T00:00:00Z"}), "expires_at"),
        (json!({"run_input": {}, "expires_at": "soon"}), "expires_at"),
    ] {
        let (status, answer) = s.post("/run", &s.agent, body.clone()).await;
        assert_eq!((status, answer["field"].as_str()), (422, Some(field)), "{body}: {answer}");
    }
}
