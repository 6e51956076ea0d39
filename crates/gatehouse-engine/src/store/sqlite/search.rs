//! Gate search on SQLite: the FTS5 index `gate_search` (migration 4) for
//! text and for the agent, run and reviewer filters, exact filters on
//! `gates` beside it, and snippets whose matches come back as parts.
//!
//! What a reviewer types never reaches FTS5 as syntax: each word is quoted
//! as a phrase (`"` doubled), so `"`, `*`, `AND(`, `-` or `NEAR` are only
//! ever text. Hits come newest first: by the index's rowid (the order gates
//! were stored, which is the order they opened, except for gates imported
//! from a recording) when the index is used, else by `created_at`. Walking
//! the index from its newest end lets a page of a common word stop after a
//! page of hits instead of ranking every match.

use chrono::{DateTime, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params_from_iter, Connection, OptionalExtension};

use crate::error::Result;
use crate::gate::Gate;
use crate::search::{words, GateSearch, SearchHit, SearchResults, SnippetPart};
use crate::store::snippets::{distinct_matches, snippet_parts, CLOSE, OPEN, SNIPPET_COLUMNS, SNIPPET_TOKENS};

/// The FTS5 expression for what a reviewer typed: every word must match,
/// each as a quoted phrase, the last as a prefix while it is still being
/// typed (the text does not end with a space, and it has two characters or
/// more). Words without a letter or digit match nothing and are dropped.
/// `None` when nothing is left to match.
pub(crate) fn match_words(text: &str) -> Option<String> {
    let words: Vec<&str> = words(text).collect();
    let typing = !text.ends_with(char::is_whitespace);
    let last = words.len().checked_sub(1)?;
    let phrases: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, word)| {
            let prefix = i == last && typing && word.chars().filter(|c| c.is_alphanumeric()).count() >= 2;
            format!("{}{}", quote(word), if prefix { "*" } else { "" })
        })
        .collect();
    Some(phrases.join(" "))
}

/// `s` as one FTS5 string: a phrase of its tokens, with no syntax inside.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// `value` as a phrase in one column, to narrow the index's walk before the
/// exact filter; `None` when it has no token to look for.
fn column_phrase(column: &str, value: &str) -> Option<String> {
    value.chars().any(char::is_alphanumeric).then(|| format!("{column} : {}", quote(value)))
}

/// The page query of a search: its SQL, parameters, and the text
/// expression alone (for the snippets), if the search has text.
struct PageQuery {
    sql: String,
    params: Vec<SqlValue>,
    text: Option<String>,
}

/// Bounds on the rowids of the gates a date range can hold. `high` is
/// always exact; `low` may be a guess from storage order, which a full page
/// still proves right (see [`search_gates`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct RowidBounds {
    low: Option<i64>,
    high: Option<i64>,
    low_guessed: bool,
}

impl PageQuery {
    /// With text, or a filter the index can narrow (agent, run, reviewer),
    /// the FTS5 index drives, newest document first, within `bounds`;
    /// otherwise `gates` by `created_at`, sorting only keys before reading
    /// a page of rows. The exact filters apply either way.
    fn new(search: &GateSearch, runs: Option<&SqlValue>, bounds: RowidBounds) -> Self {
        let text = match_words(&search.text);
        let narrowing = [
            search.agent.as_deref().and_then(|a| column_phrase("agent", a)),
            search.run_id.as_ref().and_then(|r| column_phrase("run", r.as_str())),
            search.decided_by.as_deref().and_then(|d| column_phrase("reviewer", d)),
        ];
        let expression: Vec<String> =
            text.iter().cloned().chain(narrowing.into_iter().flatten()).map(|e| format!("({e})")).collect();

        let (mut clauses, mut params) = exact_filters(search, runs);
        let page = [SqlValue::Integer(i64::from(search.limit) + 1), SqlValue::Integer(i64::from(search.offset))];
        let select = "SELECT g.rowid, g.data, r.data ->> '$.title'";
        let runs = "LEFT JOIN runs r ON r.id = g.run_id";
        let sql = if expression.is_empty() {
            let filters = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
            params.extend(page);
            format!(
                "{select} FROM gates g {runs} WHERE g.rowid IN (
                    SELECT g.rowid FROM gates g {filters}
                    ORDER BY g.created_at DESC, g.rowid DESC LIMIT ? OFFSET ?)
                 ORDER BY g.created_at DESC, g.rowid DESC"
            )
        } else {
            clauses.insert(0, "gate_search MATCH ?".to_owned());
            params.insert(0, SqlValue::Text(expression.join(" AND ")));
            for (clause, bound) in [("gate_search.rowid >= ?", bounds.low), ("gate_search.rowid <= ?", bounds.high)] {
                if let Some(bound) = bound {
                    clauses.insert(1, clause.to_owned());
                    params.insert(1, SqlValue::Integer(bound));
                }
            }
            params.extend(page);
            // CROSS JOIN: the index drives, so a page stops once it is full.
            format!(
                "{select} FROM gate_search CROSS JOIN gates g ON g.rowid = gate_search.rowid {runs}
                 WHERE {} ORDER BY gate_search.rowid DESC LIMIT ? OFFSET ?",
                clauses.join(" AND ")
            )
        };
        Self { sql, params, text }
    }
}

/// Documents a bound must cut off before it is worth computing.
const BOUND_WORTH: i64 = 20_000;

impl RowidBounds {
    /// Rowid bounds of the gates opened in `[from, to)`, so the index walk
    /// seeks past the documents outside the range instead of testing each
    /// one. Gates are stored in the order they open, except imported ones,
    /// so storage order says cheaply where a date falls; a bound is used
    /// only when it cuts off more than `worth` documents.
    ///
    /// The upper bound must be exact (the walk meets the newest documents
    /// first): the `created_at` index's newest entry before `to`, a pass
    /// over the entries before it. The lower bound starts as the guess,
    /// the first gate stored at or after `from`: a gate imported out of
    /// order could only sort after every gate it lets through, so a full
    /// page within it is the right page, and only a short one needs
    /// [`RowidBounds::exact_low`].
    fn of(conn: &Connection, search: &GateSearch, worth: i64) -> Result<Self> {
        let mut bounds = Self::default();
        if search.from.is_none() && search.to.is_none() {
            return Ok(bounds);
        }
        // One aggregate per query: SQLite answers a lone min() or max() of the rowid from the b-tree's edge.
        let edge = |sql: &str| -> Result<Option<i64>> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
        let (Some(first), Some(last)) = (edge("SELECT min(rowid) FROM gates")?, edge("SELECT max(rowid) FROM gates")?)
        else {
            return Ok(bounds);
        };
        // Where a date falls in storage order: the first gate opened at or after it.
        let position = |at: DateTime<Utc>| -> Result<i64> {
            let mut stmt = conn.prepare_cached(
                "SELECT rowid FROM gates INDEXED BY gates_by_created WHERE created_at >= ? ORDER BY created_at LIMIT 1",
            )?;
            Ok(stmt.query_row([at.timestamp_micros()], |r| r.get(0)).optional()?.unwrap_or(last + 1))
        };
        if let Some(from) = search.from {
            let at = position(from)?;
            if at - first > worth {
                bounds.low = Some(at);
                bounds.low_guessed = true;
            }
        }
        if let Some(to) = search.to {
            if last - position(to)? > worth {
                let high = conn
                    .prepare_cached("SELECT max(rowid) FROM gates INDEXED BY gates_by_created WHERE created_at < ?")?
                    .query_row([to.timestamp_micros()], |r| r.get::<_, Option<i64>>(0))?;
                // No gate that old: nothing can match.
                bounds.high = Some(high.unwrap_or(i64::MIN));
            }
        }
        Ok(bounds)
    }

    /// The lower bound made exact: the oldest stored gate opened at or
    /// after `from`, a pass over the `created_at` index's entries after it.
    fn exact_low(self, conn: &Connection, from: DateTime<Utc>) -> Result<Self> {
        let low = conn
            .prepare_cached("SELECT min(rowid) FROM gates INDEXED BY gates_by_created WHERE created_at >= ?")?
            .query_row([from.timestamp_micros()], |r| r.get::<_, Option<i64>>(0))?;
        Ok(Self { low: Some(low.unwrap_or(i64::MAX)), low_guessed: false, ..self })
    }
}

/// Runs `search`, over the gates of `runs` (a JSON array of run ids) only
/// when it names some.
pub(crate) fn search_gates(conn: &Connection, search: &GateSearch, runs: Option<SqlValue>) -> Result<SearchResults> {
    search_within(conn, search, runs.as_ref(), BOUND_WORTH)
}

/// Runs `search`, bounding a date range's walk when that cuts off more than `worth` documents.
fn search_within(conn: &Connection, search: &GateSearch, runs: Option<&SqlValue>, worth: i64) -> Result<SearchResults> {
    let page = search.limit as usize + 1;
    let bounds = RowidBounds::of(conn, search, worth)?;
    let (mut found, text) = page_of(conn, search, runs, bounds)?;
    if let (true, Some(from)) = (bounds.low_guessed && found.len() < page, search.from) {
        (found, _) = page_of(conn, search, runs, bounds.exact_low(conn, from)?)?;
    }
    let more = found.len() == page;
    found.truncate(search.limit as usize);

    let mut snippets = match &text {
        Some(text) => snippets(conn, text, found.iter().map(|(rowid, ..)| *rowid))?,
        None => Default::default(),
    };
    let hits = found
        .into_iter()
        .map(|(rowid, gate, run_title)| SearchHit {
            gate,
            run_title,
            snippet: snippets.remove(&rowid).unwrap_or_default(),
        })
        .collect();
    Ok(SearchResults { hits, more })
}

/// One page of gates (and one more, if there is one) with their rowids and
/// their runs' titles; and the text expression, for the snippets.
#[allow(clippy::type_complexity)]
fn page_of(
    conn: &Connection,
    search: &GateSearch,
    runs: Option<&SqlValue>,
    bounds: RowidBounds,
) -> Result<(Vec<(i64, Gate, String)>, Option<String>)> {
    let PageQuery { sql, params, text } = PageQuery::new(search, runs, bounds);
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?))
    })?;
    let mut found = Vec::new();
    for row in rows {
        let (rowid, data, title) = row?;
        found.push((rowid, serde_json::from_str::<Gate>(&data)?, title.unwrap_or_default()));
    }
    Ok((found, text))
}

/// The exact filters on `gates g`, and `runs` (a JSON array) if given.
/// Status is inlined (it comes from an enum), so the pending queue's
/// partial indexes stay usable.
fn exact_filters(search: &GateSearch, runs: Option<&SqlValue>) -> (Vec<String>, Vec<SqlValue>) {
    let mut clauses = Vec::new();
    let mut params = Vec::new();
    let mut text = |clause: &str, value: &str| {
        clauses.push(clause.to_owned());
        params.push(SqlValue::Text(value.to_owned()));
    };
    if let Some(kind) = search.kind {
        text("g.kind = ?", kind.as_str());
    }
    if let Some(agent) = &search.agent {
        text("g.agent = ?", agent);
    }
    if let Some(run) = &search.run_id {
        text("g.run_id = ?", run.as_str());
    }
    if let Some(by) = &search.decided_by {
        text("EXISTS (SELECT 1 FROM decisions d WHERE d.gate_id = g.id AND d.decided_by = ?)", by);
    }
    if let Some(status) = search.status {
        clauses.push(format!("g.status = '{}'", status.as_str()));
    }
    for (clause, at) in [("g.created_at >= ?", search.from), ("g.created_at < ?", search.to)] {
        if let Some(at) = at {
            clauses.push(clause.to_owned());
            params.push(SqlValue::Integer(at.timestamp_micros()));
        }
    }
    if let Some(runs) = runs {
        clauses.push("g.run_id IN (SELECT value FROM json_each(?))".to_owned());
        params.push(runs.clone());
    }
    (clauses, params)
}

/// The snippets of the documents `rowids` for the text expression alone (the
/// filters' phrases are not the reviewer's words), in one walk of the
/// index over the hits' range: of each document, the column matching the
/// most distinct words, ties going to [`SNIPPET_COLUMNS`]' order.
fn snippets(
    conn: &Connection,
    text: &str,
    rowids: impl Iterator<Item = i64>,
) -> Result<std::collections::HashMap<i64, Vec<SnippetPart>>> {
    let rowids: Vec<i64> = rowids.collect();
    let (Some(low), Some(high)) = (rowids.iter().min(), rowids.iter().max()) else {
        return Ok(Default::default());
    };
    let columns: Vec<String> =
        SNIPPET_COLUMNS.iter().map(|c| format!("snippet(gate_search, {c}, ?1, ?2, '…', {SNIPPET_TOKENS})")).collect();
    // `+rowid` keeps the list out of FTS5's own rowid lookups, which would
    // evaluate the expression once per hit.
    let marks = vec!["?"; rowids.len()].join(", ");
    let sql = format!(
        "SELECT rowid, {} FROM gate_search
         WHERE gate_search MATCH ?3 AND rowid BETWEEN ?4 AND ?5 AND +rowid IN ({marks})",
        columns.join(", ")
    );
    let mut params = vec![
        SqlValue::Text(OPEN.to_string()),
        SqlValue::Text(CLOSE.to_string()),
        SqlValue::Text(text.to_owned()),
        SqlValue::Integer(*low),
        SqlValue::Integer(*high),
    ];
    params.extend(rowids.iter().map(|r| SqlValue::Integer(*r)));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        let mut best: (usize, Vec<SnippetPart>) = (0, Vec::new());
        for i in 0..SNIPPET_COLUMNS.len() {
            let parts = snippet_parts(&r.get::<_, Option<String>>(i + 1)?.unwrap_or_default());
            let words = distinct_matches(&parts);
            if words > best.0 {
                best = (words, parts);
            }
        }
        Ok((r.get::<_, i64>(0)?, best.1))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{GateKind, GateStatus};

    fn plan(search: &GateSearch) -> String {
        let mut conn = Connection::open_in_memory().expect("db");
        super::super::schema::migrate(&mut conn).expect("migrate");
        let query = PageQuery::new(search, None, RowidBounds { low: Some(1), high: Some(1_000), low_guessed: true });
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {}", query.sql)).expect("explain");
        let rows = stmt.query_map(params_from_iter(query.params), |r| r.get::<_, String>(3));
        rows.expect("plan rows").map(|r| r.expect("row")).collect::<Vec<_>>().join("; ")
    }

    fn midnight(d: u32) -> DateTime<Utc> {
        use chrono::TimeZone;
        Utc.with_ymd_and_hms(2026, 1, d, 0, 0, 0).unwrap()
    }

    /// Twelve question gates opened at noon on 2026-01-01 to 12, stored in
    /// the order 1 2 4 5 6 7 9 10 3 8 11 12 (3 and 8 imported late).
    fn stored_out_of_order() -> Connection {
        let mut conn = Connection::open_in_memory().expect("db");
        super::super::schema::migrate(&mut conn).expect("migrate");
        conn.execute_batch(
            "INSERT INTO runs (id, status, created_at, updated_at, data) VALUES ('run', 'active', 0, 0, '{}')",
        )
        .expect("run");
        for (i, d) in [1, 2, 4, 5, 6, 7, 9, 10, 3, 8, 11, 12].into_iter().enumerate() {
            let at = midnight(d) + chrono::Duration::hours(12);
            let gate = serde_json::json!({
                "id": format!("gate-{d}"), "run_id": "run", "spec": {"kind": "question"}, "mode": "sync",
                "priority": "normal", "agent": "a", "text": format!("Question {i} about ledgers"), "context": {},
                "payload": null, "example_input": null, "allowed_actions": [], "requires_human": false,
                "quorum": null, "votes": [], "status": "pending", "decision": null, "status_reason": null,
                "idempotency_key": null, "created_at": at, "expires_at": null, "closed_at": null
            });
            conn.execute(
                "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at, data)
                 VALUES (?, 'run', 'question', 0, 1, 'pending', 'a', ?, ?)",
                rusqlite::params![format!("gate-{d}"), at.timestamp_micros(), gate.to_string()],
            )
            .expect("insert");
        }
        conn
    }

    #[test]
    fn a_bounded_walk_finds_exactly_what_an_unbounded_one_finds() {
        let conn = stored_out_of_order();
        let ids = |r: SearchResults| (r.hits.into_iter().map(|h| h.gate.id.to_string()).collect::<Vec<_>>(), r.more);
        for (from, to) in [(Some(3), None), (Some(2), Some(9)), (Some(8), Some(12)), (None, Some(5)), (Some(11), None)]
        {
            for (limit, offset) in [(1, 0), (2, 0), (3, 1), (10, 0), (2, 4)] {
                let search = GateSearch {
                    from: from.map(midnight),
                    to: to.map(midnight),
                    offset,
                    ..GateSearch::text("ledgers", limit)
                };
                let bounded = ids(search_within(&conn, &search, None, 0).expect("bounded"));
                let unbounded = ids(search_within(&conn, &search, None, i64::MAX).expect("unbounded"));
                assert_eq!(bounded, unbounded, "{from:?}..{to:?}, {limit} from {offset}");
            }
        }
    }

    #[test]
    fn rowid_bounds_hold_every_gate_of_the_range_when_gates_were_stored_out_of_order() {
        let conn = stored_out_of_order();
        let exact = |sql: &str, at: i64| -> Option<i64> { conn.query_row(sql, [at], |r| r.get(0)).expect("exact") };
        for (from, to) in [(None, Some(4)), (Some(3), None), (Some(2), Some(9)), (Some(8), Some(9)), (Some(13), None)] {
            let search = GateSearch { from: from.map(midnight), to: to.map(midnight), ..GateSearch::text("x", 10) };
            let bounds = RowidBounds::of(&conn, &search, 0).expect("bounds");
            if let Some(to) = search.to {
                let high = exact("SELECT max(rowid) FROM gates WHERE created_at < ?", to.timestamp_micros());
                assert_eq!(bounds.high, Some(high.unwrap_or(i64::MIN)), "the upper bound is exact: {to:?}");
            }
            if let Some(from) = search.from {
                let low = exact("SELECT min(rowid) FROM gates WHERE created_at >= ?", from.timestamp_micros());
                let exact_bounds = bounds.exact_low(&conn, from).expect("exact low");
                assert_eq!(exact_bounds.low, Some(low.unwrap_or(i64::MAX)), "{from:?}");
                assert!(!exact_bounds.low_guessed);
            }
        }
        // From the 3rd: storage order guesses the 3rd's place (9th stored); the 4th was stored 3rd.
        let from_third = GateSearch { from: Some(midnight(3)), ..GateSearch::text("x", 10) };
        let guess = RowidBounds::of(&conn, &from_third, 0).expect("bounds");
        assert_eq!((guess.low, guess.low_guessed), (Some(9), true));
        assert_eq!(guess.exact_low(&conn, midnight(3)).expect("exact").low, Some(3));
    }

    #[test]
    fn the_index_drives_newest_first_and_never_sorts_its_matches() {
        let filtered = GateSearch {
            status: Some(GateStatus::Resolved),
            kind: Some(GateKind::Approval),
            agent: Some("builder-bot".into()),
            decided_by: Some("alice".into()),
            ..GateSearch::text("deploy billing", 50)
        };
        for search in [GateSearch::text("deploy", 50), filtered] {
            let plan = plan(&search);
            assert!(plan.starts_with("SCAN gate_search VIRTUAL TABLE INDEX"), "{plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        }
        // Without the index: keys in `created_at` order, then a page of rows.
        let newest = plan(&GateSearch::text("", 50));
        assert!(newest.contains("COVERING INDEX gates_by_created"), "{newest}");
    }

    #[test]
    fn each_word_is_a_quoted_phrase_and_the_last_a_prefix_while_typing() {
        assert_eq!(match_words("deploy billing").as_deref(), Some(r#""deploy" "billing"*"#));
        assert_eq!(match_words("deploy billing ").as_deref(), Some(r#""deploy" "billing""#));
        assert_eq!(match_words("  deploy\tbilling-api").as_deref(), Some(r#""deploy" "billing-api"*"#));
    }

    #[test]
    fn fts5_syntax_in_the_text_stays_text() {
        assert_eq!(match_words(r#"say "hi"#).as_deref(), Some(r#""say" """hi"*"#));
        assert_eq!(match_words("AND( x* NEAR").as_deref(), Some(r#""AND(" "x*" "NEAR"*"#));
        assert_eq!(match_words("- * \" ( )"), None);
        assert_eq!(match_words(""), None);
        assert_eq!(match_words("   "), None);
    }

    #[test]
    fn a_single_character_is_matched_whole_not_as_a_prefix() {
        assert_eq!(match_words("d").as_deref(), Some(r#""d""#));
        assert_eq!(match_words("de").as_deref(), Some(r#""de"*"#));
    }
}
