//! `runs show`, `runs start|pause|resume|cancel|retry` (and `runs list`, in
//! [`crate::listing`]; `runs team` and `runs next-agent`, in [`crate::runs_team`]): a run's state summarised for a terminal, and the
//! reviewer's run controls. All go through the server, which records the
//! token's identity and tells everyone watching the run.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::Utc;
use clap::Subcommand;
use gatehouse_engine::{Gate, Run, Turn};
use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use crate::client::Api;
use crate::listing::RunsListArgs;
use crate::out::outln;
use crate::table::{age, short, snake, Table};

/// The `runs` subcommands.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Newest runs first.
    List(RunsListArgs),
    /// One run: status, progress, gates and decisions, plan, context and latest turns.
    Show {
        /// The run (`run_...`, as `runs list` shows it).
        run_id: String,
    },
    /// Start a run created without starting (`"start": false`): a reviewer's, an admin's or its own agent's token.
    Start {
        /// The run.
        run_id: String,
    },
    /// Pause an active or waiting run (reviewer or admin token).
    Pause {
        /// The run.
        run_id: String,
    },
    /// Resume a paused run (reviewer or admin token).
    Resume {
        /// The run.
        run_id: String,
    },
    /// Try a failed or cancelled run again from its last good step (reviewer or admin token).
    Retry {
        /// The run.
        run_id: String,
    },
    /// A team run's team, who holds the turn, its handoffs and memory; with a
    /// change, a reviewer adds, removes or reassigns an agent first.
    Team {
        /// The run.
        run_id: String,
        /// The change (none: just show the team).
        #[command(subcommand)]
        change: Option<crate::runs_team::TeamChange>,
    },
    /// Choose the agent that acts next, or withdraw the choice (reviewer or admin token).
    NextAgent {
        /// The run.
        run_id: String,
        /// The agent; none withdraws an earlier choice.
        agent: Option<String>,
    },
    /// Send an agent of a live team run back to redo its turn, or restart a
    /// plan collaboration run's task (`--task`), with an optional
    /// instruction (reviewer or admin token).
    RestartTask {
        /// The run.
        run_id: String,
        /// The agent (none: the agent holding the turn).
        #[arg(long, conflicts_with = "task")]
        agent: Option<String>,
        /// A plan collaboration run's task (its tasks depending on it restart too).
        #[arg(long, value_name = "TASK_ID")]
        task: Option<String>,
        /// What the agent is told as it redoes its turn.
        #[arg(long, value_name = "TEXT")]
        instruction: Option<String>,
    },
    /// Tell a live run's agents something: held until one asks for its next directive (reviewer or admin token).
    Instruct {
        /// The run.
        run_id: String,
        /// What to tell them (markdown).
        text: String,
    },
    /// Set how a live run steps: continuous, step (pause after every agent turn) or breakpoint (reviewer or admin token).
    Control {
        /// The run.
        run_id: String,
        /// continuous, step or breakpoint.
        #[arg(value_parser = ["continuous", "step", "breakpoint"])]
        mode: String,
        /// A breakpoint (repeat for several): tool_call[:TOOL], handoff[:AGENT], error, agent:NAME or step:NAME.
        #[arg(long = "break-on", value_name = "SPEC")]
        break_on: Vec<String>,
    },
    /// Let a paused run go on for one agent turn (reviewer or admin token).
    Step {
        /// The run.
        run_id: String,
    },
    /// Apply one plan operation, JSON as `POST /runs/{id}/plan` takes it:
    /// '{"op": "add_task", "description": "..."}', update_task, assign_task,
    /// estimate_duration, set_dependencies or replace.
    Plan {
        /// The run.
        run_id: String,
        /// The operation.
        op: String,
    },
    /// Cancel a run and withdraw its pending gates (reviewer or admin token).
    Cancel {
        /// The run.
        run_id: String,
        /// Recorded as the run's status reason.
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
    },
}

/// `GET /run/{id}/state`; the plan and progress are read loosely, for display only.
#[derive(Debug, Deserialize)]
struct RunState {
    run: Run,
    turns: Vec<Turn>,
    gates: Vec<Gate>,
    context: BTreeMap<String, Value>,
    plan: Option<Value>,
    progress: Value,
}

/// How many of the latest turns `runs show` prints.
const TURNS_SHOWN: usize = 5;

/// Runs a `runs` subcommand.
pub fn run(api: &Api, command: &RunsCommand) -> Result<()> {
    let (run, verb): (Run, &str) = match command {
        RunsCommand::List(args) => return crate::listing::runs(api, args),
        RunsCommand::Show { run_id } => return show(api, run_id),
        RunsCommand::Team { run_id, change } => return crate::runs_team::team(api, run_id, change.as_ref()),
        RunsCommand::NextAgent { run_id, agent } => return crate::runs_team::next_agent(api, run_id, agent.as_deref()),
        RunsCommand::RestartTask { run_id, agent, task, instruction } => {
            let which = crate::runs_restart::Which { agent: agent.as_deref(), task: task.as_deref() };
            return crate::runs_restart::restart_task(api, run_id, which, instruction.as_deref());
        }
        RunsCommand::Instruct { run_id, text } => return crate::runs_steer::instruct(api, run_id, text),
        RunsCommand::Control { run_id, mode, break_on } => {
            return crate::runs_steer::control(api, run_id, mode, break_on)
        }
        RunsCommand::Step { run_id } => return crate::runs_steer::step(api, run_id),
        RunsCommand::Plan { run_id, op } => return crate::runs_steer::plan(api, run_id, op),
        RunsCommand::Start { run_id } => (api.send(api.request(Method::POST, &["run", run_id, "start"]))?, "started"),
        RunsCommand::Retry { run_id } => (api.send(api.request(Method::POST, &["run", run_id, "retry"]))?, "retried"),
        RunsCommand::Pause { run_id } => (api.send(api.request(Method::POST, &["run", run_id, "pause"]))?, "paused"),
        RunsCommand::Resume { run_id } => (api.send(api.request(Method::POST, &["run", run_id, "resume"]))?, "resumed"),
        RunsCommand::Cancel { run_id, reason } => {
            let mut request = api.request(Method::DELETE, &["run", run_id]);
            if let Some(reason) = reason {
                request = request.query(&[("reason", reason)]);
            }
            (api.send(request)?, "cancelled")
        }
    };
    outln!("{verb} run {} \"{}\": now {}", run.id, short(&run.title, 60), run.status.as_str());
    Ok(())
}

fn show(api: &Api, run_id: &str) -> Result<()> {
    let state: RunState = api.get(&["run", run_id, "state"])?;
    let (run, now) = (&state.run, Utc::now());
    outln!("Run {} \"{}\"", run.id, run.title);
    let status = match &run.status_reason {
        Some(reason) => format!("{} ({reason})", run.status.as_str()),
        None => run.status.as_str().to_owned(),
    };
    field("status", &status);
    field("agent", &run.agent);
    if let Some(user) = &run.user_id {
        field("user", user);
    }
    if let Some(session) = &run.session_id {
        field("session", session);
    }
    field("created", &format!("{} ago, last changed {} ago", age(run.created_at, now), age(run.updated_at, now)));
    let count = |key: &str| state.progress.get(key).and_then(Value::as_u64).unwrap_or(0);
    let progress_status = state.progress.get("status").and_then(Value::as_str).unwrap_or("?");
    field("progress", &format!("{} of {} done ({progress_status})", count("completed"), count("total")));
    field("policy", &snake(&run.hitl_config.run_policy));
    if !run.input.is_null() {
        field("input", &short(&run.input.to_string(), 100));
    }
    if let Some(result) = &run.result {
        field("result", &short(&result.to_string(), 100));
    }

    outln!("\nGates ({}):", state.gates.len());
    if state.gates.is_empty() {
        outln!("  none");
    } else {
        let mut table = Table::new(&["id", "kind", "status", "decision", "preview"]);
        for gate in &state.gates {
            let decision = match &gate.decision {
                Some(d) => format!("{} by {}", d.action.as_str(), d.decided_by),
                None => gate.status_reason.as_deref().map(|r| short(r, 40)).unwrap_or_else(|| "-".into()),
            };
            table.row(vec![
                gate.id.to_string(),
                gate.kind().as_str().to_owned(),
                gate.status.as_str().to_owned(),
                decision,
                gate.preview(),
            ]);
        }
        table.print("  ");
    }

    if let Some(plan) = &state.plan {
        plan_section(plan);
    }
    if !state.context.is_empty() {
        outln!("\nContext:");
        for (key, value) in &state.context {
            outln!("  {key} = {}", short(&value.to_string(), 90));
        }
    }
    let skipped = state.turns.len().saturating_sub(TURNS_SHOWN);
    outln!("\nTurns ({}{}):", state.turns.len(), if skipped > 0 { ", the latest shown" } else { "" });
    if state.turns.is_empty() {
        outln!("  none");
    }
    for turn in &state.turns[skipped..] {
        outln!("  #{} {} {}: {}", turn.index, snake(&turn.role), turn.actor, short(&turn.content, 90));
    }
    Ok(())
}

/// The current plan's tasks, one line each.
fn plan_section(plan: &Value) {
    let revision = plan.get("revision").and_then(Value::as_u64).unwrap_or(0);
    let tasks = plan.pointer("/plan/tasks").and_then(Value::as_array).cloned().unwrap_or_default();
    outln!("\nPlan (revision {revision}, {} tasks):", tasks.len());
    let text = |task: &Value, key: &str| task.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut table = Table::new(&["task", "status", "agent", "description"]);
    for task in &tasks {
        table.row(vec![
            text(task, "task_id"),
            text(task, "status"),
            task.get("assigned_agent").and_then(Value::as_str).unwrap_or("-").to_owned(),
            short(&text(task, "description"), 70),
        ]);
    }
    if !table.is_empty() {
        table.print("  ");
    }
}

fn field(label: &str, value: &str) {
    outln!("  {label:<9} {value}");
}
