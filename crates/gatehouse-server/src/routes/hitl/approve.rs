//! The HITL run API's `POST /run/{run_id}/approve`: approve, edit or reject one of
//! a run's checkpoints. An edit's `edits` are merged over the gate's
//! payload (RFC 7386) before the engine diffs and records them.

use axum::extract::State;
use axum::Json;
use gatehouse_engine::decision::{DecisionAction, DecisionInput};
use gatehouse_engine::{Gate, GateId, RunId};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// What a reviewer does with a checkpoint: approve, edit or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApproveAction {
    /// Go ahead as proposed.
    Approve,
    /// Go ahead with `edits` applied.
    Edit,
    /// Do not go ahead.
    Reject,
}

/// A reviewer's decision on a run's checkpoint.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ApproveRequest {
    /// The checkpoint: a gate id of this run.
    pub approval_id: String,
    /// approve, edit or reject.
    pub action: ApproveAction,
    /// For `edit`: the edited payload. When the gate has a payload, this is
    /// applied to it as a JSON merge patch (RFC 7386): listed fields replace
    /// the proposal's, nested objects merge, `null` removes a field, and
    /// fields not listed are kept. Without a gate payload it is the payload.
    /// Ignored for approve and reject.
    #[serde(default)]
    pub edits: Option<Value>,
    /// Why; recorded as the decision's text for every action.
    #[serde(default)]
    pub reason: Option<String>,
    /// Ignored: the decider recorded is always the bearer token's identity,
    /// never a name in the body.
    #[serde(default)]
    pub approved_by: Option<String>,
}

/// Applies an RFC 7386 JSON merge patch to `target`.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(map) = target {
        for (key, value) in fields {
            if value.is_null() {
                map.shift_remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// Approves, edits or rejects one of the run's checkpoints. Reviewers and
/// admins only; the first decision wins and later ones get 409 naming who
/// decided first. Returns the decided gate (its decision carries the diff
/// of an edit).
#[utoipa::path(post, path = "/run/{run_id}/approve", tag = "hitl", params(("run_id" = String, Path, description = "The run")),
    request_body = ApproveRequest,
    responses((status = 200, body = Gate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn approve(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiJson(req): ApiJson<ApproveRequest>,
) -> ApiResult<Json<Gate>> {
    caller.require_reviewer()?;
    let run_id = RunId::from_string(run_id);
    let gate_id = GateId::from_string(req.approval_id);
    let (rid, gid, who) = (run_id.clone(), gate_id.clone(), caller.clone());
    let gate = state
        .engine_checked(move |e| {
            who.run(e, &rid)?;
            Ok(who.gate(e, &gid)?.0)
        })
        .await?;
    if gate.run_id != run_id {
        return Err(ApiError::not_found(format!(
            "approval_id: gate `{gate_id}` is not a checkpoint of run `{run_id}`"
        )));
    }
    let action = match req.action {
        ApproveAction::Approve => DecisionAction::Approve,
        ApproveAction::Edit => DecisionAction::Edit,
        ApproveAction::Reject => DecisionAction::Reject,
    };
    let reason = req.reason.filter(|r| !r.trim().is_empty());
    let mut input = DecisionInput { text: reason, ..DecisionInput::new(action) };
    if action == DecisionAction::Edit {
        let edits = req
            .edits
            .filter(|e| !e.is_null())
            .ok_or_else(|| ApiError::invalid_field("edits", "an `edit` needs the edited fields"))?;
        input.payload = Some(match gate.payload {
            Some(mut payload) => {
                merge_patch(&mut payload, &edits);
                payload
            }
            None => edits,
        });
    }
    let who = caller.decider();
    Ok(Json(state.engine(move |e| e.resolve_gate_as(&gate_id, input, &who)).await?))
}
