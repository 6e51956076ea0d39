//! A reviewer's sub-team changes from the command line: `runs team RUN
//! create-team|modify-team|dissolve-team` on a live team run, the team
//! shown after each, a mistake named by its field.

use crate::common;

use std::time::Duration;

use common::{assert_success, stderr, stdout, Server};
use serde_json::{json, Value};

fn start(server: &Server) -> String {
    let member = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let input =
        json!({"prompt": "Add a logout button", "wait_for_start": true, "team": [member("coder"), member("tester")]});
    let body: Value = reqwest::blocking::Client::new()
        .post(format!("{}/api/hitl/run", server.url))
        .bearer_auth(&server.admin)
        .timeout(Duration::from_secs(10))
        .json(&json!({"run_input": input, "start": false}))
        .send()
        .expect("the server answers")
        .json()
        .expect("JSON");
    body["run_id"].as_str().expect("run id").to_owned()
}

#[test]
fn a_reviewer_creates_changes_and_dissolves_a_sub_team_from_the_cli() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(&dir.path().join("g.db"));
    let run = start(&server);

    let out = server.run(&[
        "runs",
        "team",
        &run,
        "create-team",
        "audit",
        "--agent",
        "ann,auditor,scripted,chat",
        "--agent",
        "bob,auditor,scripted,chat",
        "--purpose",
        "check the release",
    ]);
    assert_success(&out);
    let said = stdout(&out);
    assert!(said.contains("created sub-team audit"), "{said}");
    assert!(said.contains("audit by ") && said.contains("(check the release): ann, bob"), "{said}");

    let bad = server.run(&["runs", "team", &run, "modify-team", "audit", "--remove", "coder"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("remove_agents[0]"), "{}", stderr(&bad));

    let out = server.run(&["runs", "team", &run, "modify-team", "audit", "--remove", "ann"]);
    assert_success(&out);
    assert!(stdout(&out).contains("(check the release): bob"), "{}", stdout(&out));

    let out = server.run(&["runs", "team", &run, "dissolve-team", "audit", "--reason", "done"]);
    assert_success(&out);
    let said = stdout(&out);
    assert!(said.contains("dissolved sub-team audit") && !said.contains("Sub-teams"), "{said}");
    assert!(said.contains("Team (2 agents)"), "{said}");
}
