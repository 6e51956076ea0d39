//! The `gatehouse` binary end to end: each test runs the real executable
//! against its own database in a temporary directory and checks what a
//! person (or a script) sees: output, files and exit codes. The listings
//! go through a `gatehouse serve` started on that database.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tempfile::TempDir;

const GATE_KINDS: [&str; 8] = [
    "approval",
    "payload_review",
    "question",
    "information_review",
    "response_review",
    "quality_score",
    "goal_review",
    "plan_review",
];

/// A scratch directory holding one or more databases.
struct Scratch {
    dir: TempDir,
}

impl Scratch {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("temp dir") }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `gatehouse --db <name> args...`.
    fn run(&self, db: &str, args: &[&str]) -> Output {
        gatehouse(&self.path(db), args)
    }

    /// Fills `db` with a small, seeded demo (the scripted stories: twenty-one runs, fourteen of them orchestrated).
    fn demo(&self, db: &str) -> Output {
        let out = self.run(db, &["demo", "--runs", "9", "--seed", "11", "--no-serve"]);
        assert_success(&out);
        out
    }
}

fn gatehouse(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("GATEHOUSE_DB")
        .output()
        .expect("the gatehouse binary runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn assert_success(out: &Output) {
    assert!(out.status.success(), "exit {:?}\nstdout:\n{}\nstderr:\n{}", out.status.code(), stdout(out), stderr(out));
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("recording written");
    serde_json::from_str(&text).expect("recording is JSON")
}

#[test]
fn demo_summarises_every_gate_kind_and_leaves_gates_pending_for_a_reviewer() {
    let s = Scratch::new();
    let summary = stdout(&s.demo("g.db"));
    for kind in GATE_KINDS {
        assert!(summary.contains(kind), "the summary does not mention {kind}:\n{summary}");
    }
    for part in ["Runs by status", "Decisions by type", "Agent capability ratings", "head hash", "expired question"] {
        assert!(summary.contains(part), "the summary lacks {part:?}:\n{summary}");
    }
    let server = common::Server::start(&s.path("g.db"));
    let pending = server.run(&["gates", "list", "--status", "pending"]);
    assert_success(&pending);
    let listed = stdout(&pending);
    let rows = listed.lines().filter(|l| l.starts_with("gate_")).count();
    assert!(rows >= 5, "expected a realistic queue of pending gates:\n{listed}");
    assert!(listed.contains("Which Stripe API key should I use"), "{listed}");
    // The demo already swept the question it let expire; nothing else is due.
    let sweep = s.run("g.db", &["sweep"]);
    assert_success(&sweep);
    assert!(stdout(&sweep).starts_with("nothing to expire"), "{}", stdout(&sweep));
}

#[test]
fn the_same_seed_produces_the_same_workload() {
    let s = Scratch::new();
    // Ids, timestamps, hashes and paths differ by nature; everything counted must not.
    let counted = |out: &Output| -> Vec<String> {
        let text = stdout(out);
        let start = text.find("The database now holds:").expect("summary present");
        text[start..]
            .lines()
            .filter(|l| !l.contains("hash") && !l.starts_with("Database:"))
            .map(str::to_owned)
            .collect()
    };
    let first = counted(&s.demo("a.db"));
    let second = counted(&s.demo("b.db"));
    assert_eq!(first, second);
}

#[test]
fn audit_verify_passes_after_the_demo_and_exits_1_naming_an_event_whose_body_was_tampered_with() {
    let s = Scratch::new();
    s.demo("g.db");
    let intact = s.run("g.db", &["audit", "verify"]);
    assert_success(&intact);
    assert!(stdout(&intact).contains("audit log intact"), "{}", stdout(&intact));

    let conn = rusqlite::Connection::open(s.path("g.db")).expect("open the database directly");
    let (seq, body): (i64, String) = conn
        .query_row(
            "SELECT seq, body FROM events WHERE body LIKE '%Which Stripe API key%' ORDER BY seq LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the Stripe question is logged");
    let forged = body.replacen("Which Stripe API key", "Which Strype API key", 1);
    conn.execute("UPDATE events SET body = ? WHERE seq = ?", rusqlite::params![forged, seq]).expect("tamper");
    drop(conn);

    let out = s.run("g.db", &["audit", "verify"]);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    let report = stdout(&out);
    assert!(report.contains(&format!("event {seq} was altered")), "{report}");
    assert!(report.contains("FAILED"), "{report}");
}

#[test]
fn audit_anchor_prints_the_head_and_verify_with_it_exits_1_once_the_log_is_truncated_below_it() {
    let s = Scratch::new();
    s.demo("g.db");
    let printed = s.run("g.db", &["audit", "anchor"]);
    assert_success(&printed);
    let anchor = stdout(&printed).trim().to_owned();
    let (seq, hash) = anchor.split_once(':').expect("SEQ:HASH");
    assert!(seq.parse::<u64>().is_ok() && hash.len() == 64, "{anchor}");
    assert_success(&s.run("g.db", &["audit", "verify", "--anchor", &anchor]));

    // The newest event is a late answer's refusal or a sweep's note: deleting it changes no row.
    let conn = rusqlite::Connection::open(s.path("g.db")).expect("open the database directly");
    conn.execute("DELETE FROM events WHERE seq = ?", [seq.parse::<i64>().unwrap()]).expect("tamper");
    drop(conn);
    let out = s.run("g.db", &["audit", "verify", "--anchor", &anchor]);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("truncated"), "{}", stdout(&out));

    let garbled = s.run("g.db", &["audit", "verify", "--anchor", "not-an-anchor"]);
    assert_eq!(garbled.status.code(), Some(2), "a malformed anchor is a usage error: {}", stderr(&garbled));
}

#[test]
fn a_keyed_log_verifies_with_its_key_file_and_fails_with_another_key() {
    let s = Scratch::new();
    let key = s.path("audit-key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef0123456789abcdef\n").unwrap();
    let with_key = |args: &[&str]| {
        let mut all = vec!["--audit-key-file", key.to_str().unwrap()];
        all.extend_from_slice(args);
        s.run("g.db", &all)
    };
    assert_success(&with_key(&["token", "create", "--role", "agent", "--name", "ci"]));
    let out = with_key(&["audit", "verify"]);
    assert_success(&out);
    assert!(stdout(&out).contains("keyed with the audit key throughout"), "{}", stdout(&out));

    std::fs::write(&key, "another key that is at least thirty-two bytes long\n").unwrap();
    let out = with_key(&["audit", "verify"]);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{}\nstderr:\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("breaks the hash chain"), "{}", stdout(&out));
}

#[test]
fn export_all_imported_into_a_fresh_database_exports_the_same_runs_and_events() {
    let s = Scratch::new();
    s.demo("source.db");
    let first = s.path("first.json");
    let second = s.path("second.json");
    assert_success(&s.run("source.db", &["export", "--all", "-o", first.to_str().expect("utf-8 path")]));

    let imported = s.run("copy.db", &["import", first.to_str().expect("utf-8 path")]);
    assert_success(&imported);
    assert!(stdout(&imported).contains("runs:    21"), "{}", stdout(&imported));
    assert_success(&s.run("copy.db", &["export", "--all", "-o", second.to_str().expect("utf-8 path")]));

    let (mut a, mut b) = (read_json(&first), read_json(&second));
    for recording in [&mut a, &mut b] {
        let recording = recording.as_object_mut().expect("a JSON object");
        // When, and the head of the log it came from: the copy's log also holds its import.
        recording.remove("exported_at");
        recording.remove("anchor");
    }
    assert_eq!(a["runs"].as_array().map(Vec::len), Some(21));
    assert!(a["events"].as_array().is_some_and(|e| e.len() > 100));
    as_recorded(&mut b);
    assert_eq!(a, b);
}

/// An export of imported runs as the recording they came from: without
/// the import's marks, the gates it closed as undecided pending again, and
/// without the events that closed them.
fn as_recorded(export: &mut serde_json::Value) {
    let undecided =
        |v: &serde_json::Value| v["status_reason"].as_str().is_some_and(|r| r.starts_with("imported undecided"));
    for record in export["runs"].as_array_mut().into_iter().flatten() {
        let marked = record["run"].as_object_mut().and_then(|run| run.remove("imported"));
        assert!(marked.is_some(), "every imported run is marked: {}", record["run"]["id"]);
        for gate in record["gates"].as_array_mut().into_iter().flatten() {
            if undecided(gate) {
                gate["status"] = serde_json::json!("pending");
                gate["status_reason"] = serde_json::Value::Null;
                gate["closed_at"] = serde_json::Value::Null;
            }
            gate.as_object_mut().and_then(|g| g.remove("imported"));
        }
    }
    if let Some(events) = export["events"].as_array_mut() {
        events.retain(|e| {
            !(e["type"] == "gate_cancelled"
                && e["reason"].as_str().is_some_and(|r| r.starts_with("imported undecided")))
        });
    }
}

#[test]
fn export_takes_the_run_as_a_positional_argument_too() {
    let s = Scratch::new();
    s.demo("g.db");
    let all = s.path("all.json");
    assert_success(&s.run("g.db", &["export", "--all", "-o", all.to_str().expect("utf-8 path")]));
    let run = read_json(&all)["runs"][0]["run"]["id"].as_str().expect("a run id").to_owned();
    let one = s.path("one.json");
    assert_success(&s.run("g.db", &["export", &run, "-o", one.to_str().expect("utf-8 path")]));
    let recording = read_json(&one);
    assert_eq!(recording["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(recording["runs"][0]["run"]["id"], run.as_str());
    let both = s.run("g.db", &["export", &run, "--all"]);
    assert_eq!(both.status.code(), Some(2), "one scope at a time");
}

#[test]
fn importing_a_malformed_file_exits_3_saying_it_is_not_a_recording() {
    let s = Scratch::new();
    let bad = s.path("bad.json");
    std::fs::write(&bad, r#"{"format": "gatehouse-recording", "runs": ["#).expect("write");
    let out = s.run("g.db", &["import", bad.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("is not a Gatehouse recording"), "{err}");
    assert!(err.contains("caused by:"), "the parser's reason should follow: {err}");
}

#[test]
fn exporting_an_unknown_run_exits_3_saying_there_is_no_such_run() {
    let s = Scratch::new();
    let out = s.run("g.db", &["export", "--run", "run_does_not_exist"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stdout(&out).is_empty(), "nothing half-written to stdout");
    let err = stderr(&out);
    assert!(err.contains("no run with id `run_does_not_exist`"), "{err}");
}

#[test]
fn replay_prints_one_line_per_event_and_the_final_state_without_a_database() {
    let s = Scratch::new();
    s.demo("g.db");
    let file = s.path("all.json");
    assert_success(&s.run("g.db", &["export", "--all", "-o", file.to_str().expect("utf-8 path")]));
    let events = read_json(&file)["events"].as_array().map(Vec::len).expect("events");

    let out = s.run("never-created.db", &["replay", file.to_str().expect("utf-8 path")]);
    assert_success(&out);
    let text = stdout(&out);
    let lines = text.lines().filter(|l| l.starts_with("20")).count();
    assert_eq!(lines, events, "one line per event");
    assert!(text.contains(&format!("replayed {events} events of 21 runs")), "{text}");
    assert!(text.contains("gate_expired") && text.contains("resolution_refused"), "{text}");
    assert!(!s.path("never-created.db").exists(), "replay must not create a database");
}

#[test]
fn retention_purge_removes_finished_runs_and_the_audit_still_verifies() {
    let s = Scratch::new();
    s.demo("g.db");
    let out = s.run("g.db", &["retention", "purge", "--older-than-days", "0"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("purged ") && text.contains("Release api-gateway 2.14.0"), "{text}");
    let server = common::Server::start(&s.path("g.db"));
    let finished = stdout(&server.run(&["runs", "list", "--status", "completed"]));
    assert!(finished.starts_with("no runs match"), "{finished}");
    let audit = s.run("g.db", &["audit", "verify"]);
    assert_success(&audit);
    assert!(!stdout(&audit).contains("purged events:      0"), "{}", stdout(&audit));
}

#[test]
fn keep_going_trickles_new_gates_until_the_time_is_up() {
    let s = Scratch::new();
    let out = s.run("g.db", &["demo", "--runs", "1", "--seed", "5", "--keep-going", "2", "--no-serve"]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("--runs 1 raised to 21"), "{text}");
    let opened = text.lines().filter(|l| l.contains("] opened")).count();
    assert!((1..=3).contains(&opened), "about one gate a second:\n{text}");
}

#[test]
fn listing_an_empty_database_suggests_the_demo() {
    let s = Scratch::new();
    let server = common::Server::start(&s.path("g.db"));
    let out = server.run(&["gates", "list"]);
    assert_success(&out);
    assert!(stdout(&out).contains("gatehouse demo"), "{}", stdout(&out));
}

#[test]
fn an_unknown_status_is_a_usage_error_listing_the_possible_values() {
    let s = Scratch::new();
    let out = s.run("g.db", &["gates", "list", "--status", "waiting"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pending, resolved, expired, cancelled"), "{}", stderr(&out));
}

#[test]
fn openapi_prints_the_document_the_server_serves_without_touching_a_database() {
    let s = Scratch::new();
    let out = s.run("g.db", &["openapi"]);
    assert_success(&out);
    let printed: Value = serde_json::from_str(&stdout(&out)).expect("the document is JSON");
    let served = serde_json::to_value(gatehouse_server::openapi()).expect("the server's document");
    assert_eq!(printed, served);
    assert!(printed["paths"]["/api/hitl/runs/{run_id}/gates"]["post"].is_object());
    assert!(!s.path("g.db").exists(), "printing the document opened a database");
}

#[test]
fn team_import_prints_a_crews_team_and_pattern_and_names_what_it_cannot_read() {
    let s = Scratch::new();
    let crew = s.path("crew.yaml");
    std::fs::write(
        &crew,
        "agents:\n  researcher: {role: Researcher, goal: Find facts, llm: openai/gpt-4o, tools: [SerperDevTool]}\n  \
         writer: {role: Writer}\ntasks:\n  research: {description: Dig, agent: researcher}\n  \
         write: {description: Write, agent: writer, human_input: true}\n",
    )
    .expect("write the crew");
    let out = s.run("never-created.db", &["team", "import", "--from", "crewai", crew.to_str().expect("utf-8 path")]);
    assert_success(&out);
    let body: Value = serde_json::from_str(&stdout(&out)).expect("JSON on stdout");
    let names: Vec<&str> = body["team"].as_array().expect("team").iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(names, ["researcher", "writer"]);
    assert_eq!(body["team"][0]["provider"], "openai");
    assert_eq!(body["team"][1]["provider"], "scripted", "the default provider");
    assert_eq!(body["pattern"]["workflow"][1]["next_on_reject"], "write", "a human_input task is a review step");
    assert!(stderr(&out).contains("note: agents.researcher.tools (SerperDevTool)"), "{}", stderr(&out));
    assert!(!s.path("never-created.db").exists(), "an import touches no database");

    std::fs::write(&crew, "agents: {a: {role: r}}\ntasks: {t: {agent: b}}\n").expect("write the crew");
    let out = s.run("never-created.db", &["team", "import", "--from", "crewai", crew.to_str().expect("utf-8 path")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("`tasks.t.agent` no agent `b` in the crew; it has a"), "{}", stderr(&out));
}

#[test]
fn runs_team_shows_the_demo_teams_turn_handoffs_and_memory() {
    let s = Scratch::new();
    s.demo("g.db");
    let file = s.path("all.json");
    assert_success(&s.run("g.db", &["export", "--all", "-o", file.to_str().expect("utf-8 path")]));
    let all = read_json(&file);
    let runs = all["runs"].as_array().expect("runs");
    let id = |title: &str| {
        let found = runs.iter().find(|r| r["run"]["title"].as_str().is_some_and(|t| t.starts_with(title)));
        found.and_then(|r| r["run"]["id"].as_str()).expect("the run").to_owned()
    };
    let (team_run, other) = (id("Logout button"), id("Beta launch"));
    let server = common::Server::start(&s.path("g.db"));

    let out = server.run(&["runs", "team", &team_run]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("Team (3 agents), deployer holds the turn"), "{text}");
    assert!(text.contains("Handoffs (4):") && text.contains("tester -> coder: Two tests fail."), "{text}");
    assert!(text.contains("team:test_report = "), "{text}");
    // Its plan: a task per agent, each completed as its agent's turns went.
    let shown = stdout(&server.run(&["runs", "show", &team_run]));
    let done = shown.lines().filter(|l| l.starts_with("  task_00") && l.contains(" completed ")).count();
    assert_eq!(done, 3, "{shown}");

    // The run is over: its team no longer changes; a run without a team has none to show.
    let add =
        ["runs", "team", &team_run, "add", "auditor", "--role", "audits", "--provider", "scripted", "--model", "chat"];
    let refused = server.run(&add);
    assert!(!refused.status.success(), "{}", stdout(&refused));
    let none = server.run(&["runs", "team", &other]);
    assert!(!none.status.success());
    assert!(stderr(&none).contains("has no team"), "{}", stderr(&none));
    // Nor is its task restarted.
    let restart = server.run(&["runs", "restart-task", &team_run, "--agent", "coder", "--instruction", "again"]);
    assert!(!restart.status.success(), "{}", stdout(&restart));
    assert!(stderr(&restart).contains("there is no task to restart"), "{}", stderr(&restart));
    // A plan collaboration run's task restarts by its id, once the run does not wait at a gate.
    let planned = server.run(&["runs", "restart-task", &other, "--task", "task_001"]);
    assert!(!planned.status.success(), "{}", stdout(&planned));
    assert!(stderr(&planned).contains("(goal_review): decide it there"), "{}", stderr(&planned));

    // One team run is left paused at the handoff to the deployer: its team still changes.
    let held = id("Password meter");
    let shown = stdout(&server.run(&["runs", "show", &held]));
    assert!(shown.contains("paused"), "{shown}");
    let add =
        ["runs", "team", &held, "add", "auditor", "--role", "audits", "--provider", "scripted", "--model", "chat"];
    let out = server.run(&add);
    assert_success(&out);
    assert!(stdout(&out).contains("Team (4 agents)"), "{}", stdout(&out));

    // The sweep: the lead's parallel work with its passed sync point, three branches completed.
    let out = server.run(&["runs", "team", &id("Caching research sweep")]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("Parallel work by lead (wait_all), sync point passed:"), "{text}");
    assert_eq!(text.matches(" [completed] ").count(), 3, "{text}");

    // The consensus story: the proposal, each agent's vote with its reasoning, and the people's votes.
    let out = server.run(&["runs", "team", &id("Audit log store")]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("Proposals (1):"), "{text}");
    assert!(text.matches(" votes approve: ").count() + text.matches(" votes reject: ").count() >= 2, "{text}");
    assert!(text.contains(" approves") || text.contains(" rejects"), "{text}");

    // The workflow story: its steps with where each outcome leads, and its moves.
    let out = server.run(&["runs", "team", &id("Dark mode")]);
    assert_success(&out);
    let text = stdout(&out);
    assert!(text.contains("Workflow code_review_deploy ("), "{text}");
    assert!(text.contains(" -> end"), "{text}");
    assert!(text.contains(" approve -> "), "{text}");
}
