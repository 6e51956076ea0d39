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
