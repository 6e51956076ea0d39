//! `gatehouse serve`, `ask`, `token`, `gates` and `runs` end to end: a
//! real server child process on a free port, a blocking `ask` as another
//! process, and reviewers deciding from the command line. Every wait gives
//! up after a bounded time, so a hang fails the test instead of the run.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{assert_success, gatehouse, stderr, stdout, wait_output, Server, WAIT};
use serde_json::{json, Value};

fn write_json(path: &Path, value: &Value) -> String {
    std::fs::write(path, value.to_string()).expect("write JSON");
    path.to_str().expect("utf-8 path").to_owned()
}

fn parse(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", stdout(out)))
}

/// `token create` against the server's database; returns the secret.
fn token(server: &Server, role: &str, name: &str) -> String {
    let out = server.run(&["token", "create", "--role", role, "--name", name]);
    assert_success(&out);
    let secret = stdout(&out);
    assert_eq!(secret.lines().count(), 1, "the secret alone on stdout: {secret:?}");
    secret.trim().to_owned()
}

#[test]
fn a_reviewers_edit_from_the_cli_wakes_the_waiting_ask_with_the_edited_payload() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(&dir.path().join("g.db"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("admin-token")).expect("token file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the admin token is readable only by its owner");
    }
    assert!(server.admin.starts_with("ghs_"), "{}", server.admin);
    assert!(!server.preamble.join("\n").contains(&server.admin), "the secret is never printed");
    let alice = token(&server, "reviewer", "alice");

    let payload = write_json(&dir.path().join("payload.json"), &json!({"build": 42, "env": "prod"}));
    let edited = json!({"build": 42, "env": "staging"});
    let edit = write_json(&dir.path().join("edit.json"), &edited);
    let asking = server.start_child(&["ask", "Deploy build 42?", "--payload", &payload]);

    let gate = server.pending_gate("Deploy build 42?");
    let shown = server.run(&["gates", "show", &gate]);
    assert_success(&shown);
    let text = stdout(&shown);
    assert!(text.contains("Deploy build 42?") && text.contains("\"env\": \"prod\""), "{text}");

    let resolved = server.run(&["gates", "resolve", &gate, "--edit", &edit, "--token", &alice]);
    assert_success(&resolved);
    assert!(stdout(&resolved).contains("edit by alice"), "{}", stdout(&resolved));

    let asked = wait_output(asking, WAIT);
    assert_success(&asked);
    let decision = parse(&asked);
    assert_eq!(decision["action"], "edit");
    assert_eq!(decision["decided_by"], "alice");
    assert_eq!(decision["payload"], edited);

    let run = decision["run_id"].as_str().expect("run_id").to_owned();
    let runs = stdout(&server.run(&["runs", "list"]));
    assert!(runs.contains(&run) && runs.contains("Deploy build 42?"), "{runs}");
    let shown = server.run(&["runs", "show", &run]);
    assert_success(&shown);
    assert!(stdout(&shown).contains("edit by alice"), "{}", stdout(&shown));
    assert!(
        stdout(&shown).lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["status", "completed"]),
        "ask completes its run once answered: {}",
        stdout(&shown)
    );
}

#[test]
fn a_rejected_ask_exits_1_and_an_unanswered_one_exits_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(&dir.path().join("g.db"));

    let alice = token(&server, "reviewer", "alice");
    let asking = server.start_child(&["ask", "Run the migration now?", "--priority", "urgent"]);
    let gate = server.pending_gate("Run the migration now?");
    assert_success(&server.run(&["gates", "resolve", &gate, "--reject", "not during the freeze", "--token", &alice]));
    let asked = wait_output(asking, WAIT);
    assert_eq!(asked.status.code(), Some(1), "stderr:\n{}", stderr(&asked));
    assert_eq!(parse(&asked)["action"], "reject");
    assert_eq!(parse(&asked)["text"], "not during the freeze");

    let started = Instant::now();
    let unanswered = wait_output(server.start_child(&["ask", "Anyone there?", "--timeout", "2s"]), WAIT);
    assert_eq!(unanswered.status.code(), Some(2), "stderr:\n{}", stderr(&unanswered));
    assert!(started.elapsed() >= Duration::from_secs(2), "it waited for the deadline");
    assert!(stderr(&unanswered).contains("timed out"), "{}", stderr(&unanswered));
    assert!(stdout(&unanswered).is_empty(), "{}", stdout(&unanswered));
}

#[test]
fn an_async_ask_returns_at_once_and_an_agent_token_cannot_resolve_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(&dir.path().join("g.db"));
    let bot = token(&server, "agent", "bot");

    let asked = server.run(&["ask", "Which region?", "--kind", "question", "--mode", "async"]);
    assert_success(&asked);
    let ids = parse(&asked);
    let gate = ids["gate_id"].as_str().expect("gate_id").to_owned();
    assert!(gate.starts_with("gate_") && ids["run_id"].as_str().is_some_and(|r| r.starts_with("run_")), "{ids}");

    let refused = server.run(&["gates", "resolve", &gate, "--respond", "eu-west-1", "--token", &bot]);
    assert_eq!(refused.status.code(), Some(3));
    let err = stderr(&refused);
    assert!(err.starts_with("error: ") && err.contains("agent token") && err.contains("HTTP 403"), "{err}");

    // The admin token asked, so it may not answer: someone else decides.
    let own = server.run(&["gates", "resolve", &gate, "--respond", "eu-west-1"]);
    assert_eq!(own.status.code(), Some(3));
    let err = stderr(&own);
    assert!(err.contains("same token") && err.contains("--allow-self-review") && err.contains("HTTP 403"), "{err}");
    let alice = token(&server, "reviewer", "alice");
    assert_success(&server.run(&["gates", "resolve", &gate, "--respond", "eu-west-1", "--token", &alice]));
    let shown = stdout(&server.run(&["gates", "show", &gate]));
    assert!(shown.contains("respond by alice") && shown.contains("eu-west-1"), "{shown}");
}

#[test]
fn one_person_alone_may_ask_and_decide_with_one_token_when_the_server_allows_self_review() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("g.db");
    let server = Server::spawn(&db, &["serve", "--bind", "127.0.0.1:0", "--allow-self-review"]);
    let asking = server.start_child(&["ask", "Ship it?"]);
    let gate = server.pending_gate("Ship it?");
    assert_success(&server.run(&["gates", "resolve", &gate, "--approve"]));
    let asked = wait_output(asking, WAIT);
    assert_eq!(asked.status.code(), Some(0), "stderr:\n{}", stderr(&asked));
    assert_eq!(parse(&asked)["self_decided"], true, "the decision says it was self-decided: {}", stdout(&asked));
}

#[test]
fn a_reviewer_starts_pauses_resumes_cancels_and_retries_a_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(&dir.path().join("g.db"));
    let asked = server.run(&["ask", "Rotate the keys?", "--mode", "async"]);
    assert_success(&asked);
    let run = parse(&asked)["run_id"].as_str().expect("run_id").to_owned();

    let started = server.run(&["runs", "start", &run]);
    assert_eq!(started.status.code(), Some(3), "a run already at work cannot be started again");
    assert!(stderr(&started).contains("HTTP 409"), "{}", stderr(&started));
    for (verb, status) in [("pause", "paused"), ("resume", "active")] {
        let out = server.run(&["runs", verb, &run]);
        assert_success(&out);
        assert!(stdout(&out).contains(&format!("now {status}")), "{}", stdout(&out));
    }
    let again = server.run(&["runs", "resume", &run]);
    assert_eq!(again.status.code(), Some(3), "resuming an active run is refused");
    assert!(stderr(&again).contains("HTTP 409"), "{}", stderr(&again));

    assert_success(&server.run(&["runs", "cancel", &run, "--reason", "keys rotate on Friday"]));
    let shown = stdout(&server.run(&["runs", "show", &run]));
    assert!(shown.contains("cancelled (keys rotate on Friday)"), "{shown}");
    assert!(shown.contains("approval  cancelled"), "its pending gate is withdrawn:\n{shown}");

    let retried = server.run(&["runs", "retry", &run]);
    assert_success(&retried);
    assert!(stdout(&retried).contains("now active"), "{}", stdout(&retried));
    let shown = stdout(&server.run(&["runs", "show", &run]));
    assert!(shown.contains("active (retried by admin (retry 1))"), "{shown}");
}

#[test]
fn tokens_are_listed_and_a_revoked_one_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(&dir.path().join("g.db"));
    let carol = token(&server, "reviewer", "carol");
    let listed = stdout(&server.run(&["token", "list"]));
    let line = listed.lines().find(|l| l.contains("carol")).unwrap_or_else(|| panic!("{listed}"));
    assert!(line.contains("reviewer") && line.trim_end().ends_with('-'), "{listed}");

    let revoked = server.run(&["token", "revoke", "carol"]);
    assert_success(&revoked);
    let listed = stdout(&server.run(&["token", "list"]));
    let line = listed.lines().find(|l| l.contains("carol")).unwrap_or_else(|| panic!("{listed}"));
    assert!(line.trim_end().ends_with("UTC"), "a revocation date: {listed}");

    let refused = server.run(&["gates", "list", "--token", &carol]);
    assert_eq!(refused.status.code(), Some(3));
    assert!(
        stderr(&refused).contains("unknown or revoked") && stderr(&refused).contains("HTTP 401"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn sigterm_stops_the_server_cleanly_and_a_restart_keeps_the_admin_token() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("g.db");
    let first = Server::start(&db);
    let admin = first.admin.clone();
    let status = first.terminate();
    assert!(status.success(), "exit {status:?}");

    let second = Server::start(&db);
    assert_eq!(second.admin, admin, "the first token is kept");
    assert!(second.preamble.iter().any(|l| l.starts_with("Admin token: ")), "{:?}", second.preamble);
    assert_success(&second.run(&["gates", "list"]));
}

#[test]
fn an_unreachable_server_exits_3_saying_how_to_start_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A port that was free a moment ago and has nobody listening now.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let url = format!("http://127.0.0.1:{port}");
    let child = gatehouse(&dir.path().join("g.db"))
        .args(["ask", "Deploy?", "--url", &url, "--token", "ghs_whatever"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let out = wait_output(child, WAIT);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.starts_with(&format!("error: cannot reach the Gatehouse server at {url}")), "{err}");
    assert!(err.contains("gatehouse serve"), "{err}");
}

#[test]
fn without_a_token_the_error_says_how_to_get_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = gatehouse(&dir.path().join("g.db")).args(["gates", "list"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("GATEHOUSE_TOKEN") && err.contains("gatehouse token create"), "{err}");
    assert!(!dir.path().join("g.db").exists(), "a client command never creates the database");
}

#[test]
fn the_demo_serves_while_its_fleet_keeps_working_until_sigterm() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut demo =
        Server::spawn(&dir.path().join("g.db"), &["demo", "--runs", "7", "--seed", "3", "--bind", "127.0.0.1:0"]);
    demo.line_matching(|l| l.contains("the simulated agents keep working"), WAIT);
    demo.line_matching(|l| l.contains("] opened"), WAIT);
    let listed = demo.run(&["gates", "list", "--status", "all", "--limit", "500"]);
    assert_success(&listed);
    let rows = stdout(&listed).lines().filter(|l| l.starts_with("gate_")).count();
    assert!(rows > 10, "{}", stdout(&listed));
    let status = demo.terminate();
    assert!(status.success(), "exit {status:?}");
}
