//! Live replay over HTTP (`replay.rs` plays them): start one from a
//! recording or a stored run (`POST /replays`), list and read them, control
//! one (`POST /replays/{id}/control`: pause, resume, step, stop, a new
//! speed) and follow it (`GET /replays/{id}/events`, Server-Sent Events:
//! `replay` frames marked `replay: true`, `replay_state` on every change; the
//! stream ends with the replay). Reviewers and admins only; a stored run must
//! be one the caller may see.

use std::convert::Infallible;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::Stream;
use gatehouse_engine::{Recording, RecordingScope, RunId};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::replay::{NewReplay, ReplayAction, ReplayFrame, ReplayMessage, ReplayStatus, MAX_SPEED};
use crate::routes::runs::visible_run;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(start_replay, list_replays))
        .routes(routes!(read_replay))
        .routes(routes!(control_replay))
        .routes(routes!(follow_replay))
}

/// What to replay: a recording, or a stored run's events.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StartReplay {
    /// A recording (as `GET /runs/{run_id}/recording` exports it); or give `run_id`.
    #[serde(default)]
    pub recording: Option<Recording>,
    /// A run stored here, replayed from its events; or give `recording`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// How many times faster than it happened (default 1, at most 1000).
    #[serde(default)]
    pub speed: Option<f64>,
    /// Start held, so followers subscribe first and then resume or step.
    #[serde(default)]
    pub paused: bool,
}

/// A control for a running replay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ControlReplay {
    /// Pause, resume, step (pause and send the next event) or stop.
    #[serde(default)]
    pub action: Option<ReplayAction>,
    /// A new speed, from now on.
    #[serde(default)]
    pub speed: Option<f64>,
}

fn check_speed(speed: Option<f64>) -> ApiResult<Option<f64>> {
    match speed {
        Some(s) if !(s.is_finite() && s > 0.0 && s <= MAX_SPEED) => {
            Err(ApiError::invalid_field("speed", format!("must be above 0 and at most {MAX_SPEED}, got {s}")))
        }
        other => Ok(other),
    }
}

/// Starts replaying a recording (or a stored run) into the replay's own
/// event stream, its original gaps divided by `speed`. Nothing is stored:
/// runs and the audit log are untouched.
#[utoipa::path(post, path = "/replays", tag = "replays", request_body = StartReplay,
    responses((status = 201, body = ReplayStatus), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 409, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn start_replay(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<StartReplay>,
) -> ApiResult<(StatusCode, Json<ReplayStatus>)> {
    caller.require_reviewer()?;
    let speed = check_speed(body.speed)?.unwrap_or(1.0);
    let recording = match (body.recording, body.run_id) {
        (Some(_), Some(_)) => return Err(ApiError::invalid_field("run_id", "give a recording or a run_id, not both")),
        (None, None) => return Err(ApiError::invalid_field("recording", "give a recording or a run_id")),
        (Some(recording), None) => {
            state.engine(move |e| e.recording_for_replay(recording)).await.map_err(|e| e.with_field("recording"))?
        }
        (None, Some(run_id)) => {
            let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
            state.engine(move |e| e.export(RecordingScope::Run { run_id: id })).await?
        }
    };
    if recording.events.is_empty() {
        return Err(ApiError::invalid_field("recording.events", "holds no event to replay"));
    }
    let new = NewReplay {
        run_ids: recording.runs.iter().map(|r| r.run.id.to_string()).collect(),
        events: recording.events,
        speed,
        paused: body.paused,
        started_by: caller.name.clone(),
    };
    let session = state.replays.start(new).ok_or_else(|| {
        ApiError::new(StatusCode::CONFLICT, ApiErrorCode::Conflict, "too many replays are playing; stop one first")
    })?;
    Ok((StatusCode::CREATED, Json(session.status())))
}

/// The replays this server holds, newest first.
#[utoipa::path(get, path = "/replays", tag = "replays",
    responses((status = 200, body = Vec<ReplayStatus>), (status = 403, body = ApiErrorBody)))]
pub async fn list_replays(State(state): State<AppState>, caller: Caller) -> ApiResult<Json<Vec<ReplayStatus>>> {
    caller.require_reviewer()?;
    Ok(Json(state.replays.list()))
}

fn session(state: &AppState, id: &str) -> ApiResult<std::sync::Arc<crate::replay::Session>> {
    state.replays.get(id).ok_or_else(|| ApiError::not_found(format!("no replay {id}")).with_field("replay_id"))
}

/// One replay's state.
#[utoipa::path(get, path = "/replays/{replay_id}", tag = "replays", params(("replay_id" = String, Path, description = "The replay")),
    responses((status = 200, body = ReplayStatus), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn read_replay(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(replay_id): ApiPath<String>,
) -> ApiResult<Json<ReplayStatus>> {
    caller.require_reviewer()?;
    Ok(Json(session(&state, &replay_id)?.status()))
}

/// Pauses, resumes, steps (pauses and sends the next event) or stops a
/// replay, and may set a new speed. A control on an ended replay changes nothing.
#[utoipa::path(post, path = "/replays/{replay_id}/control", tag = "replays", request_body = ControlReplay,
    params(("replay_id" = String, Path, description = "The replay")),
    responses((status = 200, body = ReplayStatus), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn control_replay(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(replay_id): ApiPath<String>,
    ApiJson(body): ApiJson<ControlReplay>,
) -> ApiResult<Json<ReplayStatus>> {
    caller.require_reviewer()?;
    let speed = check_speed(body.speed)?;
    if body.action.is_none() && speed.is_none() {
        return Err(ApiError::invalid_field("action", "give an action, a speed or both"));
    }
    Ok(Json(session(&state, &replay_id)?.control(body.action, speed)))
}

/// Follows a replay as Server-Sent Events: first `replay_state`, then the
/// frames sent so far (`replay`, each a `ReplayFrame`), then each new frame
/// and state as it comes. The stream ends when the replay does.
#[utoipa::path(get, path = "/replays/{replay_id}/events", tag = "replays",
    params(("replay_id" = String, Path, description = "The replay")),
    responses((status = 200, description = "`replay` frames and `replay_state` changes", content_type = "text/event-stream",
        body = ReplayFrame), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn follow_replay(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(replay_id): ApiPath<String>,
) -> ApiResult<Response> {
    caller.require_reviewer()?;
    let (sent, status, live) = session(&state, &replay_id)?.follow();
    let ended = status.state.ended();
    let mut first = vec![state_event(&status)];
    first.extend(sent.iter().map(|f| frame_event(f)));
    let stream = Sse::new(messages(first, live, ended)).keep_alive(KeepAlive::default());
    Ok(([("x-accel-buffering", "no")], stream).into_response())
}

fn state_event(status: &ReplayStatus) -> SseEvent {
    SseEvent::default().event("replay_state").data(serde_json::to_string(status).unwrap_or_default())
}

fn frame_event(frame: &ReplayFrame) -> SseEvent {
    // The frame's index as its id: a reconnecting follower gets the whole backlog again, so nothing hangs on it.
    SseEvent::default()
        .event("replay")
        .id(frame.index.to_string())
        .data(serde_json::to_string(frame).unwrap_or_default())
}

/// The backlog, then live messages until the replay ends (or the follower falls too far behind).
fn messages(
    first: Vec<SseEvent>,
    live: tokio::sync::broadcast::Receiver<ReplayMessage>,
    ended: bool,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let backlog = futures_util::stream::iter(first.into_iter().map(Ok));
    let follow = futures_util::stream::unfold((live, ended), |(mut live, done)| async move {
        if done {
            return None;
        }
        match live.recv().await {
            Ok(ReplayMessage::Frame(frame)) => Some((Ok(frame_event(&frame)), (live, false))),
            Ok(ReplayMessage::Status(status)) => {
                let end = status.state.ended();
                Some((Ok(state_event(&status)), (live, end)))
            }
            // Too far behind to keep the order: end, and a reconnect gets the whole backlog.
            Err(RecvError::Lagged(_)) | Err(RecvError::Closed) => None,
        }
    });
    futures_util::StreamExt::chain(backlog, follow)
}
