//! A reviewer's changes to a running team's sub-teams, the same three an
//! agent may make with `create_team`, `modify_team` and `dissolve_team`
//! ([`super::dynamic`]): create a named sub-team of new agents, add agents
//! to a sub-team or remove its agents, dissolve a sub-team (its agents
//! leave). A reviewer is not bound as an agent is: any sub-team, whoever
//! created it, and any tool the registry or the toolbox offers. Checked
//! against the team and the sub-teams as they will be (422 naming the
//! field, `agents[0].provider`), recorded as the reviewer's turn (metadata
//! `sub_team_change`), and applied by the team loop at the start of its
//! next turn with the reviewer's other team changes ([`super::change`]).

use gatehouse_engine::{NewTurn, Role, Turn};
use gatehouse_providers::ProviderRegistry;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{Driver, Step};
use crate::spec::SpecError;
use crate::toolbox::Toolbox;

use super::change::TeamChange;
use super::dynamic::{team_name, ChangeEntry, SubTeam, SubTeams};
use super::{parse_agent_granting, Team, TeamAgent, MAX_AGENTS};

/// A reviewer's checked change of a sub-team, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubTeamChange {
    /// `create_team`, `modify_team` or `dissolve_team`.
    pub action: String,
    /// The sub-team.
    pub team_name: String,
    /// The sub-team as it is after (none once dissolved).
    pub sub_team: Option<SubTeam>,
    /// The changes of the team it makes, in order.
    pub changes: Vec<TeamChange>,
    /// Why, for a dissolved sub-team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A sub-team as the view lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamSubTeam))]
pub struct SubTeamEntry {
    /// Its name.
    pub name: String,
    /// Its agents' names.
    pub members: Vec<String>,
    /// What it is for.
    pub purpose: String,
    /// Who created it: an agent or a reviewer.
    pub by: String,
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

/// Whether `action` is one of the sub-team changes.
pub fn is_sub_team_action(action: &str) -> bool {
    matches!(action, "create_team" | "modify_team" | "dissolve_team")
}

impl SubTeamChange {
    /// Reads a reviewer's request (`{"action": "create_team", "team_name",
    /// "agents": [...], "purpose"?}`, `{"action": "modify_team", "team_name",
    /// "add_agents"?, "remove_agents"?}`, `{"action": "dissolve_team",
    /// "team_name", "reason"?}`) against the team and its sub-teams; errors
    /// name the request's field.
    pub fn check(
        request: &Value,
        team: &Team,
        subs: &SubTeams,
        registry: &ProviderRegistry,
        toolbox: Option<&Toolbox>,
        by: &str,
    ) -> Result<Self, SpecError> {
        let action = request.get("action").and_then(Value::as_str).unwrap_or_default();
        let name = team_name(request).map_err(|m| bad("team_name", m))?;
        let text = |k: &str| request.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let made = |changes, sub_team, reason: Option<&str>| Self {
            action: action.to_owned(),
            team_name: name.clone(),
            sub_team,
            changes,
            reason: reason.map(str::to_owned),
        };
        match action {
            "create_team" => {
                if subs.contains_key(&name) {
                    return Err(bad("team_name", format!("a sub-team `{name}` exists already")));
                }
                let added = new_agents(request, "agents", team, registry, toolbox)?;
                if added.is_empty() {
                    return Err(bad("agents", "list at least one new agent"));
                }
                let members = added.iter().map(|a| a.name.clone()).collect();
                let purpose = text("purpose").unwrap_or("no purpose given").to_owned();
                let sub = SubTeam { members, purpose, by: by.to_owned() };
                Ok(made(adds(added), Some(sub), None))
            }
            "modify_team" => {
                let mut sub = existing(&name, team, subs)?;
                let added = new_agents(request, "add_agents", team, registry, toolbox)?;
                let removed = removed(request, &name, &sub)?;
                if added.is_empty() && removed.is_empty() {
                    return Err(bad("add_agents", "give `add_agents` or `remove_agents`"));
                }
                if removed.len() >= team.agents.len() + added.len() {
                    return Err(bad("remove_agents", "the team's last agents cannot be removed"));
                }
                sub.members.retain(|m| !removed.contains(m));
                sub.members.extend(added.iter().map(|a| a.name.clone()));
                if sub.members.is_empty() {
                    return Err(bad("remove_agents", format!("sub-team `{name}` would have no agents; dissolve it")));
                }
                let mut changes = adds(added);
                changes.extend(removed.into_iter().map(|name| TeamChange::Remove { name }));
                Ok(made(changes, Some(sub), None))
            }
            "dissolve_team" => {
                let sub = existing(&name, team, subs)?;
                if sub.members.len() >= team.agents.len() {
                    return Err(bad("team_name", "the team's last agents cannot be removed"));
                }
                let changes = sub.members.into_iter().map(|name| TeamChange::Remove { name }).collect();
                Ok(made(changes, None, text("reason")))
            }
            _ => Err(bad("action", "must be add, remove, update, create_team, modify_team or dissolve_team")),
        }
    }

    /// What the timeline says.
    pub fn describe(&self, by: &str) -> String {
        let name = &self.team_name;
        let head = match (&self.sub_team, self.action.as_str()) {
            (Some(sub), "create_team") => format!("{by} created sub-team **{name}** ({}).", sub.purpose),
            (Some(sub), _) => format!("{by} changed sub-team **{name}**: now {}.", sub.members.join(", ")),
            (None, _) => {
                format!("{by} dissolved sub-team **{name}** ({}).", self.reason.as_deref().unwrap_or("no reason given"))
            }
        };
        let said: Vec<String> = self.changes.iter().map(|c| c.describe(by)).collect();
        format!("{head}\n{}", said.join("\n"))
    }

    /// The reviewer's turn recording it.
    pub fn turn(&self, by: &str) -> NewTurn {
        NewTurn {
            role: Role::Human,
            actor: Some(by.to_owned()),
            content: self.describe(by),
            score: None,
            metadata: json!({"sub_team_change": self}),
        }
    }
}

fn adds(agents: Vec<TeamAgent>) -> Vec<TeamChange> {
    agents.into_iter().map(|agent| TeamChange::Add { agent }).collect()
}

/// New agents at `field`, checked as the run-start team's are, against the team as it will be.
fn new_agents(
    request: &Value,
    field: &str,
    team: &Team,
    registry: &ProviderRegistry,
    toolbox: Option<&Toolbox>,
) -> Result<Vec<TeamAgent>, SpecError> {
    let list = match request.get(field) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(bad(field, "must be a list of agents ({name, role, provider, model, tools})")),
    };
    if team.agents.len() + list.len() > MAX_AGENTS {
        return Err(bad(field, format!("the team would have more than {MAX_AGENTS} agents")));
    }
    let mut agents: Vec<TeamAgent> = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let agent = parse_agent_granting(entry, &at, registry, toolbox)?;
        if team.agent(&agent.name).is_some() || agents.iter().any(|a| a.name == agent.name) {
            return Err(bad(format!("{at}.name"), format!("`{}` is already in the team", agent.name)));
        }
        agents.push(agent);
    }
    Ok(agents)
}

/// The sub-team `name`, its members still on the team.
fn existing(name: &str, team: &Team, subs: &SubTeams) -> Result<SubTeam, SpecError> {
    let Some(sub) = subs.get(name) else {
        let known: Vec<&str> = subs.keys().map(String::as_str).collect();
        let list = if known.is_empty() { "there are none".to_owned() } else { known.join(", ") };
        return Err(bad("team_name", format!("no sub-team `{name}`; the sub-teams: {list}")));
    };
    let mut sub = sub.clone();
    sub.members.retain(|m| team.agent(m).is_some());
    Ok(sub)
}

/// The names at `remove_agents`, each a member of the sub-team.
fn removed(request: &Value, name: &str, sub: &SubTeam) -> Result<Vec<String>, SpecError> {
    let list = match request.get("remove_agents") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(bad("remove_agents", "must be a list of agent names")),
    };
    let mut out: Vec<String> = Vec::new();
    for (i, v) in list.iter().enumerate() {
        let n = v.as_str().map(str::trim).unwrap_or_default();
        if !sub.members.iter().any(|m| m == n) {
            let members = sub.members.join(", ");
            return Err(bad(format!("remove_agents[{i}]"), format!("`{n}` is not in sub-team `{name}` ({members})")));
        }
        if !out.iter().any(|o| o == n) {
            out.push(n.to_owned());
        }
    }
    Ok(out)
}

/// The reviewer's sub-team change a turn records.
fn of_turn(t: &Turn) -> Option<SubTeamChange> {
    let found = t.metadata.get("sub_team_change").filter(|_| t.role == Role::Human)?;
    serde_json::from_value(found.clone()).ok()
}

/// The team changes of the reviewers' sub-team changes recorded on `turn`.
pub fn recorded_in(turn: &Turn) -> Vec<TeamChange> {
    of_turn(turn).map(|c| c.changes).unwrap_or_default()
}

/// The view's entries of the reviewer's sub-team change `turn` records (none for another turn).
pub fn entries(turn: &Turn) -> Option<Vec<ChangeEntry>> {
    let found = of_turn(turn)?;
    let by = turn.actor.clone();
    let entry = |change: TeamChange| ChangeEntry {
        turn: turn.index,
        by: by.clone(),
        by_kind: "reviewer".into(),
        team_name: Some(found.team_name.clone()),
        description: change.describe(&by),
        change,
    };
    Some(found.changes.iter().cloned().map(entry).collect())
}

/// The sub-teams as every recorded change (agents' tool calls and
/// reviewers' changes, in turn order) leaves them.
pub fn sub_teams(turns: &[Turn]) -> SubTeams {
    let mut subs = SubTeams::new();
    for t in turns {
        if let Some(change) = of_turn(t) {
            set(&mut subs, &change.team_name, change.sub_team);
            continue;
        }
        let Some(found) = t.metadata.get("agent_team_change").filter(|_| t.actor == crate::AGENT) else { continue };
        let name = found["team_name"].as_str().unwrap_or_default();
        let changes: Vec<TeamChange> = serde_json::from_value(found["changes"].clone()).unwrap_or_default();
        if name.is_empty() || changes.is_empty() {
            continue; // a refused call changed nothing
        }
        let tool = t.metadata["tool_call"]["tool_name"].as_str().unwrap_or_default();
        let by = found["by"].as_str().unwrap_or_default().to_owned();
        let purpose = t.metadata["tool_call"]["args"]["purpose"].as_str().unwrap_or("no purpose given").to_owned();
        let mut sub = match tool {
            "create_team" => SubTeam { members: Vec::new(), purpose, by },
            "modify_team" => match subs.get(name) {
                Some(sub) => sub.clone(),
                None => continue,
            },
            _ => {
                subs.remove(name);
                continue;
            }
        };
        for change in &changes {
            match change {
                TeamChange::Add { agent } => sub.members.push(agent.name.clone()),
                TeamChange::Remove { name } => sub.members.retain(|m| m != name),
                TeamChange::Update { .. } => {}
            }
        }
        subs.insert(name.to_owned(), sub);
    }
    subs
}

fn set(subs: &mut SubTeams, name: &str, sub: Option<SubTeam>) {
    match sub {
        Some(sub) => subs.insert(name.to_owned(), sub),
        None => subs.remove(name),
    };
}

/// The sub-teams for the view, each with its members still on `team`.
pub fn listed(turns: &[Turn], team: &Team) -> Vec<SubTeamEntry> {
    sub_teams(turns)
        .into_iter()
        .map(|(name, sub)| SubTeamEntry {
            name,
            members: sub.members.into_iter().filter(|m| team.agent(m).is_some()).collect(),
            purpose: sub.purpose,
            by: sub.by,
        })
        .collect()
}

/// The sub-teams an agent's team tool at `key` is checked against: the
/// timeline's (reviewers' included) for a new call; for a call journaled
/// already the loop's own, as the journal replays the answer anyway.
pub(crate) async fn for_call(d: &mut Driver, key: &str, loop_subs: &SubTeams) -> Step<SubTeams> {
    if d.journaled(key) {
        return Ok(loop_subs.clone());
    }
    let id = d.run_id.clone();
    let turns = d.engine(move |e| e.turns(&id)).await?;
    Ok(sub_teams(&turns))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> ProviderRegistry {
        ProviderRegistry::from_lookup(|_| None).unwrap()
    }

    fn agent(name: &str) -> Value {
        json!({"name": name, "role": "researcher", "provider": "scripted", "model": "chat"})
    }

    fn team() -> Team {
        super::super::parse(&json!([agent("lead")]), &registry()).unwrap()
    }

    fn check(request: Value, team: &Team, subs: &SubTeams) -> Result<SubTeamChange, SpecError> {
        SubTeamChange::check(&request, team, subs, &registry(), None, "ana")
    }

    fn apply(change: &SubTeamChange, team: &mut Team, subs: &mut SubTeams) {
        change.changes.iter().for_each(|c| c.apply(team));
        set(subs, &change.team_name, change.sub_team.clone());
    }

    #[test]
    fn a_reviewer_creates_modifies_and_dissolves_a_sub_team() {
        let (mut team, mut subs) = (team(), SubTeams::new());
        let made = check(
            json!({"action": "create_team", "team_name": "sweep", "agents": [agent("a"), agent("b")]}),
            &team,
            &subs,
        )
        .unwrap();
        assert_eq!(made.sub_team.as_ref().unwrap().by, "ana");
        apply(&made, &mut team, &mut subs);
        assert_eq!(team.names(), ["lead", "a", "b"]);
        let changed = check(
            json!({"action": "modify_team", "team_name": "sweep", "add_agents": [agent("c")], "remove_agents": ["a"]}),
            &team,
            &subs,
        )
        .unwrap();
        apply(&changed, &mut team, &mut subs);
        assert_eq!(team.names(), ["lead", "b", "c"]);
        assert_eq!(subs["sweep"].members, ["b", "c"]);
        let gone =
            check(json!({"action": "dissolve_team", "team_name": "sweep", "reason": "done"}), &team, &subs).unwrap();
        assert!(
            gone.describe("ana").starts_with("ana dissolved sub-team **sweep** (done)."),
            "{}",
            gone.describe("ana")
        );
        apply(&gone, &mut team, &mut subs);
        assert_eq!(team.names(), ["lead"]);
        assert!(subs.is_empty());
    }

    #[test]
    fn a_reviewers_sub_team_change_names_the_field_it_fails_on() {
        let (team, mut subs) = (team(), SubTeams::new());
        let field = |v: Value, subs: &SubTeams| check(v, &team, subs).unwrap_err().field;
        assert_eq!(
            field(json!({"action": "create_team", "team_name": " ", "agents": [agent("a")]}), &subs),
            "team_name"
        );
        assert_eq!(field(json!({"action": "create_team", "team_name": "s", "agents": []}), &subs), "agents");
        let mut unknown = agent("x");
        unknown["provider"] = json!("nobody");
        assert_eq!(
            field(json!({"action": "create_team", "team_name": "s", "agents": [unknown]}), &subs),
            "agents[0].provider"
        );
        assert_eq!(
            field(json!({"action": "create_team", "team_name": "s", "agents": [agent("lead")]}), &subs),
            "agents[0].name"
        );
        assert_eq!(field(json!({"action": "dissolve_team", "team_name": "nope"}), &subs), "team_name");
        let sub = SubTeam { members: vec!["a".into()], purpose: "p".into(), by: "lead".into() };
        subs.insert("s".into(), sub);
        let mut with_a = team.clone();
        with_a.agents.push(super::super::parse_agent(&agent("a"), "a", &registry()).unwrap());
        let err = check(json!({"action": "modify_team", "team_name": "s", "remove_agents": ["lead"]}), &with_a, &subs);
        assert_eq!(err.unwrap_err().field, "remove_agents[0]");
        let err = check(json!({"action": "modify_team", "team_name": "s"}), &with_a, &subs);
        assert_eq!(err.unwrap_err().field, "add_agents");
        let err = check(json!({"action": "modify_team", "team_name": "s", "remove_agents": ["a"]}), &with_a, &subs);
        assert_eq!(err.unwrap_err().field, "remove_agents");
    }

    #[test]
    fn the_sub_teams_are_rebuilt_from_agents_and_reviewers_turns() {
        let turn = |index: u32, role: Role, actor: &str, metadata: Value| Turn {
            id: gatehouse_engine::ids::TurnId::new(),
            run_id: gatehouse_engine::RunId::new(),
            index,
            role,
            actor: actor.to_owned(),
            content: String::new(),
            score: None,
            metadata,
            at: chrono::Utc::now(),
        };
        let a: TeamAgent = super::super::parse_agent(&agent("a"), "a", &registry()).unwrap();
        let by_agent = json!({
            "tool_call": {"tool_name": "create_team", "args": {"purpose": "research"}},
            "agent_team_change": {"by": "lead", "team_name": "s", "changes": [{"action": "add", "agent": a}]},
        });
        let reviewer = SubTeamChange {
            action: "modify_team".into(),
            team_name: "s".into(),
            sub_team: Some(SubTeam {
                members: vec!["a".into(), "b".into()],
                purpose: "research".into(),
                by: "lead".into(),
            }),
            changes: Vec::new(),
            reason: None,
        };
        let turns = vec![
            turn(1, Role::Agent, crate::AGENT, by_agent),
            turn(2, Role::Human, "ana", json!({"sub_team_change": reviewer})),
        ];
        assert_eq!(sub_teams(&turns[..1])["s"].members, ["a"]);
        assert_eq!(sub_teams(&turns)["s"].members, ["a", "b"]);
        assert_eq!(recorded_in(&turns[1]), Vec::<TeamChange>::new());
        assert!(entries(&turns[0]).is_none());
    }
}
