//! Deciding gates: `POST /gates/{gate_id}/resolve`, `POST
//! /gates/{gate_id}/score` (a quality gate's deliverable against its
//! rubric) and the HITL run API's `POST /run/{run_id}/approve` (approve,
//! edit or reject one of a run's checkpoints; an edit's `edits` are merged
//! over the gate's payload (RFC 7386) before the engine diffs and records
//! them). Reviewers and admins decide (an agent's score decides only under
//! its run's auto-approve threshold); the decider is the token's identity.

use axum::extract::State;
use axum::Json;
use gatehouse_engine::decision::{DecisionAction, DecisionInput};
use gatehouse_engine::scoring::{QualityScore, ScoreVerdict};
use gatehouse_engine::{Gate, GateId, Role, RunAccess, RunId};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::state::AppState;

/// Decides a gate. Reviewers and admins only; the decider recorded is the
/// token's identity. 409 names who resolved it first and when. A scoped
/// token may make an `allow_rule` only for an agent its scope names (403).
#[utoipa::path(post, path = "/gates/{gate_id}/resolve", tag = "reviewers", params(("gate_id" = String, Path, description = "The gate")),
    request_body = DecisionInput,
    responses((status = 200, body = Gate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn resolve_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
    ApiJson(input): ApiJson<DecisionInput>,
) -> ApiResult<Json<Gate>> {
    caller.require_reviewer()?;
    let id = GateId::from_string(gate_id);
    let (decider, makes_rule) = (caller.decider(), input.allow_rule.is_some());
    // The caller's access is checked inside the decision's transaction.
    let access = move |gate: &Gate, run: &RunAccess<'_>| {
        caller.may_decide_on(gate, run)?;
        if makes_rule && !caller.may_rule_for(&gate.agent) {
            return Err(ApiError::forbidden(format!(
                "allow_rule: `{}` has a scoped token, which may make allow-rules only for the agents its scope \
                 names, not for `{}` (a rule passes that agent's gates in every run)",
                caller.name, gate.agent
            )));
        }
        Ok(())
    };
    let gate = state
        .engine_then(move |e, answer| {
            e.resolve_gate_then(&id, input, &decider, access, move |gate| {
                let _ = answer.send(gate);
            });
        })
        .await??;
    Ok(Json(gate))
}

/// A score for a quality gate's deliverable.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ScoreRequest {
    /// Overall score, 1 to 5.
    pub score: f64,
    /// Optional per-criterion scores, each 1 to 5.
    #[serde(default)]
    pub rubric_scores: std::collections::BTreeMap<String, f64>,
    /// Why.
    #[serde(default)]
    pub justification: String,
}

/// A scored gate and what the score means.
#[derive(Debug, Serialize, ToSchema)]
pub struct ScoreReply {
    /// The gate: resolved when the score decided it, else still pending.
    pub gate: Gate,
    /// `passes` at or above the gate's `required_score`, else `needs_revision`.
    pub verdict: ScoreVerdict,
}

/// Scores a quality gate's deliverable against its rubric. A
/// reviewer's score decides the gate (approve when it passes, needs
/// revision when not). An agent's score (its own run's gate) decides it
/// only when the run's handoff protocol has an auto-approve threshold the
/// score meets and the gate does not require a human; otherwise it is
/// recorded and the gate waits for a reviewer. The scorer is the token.
#[utoipa::path(post, path = "/gates/{gate_id}/score", tag = "reviewers", params(("gate_id" = String, Path, description = "The gate")),
    request_body = ScoreRequest,
    responses((status = 200, body = ScoreReply), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn score_gate(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(gate_id): ApiPath<String>,
    ApiJson(req): ApiJson<ScoreRequest>,
) -> ApiResult<Json<ScoreReply>> {
    let id = GateId::from_string(gate_id);
    let role = match caller.role {
        gatehouse_engine::TokenRole::Agent => Role::Agent,
        _ => Role::Human,
    };
    let (gate, verdict) = state
        .engine_checked(move |e| {
            let (gate, _) = caller.gate(e, &id)?;
            let score = QualityScore {
                score: req.score,
                rubric_scores: req.rubric_scores,
                justification: req.justification,
                scorer: caller.name.clone(),
                deliverable_id: match &gate.spec {
                    gatehouse_engine::GateSpec::QualityScore { deliverable_id, .. } => deliverable_id.clone(),
                    _ => String::new(),
                },
                at: e.now(),
            };
            // A person's score decides the gate: they must be one who may decide it.
            Ok(match role {
                Role::Human => e.score_quality_gate_as(&id, score, &caller.decider())?,
                _ => e.evaluate_quality_gate(&id, score, role)?,
            })
        })
        .await?;
    Ok(Json(ScoreReply { gate, verdict }))
}

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
