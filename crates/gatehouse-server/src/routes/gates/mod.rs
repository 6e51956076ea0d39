//! Gates over HTTP, one module per step of a gate's life: an agent opens
//! one ([`open`], the three HITL tools included), waits for it and
//! reviewers read the queue ([`read`]), reviewers decide it ([`decide`],
//! the HITL run API's `/run/{run_id}/approve` included) and search every
//! gate ([`search`]). The first resolver wins; later ones get 409 naming
//! who resolved it and when.
//!
//! Opening a gate and waiting for its decision are the hot path, shared
//! with the MCP server: [`open_gate_for`] and [`wait_for_gate`] live here.

use gatehouse_engine::{Engine, EngineError, Gate, GateId, NewGate, RunAccess, RunId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

pub mod decide;
pub mod open;
pub mod read;
pub mod search;

/// The gates' routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(open::open_gate))
        .routes(routes!(open::request_approval))
        .routes(routes!(open::escalate_to_human))
        .routes(routes!(open::request_feedback))
        .routes(routes!(read::wait_gate))
        .routes(routes!(read::list_gates))
        .routes(routes!(read::get_gate))
        .routes(routes!(read::pending_approvals))
        .routes(routes!(decide::resolve_gate))
        .routes(routes!(decide::score_gate))
        .routes(routes!(decide::approve))
        .routes(routes!(search::search_gates))
}

/// Opens `new` on `run_id` if the caller may use the run. The access
/// check runs inside the gate's own write transaction, and the answer
/// comes from the store's writer straight to this task
/// ([`AppState::engine_then`]). An agent's gate is checked against the
/// review people set for it (403 naming the field that would weaken it),
/// and every gate remembers the token that opened it, which may then not
/// decide it.
pub(crate) async fn open_gate_for(state: &AppState, caller: &Caller, run_id: RunId, new: NewGate) -> ApiResult<Gate> {
    // Judged on the request as sent, told only to a caller who may use the run.
    let floor = match caller.floor(&state.config.oversight) {
        Some(floor) => floor.check_gate(&new, &caller.name).map_err(EngineError::from),
        None => Ok(()),
    };
    let new = NewGate { opened_by: Some(caller.token_id.clone()), ..new };
    let caller = caller.clone();
    state
        .engine_then(move |e, answer| {
            let name = caller.name.clone();
            let access = move |run: &RunAccess<'_>| {
                caller.may_open_on(run)?;
                floor.map_err(ApiError::from)
            };
            e.open_gate_then(&run_id, new, &name, access, move |gate| {
                let _ = answer.send(gate);
            });
        })
        .await?
}

/// Waits until `gate_id` closes, a reviewer releases it, or `deadline`
/// passes, answering with the gate as it is then. A released gate is still
/// pending, with `released` set: it was not decided.
pub(crate) async fn wait_for_gate(
    state: &AppState,
    gate_id: &GateId,
    deadline: tokio::time::Instant,
) -> ApiResult<Gate> {
    wait_reading_first(state, gate_id, deadline, false, |e, id| Ok(e.gate(id)?)).await
}

/// [`wait_for_gate`], with `through_release` (a released gate is waited
/// on further, until it closes or `deadline` passes), whose first look at
/// the gate is `first`, which may refuse the caller as an access check
/// does. It reads once the wait is registered, so a caller checked and
/// waiting costs one read of the gate, not a check and then a read.
pub(crate) async fn wait_reading_first<F>(
    state: &AppState,
    gate_id: &GateId,
    deadline: tokio::time::Instant,
    through_release: bool,
    first: F,
) -> ApiResult<Gate>
where
    F: FnOnce(&Engine, &GateId) -> ApiResult<Gate> + Send + 'static,
{
    let ticket = state.waiters.register(gate_id);
    let mut first = Some(first);
    loop {
        // Arm the wake-up before reading, so a decision in between still wakes us.
        let notified = ticket.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        // Decided here: the wake-up carried the gate as the decision left it
        // (once the caller's first look has let it see the gate at all).
        if first.is_none() {
            if let Some(closed) = ticket.closed() {
                return Ok(Gate::clone(&closed));
            }
        }
        let id = gate_id.clone();
        let gate = match first.take() {
            Some(first) => state.engine_checked(move |e| first(e, &id)).await?,
            None => state.engine(move |e| e.gate(&id)).await?,
        };
        if gate.status.is_terminal() || (!through_release && gate.released.is_some()) {
            return Ok(gate);
        }
        if tokio::time::Instant::now() >= deadline {
            state.waiters.left_pending(gate_id);
            return Ok(gate);
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            // Timed out: answer with the gate as it is now; its agent was here until now.
            state.waiters.left_pending(gate_id);
            let id = gate_id.clone();
            return state.engine(move |e| e.gate(&id)).await;
        }
    }
}
