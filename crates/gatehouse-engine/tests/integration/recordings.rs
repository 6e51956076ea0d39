//! Recordings: export, import into another database, export again gives
//! the same recording (a property over random workloads); replay walks
//! the events in order; malformed recordings are refused whole.

use crate::common;

use common::Fixture;
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::event::EventKind;
use gatehouse_engine::plan::{PlanOperation, TaskPriority};
use gatehouse_engine::recording::{Recording, RecordingScope, Replay, IMPORTED_UNDECIDED};
use gatehouse_engine::{
    DecisionInput, EngineError, GateFilter, GateStatus, NewGate, NewRun, NewTurn, Role, RunFilter, RunId, RunStatus,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Op {
    NewRun { session: u8 },
    Question { run: u8, text: String },
    Approval { run: u8, n: i64 },
    Resolve { gate: u8, how: u8 },
    Turn { run: u8, human: bool },
    Context { run: u8, key: u8, value: Option<i64> },
    PlanTask { run: u8 },
    End { run: u8, complete: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..3).prop_map(|session| Op::NewRun { session }),
        (any::<u8>(), "[a-zA-Z ?]{1,30}").prop_map(|(run, text)| Op::Question { run, text }),
        (any::<u8>(), any::<i64>()).prop_map(|(run, n)| Op::Approval { run, n }),
        (any::<u8>(), 0u8..4).prop_map(|(gate, how)| Op::Resolve { gate, how }),
        (any::<u8>(), any::<bool>()).prop_map(|(run, human)| Op::Turn { run, human }),
        (any::<u8>(), 0u8..3, proptest::option::of(any::<i64>())).prop_map(|(run, key, value)| Op::Context {
            run,
            key,
            value
        }),
        any::<u8>().prop_map(|run| Op::PlanTask { run }),
        (any::<u8>(), any::<bool>()).prop_map(|(run, complete)| Op::End { run, complete }),
    ]
}

/// Applies a workload, ignoring operations the rules refuse (they are
/// part of what is being exercised, not failures of the test).
fn apply(f: &Fixture, ops: &[Op]) {
    let e = &f.engine;
    let mut runs: Vec<RunId> = Vec::new();
    let pick = |runs: &Vec<RunId>, i: u8| (!runs.is_empty()).then(|| runs[i as usize % runs.len()].clone());
    for op in ops {
        f.clock.advance(chrono::Duration::milliseconds(1500));
        match op {
            Op::NewRun { session } => {
                let new =
                    NewRun { agent: "prop-agent".into(), session_id: Some(format!("s{session}")), ..NewRun::default() };
                runs.push(e.create_run(new, "prop-agent").unwrap().id);
            }
            Op::Question { run, text } => {
                if let Some(r) = pick(&runs, *run) {
                    let _ = e.open_gate(&r, NewGate::question(text.clone()), "prop-agent");
                }
            }
            Op::Approval { run, n } => {
                if let Some(r) = pick(&runs, *run) {
                    let mut g = NewGate::approval("act", "Approve?", json!({"n": n, "token": "tok"}));
                    g.example_input = Some(json!({"n": 0}));
                    let _ = e.open_gate(&r, g, "prop-agent");
                }
            }
            Op::Resolve { gate, how } => {
                let pending = e.gates(&GateFilter::pending()).unwrap();
                if let Some(g) = pending.get(*gate as usize % pending.len().max(1)) {
                    let input = match (g.allowed_actions.contains(&DecisionAction::Approve), how) {
                        (true, 0) => DecisionInput::approve(),
                        (true, 1) => DecisionInput::edit(json!({"n": *how, "edited": true})),
                        (true, _) => DecisionInput::reject("no"),
                        (false, _) => DecisionInput::respond(format!("answer {how}")),
                    };
                    let _ = e.resolve_gate(&g.id, input, "reviewer");
                }
            }
            Op::Turn { run, human } => {
                if let Some(r) = pick(&runs, *run) {
                    let role = if *human { Role::Human } else { Role::Agent };
                    let _ = e.add_turn(&r, NewTurn::new(role, "said something"), "prop-agent");
                }
            }
            Op::Context { run, key, value } => {
                if let Some(r) = pick(&runs, *run) {
                    let key = format!("k{key}");
                    let _ = match value {
                        Some(v) => e.context_set(&r, &key, json!(v), "prop-agent").map(|_| ()),
                        None => e.context_delete(&r, &key, "prop-agent").map(|_| ()),
                    };
                }
            }
            Op::PlanTask { run } => {
                if let Some(r) = pick(&runs, *run) {
                    let add = PlanOperation::AddTask {
                        description: "do a thing".into(),
                        priority: TaskPriority::High,
                        dependencies: vec![],
                        task_id: None,
                        assigned_agent: Some("coder".into()),
                        estimated_duration: Some("5m".into()),
                    };
                    let _ = e.plan_apply(&r, add, "prop-agent");
                }
            }
            Op::End { run, complete } => {
                if let Some(r) = pick(&runs, *run) {
                    let _ = if *complete {
                        e.complete_run(&r, "prop-agent", Some(json!({"ok": true})))
                    } else {
                        e.cancel_run(&r, "alice", Some("stop"))
                    };
                }
            }
        }
    }
}

fn same_content(a: &Recording, b: &Recording) -> bool {
    Recording { exported_at: b.exported_at, anchor: b.anchor.clone(), ..a.clone() } == as_recorded(b)
}

/// `imported` as the recording it came from had it: without the import's
/// marks, its gates left pending still pending, and without the events
/// that closed them on import.
fn as_recorded(imported: &Recording) -> Recording {
    let mut rec = imported.clone();
    for record in &mut rec.runs {
        record.run.imported = None;
        for gate in &mut record.gates {
            gate.imported = None;
            if gate.status_reason.as_deref() == Some(IMPORTED_UNDECIDED) {
                (gate.status, gate.status_reason, gate.closed_at) = (GateStatus::Pending, None, None);
            }
        }
    }
    rec.events.retain(|e| !matches!(&e.kind, EventKind::GateCancelled { reason, .. } if reason == IMPORTED_UNDECIDED));
    rec
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn export_then_import_then_export_gives_the_same_recording(ops in proptest::collection::vec(op(), 1..40)) {
        let source = Fixture::new();
        apply(&source, &ops);
        let first = source.engine.export(RecordingScope::All).unwrap();
        let created = ops.iter().filter(|o| matches!(o, Op::NewRun { .. })).count();
        prop_assert_eq!(first.runs.len(), created);
        prop_assert!(first.events.len() >= created);
        let target = Fixture::new();
        target.engine.import(first.clone(), "importer").unwrap();
        let second = target.engine.export(RecordingScope::All).unwrap();
        prop_assert!(same_content(&first, &second), "recordings differ:\n{:#?}\nvs\n{:#?}", first, second);
        prop_assert!(target.engine.verify_audit().unwrap().is_intact());
    }
}

#[test]
fn a_run_recording_replays_its_events_in_order_to_the_final_state() {
    let f = Fixture::new();
    let run = f
        .engine
        .create_run(NewRun { agent: "a".into(), session_id: Some("sess-456".into()), ..NewRun::default() }, "a")
        .unwrap();
    let g = f.engine.open_gate(&run.id, NewGate::question("Which region?"), "a").unwrap();
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "working"), "a").unwrap();
    f.engine.resolve_gate(&g.id, DecisionInput::respond("eu-west-1"), "alice").unwrap();
    f.engine.complete_run(&run.id, "a", None).unwrap();

    let rec = f.engine.export(RecordingScope::Session { session_id: "sess-456".into() }).unwrap();
    assert_eq!(rec.runs.len(), 1);
    let json = serde_json::to_string(&rec).unwrap();
    let back: Recording = serde_json::from_str(&json).unwrap();
    let mut replay = Replay::new(&back);
    let mut types = Vec::new();
    while let Some(e) = replay.step() {
        types.push(e.kind.name());
    }
    assert_eq!(types.first(), Some(&"run_created"));
    assert!(types.contains(&"gate_resolved"));
    assert_eq!(replay.state().runs.get(&run.id), Some(&RunStatus::Completed));
    assert_eq!(replay.state().gates.get(&g.id), Some(&GateStatus::Resolved));
    assert_eq!((replay.state().turns, replay.state().decisions), (1, 1));
}

#[test]
fn an_imported_run_is_history_marked_imported_and_its_pending_gates_never_block() {
    let source = Fixture::new();
    let run = source.run("a");
    let asked = source.engine.open_gate(&run.id, NewGate::question("Colour?"), "a").unwrap();
    let decided = source.engine.open_gate(&run.id, NewGate::question("Size?"), "a").unwrap();
    source.engine.resolve_gate(&decided.id, DecisionInput::respond("large"), "alice").unwrap();
    let rec = source.engine.export(RecordingScope::Run { run_id: run.id.clone() }).unwrap();

    let target = Fixture::new();
    target.clock.advance(chrono::Duration::hours(1));
    target.engine.import(rec, "bob").unwrap();
    assert!(target.engine.gates(&GateFilter::pending()).unwrap().is_empty(), "no live blocker came in");
    let here = target.engine.run(&run.id).unwrap();
    let mark = here.imported.clone().expect("the run is marked imported");
    assert_eq!((mark.by.as_str(), mark.at), ("bob", target.engine.now()));
    let was_pending = target.engine.gate(&asked.id).unwrap();
    assert_eq!(was_pending.status, GateStatus::Cancelled);
    assert_eq!(was_pending.status_reason.as_deref(), Some(IMPORTED_UNDECIDED));
    assert_eq!(was_pending.imported.as_ref(), Some(&mark));
    let kept = target.engine.gate(&decided.id).unwrap();
    assert_eq!((kept.status, kept.imported.as_ref()), (GateStatus::Resolved, Some(&mark)));
    assert_eq!(kept.decision.map(|d| d.decided_by), Some("alice".into()));
    assert!(target.engine.verify_audit().unwrap().is_intact(), "the marks and closings are in the log");
}

#[test]
fn an_imported_run_keeps_its_recorded_status_but_is_never_live_here() {
    let source = Fixture::new();
    let waiting = source.run("deployer");
    source.engine.open_gate(&waiting.id, NewGate::question("Go?"), "deployer").unwrap();
    let working = source.run("planner");
    source.engine.add_turn(&working.id, NewTurn::new(Role::Agent, "step 1"), "planner").unwrap();
    let target = Fixture::new();
    target.engine.import(source.engine.export(RecordingScope::All).unwrap(), "bob").unwrap();
    let here = target.run("local");

    // The status is the recorded one, but no live filter finds it.
    assert_eq!(target.engine.run(&waiting.id).unwrap().status, RunStatus::AwaitingHuman);
    let live = RunFilter { statuses: RunStatus::LIVE.to_vec(), ..RunFilter::default() };
    let found: Vec<RunId> = target.engine.runs(&live).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(found, vec![here.id.clone()], "only the local run is live");
    let awaiting = RunFilter { statuses: vec![RunStatus::AwaitingHuman], ..RunFilter::default() };
    assert!(target.engine.runs(&awaiting).unwrap().is_empty());
    assert_eq!(target.engine.runs(&RunFilter::default()).unwrap().len(), 3, "history is still listed");

    // Nothing resumes, steers or adds to it.
    for err in [
        target.engine.pause_run(&waiting.id, "alice").unwrap_err(),
        target.engine.cancel_run(&waiting.id, "alice", None).unwrap_err(),
        target.engine.complete_run(&working.id, "planner", None).unwrap_err(),
        target.engine.add_turn(&working.id, NewTurn::new(Role::Agent, "step 2"), "planner").unwrap_err(),
        target.engine.open_gate(&working.id, NewGate::question("Again?"), "planner").unwrap_err(),
    ] {
        assert!(matches!(err, EngineError::RunImported { .. }), "{err:?}");
        assert_eq!(err.code(), gatehouse_engine::error::ErrorCode::Conflict);
    }

    // The sweeps pass it over: an active imported run is not abandoned here.
    target.clock.advance(chrono::Duration::days(3));
    let swept = target.engine.sweep_abandoned_runs(chrono::Duration::hours(1), &[]).unwrap();
    assert_eq!(swept, vec![here.id], "only the local run was abandoned");
    assert_eq!(target.engine.run(&working.id).unwrap().status, RunStatus::Active);
    assert!(target.engine.verify_audit().unwrap().is_intact());
}

#[test]
fn importing_a_run_that_already_exists_is_refused_and_changes_nothing() {
    let f = Fixture::new();
    let run = f.run("a");
    f.engine.open_gate(&run.id, NewGate::question("?"), "a").unwrap();
    let rec = f.engine.export(RecordingScope::Run { run_id: run.id.clone() }).unwrap();
    let head = f.engine.head_seq().unwrap();
    let err = f.engine.import(rec.clone(), "x").unwrap_err();
    assert!(matches!(err, EngineError::Recording(ref m) if m.contains("already exists")), "{err}");
    assert_eq!(f.engine.head_seq().unwrap(), head);

    let mut wrong = rec;
    wrong.version = 99;
    let err = Fixture::new().engine.import(wrong, "x").unwrap_err();
    assert!(err.to_string().contains("version 99 is not supported"), "{err}");
}
