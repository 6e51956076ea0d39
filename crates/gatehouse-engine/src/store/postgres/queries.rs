//! SQL for the PostgreSQL backend: [`PgDb`] implements the read and the
//! write side of the store traits over one connection, as `Db` does for
//! SQLite, with the same snapshots and the same orders. JSON is read with
//! `data::jsonb` where a query looks inside a snapshot (metrics, an agent's
//! runs), so what is stored stays the exact text that was written.
//!
//! Over 600 lines: every `ReadTx`/`WriteTx` method's SQL on PostgreSQL,
//! mirroring the SQLite file; to be split by record with it.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

use crate::allow_rule::{AllowRule, AllowRuleFilter, AllowRuleStatus};
use crate::decision::Decision;
use crate::error::{EngineError, Result};
use crate::event::{self, Event, EventBody, EventRow};
use crate::gate::{Gate, GateStatus};
use crate::ids::{AllowRuleId, GateId, RunId};
use crate::metrics::{Correction, GateTally};
use crate::plan::PlanRevision;
use crate::run::{Run, Turn};
use crate::scoring::{CapabilityRating, RatingChange};
use crate::search::{GateSearch, SearchResults};
use crate::store::chain::ChainHead;
use crate::store::{
    AuditTable, BeforeOpen, EventFilter, GateFilter, ReadTx, RunFilter, SchemaProbe, StoredRow, WriteTx,
};
use crate::token::Token;

use super::gate_rows;
use super::group::{PgWrite, TxSide};
use super::Conn;

/// A parameter of a query built at run time.
type Param = Box<dyn ToSql + Sync + Send>;

/// A connection seen through the store traits; `W` is `()` for readers and
/// `&mut PgWrite` for the writer.
pub(crate) struct PgDb<'c, W> {
    pub conn: &'c Conn,
    pub state: W,
}

fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| EngineError::Storage(format!("cannot encode: {e}")))
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(|e| EngineError::Storage(format!("unexpected column {i}: {e}")))
}

fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p.as_ref() as &(dyn ToSql + Sync)).collect()
}

/// Numbers the `?` placeholders `$1, $2, …` in order; a `?` inside a
/// quoted literal (a JSON path's filter) is left alone.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let (mut n, mut in_literal) = (0, false);
    for c in sql.chars() {
        match c {
            '\'' => {
                in_literal = !in_literal;
                out.push(c);
            }
            '?' if !in_literal => {
                n += 1;
                out.push_str(&format!("${n}"));
            }
            _ => out.push(c),
        }
    }
    out
}

impl<W> PgDb<'_, W> {
    /// Snapshots in column 0 of what `sql` (with `?` placeholders) returns.
    fn collect<T: DeserializeOwned>(&self, sql: &str, params: &[Param]) -> Result<Vec<T>> {
        self.conn
            .query(&numbered(sql), &refs(params))?
            .iter()
            .map(|row| Ok(serde_json::from_str(&get::<String>(row, 0)?)?))
            .collect()
    }

    fn one<T: DeserializeOwned>(&self, sql: &str, params: &[Param]) -> Result<Option<T>> {
        Ok(self.collect(sql, params)?.into_iter().next())
    }

    fn count(&self, sql: &str, params: &[Param]) -> Result<u64> {
        let rows = self.conn.query(&numbered(sql), &refs(params))?;
        let n: i64 = rows.first().map(|r| get(r, 0)).transpose()?.unwrap_or(0);
        Ok(n as u64)
    }

    fn ids(&self, sql: &str, params: &[Param]) -> Result<Vec<String>> {
        self.conn.query(&numbered(sql), &refs(params))?.iter().map(|r| get(r, 0)).collect()
    }

    fn read_events(&self, sql: &str, params: &[Param]) -> Result<Vec<Event>> {
        let rows = self.conn.query(&numbered(sql), &refs(params))?;
        rows.iter()
            .map(|r| {
                let body: String = get(r, 2)?;
                Ok(Event {
                    seq: get::<i64>(r, 0)? as u64,
                    hash: hex::encode(get::<Vec<u8>>(r, 1)?),
                    body: serde_json::from_str(&body)?,
                })
            })
            .collect()
    }

    fn rules(&self, sql: &str, params: &[Param], now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
        Ok(self.collect::<AllowRule>(sql, params)?.into_iter().map(|r| r.as_of(now)).collect())
    }
}

fn text(s: &str) -> Param {
    Box::new(s.to_owned())
}

/// The WHERE clause of a gate filter.
fn gate_where(filter: &GateFilter) -> (String, Vec<Param>) {
    let mut clauses = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    if let Some(status) = filter.status {
        // Inlined (an enum, never input) so the planner can use the partial indexes.
        clauses.push(format!("status = '{}'", status.as_str()));
    }
    if let Some(kind) = filter.kind {
        clauses.push("kind = ?".to_owned());
        params.push(text(kind.as_str()));
    }
    if let Some(mode) = filter.mode {
        clauses.push("mode_rank = ?".to_owned());
        params.push(Box::new(mode.rank()));
    }
    if let Some(run) = &filter.run_id {
        clauses.push("run_id = ?".to_owned());
        params.push(text(run.as_str()));
    }
    if let Some(runs) = &filter.runs {
        clauses.push("run_id = ANY(?::text[])".to_owned());
        params.push(run_set(runs));
    }
    if let Some(agent) = &filter.agent {
        clauses.push("agent = ?".to_owned());
        params.push(text(agent));
    }
    let sql = if clauses.is_empty() { String::new() } else { format!(" WHERE {}", clauses.join(" AND ")) };
    (sql, params)
}

/// The clauses of a run listing's filter.
fn run_clauses(filter: &RunFilter, clauses: &mut Vec<String>, params: &mut Vec<Param>) {
    if let Some(agent) = &filter.agent {
        // The agent lives only in the snapshot: matched in JSON after the
        // indexed filters have narrowed the rows.
        clauses.push(
            "(data::jsonb ->> 'agent' = ? OR jsonb_path_exists(data::jsonb, '$.participants[*] ? (@.name == $a)',
              jsonb_build_object('a', ?::text)))"
                .to_owned(),
        );
        params.extend([text(agent), text(agent)]);
    }
    if !filter.statuses.is_empty() {
        let marks = vec!["?"; filter.statuses.len()].join(", ");
        clauses.push(format!("status IN ({marks})"));
        params.extend(filter.statuses.iter().map(|s| text(s.as_str())));
        // An imported run keeps the status it was recorded with, but it is
        // history: a filter for live statuses never finds it there.
        if filter.statuses.iter().any(|s| !s.is_terminal()) {
            clauses.push(
                "(status IN ('completed', 'failed', 'cancelled') OR (data::jsonb -> 'imported') IS NULL)".to_owned(),
            );
        }
    }
    if let Some(user) = &filter.user_id {
        clauses.push("user_id = ?".to_owned());
        params.push(text(user));
    }
    if let Some(session) = &filter.session_id {
        clauses.push("session_id = ?".to_owned());
        params.push(text(session));
    }
    if let Some(ids) = &filter.ids {
        clauses.push("id = ANY(?::text[])".to_owned());
        params.push(run_set(ids));
    }
}

/// A set of runs as one parameter, a text array for `= ANY(?::text[])`:
/// one query however many runs.
fn run_set(runs: &[RunId]) -> Param {
    Box::new(runs.iter().map(|r| r.as_str().to_owned()).collect::<Vec<String>>())
}

/// The `LIMIT`/`OFFSET` of a run listing.
fn run_page(filter: &RunFilter) -> String {
    let mut page = String::new();
    if let Some(limit) = filter.limit {
        page.push_str(&format!(" LIMIT {limit}"));
    }
    if let Some(offset) = filter.offset.filter(|o| *o > 0) {
        page.push_str(&format!(" OFFSET {offset}"));
    }
    page
}

impl<W: TxSide> PgDb<'_, W> {
    /// A run whose row the group holds, as it stands ([`TxSide::held_run`]);
    /// none while the job before's writes may yet prove refused
    /// (`Conn::holds_unsure`), so the run is read from the database.
    fn held_run(&self, id: &str) -> Option<String> {
        if self.conn.holds_unsure() {
            return None;
        }
        self.state.held_run(id)
    }

    /// As [`TxSide::held_gate_status`], none while unsure as above.
    fn held_gate_status(&self, id: &str) -> Option<GateStatus> {
        if self.conn.holds_unsure() {
            return None;
        }
        self.state.held_gate_status(id)
    }

    /// As [`TxSide::take_unused_key`] (the key is forgotten either way: a
    /// gate is about to take it), false while unsure as above.
    fn take_unused_key(&self, run: &str, key: &str) -> bool {
        let unused = self.state.take_unused_key(run, key);
        unused && !self.conn.holds_unsure()
    }

    /// `sql` locking the rows it returns, in a write group: a row a write
    /// reads, it may go on to change, and without a global lock another
    /// instance's group could change it meanwhile.
    fn locking(&self, sql: &str) -> String {
        match self.state.locks_rows() {
            true => format!("{sql} FOR NO KEY UPDATE"),
            false => sql.to_owned(),
        }
    }

    /// In a write group, locks the row of run `id` before what follows
    /// reads anything of that run, unless the group holds it already:
    /// every write to a run's rows (its gates, turns, context, plan)
    /// happens while its group holds the run's row, so writes on one run
    /// take turns and writes on different runs do not wait for each other.
    /// Sent without waiting: the read after it waits for both, and runs
    /// after the lock is granted, so it sees what the last holder committed.
    fn lock_run(&self, id: &str) -> Result<()> {
        if !self.state.locks_rows() || self.held_run(id).is_some() {
            return Ok(());
        }
        self.conn.defer("SELECT 1 FROM runs WHERE id = $1 FOR NO KEY UPDATE", vec![own(id.to_owned())])
    }
}

impl<W: TxSide> ReadTx for PgDb<'_, W> {
    fn run(&self, id: &RunId) -> Result<Option<Run>> {
        if let Some(data) = self.held_run(id.as_str()) {
            return Ok(Some(serde_json::from_str(&data)?));
        }
        let rows = self.conn.query(&self.locking(RUN), &[&id.as_str()])?;
        self.kept_run(id, &rows)
    }

    fn runs(&self, filter: &RunFilter) -> Result<Vec<Run>> {
        let (mut clauses, mut params) = (Vec::new(), Vec::new());
        run_clauses(filter, &mut clauses, &mut params);
        let mut sql = "SELECT data FROM runs".to_owned();
        if !clauses.is_empty() {
            sql.push_str(&format!(" WHERE {}", clauses.join(" AND ")));
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        sql.push_str(&run_page(filter));
        self.collect(&sql, &params)
    }

    fn child_runs(&self, parent: &RunId) -> Result<Vec<Run>> {
        // In a write, locked: a run that ends ends its children, from these snapshots.
        let sql = self.locking("SELECT data FROM runs WHERE parent_id = ? ORDER BY created_at, id");
        self.collect(&sql, &[text(parent.as_str())])
    }

    fn terminal_runs_before(&self, cutoff: DateTime<Utc>) -> Result<Vec<RunId>> {
        let ids = self.ids(
            "SELECT id FROM runs WHERE status IN ('completed', 'failed', 'cancelled') AND updated_at < ?
             AND NOT EXISTS (SELECT 1 FROM gates WHERE gates.run_id = runs.id AND gates.status = 'pending')
             ORDER BY updated_at",
            &[Box::new(micros(cutoff))],
        )?;
        Ok(ids.into_iter().map(RunId::from_string).collect())
    }

    fn gate(&self, id: &GateId) -> Result<Option<Gate>> {
        const GATE: &str = "SELECT data FROM gates WHERE id = $1";
        if !self.state.locks_rows() {
            return self.one(GATE, &[text(id.as_str())]);
        }
        // The run's row first (kept, see `TxSide::hold_run`), then the
        // gate, read once the lock is granted: one wait for both.
        let params: [&(dyn ToSql + Sync); 1] = [&id.as_str()];
        let mut replies = self.conn.query_all(&[
            (
                "SELECT id, data FROM runs WHERE id = (SELECT run_id FROM gates WHERE id = $1) FOR NO KEY UPDATE",
                &params,
            ),
            (GATE, &params),
        ])?;
        let (gate, run) = (replies.pop().unwrap_or_default(), replies.pop().unwrap_or_default());
        if let Some(row) = run.first() {
            self.state.hold_run(&get::<String>(row, 0)?, Some(get(row, 1)?));
        }
        let gate: Option<Gate> =
            gate.first().map(|row| Ok::<_, EngineError>(serde_json::from_str(&get::<String>(row, 0)?)?)).transpose()?;
        if let (Some(gate), false) = (&gate, run.is_empty()) {
            self.state.hold_gate_status(id.as_str(), Some(gate.status));
        }
        Ok(gate)
    }

    fn gate_by_idempotency_key(&self, run: &RunId, key: &str) -> Result<Option<Gate>> {
        self.lock_run(run.as_str())?;
        let gate: Option<Gate> = self.one(IDEMPOTENT_GATE, &[text(run.as_str()), text(key)])?;
        if gate.is_none() {
            self.state.hold_unused_key(run.as_str(), key);
        }
        Ok(gate)
    }

    fn gates(&self, filter: &GateFilter) -> Result<Vec<Gate>> {
        let (where_sql, params) = gate_where(filter);
        let order = if filter.status == Some(GateStatus::Pending) {
            " ORDER BY mode_rank, priority DESC, created_at, id"
        } else {
            " ORDER BY created_at DESC, id DESC"
        };
        let mut sql = format!("SELECT data FROM gates{where_sql}{order}");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        if filter.offset > 0 {
            sql.push_str(&format!(" OFFSET {}", filter.offset));
        }
        self.collect(&sql, &params)
    }

    fn count_gates(&self, filter: &GateFilter) -> Result<u64> {
        let (where_sql, params) = gate_where(filter);
        self.count(&format!("SELECT count(*) FROM gates{where_sql}"), &params)
    }

    fn search_gates(&self, search: &GateSearch) -> Result<SearchResults> {
        super::search::search_gates(self.conn, search, None)
    }

    fn search_gates_of_runs(&self, search: &GateSearch, runs: &[RunId]) -> Result<SearchResults> {
        super::search::search_gates(self.conn, search, Some(runs))
    }

    fn pending_blocking_gates(&self, run: &RunId) -> Result<u64> {
        self.count(
            "SELECT count(*) FROM gates WHERE run_id = ? AND status = 'pending' AND mode_rank = 0",
            &[text(run.as_str())],
        )
    }

    fn expired_gate_ids(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<GateId>> {
        let ids = self.ids(
            "SELECT id FROM gates WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?
             ORDER BY expires_at LIMIT ?",
            &[Box::new(micros(now)), Box::new(i64::from(limit))],
        )?;
        Ok(ids.into_iter().map(GateId::from_string).collect())
    }

    fn escalation_due_ids(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<GateId>> {
        let ids = self.ids(
            "SELECT id FROM gates WHERE status = 'pending' AND escalate_at IS NOT NULL AND escalate_at <= ?
             ORDER BY escalate_at LIMIT ?",
            &[Box::new(micros(now)), Box::new(i64::from(limit))],
        )?;
        Ok(ids.into_iter().map(GateId::from_string).collect())
    }

    fn turns(&self, run: &RunId) -> Result<Vec<Turn>> {
        self.collect("SELECT data FROM turns WHERE run_id = ? ORDER BY idx", &[text(run.as_str())])
    }

    fn turns_after(&self, run: &RunId, after: u32) -> Result<Vec<Turn>> {
        self.collect(
            "SELECT data FROM turns WHERE run_id = ? AND idx > ? ORDER BY idx",
            &[text(run.as_str()), Box::new(i64::from(after))],
        )
    }

    fn context(&self, run: &RunId) -> Result<BTreeMap<String, serde_json::Value>> {
        let rows =
            self.conn.query("SELECT key, value FROM context WHERE run_id = $1 ORDER BY key", &[&run.as_str()])?;
        let mut out = BTreeMap::new();
        for row in &rows {
            out.insert(get::<String>(row, 0)?, serde_json::from_str(&get::<String>(row, 1)?)?);
        }
        Ok(out)
    }

    fn context_value(&self, run: &RunId, key: &str) -> Result<Option<serde_json::Value>> {
        let rows =
            self.conn.query("SELECT value FROM context WHERE run_id = $1 AND key = $2", &[&run.as_str(), &key])?;
        match rows.first() {
            Some(row) => Ok(Some(serde_json::from_str(&get::<String>(row, 0)?)?)),
            None => Ok(None),
        }
    }

    fn context_prefixed(&self, run: &RunId, prefix: &str) -> Result<BTreeMap<String, serde_json::Value>> {
        let end = crate::store::prefix_end(prefix);
        let rows = self.conn.query(
            "SELECT key, value FROM context WHERE run_id = $1 AND key >= $2 AND ($3::TEXT IS NULL OR key < $3)
             ORDER BY key",
            &[&run.as_str(), &prefix, &end],
        )?;
        let mut out = BTreeMap::new();
        for row in &rows {
            out.insert(get::<String>(row, 0)?, serde_json::from_str(&get::<String>(row, 1)?)?);
        }
        Ok(out)
    }

    fn global_memory(&self) -> Result<BTreeMap<String, serde_json::Value>> {
        let rows = self.conn.query(&self.locking("SELECT key, value FROM global_memory ORDER BY key"), &[])?;
        let mut out = BTreeMap::new();
        for row in &rows {
            out.insert(get::<String>(row, 0)?, serde_json::from_str(&get::<String>(row, 1)?)?);
        }
        Ok(out)
    }

    fn plan_revisions(&self, run: &RunId) -> Result<Vec<PlanRevision>> {
        self.collect("SELECT data FROM plan_revisions WHERE run_id = ? ORDER BY revision", &[text(run.as_str())])
    }

    fn latest_plan(&self, run: &RunId) -> Result<Option<PlanRevision>> {
        self.one(
            "SELECT data FROM plan_revisions WHERE run_id = ? ORDER BY revision DESC LIMIT 1",
            &[text(run.as_str())],
        )
    }

    fn rating(&self, agent: &str) -> Result<Option<CapabilityRating>> {
        self.one("SELECT data FROM agent_ratings WHERE agent = ?", &[text(agent)])
    }

    fn ratings(&self) -> Result<Vec<CapabilityRating>> {
        self.collect("SELECT data FROM agent_ratings ORDER BY agent", &[])
    }

    fn events_after(&self, seq: u64, filter: &EventFilter, limit: u32) -> Result<Vec<Event>> {
        self.state.store_events(self.conn)?;
        let mut sql = "SELECT seq, hash, body FROM events WHERE seq > ? AND body IS NOT NULL".to_owned();
        let mut params: Vec<Param> = vec![Box::new(seq as i64)];
        for (column, value) in [
            ("run_id", filter.run_id.as_ref().map(|r| r.as_str())),
            ("session_id", filter.session_id.as_deref()),
            ("user_id", filter.user_id.as_deref()),
        ] {
            if let Some(v) = value {
                sql.push_str(&format!(" AND {column} = ?"));
                params.push(text(v));
            }
        }
        sql.push_str(" ORDER BY seq LIMIT ?");
        params.push(Box::new(i64::from(limit)));
        self.read_events(&sql, &params)
    }

    fn events_of_runs(&self, runs: &[RunId]) -> Result<Vec<Event>> {
        self.state.store_events(self.conn)?;
        let mut out = Vec::new();
        for run in runs {
            out.extend(self.read_events(
                "SELECT seq, hash, body FROM events WHERE run_id = ? AND body IS NOT NULL ORDER BY seq",
                &[text(run.as_str())],
            )?);
        }
        out.sort_by_key(|e| e.seq);
        Ok(out)
    }

    fn event_rows(&self, after: u64, limit: u32) -> Result<Vec<EventRow>> {
        self.state.store_events(self.conn)?;
        let rows = self.conn.query(
            "SELECT seq, run_id, body, body_hash, hash FROM events WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&(after as i64), &i64::from(limit)],
        )?;
        rows.iter()
            .map(|r| {
                Ok(EventRow {
                    seq: get::<i64>(r, 0)? as u64,
                    run_id: get(r, 1)?,
                    body: get(r, 2)?,
                    body_hash: get(r, 3)?,
                    hash: get(r, 4)?,
                })
            })
            .collect()
    }

    fn head_seq(&self) -> Result<u64> {
        self.state.store_events(self.conn)?;
        self.count("SELECT coalesce(max(seq), 0) FROM events", &[])
    }

    fn schema_probe(&self) -> Result<SchemaProbe> {
        let sql =
            "SELECT version::bigint, (SELECT count(*) FROM (SELECT 1 FROM events LIMIT 1) e) FROM gatehouse_schema";
        let found = self.count(sql, &[])?;
        Ok(SchemaProbe { found: found as i64, current: i64::from(super::schema::CURRENT_VERSION) })
    }

    fn stored_rows(&self, table: AuditTable) -> Result<Vec<StoredRow>> {
        use tokio_postgres::types::Type;
        let rows = self.conn.query(table.select(), &[])?;
        rows.iter()
            .map(|r| {
                let data_at = r.len() - 1;
                let mut columns = serde_json::Map::new();
                for (i, column) in r.columns()[..data_at].iter().enumerate() {
                    let value = match *column.type_() {
                        Type::INT8 => get::<Option<i64>>(r, i)?.map(serde_json::Value::from),
                        Type::INT4 => get::<Option<i32>>(r, i)?.map(serde_json::Value::from),
                        _ => get::<Option<String>>(r, i)?.map(serde_json::Value::from),
                    };
                    columns.insert(column.name().to_owned(), value.unwrap_or(serde_json::Value::Null));
                }
                Ok(StoredRow { columns, data: get(r, data_at)? })
            })
            .collect()
    }

    fn tokens(&self) -> Result<Vec<Token>> {
        self.collect(&self.locking("SELECT data FROM tokens ORDER BY created_at, id"), &[])
    }

    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<Token>> {
        self.one(
            &self.locking("SELECT data FROM tokens WHERE secret_hash = ? AND revoked_at IS NULL"),
            &[Box::new(hash.to_vec())],
        )
    }

    fn runs_of_agent(&self, filter: &RunFilter, agent: &str) -> Result<Vec<Run>> {
        self.runs(&RunFilter { agent: Some(agent.to_owned()), ..filter.clone() })
    }

    fn gate_tallies(&self) -> Result<Vec<GateTally>> {
        let rows = self.conn.query(
            "SELECT g.agent, g.kind, g.status,
                    CASE WHEN (d.data::jsonb ->> 'self_decided')::boolean THEN 'self'
                         ELSE d.data::jsonb -> 'origin' ->> 'by' END,
                    count(*),
                    coalesce(sum(d.latency_ms), 0)::bigint,
                    coalesce(CASE jsonb_typeof(r.data::jsonb -> 'input' -> 'tool')
                                 WHEN 'string' THEN r.data::jsonb -> 'input' ->> 'tool' END,
                             CASE jsonb_typeof(r.data::jsonb -> 'input' -> 'model')
                                 WHEN 'string' THEN r.data::jsonb -> 'input' ->> 'model' END),
                    d.decided_by,
                    d.action
             FROM gates g JOIN runs r ON r.id = g.run_id LEFT JOIN decisions d ON d.gate_id = g.id
             GROUP BY 1, 2, 3, 4, 7, 8, 9",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                Ok(GateTally {
                    agent: get(r, 0)?,
                    kind: get(r, 1)?,
                    status: get(r, 2)?,
                    origin: get(r, 3)?,
                    count: get::<i64>(r, 4)? as u64,
                    latency_ms_sum: get(r, 5)?,
                    model: get(r, 6)?,
                    decided_by: get(r, 7)?,
                    action: get(r, 8)?,
                })
            })
            .collect()
    }

    fn alert_figures(&self, since: DateTime<Utc>) -> Result<crate::alert::AlertFigures> {
        super::alerts::alert_figures(self.conn, since)
    }

    fn latest_alert_events(&self, limit: u32) -> Result<Vec<EventBody>> {
        // In a write, under the chain lock: no other instance logs a crossing until this one commits.
        self.state.store_events(self.conn)?;
        super::alerts::latest_alert_events(self.conn, limit)
    }

    fn sla_tallies(&self, targets_ms: [i64; 4], now: DateTime<Utc>) -> Result<Vec<crate::alert::SlaTally>> {
        super::alerts::sla_tallies(self.conn, targets_ms, now)
    }

    fn top_corrections(&self, limit: u32) -> Result<Vec<Correction>> {
        let rows = self.conn.query(
            "SELECT c.value ->> 'path' COLLATE \"C\" AS field, count(*) AS n
             FROM decisions d,
                  jsonb_array_elements(CASE WHEN jsonb_typeof(d.data::jsonb -> 'diff' -> 'changes') = 'array'
                      THEN d.data::jsonb -> 'diff' -> 'changes' ELSE '[]'::jsonb END) AS c (value)
             WHERE d.action = 'edit' AND d.data::jsonb -> 'origin' ->> 'by' = 'human'
             GROUP BY field ORDER BY n DESC, field LIMIT $1",
            &[&i64::from(limit)],
        )?;
        rows.iter()
            .map(|r| {
                Ok(Correction {
                    path: get::<Option<String>>(r, 0)?.unwrap_or_default(),
                    count: get::<i64>(r, 1)? as u64,
                })
            })
            .collect()
    }

    fn allow_rule(&self, id: &AllowRuleId, now: DateTime<Utc>) -> Result<Option<AllowRule>> {
        let sql = self.locking("SELECT data FROM allow_rules WHERE id = ?");
        Ok(self.rules(&sql, &[text(id.as_str())], now)?.into_iter().next())
    }

    fn allow_rules(&self, filter: &AllowRuleFilter, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
        let mut clauses = Vec::new();
        let mut params: Vec<Param> = Vec::new();
        if let Some(agent) = &filter.agent {
            clauses.push("agent = ?");
            params.push(text(agent));
        }
        match filter.status {
            None => {}
            Some(AllowRuleStatus::Live) => {
                clauses.push("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)");
                params.push(Box::new(micros(now)));
            }
            Some(AllowRuleStatus::Expired) => {
                clauses.push("revoked_at IS NULL AND expires_at <= ?");
                params.push(Box::new(micros(now)));
            }
            Some(AllowRuleStatus::Revoked) => clauses.push("revoked_at IS NOT NULL"),
        }
        let mut sql = "SELECT data FROM allow_rules".to_owned();
        if !clauses.is_empty() {
            sql.push_str(&format!(" WHERE {}", clauses.join(" AND ")));
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        if let Some(limit) = filter.limit {
            sql.push_str(&format!(" LIMIT {limit}"));
        }
        self.rules(&sql, &params, now)
    }

    fn live_allow_rules(&self, agent: &str, action: &str, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
        self.rules(
            &self.locking(
                "SELECT data FROM allow_rules
                 WHERE agent = ? AND action = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
                 ORDER BY created_at, id",
            ),
            &[text(agent), text(action), Box::new(micros(now))],
            now,
        )
    }

    /// The run (locked in a write, as [`ReadTx::run`] reads it, or the one
    /// the group holds), the live rules of every action and the gate of the
    /// idempotency key, in one wait: the reads are sent one right behind
    /// the other, and run once the run's lock is granted, so they see what
    /// the run's last writer committed.
    fn reads_before_open(
        &self,
        id: &RunId,
        agent: &str,
        actions: &[&str],
        idempotency_key: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<BeforeOpen> {
        let (run_sql, rules_sql) = (
            self.locking(RUN),
            self.locking(
                "SELECT action, data FROM allow_rules
                 WHERE agent = $1 AND action = ANY($2) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
                 ORDER BY created_at, id",
            ),
        );
        let at = micros(now);
        let run_params: [&(dyn ToSql + Sync); 1] = [&id.as_str()];
        let rules_params: [&(dyn ToSql + Sync); 3] = [&agent, &actions, &at];
        let (key_sql, key_params): (_, [&(dyn ToSql + Sync); 2]) =
            (numbered(IDEMPOTENT_GATE), [&id.as_str(), &idempotency_key]);
        // The group holds the run: no request for it.
        let held = self.held_run(id.as_str()).is_some();
        let mut requests: Vec<(&str, &[&(dyn ToSql + Sync)])> = Vec::new();
        if !held {
            requests.push((&run_sql, &run_params));
        }
        if !actions.is_empty() {
            requests.push((&rules_sql, &rules_params));
        }
        if idempotency_key.is_some() {
            requests.push((&key_sql, &key_params));
        }
        let mut replies = self.conn.query_all(&requests)?.into_iter();
        let run = match held {
            true => self.run(id)?,
            false => self.kept_run(id, &replies.next().unwrap_or_default())?,
        };
        let mut rules = vec![Vec::new(); actions.len()];
        if !actions.is_empty() {
            for row in &replies.next().unwrap_or_default() {
                let action: String = get(row, 0)?;
                let rule: AllowRule = serde_json::from_str(&get::<String>(row, 1)?)?;
                let rule = rule.as_of(now);
                for (i, _) in actions.iter().enumerate().filter(|(_, a)| **a == action) {
                    rules[i].push(rule.clone());
                }
            }
        }
        let existing = match (&run, replies.next(), idempotency_key) {
            (Some(_), Some(rows), Some(key)) => {
                let gate: Option<Gate> = rows
                    .first()
                    .map(|row| Ok::<_, EngineError>(serde_json::from_str(&get::<String>(row, 0)?)?))
                    .transpose()?;
                if gate.is_none() {
                    self.state.hold_unused_key(id.as_str(), key);
                }
                gate
            }
            _ => None,
        };
        Ok(BeforeOpen { run, rules, existing })
    }
}

/// The run's gate opened with an idempotency key (the run, the key).
const IDEMPOTENT_GATE: &str = "SELECT data FROM gates WHERE run_id = ? AND idempotency_key = ?";

/// A run's row, by id (one parameter).
const RUN: &str = "SELECT data FROM runs WHERE id = $1";

impl<W: TxSide> PgDb<'_, W> {
    /// The run in `rows` (read with [`RUN`]), kept by a write group, which
    /// now holds its row.
    fn kept_run(&self, id: &RunId, rows: &[Row]) -> Result<Option<Run>> {
        let Some(row) = rows.first() else { return Ok(None) };
        let data: String = get(row, 0)?;
        let run = serde_json::from_str(&data)?;
        if self.state.locks_rows() {
            self.state.hold_run(id.as_str(), Some(data));
        }
        Ok(Some(run))
    }
}

/// The chain's end as committed, read under the chain lock: the log's
/// last event, its `seq` and `hash` (no row: an empty log).
pub(super) const CHAIN_HEAD: &str = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1";

/// The chain head from [`CHAIN_HEAD`]'s row (none: an empty log).
pub(super) fn chain_head_of(row: Option<&Row>) -> Result<ChainHead> {
    Ok(match row {
        None => ChainHead { seq: 0, hash: event::GENESIS },
        Some(row) => ChainHead {
            seq: get::<i64>(row, 0)? as u64,
            hash: get::<Vec<u8>>(row, 1)?
                .try_into()
                .map_err(|_| EngineError::Storage("event hash is not 32 bytes".into()))?,
        },
    })
}

pub(super) fn chain_head(conn: &Conn) -> Result<ChainHead> {
    chain_head_of(conn.query(CHAIN_HEAD, &[])?.first())
}

fn exec(conn: &Conn, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
    conn.execute(sql, params)
}

/// An owned parameter, for a statement sent without waiting ([`Conn::defer`]).
fn own<T: ToSql + Sync + Send + 'static>(value: T) -> Param {
    Box::new(value)
}

impl WriteTx for PgDb<'_, &mut PgWrite> {
    fn insert_run(&mut self, run: &Run) -> Result<()> {
        let parent = run.parent_run_id.as_ref().map(|p| p.as_str());
        self.conn
            .execute_raw(
                "INSERT INTO runs (id, session_id, user_id, status, created_at, updated_at, data, parent_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &run.id.as_str(),
                    &run.session_id,
                    &run.user_id,
                    &run.status.as_str(),
                    &micros(run.created_at),
                    &micros(run.updated_at),
                    &to_json(run)?,
                    &parent,
                ],
            )
            .map_err(|e| {
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                    EngineError::invalid("run_id", format!("a run with id `{}` already exists", run.id))
                } else {
                    e.into()
                }
            })?;
        Ok(())
    }

    fn update_run(&mut self, run: &Run) -> Result<()> {
        let data = to_json(run)?;
        // The group holds the row (the run was read to be updated): what it stores is what it holds now.
        self.state.hold_run(run.id.as_str(), Some(data.clone()));
        self.conn.defer(
            "UPDATE runs SET status = $1, updated_at = $2, data = $3 WHERE id = $4",
            vec![own(run.status.as_str()), own(micros(run.updated_at)), own(data), own(run.id.to_string())],
        )
    }

    fn insert_gate(&mut self, gate: &Gate) -> Result<bool> {
        const SQL: &str = "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at,
                                expires_at, idempotency_key, data, escalate_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING";
        let params: Vec<Param> = vec![
            own(gate.id.to_string()),
            own(gate.run_id.to_string()),
            own(gate.kind().as_str()),
            own(gate.mode.rank()),
            own(gate.priority.rank()),
            own(gate.status.as_str()),
            own(gate.agent.clone()),
            own(micros(gate.created_at)),
            own(gate.expires_at.map(micros)),
            own(gate.idempotency_key.clone()),
            own(to_json(gate)?),
            own(gate.escalate_at().map(micros)),
        ];
        // The gate's search document, sent right behind it once it is stored.
        let (document, document_params) = gate_rows::insert(gate, self.held_run(gate.run_id.as_str()).as_deref())?;
        let Some(key) = &gate.idempotency_key else {
            // Nothing to conflict with: inserted, whenever the reply comes.
            self.conn.defer(SQL, params)?;
            self.conn.defer(document, document_params)?;
            return Ok(true);
        };
        if self.take_unused_key(gate.run_id.as_str(), key) {
            // Read as unused with the run held: nothing can take the key
            // before this insert, which is sent without waiting. Should it
            // conflict all the same, it fails its job rather than be dropped.
            let (insert, _) = SQL.split_once(" ON CONFLICT").unwrap_or((SQL, ""));
            self.conn.defer(insert, params)?;
            self.conn.defer(document, document_params)?;
            return Ok(true);
        }
        let inserted = exec(self.conn, SQL, &refs(&params))? == 1;
        if inserted {
            self.conn.defer(document, document_params)?;
        }
        Ok(inserted)
    }

    fn update_gate_if(&mut self, gate: &Gate, expected: GateStatus) -> Result<bool> {
        // The update, applied only to the gate (`$6`) in the status expected (`$7`).
        macro_rules! update {
            () => {
                "UPDATE gates SET status = $1, priority = $2, expires_at = $3, data = $4, escalate_at = $5,
                 mode_rank = $8 WHERE id = $6 AND status = $7"
            };
        }
        const UPDATE: &str = update!();
        // The same, failing (its cast) unless exactly one row changed: for an update sent without waiting.
        const GUARDED: &str = concat!(
            "WITH changed AS (",
            update!(),
            " RETURNING id)
             SELECT CASE count(*) WHEN 1 THEN 1
                 ELSE ('gate ' || $6 || ' was not ' || $7 || ' under its run''s lock: ' || count(*) || ' rows')::int
             END FROM changed"
        );
        let params: Vec<Param> = vec![
            own(gate.status.as_str()),
            own(gate.priority.rank()),
            own(gate.expires_at.map(micros)),
            own(to_json(gate)?),
            own(gate.escalate_at().map(micros)),
            own(gate.id.to_string()),
            own(expected.as_str()),
            own(gate.mode.rank()),
        ];
        let id = gate.id.as_str();
        if self.held_gate_status(id) == Some(expected) {
            // Read in this status with its run held, so nothing else can
            // have changed it: the update applies, and is sent without
            // waiting. Should it not apply all the same, the statement
            // fails its job (nothing of the job is kept) instead of
            // reporting a change that was not made.
            self.state.hold_gate_status(id, Some(gate.status));
            self.conn.defer(GUARDED, params)?;
            self.conn.defer(gate_rows::UPDATE, gate_rows::update(gate)?)?;
            return Ok(true);
        }
        self.state.hold_gate_status(id, None);
        let updated = exec(self.conn, UPDATE, &refs(&params))? == 1;
        if updated {
            // The gate's search document, sent right behind it.
            self.conn.defer(gate_rows::UPDATE, gate_rows::update(gate)?)?;
        }
        Ok(updated)
    }

    fn insert_decision(&mut self, d: &Decision) -> Result<()> {
        self.conn.defer(
            "INSERT INTO decisions (id, gate_id, run_id, action, decided_by, decided_at, latency_ms, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            vec![
                own(d.id.to_string()),
                own(d.gate_id.to_string()),
                own(d.run_id.to_string()),
                own(d.action.as_str()),
                own(d.decided_by.clone()),
                own(micros(d.decided_at)),
                own(d.latency_ms),
                own(to_json(d)?),
            ],
        )
    }

    fn insert_turn(&mut self, turn: &Turn) -> Result<()> {
        self.conn.defer(
            "INSERT INTO turns (id, run_id, idx, data) VALUES ($1, $2, $3, $4)",
            vec![
                own(turn.id.to_string()),
                own(turn.run_id.to_string()),
                own(i64::from(turn.index)),
                own(to_json(turn)?),
            ],
        )
    }

    fn put_context(&mut self, run: &RunId, key: &str, value: Option<&serde_json::Value>) -> Result<()> {
        match value {
            Some(v) => self.conn.defer(
                "INSERT INTO context (run_id, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                vec![own(run.to_string()), own(key.to_owned()), own(to_json(v)?)],
            ),
            None => self.conn.defer(
                "DELETE FROM context WHERE run_id = $1 AND key = $2",
                vec![own(run.to_string()), own(key.to_owned())],
            ),
        }
    }

    fn put_global_memory(&mut self, key: &str, value: Option<&serde_json::Value>) -> Result<()> {
        match value {
            Some(v) => self.conn.defer(
                "INSERT INTO global_memory (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                vec![own(key.to_owned()), own(to_json(v)?)],
            ),
            None => self.conn.defer("DELETE FROM global_memory WHERE key = $1", vec![own(key.to_owned())]),
        }
    }

    fn insert_plan_revision(&mut self, run: &RunId, revision: &PlanRevision) -> Result<()> {
        self.conn.defer(
            "INSERT INTO plan_revisions (run_id, revision, data) VALUES ($1, $2, $3)",
            vec![own(run.to_string()), own(i64::from(revision.revision)), own(to_json(revision)?)],
        )
    }

    fn rate_agent(&mut self, agent: &str, change: RatingChange) -> Result<()> {
        // Counted with the group's other changes as it ends (`group.rs`).
        self.state.rate(agent, change);
        Ok(())
    }

    fn append_event(&mut self, body: EventBody) -> Result<()> {
        // Linked and stored with the group's other events as it ends (`group.rs`).
        self.state.append(body)
    }

    fn purge_run(&mut self, run: &RunId) -> Result<()> {
        self.state.hold_run(run.as_str(), None);
        // The run's events appended in this group are blanked too.
        self.state.store_events(self.conn)?;
        for sql in [
            "DELETE FROM decisions WHERE run_id = $1",
            "DELETE FROM gates WHERE run_id = $1",
            "DELETE FROM turns WHERE run_id = $1",
            "DELETE FROM context WHERE run_id = $1",
            "DELETE FROM plan_revisions WHERE run_id = $1",
            "UPDATE events SET body = NULL WHERE run_id = $1",
            "DELETE FROM runs WHERE id = $1",
        ] {
            exec(self.conn, sql, &[&run.as_str()])?;
        }
        Ok(())
    }

    fn insert_token(&mut self, token: &Token, secret_hash: &[u8; 32]) -> Result<()> {
        exec(
            self.conn,
            "INSERT INTO tokens (id, name, role, secret_hash, created_at, revoked_at, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &token.id,
                &token.name,
                &token.role.as_str(),
                &&secret_hash[..],
                &micros(token.created_at),
                &token.revoked_at.map(micros),
                &to_json(token)?,
            ],
        )?;
        Ok(())
    }

    fn update_token(&mut self, token: &Token) -> Result<()> {
        exec(
            self.conn,
            "UPDATE tokens SET revoked_at = $1, data = $2 WHERE id = $3",
            &[&token.revoked_at.map(micros), &to_json(token)?, &token.id],
        )?;
        Ok(())
    }

    fn insert_allow_rule(&mut self, rule: &AllowRule) -> Result<()> {
        exec(
            self.conn,
            "INSERT INTO allow_rules (id, agent, action, created_at, expires_at, revoked_at, data)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &rule.id.as_str(),
                &rule.agent,
                &rule.action,
                &micros(rule.created_at),
                &rule.expires_at.map(micros),
                &rule.revoked_at.map(micros),
                &to_json(rule)?,
            ],
        )?;
        Ok(())
    }

    fn update_allow_rule(&mut self, rule: &AllowRule) -> Result<()> {
        exec(
            self.conn,
            "UPDATE allow_rules SET revoked_at = $1, data = $2 WHERE id = $3",
            &[&rule.revoked_at.map(micros), &to_json(rule)?, &rule.id.as_str()],
        )?;
        Ok(())
    }
}
