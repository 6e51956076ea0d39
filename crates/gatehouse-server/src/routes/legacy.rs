//! The older run endpoint, `POST /api/teams/run`, kept so clients of the
//! API that came before the HITL run API move over without change: the body
//! is the run input itself (a `tool` or `agent_tool_config`, a `prompt`...),
//! and the answer is `202 Accepted` with the run's id while Gatehouse drives
//! it, as the HITL run API's `POST /run` would.
//!
//! Review is off unless asked, within what people allow: such a client
//! never asked for review, so its run gets the least review its caller may
//! have. For a person's token (reviewer or admin) that is the `auto` policy;
//! for an agent's token it is the review people configured for that agent
//! (`serve --oversight`), never less. `hitl: true` or a `hitl_config` asks
//! for review as `POST /run` does.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::{RunId, RunStatus, TokenRole};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::routes::runs::lifecycle::{start_run, StartRunRequest};
use crate::state::AppState;

/// The routes under `/api/teams`.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(run_team))
}

/// A run input as the older endpoint took it: the fields below, and any
/// others of a run input (`system`, `inputs`, `collaborate`, `assessment`),
/// passed on as they are.
#[derive(Debug, Deserialize, ToSchema)]
pub struct LegacyRunRequest {
    /// The tool to run: one of `GET /api/hitl/providers`' tools.
    #[serde(default)]
    pub tool: Option<String>,
    /// Or the tool as the older API named it: `{"REPLICATETOOL": {"data": {"model_name": ...}}}`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub agent_tool_config: Option<Value>,
    /// What the user asks the model.
    pub prompt: String,
    /// The user on whose behalf it runs.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The session it belongs to.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Its title (default: the tool and prompt).
    #[serde(default)]
    pub title: Option<String>,
    /// `true` asks for review with the default policy (every gate waits
    /// for a person); absent or `false`, review is off within what people allow.
    #[serde(default)]
    pub hitl: Option<bool>,
    /// Asks for review with this policy, as `POST /api/hitl/run` does.
    #[serde(default)]
    pub hitl_config: Option<HitlConfig>,
    /// The rest of the run input.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub more: Map<String, Value>,
}

/// The run the older endpoint started.
#[derive(Debug, Serialize, ToSchema)]
pub struct LegacyRunAccepted {
    /// The new run.
    pub run_id: RunId,
    /// Where it is (`created` at first; `awaiting_human` once a gate waits).
    pub status: RunStatus,
    /// Where to follow its status: `GET /api/hitl/run/{run_id}/status`.
    pub status_url: String,
    /// Its whole state, the result among it once completed: `GET /api/hitl/run/{run_id}/state`.
    pub state_url: String,
    /// Where to follow its events (Server-Sent Events).
    pub events_url: String,
}

/// Starts a run the older way: the body is the run input, review is off
/// unless asked (within what people allow an agent's token), and the answer
/// is 202 with the run's id while Gatehouse drives it.
#[utoipa::path(post, path = "/run", tag = "legacy", request_body = LegacyRunRequest,
    responses((status = 202, body = LegacyRunAccepted), (status = 401, body = ApiErrorBody),
        (status = 403, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn run_team(
    state: State<AppState>,
    caller: Caller,
    ApiJson(req): ApiJson<LegacyRunRequest>,
) -> ApiResult<(StatusCode, Json<LegacyRunAccepted>)> {
    if req.tool.as_deref().is_none_or(|t| t.trim().is_empty()) && req.agent_tool_config.is_none() {
        return Err(ApiError::invalid_field(
            "tool",
            "is required: name one of GET /api/hitl/providers' tools (or give an agent_tool_config)",
        ));
    }
    let hitl_config = match (req.hitl_config, req.hitl) {
        (Some(config), _) => Some(config),
        (None, Some(true)) => Some(HitlConfig::default()),
        // Nothing asked: a person's run passes its gates by policy; an agent's gets what people set for it.
        (None, _) if caller.role != TokenRole::Agent => {
            Some(HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() })
        }
        (None, _) => None,
    };
    let mut run_input = req.more;
    run_input.insert("prompt".into(), Value::String(req.prompt));
    if let Some(tool) = req.tool {
        run_input.insert("tool".into(), Value::String(tool));
    }
    if let Some(config) = req.agent_tool_config {
        run_input.insert("agent_tool_config".into(), config);
    }
    let start = StartRunRequest {
        run_input: Value::Object(run_input),
        hitl_config,
        user_id: req.user_id,
        session_id: req.session_id,
        title: req.title,
        agent: None,
        protocol: None,
        step_mode: None,
        breakpoints: Vec::new(),
        participants: Vec::new(),
        parent_run_id: None,
        start: None,
        expires_at: None,
        expires_in_secs: None,
        declared_gates: Vec::new(),
    };
    let public = state.public_url();
    let (_, Json(started)) = start_run(state, caller, ApiJson(start)).await.map_err(|e| {
        // `POST /run` names the input's fields under `run_input`; here they are the body's own.
        e.without_field_prefix("run_input.")
    })?;
    let run = &started.run_id;
    Ok((
        StatusCode::ACCEPTED,
        Json(LegacyRunAccepted {
            status_url: format!("{public}/api/hitl/run/{run}/status"),
            state_url: format!("{public}/api/hitl/run/{run}/state"),
            events_url: started.events_url,
            status: started.status,
            run_id: started.run_id,
        }),
    ))
}
