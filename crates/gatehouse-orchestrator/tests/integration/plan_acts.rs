//! The approved plan acts: its execution mode and intervention points open
//! review gates where they say (before each task when supervised, before a
//! deployment, when a task fails, after each task in step mode), task
//! progress follows the work as plan revisions, an agent's replan waits for
//! a person, and a run killed mid-plan resumes without running a task twice.

use crate::common;

use std::collections::HashSet;

use common::{open, registry, until, Harness};
use gatehouse_engine::plan::{ExecutionMode, TaskStatus};
use gatehouse_engine::{DecisionAction, DecisionInput, Engine, Gate, GateFilter, GateKind, NewRun, RunId, RunStatus};
use gatehouse_orchestrator::Orchestrator;
use serde_json::{json, Value};

/// The release story (`scripted_release.rs`), supervised, stopping before deployment and on errors.
fn release(mode: &str, points: Value) -> Value {
    json!({"tool": "scripted:chat", "prompt": "Release version 2.1",
           "collaborate": {"goal": false, "execution_mode": mode, "human_intervention_points": points}})
}

fn with_text(action: DecisionAction, text: &str) -> DecisionInput {
    DecisionInput { text: Some(text.into()), ..DecisionInput::new(action) }
}

/// The step a gate was opened for and the task it is about.
fn step_of(gate: &Gate) -> (String, String) {
    let step = gate.context.step.clone().unwrap_or_default();
    (step, gate.context.task_id.clone().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_supervised_release_asks_before_each_task_on_error_and_for_the_replan() {
    let h = Harness::new();
    let run = h.start(release("supervised", json!(["before_deployment", "on_error"])), json!({})).await;
    let plan = h.gate(&run.id, GateKind::PlanReview).await;
    assert_eq!(plan.payload.as_ref().unwrap()["execution_mode"], "supervised");
    h.decide(&plan, DecisionInput::approve());

    let migrate = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&migrate), ("task_review".into(), "task_001".into()));
    assert!(migrate.requires_human, "no policy passes what the plan leaves to a person");
    h.decide(&migrate, DecisionInput::approve());
    // The migration fails: a person chooses, the run does not fail.
    let failed = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&failed), ("task_error".into(), "task_001".into()));
    assert!(failed.payload.as_ref().unwrap()["error"].as_str().unwrap().contains("timed out"));
    let task = h.engine.plan(&run.id).unwrap().unwrap().plan.task("task_001").cloned().unwrap();
    assert_eq!(task.status, TaskStatus::Failed);
    h.decide(&failed, DecisionInput::new(DecisionAction::Retry));

    // The build, its description edited by the reviewer first.
    let build = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&build), ("task_review".into(), "task_002".into()));
    let mut edited = build.payload.clone().unwrap();
    edited["description"] = json!("Build the new version.");
    h.decide(&build, DecisionInput::edit(edited));
    // Its answer revises the plan: a smoke test before the deployment, for a person to approve.
    let replan = h.gate(&run.id, GateKind::PlanReview).await;
    assert_eq!(step_of(&replan), ("replan_review".into(), "task_002".into()));
    assert!(replan.text.contains("added task_004 \"Smoke-test the new version\""), "{}", replan.text);
    h.decide(&replan, DecisionInput::approve());

    let smoke = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&smoke), ("task_review".into(), "task_004".into()));
    h.decide(&smoke, DecisionInput::reject("the staging run covers it"));
    let deploy = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&deploy), ("task_review".into(), "task_003".into()));
    assert!(deploy.text.contains("stops before deployment"), "{}", deploy.text);
    h.decide(&deploy, DecisionInput::approve());

    let done = h.status(&run.id, RunStatus::Completed).await;
    let result = done.result.unwrap();
    let outputs: Vec<&str> =
        result["outputs"].as_array().unwrap().iter().map(|o| o["task_id"].as_str().unwrap()).collect();
    assert_eq!(outputs, ["task_001", "task_002", "task_003"]);
    assert_eq!(result["skipped"], json!(["task_004"]));
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert_eq!(plan.execution_mode, ExecutionMode::Supervised);
    let statuses: Vec<(&str, TaskStatus)> = plan.tasks.iter().map(|t| (t.task_id.as_str(), t.status)).collect();
    use TaskStatus::*;
    assert_eq!(
        statuses,
        [("task_001", Completed), ("task_002", Completed), ("task_004", Skipped), ("task_003", Completed)]
    );
    assert_eq!(plan.task("task_001").unwrap().metadata["attempt"], 1);
    assert_eq!(plan.task("task_002").unwrap().description, "Build the new version.");
    assert_eq!(plan.task("task_003").unwrap().assigned_agent.as_deref(), Some("gatehouse"));
    // Progress is recorded as the work goes, with change logs, by whoever made each change.
    let revisions = h.engine.plan_revisions(&run.id).unwrap();
    let logs: Vec<String> = revisions.iter().flat_map(|r| r.change_log.clone()).collect();
    for line in [
        "task_001: status pending -> in_progress",
        "task_001: status in_progress -> failed",
        "task_001: status failed -> in_progress",
        "task_001: status in_progress -> completed",
        "task_004: status pending -> skipped",
    ] {
        assert!(logs.iter().any(|l| l == line), "no `{line}` in {logs:#?}");
    }
    assert!(revisions.iter().any(|r| r.actor == "alice" && r.change_log.iter().any(|l| l.contains("description"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_on_error_a_failed_task_fails_the_run_and_autonomous_asks_nothing_more() {
    let h = Harness::new();
    let run = h.start(release("autonomous", json!([])), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PlanReview).await, DecisionInput::approve());
    let failed = h.status(&run.id, RunStatus::Failed).await;
    let reason = failed.status_reason.unwrap_or_default();
    assert!(reason.starts_with("task `task_001` failed: the migration timed out"), "{reason}");
    assert_eq!(h.gates(&run.id).len(), 1, "only the plan review");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_that_failed_at_a_task_asks_anew_when_a_reviewer_retries_the_run() {
    let h = Harness::new();
    let run = h.start(release("autonomous", json!([])), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PlanReview).await, DecisionInput::approve());
    h.status(&run.id, RunStatus::Failed).await;
    let retried = h.engine.retry_run(&run.id, "alice").unwrap();
    h.orch.take_up(&retried);
    let done = h.status(&run.id, RunStatus::Completed).await;
    // Autonomous with no point: the build's replan was taken without asking.
    let outputs = done.result.unwrap()["outputs"].as_array().unwrap().len();
    assert_eq!(outputs, 4);
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert_eq!(plan.task("task_001").unwrap().metadata["attempt"], 1);
    assert_eq!(h.gates(&run.id).len(), 1, "still only the plan review");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_error_stop_cancels_the_run_naming_the_reviewer() {
    let h = Harness::new();
    let run = h.start(release("autonomous", json!(["on_error"])), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PlanReview).await, DecisionInput::approve());
    let failed = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&failed).0, "task_error");
    h.decide(&failed, DecisionInput::reject("roll back instead"));
    let ended = h.status(&run.id, RunStatus::Cancelled).await;
    assert_eq!(ended.status_reason.as_deref(), Some("stopped by alice at task `task_001`: roll back instead"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_failure_goes_on_and_a_replan_is_reviewed_while_an_intervention_point_is_set() {
    let h = Harness::new();
    let run = h.start(release("autonomous", json!(["on_error"])), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PlanReview).await, DecisionInput::approve());
    let failed = h.gate(&run.id, GateKind::Approval).await;
    h.decide(&failed, DecisionInput::new(DecisionAction::Defer));
    // Autonomous, but the plan names a point: the build's replan waits for a person, who rejects it.
    let replan = h.gate(&run.id, GateKind::PlanReview).await;
    assert_eq!(step_of(&replan).0, "replan_review");
    h.decide(&replan, DecisionInput::reject("no smoke test today"));
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["skipped"], json!(["task_001"]));
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    let ids: Vec<&str> = plan.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["task_001", "task_002", "task_003"], "the rejected replan left the plan as it was");
    assert_eq!(plan.task("task_001").unwrap().metadata["skipped_by"], "alice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_mode_reviews_each_result_and_a_redo_carries_the_feedback() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta",
                       "collaborate": {"goal": false, "execution_mode": "step"}});
    let run = h.start(input, json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PlanReview).await, DecisionInput::approve());
    h.decide(&h.gate(&run.id, GateKind::Approval).await, DecisionInput::approve());
    let result = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&result), ("task_result".into(), "task_001".into()));
    h.decide(&result, with_text(DecisionAction::Retry, "cite the sources"));
    let again = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(step_of(&again), ("task_result".into(), "task_001".into()));
    let prompts: Vec<String> = h.scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert!(prompts.last().unwrap().contains("cite the sources"), "{prompts:#?}");
    h.decide(&again, DecisionInput::reject("enough for today"));
    h.status(&run.id, RunStatus::Cancelled).await;
}

/// The plan review and the first task's gate approved; returns once the migration's failure waits.
fn failed_migration_waits(e: &Engine, run: &RunId) -> bool {
    let pending = e.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::pending() }).unwrap();
    for gate in pending {
        match step_of(&gate).0.as_str() {
            "task_error" => return true,
            _ => {
                e.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
            }
        }
    }
    false
}

#[test]
fn a_plan_killed_mid_run_resumes_without_running_a_task_twice() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let rt = runtime();
    let run = {
        let engine = open(&path);
        let orch = Orchestrator::new(engine.clone(), registry(Vec::new()).0);
        let template: NewRun = serde_json::from_value(json!({})).unwrap();
        let input = release("supervised", json!(["before_deployment", "on_error"]));
        let run = rt.block_on(orch.start(&input, template, "alice")).unwrap();
        let reached = rt.block_on(until(&engine, |e| Ok(failed_migration_waits(e, &run.id).then_some(()))));
        assert!(reached.is_some(), "{:#?}", common::history(&engine, &run.id));
        run.id
    };
    rt.shutdown_background();

    let rt = runtime();
    let engine = open(&path);
    let (reg, scripted) = registry(Vec::new());
    let orch = Orchestrator::new(engine.clone(), reg);
    assert_eq!(rt.block_on(orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    // Everything from here on is approved, the failure retried.
    let finished = rt.block_on(until(&engine, |e| {
        let pending = e.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::pending() })?;
        for gate in pending {
            let decision = match step_of(&gate).0.as_str() {
                "task_error" => DecisionInput::new(DecisionAction::Retry),
                _ => DecisionInput::approve(),
            };
            e.resolve_gate(&gate.id, decision, "alice")?;
        }
        Ok(Some(e.run(&run)?).filter(|r| r.status == RunStatus::Completed))
    }));
    assert!(finished.is_some(), "{:#?}", common::history(&engine, &run));
    // The failed migration was not asked for again; only what was left was.
    let asked: Vec<String> = scripted
        .calls()
        .iter()
        .filter_map(|c| {
            let text = c.payload.to_value().to_string();
            let task = text.split("Task:\\n").nth(1)?.split("\\n").next()?.to_owned();
            Some(task)
        })
        .collect();
    assert_eq!(
        asked,
        [
            "Migrate the database",
            "Build the new version",
            "Smoke-test the new version",
            "Deploy the new version to production"
        ]
    );
    // Every gate was opened once: one per step and task.
    let gates = engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
    let kinds: HashSet<(String, String)> = gates.iter().map(step_of).collect();
    assert_eq!(kinds.len(), gates.len(), "{:#?}", gates.iter().map(step_of).collect::<Vec<_>>());
    let plan = engine.plan(&run).unwrap().unwrap().plan;
    assert!(plan.tasks.iter().all(|t| t.status == TaskStatus::Completed), "{plan:#?}");
    rt.shutdown_background();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}
