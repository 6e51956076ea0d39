//! Resuming a run that awaits a human: its sync gates are released (async,
//! still open for a decision, marked with who released them), the run goes
//! on, the log says so, and a later decision is an ordinary one.

use crate::common;

use common::Fixture;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{BlockingMode, DecisionInput, EventKind, GateStatus, NewGate, RunStatus};
use serde_json::json;

#[test]
fn resuming_a_run_awaiting_a_human_releases_its_sync_gates_and_decides_nothing() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let sync =
        f.engine.open_gate(&run.id, NewGate::approval("deploy", "Deploy?", json!({"v": 1})), "deployer").unwrap();
    let mut background = NewGate::question("Which region next?");
    background.mode = BlockingMode::Async;
    let background = f.engine.open_gate(&run.id, background, "deployer").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);

    let resumed = f.engine.resume_run(&run.id, "alice").unwrap();
    assert_eq!(resumed.status, RunStatus::Active);
    assert!(resumed.status_reason.unwrap().contains("alice"));

    let released = f.engine.gate(&sync.id).unwrap();
    assert_eq!((released.status, released.mode), (GateStatus::Pending, BlockingMode::Async));
    assert!(released.decision.is_none(), "a release is not a decision");
    let mark = released.released.expect("marked as released");
    assert_eq!((mark.by.as_str(), mark.from_mode), ("alice", BlockingMode::Sync));
    assert!(f.engine.gate(&background.id).unwrap().released.is_none(), "only sync gates are released");

    let events =
        f.engine.events_after(0, &EventFilter { run_id: Some(run.id.clone()), ..Default::default() }, 100).unwrap();
    let releases: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::GateReleased { gate_id, .. } => Some((gate_id.clone(), e.body.actor.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(releases, vec![(sync.id.clone(), "alice".to_owned())]);
    assert!(f.engine.verify_audit().unwrap().is_intact(), "the log implies the released gate");
}

#[test]
fn a_released_gate_stays_answerable_and_its_decision_leaves_the_run_going() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Which key?"), "deployer").unwrap();
    f.engine.resume_run(&run.id, "alice").unwrap();

    let decided = f.engine.resolve_gate(&gate.id, DecisionInput::respond("the staging key"), "bob").unwrap();
    assert_eq!(decided.status, GateStatus::Resolved);
    assert_eq!(decided.decision.unwrap().decided_by, "bob");
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);

    // A new sync gate makes it wait again, as any would.
    f.engine.open_gate(&run.id, NewGate::question("And the region?"), "deployer").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);
    assert!(f.engine.verify_audit().unwrap().is_intact());
}

#[test]
fn a_paused_run_resumes_to_waiting_first_and_is_released_only_when_resumed_again() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, NewGate::question("?"), "deployer").unwrap();
    f.engine.pause_run(&run.id, "alice").unwrap();
    assert_eq!(f.engine.resume_run(&run.id, "alice").unwrap().status, RunStatus::AwaitingHuman);
    assert!(f.engine.gate(&gate.id).unwrap().released.is_none());
    assert_eq!(f.engine.resume_run(&run.id, "alice").unwrap().status, RunStatus::Active);
    assert!(f.engine.gate(&gate.id).unwrap().released.is_some());
}

#[test]
fn a_released_gate_expiring_does_not_fail_its_run() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut ask = NewGate::question("?");
    ask.expires_in_secs = Some(60);
    let gate = f.engine.open_gate(&run.id, ask, "deployer").unwrap();
    f.engine.resume_run(&run.id, "alice").unwrap();
    f.clock.advance(chrono::Duration::seconds(61));
    f.engine.sweep_expired().unwrap();
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Expired);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active, "no longer a blocker of the run");
}
