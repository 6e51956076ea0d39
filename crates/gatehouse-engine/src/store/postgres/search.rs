//! Gate search on PostgreSQL: the `gate_search` table (migration 2), one
//! document per gate, written by the statement that stores the gate
//! (`gate_rows.rs`) and removed with it by a trigger, searched with the
//! meaning SQLite's FTS5 index gives a search (`store/sqlite/search.rs`): every
//! word must match, the last one as a prefix while it is typed; the filters
//! are exact; snippets come back as parts.
//!
//! What a reviewer types never reaches tsquery syntax: each word is a
//! parameter of `gate_search_word`, which folds it as documents are folded
//! and makes a phrase of its tokens. Hits come newest first, by
//! `(created_at, id)`. SQLite walks its index by rowid, the order gates
//! were stored, which is the order they opened (and ids are time-ordered
//! UUIDv7s, so gates opened in the same microsecond fall the same way); the
//! two differ only for gates imported from a recording, which PostgreSQL
//! places by when they opened.

use std::collections::HashMap;

use tokio_postgres::types::ToSql;

use crate::error::Result;
use crate::gate::Gate;
use crate::ids::RunId;
use crate::search::{words, GateSearch, SearchHit, SearchResults, SnippetPart};
use crate::store::snippets::{distinct_matches, snippet_parts, CLOSE, OPEN, SNIPPET_COLUMNS, SNIPPET_TOKENS};

use super::Conn;

/// `gate_search`'s fields, in the order of SQLite's index columns (which
/// [`SNIPPET_COLUMNS`] numbers).
const FIELDS: [&str; 8] = ["text", "action", "payload", "details", "agent", "run", "reviewer", "decision"];

/// The parameters of a query built at run time, each numbered as it is added.
#[derive(Default)]
struct Params(Vec<Box<dyn ToSql + Sync + Send>>);

impl Params {
    /// Adds `value`; returns its placeholder.
    fn add(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.0.push(Box::new(value));
        format!("${}", self.0.len())
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
    }
}

/// The words of what a reviewer typed, each with whether it matches as a
/// prefix: the last one, while it is being typed (the text does not end
/// with a space) and once it has two letters or digits, as in SQLite's
/// `match_words`.
fn query_words(text: &str) -> Vec<(&str, bool)> {
    let words: Vec<&str> = words(text).collect();
    let typing = !text.ends_with(char::is_whitespace);
    let last = words.len().saturating_sub(1);
    words
        .iter()
        .enumerate()
        .map(|(i, word)| (*word, i == last && typing && word.chars().filter(|c| c.is_alphanumeric()).count() >= 2))
        .collect()
}

/// The tsquery of `words`, joined by `op` (`&&`: all must match; `||`:
/// any, to mark them); `None` without words.
fn tsquery(words: &[(&str, bool)], op: &str, params: &mut Params) -> Option<String> {
    let each: Vec<String> = words
        .iter()
        .map(|(word, prefix)| format!("gate_search_word({}, {prefix})", params.add(word.to_string())))
        .collect();
    (!each.is_empty()).then(|| each.join(&format!(" {op} ")))
}

/// Runs `search`, over the gates of `runs` only when it names some.
pub(super) fn search_gates(conn: &Conn, search: &GateSearch, runs: Option<&[RunId]>) -> Result<SearchResults> {
    // Each query is planned for its own values (in this transaction only):
    // only the words tell whether walking gates newest first (a common
    // word) or the GIN index (a rare one) finds a page sooner, and a
    // generic plan would also call `gate_search_word` for every row.
    conn.batch("SET LOCAL plan_cache_mode = force_custom_plan")?;
    let words = query_words(&search.text);
    let mut found = page(conn, search, runs, &words)?;
    let more = found.len() > search.limit as usize;
    found.truncate(search.limit as usize);

    let ids: Vec<String> = found.iter().map(|(id, ..)| id.clone()).collect();
    let mut snippets = if words.is_empty() || ids.is_empty() { HashMap::new() } else { snippets(conn, &words, ids)? };
    let hits = found
        .into_iter()
        .map(|(id, gate, run_title)| SearchHit { gate, run_title, snippet: snippets.remove(&id).unwrap_or_default() })
        .collect();
    Ok(SearchResults { hits, more })
}

/// One page of gates, and one more if there is one, each with its id and
/// its run's title. With words, `gate_search` finds them (through its
/// document index, or walking it newest first: the plan is made for the
/// words); without, `gates` is read newest first. The page's ids are chosen
/// first, so only its rows are read whole.
fn page(
    conn: &Conn,
    search: &GateSearch,
    runs: Option<&[RunId]>,
    words: &[(&str, bool)],
) -> Result<Vec<(String, Gate, String)>> {
    let mut params = Params::default();
    let mut clauses = Vec::new();
    // `t`: each gate's id, run, kind, status, agent and opening time.
    let from = match tsquery(words, "&&", &mut params) {
        Some(query) => {
            clauses.push(format!("t.document @@ ({query})"));
            "gate_search t"
        }
        None => "(SELECT id AS gate_id, run_id, kind, status, agent, created_at FROM gates) t",
    };
    if let Some(kind) = search.kind {
        clauses.push(format!("t.kind = {}", params.add(kind.as_str())));
    }
    if let Some(status) = search.status {
        // Inlined (an enum, never input), as SQLite's search does.
        clauses.push(format!("t.status = '{}'", status.as_str()));
    }
    if let Some(agent) = &search.agent {
        clauses.push(format!("t.agent = {}", params.add(agent.clone())));
    }
    if let Some(run) = &search.run_id {
        clauses.push(format!("t.run_id = {}", params.add(run.as_str().to_owned())));
    }
    if let Some(runs) = runs {
        let runs: Vec<String> = runs.iter().map(|r| r.as_str().to_owned()).collect();
        clauses.push(format!("t.run_id = ANY({}::text[])", params.add(runs)));
    }
    if let Some(by) = &search.decided_by {
        let by = params.add(by.clone());
        clauses.push(format!("EXISTS (SELECT 1 FROM decisions d WHERE d.gate_id = t.gate_id AND d.decided_by = {by})"));
    }
    if let Some(from) = search.from {
        clauses.push(format!("t.created_at >= {}", params.add(from.timestamp_micros())));
    }
    if let Some(to) = search.to {
        clauses.push(format!("t.created_at < {}", params.add(to.timestamp_micros())));
    }
    let filters = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let limit = params.add(i64::from(search.limit) + 1);
    let offset = params.add(i64::from(search.offset));
    let sql = format!(
        "SELECT g.id, g.data, r.data::json ->> 'title'
         FROM (SELECT t.gate_id, t.created_at FROM {from} {filters}
               ORDER BY t.created_at DESC, t.gate_id DESC LIMIT {limit} OFFSET {offset}) p
         JOIN gates g ON g.id = p.gate_id
         LEFT JOIN runs r ON r.id = g.run_id
         ORDER BY p.created_at DESC, p.gate_id DESC"
    );
    conn.query(&sql, &params.refs())?
        .iter()
        .map(|row| {
            let (id, data, title): (String, String, Option<String>) =
                (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
            Ok((id, serde_json::from_str(&data)?, title.unwrap_or_default()))
        })
        .collect()
}

/// The snippets of the gates `ids` for `words` (a filter's values are not
/// the reviewer's words): of each gate, the field marking the most
/// distinct words, ties going to [`SNIPPET_COLUMNS`]' order, as on SQLite.
///
/// `ts_headline` cuts and marks each field as the index reads it (folded:
/// lower case, no diacritics, punctuation as spaces), so that its matches
/// are the index's; the chosen cut is then mapped onto the field's own
/// text, which folding keeps character for character (all but the rare
/// text that Unicode decomposition does not give back as it was: then the
/// folded cut is shown).
fn snippets(conn: &Conn, words: &[(&str, bool)], ids: Vec<String>) -> Result<HashMap<String, Vec<SnippetPart>>> {
    let mut params = Params::default();
    let Some(query) = tsquery(words, "||", &mut params) else { return Ok(HashMap::new()) };
    // At least as many words as SQLite's snippets hold, when the field has them.
    let options = format!(
        "StartSel=\"{OPEN}\", StopSel=\"{CLOSE}\", MaxWords={SNIPPET_TOKENS}, MinWords={}, ShortWord=0",
        SNIPPET_TOKENS - 1
    );
    let options = params.add(options);
    let headlines: Vec<String> = SNIPPET_COLUMNS
        .iter()
        .map(|&c| format!("ts_headline('simple', gate_search_fold(s.{}), w.q, {options})", FIELDS[c]))
        .collect();
    let sql = format!(
        "SELECT s.gate_id, {} FROM gate_search s CROSS JOIN (SELECT {query}) w (q) WHERE s.gate_id = ANY({})",
        headlines.join(", "),
        params.add(ids)
    );
    // Each gate's best field and its marked cut.
    let mut best: Vec<(String, i32, String)> = Vec::new();
    for row in conn.query(&sql, &params.refs())? {
        let mut choice: (usize, Option<(i32, String)>) = (0, None);
        for (i, &column) in SNIPPET_COLUMNS.iter().enumerate() {
            let Some(headline) = row.try_get::<_, Option<String>>(i + 1)? else { continue };
            let words = distinct_matches(&snippet_parts(&headline));
            if words > choice.0 {
                choice = (words, Some((column as i32, headline)));
            }
        }
        if let (_, Some((column, headline))) = choice {
            best.push((row.try_get(0)?, column, headline));
        }
    }
    if best.is_empty() {
        return Ok(HashMap::new());
    }

    // The chosen fields' text, and that text folded.
    let (gates, columns): (Vec<String>, Vec<i32>) = best.iter().map(|(id, c, _)| (id.clone(), *c)).unzip();
    let fields = FIELDS.iter().map(|f| format!("s.{f}")).collect::<Vec<_>>().join(", ");
    let rows = conn.query(
        &format!(
            "SELECT x.gate_id, f.text, gate_search_fold(f.text)
             FROM unnest($1::text[], $2::int[]) x (gate_id, field)
             JOIN gate_search s ON s.gate_id = x.gate_id
             CROSS JOIN LATERAL (SELECT (ARRAY[{fields}])[x.field + 1]) f (text)"
        ),
        &[&gates, &columns],
    )?;
    let mut texts: HashMap<String, (String, String)> = HashMap::new();
    for row in rows {
        let (id, text, folded): (String, Option<String>, Option<String>) =
            (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
        texts.insert(id, (text.unwrap_or_default(), folded.unwrap_or_default()));
    }
    Ok(best
        .into_iter()
        .map(|(id, _, headline)| {
            let marked = texts.get(&id).and_then(|(text, folded)| unfold(&headline, text, folded));
            // Folding changed the text's length: the folded cut still marks the words.
            let parts = snippet_parts(marked.as_deref().unwrap_or(&headline));
            (id, parts)
        })
        .collect())
}

/// `headline` (a stretch of `folded` with marked matches) on `text`, the
/// field `folded` was folded from, character for character: the same
/// stretch of `text` with the same marks, `…` where text was cut. As
/// SQLite's snippets do, a stretch from the field's first word starts at
/// its start and one to its last word runs to its end. `None` when
/// folding changed the text's length or the stretch is not in `folded`.
fn unfold(headline: &str, text: &str, folded: &str) -> Option<String> {
    let text: Vec<char> = text.chars().collect();
    let folded_chars: Vec<char> = folded.chars().collect();
    if text.len() != folded_chars.len() {
        return None;
    }
    let stretch: String = headline.chars().filter(|c| *c != OPEN && *c != CLOSE).collect();
    let start = folded[..folded.find(&stretch)?].chars().count();
    let end = start + stretch.chars().count();
    // Folding turns whatever separates words into spaces.
    let blank = |chars: &[char]| chars.iter().all(|c| c.is_whitespace());
    let from = if blank(&folded_chars[..start]) { 0 } else { start };
    let to = if blank(&folded_chars[end..]) { text.len() } else { end };

    let mut marked = String::with_capacity(headline.len() + 8);
    if from > 0 {
        marked.push('…');
    }
    marked.extend(&text[from..start]);
    let mut next = start;
    for c in headline.chars() {
        if c == OPEN || c == CLOSE {
            marked.push(c);
        } else {
            marked.push(text[next]);
            next += 1;
        }
    }
    marked.extend(&text[end..to]);
    if to < text.len() {
        marked.push('…');
    }
    Some(marked)
}

#[cfg(test)]
mod tests {
    use super::*;
    // The parity check with SQLite is the only place one backend reads the other.
    use crate::store::sqlite::search::match_words;

    #[test]
    fn the_last_word_is_a_prefix_exactly_when_sqlite_makes_it_one() {
        for text in ["deploy billing", "deploy billing ", "  deploy\tbilling-api", "d", "de", "x d", "AND( x* NEAR", ""]
        {
            let words = query_words(text);
            assert_eq!(words.len(), crate::search::words(text).count(), "{text:?}");
            // SQLite's only `*` outside a quoted phrase is the prefix's.
            let sqlite_prefix = match_words(text).is_some_and(|m| m.ends_with('*'));
            assert_eq!(words.last().is_some_and(|(_, prefix)| *prefix), sqlite_prefix, "{text:?}");
            assert!(words.iter().rev().skip(1).all(|(_, prefix)| !prefix), "{text:?}");
        }
    }

    fn marks(s: &str) -> String {
        s.replace(OPEN, "[").replace(CLOSE, "]")
    }

    #[test]
    fn a_marked_stretch_of_the_folded_text_is_put_back_on_the_text() {
        let text = "<b>Zürich</b>: Déploy the billing-API now, or wait until Friday?";
        let folded = " b zurich  b   deploy the billing api now  or wait until friday ";
        assert_eq!(text.chars().count(), folded.chars().count());
        let headline = format!("deploy the {OPEN}billing{CLOSE} {OPEN}api{CLOSE} now");
        assert_eq!(marks(&unfold(&headline, text, folded).unwrap()), "…Déploy the [billing]-[API] now…");
        // From the first word, the text's start; to the last, its end.
        let headline = format!(" b {OPEN}zurich{CLOSE}  b   deploy");
        assert_eq!(marks(&unfold(&headline, text, folded).unwrap()), "<b>[Zürich]</b>: Déploy…");
        let headline = format!("until {OPEN}friday{CLOSE}");
        assert_eq!(marks(&unfold(&headline, text, folded).unwrap()), "…until [Friday]?");
    }

    #[test]
    fn a_stretch_that_cannot_be_put_back_is_refused() {
        assert_eq!(unfold("abc", "xyz", "xyz"), None, "not in the folded text");
        assert_eq!(unfold("ab", "a\u{301}b", "ab"), None, "folding changed the length");
    }
}
