//! What a reviewer sees of a team run, read from the run alone: the team
//! as it is now (the run's team with the reviewers' changes), who holds
//! the turn, who handed to whom, and the memory with its history. The
//! server's `GET /runs/{id}/team` and the Runs view's team panel show it;
//! with the `openapi` feature these types are the API's schemas.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use gatehouse_engine::engine::collab::ContextChange;
use gatehouse_engine::{Run, Turn};
use serde::Serialize;
use serde_json::Value;

use super::consensus_tools::{proposals_in, ProposalView};
use super::dynamic::ChangeEntry;
use super::memory::Entry;
use super::parallel::{self, ParallelGroup};
use super::pattern_steps::{workflow_in, WorkflowView};
use super::{change, dynamic, Team, TeamAgent};
use crate::spec::RunSpec;

/// A team run as a reviewer sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamState))]
pub struct TeamView {
    /// The team now, in order.
    pub agents: Vec<TeamAgent>,
    /// Who holds the turn (or held it last, once the run ended).
    pub active: String,
    /// Every handoff, oldest first.
    pub handoffs: Vec<HandoffEdge>,
    /// What the team remembers now, by scope and key.
    pub memory: Vec<MemoryItem>,
    /// Every change of the memory, oldest first.
    pub memory_history: Vec<MemoryChange>,
    /// The team's proposals with their votes and reasoning (consensus tools).
    pub proposals: Vec<ProposalView>,
    /// The workflow a pattern run follows, and where it stands.
    pub workflow: Option<WorkflowView>,
    /// Every change of the team, by reviewers and agents, oldest first.
    pub changes: Vec<ChangeEntry>,
    /// Every parallel handoff with its sync point and branches (their
    /// status as of `children` given to [`parallel::groups`]; the server
    /// reads the sub-runs).
    pub parallel: Vec<ParallelGroup>,
    /// The named sub-teams agents or reviewers created, with their agents still on the team.
    pub sub_teams: Vec<super::sub_team_change::SubTeamEntry>,
}

/// One handoff: an arrow of the team's graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamHandoff))]
pub struct HandoffEdge {
    /// The turn of the run that records it.
    pub turn: u32,
    /// Who handed off.
    pub from: String,
    /// To whom.
    pub to: String,
    /// Why.
    pub reason: String,
}

/// A remembered value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamMemoryItem))]
pub struct MemoryItem {
    /// `run` or `team`.
    pub scope: String,
    /// Its key.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// The agent that stored it.
    pub by: String,
    /// When it expires, if it does.
    pub expires_at: Option<DateTime<Utc>>,
}

/// One change of a remembered key.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamMemoryChange))]
pub struct MemoryChange {
    /// `run` or `team`.
    pub scope: String,
    /// Its key.
    pub key: String,
    /// The value before (absent when new).
    pub old: Option<Value>,
    /// The value after (absent when deleted).
    pub new: Option<Value>,
    /// Who changed it.
    pub actor: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// The team a run started with, if it is a team run.
pub fn team_of(run: &Run) -> Option<Team> {
    serde_json::from_value::<RunSpec>(run.input.clone()).ok()?.team
}

/// The view of a team run, or `None` for a run without a team.
pub fn team_view(
    run: &Run,
    turns: &[Turn],
    context: &BTreeMap<String, Value>,
    history: &[ContextChange],
) -> Option<TeamView> {
    let start = team_of(run)?;
    let now = change::current(&start, turns);
    let sub_teams = super::sub_team_change::listed(turns, &now);
    let agents = now.agents;
    let mut active = start.agents.first()?.name.clone();
    let mut handoffs = Vec::new();
    for t in turns.iter().filter(|t| t.actor == crate::AGENT) {
        let meta = &t.metadata;
        if let Some(agent) = meta.get("team_agent").and_then(Value::as_str).filter(|_| meta["step"] == "agent_turn") {
            active = agent.to_owned();
        }
        if let Some(h) = meta.get("handoff").filter(|_| meta["step"] == "handoff") {
            let text = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            handoffs.push(HandoffEdge {
                turn: t.index,
                from: text("from"),
                to: text("destination_agent"),
                reason: text("reason"),
            });
            active = text("destination_agent");
        }
        if let (Some(chosen), Some(true)) =
            (meta.get("team_override").and_then(Value::as_str), meta.get("applied").and_then(Value::as_bool))
        {
            active = chosen.to_owned();
        }
        if let Some(agent) = meta.get("restart_taken").and_then(|r| r.get("agent")).and_then(Value::as_str) {
            active = agent.to_owned();
        }
    }
    let memory = context
        .iter()
        .filter_map(|(k, v)| {
            let (scope, key) = split(k)?;
            let entry: Entry = serde_json::from_value(v.clone()).ok()?;
            Some(MemoryItem { scope, key, value: entry.value, by: entry.by, expires_at: entry.expires_at })
        })
        .collect();
    let memory_history = history
        .iter()
        .filter_map(|c| {
            let (scope, key) = split(&c.key)?;
            let value = |v: &Option<Value>| v.as_ref().map(|v| v.get("value").cloned().unwrap_or_else(|| v.clone()));
            Some(MemoryChange { scope, key, old: value(&c.old), new: value(&c.new), actor: c.actor.clone(), at: c.at })
        })
        .collect();
    let (proposals, workflow) = (proposals_in(turns), workflow_in(run, turns));
    let (changes, parallel) = (dynamic::changes(turns), parallel::groups(turns, &[]));
    Some(TeamView {
        agents,
        active,
        handoffs,
        memory,
        memory_history,
        proposals,
        workflow,
        changes,
        parallel,
        sub_teams,
    })
}

/// `memory:SCOPE:KEY` as scope and key.
fn split(context_key: &str) -> Option<(String, String)> {
    let rest = context_key.strip_prefix("memory:")?;
    let (scope, key) = rest.split_once(':')?;
    Some((scope.to_owned(), key.to_owned()))
}
