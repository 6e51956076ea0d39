//! A reviewer's restart of a task on a plan collaboration run
//! (`POST /runs/{id}/restart-task` with `task_id`): the engine puts the
//! task and every task depending on it back to `pending` as one revision
//! (`Engine::plan_restart_task`, a new attempt for each that had started),
//! and the approved plan's execution (`execution.rs`) runs them again in
//! plan order, each attempt keyed `task:ID:tryN` so nothing journaled for
//! an earlier attempt is replayed. A task under way when the restart comes
//! finishes its model call; its answer is then dropped ([`dropped`]) and
//! the task runs again from its gate.

use gatehouse_engine::Run;
use serde_json::json;

use crate::driver::{Driver, Step};
use crate::execution::{attempt_of, task_now};
use crate::spec::RunSpec;
use crate::Orchestrator;

/// Whether `run` is a plan collaboration run Gatehouse drives: one whose
/// tasks a reviewer may restart by id.
pub fn restarts_plan_tasks(run: &Run) -> bool {
    if !Orchestrator::drives(run) {
        return false;
    }
    let spec = serde_json::from_value::<RunSpec>(run.input.clone()).ok();
    spec.is_some_and(|s| s.team.is_none() && s.collaborate.is_some_and(|c| c.plan))
}

/// After attempt `attempt` of `task_id` answered under `key`: true when a
/// reviewer restarted the task meanwhile (its attempt moved on), noted on
/// the timeline, so the answer is dropped and the task runs again.
pub(crate) async fn dropped(d: &mut Driver, task_id: &str, attempt: u64, key: &str) -> Step<bool> {
    let (_, now) = task_now(d, task_id).await?;
    if attempt_of(&now) == attempt {
        return Ok(false);
    }
    note_dropped(d, task_id, key).await?;
    Ok(true)
}

/// Notes on the timeline that attempt `key` of `task_id` was dropped for
/// a reviewer's restart.
pub(crate) async fn note_dropped(d: &mut Driver, task_id: &str, key: &str) -> Step<()> {
    let content =
        format!("Task `{task_id}` was restarted by a reviewer while it ran: its answer is dropped and it runs again.");
    d.note(&format!("{key}:restarted"), content, json!({"step": "task_restart", "task_id": task_id})).await
}

/// After a task's gate: true when a reviewer's restart meanwhile put a
/// task it depends on back (it waits for it again; the outer loop picks
/// the task to run next).
pub(crate) async fn waits_again(d: &Driver, task_id: &str) -> Step<bool> {
    let (plan, task) = task_now(d, task_id).await?;
    let done = |id: &String| plan.task(id).is_some_and(|t| t.status.is_done());
    // Only a pending task: the outer loop picks a running one first, whatever it waits for.
    Ok(task.status == gatehouse_engine::plan::TaskStatus::Pending && !task.dependencies.iter().all(done))
}
