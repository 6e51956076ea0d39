//! A reviewer's change of one task of a running plan (a new description,
//! given at a task's review gate), for plan and team runs alike. Read and
//! written in one transaction (`Engine::plan_revise`): the run's agents and
//! other reviewers change the plan meanwhile, and a whole-plan edit built
//! from a plan read a moment earlier would undo what they committed between.

use gatehouse_engine::plan::{Plan, PlanOperation, PlanRevision};
use gatehouse_engine::{Engine, EngineError, RunId};

/// Gives `task_id` the description `description` as a revision by `by`;
/// the plan's newest revision (unchanged when the task is not in it).
pub fn describe_task(
    engine: &Engine,
    run_id: &RunId,
    task_id: &str,
    description: String,
    by: &str,
) -> Result<Option<PlanRevision>, EngineError> {
    let task_id = task_id.to_owned();
    engine.plan_revise(run_id, by, move |plan| described(plan?, &task_id, description))
}

/// The whole-plan edit that gives `task_id` its new description, made from
/// the plan as the transaction reads it; `None` when there is nothing to change.
fn described(plan: &Plan, task_id: &str, description: String) -> Option<PlanOperation> {
    let mut plan = plan.clone();
    let task = plan.tasks.iter_mut().find(|t| t.task_id == task_id)?;
    if task.description == description {
        return None;
    }
    task.description = description;
    Some(PlanOperation::Replace { plan })
}
