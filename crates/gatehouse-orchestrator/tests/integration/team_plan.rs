//! Plans in team runs: a planner writes the plan with the plan tools, each
//! task assigned to a member, and the tasks follow the work (in progress
//! when the turn reaches their agent, completed when it hands off or its
//! answer is accepted), the plan's intervention points asking people where
//! they say; an agent's mistakes with the plan tools are answered to it.
//! And a reviewer's restart of a plan collaboration run's task, across a
//! restart of the process: nothing skipped, nothing run twice.

use crate::common;

use std::sync::Arc;

use common::{open, registry, until, Harness};
use gatehouse_engine::plan::TaskStatus;
use gatehouse_engine::{
    DecisionAction, DecisionInput, Engine, EngineError, GateFilter, GateKind, NewRun, RunId, RunStatus,
};
use gatehouse_orchestrator::{Orchestrator, StartError};
use gatehouse_providers::{PayloadShape, Provider, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

fn member(name: &str, role: &str, tools: &[&str]) -> Value {
    json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools})
}

fn script(steps: Vec<Step>) -> Arc<ScriptedProvider> {
    let tool = Tool::new("script:agent", "agent", gatehouse_providers::openai::chat_schema());
    Arc::new(ScriptedProvider::new("script").with_tool(tool, PayloadShape::Chat, steps))
}

fn calls(text: &str, calls: &[(&str, Value)]) -> Step {
    Step::Calls(text.into(), calls.iter().map(|(n, a)| ((*n).to_owned(), a.clone())).collect())
}

/// The planned story: a planner, then coder -> tester -> coder -> tester -> deployer.
fn planned_story() -> Value {
    json!({"prompt": "Add a logout button", "plan": {"human_intervention_points": ["before_deployment"]}, "team": [
        member("planner", "planner", &["plan_add_task", "plan_read"]),
        member("coder", "coder", &[]),
        member("tester", "tester", &["store_memory", "plan_update_task"]),
        member("deployer", "deployer", &[]),
    ]})
}

/// Each revision's status of `task`, with consecutive repeats folded.
fn statuses(engine: &Engine, run: &RunId, task: &str) -> Vec<TaskStatus> {
    let mut out: Vec<TaskStatus> = Vec::new();
    for revision in engine.plan_revisions(run).unwrap() {
        if let Some(t) = revision.plan.task(task) {
            if out.last() != Some(&t.status) {
                out.push(t.status);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_team_runs_its_tasks_by_their_agents_asking_before_the_deployment() {
    let h = Harness::new();
    let run = h.start(planned_story(), json!({})).await;
    let before = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(before.context.step.as_deref(), Some("task_review"));
    assert_eq!(before.context.task_id.as_deref(), Some("task_003"));
    assert!(before.requires_human && before.text.contains("assigned to deployer"), "{}", before.text);
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    let assigned: Vec<_> = plan.tasks.iter().map(|t| t.assigned_agent.clone().unwrap()).collect();
    assert_eq!(assigned, ["coder", "tester", "deployer"]);
    assert_eq!(plan.task("task_003").unwrap().status, TaskStatus::Pending, "not started before a person says so");
    h.decide(&before, DecisionInput::approve());
    let answer = h.gate(&run.id, GateKind::ResponseReview).await;
    assert_eq!(h.engine.plan(&run.id).unwrap().unwrap().plan.task("task_003").unwrap().status, TaskStatus::InProgress);
    h.decide(&answer, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert!(plan.tasks.iter().all(|t| t.status == TaskStatus::Completed), "{plan:#?}");
    use TaskStatus::*;
    assert_eq!(statuses(&h.engine, &run.id, "task_001"), [Pending, InProgress, Completed]);
    // The tester's failing tests block its task; it is taken up again on its next turn.
    assert_eq!(statuses(&h.engine, &run.id, "task_002"), [Pending, InProgress, Blocked, InProgress, Completed]);
    let revisions = h.engine.plan_revisions(&run.id).unwrap();
    let by = |actor: &str| revisions.iter().filter(|r| r.actor == actor).count();
    assert_eq!((by("agent:planner"), by("agent:tester")), (3, 1));
    assert!(revisions.iter().all(|r| !r.change_log.is_empty()), "every revision says what changed");
    assert!(revisions
        .iter()
        .any(|r| r.change_log.iter().any(|l| l.contains("task_002: status blocked -> in_progress"))));
    let progress: Vec<String> =
        h.turns(&run.id).iter().filter(|t| t.metadata["step"] == "plan_progress").map(|t| t.content.clone()).collect();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert!(progress[2].contains("Task `task_003` is completed by deployer"), "{progress:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_tool_mistakes_are_answered_to_the_agent_and_the_run_goes_on() {
    let tools = ["plan_read", "plan_add_task", "plan_update_task", "plan_assign_task", "plan_set_dependencies"];
    let scripted = script(vec![
        calls(
            "Planning.",
            &[
                ("plan_assign_task", json!({"task_id": "t1", "agent_name": "ghost"})),
                ("plan_update_task", json!({"task_id": "t1", "status": "done"})),
                ("plan_update_task", json!({"task_id": "nope", "status": "completed"})),
                ("plan_update_task", json!({"task_id": "t1", "metadata": {"kind": "deployment"}})),
                ("plan_update_task", json!({"task_id": "t1", "status": "in_progress"})),
                ("plan_set_dependencies", json!({"task_id": "t1", "dependencies": ["t1"]})),
                ("plan_add_task", json!({"description": "Write the docs", "assigned_agent": "d"})),
                ("plan_update_task", json!({"task_id": "t2", "status": "completed"})),
                ("plan_read", json!({})),
            ],
        ),
        calls("Built.", &[("handoff", json!({"destination_agent": "d", "reason": "built"}))]),
    ]);
    let h = Harness::with(vec![scripted.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Ship", "team": [
        {"name": "a", "role": "builder", "provider": "script", "model": "agent", "tools": tools},
        member("d", "deployer", &[]),
    ], "plan": {"human_intervention_points": ["before_deployment"], "tasks": [
        {"task_id": "t1", "description": "Build it", "assigned_agent": "a", "metadata": {"kind": "build"}},
        {"task_id": "t2", "description": "Deploy it", "assigned_agent": "a", "dependencies": ["t1"]}]}});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    h.status(&run.id, RunStatus::Completed).await;

    let told = scripted.calls()[1].payload.to_value().to_string();
    for expected in [
        "agent_name: no agent `ghost` in the team; the agents are a, d",
        "unknown variant `done`",
        "no task `nope` in the plan",
        "metadata.kind",
        "status: `in_progress` is set when the task's agent takes its turn",
        "task `t1` depends on itself",
        "status: task `t2` waits for a person before it runs (the task deploys, and the plan stops before deployment)",
        "added task_001 \\\"Write the docs\\\" (medium, assigned to d)",
        "\\\"task_id\\\":\\\"task_001\\\"",
    ] {
        assert!(told.contains(expected), "`{expected}` not told: {told}");
    }
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert_eq!(plan.task("t1").unwrap().metadata["kind"], "build", "the reviewer's field stays");
    assert_eq!(plan.task("t1").unwrap().status, TaskStatus::Completed);
    assert_eq!(plan.task("task_001").unwrap().status, TaskStatus::Completed, "the deployer's task, by its answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_under_on_error_is_retried_by_its_agent_as_a_person_decides() {
    let scripted = script(vec![
        calls("Broke.", &[("handoff", json!({"destination_agent": "d", "reason": "TASK FAILED: the build broke"}))]),
        calls("Built.", &[("handoff", json!({"destination_agent": "d", "reason": "built"}))]),
    ]);
    let h = Harness::with(vec![scripted.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Ship", "team": [
        {"name": "a", "role": "builder", "provider": "script", "model": "agent"},
        member("d", "deployer", &[]),
    ], "plan": {"human_intervention_points": ["on_error"],
                "tasks": [{"task_id": "t1", "description": "Build it", "assigned_agent": "a"}]}});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    let failed = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(failed.context.step.as_deref(), Some("task_error"));
    assert!(failed.text.contains("the build broke"), "{}", failed.text);
    let input = DecisionInput { text: Some("use the cache".into()), ..DecisionInput::new(DecisionAction::Retry) };
    h.decide(&failed, input);
    h.status(&run.id, RunStatus::Completed).await;

    let second = scripted.calls()[1].payload.to_value().to_string();
    assert!(second.contains("A reviewer asked you to retry your task `t1` (Build it): use the cache"), "{second}");
    let task = h.engine.plan(&run.id).unwrap().unwrap().plan.task("t1").cloned().unwrap();
    assert_eq!((task.status, task.metadata["attempt"].as_u64()), (TaskStatus::Completed, Some(1)));
    use TaskStatus::*;
    assert_eq!(statuses(&h.engine, &run.id, "t1"), [Pending, InProgress, Failed, InProgress, Completed]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_run_step_by_step_shows_each_handed_on_task_to_a_person_who_may_send_it_back() {
    let scripted = script(vec![
        calls("Built.", &[("handoff", json!({"destination_agent": "d", "reason": "built"}))]),
        calls("Built with the cache.", &[("handoff", json!({"destination_agent": "d", "reason": "built again"}))]),
    ]);
    let h = Harness::with(vec![scripted.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Ship", "team": [
        {"name": "a", "role": "builder", "provider": "script", "model": "agent"},
        member("d", "deployer", &[]),
    ], "plan": {"execution_mode": "step",
                "tasks": [{"task_id": "t1", "description": "Build it", "assigned_agent": "a"}]}});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    let before = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(before.context.step.as_deref(), Some("task_review"));
    h.decide(&before, DecisionInput::approve());

    // Handed on, the task waits for a person before it counts as done.
    let result = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(result.context.step.as_deref(), Some("task_result"));
    assert!(result.requires_human && result.text.contains("Task `t1` is done"), "{}", result.text);
    assert_eq!(h.engine.plan(&run.id).unwrap().unwrap().plan.task("t1").unwrap().status, TaskStatus::InProgress);
    let redo = DecisionInput { text: Some("use the cache".into()), ..DecisionInput::new(DecisionAction::Retry) };
    h.decide(&result, redo);

    // Its agent takes the turn back, told why; the second attempt is looked at too, then accepted.
    let again = h.gate(&run.id, GateKind::Approval).await;
    assert_eq!(again.context.step.as_deref(), Some("task_result"));
    assert_ne!(again.id, result.id);
    let second = scripted.calls()[1].payload.to_value().to_string();
    assert!(second.contains("A reviewer asked you to retry your task `t1` (Build it): use the cache"), "{second}");
    h.decide(&again, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    let task = h.engine.plan(&run.id).unwrap().unwrap().plan.task("t1").cloned().unwrap();
    assert_eq!((task.status, task.metadata["attempt"].as_u64()), (TaskStatus::Completed, Some(1)));
    assert_eq!(scripted.calls().len(), 2, "the builder was called once per attempt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_plan_is_checked_when_the_run_starts_and_when_a_reviewer_changes_it() {
    let h = Harness::new();
    let field = |e: StartError| match e {
        StartError::Spec(s) => s.field,
        other => panic!("not a spec error: {other}"),
    };
    let team = json!([member("a", "coder", &[]), member("b", "tester", &[])]);
    let start = |input: Value| {
        let orch = h.orch.clone();
        async move { orch.start(&input, NewRun::default(), "alice").await }
    };
    let ghost = json!({"prompt": "x", "team": team, "plan": {"tasks": [
        {"task_id": "t1", "description": "A", "assigned_agent": "a"},
        {"task_id": "t2", "description": "B", "assigned_agent": "ghost"}]}});
    assert_eq!(field(start(ghost).await.unwrap_err()), "plan.tasks[1].assigned_agent");
    let cycle = json!({"prompt": "x", "team": team, "plan": {"tasks": [
        {"task_id": "t1", "description": "A", "dependencies": ["t1"]}]}});
    assert_eq!(field(start(cycle).await.unwrap_err()), "plan");
    let alone = json!({"prompt": "x", "tool": "scripted:chat", "plan": {"tasks": []}});
    assert_eq!(field(start(alone).await.unwrap_err()), "plan");

    // A reviewer's change through the engine is checked against the team as it is now.
    let run = h.start(planned_story(), json!({})).await;
    h.gate(&run.id, GateKind::Approval).await;
    let op =
        serde_json::from_value(json!({"op": "assign_task", "task_id": "task_001", "agent_name": "ghost"})).unwrap();
    let refused = gatehouse_orchestrator::team::plan_tools::check_on_run(&h.engine, &run.id, &op).unwrap_err();
    assert!(matches!(&refused, EngineError::Invalid { field, .. } if field == "agent_name"), "{refused}");
    let op =
        serde_json::from_value(json!({"op": "assign_task", "task_id": "task_001", "agent_name": "tester"})).unwrap();
    gatehouse_orchestrator::team::plan_tools::check_on_run(&h.engine, &run.id, &op).unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn pending(engine: &Engine, run: &RunId, kind: GateKind) -> Option<gatehouse_engine::Gate> {
    let filter = GateFilter { run_id: Some(run.clone()), kind: Some(kind), ..GateFilter::pending() };
    engine.gates(&filter).unwrap().into_iter().next()
}

fn wait<T>(rt: &tokio::runtime::Runtime, engine: &Engine, run: &RunId, check: impl Fn(&Engine) -> Option<T>) -> T {
    let found = rt.block_on(until(engine, |e| Ok(check(e))));
    found.unwrap_or_else(|| panic!("{:#?}", common::history(engine, run)))
}

fn task_status(engine: &Engine, run: &RunId, task: &str) -> Option<TaskStatus> {
    engine.plan(run).ok()??.plan.task(task).map(|t| t.status)
}

#[test]
fn a_restarted_plan_task_runs_again_with_its_dependants_across_a_process_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    let input = json!({"tool": "script:agent", "prompt": "Publish the post",
        "collaborate": {"goal": false, "human_intervention_points": ["before_deployment"]}});
    let first = script(vec![
        Step::Reply("1. Gather notes\n2. Draft the post\n3. Deploy the post".into()),
        Step::Reply("notes v1".into()),
        Step::Reply("draft v1".into()),
        Step::Reply("never asked".into()),
    ]);
    let run = {
        let rt = runtime();
        let engine = open(&path);
        let (reg, _) = registry(vec![first.clone() as Arc<dyn Provider>]);
        let orch = Orchestrator::new(engine.clone(), reg);
        let run = rt.block_on(orch.start(&input, NewRun::default(), "alice")).unwrap();
        let plan = wait(&rt, &engine, &run.id, |e| pending(e, &run.id, GateKind::PlanReview));
        engine.resolve_gate(&plan.id, DecisionInput::approve(), "alice").unwrap();
        let deploy = wait(&rt, &engine, &run.id, |e| pending(e, &run.id, GateKind::Approval));
        assert_eq!(deploy.context.task_id.as_deref(), Some("task_003"));
        // Paused, the deployment approved: the run stops before the deployment's model call.
        engine.pause_run(&run.id, "alice").unwrap();
        engine.resolve_gate(&deploy.id, DecisionInput::approve(), "alice").unwrap();
        wait(&rt, &engine, &run.id, |e| {
            (task_status(e, &run.id, "task_003") == Some(TaskStatus::InProgress)).then_some(())
        });
        // A reviewer restarts the draft: it and the deployment depending on it go back to pending.
        let revision = engine.plan_restart_task(&run.id, "task_002", Some("shorter, please"), "alice").unwrap();
        let statuses: Vec<TaskStatus> = revision.plan.tasks.iter().map(|t| t.status).collect();
        assert_eq!(statuses, [TaskStatus::Completed, TaskStatus::Pending, TaskStatus::Pending]);
        assert!(
            revision.change_log.iter().any(|l| l.contains("task_003: status in_progress -> pending")),
            "{:?}",
            revision.change_log
        );
        rt.shutdown_background();
        assert_eq!(first.calls().len(), 3, "the plan, the notes and the first draft: the deployment never ran");
        run.id
    };

    let second = script(vec![Step::Reply("draft v2".into()), Step::Reply("deployed".into())]);
    let rt = runtime();
    let engine = open(&path);
    let (reg, _) = registry(vec![second.clone() as Arc<dyn Provider>]);
    let orch = Orchestrator::new(engine.clone(), reg);
    assert_eq!(rt.block_on(orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    engine.resume_run(&run, "alice").unwrap();
    // The deployment asks a person again: what it deploys changed since the approval.
    let again = wait(&rt, &engine, &run, |e| pending(e, &run, GateKind::Approval));
    assert_eq!(again.context.task_id.as_deref(), Some("task_003"));
    assert_eq!(second.calls().len(), 1, "the draft ran again before the deployment's gate");
    engine.resolve_gate(&again.id, DecisionInput::approve(), "alice").unwrap();
    wait(&rt, &engine, &run, |e| e.run(&run).ok().filter(|r| r.status == RunStatus::Completed));

    let asked = second.calls();
    assert_eq!(asked.len(), 2, "the draft and the deployment, once each");
    assert!(
        asked[0].payload.to_value().to_string().contains("shorter, please"),
        "the restart's instruction is the draft's feedback"
    );
    let plan = engine.plan(&run).unwrap().unwrap().plan;
    let outputs: Vec<&str> = plan.tasks.iter().map(|t| t.metadata["output"].as_str().unwrap_or("")).collect();
    assert_eq!(outputs, ["notes v1", "draft v2", "deployed"]);
    assert_eq!(plan.task("task_002").unwrap().metadata["attempt"], 1);
    rt.shutdown_background();
}
