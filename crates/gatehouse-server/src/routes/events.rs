//! The event log as Server-Sent Events. A client names where it left off
//! (`Last-Event-ID`, or `?after=SEQ` on first connect) and gets every later
//! event matching its filter exactly once, in log order, then live ones.
//!
//! The stream never blocks the runtime: it subscribes to the engine's live
//! broadcast first, then reads the backlog from the log in pages on the
//! blocking pool, then forwards live events, skipping any sequence number
//! already sent. A subscriber that falls behind the broadcast simply reads
//! the log again from its last event, so a slow client costs memory in the
//! log, not in the server. A scoped token's stream carries only the events
//! of runs in its scope (each run checked once, sub-runs started later
//! included) and none that belong to no run. Revoking the stream's token
//! ends it: live, by the revocation event; while catching up, by a check
//! of the token with every page read (a run's filter never matches the
//! revocation, and lagging may have dropped it from the broadcast).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{EngineError, Event, EventKind, RunId, TokenRole};
use serde::Deserialize;
use tokio::sync::broadcast::{self, error::RecvError};
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::params::ApiQuery;
use crate::routes::runs::visible_run;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stream_events))
}

/// Events read from the log per blocking call while catching up: large
/// enough to amortise the hop to the blocking pool, small enough that one
/// page of big events stays a few megabytes.
const PAGE: u32 = 1_000;

/// Runs a scoped stream remembers being in scope or not before it starts afresh.
const REMEMBERED_RUNS: usize = 10_000;

/// How often an idle stream sends a comment, so proxies and browsers keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Which events to follow, and from where.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventQuery {
    /// Only this run's events. Required for agent tokens (a run they take part in).
    pub run_id: Option<String>,
    /// Only this session's events.
    pub session_id: Option<String>,
    /// Only this user's events.
    pub user_id: Option<String>,
    /// Start after this sequence number (0, the default, replays the whole
    /// matching log; the current head gives only new events). A
    /// `Last-Event-ID` header, sent by `EventSource` on reconnect, takes precedence.
    pub after: Option<u64>,
}

/// Follows the event log as Server-Sent Events: `id` is the event's
/// sequence number, `event` its type (`gate_opened`, `gate_resolved`, ...),
/// `data` the event as JSON. Reconnecting with `Last-Event-ID` resumes with
/// nothing missed and nothing repeated. The token goes in the
/// `Authorization` header; a server started with `--allow-query-token` also
/// takes `?access_token=` here (for plain `EventSource`, which cannot send
/// headers). Reviewers and admins may follow everything; agents only a run
/// they take part in; a scoped token the runs in its scope. Revoking the
/// token ends the stream, however far behind it is.
#[utoipa::path(get, path = "/events", tag = "events",
    params(EventQuery, ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this sequence number")),
    responses(
        (status = 200, description = "A stream of `id`/`event`/`data` messages; each `data` is one Event",
            content_type = "text/event-stream", body = Event),
        (status = 403, body = ApiErrorBody), (status = 404, body = ApiErrorBody), (status = 422, body = ApiErrorBody)))]
pub async fn stream_events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiQuery(q): ApiQuery<EventQuery>,
) -> ApiResult<Response> {
    // An empty header means "no id yet" (the SSE spec's reset), like no header.
    let last_event_id = headers.get("last-event-id").filter(|v| !v.as_bytes().trim_ascii().is_empty());
    let after = match last_event_id {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .ok_or_else(|| ApiError::invalid_field("Last-Event-ID", "must be an event sequence number"))?,
        None => q.after.unwrap_or(0),
    };
    let filter = EventFilter { run_id: q.run_id.map(RunId::from_string), session_id: q.session_id, user_id: q.user_id };
    authorize(&state, &caller, &filter).await?;
    // One named run was checked whole; otherwise a scoped token's events are checked run by run.
    let token_id = caller.token_id.clone();
    let scope = (caller.is_scoped() && filter.run_id.is_none()).then(|| InScope { caller, runs: HashMap::new() });
    // Subscribe before the first backlog read: anything committed from here
    // on arrives live even if the read misses it; duplicates are dropped by seq.
    let live = state.engine_handle().live_events();
    let feed = Feed { state, filter, scope, token_id, live, last: after, queue: VecDeque::new(), catching_up: true };
    let stream = Sse::new(feed.into_stream()).keep_alive(KeepAlive::new().interval(KEEP_ALIVE).text("keep-alive"));
    // Reverse proxies (nginx) would otherwise buffer the stream.
    Ok(([("x-accel-buffering", "no")], stream).into_response())
}

/// Agents see only runs they take part in, so they must name one.
async fn authorize(state: &AppState, caller: &Caller, filter: &EventFilter) -> ApiResult<()> {
    match &filter.run_id {
        Some(run_id) => visible_run(state, caller, run_id).await.map(drop),
        None if caller.role == TokenRole::Agent => Err(ApiError::forbidden(format!(
            "`{}` has an agent token, which may only follow its own runs: pass run_id=<a run it drives>",
            caller.name
        ))),
        None => Ok(()),
    }
}

/// A scoped token's view: which runs it reaches, learnt as their events come.
struct InScope {
    caller: Caller,
    runs: HashMap<RunId, bool>,
}

/// One subscriber's position in the log.
struct Feed {
    state: AppState,
    filter: EventFilter,
    /// For a scoped token following more than one run.
    scope: Option<InScope>,
    /// The caller's token: its revocation, on any instance, ends the stream
    /// (reconnecting is then refused), so a revoked reviewer sees no more.
    token_id: String,
    live: broadcast::Receiver<Arc<Event>>,
    /// The sequence number of the last event sent (or the resume point).
    last: u64,
    /// Events read or received but not yet sent, in log order.
    queue: VecDeque<Arc<Event>>,
    /// Whether the log may hold matching events after `last` that the
    /// broadcast will not deliver (at the start, and after lagging).
    catching_up: bool,
}

impl Feed {
    fn into_stream(self) -> impl Stream<Item = Result<SseEvent, Infallible>> + Send {
        // Dropping the stream (the client went away) drops the feed and its
        // broadcast receiver; no task is left behind.
        futures_util::stream::unfold(self, |mut feed| async move { feed.next().await.map(|event| (Ok(event), feed)) })
    }

    /// The next message, or `None` to end the stream (engine gone or failing;
    /// the client reconnects with `Last-Event-ID` and loses nothing).
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                if revokes(&event, &self.token_id) {
                    // Reconnecting must meet the revocation, not a cached good token.
                    self.state.forget_tokens();
                    return None;
                }
                match self.reaches(&event).await {
                    Ok(true) => {}
                    Ok(false) => {
                        self.last = event.seq;
                        continue;
                    }
                    Err(e) => {
                        tracing::warn!(error = ?e, after = self.last, "event stream ended: cannot check the scope");
                        return None;
                    }
                }
                self.last = event.seq;
                match message(&event) {
                    Some(message) => return Some(message),
                    None => continue,
                }
            }
            if self.catching_up {
                match self.read_page().await {
                    Ok(Page::Read) => continue,
                    Ok(Page::Revoked) => {
                        tracing::info!(token = %self.token_id, "event stream ended: its token was revoked");
                        self.state.forget_tokens();
                        return None;
                    }
                    Err(e) => {
                        tracing::warn!(error = ?e, after = self.last, "event stream ended: cannot read the log");
                        return None;
                    }
                }
            }
            match self.live.recv().await {
                Ok(event) if revokes(&event, &self.token_id) => {
                    tracing::info!(token = %self.token_id, "event stream ended: its token was revoked");
                    self.state.forget_tokens();
                    return None;
                }
                Ok(event) if event.seq > self.last && matches(&self.filter, &event) => self.queue.push_back(event),
                Ok(_) => {}
                // The broadcast dropped events for us: the log still has them.
                Err(RecvError::Lagged(_)) => self.catching_up = true,
                Err(RecvError::Closed) => return None,
            }
        }
    }

    /// Whether a scoped token reaches `event`'s run (always without a scope).
    async fn reaches(&mut self, event: &Event) -> ApiResult<bool> {
        let Some(scope) = &mut self.scope else { return Ok(true) };
        let Some(run_id) = &event.body.run_id else { return Ok(false) };
        if let Some(known) = scope.runs.get(run_id) {
            return Ok(*known);
        }
        let (caller, id) = (scope.caller.clone(), run_id.clone());
        // A purged run reaches nobody.
        let reached = self
            .state
            .engine(move |e| match e.run(&id) {
                Ok(run) => caller.reaches(e, &run),
                Err(EngineError::NotFound { .. }) => Ok(false),
                Err(other) => Err(other),
            })
            .await?;
        if scope.runs.len() >= REMEMBERED_RUNS {
            scope.runs.clear();
        }
        scope.runs.insert(run_id.clone(), reached);
        Ok(reached)
    }

    /// Reads the next page of matching events after `last` from the log,
    /// unless the token has been revoked. A filtered page never holds the
    /// revocation itself, and after lagging the broadcast may have dropped
    /// it, so every page asks the log whether the token is still live.
    async fn read_page(&mut self) -> ApiResult<Page> {
        let (after, filter, token) = (self.last, self.filter.clone(), self.token_id.clone());
        let page = self.state.engine(move |e| e.events_after_while_live(after, &filter, PAGE, &token)).await?;
        let Some(page) = page else { return Ok(Page::Revoked) };
        self.catching_up = page.len() == PAGE as usize;
        self.queue.extend(page.into_iter().map(Arc::new));
        Ok(Page::Read)
    }
}

/// What reading the log while catching up came to.
enum Page {
    /// The page is queued.
    Read,
    /// The stream's token is revoked: the stream ends.
    Revoked,
}

/// Whether `event` revokes the token `token_id`.
fn revokes(event: &Event, token_id: &str) -> bool {
    matches!(&event.body.kind, EventKind::TokenRevoked { token_id: revoked } if revoked == token_id)
}

/// The same rule the store applies when reading the log with a filter.
fn matches(filter: &EventFilter, event: &Event) -> bool {
    let b = &event.body;
    filter.run_id.as_ref().is_none_or(|r| b.run_id.as_ref() == Some(r))
        && filter.session_id.as_ref().is_none_or(|s| b.session_id.as_ref() == Some(s))
        && filter.user_id.as_ref().is_none_or(|u| b.user_id.as_ref() == Some(u))
}

/// One SSE message. An event that cannot be serialised (it never should)
/// is logged and skipped rather than ending every reader's stream.
fn message(event: &Event) -> Option<SseEvent> {
    match SseEvent::default().id(event.seq.to_string()).event(event.body.kind.name()).json_data(event) {
        Ok(message) => Some(message),
        Err(e) => {
            tracing::error!(seq = event.seq, error = %e, "cannot serialise an event for SSE");
            None
        }
    }
}
