//! A reviewer's changes to a running team: add an agent, remove one, or
//! reassign one's role, provider, model or tools. A change is checked
//! against the team as it will be (the run's team with every change asked
//! so far) and recorded as the reviewer's turn on the run (metadata
//! `team_change`, the agent resolved), so the timeline and the audit show
//! who changed what; the team loop applies the changes in order at the
//! start of its next turn.

use gatehouse_engine::{NewTurn, Role, Turn};
use gatehouse_providers::ProviderRegistry;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{parse_agent_granting, Team, TeamAgent, MAX_AGENTS};
use crate::spec::SpecError;

/// A checked change, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum TeamChange {
    /// A new agent joins (last in the team).
    Add {
        /// The agent.
        agent: TeamAgent,
    },
    /// The agent named leaves.
    Remove {
        /// Its name.
        name: String,
    },
    /// The agent named gets this role, provider, model and tools.
    Update {
        /// The agent as it will be.
        agent: TeamAgent,
    },
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

impl TeamChange {
    /// Reads a reviewer's request (`{"action": "add", "agent": {...}}`,
    /// `{"action": "remove", "name"}`, `{"action": "update", "name", "role"?, "provider"?,
    /// "model"?, "tools"?}`) against `team`; errors name the request's field.
    pub fn check(request: &Value, team: &Team, registry: &ProviderRegistry) -> Result<Self, SpecError> {
        Self::check_with(request, team, registry, None)
    }

    /// [`TeamChange::check`], where agents may also be granted `toolbox`'s tools.
    pub fn check_with(
        request: &Value,
        team: &Team,
        registry: &ProviderRegistry,
        toolbox: Option<&crate::toolbox::Toolbox>,
    ) -> Result<Self, SpecError> {
        let action = request.get("action").and_then(Value::as_str).unwrap_or_default();
        let name = || {
            let n = request.get("name").and_then(Value::as_str).map(str::trim).unwrap_or_default();
            team.agent(n).cloned().ok_or_else(|| {
                bad("name", format!("no agent `{n}` in the team; the agents are {}", team.names().join(", ")))
            })
        };
        match action {
            "add" => {
                let entry = request.get("agent").cloned().unwrap_or(Value::Null);
                let agent = parse_agent_granting(&entry, "agent", registry, toolbox)?;
                if team.agent(&agent.name).is_some() {
                    return Err(bad("agent.name", format!("`{}` is already in the team", agent.name)));
                }
                if team.agents.len() >= MAX_AGENTS {
                    return Err(bad("action", format!("the team already has {MAX_AGENTS} agents")));
                }
                Ok(Self::Add { agent })
            }
            "remove" => {
                let agent = name()?;
                if team.agents.len() == 1 {
                    return Err(bad("name", "the team's last agent cannot be removed"));
                }
                Ok(Self::Remove { name: agent.name })
            }
            "update" => {
                let agent = name()?;
                let mut entry: Map<String, Value> = serde_json::from_value(json!(agent)).unwrap_or_default();
                for key in ["role", "provider", "model", "tools"] {
                    if let Some(v) = request.get(key).filter(|v| !v.is_null()) {
                        entry.insert(key.to_owned(), v.clone());
                    }
                }
                let updated = parse_agent_granting(&Value::Object(entry), "agent", registry, toolbox)?;
                Ok(Self::Update { agent: updated })
            }
            _ => Err(bad("action", "must be add, remove or update")),
        }
    }

    /// The team after this change (a change that no longer fits is skipped).
    pub fn apply(&self, team: &mut Team) {
        match self {
            Self::Add { agent } if team.agent(&agent.name).is_none() => team.agents.push(agent.clone()),
            Self::Remove { name } if team.agents.len() > 1 => team.agents.retain(|a| a.name != *name),
            Self::Update { agent } => {
                if let Some(slot) = team.agents.iter_mut().find(|a| a.name == agent.name) {
                    *slot = agent.clone();
                }
            }
            _ => {}
        }
    }

    /// What the timeline says.
    pub fn describe(&self, by: &str) -> String {
        match self {
            Self::Add { agent } => {
                format!("{by} added **{}** ({}, on `{}`) to the team.", agent.name, agent.role, agent.tool)
            }
            Self::Remove { name } => format!("{by} removed **{name}** from the team."),
            Self::Update { agent } => {
                format!("{by} reassigned **{}**: {}, on `{}`.", agent.name, agent.role, agent.tool)
            }
        }
    }

    /// The reviewer's turn recording it.
    pub fn turn(&self, by: &str) -> NewTurn {
        NewTurn {
            role: Role::Human,
            actor: Some(by.to_owned()),
            content: self.describe(by),
            score: None,
            metadata: json!({"team_change": self}),
        }
    }
}

/// The changes recorded on `turns` (a reviewer's turns only, sub-team changes
/// included), with each one's turn index.
pub fn recorded(turns: &[Turn]) -> Vec<(u32, TeamChange)> {
    turns
        .iter()
        .filter(|t| t.role == Role::Human)
        .flat_map(|t| {
            let one = t.metadata.get("team_change").and_then(|c| serde_json::from_value(c.clone()).ok());
            let sub = super::sub_team_change::recorded_in(t);
            one.into_iter().chain(sub).map(move |c| (t.index, c))
        })
        .collect()
}

/// The team as it will be once every recorded change (reviewers' and
/// agents', [`super::dynamic::changes`]) is applied.
pub fn current(start: &Team, turns: &[Turn]) -> Team {
    let mut team = start.clone();
    for entry in super::dynamic::changes(turns) {
        entry.change.apply(&mut team);
    }
    team
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ProviderRegistry {
        ProviderRegistry::from_lookup(|_| None).unwrap()
    }

    fn team() -> Team {
        let agents = json!([{"name": "a", "role": "coder", "provider": "scripted", "model": "chat"},
                            {"name": "b", "role": "tester", "provider": "scripted", "model": "chat"}]);
        super::super::parse(&agents, &registry()).unwrap()
    }

    #[test]
    fn changes_are_checked_against_the_team() {
        let (t, r) = (team(), registry());
        let err = |v: Value| TeamChange::check(&v, &t, &r).unwrap_err().field;
        assert_eq!(err(json!({"action": "fire"})), "action");
        assert_eq!(err(json!({"action": "remove", "name": "z"})), "name");
        assert_eq!(
            err(json!({"action": "add", "agent": {"name": "a", "role": "r", "provider": "scripted", "model": "chat"}})),
            "agent.name"
        );
        assert_eq!(err(json!({"action": "update", "name": "a", "model": "gpt-9"})), "agent.model");
        let add = json!({"action": "add", "agent": {"name": "c", "role": "deployer", "provider": "scripted", "model": "chat"}});
        let mut changed = t.clone();
        TeamChange::check(&add, &t, &r).unwrap().apply(&mut changed);
        TeamChange::check(&json!({"action": "remove", "name": "a"}), &t, &r).unwrap().apply(&mut changed);
        TeamChange::check(&json!({"action": "update", "name": "b", "role": "reviewer"}), &t, &r)
            .unwrap()
            .apply(&mut changed);
        assert_eq!(changed.names(), ["b", "c"]);
        assert_eq!(changed.agents[0].role, "reviewer");
    }

    #[test]
    fn the_last_agent_stays() {
        let mut one = team();
        one.agents.truncate(1);
        assert_eq!(
            TeamChange::check(&json!({"action": "remove", "name": "a"}), &one, &registry()).unwrap_err().field,
            "name"
        );
    }
}
