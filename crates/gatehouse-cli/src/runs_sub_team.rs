//! `runs team RUN create-team|modify-team|dissolve-team ...`: a reviewer
//! creates a named sub-team of new agents on a live team run, adds agents
//! to one or removes its agents, or dissolves one (its agents leave). An
//! agent is given as `NAME,ROLE,PROVIDER,MODEL[,TOOL...]`; the server checks
//! it as it checks a run's team and answers a mistake naming the field.

use anyhow::{bail, Result};
use clap::Subcommand;
use serde_json::{json, Map, Value};

/// A reviewer's change of a sub-team.
#[derive(Debug, Subcommand)]
pub enum SubTeamChange {
    /// Create a named sub-team of new agents.
    #[command(name = "create-team")]
    Create {
        /// The sub-team's name (letters, digits, `_`, `-`, `.`).
        team_name: String,
        /// A new agent, `NAME,ROLE,PROVIDER,MODEL[,TOOL...]` (repeat for several).
        #[arg(long = "agent", value_name = "AGENT", required = true)]
        agents: Vec<String>,
        /// What the sub-team is for.
        #[arg(long)]
        purpose: Option<String>,
    },
    /// Add agents to a sub-team or remove its agents.
    #[command(name = "modify-team")]
    Modify {
        /// The sub-team.
        team_name: String,
        /// A new agent, `NAME,ROLE,PROVIDER,MODEL[,TOOL...]` (repeat for several).
        #[arg(long = "add", value_name = "AGENT")]
        add: Vec<String>,
        /// An agent of the sub-team that leaves the team (repeat for several).
        #[arg(long = "remove", value_name = "NAME")]
        remove: Vec<String>,
    },
    /// Dissolve a sub-team: its agents leave the team.
    #[command(name = "dissolve-team")]
    Dissolve {
        /// The sub-team.
        team_name: String,
        /// Why.
        #[arg(long)]
        reason: Option<String>,
    },
}

/// `NAME,ROLE,PROVIDER,MODEL[,TOOL...]` as an agent of the request.
fn agent(spec: &str, flag: &str) -> Result<Value> {
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    if parts.len() < 4 || parts[..4].iter().any(|p| p.is_empty()) {
        bail!("{flag} `{spec}`: give NAME,ROLE,PROVIDER,MODEL[,TOOL...]");
    }
    Ok(json!({"name": parts[0], "role": parts[1], "provider": parts[2], "model": parts[3], "tools": parts[4..]}))
}

fn agents(specs: &[String], flag: &str) -> Result<Vec<Value>> {
    specs.iter().map(|s| agent(s, flag)).collect()
}

/// The request body of `POST /runs/{id}/team`.
pub fn body(change: &SubTeamChange) -> Result<Value> {
    let mut body = Map::new();
    let (action, team_name) = match change {
        SubTeamChange::Create { team_name, agents: list, purpose } => {
            body.insert("agents".into(), json!(agents(list, "--agent")?));
            if let Some(p) = purpose {
                body.insert("purpose".into(), json!(p));
            }
            ("create_team", team_name)
        }
        SubTeamChange::Modify { team_name, add, remove } => {
            if add.is_empty() && remove.is_empty() {
                bail!("give --add AGENT or --remove NAME");
            }
            body.insert("add_agents".into(), json!(agents(add, "--add")?));
            body.insert("remove_agents".into(), json!(remove));
            ("modify_team", team_name)
        }
        SubTeamChange::Dissolve { team_name, reason } => {
            if let Some(r) = reason {
                body.insert("reason".into(), json!(r));
            }
            ("dissolve_team", team_name)
        }
    };
    body.insert("action".into(), json!(action));
    body.insert("team_name".into(), json!(team_name));
    Ok(Value::Object(body))
}

/// What the terminal says once the server took the change.
pub fn done(change: &SubTeamChange) -> String {
    let (what, name) = match change {
        SubTeamChange::Create { team_name, .. } => ("created", team_name),
        SubTeamChange::Modify { team_name, .. } => ("changed", team_name),
        SubTeamChange::Dissolve { team_name, .. } => ("dissolved", team_name),
    };
    format!("{what} sub-team {name} (the team takes it at its next turn)")
}

/// The sub-teams of a team view, one line each.
pub fn print(sub_teams: &[Value]) {
    if sub_teams.is_empty() {
        return;
    }
    crate::out::outln!("\nSub-teams ({}):", sub_teams.len());
    for s in sub_teams {
        let members: Vec<&str> = s["members"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
        crate::out::outln!("  {} by {} ({}): {}", text("name"), text("by"), text("purpose"), members.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_read_from_their_comma_separated_form() {
        let change = SubTeamChange::Create {
            team_name: "audit".into(),
            agents: vec!["ann, auditor, scripted, chat, store_memory".into()],
            purpose: None,
        };
        let body = body(&change).unwrap();
        assert_eq!(body["action"], "create_team");
        assert_eq!(body["agents"][0]["tools"], json!(["store_memory"]));
        let bad = SubTeamChange::Modify { team_name: "audit".into(), add: vec!["ann,auditor".into()], remove: vec![] };
        assert!(super::body(&bad).unwrap_err().to_string().starts_with("--add `ann,auditor`"));
    }
}
