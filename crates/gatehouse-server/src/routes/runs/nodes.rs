//! A run reaching a node of its workflow: `POST /run/{run_id}/nodes/{node_id}`
//! opens the gate the run declared for that node (`declared_gates`), with
//! the declared kind, rubric, required score and review. What the agent
//! sends adds the payload, context and, when the declaration has none, the
//! text; it never changes what was declared. The gate goes through the one
//! path every gate an agent opens takes (`open_gate_for`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::engine::NodeReached;
use gatehouse_engine::RunId;

use crate::auth::Caller;
use crate::error::{ApiErrorBody, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::routes::gates::open::OpenedGate;
use crate::routes::gates::open_gate_for;
use crate::state::AppState;

/// The run reached a workflow node: opens the gate declared there. A node
/// the run declared nothing for is 422 naming `node_id`.
#[utoipa::path(post, path = "/run/{run_id}/nodes/{node_id}", tag = "agents",
    params(("run_id" = String, Path, description = "The run"), ("node_id" = String, Path, description = "The workflow node reached")),
    request_body = NodeReached,
    responses((status = 201, body = OpenedGate), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn reach_node(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((run_id, node_id)): ApiPath<(String, String)>,
    ApiJson(reached): ApiJson<NodeReached>,
) -> ApiResult<(StatusCode, Json<OpenedGate>)> {
    let run_id = RunId::from_string(run_id);
    let (may, id) = (caller.clone(), run_id.clone());
    let new = state
        .engine_checked(move |e| {
            let run = may.run(e, &id)?;
            Ok(e.node_gate(&run.id, &node_id, reached)?)
        })
        .await?;
    let gate = open_gate_for(&state, &caller, run_id, new).await?;
    Ok((StatusCode::CREATED, Json(OpenedGate { gate_id: gate.id.clone(), status: gate.status, gate })))
}
