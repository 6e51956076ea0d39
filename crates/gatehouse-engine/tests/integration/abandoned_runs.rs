//! Runs whose agent is gone: the sweep cancels a `created` or `active` run
//! not heard from for the configured time, exactly once, with the reason and
//! an event, withdrawing its pending gates; a run heard from since, one whose
//! gate an agent is waiting on, and runs waiting for a human or paused stay.

use crate::common;

use chrono::Duration;
use common::Fixture;
use gatehouse_engine::run::{NewTurn, Role};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{BlockingMode, EngineError, EventKind, GateStatus, NewGate, RunStatus};

fn async_question(text: &str) -> NewGate {
    NewGate { mode: BlockingMode::Async, ..NewGate::question(text) }
}

fn half_hour() -> Duration {
    Duration::minutes(30)
}

#[test]
fn a_silent_run_is_cancelled_once_with_the_reason_and_its_gates_withdrawn() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, async_question("Which region?"), "deployer").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active, "an async gate leaves the run at work");
    f.clock.advance(Duration::minutes(29));
    assert!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap().is_empty(), "not gone yet");

    f.clock.advance(Duration::minutes(2));
    assert_eq!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap(), vec![run.id.clone()]);
    assert!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap().is_empty(), "ended once");
    let ended = f.engine.run(&run.id).unwrap();
    assert_eq!(ended.status, RunStatus::Cancelled);
    assert_eq!(ended.status_reason.as_deref(), Some("agent gone for 30 minutes"));
    let gate = f.engine.gate(&gate.id).unwrap();
    assert_eq!(gate.status, GateStatus::Cancelled, "withdrawn with its run");

    let log =
        f.engine.events_after(0, &EventFilter { run_id: Some(run.id.clone()), ..Default::default() }, 100).unwrap();
    let ends: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::RunStatusChanged { to: RunStatus::Cancelled, reason, .. } => {
                Some((e.body.actor.as_str(), reason.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![("system", Some("agent gone for 30 minutes".to_owned()))]);
    assert!(log
        .iter()
        .any(|e| matches!(&e.body.kind, EventKind::GateCancelled { gate_id, .. } if *gate_id == gate.id)));
}

#[test]
fn a_run_heard_from_within_the_time_is_kept_until_it_falls_silent() {
    let f = Fixture::new();
    let created = f.run("writer");
    f.clock.advance(Duration::minutes(20));
    f.engine.add_turn(&created.id, NewTurn::new(Role::Agent, "drafting"), "writer").unwrap();
    f.clock.advance(Duration::minutes(20));
    assert!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap().is_empty(), "heard from 20 minutes ago");

    f.clock.advance(Duration::minutes(11));
    assert_eq!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap(), vec![created.id.clone()]);
    assert_eq!(f.engine.run(&created.id).unwrap().status_reason.as_deref(), Some("agent gone for 30 minutes"));
}

#[test]
fn a_run_whose_gate_an_agent_is_waiting_on_is_not_gone() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let gate = f.engine.open_gate(&run.id, async_question("Ready?"), "deployer").unwrap();
    f.clock.advance(Duration::hours(2));
    assert!(f.engine.sweep_abandoned_runs(half_hour(), std::slice::from_ref(&gate.id)).unwrap().is_empty());
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);
    assert_eq!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap(), vec![run.id], "once nobody waits");
}

#[test]
fn runs_waiting_for_a_human_paused_or_ended_are_never_swept() {
    let f = Fixture::new();
    let waiting = f.run("deployer");
    f.engine.open_gate(&waiting.id, NewGate::question("Go?"), "deployer").unwrap();
    let paused = f.run("planner");
    f.engine.add_turn(&paused.id, NewTurn::new(Role::Agent, "step 1"), "planner").unwrap();
    f.engine.pause_run(&paused.id, "alice").unwrap();
    let done = f.run("writer");
    f.engine.add_turn(&done.id, NewTurn::new(Role::Agent, "done"), "writer").unwrap();
    f.engine.complete_run(&done.id, "writer", None).unwrap();
    f.clock.advance(Duration::hours(3));
    assert!(f.engine.sweep_abandoned_runs(half_hour(), &[]).unwrap().is_empty());
    assert_eq!(f.engine.run(&waiting.id).unwrap().status, RunStatus::AwaitingHuman);
    assert_eq!(f.engine.run(&paused.id).unwrap().status, RunStatus::Paused);
    assert_eq!(f.engine.run(&done.id).unwrap().status, RunStatus::Completed);
}

#[test]
fn a_time_of_zero_is_refused_naming_it() {
    let f = Fixture::new();
    let err = f.engine.sweep_abandoned_runs(Duration::zero(), &[]).unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "gone_after"), "{err:?}");
}
