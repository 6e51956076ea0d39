//! A gate's search document (`gate_search`, searched in `search.rs`),
//! written by a statement sent right behind the one that stores the gate,
//! in the same job, from fields read in Rust from the gate itself
//! ([`SearchFields`]): PostgreSQL no longer parses the gate's JSON again
//! in a PL/pgSQL trigger to build it (docs/benchmarks.md). The words are
//! still folded and read in SQL (`gate_search_fold`, the `simple`
//! configuration), as a reviewer's search words are, so the two agree.
//! Each statement is plain (no subquery on the common path), so that
//! PostgreSQL plans it once and starts it cheaply.

use serde::Deserialize;
use tokio_postgres::types::ToSql;

use crate::error::Result;
use crate::gate::Gate;
use crate::store::search_document::SearchFields;

type Param = Box<dyn ToSql + Sync + Send>;

/// One field of a document: folded, then cut to its first 30,000
/// characters if the document's folded fields could pass 1,000,000 bytes
/// (a tsvector holds at most 1 MiB of words). `$bound`: what the fields
/// but the run's fold to at most, sent ([`fold_bound`]); `$run`: the run
/// field, counted twice (the most its fold grows to).
macro_rules! field {
    ($field:literal, $bound:literal, $run:literal) => {
        concat!(
            "left(gate_search_fold(",
            $field,
            "), CASE WHEN ",
            $bound,
            " + 2 * octet_length(",
            $run,
            ") > 1000000 THEN 30000 ELSE 1073741823 END)"
        )
    };
}

/// A document from its eight fields, SQL expressions in the index's order,
/// each as [`field`] makes it, read as one JSON array so that a phrase
/// never matches across two fields.
macro_rules! document {
    ($bound:literal; $text:literal, $action:literal, $payload:literal, $details:literal,
     $agent:literal, $run:literal, $reviewer:literal, $decision:literal) => {
        concat!(
            "to_tsvector('simple', to_jsonb(ARRAY[",
            field!($text, $bound, $run),
            ", ",
            field!($action, $bound, $run),
            ", ",
            field!($payload, $bound, $run),
            ", ",
            field!($details, $bound, $run),
            ", ",
            field!($agent, $bound, $run),
            ", ",
            field!($run, $bound, $run),
            ", ",
            field!($reviewer, $bound, $run),
            ", ",
            field!($decision, $bound, $run),
            "]))"
        )
    };
}

/// A new gate's document: `$1` to `$5` the gate's id, run, kind, status
/// and opening time; `$6` to `$12` its fields but the run's (text,
/// action, payload, details, agent, reviewer, decision), `$13` what they
/// fold to at most; `$14` the run field, given.
const INSERT_GIVEN_RUN: &str = concat!(
    "INSERT INTO gate_search (gate_id, run_id, kind, status, created_at,
                              text, action, payload, details, agent, run, reviewer, decision, document)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $14, $11, $12, ",
    document!("$13"; "$6", "$7", "$8", "$9", "$10", "$14", "$11", "$12"),
    ")"
);

/// The same, the run field read from the run (`$2`): for a write that
/// stores a gate without holding its run (an import stores runs without
/// reading them).
const INSERT_READ_RUN: &str = concat!(
    "INSERT INTO gate_search (gate_id, run_id, kind, status, created_at,
                              text, action, payload, details, agent, run, reviewer, decision, document)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, r.run, $11, $12, ",
    document!("$13"; "$6", "$7", "$8", "$9", "$10", "r.run", "$11", "$12"),
    " FROM (SELECT concat_ws(' ', $2::text, (SELECT data::json ->> 'title' FROM runs WHERE id = $2)) AS run) r"
);

/// A changed gate's document: `$1` the gate's id, `$2` its status, `$3`
/// to `$8` its fields but the agent's and the run's (text, action,
/// payload, details, reviewer, decision), which stay; `$9` what they and
/// the agent fold to at most.
pub(super) const UPDATE: &str = concat!(
    "UPDATE gate_search SET status = $2, text = $3, action = $4, payload = $5, details = $6,
         reviewer = $7, decision = $8, document = ",
    document!("$9"; "$3", "$4", "$5", "$6", "agent", "run", "$7", "$8"),
    " WHERE gate_id = $1"
);

/// The statement and parameters that store `gate`'s document as it is
/// inserted. `run`: the gate's run as stored (its JSON) when the write
/// holds it; otherwise the statement reads the run's title.
pub(super) fn insert(gate: &Gate, run: Option<&str>) -> Result<(&'static str, Vec<Param>)> {
    #[derive(Deserialize)]
    struct Titled {
        title: Option<String>,
    }
    let fields = SearchFields::of(&serde_json::to_value(gate)?);
    let bound = fold_bound(&fields, &gate.agent);
    let mut params: Vec<Param> = vec![
        Box::new(gate.id.to_string()),
        Box::new(gate.run_id.to_string()),
        Box::new(gate.kind().as_str()),
        Box::new(gate.status.as_str()),
        Box::new(gate.created_at.timestamp_micros()),
        Box::new(fields.text),
        Box::new(fields.action),
        Box::new(fields.payload),
        Box::new(fields.details),
        Box::new(gate.agent.clone()),
        Box::new(fields.reviewer),
        Box::new(fields.decision),
        Box::new(bound),
    ];
    let Some(run) = run else { return Ok((INSERT_READ_RUN, params)) };
    let title = serde_json::from_str::<Titled>(run)?.title;
    params.push(Box::new(SearchFields::run(gate.run_id.as_str(), title.as_deref())));
    Ok((INSERT_GIVEN_RUN, params))
}

/// The parameters of [`UPDATE`] for `gate`, changed.
pub(super) fn update(gate: &Gate) -> Result<Vec<Param>> {
    let fields = SearchFields::of(&serde_json::to_value(gate)?);
    let bound = fold_bound(&fields, &gate.agent);
    Ok(vec![
        Box::new(gate.id.to_string()),
        Box::new(gate.status.as_str()),
        Box::new(fields.text),
        Box::new(fields.action),
        Box::new(fields.payload),
        Box::new(fields.details),
        Box::new(fields.reviewer),
        Box::new(fields.decision),
        Box::new(bound),
    ])
}

/// The most bytes `fields` and `agent` fold to, with a space between each
/// two (the fields joined as the old check joined them): ASCII folds to as
/// many bytes as it has, other characters at most to their lower case.
fn fold_bound(fields: &SearchFields, agent: &str) -> i32 {
    let parts = [&fields.text, &fields.action, &fields.payload, &fields.details, &fields.reviewer, &fields.decision];
    let bytes: usize =
        parts.into_iter().flatten().map(|s| folded_at_most(s)).sum::<usize>() + folded_at_most(agent) + 7;
    // Past the limit, how far does not matter (and must not overflow SQL's integer).
    i32::try_from(bytes.min(1_000_001)).unwrap_or(1_000_001)
}

fn folded_at_most(text: &str) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    text.chars().map(|c| c.len_utf8().max(c.to_lowercase().map(char::len_utf8).sum())).sum()
}
