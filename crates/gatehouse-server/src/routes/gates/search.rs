//! Searching gates over HTTP: `GET /gates/search`, free text and filters
//! over every stored gate, pending and past, newest first. Each hit is a
//! panel line plus its run's title, who decided, and a snippet whose
//! matches are marked as parts of plain text (never HTML: it is agent
//! text). Every parameter is read here so a bad one is a 422 naming it.

use axum::extract::State;
use axum::Json;
use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::search::{MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET};
use gatehouse_engine::{
    BlockingMode, EngineError, GateId, GateKind, GateSearch, GateStatus, Priority, RunId, SearchHit, SnippetPart,
    TokenRole,
};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::auth::Caller;
use crate::error::{ApiError, ApiErrorBody, ApiResult};
use crate::params::ApiQuery;
use crate::state::AppState;

/// Hits per page unless `limit` says otherwise.
const DEFAULT_LIMIT: u32 = 50;

/// A search. Every parameter is optional; none at all lists the newest gates.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Free text: every word must match (the last one as a prefix unless the
    /// text ends with a space) the gate's question, action names, payload or
    /// arguments, details, agent, run id or title, who decided, or the
    /// decision's text. FTS5 syntax is not interpreted.
    pub q: Option<String>,
    /// `any` (the default), `pending`, `resolved`, `expired` or `cancelled`.
    pub status: Option<String>,
    /// Only this kind.
    #[param(value_type = Option<GateKind>)]
    pub kind: Option<String>,
    /// Only this agent's gates (an agent token always searches its own).
    pub agent: Option<String>,
    /// Only this run's gates.
    pub run_id: Option<String>,
    /// Only gates decided by this identity.
    pub decided_by: Option<String>,
    /// Opened at or after: an RFC 3339 time, or a date (`YYYY-MM-DD`, from its start in UTC).
    pub from: Option<String>,
    /// Opened before: an RFC 3339 time, or a date (`YYYY-MM-DD`, up to its end in UTC).
    pub to: Option<String>,
    /// Hits per page, 1 to 500 (default 50).
    #[param(value_type = Option<u32>)]
    pub limit: Option<String>,
    /// Hits to skip, at most 10000 (default 0).
    #[param(value_type = Option<u32>)]
    pub offset: Option<String>,
}

/// One gate found.
#[derive(Debug, Serialize, ToSchema)]
pub struct GateHit {
    /// The gate.
    pub id: GateId,
    /// Its run.
    pub run_id: RunId,
    /// Its run's title.
    pub run_title: String,
    /// Its kind.
    pub kind: GateKind,
    /// Sync, async or advisory.
    pub mode: BlockingMode,
    /// Urgency.
    pub priority: Priority,
    /// The asking agent.
    pub agent: String,
    /// The first 50 characters of its text.
    pub preview: String,
    /// Where it is.
    pub status: GateStatus,
    /// When it opened.
    pub created_at: DateTime<Utc>,
    /// When it left pending.
    pub closed_at: Option<DateTime<Utc>>,
    /// Who decided it.
    pub decided_by: Option<String>,
    /// What was decided.
    pub decision: Option<DecisionAction>,
    /// Where the text matched, in context, as plain-text parts (`matched`
    /// ones are the reviewer's words); empty when the search had no text.
    pub snippet: Vec<SnippetPart>,
}

impl From<SearchHit> for GateHit {
    fn from(hit: SearchHit) -> Self {
        let g = hit.gate;
        Self {
            preview: g.preview(),
            kind: g.kind(),
            decided_by: g.decision.as_ref().map(|d| d.decided_by.clone()),
            decision: g.decision.as_ref().map(|d| d.action),
            id: g.id,
            run_id: g.run_id,
            run_title: hit.run_title,
            mode: g.mode,
            priority: g.priority,
            agent: g.agent,
            status: g.status,
            created_at: g.created_at,
            closed_at: g.closed_at,
            snippet: hit.snippet,
        }
    }
}

/// A page of hits.
#[derive(Debug, Serialize, ToSchema)]
pub struct GateSearchPage {
    /// The hits, newest first.
    pub hits: Vec<GateHit>,
    /// Whether another page follows (ask again with `offset` + `limit`).
    pub more: bool,
}

/// Searches every gate, pending and past, newest first. Reviewers and
/// admins search all gates; an agent only its own; a scoped token only
/// those of the runs in its scope.
#[utoipa::path(get, path = "/gates/search", tag = "reviewers", params(SearchQuery),
    responses((status = 200, body = GateSearchPage), (status = 422, body = ApiErrorBody)))]
pub async fn search_gates(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<SearchQuery>,
) -> ApiResult<Json<GateSearchPage>> {
    let mut search = parse(q)?;
    if caller.role == TokenRole::Agent {
        search.agent = Some(caller.name.clone());
    }
    let scope = caller.scope;
    let found = state.engine(move |e| e.search_gates_visible(&scope, &search).map_err(text_is_q)).await?;
    Ok(Json(GateSearchPage { hits: found.hits.into_iter().map(GateHit::from).collect(), more: found.more }))
}

/// The engine calls the text `text`; here it is the parameter `q`.
fn text_is_q(e: EngineError) -> EngineError {
    match e {
        EngineError::Invalid { field, reason } if field == "text" => EngineError::invalid("q", reason),
        e => e,
    }
}

/// The query string as a search, or a 422 naming the bad parameter. Empty
/// parameters (a form's blank fields) count as absent.
fn parse(q: SearchQuery) -> ApiResult<GateSearch> {
    let given = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let status = match given(q.status).as_deref() {
        None | Some("any") => None,
        Some(s) => Some(GateStatus::ALL.into_iter().find(|x| x.as_str() == s).ok_or_else(|| {
            ApiError::invalid_field("status", format!("`{s}` is not one of any, pending, resolved, expired, cancelled"))
        })?),
    };
    let kind = match given(q.kind).as_deref() {
        None => None,
        Some(k) => Some(GateKind::ALL.into_iter().find(|x| x.as_str() == k).ok_or_else(|| {
            let kinds: Vec<&str> = GateKind::ALL.iter().map(|k| k.as_str()).collect();
            ApiError::invalid_field("kind", format!("`{k}` is not one of {}", kinds.join(", ")))
        })?),
    };
    Ok(GateSearch {
        text: q.q.unwrap_or_default(),
        status,
        kind,
        agent: given(q.agent),
        run_id: given(q.run_id).map(RunId::from_string),
        decided_by: given(q.decided_by),
        from: given(q.from).map(|v| instant("from", &v, false)).transpose()?,
        to: given(q.to).map(|v| instant("to", &v, true)).transpose()?,
        limit: given(q.limit).map(|v| number("limit", &v, 1, MAX_SEARCH_LIMIT)).transpose()?.unwrap_or(DEFAULT_LIMIT),
        offset: given(q.offset).map(|v| number("offset", &v, 0, MAX_SEARCH_OFFSET)).transpose()?.unwrap_or(0),
    })
}

/// A whole number in `min..=max`.
fn number(name: &str, value: &str, min: u32, max: u32) -> ApiResult<u32> {
    value.trim().parse::<u32>().ok().filter(|n| (min..=max).contains(n)).ok_or_else(|| {
        ApiError::invalid_field(name, format!("must be a whole number from {min} to {max}, got `{value}`"))
    })
}

/// An RFC 3339 time, or a date: its start, or for an end bound (`end`) the
/// start of the next day, so `to=2026-03-31` includes all of the 31st.
fn instant(name: &str, value: &str, end: bool) -> ApiResult<DateTime<Utc>> {
    let value = value.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(value) {
        return Ok(at.with_timezone(&Utc));
    }
    let day = NaiveDate::parse_from_str(value, "%Y-%m-%d")
        .ok()
        .and_then(|d| if end { d.succ_opt() } else { Some(d) })
        .ok_or_else(|| {
            ApiError::invalid_field(
                name,
                format!("`{value}` is neither a date (YYYY-MM-DD) nor an RFC 3339 time (2026-03-01T09:00:00Z)"),
            )
        })?;
    Ok(day.and_time(NaiveTime::MIN).and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_runs_from_its_start_and_an_end_date_to_the_next_day() {
        let from = instant("from", "2026-03-01", false).unwrap();
        let to = instant("to", "2026-03-31", true).unwrap();
        assert_eq!(from.to_rfc3339(), "2026-03-01T00:00:00+00:00");
        assert_eq!(to.to_rfc3339(), "2026-04-01T00:00:00+00:00");
        let at = instant("to", "2026-03-31T12:30:00+02:00", true).unwrap();
        assert_eq!(at.to_rfc3339(), "2026-03-31T10:30:00+00:00");
        assert!(instant("from", "yesterday", false).unwrap_err().message().starts_with("from:"));
        assert!(instant("to", "2026-02-30", true).unwrap_err().message().starts_with("to:"));
    }

    #[test]
    fn numbers_outside_their_range_name_the_parameter() {
        assert_eq!(number("limit", "20", 1, 500).unwrap(), 20);
        for bad in ["0", "501", "-1", "ten", "1.5", ""] {
            assert!(number("limit", bad, 1, 500).unwrap_err().message().starts_with("limit:"), "{bad}");
        }
    }
}
