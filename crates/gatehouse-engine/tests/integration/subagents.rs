//! Sub-agents: a run may name the run its agent was started from. The
//! chain of agents is known for every gate, pausing a parent pauses its
//! sub-agents' runs (and resuming brings back only those it paused),
//! cancelling a parent cancels them and withdraws their gates.

use crate::common;

use common::Fixture;
use gatehouse_engine::{GateStatus, NewGate, NewRun, Run, RunStatus};

fn child(f: &Fixture, parent: &Run, agent: &str) -> Run {
    f.run_with(NewRun {
        agent: agent.into(),
        title: format!("{agent} under {}", parent.agent),
        parent_run_id: Some(parent.id.clone()),
        ..NewRun::default()
    })
}

#[test]
fn a_sub_agents_gate_knows_its_chain_of_agents() {
    let f = Fixture::new();
    let planner = f.run("planner");
    let coder = child(&f, &planner, "coder");
    let tester = child(&f, &coder, "tester");
    let chain: Vec<String> = f.engine.run_chain(&tester.id).unwrap().into_iter().map(|r| r.agent).collect();
    assert_eq!(chain, ["planner", "coder", "tester"]);
    assert_eq!(f.engine.run_chain(&planner.id).unwrap().len(), 1);
    let children: Vec<String> = f.engine.child_runs(&planner.id).unwrap().into_iter().map(|r| r.agent).collect();
    assert_eq!(children, ["coder"]);
    assert_eq!(f.engine.run(&tester.id).unwrap().parent_run_id, Some(coder.id));
    // Each gate carries the chain that led to it, for the panel.
    let asked = f.engine.open_gate(&tester.id, NewGate::question("Run the slow suite?"), "tester").unwrap();
    assert_eq!(asked.agent_chain, ["planner", "coder", "tester"]);
    let top = f.engine.open_gate(&planner.id, NewGate::question("Which goal?"), "planner").unwrap();
    assert!(top.agent_chain.is_empty(), "a run without a parent has no chain");
}

#[test]
fn pausing_a_parent_pauses_its_sub_agents_and_resuming_brings_back_only_those() {
    let f = Fixture::new();
    let planner = f.run("planner");
    let coder = child(&f, &planner, "coder");
    let writer = child(&f, &planner, "writer");
    let tester = child(&f, &coder, "tester");
    for run in [&planner, &coder, &writer, &tester] {
        f.engine.start_run(&run.id, &run.agent).unwrap();
    }
    // The writer was paused by a reviewer on its own, before.
    f.engine.pause_run(&writer.id, "alice").unwrap();

    f.engine.pause_run(&planner.id, "alice").unwrap();
    for run in [&coder, &tester] {
        let now = f.engine.run(&run.id).unwrap();
        assert_eq!(now.status, RunStatus::Paused, "{}", run.agent);
    }
    let tester_now = f.engine.run(&tester.id).unwrap();
    assert_eq!(tester_now.status_reason, Some(format!("paused with its parent run {}", planner.id)));

    f.engine.resume_run(&planner.id, "alice").unwrap();
    assert_eq!(f.engine.run(&coder.id).unwrap().status, RunStatus::Active);
    assert_eq!(f.engine.run(&tester.id).unwrap().status, RunStatus::Active);
    assert_eq!(f.engine.run(&writer.id).unwrap().status, RunStatus::Paused, "paused on its own: stays paused");
}

#[test]
fn cancelling_a_parent_cancels_its_sub_agents_and_withdraws_their_gates() {
    let f = Fixture::new();
    let planner = f.run("planner");
    let coder = child(&f, &planner, "coder");
    let gate = f.engine.open_gate(&coder.id, NewGate::question("Which branch?"), "coder").unwrap();
    f.engine.cancel_run(&planner.id, "alice", Some("wrong goal")).unwrap();
    let coder_now = f.engine.run(&coder.id).unwrap();
    assert_eq!(coder_now.status, RunStatus::Cancelled);
    assert_eq!(coder_now.status_reason, Some(format!("cancelled with its parent run {}", planner.id)));
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Cancelled);
}

#[test]
fn a_sub_agent_needs_a_live_parent() {
    let f = Fixture::new();
    let done = f.run("planner");
    f.engine.cancel_run(&done.id, "alice", None).unwrap();
    let err = |parent| {
        f.engine
            .create_run(NewRun { agent: "coder".into(), parent_run_id: Some(parent), ..NewRun::default() }, "coder")
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(done.id.clone()),
        format!("parent_run_id: run {} is cancelled: a sub-agent cannot start from it", done.id)
    );
    assert_eq!(err(gatehouse_engine::RunId::from_string("run_nope")), "parent_run_id: no run with id `run_nope`");
}
