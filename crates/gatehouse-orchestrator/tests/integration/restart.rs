//! Orchestrated runs survive a restart of Gatehouse: the process is killed
//! (its runtime dropped with every task in flight) and a new engine and
//! orchestrator open the same SQLite file. A run waiting at a gate is still
//! waiting at the same gate; a run interrupted mid-call makes the call
//! again; a run in collaboration resumes at its round.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::http::Method;
use common::{open, registry, until};
use gatehouse_engine::{DecisionInput, Engine, GateFilter, GateKind, GateStatus, NewRun, RunId, RunStatus};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{OpenAiProvider, Provider, ProviderKind};
use serde_json::{json, Value};

use crate::wire;

const CLEAR: &str = "Summarise the release notes for the beta in three sentences";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn pending(engine: &Engine, run: &RunId, kind: GateKind) -> Option<gatehouse_engine::Gate> {
    let filter = GateFilter { run_id: Some(run.clone()), kind: Some(kind), ..GateFilter::pending() };
    engine.gates(&filter).unwrap().into_iter().next()
}

/// Starts `input` in a process that is then killed once `stop` holds.
fn start_then_kill(
    path: &std::path::Path,
    extra: Vec<Arc<dyn Provider>>,
    input: Value,
    config: Value,
    stop: impl Fn(&Engine, &RunId) -> bool,
) -> RunId {
    let rt = runtime();
    let engine = open(path);
    let (reg, _) = registry(extra);
    let orch = Orchestrator::new(engine.clone(), reg);
    let template: NewRun = serde_json::from_value(config).unwrap();
    let run = rt.block_on(orch.start(&input, template, "alice")).unwrap();
    let reached = rt.block_on(until(&engine, |e| Ok(stop(e, &run.id).then_some(()))));
    assert!(reached.is_some(), "{:#?}", common::history(&engine, &run.id));
    rt.shutdown_background();
    run.id
}

/// Opens the file again, as a restarted Gatehouse: returns the engine and the runs taken up.
fn restart(
    rt: &tokio::runtime::Runtime,
    path: &std::path::Path,
    extra: Vec<Arc<dyn Provider>>,
) -> (Engine, Vec<RunId>) {
    let engine = open(path);
    let (reg, _) = registry(extra);
    let orch = Orchestrator::new(engine.clone(), reg);
    let resumed = rt.block_on(orch.resume_all()).unwrap();
    (engine, resumed)
}

fn wait_status(rt: &tokio::runtime::Runtime, engine: &Engine, run: &RunId, status: RunStatus) {
    let found = rt.block_on(until(engine, |e| Ok(Some(e.run(run)?).filter(|r| r.status == status))));
    assert!(found.is_some(), "{:#?}", common::history(engine, run));
}

#[test]
fn a_run_waiting_at_a_gate_waits_at_the_same_gate_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let input = json!({"tool": "scripted:chat", "prompt": CLEAR});
    let run =
        start_then_kill(&path, Vec::new(), input, json!({}), |e, r| pending(e, r, GateKind::PayloadReview).is_some());

    let rt = runtime();
    let (engine, resumed) = restart(&rt, &path, Vec::new());
    assert_eq!(resumed, std::slice::from_ref(&run));
    std::thread::sleep(Duration::from_millis(300));
    let all = engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
    assert_eq!(all.len(), 1, "no second gate: {all:#?}");
    let gate = pending(&engine, &run, GateKind::PayloadReview).expect("still waiting");
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let response = rt.block_on(until(&engine, |e| Ok(pending(e, &run, GateKind::ResponseReview)))).unwrap();
    engine.resolve_gate(&response.id, DecisionInput::approve(), "alice").unwrap();
    wait_status(&rt, &engine, &run, RunStatus::Completed);
    // Each step is on the timeline once.
    let steps: Vec<String> =
        engine.turns(&run).unwrap().iter().filter_map(|t| t.metadata["step"].as_str().map(str::to_owned)).collect();
    assert_eq!(steps, ["information", "payload", "payload_review", "call", "response_review"]);
    rt.shutdown_background();
}

#[test]
fn a_run_interrupted_mid_call_makes_the_call_again() {
    // The provider lives in its own runtime, like a server elsewhere: the
    // first answer comes too late (the process dies first), the second at once.
    let server_rt = runtime();
    let reply = |text: &str| {
        wire::Reply::json(
            200,
            json!({"id": "c1", "model": "test-model", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
        )
    };
    let server = server_rt.block_on(wire::MockProvider::start(vec![(
        Method::POST,
        "/v1/chat/completions",
        vec![reply("too late").after(Duration::from_secs(30)), reply("The beta ships Friday.")],
    )]));
    let provider = || -> Vec<Arc<dyn Provider>> {
        vec![Arc::new(OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap())]
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let input = json!({"tool": "openai:test-model", "prompt": CLEAR});
    let policy = json!({"hitl_config": {"run_policy": "auto"}});
    let run = start_then_kill(&path, provider(), input, policy, |_, _| {
        server.count(Method::POST, "/v1/chat/completions") == 1
    });

    let rt = runtime();
    let (engine, _) = restart(&rt, &path, provider());
    wait_status(&rt, &engine, &run, RunStatus::Completed);
    assert_eq!(server.count(Method::POST, "/v1/chat/completions"), 2);
    let result = engine.run(&run).unwrap().result.unwrap();
    assert_eq!(result["text"], "The beta ships Friday.");
    let gates = engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
    assert_eq!(gates.iter().filter(|g| g.kind() == GateKind::PayloadReview).count(), 1);
    assert!(gates.iter().all(|g| g.status == GateStatus::Resolved));
    rt.shutdown_background();
    server_rt.shutdown_background();
}

#[test]
fn a_collaboration_resumes_at_its_round() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": true});
    let run = start_then_kill(&path, Vec::new(), input, json!({}), |e, r| {
        if let Some(goal) = pending(e, r, GateKind::GoalReview) {
            let refine = DecisionInput {
                text: Some("for the EU only".into()),
                ..DecisionInput::new(gatehouse_engine::DecisionAction::NeedsRevision)
            };
            if matches!(goal.spec, gatehouse_engine::GateSpec::GoalReview { round: 1, .. }) {
                e.resolve_gate(&goal.id, refine, "alice").unwrap();
                return false;
            }
            return true;
        }
        false
    });

    let rt = runtime();
    let (engine, _) = restart(&rt, &path, Vec::new());
    std::thread::sleep(Duration::from_millis(300));
    let goal = pending(&engine, &run, GateKind::GoalReview).expect("round 2 still waits");
    assert!(matches!(goal.spec, gatehouse_engine::GateSpec::GoalReview { round: 2, .. }), "{:?}", goal.spec);
    let all = engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
    assert_eq!(all.len(), 2);
    engine.resolve_gate(&goal.id, DecisionInput::approve(), "alice").unwrap();
    let plan = rt.block_on(until(&engine, |e| Ok(pending(e, &run, GateKind::PlanReview)))).unwrap();
    engine.resolve_gate(&plan.id, DecisionInput::approve(), "alice").unwrap();
    wait_status(&rt, &engine, &run, RunStatus::Completed);
    rt.shutdown_background();
}
