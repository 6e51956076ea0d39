//! `gatehouse memory delete`: a reviewer deletes a key of a live team run's
//! memory and of the global memory through a running server; what is not
//! there is named, and a scope without a run is a usage mistake.

use crate::common;

use std::time::{Duration, Instant};

use common::{assert_success, stderr, stdout, Server};
use serde_json::{json, Value};

fn call(server: &Server, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
    let mut req = reqwest::blocking::Client::new()
        .request(method, format!("{}/api/hitl{path}", server.url))
        .bearer_auth(&server.admin)
        .timeout(Duration::from_secs(10));
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().expect("the server answers").json().expect("JSON")
}

#[test]
fn memory_delete_removes_a_team_runs_key_and_names_a_key_that_is_not_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("g.db"));
    let member = |name: &str, tools: &[&str]| json!({"name": name, "role": name, "provider": "scripted", "model": "chat", "tools": tools});
    let team = json!([member("coder", &[]), member("tester", &["store_memory"]), member("deployer", &[])]);
    let started = call(
        &server,
        reqwest::Method::POST,
        "/run",
        Some(json!({"run_input": {"prompt": "Add a logout button", "team": team}})),
    );
    let run = started["run_id"].as_str().expect("run id").to_owned();
    let deadline = Instant::now() + common::WAIT;
    loop {
        let view = call(&server, reqwest::Method::GET, &format!("/runs/{run}/team"), None);
        if view["memory"].as_array().is_some_and(|m| m.iter().any(|e| e["key"] == "test_report")) {
            break;
        }
        assert!(Instant::now() < deadline, "the tester never reported: {view}");
        std::thread::sleep(Duration::from_millis(50));
    }

    let out = server.run(&["memory", "delete", "test_report", "--run", &run, "--scope", "team"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("deleted team:test_report of run {run}")) && text.contains("stored by tester"),
        "{text}"
    );
    let view = call(&server, reqwest::Method::GET, &format!("/runs/{run}/team"), None);
    assert!(!view["memory"].as_array().expect("memory").iter().any(|e| e["key"] == "test_report"), "{view}");

    let again = server.run(&["memory", "delete", "test_report", "--run", &run, "--scope", "team"]);
    assert_eq!(again.status.code(), Some(3));
    assert!(stderr(&again).contains("has no key `test_report`"), "{}", stderr(&again));
    let global = server.run(&["memory", "delete", "house_style"]);
    assert_eq!(global.status.code(), Some(3));
    assert!(stderr(&global).contains("the global memory has no key `house_style`"), "{}", stderr(&global));
    let usage = server.run(&["memory", "delete", "house_style", "--scope", "team"]);
    assert_eq!(usage.status.code(), Some(2), "a scope needs a run: {}", stderr(&usage));
}
