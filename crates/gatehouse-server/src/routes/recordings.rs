//! Recordings over HTTP: export a run (`GET /runs/{run_id}/recording`) or
//! a session (`GET /sessions/{session_id}/recording`), import one into this
//! database (`POST /recordings`). Reviewers and admins export and import
//! (agents may export runs they take part in). A scoped token exports only
//! runs in its scope; importing covers every run, so it needs an unscoped
//! token.

use std::collections::HashSet;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use gatehouse_engine::recording::ImportSummary;
use gatehouse_engine::{EngineError, Recording, RecordingScope, RunId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{missing, Caller};
use crate::error::{ApiError, ApiErrorBody, ApiErrorCode, ApiResult};
use crate::json::ApiJson;
use crate::params::ApiPath;
use crate::routes::runs::visible_run;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(export_run)).routes(routes!(export_session)).routes(routes!(import_recording))
}

/// Exports one run as a recording: its snapshots and the events that
/// produced them, secrets redacted. Agents may export runs they take part
/// in; a scoped token runs in its scope.
#[utoipa::path(get, path = "/runs/{run_id}/recording", tag = "admin", params(("run_id" = String, Path, description = "The run")),
    responses((status = 200, body = Recording), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn export_run(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(run_id): ApiPath<String>,
) -> ApiResult<Json<Recording>> {
    let id = visible_run(&state, &caller, &RunId::from_string(run_id)).await?.id;
    Ok(Json(state.engine(move |e| e.export(RecordingScope::Run { run_id: id })).await?))
}

/// Exports every run of a session as one recording. An agent may export a
/// session only when it takes part in every run of it (403 otherwise). A
/// scoped token gets the session's runs in its scope, and 404 when none is.
#[utoipa::path(get, path = "/sessions/{session_id}/recording", tag = "admin",
    params(("session_id" = String, Path, description = "The session")),
    responses((status = 200, body = Recording), (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody)))]
pub async fn export_session(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(session_id): ApiPath<String>,
) -> ApiResult<Json<Recording>> {
    let who = caller.clone();
    let recording = state
        .engine_checked(move |e| {
            let mut recording = e.export(RecordingScope::Session { session_id: session_id.clone() })?;
            if who.is_scoped() {
                let mut kept = Vec::new();
                for record in std::mem::take(&mut recording.runs) {
                    if who.reaches(e, &record.run)? {
                        kept.push(record);
                    }
                }
                if kept.is_empty() {
                    return Err(missing("session", &session_id));
                }
                let runs: HashSet<RunId> = kept.iter().map(|record| record.run.id.clone()).collect();
                recording.events.retain(|event| event.run_id.as_ref().is_some_and(|id| runs.contains(id)));
                recording.runs = kept;
            }
            Ok(recording)
        })
        .await?;
    for record in &recording.runs {
        caller.may_use_run(&record.run)?;
    }
    Ok(Json(recording))
}

/// Imports a recording in one transaction: every run, gate, decision and
/// event as it was, marked as imported; gates it left pending come in
/// closed (cancelled as imported undecided), history rather than work. Reviewers and
/// admins with unscoped tokens only. A malformed recording is 422 naming
/// the field; a recording with a run this database already holds is
/// refused whole with 409 `conflict`, whose `field` points at that run's id
/// in the recording (`runs[I].run.id`) and whose message names it (nothing
/// is imported).
#[utoipa::path(post, path = "/recordings", tag = "admin", request_body = Recording,
    responses((status = 201, body = ImportSummary), (status = 403, body = ApiErrorBody), (status = 409, body = ApiErrorBody),
        (status = 422, body = ApiErrorBody)))]
pub async fn import_recording(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(recording): ApiJson<Recording>,
) -> ApiResult<(StatusCode, Json<ImportSummary>)> {
    caller.require_reviewer()?;
    caller.require_unscoped("importing a recording")?;
    let actor = caller.name.clone();
    let summary = state
        .engine(move |e| {
            // The engine refuses such a recording too (as invalid); naming
            // the clash here lets clients tell "already imported" apart.
            for (i, record) in recording.runs.iter().enumerate() {
                match e.run(&record.run.id) {
                    Ok(_) => return Ok(Err((i, record.run.id.clone()))),
                    Err(EngineError::NotFound { .. }) => {}
                    Err(other) => return Err(other),
                }
            }
            e.import(recording, &actor).map(Ok)
        })
        .await?
        .map_err(|(i, run)| already_imported(i, &run))?;
    Ok((StatusCode::CREATED, Json(summary)))
}

/// The 409 for a recording already imported: `field` is the path of the
/// clashing run's id in the body, so a client can show the run it has.
fn already_imported(index: usize, run: &RunId) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        ApiErrorCode::Conflict,
        format!("run {run} already exists in this database (already imported); nothing was imported"),
    )
    .with_field(format!("runs[{index}].run.id"))
}
