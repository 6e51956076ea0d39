//! Timeouts with fallbacks: what a gate says happens when nobody answers
//! in time, applied once by the expiry sweep and recorded as the system's
//! decision with the reason.

use crate::common;

use common::Fixture;
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::policy::{HitlConfig, ReviewThresholds, RunPolicy};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{
    BlockingMode, DecisionOrigin, EngineError, EventKind, GateStatus, NewGate, NewRun, Priority, RunStatus,
    TimeoutFallback,
};
use serde_json::json;

fn gate(fallback: TimeoutFallback, secs: u64) -> NewGate {
    let mut new = NewGate::approval("deploy", "Deploy build 42?", json!({"build": 42}));
    new.on_timeout = fallback;
    new.expires_in_secs = Some(secs);
    new
}

#[test]
fn reject_and_approve_fallbacks_decide_once_as_the_system_and_the_run_goes_on() {
    let f = Fixture::new();
    // A policy that lets some gates pass without a human (this one waits: no confidence reported).
    let thresholds = ReviewThresholds { confidence_min: Some(0.9), safety_flags: vec![], payload_changes_max: None };
    let hitl = HitlConfig {
        run_policy: RunPolicy::AutoWithThresholds,
        review_thresholds: Some(thresholds),
        ..HitlConfig::default()
    };
    let run = f.run_with(NewRun { agent: "deployer".into(), hitl_config: hitl, ..NewRun::default() });
    let rejected = f.engine.open_gate(&run.id, gate(TimeoutFallback::Reject, 60), "deployer").unwrap();
    let approved = f.engine.open_gate(&run.id, gate(TimeoutFallback::Approve, 120), "deployer").unwrap();
    f.clock.advance(chrono::Duration::seconds(61));
    assert_eq!(f.engine.sweep_expired().unwrap(), vec![rejected.id.clone()]);
    assert!(f.engine.sweep_expired().unwrap().is_empty(), "applied once");
    let g = f.engine.gate(&rejected.id).unwrap();
    let d = g.decision.unwrap();
    assert_eq!((g.status, d.action, d.decided_by.as_str()), (GateStatus::Resolved, DecisionAction::Reject, "system"));
    assert!(
        matches!(&d.origin, DecisionOrigin::System { reason } if reason.contains("no answer within 1m")),
        "{:?}",
        d.origin
    );
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman, "the other gate still waits");

    f.clock.advance(chrono::Duration::seconds(60));
    f.engine.sweep_expired().unwrap();
    let d = f.engine.gate(&approved.id).unwrap().decision.unwrap();
    assert_eq!(d.action, DecisionAction::Approve);
    assert_eq!(d.decision_type(), gatehouse_engine::policy::DecisionType::SystemDecided);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active, "the run goes on, it did not fail");
}

#[test]
fn escalate_raises_the_priority_and_waits_one_more_window_then_expires() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut new = gate(TimeoutFallback::Escalate, 300);
    new.mode = BlockingMode::Async;
    let g = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    f.clock.advance(chrono::Duration::seconds(301));
    assert_eq!(f.engine.sweep_expired().unwrap(), vec![g.id.clone()]);
    let escalated = f.engine.gate(&g.id).unwrap();
    assert_eq!((escalated.status, escalated.priority), (GateStatus::Pending, Priority::Urgent));
    assert_eq!(escalated.expires_at, Some(f.engine.now() + chrono::Duration::seconds(300)));
    assert!(f.engine.sweep_expired().unwrap().is_empty(), "not due again until the new expiry");

    // A reviewer may still answer during the second window...
    let events = f.engine.events_after(0, &EventFilter::default(), 100).unwrap();
    assert!(events.iter().any(|e| matches!(&e.body.kind, EventKind::GateEscalated { priority: Priority::Urgent, .. })));
    // ...and if nobody does, it expires (once escalated, never again).
    f.clock.advance(chrono::Duration::seconds(301));
    f.engine.sweep_expired().unwrap();
    assert_eq!(f.engine.gate(&g.id).unwrap().status, GateStatus::Expired);
    assert_ne!(
        f.engine.run(&run.id).unwrap().status,
        RunStatus::Failed,
        "an async gate's expiry does not fail the run"
    );
}

#[test]
fn fail_fails_the_run_even_for_an_async_gate() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut new = gate(TimeoutFallback::Fail, 10);
    new.mode = BlockingMode::Async;
    let g = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    f.clock.advance(chrono::Duration::seconds(11));
    f.engine.sweep_expired().unwrap();
    assert_eq!(f.engine.gate(&g.id).unwrap().status, GateStatus::Expired);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Failed);
}

#[test]
fn a_fallback_needs_an_expiry_and_approving_unanswered_is_refused_where_a_human_is_required() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let field_of = |r: Result<gatehouse_engine::Gate, EngineError>| match r {
        Err(EngineError::Invalid { field, reason }) => (field, reason),
        other => panic!("not refused: {other:?}"),
    };
    let mut no_expiry = gate(TimeoutFallback::Reject, 1);
    no_expiry.expires_in_secs = None;
    assert_eq!(field_of(f.engine.open_gate(&run.id, no_expiry, "deployer")).0, "on_timeout");
    let mut human = gate(TimeoutFallback::Approve, 60);
    human.requires_human = true;
    assert!(field_of(f.engine.open_gate(&run.id, human, "deployer")).1.contains("requires a human"));
    let strict = HitlConfig { run_policy: RunPolicy::RequireHuman, ..HitlConfig::default() };
    let strict = f.run_with(NewRun { agent: "deployer".into(), hitl_config: strict, ..NewRun::default() });
    assert!(field_of(f.engine.open_gate(&strict.id, gate(TimeoutFallback::Approve, 60), "deployer"))
        .1
        .contains("policy"));
    // A question's default expiry is enough for a fallback.
    let mut question = NewGate::question("Which region?");
    question.on_timeout = TimeoutFallback::Reject;
    f.engine.open_gate(&run.id, question, "deployer").unwrap();
}

#[test]
fn a_sweep_passes_over_gates_an_earlier_expiry_in_it_withdrew() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let first = f.engine.open_gate(&run.id, gate(TimeoutFallback::Expire, 60), "deployer").unwrap();
    let second = f.engine.open_gate(&run.id, gate(TimeoutFallback::Reject, 90), "deployer").unwrap();
    f.clock.advance(chrono::Duration::minutes(5));
    // The first (sync) gate's expiry fails the run and withdraws the second,
    // which the sweep had found due in the same batch.
    let swept = f.engine.sweep_expired().expect("the sweep goes on");
    assert_eq!(swept, vec![first.id.clone()]);
    assert_eq!(f.engine.gate(&second.id).unwrap().status, GateStatus::Cancelled);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Failed);
}

#[test]
fn a_run_past_its_expiry_is_cancelled_once_and_its_pending_gates_expire() {
    let f = Fixture::new();
    let at = f.engine.now() + chrono::Duration::hours(1);
    let run = f.run_with(NewRun { agent: "deployer".into(), expires_at: Some(at), ..NewRun::default() });
    assert_eq!(f.engine.run(&run.id).unwrap().expires_at, Some(at));
    let waiting = f.engine.open_gate(&run.id, NewGate::question("Which region?"), "deployer").unwrap();
    let lasting = f.run("deployer");

    f.clock.advance(chrono::Duration::minutes(59));
    assert!(f.engine.sweep_expired_runs().unwrap().is_empty(), "not yet");
    f.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(f.engine.sweep_expired_runs().unwrap(), vec![run.id.clone()]);
    assert!(f.engine.sweep_expired_runs().unwrap().is_empty(), "once");

    let ended = f.engine.run(&run.id).unwrap();
    assert_eq!(ended.status, RunStatus::Cancelled);
    let reason = ended.status_reason.unwrap();
    assert!(reason.starts_with("the run expired at "), "{reason}");
    let gate = f.engine.gate(&waiting.id).unwrap();
    assert_eq!((gate.status, gate.status_reason.as_deref()), (GateStatus::Expired, Some(reason.as_str())));
    assert_eq!(f.engine.run(&lasting.id).unwrap().status, RunStatus::Created, "a run without an expiry stays");
    let events = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(&e.body.kind, EventKind::GateExpired { gate_id, .. } if *gate_id == waiting.id)));
    assert!(f.engine.verify_audit().unwrap().problems.is_empty(), "the log still explains every row");
}

#[test]
fn a_run_cannot_be_made_already_expired() {
    let f = Fixture::new();
    let past = f.engine.now() - chrono::Duration::seconds(1);
    let err = f.engine.create_run(NewRun { expires_at: Some(past), ..NewRun::default() }, "deployer").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "expires_at"), "{err:?}");
}
