//! `runs team RUN` (the team, who holds the turn, the handoffs, parallel
//! work, team changes, a pattern run's workflow, the proposals with their
//! votes, and the memory), `runs team RUN add|remove|update ...` (a reviewer changes the
//! team; its sub-team changes are [`crate::runs_sub_team`]) and `runs next-agent RUN [AGENT]` (a reviewer chooses who acts
//! next). All through the server, which records the token's identity.

use anyhow::Result;
use clap::Subcommand;
use reqwest::Method;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::client::Api;
use crate::out::outln;
use crate::table::{short, Table};

/// A reviewer's change to a running team.
#[derive(Debug, Subcommand)]
pub enum TeamChange {
    /// Add an agent (last in the team).
    Add {
        /// Its name.
        name: String,
        /// What it does.
        #[arg(long)]
        role: String,
        /// The registry's provider (`scripted`, `openai`...).
        #[arg(long)]
        provider: String,
        /// The provider's model (`chat`, `gpt-4o-mini`...).
        #[arg(long)]
        model: String,
        /// A built-in tool its role may use besides `handoff` (repeat for several).
        #[arg(long = "tool", value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// Remove an agent.
    Remove {
        /// Its name.
        name: String,
    },
    /// Reassign an agent: a new role, provider, model or tools.
    Update {
        /// Its name.
        name: String,
        /// Its new role.
        #[arg(long)]
        role: Option<String>,
        /// Its new provider.
        #[arg(long)]
        provider: Option<String>,
        /// Its new model.
        #[arg(long)]
        model: Option<String>,
        /// Its new built-in tools (repeat for several; replaces the list).
        #[arg(long = "tool", value_name = "TOOL")]
        tools: Vec<String>,
    },
    /// A named sub-team's change (`create-team`, `modify-team`, `dissolve-team`).
    #[command(flatten)]
    SubTeam(crate::runs_sub_team::SubTeamChange),
}

/// `GET /runs/{id}/team`, read for display.
#[derive(Debug, Deserialize)]
struct TeamState {
    agents: Vec<Value>,
    active: String,
    handoffs: Vec<Value>,
    memory: Vec<Value>,
    memory_history: Vec<Value>,
    #[serde(default)]
    changes: Vec<Value>,
    #[serde(default)]
    parallel: Vec<Value>,
    #[serde(default)]
    proposals: Vec<Value>,
    #[serde(default)]
    workflow: Option<Value>,
    #[serde(default)]
    sub_teams: Vec<Value>,
}

/// `runs team RUN [CHANGE]`: shows the team, after changing it when asked.
pub fn team(api: &Api, run_id: &str, change: Option<&TeamChange>) -> Result<()> {
    let state: TeamState = match change {
        None => api.get(&["runs", run_id, "team"])?,
        Some(change) => {
            let state = api.post(&["runs", run_id, "team"], &body(change)?)?;
            outln!("{}", done(change));
            state
        }
    };
    print(&state);
    Ok(())
}

/// `runs next-agent RUN [AGENT]`: chooses who acts next (none withdraws the choice).
pub fn next_agent(api: &Api, run_id: &str, agent: Option<&str>) -> Result<()> {
    let request = api.request(Method::PUT, &["runs", run_id, "next-agent"]).json(&json!({"agent": agent}));
    let _: Value = api.send(request)?;
    match agent {
        Some(agent) => outln!("{agent} acts next on run {run_id}"),
        None => outln!("next-agent choice withdrawn on run {run_id}"),
    }
    Ok(())
}

fn body(change: &TeamChange) -> Result<Value> {
    Ok(match change {
        TeamChange::Add { name, role, provider, model, tools } => json!({"action": "add",
            "agent": {"name": name, "role": role, "provider": provider, "model": model, "tools": tools}}),
        TeamChange::Remove { name } => json!({"action": "remove", "name": name}),
        TeamChange::Update { name, role, provider, model, tools } => {
            let mut body = Map::new();
            body.insert("action".into(), json!("update"));
            body.insert("name".into(), json!(name));
            for (key, value) in [("role", role), ("provider", provider), ("model", model)] {
                if let Some(v) = value {
                    body.insert(key.into(), json!(v));
                }
            }
            if !tools.is_empty() {
                body.insert("tools".into(), json!(tools));
            }
            Value::Object(body)
        }
        TeamChange::SubTeam(sub) => crate::runs_sub_team::body(sub)?,
    })
}

fn done(change: &TeamChange) -> String {
    match change {
        TeamChange::Add { name, .. } => format!("added {name} (the team takes it at its next turn)"),
        TeamChange::Remove { name } => format!("removed {name} (the team takes it at its next turn)"),
        TeamChange::Update { name, .. } => format!("reassigned {name} (the team takes it at its next turn)"),
        TeamChange::SubTeam(sub) => crate::runs_sub_team::done(sub),
    }
}

fn print(state: &TeamState) {
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    outln!("Team ({} agents), {} holds the turn:", state.agents.len(), state.active);
    let mut table = Table::new(&["agent", "role", "model", "tools"]);
    for a in &state.agents {
        let tools: Vec<&str> = a["tools"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let marked = if text(a, "name") == state.active { format!("{} *", text(a, "name")) } else { text(a, "name") };
        table.row(vec![marked, short(&text(a, "role"), 40), text(a, "tool"), tools.join(", ")]);
    }
    table.print("  ");
    outln!("\nHandoffs ({}):", state.handoffs.len());
    for h in &state.handoffs {
        let turn = h["turn"].as_u64().unwrap_or(0);
        outln!("  #{turn} {} -> {}: {}", text(h, "from"), text(h, "to"), short(&text(h, "reason"), 70));
    }
    for g in &state.parallel {
        let sync = if g["synced"] == true { "passed" } else { "waiting" };
        outln!("\nParallel work by {} ({}), sync point {sync}:", text(g, "lead"), text(g, "strategy"));
        for b in g["branches"].as_array().into_iter().flatten() {
            outln!(
                "  {} [{}] {}: {}",
                text(b, "agent"),
                text(b, "status"),
                short(&text(b, "task"), 40),
                text(b, "run_id")
            );
        }
    }
    if !state.changes.is_empty() {
        outln!("\nTeam changes ({}):", state.changes.len());
        for c in &state.changes {
            outln!(
                "  #{} {} ({}): {}",
                c["turn"].as_u64().unwrap_or(0),
                text(c, "by"),
                text(c, "by_kind"),
                text(c, "description")
            );
        }
    }
    crate::runs_sub_team::print(&state.sub_teams);
    if let Some(flow) = &state.workflow {
        print_workflow(flow);
    }
    print_proposals(&state.proposals);
    outln!("\nMemory ({} keys, {} changes):", state.memory.len(), state.memory_history.len());
    for m in &state.memory {
        outln!(
            "  {}:{} = {} (by {})",
            text(m, "scope"),
            text(m, "key"),
            short(&m["value"].to_string(), 70),
            text(m, "by")
        );
    }
}

fn text_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_owned()
}

/// A pattern run's workflow: where it stands and every move so far.
fn print_workflow(flow: &Value) {
    let at = match flow["current"].as_str() {
        Some(step) => format!("at {step}"),
        None => text_of(flow, "state").replace('_', " "),
    };
    outln!("\nWorkflow {} ({at}):", text_of(flow, "name"));
    for step in flow["steps"].as_array().into_iter().flatten() {
        let exits: Vec<String> = step["exits"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| format!("{} -> {}", text_of(x, "outcome"), x["to"].as_str().unwrap_or("end")))
            .collect();
        let here = if flow["current"] == step["step"] { " *" } else { "" };
        outln!(
            "  {}{here} ({}, {}): {}",
            text_of(step, "step"),
            text_of(step, "agent"),
            text_of(step, "kind"),
            exits.join(", ")
        );
    }
    for m in flow["moves"].as_array().into_iter().flatten() {
        outln!(
            "  #{} {} {} -> {}: {}",
            m["turn"].as_u64().unwrap_or(0),
            text_of(m, "from"),
            text_of(m, "outcome"),
            m["to"].as_str().unwrap_or("end"),
            short(&text_of(m, "summary"), 60)
        );
    }
}

/// The team's proposals, each with its agents' votes and reasoning and the people's votes.
fn print_proposals(proposals: &[Value]) {
    if proposals.is_empty() {
        return;
    }
    outln!("\nProposals ({}):", proposals.len());
    for p in proposals {
        let status = text_of(p, "status").replace('_', " ");
        outln!(
            "  {} by {} [{status}]: {}",
            text_of(p, "id"),
            text_of(p, "proposer"),
            short(&text_of(p, "decision"), 60)
        );
        for b in p["ballots"].as_array().into_iter().flatten() {
            outln!("    {} votes {}: {}", text_of(b, "agent"), text_of(b, "vote"), short(&text_of(b, "reasoning"), 60));
        }
        for v in p["people_votes"].as_array().into_iter().flatten() {
            let vote = if v["approve"] == true { "approves" } else { "rejects" };
            let why = v["reason"].as_str().map(|r| format!(": {}", short(r, 60))).unwrap_or_default();
            outln!("    {} {vote}{why}", text_of(v, "reviewer"));
        }
    }
}
