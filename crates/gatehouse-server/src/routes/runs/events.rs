//! A run's event log as JSON for its timeline: `GET
//! /runs/{run_id}/events`, paged, oldest first. Agents see only their own
//! runs. The live stream of every run's events is `routes/events.rs`.

use axum::extract::State;
use axum::Json;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::Event;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::params::{ApiPath, ApiQuery};
use crate::state::AppState;

/// A page of the run's log.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only events after this sequence number (default 0: from the start).
    pub after: Option<u64>,
    /// At most this many (default 500, at most 5000).
    pub limit: Option<u32>,
}

/// The run's events, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventPage {
    /// The events: turns, gates, decisions, context and plan changes,
    /// status changes and interventions, each with its actor and time.
    pub events: Vec<Event>,
    /// Pass as `after` for the next page; equal to the request's `after`
    /// when there is nothing newer.
    pub next_after: u64,
}

/// A run's timeline: its event log as JSON, paged. Agents see only their
/// own runs.
#[utoipa::path(get, path = "/runs/{run_id}/events", tag = "reviewers",
    params(("run_id" = String, Path, description = "The run"), EventsQuery),
    responses((status = 200, body = EventPage), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn run_events(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
    ApiQuery(q): ApiQuery<EventsQuery>,
) -> ApiResult<Json<EventPage>> {
    let limit = q.limit.unwrap_or(500);
    if !(1..=5000).contains(&limit) {
        return Err(ApiError::invalid_field("limit", format!("must be from 1 to 5000, got {limit}")));
    }
    let after = q.after.unwrap_or(0);
    let events = caller
        .on_run(&state, run_id, move |e, id, _| {
            let filter = EventFilter { run_id: Some(id.clone()), ..EventFilter::default() };
            e.events_after(after, &filter, limit)
        })
        .await?;
    let next_after = events.last().map_or(after, |e| e.seq);
    Ok(Json(EventPage { events, next_after }))
}
