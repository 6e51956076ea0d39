//! Parallel work, dynamic teams and restarting a task in team runs: a lead
//! hands researchers their topics as sub-runs and waits at the sync point;
//! pausing and cancelling the run reaches its branches; a run killed
//! mid-parallel starts no branch twice; agents create and dissolve
//! sub-teams within their limits; a reviewer sends an agent back to redo
//! its turn.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{calls, member, open, paused, prompts, registry, runtime, steps, until, Harness};
use gatehouse_engine::{DecisionInput, Engine, GateKind, NewRun, Run, RunStatus, StepMode};
use gatehouse_orchestrator::team::parallel::groups;
use gatehouse_orchestrator::team::restart::RestartTask;
use gatehouse_orchestrator::team::view::{team_of, team_view};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{PayloadShape, Provider, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

/// The parallel research sweep: a lead and three researchers.
fn sweep() -> Value {
    json!({"prompt": "Caching for the search API", "team": [
        member("lead", "lead", &["parallel_handoff"]),
        member("ana", "researcher", &[]),
        member("ben", "researcher", &[]),
        member("cy", "researcher", &[]),
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_hands_three_researchers_their_topics_in_parallel_and_sums_up_under_review() {
    let h = Harness::new();
    let run = h.start(sweep(), json!({})).await;
    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(gate.text.contains("answer from **lead**"), "{}", gate.text);
    let shown = serde_json::to_string(&gate.payload).unwrap();
    assert!(shown.contains("3 researchers reported"), "{shown}");

    // Three sub-runs of the run, one per researcher, each answered once without a gate of its own.
    let children = h.engine.child_runs(&run.id).unwrap();
    let mut agents: Vec<String> = children
        .iter()
        .map(|c| c.input["branch"]["index"].to_string() + &c.input["team"]["agents"][0]["name"].to_string())
        .collect();
    agents.sort();
    assert_eq!(agents, ["0\"ana\"", "1\"ben\"", "2\"cy\""]);
    for child in &children {
        assert_eq!(child.status, RunStatus::Completed, "{:#?}", h.history(&child.id));
        assert_eq!(child.parent_run_id.as_ref(), Some(&run.id));
        assert!(child.result.as_ref().unwrap()["text"].as_str().unwrap().starts_with("Findings on "));
        assert!(h.gates(&child.id).is_empty(), "a branch's answer goes to the lead, not to a gate");
    }
    assert_eq!(children[0].input["prompt"], "prior work for Caching for the search API");

    // The sync point journals every branch; the view shows them with their status.
    let turns = h.turns(&run.id);
    let synced = steps(&turns, "sync_point");
    assert_eq!(synced.len(), 1);
    assert_eq!(synced[0]["parallel_sync"]["branches"].as_array().unwrap().len(), 3);
    let shown = groups(&turns, &children);
    assert_eq!(shown.len(), 1);
    assert!(shown[0].synced);
    assert_eq!((shown[0].lead.as_str(), shown[0].strategy.as_str()), ("lead", "wait_all"));
    assert!(shown[0].branches.iter().all(|b| b.status == "completed"), "{:?}", shown[0].branches);
    let view = team_view(&h.engine.run(&run.id).unwrap(), &turns, &Default::default(), &[]).unwrap();
    assert_eq!(view.parallel.len(), 1);

    h.decide(&gate, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["agent"], "lead");
    assert_eq!(h.scripted.calls().len(), 5, "the lead twice, each researcher once");
}

/// A provider answering each call with `steps` in order, for one agent named `lead`.
fn lead_script(name: &str, steps: Vec<Step>) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new(name).with_tool(
        Tool::new(format!("{name}:agent"), "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        steps,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parallel_handoff_that_does_not_hold_together_is_answered_to_the_agent() {
    let script = lead_script(
        "script",
        vec![
            calls(
                "Trying.",
                vec![
                    ("parallel_handoff", json!({"agents": ["ana", "zed"], "tasks": ["a", "b"]})),
                    ("parallel_handoff", json!({"agents": ["ana", "ben"], "tasks": ["a"]})),
                    ("parallel_handoff", json!({"agents": ["ana"], "tasks": ["a"], "coordination_strategy": "vote"})),
                    ("parallel_handoff", json!({"agents": ["lead"], "tasks": ["a"]})),
                ],
            ),
            calls(
                "First one.",
                vec![(
                    "parallel_handoff",
                    json!({"agents": ["ana", "ben"], "tasks": ["x", "y"],
                "coordination_strategy": "first_answer"}),
                )],
            ),
            Step::Reply("Done.".into()),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Look", "team": [
        {"name": "lead", "role": "planner", "provider": "script", "model": "agent", "tools": ["parallel_handoff"]},
        member("ana", "researcher", &[]),
        member("ben", "researcher", &[]),
    ]});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    h.status(&run.id, RunStatus::Completed).await;

    let sent = prompts(&script);
    assert_eq!(sent.len(), 3);
    for expected in [
        "`agents[1]`: there is no agent `zed`; the agents are lead, ana, ben",
        "`tasks` has 1 entries for 2 agents; give one task per agent",
        "`coordination_strategy`: `vote` is not supported; the strategies are wait_all, first_answer",
        "`agents[0]`: you coordinate the branches",
    ] {
        assert!(sent[1].contains(expected), "{expected} in {}", sent[1]);
    }
    assert!(h.engine.child_runs(&run.id).unwrap().len() == 2, "only the valid call started branches");
    // first_answer: passed at the first completed branch; any other is completed or cancelled.
    assert!(sent[2].contains("parallel_handoff (first_answer)"), "{}", sent[2]);
    let statuses: Vec<RunStatus> = h.engine.child_runs(&run.id).unwrap().iter().map(|r| r.status).collect();
    assert!(statuses.contains(&RunStatus::Completed), "{statuses:?}");
    assert!(statuses.iter().all(|s| matches!(s, RunStatus::Completed | RunStatus::Cancelled)), "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_may_hand_off_in_parallel_once_more_and_no_deeper() {
    // Each waits at its sync point, so the one script is read in order: lead, mid, leaf, leaf, mid, lead.
    let script = lead_script(
        "script",
        vec![
            calls("Over to mid.", vec![("parallel_handoff", json!({"agents": ["mid"], "tasks": ["split it"]}))]),
            calls("Over to leaf.", vec![("parallel_handoff", json!({"agents": ["leaf"], "tasks": ["a piece"]}))]),
            calls("Deeper?", vec![("parallel_handoff", json!({"agents": ["mid"], "tasks": ["more"]}))]),
            Step::Reply("Leaf done.".into()),
            Step::Reply("Mid done.".into()),
            Step::Reply("Lead done.".into()),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let agent =
        |n: &str| json!({"name": n, "role": n, "provider": "script", "model": "agent", "tools": ["parallel_handoff"]});
    let input = json!({"prompt": "Nest", "team": [agent("lead"), agent("mid"), agent("leaf")]});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "Lead done.");

    let sent = prompts(&script);
    assert_eq!(sent.len(), 6);
    assert!(sent[3].contains("parallel handoffs nest at most 2 deep; this branch is 2 deep"), "{}", sent[3]);
    let mid = &h.engine.child_runs(&run.id).unwrap()[0];
    assert_eq!(mid.input["branch"]["depth"], 1);
    let leaf = &h.engine.child_runs(&mid.id).unwrap()[0];
    assert_eq!(
        (leaf.input["branch"]["depth"].as_u64(), leaf.result.as_ref().unwrap()["text"].as_str()),
        (Some(2), Some("Leaf done."))
    );
    assert!(h.engine.child_runs(&leaf.id).unwrap().is_empty(), "no third level");
    assert!(sent[5].contains("mid on `split it`: completed: Mid done."), "{}", sent[5]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_and_cancelling_the_run_reaches_its_branches() {
    use axum::http::Method;
    use gatehouse_providers::{OpenAiProvider, ProviderKind};

    use crate::wire::{MockProvider, Reply};

    // The researchers' model takes far longer than the test: the branches stay in their calls.
    let slow = (0..6).map(|_| Reply::json(200, json!({})).after(Duration::from_secs(60))).collect();
    let server = MockProvider::start(vec![(Method::POST, "/v1/chat/completions", slow)]).await;
    let provider = OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap();
    let script = lead_script(
        "script",
        vec![calls("Go.", vec![("parallel_handoff", json!({"agents": ["ana", "ben"], "tasks": ["x", "y"]}))])],
    );
    let h = Harness::with(vec![Arc::new(provider) as Arc<dyn Provider>, script as Arc<dyn Provider>]);
    let researcher = |n: &str| json!({"name": n, "role": "researcher", "provider": "openai", "model": "test-model"});
    let input = json!({"prompt": "Look", "team": [
        {"name": "lead", "role": "planner", "provider": "script", "model": "agent", "tools": ["parallel_handoff"]},
        researcher("ana"), researcher("ben"),
    ]});
    let run = h.start(input, json!({})).await;
    let live = |e: &Engine, status: RunStatus| -> gatehouse_engine::Result<Option<Vec<Run>>> {
        let children = e.child_runs(&run.id)?;
        Ok((children.len() == 2 && children.iter().all(|c| c.status == status)).then_some(children))
    };
    let started = h.until(|e| live(e, RunStatus::Active)).await;
    assert!(started.is_some(), "{:#?}", h.history(&run.id));

    h.engine.pause_run(&run.id, "alice").unwrap();
    let paused = live(&h.engine, RunStatus::Paused).unwrap().expect("both branches paused with the run");
    assert!(paused[0].status_reason.as_deref().unwrap().starts_with("paused with its parent run"));
    h.engine.resume_run(&run.id, "alice").unwrap();
    assert!(live(&h.engine, RunStatus::Active).unwrap().is_some(), "both resumed with the run");

    h.engine.cancel_run(&run.id, "alice", Some("enough")).unwrap();
    assert!(live(&h.engine, RunStatus::Cancelled).unwrap().is_some());
    let turns = h.turns(&run.id);
    assert!(steps(&turns, "sync_point").is_empty(), "the sync point was never passed");
}

#[test]
fn a_team_run_killed_mid_parallel_starts_no_branch_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    // Paused once the branches are started, before the sync point: killed there.
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "parallel_branches"}]});
    let run = {
        let rt = runtime();
        let engine = open(&path);
        let (reg, _) = registry(Vec::new());
        let orch = Orchestrator::new(engine.clone(), reg);
        let template: NewRun = serde_json::from_value(config).unwrap();
        let run = rt.block_on(orch.start(&sweep(), template, "alice")).unwrap();
        let reached = rt.block_on(until(&engine, |e| Ok(paused(e, &run.id).then_some(()))));
        assert!(reached.is_some(), "{:#?}", common::history(&engine, &run.id));
        assert_eq!(engine.child_runs(&run.id).unwrap().len(), 3);
        rt.shutdown_background();
        run.id
    };

    let rt = runtime();
    let engine = open(&path);
    let (reg, scripted) = registry(Vec::new());
    let orch = Orchestrator::new(engine.clone(), reg);
    rt.block_on(orch.resume_all()).unwrap();
    engine.set_run_control(&run, StepMode::Continuous, Vec::new(), "alice").unwrap();
    engine.resume_run(&run, "alice").unwrap();
    let gate = rt.block_on(until(&engine, |e| {
        let filter = gatehouse_engine::GateFilter {
            run_id: Some(run.clone()),
            kind: Some(GateKind::ResponseReview),
            ..gatehouse_engine::GateFilter::pending()
        };
        Ok(e.gates(&filter)?.into_iter().next())
    }));
    let gate = gate.unwrap_or_else(|| panic!("{:#?}", common::history(&engine, &run)));
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let done = rt.block_on(until(&engine, |e| Ok(Some(e.run(&run)?).filter(|r| r.status == RunStatus::Completed))));
    assert!(done.is_some(), "{:#?}", common::history(&engine, &run));

    let children = engine.child_runs(&run).unwrap();
    assert_eq!(children.len(), 3, "no branch was started twice");
    for child in &children {
        assert_eq!(child.status, RunStatus::Completed);
        assert_eq!(steps(&engine.turns(&child.id).unwrap(), "agent_turn").len(), 1, "each branch answered once");
    }
    let turns = engine.turns(&run).unwrap();
    assert_eq!(steps(&turns, "parallel_branches").len(), 1);
    assert_eq!(steps(&turns, "sync_point").len(), 1);
    let lead_calls = prompts(&scripted).iter().filter(|p| p.contains("You are `lead`")).count();
    assert_eq!(lead_calls, 1, "after the restart the lead was asked only for its summary");
    rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_create_modify_and_dissolve_sub_teams_within_their_limits_on_the_record() {
    let bad = json!({"name": "x", "role": "researcher", "provider": "nobody", "model": "chat"});
    let script = lead_script(
        "script",
        vec![
            calls(
                "Forming a team.",
                vec![
                    ("create_team", json!({"team_name": "sweep", "agents": [bad], "purpose": "research"})),
                    (
                        "create_team",
                        json!({"team_name": "sweep", "agents": [member("r1", "researcher", &[]),
                        member("r2", "researcher", &[])], "purpose": "research"}),
                    ),
                    ("modify_team", json!({"team_name": "sweep", "remove_agents": ["keeper"]})),
                    ("modify_team", json!({"team_name": "sweep", "remove_agents": ["r2"]})),
                ],
            ),
            calls("Done with it.", vec![("dissolve_team", json!({"team_name": "sweep", "reason": "answered"}))]),
            Step::Reply("Done.".into()),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Organise", "team": [
        {"name": "lead", "role": "planner", "provider": "script", "model": "agent",
         "tools": ["create_team", "modify_team", "dissolve_team"]},
        member("keeper", "reviewer-required", &[]),
    ]});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    h.status(&run.id, RunStatus::Completed).await;

    let sent = prompts(&script);
    assert_eq!(sent.len(), 3);
    assert!(sent[1].contains("create_team refused: `agents[0].provider`: no provider named `nobody`"), "{}", sent[1]);
    assert!(sent[1].contains("created sub-team `sweep` with r1 (researcher), r2 (researcher)"), "{}", sent[1]);
    assert!(sent[1].contains("`remove_agents[0]`: `keeper` is not in sub-team `sweep`"), "{}", sent[1]);
    assert!(sent[1].contains("sub-team `sweep` now has r1"), "{}", sent[1]);
    assert!(sent[1].contains("- r1 (researcher)") || sent[2].contains("- r1 (researcher)"));
    assert!(sent[2].contains("dissolved sub-team `sweep`"), "{}", sent[2]);

    // The view: the team as it is, and who changed it.
    let run = h.engine.run(&run.id).unwrap();
    let turns = h.turns(&run.id);
    let view = team_view(&run, &turns, &Default::default(), &[]).unwrap();
    let names: Vec<&str> = view.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["lead", "keeper"]);
    let by: Vec<String> = view.changes.iter().map(|c| format!("{} {}", c.by, c.description)).collect();
    assert_eq!(by.len(), 4, "{by:?}");
    assert!(view.changes.iter().all(|c| c.by == "lead" && c.by_kind == "agent"));
    assert!(by[0].contains("lead added **r1**"), "{by:?}");
    assert!(by[2].contains("lead removed **r2**"), "{by:?}");
    assert!(by[3].contains("lead removed **r1**"), "dissolving removed the rest: {by:?}");
    assert!(team_of(&run).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_sends_the_coder_back_to_redo_its_turn_while_paused_at_a_breakpoint() {
    let h = Harness::new();
    let story = json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]), member("tester", "tester", &[]), member("deployer", "deployer", &[]),
    ]});
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(story.clone(), config).await;
    h.status(&run.id, RunStatus::Paused).await;

    // Paused after the coder's turn asked for the handoff: back to the coder, with an instruction.
    let team = team_of(&h.engine.run(&run.id).unwrap()).unwrap();
    let request =
        RestartTask::check(&json!({"agent": "coder", "instruction": "write the tests first"}), &team).unwrap();
    h.engine.add_turn(&run.id, request.turn("alice"), "alice").unwrap();
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();

    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    h.decide(&gate, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;
    let turns = h.turns(&run.id);
    let agents: Vec<Value> = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].clone()).collect();
    assert_eq!(agents[..2], [json!("coder"), json!("coder")], "the coder went again before any handoff");
    assert_eq!(steps(&turns, "restart_task").len(), 1);
    let first_handoff = turns.iter().find(|t| t.metadata["step"] == "handoff").unwrap();
    let restarted = turns.iter().find(|t| t.metadata["step"] == "restart_task").unwrap();
    assert!(restarted.index < first_handoff.index, "the first turn's handoff was dropped");
    let sent = prompts(&h.scripted);
    assert!(
        sent[1].contains("A reviewer (alice) sent you back to redo your turn: write the tests first"),
        "{}",
        sent[1]
    );
    assert!(!sent[0].contains("sent you back"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_step_mode_the_agent_holding_the_turn_redoes_its_answer_before_it_is_reviewed() {
    let h = Harness::new();
    let input = json!({"prompt": "Ship the release", "team": [member("deployer", "deployer", &[])]});
    let run = h.start(input, json!({"step_mode": "step"})).await;
    h.status(&run.id, RunStatus::Paused).await;
    assert!(h.gates(&run.id).is_empty(), "paused after the answer, before its review");

    // No agent named: the one holding the turn goes back.
    let team = team_of(&h.engine.run(&run.id).unwrap()).unwrap();
    let request = RestartTask::check(&json!({"instruction": "name the version"}), &team).unwrap();
    h.engine.add_turn(&run.id, request.turn("alice"), "alice").unwrap();
    // A step: the answer is recorded, and the run pauses again before its review.
    h.engine.step_run(&run.id, "alice").unwrap();
    let answered = h
        .until(|e| {
            let turns = e.turns(&run.id)?;
            Ok((paused(e, &run.id) && steps(&turns, "agent_turn").len() == 1).then_some(()))
        })
        .await;
    assert!(answered.is_some(), "{:#?}", h.history(&run.id));
    assert!(h.gates(&run.id).is_empty());
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();
    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    h.decide(&gate, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    let gates = h.gates(&run.id);
    assert_eq!(gates.len(), 1, "only the redone answer was reviewed");
    let sent = prompts(&h.scripted);
    assert_eq!(sent.len(), 2);
    assert!(sent[1].contains("A reviewer (alice) sent you back to redo your turn: name the version"), "{}", sent[1]);
    let turns = h.turns(&run.id);
    let taken = steps(&turns, "restart_task");
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0]["restart_taken"]["agent"], "deployer");
}
