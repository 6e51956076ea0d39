//! Time and trust: the expiry sweep under an injected clock, retention,
//! and audit verification catching altered or removed decisions.

use crate::common;

use chrono::Duration;
use common::Fixture;
use gatehouse_engine::plan::{PlanOperation, TaskPriority, TaskStatus};
use gatehouse_engine::{BlockingMode, DecisionInput, EventKind, GateStatus, NewGate, RunStatus};

#[test]
fn a_question_expires_after_24_hours_exactly_once_and_fails_its_run() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("What API key should I use?"), "agent").unwrap();
    f.clock.advance(Duration::hours(23) + Duration::minutes(59));
    assert!(f.engine.sweep_expired().unwrap().is_empty());
    f.clock.advance(Duration::minutes(1));
    assert_eq!(f.engine.sweep_expired().unwrap(), vec![gate.id.clone()]);
    assert!(f.engine.sweep_expired().unwrap().is_empty(), "a second sweep expires nothing");

    let g = f.engine.gate(&gate.id).unwrap();
    assert_eq!(g.status, GateStatus::Expired);
    assert_eq!(g.status_reason.as_deref(), Some("expired after 24h without resolution"));
    let r = f.engine.run(&run.id).unwrap();
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.status_reason.unwrap().contains("expired after 24h"));
    let expired_events = f
        .engine
        .events_after(0, &Default::default(), 100)
        .unwrap()
        .into_iter()
        .filter(|e| matches!(e.body.kind, EventKind::GateExpired { .. }))
        .count();
    assert_eq!(expired_events, 1);
    let late = f.engine.resolve_gate(&gate.id, DecisionInput::respond("too late"), "alice").unwrap_err();
    assert!(late.to_string().contains("already expired"), "{late}");
}

#[test]
fn an_expired_async_gate_fails_its_plan_task_but_not_the_run() {
    let f = Fixture::new();
    let run = f.run("agent");
    let add = PlanOperation::AddTask {
        description: "Pick a colour scheme".into(),
        priority: TaskPriority::Low,
        dependencies: vec![],
        task_id: Some("task_001".into()),
        assigned_agent: None,
        estimated_duration: None,
    };
    f.engine.plan_apply(&run.id, add, "agent").unwrap();
    let mut q = NewGate::question("Dark or light theme?");
    q.mode = BlockingMode::Async;
    q.expires_in_secs = Some(3600);
    q.context.task_id = Some("task_001".into());
    f.engine.open_gate(&run.id, q, "agent").unwrap();
    f.clock.advance(Duration::hours(2));
    assert_eq!(f.engine.sweep_expired().unwrap().len(), 1);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);
    let plan = f.engine.plan(&run.id).unwrap().unwrap();
    assert_eq!(plan.plan.task("task_001").unwrap().status, TaskStatus::Failed);
    assert!(plan.change_log.iter().any(|l| l.contains("failed")), "{:?}", plan.change_log);
}

#[test]
fn audit_verification_passes_on_an_honest_log_and_names_an_altered_decision() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Ship?"), "agent").unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    let report = f.engine.verify_audit().unwrap();
    assert!(report.is_intact(), "{:?}", report.problems);
    assert_eq!(report.decisions_checked, 1);

    // Someone rewrites the stored decision behind the engine's back.
    f.tamper(&format!(
        "UPDATE gates SET data = replace(data, '\"alice\"', '\"mallory\"') WHERE id = '{}'",
        gate.id.as_str()
    ));
    let report = f.engine.verify_audit().unwrap();
    assert!(
        report.problems.iter().any(|p| p.contains(gate.id.as_str()) && p.contains("differs")),
        "{:?}",
        report.problems
    );

    // ...or edits the logged event itself, or deletes one.
    f.tamper("UPDATE events SET body = replace(body, 'yes', 'no!') WHERE kind = 'gate_resolved'");
    let report = f.engine.verify_audit().unwrap();
    assert!(report.problems.iter().any(|p| p.contains("altered")), "{:?}", report.problems);
    f.tamper("DELETE FROM events WHERE seq = 2");
    let report = f.engine.verify_audit().unwrap();
    assert!(report.problems.iter().any(|p| p.contains("missing")), "{:?}", report.problems);
}

#[test]
fn retention_purges_old_terminal_runs_only_and_the_chain_still_verifies() {
    let f = Fixture::new();
    let old = f.run("old");
    let g = f.engine.open_gate(&old.id, NewGate::question("?"), "old").unwrap();
    f.engine.resolve_gate(&g.id, DecisionInput::respond("fine"), "alice").unwrap();
    f.engine.complete_run(&old.id, "old", None).unwrap();
    let waiting = f.run("waiting");
    f.engine.open_gate(&waiting.id, NewGate::question("still pending"), "waiting").unwrap();
    f.clock.advance(Duration::days(31));
    let recent = f.run("recent");
    f.engine.cancel_run(&recent.id, "alice", None).unwrap();

    let report = f.engine.purge_terminal_runs(30).unwrap();
    assert_eq!(report.runs, vec![old.id.clone()]);
    assert!(f.engine.run(&old.id).is_err());
    assert!(f.engine.run(&waiting.id).is_ok(), "pending work is never purged");
    assert!(f.engine.run(&recent.id).is_ok(), "recent terminal runs are kept");
    let audit = f.engine.verify_audit().unwrap();
    assert!(audit.is_intact(), "{:?}", audit.problems);
    assert!(audit.purged_events > 0);
}
