//! The team agents' memory over HTTP: a run's memory snapshots (whoever
//! sees the run) and the global memory kept across runs (reviewers only).

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use serde_json::{json, Value};

fn story() -> Value {
    let member = |name: &str, tools: &[&str]| json!({"name": name, "role": name, "provider": "scripted", "model": "chat", "tools": tools});
    json!({"prompt": "Add a logout button", "team": [member("coder", &[]), member("tester", &["store_memory"]), member("deployer", &[])]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_run_keeps_a_snapshot_of_its_memory_at_each_handoff_for_whoever_sees_it() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": story()})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let path = format!("/runs/{run}/memory/snapshots");
    let deadline = Instant::now() + Duration::from_secs(15);
    let kept = loop {
        let (status, body) = s.get(&path, &s.agent).await;
        assert_eq!(status, 200, "{body}");
        if body["snapshots"].as_array().is_some_and(|k| k.len() == 4) {
            break body;
        }
        assert!(Instant::now() < deadline, "four handoffs never came: {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let labels: Vec<&str> =
        kept["snapshots"].as_array().unwrap().iter().map(|k| k["label"].as_str().unwrap()).collect();
    assert!(labels.iter().all(|l| l.starts_with("handoff:")), "{labels:?}");
    let last = &kept["snapshots"][3]["entries"];
    let report = last.as_array().unwrap().iter().find(|e| e["key"] == "team:test_report").expect("the tester's report");
    assert_eq!(report["by"], "tester");
    let (status, _) = s.get(&path, &s.other_agent).await;
    assert_eq!(status, 403, "another agent may not read it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_memory_is_read_by_reviewers_only() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {"prompt": "x"}})).await;
    assert_eq!(status, 201, "{body}");
    let run = gatehouse_engine::RunId::from_string(body["run_id"].as_str().unwrap().to_owned());
    let entry = json!({"value": "terse", "by": "writer", "run": run.to_string()});
    s.server.state.engine_handle().global_memory_set("house_style", entry, "gatehouse", &run).unwrap();

    let (status, body) = s.get("/memory/global", &s.agent).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = s.get("/memory/global", &s.reviewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["entries"][0]["key"], "house_style");
    assert_eq!(body["entries"][0]["value"], "terse");
    assert_eq!(body["entries"][0]["run_id"], run.as_str());
    assert_eq!(body["history"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_deletes_a_global_key_in_its_history_and_the_audit_under_their_name_and_an_agent_may_not() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {"prompt": "x"}})).await;
    assert_eq!(status, 201, "{body}");
    let run = gatehouse_engine::RunId::from_string(body["run_id"].as_str().unwrap().to_owned());
    let entry = json!({"value": "terse", "by": "writer", "run": run.to_string()});
    s.server.state.engine_handle().global_memory_set("house_style", entry, "writer", &run).unwrap();

    let (status, body) = delete(&s, &s.agent, "/memory/global/house_style").await;
    assert_eq!(status, 403, "an agent's token never deletes memory: {body}");
    let (status, body) = delete(&s, &s.reviewer, "/memory/global/house_style").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"scope": "global", "key": "house_style", "value": "terse", "by": "writer", "deleted_by": "alice"})
    );

    let (_, global) = s.get("/memory/global", &s.reviewer).await;
    assert_eq!(global["entries"], json!([]));
    let last = global["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["key"].as_str(), last["actor"].as_str(), last["new"].is_null()),
        (Some("house_style"), Some("alice"), true)
    );
    let log = s.server.state.engine_handle().events_after(0, &Default::default(), 10_000).unwrap();
    let deleted: Vec<&str> = log
        .iter()
        .filter(|e| matches!(e.body.kind, gatehouse_engine::event::EventKind::GlobalMemoryDeleted { .. }))
        .map(|e| e.body.actor.as_str())
        .collect();
    assert_eq!(deleted, ["alice"], "the audit log names who deleted it");

    let (status, body) = delete(&s, &s.reviewer, "/memory/global/house_style").await;
    assert_eq!(status, 404, "{body}");
    assert!(body["message"].as_str().unwrap().contains("key: the global memory has no key `house_style`"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_deletes_a_team_memory_key_of_a_live_run_and_a_wrong_scope_or_key_is_named() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": story()})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (_, team) = s.get(&format!("/runs/{run}/team"), &s.reviewer).await;
        if team["memory"].as_array().is_some_and(|m| m.iter().any(|e| e["key"] == "test_report")) {
            break;
        }
        assert!(Instant::now() < deadline, "the tester never reported: {team}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    let (status, body) = delete(&s, &s.agent, &format!("/runs/{run}/memory/team/test_report")).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = delete(&s, &s.reviewer, &format!("/runs/{run}/memory/global/test_report")).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("scope")), "{body}");
    let (status, body) = delete(&s, &s.reviewer, &format!("/runs/{run}/memory/crew/test_report")).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().contains("scope `crew` is unknown"), "{body}");

    let (status, body) = delete(&s, &s.reviewer, &format!("/runs/{run}/memory/team/test_report")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["scope"].as_str(), body["by"].as_str(), body["deleted_by"].as_str()),
        (Some("team"), Some("tester"), Some("alice"))
    );
    let (_, team) = s.get(&format!("/runs/{run}/team"), &s.reviewer).await;
    assert!(!team["memory"].as_array().unwrap().iter().any(|e| e["key"] == "test_report"), "{team}");
    // The team goes on meanwhile (its next handoffs write memory too): the key's own last change.
    let history = team["memory_history"].as_array().unwrap();
    let last = history.iter().rev().find(|c| c["key"] == "test_report").unwrap();
    assert_eq!((last["actor"].as_str(), last["new"].is_null()), (Some("alice"), true), "{last}");

    let (status, body) = delete(&s, &s.reviewer, &format!("/runs/{run}/memory/team/test_report")).await;
    assert_eq!(status, 404, "{body}");
    assert!(body["message"].as_str().unwrap().contains("has no key `test_report`"), "{body}");
}

async fn delete(s: &TestServer, token: &str, path: &str) -> (u16, Value) {
    s.call(reqwest::Method::DELETE, path, token, None).await
}
