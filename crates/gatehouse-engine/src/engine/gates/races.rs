//! Lost races, one per way of closing a gate: each path is handed the gate
//! as it read it (pending) after another path has closed it, as a
//! concurrent writer on PostgreSQL would be. Every loser gets the one
//! `GateClosed`, read afresh, naming the winner; and, run in a transaction
//! that is then committed, it has written nothing and logged no event.
//! On SQLite, or on PostgreSQL with `GATEHOUSE_TEST_BACKEND=postgres`.

use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use serde_json::json;
use tempfile::TempDir;

use super::actions::decide_actions;
use super::decision::{decide_gate, Attempt};
use super::votes::vote;
use crate::decision::{ActionChoice, DecisionAction, DecisionInput, DecisionOrigin};
use crate::engine::close::{close_pending, save_pending, skip_if_closed, Closing};
use crate::engine::{Database, Engine, EngineConfig};
use crate::error::{EngineError, Result};
use crate::gate::{Gate, GateSpec, GateStatus, NewGate, ProposedAction, Quorum};
use crate::ids::{GateId, ManualClock};
use crate::run::{NewRun, Run};
use crate::store::{PgOptions, Store, WriteTx};

#[path = "../../../../../tests/support/postgres.rs"]
mod cluster;

struct Fixture {
    engine: Engine,
    clock: ManualClock,
    _dir: TempDir,
}

impl Fixture {
    /// A fresh engine on the backend the test command chose.
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap());
        let mut config = EngineConfig::default();
        let database = match std::env::var("GATEHOUSE_TEST_BACKEND").as_deref() {
            Ok("postgres") => {
                config.postgres = PgOptions {
                    schema: Some(format!("test_{}", uuid::Uuid::new_v4().simple())),
                    ..PgOptions::default()
                };
                Database::Postgres(cluster::url())
            }
            Ok("sqlite") | Err(_) => Database::Sqlite(dir.path().join("gatehouse.db")),
            Ok(other) => panic!("GATEHOUSE_TEST_BACKEND is `{other}`; use sqlite or postgres"),
        };
        let engine = Engine::open_database(&database, config, Arc::new(clock.clone())).expect("open engine");
        Self { engine, clock, _dir: dir }
    }

    fn run(&self) -> Run {
        let new = NewRun { agent: "coder".into(), ..NewRun::default() };
        self.engine.create_run(new, "coder").expect("create run")
    }

    fn open(&self, new: NewGate) -> Gate {
        let run = self.run();
        self.engine.open_gate(&run.id, new, "coder").expect("open gate")
    }

    /// Runs `attempt` (a losing path) in a transaction that commits whatever
    /// it wrote, and returns its error after checking it wrote nothing: the
    /// log's head and the gate are as the winner left them.
    fn lose<T>(
        &self,
        gate: GateId,
        attempt: impl FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
    ) -> EngineError {
        let (head, winner) = (self.engine.head_seq().unwrap(), self.engine.gate(&gate).unwrap());
        let outcome = self.engine.store().write(move |tx| Ok(attempt(tx).map(drop))).expect("the transaction commits");
        let error = outcome.expect_err("the losing path must fail");
        assert_eq!(self.engine.head_seq().unwrap(), head, "the loser logged no event");
        assert_eq!(self.engine.gate(&gate).unwrap(), winner, "the loser changed nothing");
        error
    }
}

/// Asserts `error` is the conflict naming the winner of `gate`'s race.
fn assert_names_winner(error: EngineError, winner: &Gate, status: GateStatus, resolved_by: Option<&str>) {
    match error {
        EngineError::GateClosed { gate_id, status: s, resolved_by: by, resolved_at } => {
            assert_eq!(gate_id, winner.id);
            assert_eq!(s, status);
            assert_eq!(by.as_deref(), resolved_by);
            assert_eq!(resolved_at, winner.closed_at, "when the winner closed it");
            assert!(resolved_at.is_some());
        }
        other => panic!("expected GateClosed naming the winner, got {other:?}"),
    }
}

fn quorum_gate(required: u32) -> NewGate {
    let mut new = NewGate::approval("deploy", "Deploy to production?", json!({"env": "prod"}));
    new.quorum = Some(Quorum { required, rejections_to_reject: 1 });
    new
}

fn batch() -> NewGate {
    let action = |id: &str| -> ProposedAction { serde_json::from_value(json!({"id": id, "name": "shell"})).unwrap() };
    let mut new = NewGate::new(GateSpec::Approval { action: "tool_calls".into() }, "Run these tool calls?");
    new.actions = vec![action("call_1"), action("call_2")];
    new
}

#[test]
fn a_second_decision_is_a_conflict_naming_the_first_reviewer() {
    let f = Fixture::new();
    let stale = f.open(NewGate::question("Which region?"));
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::respond("eu-west-1"), "alice").unwrap();
    let now = f.engine.now();
    let error = f.lose(stale.id.clone(), move |tx| {
        decide_gate(tx, stale, DecisionInput::respond("us-east-1"), "bob", DecisionOrigin::Human, now)
    });
    assert_names_winner(error, &won, GateStatus::Resolved, Some("alice"));
}

#[test]
fn expiry_after_a_decision_loses_and_the_sweep_passes_over_the_gate() {
    let f = Fixture::new();
    let stale = f.open(NewGate::question("Which region?"));
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::respond("eu-west-1"), "alice").unwrap();
    let now = f.engine.now();
    let mut expiring = stale.clone();
    let error =
        f.lose(stale.id.clone(), move |tx| close_pending(tx, &mut expiring, Closing::Expired("too late".into()), now));
    assert_names_winner(error, &won, GateStatus::Resolved, Some("alice"));
    // A sweep counts such a gate as someone else's, and goes on.
    let mut expiring = stale.clone();
    let skipped = f
        .engine
        .store()
        .write(move |tx| skip_if_closed(close_pending(tx, &mut expiring, Closing::Expired("too late".into()), now)))
        .unwrap();
    assert!(!skipped);
}

#[test]
fn a_decision_after_expiry_is_a_conflict_saying_it_expired() {
    let f = Fixture::new();
    let stale = f.open(NewGate::question("Which region?"));
    f.clock.advance(Duration::hours(25));
    assert_eq!(f.engine.sweep_expired().unwrap(), vec![stale.id.clone()]);
    let expired = f.engine.gate(&stale.id).unwrap();
    let now = f.engine.now();
    let error = f.lose(stale.id.clone(), move |tx| {
        decide_gate(tx, stale, DecisionInput::respond("eu-west-1"), "alice", DecisionOrigin::Human, now)
    });
    assert_names_winner(error, &expired, GateStatus::Expired, None);
}

#[test]
fn a_timeout_fallback_after_a_decision_is_a_conflict_naming_the_reviewer() {
    let f = Fixture::new();
    let stale = f.open(NewGate::approval("deploy", "Deploy?", json!({})));
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::reject("not today"), "alice").unwrap();
    let now = f.engine.now();
    let error = f.lose(stale.id.clone(), move |tx| {
        let input = DecisionInput::new(DecisionAction::Approve);
        decide_gate(tx, stale, input, "system", DecisionOrigin::System { reason: "no answer".into() }, now)
    });
    assert_names_winner(error, &won, GateStatus::Resolved, Some("alice"));
}

#[test]
fn a_vote_after_the_gate_was_cancelled_is_a_conflict_whether_or_not_it_would_decide() {
    for required in [1, 2] {
        let f = Fixture::new();
        let stale = f.open(quorum_gate(required));
        let cancelled = f.engine.cancel_gate(&stale.id, "plan changed", "coder").unwrap();
        let now = f.engine.now();
        let error =
            f.lose(stale.id.clone(), move |tx| vote(tx, stale, DecisionInput::approve(), "carol", now).map(drop));
        assert_names_winner(error, &cancelled, GateStatus::Cancelled, None);
    }
}

#[test]
fn a_cancellation_after_a_quorum_decided_is_a_conflict_naming_the_deciding_voter() {
    let f = Fixture::new();
    let stale = f.open(quorum_gate(1));
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::approve(), "dave").unwrap();
    assert_eq!(won.status, GateStatus::Resolved);
    let now = f.engine.now();
    let mut cancelling = stale.clone();
    let error = f.lose(stale.id.clone(), move |tx| {
        close_pending(tx, &mut cancelling, Closing::Cancelled("withdrawn".into()), now)
    });
    assert_names_winner(error, &won, GateStatus::Resolved, Some("dave"));
}

#[test]
fn deciding_actions_after_the_whole_gate_was_decided_is_a_conflict_naming_the_reviewer() {
    let f = Fixture::new();
    let stale = f.open(batch());
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::approve(), "alice").unwrap();
    assert_eq!(won.status, GateStatus::Resolved);
    let now = f.engine.now();
    // One action (the gate would stay pending), then both (it would resolve).
    for ids in [vec!["call_1"], vec!["call_1", "call_2"]] {
        let stale = stale.clone();
        let actions = ids
            .into_iter()
            .map(|id| ActionChoice {
                id: id.into(),
                action: DecisionAction::Reject,
                name: None,
                args: None,
                text: None,
            })
            .collect();
        let input = DecisionInput { actions, ..DecisionInput::new(DecisionAction::Reject) };
        let error = f.lose(stale.id.clone(), move |tx| {
            decide_actions(tx, stale, input, "bob", now).map(|a| matches!(a, Attempt::Done(_)))
        });
        assert_names_winner(error, &won, GateStatus::Resolved, Some("alice"));
    }
}

#[test]
fn a_decision_after_the_run_was_cancelled_is_a_conflict_saying_it_was_cancelled() {
    let f = Fixture::new();
    let stale = f.open(NewGate::question("Which region?"));
    f.engine.cancel_run(&stale.run_id, "coder", Some("abandoned")).unwrap();
    let withdrawn = f.engine.gate(&stale.id).unwrap();
    assert_eq!(withdrawn.status, GateStatus::Cancelled);
    let now = f.engine.now();
    let error = f.lose(stale.id.clone(), move |tx| {
        decide_gate(tx, stale, DecisionInput::respond("eu-west-1"), "alice", DecisionOrigin::Human, now)
    });
    assert_names_winner(error, &withdrawn, GateStatus::Cancelled, None);
}

#[test]
fn an_escalation_after_a_decision_is_a_conflict_naming_the_reviewer() {
    let f = Fixture::new();
    let stale = f.open(NewGate::question("Which region?"));
    let won = f.engine.resolve_gate(&stale.id, DecisionInput::respond("eu-west-1"), "alice").unwrap();
    let mut escalated = stale.clone();
    escalated.priority = crate::gate::Priority::Urgent;
    let error = f.lose(stale.id.clone(), move |tx| save_pending(tx, &escalated));
    assert_names_winner(error, &won, GateStatus::Resolved, Some("alice"));
}

#[test]
fn the_first_closing_wins_and_is_stored_whole() {
    let f = Fixture::new();
    let gate = f.open(NewGate::question("Which region?"));
    let now = f.engine.now();
    let mut closing = gate.clone();
    let closed = f
        .engine
        .store()
        .write(move |tx| close_pending(tx, &mut closing, Closing::Cancelled("withdrawn".into()), now).map(|()| closing))
        .unwrap();
    let stored = f.engine.gate(&gate.id).unwrap();
    assert_eq!(stored, closed);
    assert_eq!(stored.status, GateStatus::Cancelled);
    assert_eq!(stored.status_reason.as_deref(), Some("withdrawn"));
    assert_eq!(stored.closed_at, Some(now));
}
