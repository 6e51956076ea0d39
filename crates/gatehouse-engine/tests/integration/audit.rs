//! Audit verification against tampering: each stored row compared with the
//! state the log implies, the keyed chain against a forger who re-chains
//! without the key, and anchors against truncation.

use crate::common;

use common::Fixture;
use gatehouse_engine::event::{AuditAnchor, AuditKey};
use gatehouse_engine::{AuditReport, BlockingMode, DecisionInput, Gate, NewAllowRule, NewGate, Run, TokenRole};
use serde_json::json;

/// A run with one resolved approval of `{"env": "staging"}`, decided by alice.
fn resolved_approval(f: &Fixture) -> (Run, Gate) {
    let run = f.run("deployer");
    let gate = f
        .engine
        .open_gate(&run.id, NewGate::approval("deploy", "Deploy to staging?", json!({"env": "staging"})), "deployer")
        .unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    (run, f.engine.gate(&gate.id).unwrap())
}

fn names(report: &AuditReport, words: &[&str]) -> bool {
    report.problems.iter().any(|p| words.iter().all(|w| p.contains(w)))
}

#[track_caller]
fn assert_intact(report: &AuditReport) {
    assert!(report.is_intact(), "{:?}", report.problems);
}

#[track_caller]
fn assert_names(report: &AuditReport, words: &[&str]) {
    assert!(names(report, words), "expected a problem naming {words:?}, got {:?}", report.problems);
}

#[test]
fn rewriting_a_decision_rows_action_and_decider_fails_verification() {
    let f = Fixture::new();
    let (_, gate) = resolved_approval(&f);
    let decision = gate.decision.unwrap();
    assert_intact(&f.engine.verify_audit().unwrap());

    f.tamper(&format!(
        "UPDATE decisions SET action = 'reject', decided_by = 'mallory' WHERE id = '{}'",
        decision.id.as_str()
    ));
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &[decision.id.as_str(), "action", "decided_by"]);

    // The snapshot too, so the row agrees with itself but not with the log.
    f.tamper(&format!(
        "UPDATE decisions SET data = replace(replace(data, '\"alice\"', '\"mallory\"'), '\"approve\"', '\"reject\"')
         WHERE id = '{}'",
        decision.id.as_str()
    ));
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["decision", decision.id.as_str(), "differs from its logged events", "decided_by"]);
}

#[test]
fn changing_a_resolved_gates_text_or_payload_fails_verification() {
    let f = Fixture::new();
    let (_, gate) = resolved_approval(&f);
    f.tamper(&format!(
        "UPDATE gates SET data = replace(replace(data, 'Deploy to staging?', 'Deploy to production?'),
            '\"env\":\"staging\"', '\"env\":\"production\"') WHERE id = '{}'",
        gate.id.as_str()
    ));
    assert_eq!(f.engine.gate(&gate.id).unwrap().text, "Deploy to production?", "the tampering took");
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["gate", gate.id.as_str(), "payload", "text"]);
}

#[test]
fn deleting_the_newest_decision_with_its_tail_events_and_reopening_the_gate_fails_verification() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let opened = f.engine.open_gate(&run.id, NewGate::question("Ship it?"), "deployer").unwrap();
    let before = f.engine.audit_anchor().unwrap();
    f.engine.resolve_gate(&opened.id, DecisionInput::respond("yes"), "alice").unwrap();
    let after = f.engine.audit_anchor().unwrap();

    f.tamper(&format!(
        "DELETE FROM decisions WHERE gate_id = '{id}';
         DELETE FROM events WHERE seq > {seq};
         UPDATE gates SET status = 'pending', data = '{data}' WHERE id = '{id}';",
        id = opened.id.as_str(),
        seq = before.seq,
        data = serde_json::to_string(&opened).unwrap().replace('\'', "''"),
    ));
    assert_eq!(f.engine.gate(&opened.id).unwrap().decision, None, "the tampering took");
    // The run went back to work when its sync gate was answered; the log now says it still waits.
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["run", run.id.as_str(), "status"]);
    // Had the forger reset the run too, the anchor kept from before still catches it.
    let report = f.engine.verify_audit_against(Some(&after)).unwrap();
    assert_names(&report, &["truncated"]);
}

#[test]
fn deleting_the_last_event_fails_verification() {
    let f = Fixture::new();
    let run = f.run("agent");
    let mut question = NewGate::question("Which colour?");
    question.mode = BlockingMode::Async;
    let gate = f.engine.open_gate(&run.id, question, "agent").unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::respond("blue"), "alice").unwrap();

    f.tamper("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)");
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["decision", "has no logged event behind it"]);
    assert_names(&report, &["gate", gate.id.as_str(), "differs from its logged events", "decision", "status"]);
}

#[test]
fn an_anchor_catches_truncation_below_it_and_a_rewritten_head() {
    let f = Fixture::new();
    let (_, gate) = resolved_approval(&f);
    // A late second answer changes no row: only the log holds it.
    let late = f.engine.resolve_gate(&gate.id, DecisionInput::reject("too late"), "bob");
    assert!(late.is_err(), "the gate was already decided");
    let anchor = f.engine.audit_anchor().unwrap();
    assert_intact(&f.engine.verify_audit_against(Some(&anchor)).unwrap());

    f.tamper("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)");
    assert_intact(&f.engine.verify_audit().unwrap());
    let report = f.engine.verify_audit_against(Some(&anchor)).unwrap();
    assert_names(&report, &["truncated", &anchor.seq.to_string()]);

    let elsewhere = AuditAnchor { seq: anchor.seq - 1, hash: "0".repeat(64) };
    let report = f.engine.verify_audit_against(Some(&elsewhere)).unwrap();
    assert_names(&report, &["differs from the anchor"]);
}

#[test]
fn forging_an_event_and_recomputing_the_chain_fails_verification_with_the_key() {
    let f = Fixture::new();
    let key = || AuditKey::from_text("a secret that is long enough to key the audit chain").unwrap();
    let engine = f.open_with_key(Some(key()));
    let run = engine.create_run(gatehouse_engine::NewRun { agent: "agent".into(), ..Default::default() }, "agent");
    let run = run.unwrap();
    let gate = engine.open_gate(&run.id, NewGate::question("Ship?"), "agent").unwrap();
    engine.resolve_gate(&gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    let report = engine.verify_audit().unwrap();
    assert_intact(&report);
    assert_eq!(report.keyed_from, Some(1));

    // Mallory rewrites who decided, in the rows and in the log, and re-chains it.
    f.tamper("UPDATE gates SET data = replace(data, '\"alice\"', '\"mallory\"')");
    f.tamper("UPDATE decisions SET decided_by = 'mallory', data = replace(data, '\"alice\"', '\"mallory\"')");
    f.forge_events_from(1, |body| body.replace("\"alice\"", "\"mallory\""));
    assert_eq!(engine.gate(&gate.id).unwrap().decision.unwrap().decided_by, "mallory", "the forgery took");

    let report = engine.verify_audit().unwrap();
    assert_names(&report, &["not chained with the audit key"]);
    let without_key = f.open_with_key(None).verify_audit().unwrap();
    assert_eq!(without_key.keyed_from, None, "without the key the forgery looks like an unkeyed log");
}

#[test]
fn a_log_chained_before_its_key_still_verifies_and_keyed_links_follow_it() {
    let f = Fixture::new();
    let (run, _) = resolved_approval(&f);
    let plain_head = f.engine.audit_anchor().unwrap();
    assert!(!f.engine.audit_head_is_keyed().unwrap());
    let key = AuditKey::from_text(&AuditKey::generate()).unwrap();
    let keyed = f.open_with_key(Some(key));
    keyed.context_set(&run.id, "colour", json!("blue"), "deployer").unwrap();
    assert!(keyed.audit_head_is_keyed().unwrap(), "a keyless writer can tell it would break the keyed chain");

    let report = keyed.verify_audit().unwrap();
    assert_intact(&report);
    assert_eq!(report.keyed_from, Some(plain_head.seq + 1));
    let without_key = f.open_with_key(None).verify_audit().unwrap();
    assert_intact(&without_key);
    assert_eq!(without_key.unchecked_links, 1, "the keyed link cannot be checked without the key");

    // A server started without the key afterwards breaks the keyed chain's rule.
    f.open_with_key(None).context_set(&run.id, "colour", json!("red"), "deployer").unwrap();
    assert_names(&keyed.verify_audit().unwrap(), &["chained without the audit key after event"]);
}

#[test]
fn editing_a_runs_context_plan_turns_or_title_fails_verification() {
    let f = Fixture::new();
    let run = f.run("agent");
    f.engine.context_set(&run.id, "budget", json!(100), "agent").unwrap();
    let add = gatehouse_engine::plan::PlanOperation::AddTask {
        description: "Write the report".into(),
        priority: gatehouse_engine::plan::TaskPriority::Low,
        dependencies: vec![],
        task_id: Some("task_001".into()),
        assigned_agent: None,
        estimated_duration: None,
    };
    f.engine.plan_apply(&run.id, add, "agent").unwrap();
    assert_intact(&f.engine.verify_audit().unwrap());

    f.tamper("UPDATE context SET value = '100000'");
    f.tamper("UPDATE plan_revisions SET data = replace(data, 'Write the report', 'Delete the report')");
    f.tamper(&format!("UPDATE runs SET data = replace(data, 'agent''s run', 'nobody''s run') WHERE id = '{}'", run.id));
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["context key", "budget", "differs"]);
    assert_names(&report, &["plan revision", "differs", "plan"]);
    assert_names(&report, &["run", run.id.as_str(), "title"]);

    f.tamper("DELETE FROM context");
    assert_names(&f.engine.verify_audit().unwrap(), &["context key", "budget", "was removed"]);
}

#[test]
fn promoting_a_token_or_reviving_an_allow_rule_fails_verification() {
    let f = Fixture::new();
    let (token, _) = f.engine.create_token("ci", TokenRole::Agent, "admin").unwrap();
    let rule = f
        .engine
        .create_allow_rule(
            NewAllowRule {
                agent: "deployer".into(),
                action: "deploy".into(),
                args: Some(json!({"env": "staging"})),
                any_args: false,
                for_secs: Some(3600),
                note: None,
            },
            "alice",
        )
        .unwrap();
    f.engine.revoke_allow_rule(&rule.id, "alice").unwrap();
    assert_intact(&f.engine.verify_audit().unwrap());

    f.tamper(&format!(
        "UPDATE tokens SET role = 'admin', data = replace(data, '\"role\":\"agent\"', '\"role\":\"admin\"') WHERE id = '{}'",
        token.id
    ));
    f.tamper("UPDATE allow_rules SET revoked_at = NULL");
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["token", &token.id, "role"]);
    assert_names(&report, &["allow-rule", rule.id.as_str(), "revoked_at"]);
}

#[test]
fn a_row_with_no_event_behind_it_fails_verification() {
    let f = Fixture::new();
    let (run, gate) = resolved_approval(&f);
    let mut forged = gate.clone();
    forged.id = gatehouse_engine::GateId::from("gate_forged");
    forged.decision = None;
    forged.status = gatehouse_engine::GateStatus::Pending;
    forged.closed_at = None;
    f.tamper(&format!(
        "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at, data)
         VALUES ('gate_forged', '{run}', 'approval', 0, 1, 'pending', 'deployer', 0, '{data}')",
        run = run.id,
        data = serde_json::to_string(&forged).unwrap().replace('\'', "''"),
    ));
    let report = f.engine.verify_audit().unwrap();
    assert_names(&report, &["gate gate_forged has no logged event behind it"]);
}

#[test]
fn a_recording_carries_the_anchor_of_the_log_it_was_exported_from() {
    let f = Fixture::new();
    let (run, _) = resolved_approval(&f);
    let recording = f.engine.export(gatehouse_engine::RecordingScope::Run { run_id: run.id.clone() }).unwrap();
    let anchor = recording.anchor.expect("an anchor");
    assert_eq!(anchor, f.engine.audit_anchor().unwrap());
    assert_intact(&f.engine.verify_audit_against(Some(&anchor)).unwrap());
}
