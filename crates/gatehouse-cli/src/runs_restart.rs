//! `runs restart-task RUN [--agent NAME | --task TASK_ID] [--instruction TEXT]`:
//! a reviewer sends an agent of a live team run (or the one holding the
//! turn) back to redo its turn, or restarts a plan collaboration run's
//! task with the tasks depending on it, with an optional instruction.
//! Through the server, which refuses agent tokens and records the
//! reviewer's identity on the run.

use anyhow::Result;
use serde_json::{json, Value};

use crate::client::Api;
use crate::out::outln;

/// What is restarted: a team agent's turn, or a plan task.
pub struct Which<'a> {
    /// The team agent (none: the agent holding the turn).
    pub agent: Option<&'a str>,
    /// The plan collaboration run's task.
    pub task: Option<&'a str>,
}

/// `POST /runs/{id}/restart-task`.
pub fn restart_task(api: &Api, run_id: &str, which: Which<'_>, instruction: Option<&str>) -> Result<()> {
    let body = json!({"agent": which.agent, "task_id": which.task, "instruction": instruction});
    let answer: Value = api.post(&["runs", run_id, "restart-task"], &body)?;
    if let Some(task) = which.task {
        let revision = answer["revision"].as_u64().unwrap_or_default();
        outln!(
            "task {task} and the tasks depending on it go back to pending on run {run_id} (plan revision {revision})"
        );
        return Ok(());
    }
    let who = which.agent.map(str::to_owned).unwrap_or_else(|| "the agent holding the turn".to_owned());
    outln!("{who} goes back to redo its turn on run {run_id} (taken at the team's next step)");
    Ok(())
}
