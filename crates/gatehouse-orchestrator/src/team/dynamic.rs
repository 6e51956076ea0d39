//! Dynamic teams: the agent tools `create_team`, `modify_team` and
//! `dissolve_team`, which a role may be granted. In a running team they
//! work on named sub-teams of agents that agents created:
//!
//! - `create_team(team_name, agents, purpose)` adds new agents (checked
//!   like the run-start team; an unknown provider or model is answered to
//!   the agent naming the field, `agents[0].provider`) as a named sub-team;
//! - `modify_team(team_name, add_agents, remove_agents)` adds agents to
//!   such a sub-team or removes its agents;
//! - `dissolve_team(team_name, reason)` removes the sub-team and its agents.
//!
//! What an agent may never do: remove an agent it did not bring in (the
//! run-start team and the agents reviewers added are not in any sub-team),
//! remove itself or a sub-team it belongs to, or grant a new agent a tool
//! it does not hold itself. Each change is a [`TeamChange`], recorded on
//! the timeline with the agent that made it, as a reviewer's are.

use std::collections::BTreeMap;

use gatehouse_engine::{Role, Turn};
use gatehouse_providers::ProviderRegistry;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{Driver, Record, Step};

use super::change::TeamChange;
use super::tools::{text_arg, BuiltinTool, ToolCall};
use super::{parse_agent, Team, TeamAgent, MAX_AGENTS};

/// A sub-team an agent created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubTeam {
    /// Its agents' names.
    pub members: Vec<String>,
    /// What it is for.
    pub purpose: String,
    /// The agent that created it.
    pub by: String,
}

/// The sub-teams of a run, by name.
pub(crate) type SubTeams = BTreeMap<String, SubTeam>;

/// What a dynamic team tool did, journaled: the agent's answer, the
/// changes to the team, and the sub-team as it is after (none once dissolved).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Reshaped {
    pub answer: String,
    pub changes: Vec<TeamChange>,
    pub team_name: String,
    pub sub_team: Option<SubTeam>,
}

impl Reshaped {
    /// Applies the changes to `team` and the sub-team to `subs`.
    pub fn apply(&self, team: &mut Team, subs: &mut SubTeams) {
        for change in &self.changes {
            change.apply(team);
        }
        match &self.sub_team {
            Some(sub) => subs.insert(self.team_name.clone(), sub.clone()),
            None => subs.remove(&self.team_name),
        };
    }
}

/// The longest sub-team name, and the most agents one call adds.
const MAX_NAME: usize = 64;
const MAX_NEW: usize = 10;

/// Runs a dynamic team tool for `agent`, journaled under `key`. A refused
/// call changes nothing and answers why.
pub(crate) async fn call(
    d: &mut Driver,
    tool: BuiltinTool,
    team: &Team,
    subs: &SubTeams,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
) -> Step<Reshaped> {
    let registry = d.orchestrator().registry();
    let checked = match tool {
        BuiltinTool::CreateTeam => create(&call.args, team, subs, agent, registry),
        BuiltinTool::ModifyTeam => modify(&call.args, team, subs, agent, registry),
        _ => dissolve(&call.args, team, subs, agent),
    };
    let reshaped = checked.unwrap_or_else(|why| Reshaped {
        answer: format!("{} refused: {why}", call.name),
        changes: Vec::new(),
        team_name: String::new(),
        sub_team: None,
    });
    let by = agent.name.clone();
    let said: Vec<String> = reshaped.changes.iter().map(|c| c.describe(&by)).collect();
    let content =
        if said.is_empty() { format!("**{by}** called `{}`: {}", call.name, reshaped.answer) } else { said.join("\n") };
    let meta = json!({"tool_name": call.name, "args": call.args});
    let changed = json!({"by": by, "team_name": reshaped.team_name, "changes": reshaped.changes});
    d.step(key, "team_tool", || async move {
        Ok(Record::new(reshaped, content)
            .with("tool_call", meta)
            .with("team_agent", json!(by))
            .with("agent_team_change", changed))
    })
    .await
}

pub(super) fn team_name(args: &Value) -> Result<String, String> {
    let name = text_arg(args, "team_name").ok_or("`team_name` is required and not blank")?;
    if name.chars().count() > MAX_NAME || !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) {
        return Err(format!("`team_name`: at most {MAX_NAME} letters, digits, `_`, `-` and `.`"));
    }
    Ok(name.to_owned())
}

/// New agents at `field` (`agents`, `add_agents`), checked against the team as it will be.
fn new_agents(
    args: &Value,
    field: &str,
    team: &Team,
    creator: &TeamAgent,
    registry: &ProviderRegistry,
) -> Result<Vec<TeamAgent>, String> {
    let list = match args.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(format!("`{field}` must be a list of agents ({{name, role, provider, model, tools}})")),
    };
    if list.len() > MAX_NEW {
        return Err(format!("`{field}` has {} agents; at most {MAX_NEW} join at once", list.len()));
    }
    if team.agents.len() + list.len() > MAX_AGENTS {
        return Err(format!("the team would have more than {MAX_AGENTS} agents"));
    }
    let mut agents: Vec<TeamAgent> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let agent = parse_agent(entry, &at, registry).map_err(|e| format!("`{}`: {}", e.field, e.message))?;
        if team.agent(&agent.name).is_some() || agents.iter().any(|a| a.name == agent.name) {
            return Err(format!("`{at}.name`: `{}` is already in the team", agent.name));
        }
        if let Some(j) = agent.tools.iter().position(|t| !creator.tools.contains(t)) {
            return Err(format!(
                "`{at}.tools[{j}]`: `{}` is not one of your tools; an agent grants only the tools it holds",
                agent.tools[j]
            ));
        }
        agents.push(agent);
    }
    Ok(agents)
}

fn create(
    args: &Value,
    team: &Team,
    subs: &SubTeams,
    agent: &TeamAgent,
    registry: &ProviderRegistry,
) -> Result<Reshaped, String> {
    let name = team_name(args)?;
    if subs.contains_key(&name) {
        return Err(format!("`team_name`: a sub-team `{name}` exists already"));
    }
    let added = new_agents(args, "agents", team, agent, registry)?;
    if added.is_empty() {
        return Err("`agents` must list at least one new agent".into());
    }
    let purpose = text_arg(args, "purpose").unwrap_or("no purpose given").to_owned();
    let members = added.iter().map(|a| a.name.clone()).collect();
    let answer = format!("created sub-team `{name}` with {}", names(&added));
    Ok(Reshaped {
        answer,
        changes: added.into_iter().map(|agent| TeamChange::Add { agent }).collect(),
        sub_team: Some(SubTeam { members, purpose, by: agent.name.clone() }),
        team_name: name,
    })
}

/// The sub-team `team_name` names, its members still on the team.
fn existing(args: &Value, team: &Team, subs: &SubTeams) -> Result<(String, SubTeam), String> {
    let name = team_name(args)?;
    let Some(sub) = subs.get(&name) else {
        let known: Vec<&str> = subs.keys().map(String::as_str).collect();
        let list = if known.is_empty() { "none was created".to_owned() } else { known.join(", ") };
        return Err(format!("`team_name`: no sub-team `{name}`; the sub-teams are: {list}"));
    };
    let mut sub = sub.clone();
    sub.members.retain(|m| team.agent(m).is_some());
    Ok((name, sub))
}

fn modify(
    args: &Value,
    team: &Team,
    subs: &SubTeams,
    agent: &TeamAgent,
    registry: &ProviderRegistry,
) -> Result<Reshaped, String> {
    let (name, mut sub) = existing(args, team, subs)?;
    let added = new_agents(args, "add_agents", team, agent, registry)?;
    let removed: Vec<String> = match args.get("remove_agents") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let n = v.as_str().map(str::trim).unwrap_or_default();
                if n == agent.name {
                    return Err(format!("`remove_agents[{i}]`: you cannot remove yourself"));
                }
                if !sub.members.iter().any(|m| m == n) {
                    return Err(format!(
                        "`remove_agents[{i}]`: `{n}` is not in sub-team `{name}` ({}); an agent removes only agents of a sub-team",
                        sub.members.join(", ")
                    ));
                }
                Ok(n.to_owned())
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`remove_agents` must be a list of agent names".into()),
    };
    if added.is_empty() && removed.is_empty() {
        return Err("give `add_agents` or `remove_agents`".into());
    }
    sub.members.retain(|m| !removed.contains(m));
    sub.members.extend(added.iter().map(|a| a.name.clone()));
    if sub.members.is_empty() {
        return Err(format!("sub-team `{name}` would have no agents; call dissolve_team to end it"));
    }
    let answer = format!("sub-team `{name}` now has {}", sub.members.join(", "));
    let mut changes: Vec<TeamChange> = added.into_iter().map(|agent| TeamChange::Add { agent }).collect();
    changes.extend(removed.into_iter().map(|name| TeamChange::Remove { name }));
    Ok(Reshaped { answer, changes, team_name: name, sub_team: Some(sub) })
}

fn dissolve(args: &Value, team: &Team, subs: &SubTeams, agent: &TeamAgent) -> Result<Reshaped, String> {
    let (name, sub) = existing(args, team, subs)?;
    if sub.members.contains(&agent.name) {
        return Err(format!("you are in sub-team `{name}`; its creator or a reviewer may dissolve it"));
    }
    if sub.members.len() >= team.agents.len() {
        return Err("the team's last agents cannot be removed".into());
    }
    let reason = text_arg(args, "reason").unwrap_or("no reason given");
    let answer = format!("dissolved sub-team `{name}` ({reason}); {} left the team", sub.members.join(", "));
    let changes = sub.members.into_iter().map(|name| TeamChange::Remove { name }).collect();
    Ok(Reshaped { answer, changes, team_name: name, sub_team: None })
}

fn names(agents: &[TeamAgent]) -> String {
    agents.iter().map(|a| format!("{} ({})", a.name, a.role)).collect::<Vec<_>>().join(", ")
}

/// One change of the team, by a reviewer or an agent, as the view lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamChangeEntry))]
pub struct ChangeEntry {
    /// The run's turn recording it.
    pub turn: u32,
    /// Who changed the team: the reviewer, or the agent.
    pub by: String,
    /// `reviewer` or `agent`.
    pub by_kind: String,
    /// The sub-team it concerns, for an agent's change.
    pub team_name: Option<String>,
    /// The change; shown as its action: `add`, `remove` or `update`.
    #[serde(rename = "action", serialize_with = "action_of")]
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub change: TeamChange,
    /// What the timeline says.
    pub description: String,
}

/// A change as the view shows it: its action's name.
fn action_of<S: serde::Serializer>(change: &TeamChange, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match change {
        TeamChange::Add { .. } => "add",
        TeamChange::Remove { .. } => "remove",
        TeamChange::Update { .. } => "update",
    })
}

/// Every change of the team recorded on `turns`, reviewers' and agents', in order.
pub fn changes(turns: &[Turn]) -> Vec<ChangeEntry> {
    let mut out = Vec::new();
    for t in turns {
        if let Some(entries) = super::sub_team_change::entries(t) {
            out.extend(entries);
            continue;
        }
        if t.role == Role::Human {
            if let Some(change) = t.metadata.get("team_change").and_then(|c| serde_json::from_value(c.clone()).ok()) {
                let description = TeamChange::describe(&change, &t.actor);
                out.push(ChangeEntry {
                    turn: t.index,
                    by: t.actor.clone(),
                    by_kind: "reviewer".into(),
                    team_name: None,
                    change,
                    description,
                });
            }
            continue;
        }
        let Some(found) = t.metadata.get("agent_team_change").filter(|_| t.actor == crate::AGENT) else { continue };
        let by = found["by"].as_str().unwrap_or_default().to_owned();
        let team_name = found["team_name"].as_str().map(str::to_owned);
        let list: Vec<TeamChange> = serde_json::from_value(found["changes"].clone()).unwrap_or_default();
        for change in list {
            let description = change.describe(&by);
            out.push(ChangeEntry {
                turn: t.index,
                by: by.clone(),
                by_kind: "agent".into(),
                team_name: team_name.clone(),
                change,
                description,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ProviderRegistry {
        ProviderRegistry::from_lookup(|_| None).unwrap()
    }

    fn lead() -> TeamAgent {
        let entry = json!({"name": "lead", "role": "lead", "provider": "scripted", "model": "chat",
                           "tools": ["create_team", "modify_team", "dissolve_team", "store_memory"]});
        parse_agent(&entry, "team[0]", &registry()).unwrap()
    }

    fn new(name: &str) -> Value {
        json!({"name": name, "role": "researcher", "provider": "scripted", "model": "chat"})
    }

    fn team() -> Team {
        Team { agents: vec![lead()] }
    }

    #[test]
    fn a_sub_team_is_created_modified_and_dissolved() {
        let (mut team, mut subs, r) = (team(), SubTeams::new(), registry());
        let made = create(
            &json!({"team_name": "sweep", "agents": [new("a"), new("b")], "purpose": "research"}),
            &team,
            &subs,
            &lead(),
            &r,
        )
        .unwrap();
        made.apply(&mut team, &mut subs);
        assert_eq!(team.names(), ["lead", "a", "b"]);
        let changed = modify(
            &json!({"team_name": "sweep", "add_agents": [new("c")], "remove_agents": ["a"]}),
            &team,
            &subs,
            &lead(),
            &r,
        )
        .unwrap();
        changed.apply(&mut team, &mut subs);
        assert_eq!(team.names(), ["lead", "b", "c"]);
        assert_eq!(subs["sweep"].members, ["b", "c"]);
        let gone = dissolve(&json!({"team_name": "sweep", "reason": "done"}), &team, &subs, &lead()).unwrap();
        gone.apply(&mut team, &mut subs);
        assert_eq!(team.names(), ["lead"]);
        assert!(subs.is_empty());
    }

    #[test]
    fn an_agent_cannot_remove_agents_it_did_not_bring_in_or_grant_tools_it_lacks() {
        let (mut team, mut subs, r) = (team(), SubTeams::new(), registry());
        team.agents.push(parse_agent(&new("required"), "team[1]", &r).unwrap());
        create(&json!({"team_name": "s", "agents": [new("a")]}), &team, &subs, &lead(), &r)
            .unwrap()
            .apply(&mut team, &mut subs);
        let err =
            modify(&json!({"team_name": "s", "remove_agents": ["required"]}), &team, &subs, &lead(), &r).unwrap_err();
        assert!(err.contains("`remove_agents[0]`: `required` is not in sub-team `s`"), "{err}");
        let mut bad = new("x");
        bad["provider"] = json!("nobody");
        let err = create(&json!({"team_name": "t", "agents": [bad]}), &team, &subs, &lead(), &r).unwrap_err();
        assert!(err.starts_with("`agents[0].provider`: no provider named `nobody`"), "{err}");
        let mut greedy = new("y");
        greedy["tools"] = json!(["search_memory"]);
        let err = create(&json!({"team_name": "t", "agents": [greedy]}), &team, &subs, &lead(), &r).unwrap_err();
        assert!(err.starts_with("`agents[0].tools[0]`: `search_memory` is not one of your tools"), "{err}");
        let err = dissolve(&json!({"team_name": "nope"}), &team, &subs, &lead()).unwrap_err();
        assert!(err.contains("no sub-team `nope`; the sub-teams are: s"), "{err}");
        let a = team.agent("a").unwrap().clone();
        assert!(dissolve(&json!({"team_name": "s"}), &team, &subs, &a).unwrap_err().contains("you are in sub-team"));
    }
}
