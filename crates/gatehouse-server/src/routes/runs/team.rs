//! A team run's team over HTTP: `GET /runs/{run_id}/team` (the team now,
//! who holds the turn, who handed to whom, the memory and its history;
//! whoever may see the run) and `POST /runs/{run_id}/team` (a reviewer adds,
//! removes or reassigns an agent, or creates, changes or dissolves a named
//! sub-team; recorded as the reviewer's turn, applied by the orchestrator
//! at the team's next turn). The reviewer's other
//! interventions (next agent, instructions, step mode) are [`super::control`].
//! The view carries the team's changes, its parallel branches, and the
//! consensus proposals and a pattern run's workflow; its types are the
//! orchestrator's own ([`TeamView`]), with their OpenAPI schemas.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::{Engine, Run};
use gatehouse_orchestrator::team::change::{self, TeamChange};
use gatehouse_orchestrator::team::parallel::groups;
use gatehouse_orchestrator::team::sub_team_change::{is_sub_team_action, sub_teams, SubTeamChange};
use gatehouse_orchestrator::team::view::{team_of, team_view, TeamView};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// A team run's team, turn, handoffs and memory: the orchestrator's view,
/// whose types are the API's schemas (its `openapi` feature).
pub type TeamState = TeamView;

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
    /// Create the sub-team `team_name` of new `agents`.
    CreateTeam,
    /// Add `add_agents` to the sub-team `team_name`, or remove its `remove_agents`.
    ModifyTeam,
    /// Dissolve the sub-team `team_name`: its agents leave the team.
    DissolveTeam,
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
    /// The sub-team created, changed or dissolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_name: Option<String>,
    /// The new sub-team's agents (each as `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<Value>>,
    /// What the new sub-team is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Agents joining the sub-team (each as `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_agents: Option<Vec<Value>>,
    /// Names of the sub-team's agents leaving the team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_agents: Option<Vec<String>>,
    /// Why the sub-team is dissolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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
    Ok(view)
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
/// reassigns one's role, provider, model or tools; or creates a named
/// sub-team of new agents, changes one, or dissolves one. Checked against the
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
            let turns = e.turns(&run.id)?;
            let team = change::current(&start, &turns);
            let (registry, toolbox) = (orchestrator.registry(), orchestrator.toolbox());
            let action = request["action"].as_str().unwrap_or_default();
            let turn = if is_sub_team_action(action) {
                SubTeamChange::check(&request, &team, &sub_teams(&turns), registry, toolbox, &caller.name)
                    .map(|c| c.turn(&caller.name))
            } else {
                TeamChange::check_with(&request, &team, registry, toolbox).map(|c| c.turn(&caller.name))
            };
            let turn = turn.map_err(|s| ApiError::invalid_field(s.field, s.message))?;
            e.add_turn(&run.id, turn, &caller.name)?;
            let run = e.run(&run.id)?;
            state_of(e, &run)
        })
        .await?;
    Ok(Json(found))
}
