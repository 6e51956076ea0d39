//! Consensus and collaboration patterns in team runs: the consensus tools
//! answered and journaled (every refusal worded for the model), a proposal
//! naming people finalised into a quorum gate that people decide, a run
//! following a workflow whose review steps are people's gates, and both
//! carrying on after a restart with nothing repeated.

use crate::common;

use std::sync::Arc;

use common::{calls, member, open, prompts, registry, runtime, steps, until, Harness};
use gatehouse_engine::{DecisionInput, Engine, Gate, GateFilter, GateKind, GateStatus, NewRun, RunId, RunStatus};
use gatehouse_orchestrator::team::view::team_view;
use gatehouse_orchestrator::{Orchestrator, StartError};
use gatehouse_providers::{PayloadShape, Provider, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

const CONSENSUS_TOOLS: [&str; 3] = ["propose_decision", "vote_on_proposal", "finalize_consensus"];

/// The scripted consensus story: the architect proposes, two agents vote, people decide.
fn consensus_story() -> Value {
    json!({"prompt": "Choose the audit log's store", "team": [
        member("architect", "architect", &CONSENSUS_TOOLS),
        member("backend", "backend developer", &CONSENSUS_TOOLS),
        member("security", "security reviewer", &CONSENSUS_TOOLS),
    ]})
}

/// The scripted pattern story: code, a people's review, deploy; a rejection goes back to the coder.
fn pattern_story() -> Value {
    json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]),
        member("reviewer", "reviewer", &[]),
        member("deployer", "deployer", &[]),
    ], "pattern": {"name": "code_review_deploy", "type": "custom", "workflow": [
        {"step": "code", "agent": "coder", "next_on_success": "review"},
        {"step": "review", "agent": "reviewer", "next_on_approve": "deploy", "next_on_reject": "coder"},
        {"step": "deploy", "agent": "deployer", "next_on_failure": "code"}
    ]}})
}

fn auto() -> Value {
    json!({"hitl_config": {"run_policy": "auto"}})
}

fn view(engine: &Engine, run: &RunId) -> Value {
    let r = engine.run(run).unwrap();
    let turns = engine.turns(run).unwrap();
    let v = team_view(&r, &turns, &engine.context(run).unwrap(), &engine.context_history(run).unwrap()).unwrap();
    serde_json::to_value(v).unwrap()
}

fn pending(engine: &Engine, run: &RunId, kind: GateKind) -> Option<Gate> {
    let filter = GateFilter { run_id: Some(run.clone()), kind: Some(kind), ..GateFilter::pending() };
    engine.gates(&filter).unwrap().into_iter().next()
}

fn vote(reason: &str) -> DecisionInput {
    DecisionInput { text: Some(reason.to_owned()), ..DecisionInput::approve() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_naming_people_opens_their_quorum_gate_with_every_vote_and_their_decision_is_the_outcome() {
    let h = Harness::new();
    let run = h.start(consensus_story(), auto()).await;
    let gate = h.gate(&run.id, GateKind::Approval).await;
    // The quorum gate: both named people must approve; a policy never passes it.
    assert_eq!(gate.quorum.as_ref().map(|q| q.required), Some(2));
    assert_eq!(gate.deciders, ["alice", "bob"]);
    assert!(gate.requires_human);
    for shown in [
        "**The team proposes:** Keep the audit log in PostgreSQL",
        "*Why (architect):* One database to back up",
        "- backend for: It is the database we already run",
        "- security for: Row-level access and encrypted backups",
    ] {
        assert!(gate.text.contains(shown), "{shown} in {}", gate.text);
    }
    assert_eq!(h.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);
    let seen = view(&h.engine, &run.id);
    assert_eq!(seen["proposals"][0]["status"], "with_people");
    assert_eq!(seen["proposals"][0]["ballots"].as_array().unwrap().len(), 2);
    assert_eq!(
        seen["proposals"][0]["ballots"][1]["reasoning"],
        "Row-level access and encrypted backups are already in place there."
    );

    // One vote is not the quorum; carol is not a decider.
    let after_one = h.engine.resolve_gate(&gate.id, vote("fine by me"), "alice").unwrap();
    assert_eq!(after_one.status, GateStatus::Pending);
    assert!(h.engine.resolve_gate(&gate.id, DecisionInput::approve(), "carol").is_err());
    h.engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap();
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert!(done.result.unwrap()["text"].as_str().unwrap().starts_with("Agreed: Keep the audit log in PostgreSQL"));

    // The architect was told the people's decision, each vote with its reason.
    let told = prompts(&h.scripted);
    assert_eq!(told.len(), 5, "architect, backend, security, architect (finalize), architect (answer)");
    assert!(told[4].contains("people agreed to p1 (alice approves: fine by me; bob approves)"), "{}", told[4]);
    let seen = view(&h.engine, &run.id);
    assert_eq!(seen["proposals"][0]["status"], "agreed");
    let people: Vec<&str> = seen["proposals"][0]["people_votes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["reviewer"].as_str().unwrap())
        .collect();
    assert_eq!(people, ["alice", "bob"]);
}

fn scripted(name: &str, steps: Vec<Step>) -> Arc<ScriptedProvider> {
    let tool = Tool::new(format!("{name}:agent"), "agent", gatehouse_providers::openai::chat_schema());
    Arc::new(ScriptedProvider::new(name).with_tool(tool, PayloadShape::Chat, steps))
}

fn agent(provider: &str, name: &str, tools: &[&str]) -> Value {
    json!({"name": name, "role": name, "provider": provider, "model": "agent", "tools": tools})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_consensus_mistake_is_answered_to_the_agent_and_the_votes_decide_without_people() {
    let script = scripted(
        "c",
        vec![
            calls(
                "Proposing.",
                vec![
                    ("vote_on_proposal", json!({"proposal_id": "p9", "vote": "approve"})),
                    ("propose_decision", json!({"decision": "Cache it", "stakeholders": ["b", "qa"]})),
                    ("propose_decision", json!({"decision": "Cache it", "rationale": "fast", "stakeholders": ["b"]})),
                    ("finalize_consensus", json!({"proposal_id": "p1"})),
                    ("vote_on_proposal", json!({"proposal_id": "p1", "vote": "approve"})),
                    ("handoff", json!({"destination_agent": "b", "reason": "vote please"})),
                ],
            ),
            calls(
                "Voting.",
                vec![
                    ("vote_on_proposal", json!({"proposal_id": "p1", "vote": "maybe"})),
                    ("vote_on_proposal", json!({"proposal_id": "p1", "vote": "approve", "reasoning": "fine"})),
                    ("vote_on_proposal", json!({"proposal_id": "p1", "vote": "reject"})),
                    ("handoff", json!({"destination_agent": "a"})),
                ],
            ),
            calls("Closing.", vec![("finalize_consensus", json!({"proposal_id": "p1"}))]),
            Step::Reply("Cached.".into()),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Decide on a cache", "team": [agent("c", "a", &CONSENSUS_TOOLS), agent("c", "b", &CONSENSUS_TOOLS)]});
    let run = h.start(input, auto()).await;
    h.status(&run.id, RunStatus::Completed).await;

    let told = prompts(&script);
    assert_eq!(told.len(), 4);
    for (i, expected) in [
        (1, "vote_on_proposal: there is no proposal `p9`; the proposals are none yet"),
        (1, "propose_decision: `qa` is not in the team; stakeholders are agents (a, b) or people"),
        (1, "propose_decision: proposal p1 is open: \\\"Cache it\\\"; its voters are b"),
        (1, "finalize_consensus: p1 still waits for the votes of b"),
        (1, "vote_on_proposal: you are not a stakeholder of p1; its voters are b"),
        (2, "vote_on_proposal: `maybe` is not a vote: vote approve, reject or abstain"),
        (2, "vote_on_proposal: your vote on p1 is counted; every voter has voted"),
        (2, "vote_on_proposal: you have already voted on p1"),
        (3, "finalize_consensus: p1 is agreed (1 for, 0 against, 0 abstaining)"),
    ] {
        assert!(told[i].contains(expected), "{expected} in call {i}: {}", told[i]);
    }
    // The proposals are listed to the agents, with their votes.
    assert!(told[2].contains("* p1 [open] by a: Cache it | voters: b | votes: b approve"), "{}", told[2]);
    assert!(h.gates(&run.id).iter().all(|g| g.kind() != GateKind::Approval), "no people's gate");
    let seen = view(&h.engine, &run.id);
    assert_eq!(seen["proposals"].as_array().unwrap().len(), 1);
    assert_eq!(seen["proposals"][0]["status"], "agreed");
    assert_eq!(seen["proposals"][0]["ballots"], json!([{"agent": "b", "vote": "approve", "reasoning": "fine"}]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runs_setting_hands_a_proposal_to_people_whose_rejection_the_agent_is_told() {
    let script = scripted(
        "p",
        vec![
            calls(
                "Proposing and voting.",
                vec![
                    ("propose_decision", json!({"decision": "Drop the staging server", "stakeholders": ["a"]})),
                    ("vote_on_proposal", json!({"proposal_id": "p1", "vote": "approve", "reasoning": "it costs"})),
                    ("finalize_consensus", json!({"proposal_id": "p1"})),
                ],
            ),
            Step::Reply("Keeping staging.".into()),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Cut costs", "team": [agent("p", "a", &CONSENSUS_TOOLS)],
        "consensus": {"people_decide": true}});
    let run = h.start(input, auto()).await;
    let gate = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!((gate.quorum.as_ref().map(|q| q.required), gate.deciders.len()), (Some(1), 0));
    assert!(gate.text.contains("- a for: it costs"), "{}", gate.text);
    h.decide(&gate, DecisionInput::reject("staging catches bad migrations"));
    h.status(&run.id, RunStatus::Completed).await;
    let told = prompts(&script);
    assert!(told[1].contains("people rejected p1 (alice rejects: staging catches bad migrations)"), "{}", told[1]);
    assert_eq!(view(&h.engine, &run.id)["proposals"][0]["status"], "rejected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consensus_settings_and_patterns_are_checked_when_the_run_starts_naming_the_field() {
    let h = Harness::new();
    let field = |input: Value| {
        let orch = h.orch.clone();
        async move {
            match orch.start(&input, NewRun::default(), "alice").await {
                Err(StartError::Spec(s)) => s.field,
                other => panic!("not refused: {other:?}"),
            }
        }
    };
    let mut story = consensus_story();
    story["consensus"] = json!({"quorum": 0});
    assert_eq!(field(story).await, "consensus.quorum");
    let lone = json!({"tool": "scripted:chat", "prompt": "x", "consensus": {"people_decide": true}});
    assert_eq!(field(lone).await, "consensus");
    let mut story = pattern_story();
    story["pattern"]["workflow"][2]["agent"] = json!("qa");
    assert_eq!(field(story).await, "pattern.workflow[2].agent");
    let mut story = pattern_story();
    story["pattern"]["workflow"][1]["next_on_approve"] = json!(null);
    assert_eq!(field(story).await, "pattern.workflow[2]", "deploy is reached by no path");
    let lone = json!({"tool": "scripted:chat", "prompt": "x", "pattern": pattern_story()["pattern"].clone()});
    assert_eq!(field(lone).await, "pattern");
    assert!(h.engine.runs(&Default::default()).unwrap().is_empty(), "no run was created");
}

fn review_gate(engine: &Engine, run: &RunId) -> Option<Gate> {
    pending(engine, run, GateKind::Approval).filter(|g| g.context.step.as_deref() == Some("review"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pattern_runs_review_step_is_a_peoples_gate_and_a_rejection_sends_the_work_back_to_the_coder() {
    let h = Harness::new();
    let run = h.start(pattern_story(), auto()).await;
    let first = h.until(|e| Ok(review_gate(e, &run.id))).await.expect("the review gate opens");
    // The run's policy passes everything it may: never a review step.
    assert!(first.requires_human && first.status == GateStatus::Pending);
    assert!(
        first.text.contains("**The work under review:** `code` (coder) ended in success: Wrote the change"),
        "{}",
        first.text
    );
    assert!(first.text.contains("**reviewer** reviewed it: Reviewed the change"), "{}", first.text);
    let seen = view(&h.engine, &run.id);
    assert_eq!(
        (seen["workflow"]["current"].as_str(), seen["workflow"]["state"].as_str()),
        (Some("review"), Some("running"))
    );
    assert_eq!(
        seen["workflow"]["steps"][1]["exits"],
        json!([{"outcome": "approve", "to": "deploy"}, {"outcome": "reject", "to": "code"}])
    );
    h.decide(&first, DecisionInput::reject("add a test for the logout"));

    let second = h
        .until(|e| Ok(review_gate(e, &run.id).filter(|g| g.id != first.id)))
        .await
        .unwrap_or_else(|| panic!("{:#?}", h.history(&run.id)));
    assert!(second.text.contains("Reworked the change after the review"), "{}", second.text);
    h.decide(&second, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;

    let told = prompts(&h.scripted);
    assert_eq!(told.len(), 5, "coder, reviewer, coder, reviewer, deployer");
    assert!(told[2].contains("ended in reject: rejected by alice: add a test for the logout"), "{}", told[2]);
    let result = done.result.unwrap();
    assert_eq!(result["text"], "Deployed to production: Add a logout button.");
    let path: Vec<String> = result["workflow"]["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} {}", p["step"].as_str().unwrap(), p["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(path, ["code success", "review reject", "code success", "review approve", "deploy success"]);
    let seen = view(&h.engine, &run.id);
    assert_eq!(
        (seen["workflow"]["current"].clone(), seen["workflow"]["state"].as_str()),
        (Value::Null, Some("finished"))
    );
    assert_eq!(seen["workflow"]["moves"].as_array().unwrap().len(), 5);
    assert!(seen["handoffs"].as_array().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pattern_outcomes_come_from_the_agents_report_handoffs_are_refused_and_a_failure_with_no_way_on_fails_the_run()
{
    let report = |outcome: &str, summary: &str| ("report_outcome", json!({"outcome": outcome, "summary": summary}));
    let script = scripted(
        "w",
        vec![
            calls("Handing on.", vec![("handoff", json!({"destination_agent": "b"})), report("pass", "built")]),
            Step::Reply("Still building.".into()),
            calls("Built.", vec![report("success", "built"), report("failure", "twice")]),
            calls("Checked.", vec![report("fail", "2 tests fail")]),
            calls("Giving up.", vec![report("failure", "cannot fix the tests")]),
        ],
    );
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Build it", "team": [agent("w", "a", &[]), agent("w", "b", &[])],
    "pattern": {"name": "w", "workflow": [
        {"step": "build", "agent": "a", "next_on_success": "check"},
        {"step": "check", "agent": "b", "next_on_pass": null, "next_on_fail": "build"}
    ]}});
    let run = h.start(input, auto()).await;
    let failed = h.status(&run.id, RunStatus::Failed).await;
    let reason = failed.status_reason.unwrap_or_default();
    assert!(reason.contains("the workflow `w` failed at step `build` (failure): cannot fix the tests"), "{reason}");

    let told = prompts(&script);
    assert_eq!(told.len(), 5);
    for (i, expected) in [
        (0, "Workflow step: build (work): end it with report_outcome(outcome: success|failure, summary)"),
        (1, "handoff refused: this run follows the workflow `w`, which picks the next agent"),
        (1, "report_outcome refused: `pass` is not an outcome of work step `build`: report success or failure"),
        (2, "Step `build` is still yours: end it with report_outcome"),
        (3, "Workflow step: check (check)"),
        (3, "Previous step: `build` (a) ended in success: built"),
        (4, "Previous step: `check` (b) ended in fail: 2 tests fail"),
    ] {
        assert!(told[i].contains(expected), "{expected} in call {i}: {}", told[i]);
    }
    assert!(told[3].contains("report_outcome refused: step `build`'s outcome is already reported"), "{}", told[3]);
    let turns = h.turns(&run.id);
    assert!(steps(&turns, "handoff").is_empty(), "no handoff was made");
    let seen = view(&h.engine, &run.id);
    assert_eq!(seen["workflow"]["state"], "failed");
    assert_eq!(seen["active"], "a");
}

/// Starts `input` on a fresh orchestrator over `path` and drives it until `reached`
/// finds something, then drops the runtime (the process "dies"): the run's id, the calls made.
fn drive_until(path: &std::path::Path, input: &Value, reached: impl Fn(&Engine, &RunId) -> bool) -> (RunId, usize) {
    let rt = runtime();
    let engine = open(path);
    let (reg, scripted) = registry(Vec::new());
    let orch = Orchestrator::new(engine.clone(), reg);
    let template: NewRun = serde_json::from_value(auto()).unwrap();
    let run = rt.block_on(orch.start(input, template, "alice")).unwrap();
    let found = rt.block_on(until(&engine, |e| Ok(reached(e, &run.id).then_some(()))));
    assert!(found.is_some(), "{:#?}", common::history(&engine, &run.id));
    let made = scripted.calls().len();
    rt.shutdown_background();
    (run.id, made)
}

/// Drives every unfinished run again over `path`, after a "restart".
fn restart(path: &std::path::Path, run: &RunId) -> (tokio::runtime::Runtime, Engine, Arc<ScriptedProvider>) {
    let rt = runtime();
    let engine = open(path);
    let (reg, scripted) = registry(Vec::new());
    let orch = Orchestrator::new(engine.clone(), reg);
    assert_eq!(rt.block_on(orch.resume_all()).unwrap(), std::slice::from_ref(run));
    (rt, engine, scripted)
}

fn completed(rt: &tokio::runtime::Runtime, engine: &Engine, run: &RunId) -> gatehouse_engine::Run {
    let done = rt.block_on(until(engine, |e| Ok(Some(e.run(run)?).filter(|r| r.status == RunStatus::Completed))));
    done.unwrap_or_else(|| panic!("{:#?}", common::history(engine, run)))
}

#[test]
fn a_team_run_killed_mid_consensus_carries_on_at_the_same_quorum_gate_with_nothing_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let (run, before) = drive_until(&path, &consensus_story(), |e, r| pending(e, r, GateKind::Approval).is_some());
    assert_eq!(before, 4, "proposed, two votes, finalised");

    let (rt, engine, scripted) = restart(&path, &run);
    let gate = pending(&engine, &run, GateKind::Approval).expect("the same quorum gate waits");
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap();
    let done = completed(&rt, &engine, &run);

    assert_eq!(scripted.calls().len(), 1, "only the architect's answer after the people's decision");
    let approvals: Vec<Gate> = engine
        .gates(&GateFilter { run_id: Some(run.clone()), kind: Some(GateKind::Approval), ..GateFilter::default() })
        .unwrap();
    assert_eq!(approvals.len(), 1, "one quorum gate");
    let turns = engine.turns(&run).unwrap();
    let consensus_calls: Vec<Value> = steps(&turns, "tool_call")
        .into_iter()
        .filter(|m| m["tool_call"]["tool_name"].as_str().is_some_and(|n| n != "handoff"))
        .map(|m| m["tool_call"]["tool_name"].clone())
        .collect();
    assert_eq!(
        consensus_calls,
        [json!("propose_decision"), json!("vote_on_proposal"), json!("vote_on_proposal"), json!("finalize_consensus")]
    );
    assert!(done.result.unwrap()["text"].as_str().unwrap().starts_with("Agreed:"));
    assert_eq!(view(&engine, &run)["proposals"][0]["status"], "agreed");
    rt.shutdown_background();
}

#[test]
fn a_pattern_run_killed_at_its_review_gate_resumes_at_the_same_step_with_nothing_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let (run, before) = drive_until(&path, &pattern_story(), |e, r| review_gate(e, r).is_some());
    assert_eq!(before, 2, "the coder's and the reviewer's turns");

    let (rt, engine, scripted) = restart(&path, &run);
    assert_eq!(view(&engine, &run)["workflow"]["current"], "review");
    let gate = review_gate(&engine, &run).expect("the same review gate waits");
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let done = completed(&rt, &engine, &run);
    assert_eq!(scripted.calls().len(), 1, "only the deployer's turn");
    let path_taken = done.result.unwrap()["workflow"]["path"].as_array().unwrap().len();
    assert_eq!(path_taken, 3, "code, review, deploy: each once");
    assert_eq!(view(&engine, &run)["workflow"]["moves"].as_array().unwrap().len(), 3);
    rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewers_choice_of_the_next_agent_moves_the_workflow_to_that_agents_first_step() {
    let h = Harness::new();
    let config = json!({"hitl_config": {"run_policy": "auto"}, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(pattern_story(), config).await;
    h.status(&run.id, RunStatus::Paused).await;
    // Paused after the coder's turn: the deployer acts next, over the review step.
    h.engine.set_next_agent(&run.id, Some("deployer"), "alice").unwrap();
    h.engine.set_run_control(&run.id, gatehouse_engine::StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();
    let done = h.status(&run.id, RunStatus::Completed).await;

    let path: Vec<Value> =
        done.result.unwrap()["workflow"]["path"].as_array().unwrap().iter().map(|p| p["step"].clone()).collect();
    assert_eq!(path, [json!("code"), json!("deploy")], "the review step was skipped by the reviewer's choice");
    assert!(
        review_gate(&h.engine, &run.id).is_none() && h.gates(&run.id).iter().all(|g| g.kind() != GateKind::Approval)
    );
    let seen = view(&h.engine, &run.id);
    assert_eq!(seen["workflow"]["state"], "finished");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewers_choice_of_an_agent_with_no_step_leaves_the_workflow_where_it_is_and_says_so() {
    let h = Harness::new();
    let mut story = pattern_story();
    story["team"].as_array_mut().unwrap().push(member("auditor", "auditor", &[]));
    let config = json!({"hitl_config": {"run_policy": "auto"}, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(story, config).await;
    h.status(&run.id, RunStatus::Paused).await;
    // Paused after the coder's turn: the auditor is on the team but takes no step of the workflow.
    h.engine.set_next_agent(&run.id, Some("auditor"), "alice").unwrap();
    h.engine.set_run_control(&run.id, gatehouse_engine::StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();
    let gate = h.until(|e| Ok(review_gate(e, &run.id))).await.unwrap();
    assert_eq!(view(&h.engine, &run.id)["workflow"]["current"], "review", "the workflow went on to its review");

    let turns = h.engine.turns(&run.id).unwrap();
    let note = turns.iter().find(|t| t.metadata.get("team_override").is_some()).expect("the choice is on the timeline");
    assert_eq!(note.metadata["applied"], false);
    assert!(note.content.contains("takes no step of the workflow"), "{}", note.content);
    assert!(turns.iter().all(|t| t.metadata.get("team_agent") != Some(&json!("auditor"))), "the auditor never acted");
    h.decide(&gate, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_workflows_answer_sent_back_by_its_reviewer_is_taken_again_at_the_last_step() {
    let report =
        |summary: &str| calls(summary, vec![("report_outcome", json!({"outcome": "success", "summary": summary}))]);
    let script = scripted("r", vec![report("Draft one."), report("Draft two, shorter.")]);
    let h = Harness::with(vec![script.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Write the notes", "team": [agent("r", "writer", &[])],
        "pattern": {"name": "notes", "workflow": [{"step": "write", "agent": "writer"}]}});
    let run = h.start(input, json!({})).await;
    let first = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(serde_json::to_string(&first.payload).unwrap().contains("Draft one."));
    let retry = DecisionInput {
        text: Some("shorter please".into()),
        ..DecisionInput::new(gatehouse_engine::DecisionAction::Retry)
    };
    h.decide(&first, retry);
    let second =
        h.until(|e| Ok(pending(e, &run.id, GateKind::ResponseReview).filter(|g| g.id != first.id))).await.unwrap();
    h.decide(&second, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "Draft two, shorter.");
    let told = prompts(&script);
    assert!(told[1].contains("The reviewer asked for changes to your answer: shorter please"), "{}", told[1]);
    assert!(told[1].contains("Workflow step: write (work)"), "{}", told[1]);
}

#[test]
fn a_team_run_killed_between_two_votes_counts_each_vote_once_and_reaches_the_same_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    // Paused after each agent's turn: killed after the backend's turn asked to vote, before the vote was counted.
    let config = json!({"hitl_config": {"run_policy": "auto"}, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = {
        let rt = runtime();
        let engine = open(&path);
        let (reg, scripted) = registry(Vec::new());
        let orch = Orchestrator::new(engine.clone(), reg);
        let template: NewRun = serde_json::from_value(config).unwrap();
        let run = rt.block_on(orch.start(&consensus_story(), template, "alice")).unwrap();
        let paused = |e: &Engine| e.run(&run.id).map(|r| r.status == RunStatus::Paused);
        let first = rt.block_on(until(&engine, |e| Ok(paused(e)?.then_some(()))));
        assert!(first.is_some(), "{:#?}", common::history(&engine, &run.id));
        engine.resume_run(&run.id, "alice").unwrap();
        let second = rt.block_on(until(&engine, |e| {
            Ok((paused(e)? && steps(&e.turns(&run.id)?, "agent_turn").len() == 2).then_some(()))
        }));
        assert!(second.is_some(), "{:#?}", common::history(&engine, &run.id));
        assert_eq!(scripted.calls().len(), 2);
        let proposals = view(&engine, &run.id)["proposals"].clone();
        assert_eq!(proposals[0]["ballots"], json!([]), "the backend's vote is not counted yet");
        rt.shutdown_background();
        run.id
    };

    let (rt, engine, scripted) = restart(&path, &run);
    engine.set_run_control(&run, gatehouse_engine::StepMode::Continuous, Vec::new(), "alice").unwrap();
    engine.resume_run(&run, "alice").unwrap();
    let gate = rt.block_on(until(&engine, |e| Ok(pending(e, &run, GateKind::Approval))));
    let gate = gate.unwrap_or_else(|| panic!("{:#?}", common::history(&engine, &run)));
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap();
    let done = completed(&rt, &engine, &run);

    assert_eq!(
        scripted.calls().len(),
        3,
        "security, architect (finalize), architect (answer): the backend not asked again"
    );
    let seen = view(&engine, &run);
    let voters: Vec<&str> =
        seen["proposals"][0]["ballots"].as_array().unwrap().iter().map(|b| b["agent"].as_str().unwrap()).collect();
    assert_eq!(voters, ["backend", "security"]);
    assert_eq!(seen["proposals"][0]["status"], "agreed");
    assert!(done.result.unwrap()["text"].as_str().unwrap().starts_with("Agreed:"));
    rt.shutdown_background();
}
