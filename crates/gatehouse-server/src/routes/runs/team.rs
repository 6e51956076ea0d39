//! A team run's team over HTTP: `GET /runs/{run_id}/team` (the team now,
//! who holds the turn, who handed to whom, the memory and its history;
//! whoever may see the run) and `POST /runs/{run_id}/team` (a reviewer adds,
//! removes or reassigns an agent; recorded as the reviewer's turn, applied
//! by the orchestrator at the team's next turn). The reviewer's other
//! interventions (next agent, instructions, step mode) are [`super::control`].
//! The view carries the team's changes, its parallel branches, and the
//! consensus proposals and a pattern run's workflow ([`super::team_views`]).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use gatehouse_engine::{Engine, Run};
use gatehouse_orchestrator::team::change::{self, TeamChange};
use gatehouse_orchestrator::team::dynamic::ChangeEntry;
use gatehouse_orchestrator::team::parallel::{groups, ParallelGroup};
use gatehouse_orchestrator::team::view::{team_of, team_view, TeamView};
use gatehouse_orchestrator::team::TeamAgent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::team_views::{TeamProposal, TeamWorkflow};
use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// One agent of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMember {
    /// Its name, unique in the team.
    pub name: String,
    /// What it does.
    pub role: String,
    /// Its provider.
    pub provider: String,
    /// Its model, as given.
    pub model: String,
    /// The registry's tool it runs on.
    pub tool: String,
    /// The built-in tools its role may use besides `handoff`.
    pub tools: Vec<String>,
}

/// One handoff of a team run.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamHandoff {
    /// The run's turn recording it.
    pub turn: u32,
    /// Who handed off.
    pub from: String,
    /// To whom.
    pub to: String,
    /// Why.
    pub reason: String,
}

/// A value the team remembers.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMemoryItem {
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
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMemoryChange {
    /// `run` or `team`.
    pub scope: String,
    /// Its key.
    pub key: String,
    /// Before (absent when new).
    pub old: Option<Value>,
    /// After (absent when deleted).
    pub new: Option<Value>,
    /// Who changed it.
    pub actor: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// A team run's team, turn, handoffs and memory.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamState {
    /// The team now, in order (the reviewers' changes applied).
    pub agents: Vec<TeamMember>,
    /// Who holds the turn (or held it last, once the run ended).
    pub active: String,
    /// Every handoff, oldest first.
    pub handoffs: Vec<TeamHandoff>,
    /// What the team remembers now.
    pub memory: Vec<TeamMemoryItem>,
    /// Every change of the memory, oldest first.
    pub memory_history: Vec<TeamMemoryChange>,
    /// The team's proposals with their votes and reasoning (consensus tools), oldest first.
    pub proposals: Vec<TeamProposal>,
    /// The workflow a pattern run follows and where it stands; absent without a pattern.
    pub workflow: Option<TeamWorkflow>,
    /// Every change of the team, by reviewers and agents, oldest first.
    pub changes: Vec<TeamChangeEntry>,
    /// Every parallel handoff with its sync point and branches.
    pub parallel: Vec<ParallelGroupState>,
}

/// One change of a team and who made it.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamChangeEntry {
    /// The run's turn recording it.
    pub turn: u32,
    /// The reviewer or the agent that changed the team.
    pub by: String,
    /// `reviewer` or `agent`.
    pub by_kind: String,
    /// The sub-team an agent's change concerns.
    pub team_name: Option<String>,
    /// `add`, `remove` or `update`.
    pub action: String,
    /// What the timeline says.
    pub description: String,
}

/// One parallel handoff: the coordinating agent waits at its sync point.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParallelGroupState {
    /// The run's turn that started the branches.
    pub turn: u32,
    /// The coordinating agent.
    pub lead: String,
    /// `wait_all` or `first_answer`.
    pub strategy: String,
    /// Whether the sync point was passed.
    pub synced: bool,
    /// The branches.
    pub branches: Vec<ParallelBranchState>,
}

/// One branch of a parallel handoff: a sub-run of the run.
#[derive(Debug, Serialize, ToSchema)]
pub struct ParallelBranchState {
    /// The agent.
    pub agent: String,
    /// Its task.
    pub task: String,
    /// Its sub-run.
    pub run_id: String,
    /// The sub-run's status.
    pub status: String,
    /// Its answer once it has one.
    pub answer: String,
}

impl From<ChangeEntry> for TeamChangeEntry {
    fn from(c: ChangeEntry) -> Self {
        let action = match &c.change {
            TeamChange::Add { .. } => "add",
            TeamChange::Remove { .. } => "remove",
            TeamChange::Update { .. } => "update",
        };
        Self {
            turn: c.turn,
            by: c.by,
            by_kind: c.by_kind,
            team_name: c.team_name,
            action: action.to_owned(),
            description: c.description,
        }
    }
}

impl From<ParallelGroup> for ParallelGroupState {
    fn from(g: ParallelGroup) -> Self {
        let branches = g
            .branches
            .into_iter()
            .map(|b| ParallelBranchState {
                agent: b.agent,
                task: b.task,
                run_id: b.run_id,
                status: b.status,
                answer: b.answer,
            })
            .collect();
        Self { turn: g.turn, lead: g.lead, strategy: g.strategy, synced: g.synced, branches }
    }
}

impl From<TeamAgent> for TeamMember {
    fn from(a: TeamAgent) -> Self {
        Self { name: a.name, role: a.role, provider: a.provider, model: a.model, tool: a.tool, tools: a.tools }
    }
}

impl From<TeamView> for TeamState {
    fn from(v: TeamView) -> Self {
        Self {
            agents: v.agents.into_iter().map(TeamMember::from).collect(),
            active: v.active,
            handoffs: v
                .handoffs
                .into_iter()
                .map(|h| TeamHandoff { turn: h.turn, from: h.from, to: h.to, reason: h.reason })
                .collect(),
            memory: v
                .memory
                .into_iter()
                .map(|m| TeamMemoryItem {
                    scope: m.scope,
                    key: m.key,
                    value: m.value,
                    by: m.by,
                    expires_at: m.expires_at,
                })
                .collect(),
            memory_history: v
                .memory_history
                .into_iter()
                .map(|c| TeamMemoryChange {
                    scope: c.scope,
                    key: c.key,
                    old: c.old,
                    new: c.new,
                    actor: c.actor,
                    at: c.at,
                })
                .collect(),
            proposals: v.proposals.into_iter().map(TeamProposal::from).collect(),
            workflow: v.workflow.map(TeamWorkflow::from),
            changes: v.changes.into_iter().map(TeamChangeEntry::from).collect(),
            parallel: v.parallel.into_iter().map(ParallelGroupState::from).collect(),
        }
    }
}

/// What a change to a team does.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamAction {
    /// Add `agent`.
    Add,
    /// Remove the agent `name`.
    Remove,
    /// Reassign the agent `name` (its role, provider, model or tools).
    Update,
}

/// A change to a running team.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TeamChangeRequest {
    /// What the change does.
    pub action: TeamAction,
    /// The agent to add (name, role, provider, model, tools).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Value>,
    /// The agent to remove or reassign.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its new role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Its new provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Its new model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Its new built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

fn no_team(run: &Run) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, ApiErrorCode::Conflict, format!("run {} has no team", run.id))
}

pub(super) fn state_of(e: &Engine, run: &Run) -> ApiResult<TeamState> {
    let turns = e.turns(&run.id)?;
    let context = e.context(&run.id)?;
    let history = e.context_history(&run.id)?;
    let mut view = team_view(run, &turns, &context, &history).ok_or_else(|| no_team(run))?;
    view.parallel = groups(&turns, &e.child_runs(&run.id)?);
    Ok(view.into())
}

/// A team run's team now, who holds the turn, who handed to whom, and the
/// team's memory with its history. 409 for a run without a team.
#[utoipa::path(get, path = "/runs/{run_id}/team", tag = "runs", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = TeamState), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody)))]
pub async fn team_of_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<TeamState>> {
    let id = gatehouse_engine::RunId::from_string(run_id);
    let found = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            state_of(e, &run)
        })
        .await?;
    Ok(Json(found))
}

/// Changes a live team run's team: adds an agent, removes one, or
/// reassigns one's role, provider, model or tools. Checked against the
/// team as it will be (422 naming the field), recorded as the reviewer's
/// turn, applied at the team's next turn. Reviewers and admins only.
#[utoipa::path(post, path = "/runs/{run_id}/team", tag = "reviewers", params(("run_id" = String, Path, description = "The run")),
    request_body = TeamChangeRequest,
    responses((status = 200, body = TeamState), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn change_team(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<TeamChangeRequest>,
) -> ApiResult<Json<TeamState>> {
    caller.require_reviewer()?;
    let request = serde_json::to_value(&req).map_err(|e| ApiError::internal(e.to_string()))?;
    let orchestrator = state.orchestrator.clone();
    let id = gatehouse_engine::RunId::from_string(run_id);
    let found = state
        .engine_checked(move |e| {
            let run = caller.run(e, &id)?;
            let start = team_of(&run).ok_or_else(|| no_team(&run))?;
            let team = change::current(&start, &e.turns(&run.id)?);
            let change = TeamChange::check_with(&request, &team, orchestrator.registry(), orchestrator.toolbox())
                .map_err(|s| ApiError::invalid_field(s.field, s.message))?;
            e.add_turn(&run.id, change.turn(&caller.name), &caller.name)?;
            let run = e.run(&run.id)?;
            state_of(e, &run)
        })
        .await?;
    Ok(Json(found))
}
