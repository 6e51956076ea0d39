//! Runs over HTTP, one module per part of a run's life: start, status and
//! state, pause, resume, cancel, complete and fail ([`lifecycle`]); an
//! agent's turns and the directive it gets back ([`turns`]); a reviewer's
//! step-through control ([`control`]); the listings ([`listing`]); a run's
//! event log as JSON ([`events`]); reaching a workflow node opens the gate
//! the run declared there ([`nodes`]); a team run's team, handoffs and memory ([`team`]). The HITL run API's `/run/...` paths sit
//! beside the `/runs/...` ones. A run's plan and shared context are
//! `routes/collab.rs`, its recordings `routes/recordings.rs`.

use gatehouse_engine::{Run, RunId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::AppState;

pub mod control;
pub mod events;
pub mod lifecycle;
pub mod listing;
pub mod nodes;
pub mod restart_task;
pub mod team;
pub mod turns;

/// The runs' routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(lifecycle::start_run))
        .routes(routes!(lifecycle::run_status))
        .routes(routes!(lifecycle::run_state))
        .routes(routes!(lifecycle::pause_run))
        .routes(routes!(lifecycle::resume_run))
        .routes(routes!(lifecycle::begin_run))
        .routes(routes!(lifecycle::retry_run))
        .routes(routes!(lifecycle::cancel_run))
        .routes(routes!(lifecycle::complete_run))
        .routes(routes!(lifecycle::fail_run))
        .routes(routes!(nodes::reach_node))
        .routes(routes!(turns::add_turn))
        .routes(routes!(turns::directive))
        .routes(routes!(control::step_run))
        .routes(routes!(control::set_control))
        .routes(routes!(control::inject_instruction))
        .routes(routes!(control::set_next_agent))
        .routes(routes!(listing::list_runs))
        .routes(routes!(listing::active_runs))
        .routes(routes!(listing::session_active_runs))
        .routes(routes!(events::run_events))
        .routes(routes!(team::team_of_run, team::change_team))
        .routes(routes!(restart_task::restart_task))
}

/// The run, if the caller may see it (agents: runs they drive or take part
/// in; scoped tokens: runs in their scope, others are 404).
pub(crate) async fn visible_run(state: &AppState, caller: &Caller, run_id: &RunId) -> ApiResult<Run> {
    let (caller, id) = (caller.clone(), run_id.clone());
    state.engine_checked(move |e| caller.run(e, &id)).await
}
