//! The plan tools of team runs: `plan_read`, `plan_add_task`,
//! `plan_update_task`, `plan_assign_task`, `plan_estimate_duration` and
//! `plan_set_dependencies`, offered to an agent whose role is granted them.
//! Every change is the engine's plan operation through
//! `Engine::plan_apply_by_agent`, so it is a plan revision with its change
//! log (its actor `agent:NAME`), and it may never change how people review
//! the plan (its execution mode, intervention points, a task's `kind` or
//! `intervention_point`). Besides that guard, a task is assigned only to a
//! member of the team as it is now, the loop's own bookkeeping
//! (`in_progress`, `metadata.attempt`, see `plan_progress.rs`) is not an
//! agent's to set, and a task the plan stops before is never `completed`
//! or `skipped` by an agent before it passed its gate. A refused call is answered to the agent, naming what was
//! wrong; it never fails the run. Journaled like every tool call
//! (`team:N:tool:I`), so a restart never applies a change twice.

use gatehouse_engine::plan::{Plan, PlanOperation, TaskStatus};
use gatehouse_engine::{Engine, EngineError, RunId};
use serde_json::{json, Map, Value};

use crate::driver::{Driver, Record, Step};
use crate::spec::SpecError;

use super::tools::{BuiltinTool, ToolCall};
use super::{Team, TeamAgent};

/// Metadata keys the team loop keeps for itself.
const LOOP_KEYS: [&str; 1] = ["attempt"];

/// Whether `tool` is one of the plan tools.
pub(crate) fn is_plan_tool(tool: BuiltinTool) -> bool {
    matches!(
        tool,
        BuiltinTool::PlanRead
            | BuiltinTool::PlanAddTask
            | BuiltinTool::PlanUpdateTask
            | BuiltinTool::PlanAssignTask
            | BuiltinTool::PlanEstimateDuration
            | BuiltinTool::PlanSetDependencies
    )
}

/// The actor of an agent's plan revisions: never a person's name.
pub fn actor(agent: &str) -> String {
    format!("agent:{agent}")
}

/// Answers a plan tool's call under `key`, journaled as the tool's turn.
pub(crate) async fn call(
    d: &mut Driver,
    tool: BuiltinTool,
    team: &Team,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
) -> Step<String> {
    let meta = json!({"tool_name": call.name, "args": call.args});
    let h = d.handle();
    let operation = operation(tool, &call.args, team);
    let actor = actor(&agent.name);
    d.step(key, "tool_call", || async move {
        let answer = match operation {
            Err(refusal) => format!("`{}` refused: {refusal}", call.name),
            Ok(None) => {
                let id = h.run_id.clone();
                let plan = h.engine(move |e| e.plan(&id)).await?;
                read_answer(plan.map(|r| (r.revision, r.plan)))
            }
            Ok(Some(op)) => {
                let id = h.run_id.clone();
                // Checked in the write's own transaction: a gate a person set meanwhile holds.
                let applied = h
                    .engine(move |e| {
                        refusable(e.plan_apply_by_agent_unless(&id, op, &actor, ungated)).map(|r| r.and_then(|a| a))
                    })
                    .await?;
                match applied {
                    Ok(revision) if revision.change_log.is_empty() => {
                        format!("the plan is unchanged (revision {})", revision.revision)
                    }
                    Ok(revision) => {
                        format!("plan revision {}: {}", revision.revision, revision.change_log.join("; "))
                    }
                    Err(refusal) => format!("`{}` refused: {refusal}", call.name),
                }
            }
        };
        let content = format!("**{}** called `{}`: {answer}", agent.name, call.name);
        Ok(Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name)))
    })
    .await
}

/// An engine error the agent is told (a refused change) as `Ok(Err)`;
/// anything else (storage, a run that ended) stays the driver's.
fn refusable<T>(result: Result<T, EngineError>) -> Result<Result<T, String>, EngineError> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e @ (EngineError::Plan(_) | EngineError::Weakens { .. } | EngineError::Invalid { .. })) => {
            Ok(Err(e.to_string()))
        }
        Err(other) => Err(other),
    }
}

fn read_answer(plan: Option<(u32, Plan)>) -> String {
    match plan {
        None => "the run has no plan yet; `plan_add_task` starts one".to_owned(),
        Some((revision, plan)) => {
            let shown = serde_json::to_string(&plan).unwrap_or_default();
            format!("plan revision {revision}: {shown}")
        }
    }
}

/// The plan operation a call asks for (`None` for `plan_read`), or why it is refused.
fn operation(tool: BuiltinTool, args: &Value, team: &Team) -> Result<Option<PlanOperation>, String> {
    let (op, mut fields) = match tool {
        BuiltinTool::PlanRead => return Ok(None),
        BuiltinTool::PlanAddTask => ("add_task", args_object(args)?),
        BuiltinTool::PlanUpdateTask => ("update_task", args_object(args)?),
        BuiltinTool::PlanAssignTask => ("assign_task", args_object(args)?),
        BuiltinTool::PlanEstimateDuration => ("estimate_duration", args_object(args)?),
        BuiltinTool::PlanSetDependencies => ("set_dependencies", args_object(args)?),
        _ => return Err("not a plan tool".to_owned()),
    };
    // `task_id` is the plan's to give on `plan_add_task` (the next `task_NNN`).
    if tool == BuiltinTool::PlanAddTask {
        fields.remove("task_id");
    }
    fields.insert("op".into(), Value::from(op));
    let op: PlanOperation = serde_json::from_value(Value::Object(fields)).map_err(|e| format!("arguments: {e}"))?;
    loop_fields(&op)?;
    check_assignment(team, &op).map_err(|e| format!("{}: {}", e.field, e.message))?;
    Ok(Some(op))
}

fn args_object(args: &Value) -> Result<Map<String, Value>, String> {
    match args {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        _ => Err("arguments must be an object".to_owned()),
    }
}

/// Refuses what the team loop sets itself: a task's `in_progress` (its
/// agent's turn starts it) and its `metadata.attempt`.
fn loop_fields(op: &PlanOperation) -> Result<(), String> {
    let PlanOperation::UpdateTask { status, metadata, .. } = op else {
        return Ok(());
    };
    if *status == Some(TaskStatus::InProgress) {
        return Err("status: `in_progress` is set when the task's agent takes its turn".to_owned());
    }
    match LOOP_KEYS.iter().find(|k| metadata.contains_key(**k)) {
        Some(key) => Err(format!("metadata.{key}: kept by Gatehouse, not an agent")),
        None => Ok(()),
    }
}

/// Refuses an agent's `completed` or `skipped` for a task not started that
/// the plan stops before (its gate of `task_gates.rs`): such a task starts
/// only through its gate, at its agent's turn.
fn ungated(plan: &Plan, op: &PlanOperation) -> Option<String> {
    let PlanOperation::UpdateTask {
        task_id, status: Some(status @ (TaskStatus::Completed | TaskStatus::Skipped)), ..
    } = op
    else {
        return None;
    };
    let task = plan.task(task_id).filter(|t| matches!(t.status, TaskStatus::Pending | TaskStatus::Blocked))?;
    let reasons = crate::task_gates::reasons_before(plan, task);
    let status = serde_json::to_value(status).ok()?;
    (!reasons.is_empty()).then(|| {
        format!(
            "status: task `{task_id}` waits for a person before it runs ({}); it is not {} without its gate",
            reasons.join("; "),
            status.as_str().unwrap_or_default()
        )
    })
}

/// Checks that every agent `op` assigns a task to is on `team`; the error
/// names the field (`assigned_agent`, `agent_name`, `plan.tasks[I].assigned_agent`).
pub fn check_assignment(team: &Team, op: &PlanOperation) -> Result<(), SpecError> {
    let unknown = |field: String, name: &str| -> Result<(), SpecError> {
        if team.agent(name).is_some() {
            return Ok(());
        }
        let message = format!("no agent `{name}` in the team; the agents are {}", team.names().join(", "));
        Err(SpecError { field, message })
    };
    match op {
        PlanOperation::AddTask { assigned_agent: Some(name), .. } => unknown("assigned_agent".into(), name),
        PlanOperation::AssignTask { agent_name, .. } => unknown("agent_name".into(), agent_name),
        PlanOperation::Replace { plan } => check_plan(team, plan, "plan"),
        _ => Ok(()),
    }
}

/// Checks a plan operation on `run_id` against its team as it is now (the
/// reviewers' and agents' changes applied): a task assigned to someone
/// off the team is `Invalid`, naming the field. Runs without a team pass.
pub fn check_on_run(e: &Engine, run_id: &RunId, op: &PlanOperation) -> Result<(), EngineError> {
    let run = e.run(run_id)?;
    let Some(start) = super::view::team_of(&run) else {
        return Ok(());
    };
    let team = super::change::current(&start, &e.turns(run_id)?);
    check_assignment(&team, op).map_err(|s| EngineError::Invalid { field: s.field, reason: s.message })
}

/// Checks every task's `assigned_agent` against `team`, naming `PREFIX.tasks[I].assigned_agent`.
pub fn check_plan(team: &Team, plan: &Plan, prefix: &str) -> Result<(), SpecError> {
    for (i, task) in plan.tasks.iter().enumerate() {
        if let Some(name) = task.assigned_agent.as_deref().filter(|n| team.agent(n).is_none()) {
            return Err(SpecError {
                field: format!("{prefix}.tasks[{i}].assigned_agent"),
                message: format!("no agent `{name}` in the team; the agents are {}", team.names().join(", ")),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn team() -> Team {
        let agents =
            ["coder", "tester"].map(|n| json!({"name": n, "role": n, "provider": "scripted", "model": "chat"}));
        let registry = gatehouse_providers::ProviderRegistry::from_lookup(|_| None).unwrap();
        super::super::parse(&json!(agents), &registry).unwrap()
    }

    #[test]
    fn calls_become_plan_operations() {
        let t = team();
        let add = operation(
            BuiltinTool::PlanAddTask,
            &json!({"description": "Test", "assigned_agent": "tester", "task_id": "x"}),
            &t,
        );
        let Ok(Some(PlanOperation::AddTask { task_id, assigned_agent, .. })) = add else { panic!("{add:?}") };
        assert_eq!((task_id, assigned_agent.as_deref()), (None, Some("tester")));
        assert_eq!(operation(BuiltinTool::PlanRead, &Value::Null, &t), Ok(None));
    }

    #[test]
    fn mistakes_are_answered_naming_what_was_wrong() {
        let t = team();
        let err = |tool, args: Value| operation(tool, &args, &t).unwrap_err();
        assert!(err(BuiltinTool::PlanAssignTask, json!({"task_id": "a", "agent_name": "nobody"}))
            .starts_with("agent_name: no agent `nobody` in the team; the agents are coder, tester"));
        assert!(err(BuiltinTool::PlanUpdateTask, json!({"task_id": "a", "status": "done"}))
            .contains("unknown variant `done`"));
        assert!(
            err(BuiltinTool::PlanUpdateTask, json!({"task_id": "a", "status": "in_progress"})).starts_with("status:")
        );
        assert!(err(BuiltinTool::PlanUpdateTask, json!({"task_id": "a", "metadata": {"attempt": 3}}))
            .starts_with("metadata.attempt:"));
        assert_eq!(err(BuiltinTool::PlanEstimateDuration, json!("10m")), "arguments must be an object");
        let plan: Plan = serde_json::from_value(json!({"tasks": [
            {"task_id": "a", "description": "A", "assigned_agent": "coder"},
            {"task_id": "b", "description": "B", "assigned_agent": "ghost"}]}))
        .unwrap();
        assert_eq!(
            check_plan(&t, &plan, "run_input.plan").unwrap_err().field,
            "run_input.plan.tasks[1].assigned_agent"
        );
    }
}
