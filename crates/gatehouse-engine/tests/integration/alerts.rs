//! Alert figures and SLA compliance on small known workloads, worked out
//! by hand, and alerts kept in the event log without breaking the chain.

use crate::common;

use chrono::Duration;
use common::Fixture;
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{
    Alert, AlertKind, BlockingMode, DecisionInput, EventKind, NewGate, NewRun, Priority, SlaTargets,
};
use serde_json::json;

fn question(text: &str, priority: Priority) -> NewGate {
    let mut gate = NewGate::question(text);
    gate.priority = priority;
    gate
}

#[test]
fn urgent_gates_decided_late_or_left_pending_past_their_target_miss_the_sla() {
    let f = Fixture::new();
    let run = f.run("ops");
    let e = &f.engine;
    let fast = e.open_gate(&run.id, question("Fast?", Priority::Urgent), "ops").unwrap();
    let slow = e.open_gate(&run.id, question("Slow?", Priority::Urgent), "ops").unwrap();
    e.open_gate(&run.id, question("Forgotten?", Priority::Urgent), "ops").unwrap();
    let normal = e.open_gate(&run.id, question("Normal?", Priority::Normal), "ops").unwrap();
    let withdrawn = e.open_gate(&run.id, question("Withdrawn?", Priority::Urgent), "ops").unwrap();
    f.clock.advance(Duration::minutes(5));
    e.resolve_gate(&fast.id, DecisionInput::respond("yes"), "alice").unwrap();
    e.resolve_gate(&normal.id, DecisionInput::respond("yes"), "alice").unwrap();
    e.cancel_gate(&withdrawn.id, "no longer needed", "ops").unwrap();
    f.clock.advance(Duration::minutes(20));
    e.resolve_gate(&slow.id, DecisionInput::respond("late"), "alice").unwrap();

    let rows = e.sla_compliance(&SlaTargets::default()).unwrap();
    let row = |p: Priority| rows.iter().find(|r| r.priority == p).unwrap().clone();
    // Fast within 15 minutes, slow after 25, the forgotten one pending past 15; the withdrawn one is not counted.
    assert_eq!((row(Priority::Urgent).gates, row(Priority::Urgent).within_target), (3, 1));
    assert_eq!((row(Priority::Normal).gates, row(Priority::Normal).compliance), (1, Some(1.0)));
    assert_eq!(row(Priority::Low).compliance, None);

    let strict = SlaTargets { normal_ms: 60_000, ..SlaTargets::default() };
    let rows = e.sla_compliance(&strict).unwrap();
    let normal_row = rows.iter().find(|r| r.priority == Priority::Normal).unwrap();
    assert_eq!(normal_row.within_target, 0, "five minutes misses a one-minute target");
}

#[test]
fn alert_figures_see_the_oldest_sync_gate_the_queue_and_auto_passes_in_the_window() {
    let f = Fixture::new();
    let e = &f.engine;
    let people = f.run("people");
    use gatehouse_engine::Clock;
    let oldest = f.clock.now();
    e.open_gate(&people.id, NewGate::question("First?"), "people").unwrap();
    let mut later = NewGate::question("Async?");
    later.mode = BlockingMode::Async;
    e.open_gate(&people.id, later, "people").unwrap();
    f.clock.advance(Duration::hours(2));
    let window_start = f.clock.now();
    let auto = HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() };
    let robot = f.run_with(NewRun { agent: "robot".into(), hitl_config: auto, ..NewRun::default() });
    for i in 0..3 {
        e.open_gate(&robot.id, NewGate::approval("ship", format!("Ship {i}?"), json!({})), "robot").unwrap();
    }
    e.open_gate(&people.id, NewGate::question("Second?"), "people").unwrap();

    let figures = e.alert_figures(window_start).unwrap();
    assert_eq!(figures.oldest_pending_sync, Some(oldest));
    assert_eq!(figures.pending, 3, "two questions and the async one");
    assert_eq!((figures.opened_in_window, figures.auto_passed_in_window), (4, 3));
}

#[test]
fn an_alert_is_an_event_of_no_run_and_the_chain_still_verifies() {
    let f = Fixture::new();
    let alert =
        Alert { kind: AlertKind::PendingQueue, value: 12.0, threshold: 10.0, message: "12 gates pending".into() };
    assert!(f.engine.record_alert(alert.clone(), true).unwrap(), "raised");
    assert!(f.engine.record_alert(Alert { value: 3.0, ..alert.clone() }, false).unwrap(), "cleared");
    let events = f.engine.events_after(0, &EventFilter::default(), 10).unwrap();
    let kinds: Vec<_> = events.iter().map(|e| e.body.kind.name()).collect();
    assert_eq!(kinds, ["alert_raised", "alert_cleared"]);
    assert!(matches!(&events[0].body.kind, EventKind::AlertRaised { alert: a } if *a == alert));
    assert_eq!((events[0].body.run_id.as_ref(), events[0].body.actor.as_str()), (None, "alerts"));
    assert!(!events[0].body.kind.is_recordable(), "alerts are bookkeeping, never part of a recording");
    assert_eq!(f.engine.verify_audit().unwrap().problems, Vec::<String>::new());
}

#[test]
fn the_alerts_up_are_those_whose_newest_event_raised_them() {
    let f = Fixture::new();
    let alert = |kind, value| Alert { kind, value, threshold: 1.0, message: format!("{value}") };
    f.engine.record_alert(alert(AlertKind::PendingQueue, 5.0), true).unwrap();
    f.engine.record_alert(alert(AlertKind::AutoPassRate, 90.0), true).unwrap();
    f.engine.record_alert(alert(AlertKind::AutoPassRate, 10.0), false).unwrap();
    assert!(!f.engine.record_alert(alert(AlertKind::WebhookFailures, 3.0), false).unwrap(), "never raised");
    let up = f.engine.alerts_up().unwrap();
    assert_eq!(up, [alert(AlertKind::PendingQueue, 5.0)]);
}

#[test]
fn a_crossing_another_instance_already_logged_is_not_logged_again() {
    let f = Fixture::new();
    let alert =
        Alert { kind: AlertKind::PendingQueue, value: 12.0, threshold: 10.0, message: "12 gates pending".into() };
    // Two servers on one database see the same crossing; the second finds it logged.
    assert!(f.engine.record_alert(alert.clone(), true).unwrap());
    assert!(!f.engine.record_alert(alert.clone(), true).unwrap());
    assert!(f.engine.record_alert(alert.clone(), false).unwrap());
    assert!(!f.engine.record_alert(alert, false).unwrap());
    let events = f.engine.events_after(0, &EventFilter::default(), 10).unwrap();
    let kinds: Vec<_> = events.iter().map(|e| e.body.kind.name()).collect();
    assert_eq!(kinds, ["alert_raised", "alert_cleared"]);
}
