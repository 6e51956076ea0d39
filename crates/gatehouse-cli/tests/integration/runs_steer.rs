//! A reviewer steering a team run from the command line: breakpoints set
//! and a plan task added before it starts, the run paused at the handoff,
//! an instruction held for the next agent, one step let through; mistakes
//! named.

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

fn wait_for(server: &Server, run: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + common::WAIT;
    loop {
        let state = call(server, reqwest::Method::GET, &format!("/run/{run}/state"), None);
        if done(&state) {
            return state;
        }
        assert!(Instant::now() < deadline, "{what} never happened: {}", state["run"]);
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_reviewer_sets_breakpoints_instructs_steps_and_plans_a_team_run_from_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("g.db"));
    let member = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let input = json!({"prompt": "Add a logout button", "wait_for_start": true,
        "team": [member("coder"), member("tester"), member("deployer")]});
    let started = call(&server, reqwest::Method::POST, "/run", Some(json!({"run_input": input, "start": false})));
    let run = started["run_id"].as_str().expect("run id").to_owned();

    let out =
        server.run(&["runs", "control", &run, "breakpoint", "--break-on", "handoff:tester", "--break-on", "error"]);
    assert_success(&out);
    assert!(stdout(&out).contains("step mode breakpoint, 2 breakpoint(s)"), "{}", stdout(&out));
    let bad = server.run(&["runs", "control", &run, "breakpoint", "--break-on", "agent"]);
    assert_eq!(bad.status.code(), Some(3));
    assert!(stderr(&bad).contains("--break-on `agent`: use tool_call[:TOOL], handoff[:AGENT]"), "{}", stderr(&bad));

    let out = server.run(&[
        "runs",
        "plan",
        &run,
        r#"{"op": "add_task", "description": "Test the logout", "assigned_agent": "tester"}"#,
    ]);
    assert_success(&out);
    assert!(
        stdout(&out).contains("plan revision 1 of run") && stdout(&out).contains("added task_001"),
        "{}",
        stdout(&out)
    );
    let bad = server.run(&["runs", "plan", &run, "add a task"]);
    assert!(stderr(&bad).contains("the plan operation is not JSON"), "{}", stderr(&bad));

    assert_success(&server.run(&["runs", "start", &run]));
    let paused = wait_for(&server, &run, "the pause at the handoff", |s| s["run"]["status"] == "paused");
    assert_eq!(paused["run"]["status_reason"], "breakpoint: handoff to `tester`");

    let out = server.run(&["runs", "instruct", &run, "Keep the button keyboard-reachable"]);
    assert_success(&out);
    assert!(stdout(&out).contains("instruction held on run"), "{}", stdout(&out));
    let out = server.run(&["runs", "step", &run]);
    assert_success(&out);
    // One agent turn (the tester's) later the run stands still again, the instruction delivered.
    wait_for(&server, &run, "the instruction's delivery", |s| {
        s["turns"].as_array().is_some_and(|t| {
            t.iter().any(|t| t["metadata"]["step"] == "agent_turn" && t["metadata"]["team_agent"] == "tester")
        })
    });
    let view = call(&server, reqwest::Method::GET, &format!("/runs/{run}/events?limit=500"), None);
    let delivered = view["events"].as_array().expect("events").iter().any(|e| e["type"] == "directive_delivered");
    assert!(delivered, "the held instruction went to the next agent");
}
