//! `runs restart-task RUN [--agent NAME] [--instruction TEXT]`: a reviewer
//! sends an agent of a live team run (or the one holding the turn) back to
//! redo its turn, with an optional instruction. Through the server, which
//! refuses agent tokens and records the reviewer's identity on the run.

use anyhow::Result;
use serde_json::{json, Value};

use crate::client::Api;
use crate::out::outln;

/// `POST /runs/{id}/restart-task`.
pub fn restart_task(api: &Api, run_id: &str, agent: Option<&str>, instruction: Option<&str>) -> Result<()> {
    let _: Value = api.post(&["runs", run_id, "restart-task"], &json!({"agent": agent, "instruction": instruction}))?;
    let who = agent.map(str::to_owned).unwrap_or_else(|| "the agent holding the turn".to_owned());
    outln!("{who} goes back to redo its turn on run {run_id} (taken at the team's next step)");
    Ok(())
}
