//! SQL for the SQLite backend: one [`Db`] type implements both the read and
//! the write side of the store traits over a connection. Snapshots are kept
//! as JSON documents with their query columns beside them, so a read is one
//! indexed lookup plus one parse, and a recording round-trips losslessly.
//!
//! Over 600 lines: it is every `ReadTx`/`WriteTx` method's SQL on SQLite
//! in one place, mirroring `postgres/queries.rs`; the two are to be split
//! by record (runs, gates, events) together.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};
use serde::de::DeserializeOwned;

use crate::allow_rule::{AllowRule, AllowRuleFilter};
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
use crate::store::chain::{ChainHead, WriteState};
use crate::store::{AuditTable, EventFilter, GateFilter, ReadTx, RunFilter, SchemaProbe, StoredRow, WriteTx};
use crate::token::Token;

impl ChainHead {
    /// The head as the file holds it: its newest event, or the genesis.
    pub(crate) fn load(conn: &Connection) -> Result<Self> {
        // Read at the start of every group commit: kept prepared.
        let row: Option<(i64, Vec<u8>)> = conn
            .prepare_cached("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(match row {
            None => Self { seq: 0, hash: event::GENESIS },
            Some((seq, hash)) => Self {
                seq: seq as u64,
                hash: hash.try_into().map_err(|_| EngineError::Storage("event hash is not 32 bytes".into()))?,
            },
        })
    }
}

/// A connection seen through the store traits; `W` is `()` for readers and
/// `&mut WriteState` for the writer.
pub(crate) struct Db<'c, W> {
    pub conn: &'c Connection,
    pub state: W,
}

fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

fn parse<T: DeserializeOwned>(s: &str) -> Result<T> {
    Ok(serde_json::from_str(s)?)
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| EngineError::Storage(format!("cannot encode: {e}")))
}

fn collect<T: DeserializeOwned>(conn: &Connection, sql: &str, params: &[SqlValue]) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for row in rows {
        out.push(parse(&row?)?);
    }
    Ok(out)
}

fn one<T: DeserializeOwned>(conn: &Connection, sql: &str, params: &[SqlValue]) -> Result<Option<T>> {
    Ok(collect(conn, sql, params)?.into_iter().next())
}

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.to_owned())
}

/// A set of runs as one parameter, a JSON array, for
/// `IN (SELECT value FROM json_each(?))`: one query however many runs,
/// never near SQLite's limit on parameters.
fn run_set(runs: &[RunId]) -> SqlValue {
    SqlValue::Text(serde_json::Value::from(runs.iter().map(RunId::as_str).collect::<Vec<_>>()).to_string())
}

/// The clauses of a run listing's filter.
fn run_clauses(filter: &RunFilter, clauses: &mut Vec<String>, params: &mut Vec<SqlValue>) {
    if let Some(agent) = &filter.agent {
        // The agent lives only in the snapshot, so it is matched in JSON
        // after the indexed filters have narrowed the rows.
        clauses.push(
            "(json_extract(data, '$.agent') = ? OR EXISTS (SELECT 1 FROM json_each(data, '$.participants') p
              WHERE json_extract(p.value, '$.name') = ?))"
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
                "(status IN ('completed', 'failed', 'cancelled') OR json_extract(data, '$.imported') IS NULL)"
                    .to_owned(),
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
        clauses.push("id IN (SELECT value FROM json_each(?))".to_owned());
        params.push(run_set(ids));
    }
}

/// Builds the WHERE clause for a gate filter. Status is inlined as a literal
/// (it comes from an enum, never from input) so SQLite can use the partial
/// indexes declared `WHERE status = 'pending'`.
fn gate_where(filter: &GateFilter) -> (String, Vec<SqlValue>) {
    let mut clauses = Vec::new();
    let mut params = Vec::new();
    if let Some(status) = filter.status {
        clauses.push(format!("status = '{}'", status.as_str()));
    }
    if let Some(kind) = filter.kind {
        clauses.push("kind = ?".to_owned());
        params.push(text(kind.as_str()));
    }
    if let Some(mode) = filter.mode {
        clauses.push("mode_rank = ?".to_owned());
        params.push(SqlValue::Integer(mode.rank()));
    }
    if let Some(run) = &filter.run_id {
        clauses.push("run_id = ?".to_owned());
        params.push(text(run.as_str()));
    }
    if let Some(runs) = &filter.runs {
        clauses.push("run_id IN (SELECT value FROM json_each(?))".to_owned());
        params.push(run_set(runs));
    }
    if let Some(agent) = &filter.agent {
        clauses.push("agent = ?".to_owned());
        params.push(text(agent));
    }
    let sql = if clauses.is_empty() { String::new() } else { format!(" WHERE {}", clauses.join(" AND ")) };
    (sql, params)
}

impl<W> Db<'_, W> {
    /// The ids a sweep query (`sql`, taking the time and a limit) finds due at `now`.
    fn due_gate_ids(&self, sql: &'static str, now: DateTime<Utc>, limit: u32) -> Result<Vec<GateId>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let ids = stmt.query_map(params![micros(now), limit], |r| r.get::<_, String>(0))?;
        ids.map(|id| Ok(GateId::from_string(id?))).collect()
    }
}

impl<W> ReadTx for Db<'_, W> {
    fn run(&self, id: &RunId) -> Result<Option<Run>> {
        one(self.conn, "SELECT data FROM runs WHERE id = ?", &[text(id.as_str())])
    }

    fn runs(&self, filter: &RunFilter) -> Result<Vec<Run>> {
        let mut clauses = Vec::new();
        let mut params = Vec::new();
        run_clauses(filter, &mut clauses, &mut params);
        let mut sql = "SELECT data FROM runs".to_owned();
        if !clauses.is_empty() {
            sql.push_str(&format!(" WHERE {}", clauses.join(" AND ")));
        }
        sql.push_str(" ORDER BY created_at DESC, id DESC");
        sql.push_str(&run_page(filter));
        collect(self.conn, &sql, &params)
    }

    fn terminal_runs_before(&self, cutoff: DateTime<Utc>) -> Result<Vec<RunId>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM runs WHERE status IN ('completed', 'failed', 'cancelled') AND updated_at < ?
             AND NOT EXISTS (SELECT 1 FROM gates WHERE gates.run_id = runs.id AND gates.status = 'pending')
             ORDER BY updated_at",
        )?;
        let ids = stmt.query_map([micros(cutoff)], |r| r.get::<_, String>(0))?;
        ids.map(|id| Ok(RunId::from_string(id?))).collect()
    }

    fn gate(&self, id: &GateId) -> Result<Option<Gate>> {
        one(self.conn, "SELECT data FROM gates WHERE id = ?", &[text(id.as_str())])
    }

    fn gate_by_idempotency_key(&self, run: &RunId, key: &str) -> Result<Option<Gate>> {
        one(
            self.conn,
            "SELECT data FROM gates WHERE run_id = ? AND idempotency_key = ?",
            &[text(run.as_str()), text(key)],
        )
    }

    fn gates(&self, filter: &GateFilter) -> Result<Vec<Gate>> {
        let (where_sql, mut params) = gate_where(filter);
        let order = if filter.status == Some(GateStatus::Pending) {
            " ORDER BY mode_rank, priority DESC, created_at, id"
        } else {
            " ORDER BY created_at DESC, id DESC"
        };
        let limit = filter.limit.map_or(-1, i64::from);
        params.push(SqlValue::Integer(limit));
        params.push(SqlValue::Integer(i64::from(filter.offset)));
        let sql = format!("SELECT data FROM gates{where_sql}{order} LIMIT ? OFFSET ?");
        collect(self.conn, &sql, &params)
    }

    fn count_gates(&self, filter: &GateFilter) -> Result<u64> {
        let (where_sql, params) = gate_where(filter);
        let sql = format!("SELECT count(*) FROM gates{where_sql}");
        let n: i64 = self.conn.prepare_cached(&sql)?.query_row(params_from_iter(params.iter()), |r| r.get(0))?;
        Ok(n as u64)
    }

    fn search_gates(&self, search: &GateSearch) -> Result<SearchResults> {
        super::search::search_gates(self.conn, search, None)
    }

    fn search_gates_of_runs(&self, search: &GateSearch, runs: &[RunId]) -> Result<SearchResults> {
        super::search::search_gates(self.conn, search, Some(run_set(runs)))
    }

    fn pending_blocking_gates(&self, run: &RunId) -> Result<u64> {
        let n: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM gates WHERE run_id = ? AND status = 'pending' AND mode_rank = 0")?
            .query_row([run.as_str()], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn expired_gate_ids(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<GateId>> {
        self.due_gate_ids(
            "SELECT id FROM gates WHERE status = 'pending' AND expires_at IS NOT NULL AND expires_at <= ?
             ORDER BY expires_at LIMIT ?",
            now,
            limit,
        )
    }

    fn child_runs(&self, parent: &RunId) -> Result<Vec<Run>> {
        collect(
            self.conn,
            "SELECT data FROM runs WHERE parent_id = ? ORDER BY created_at, id",
            &[text(parent.as_str())],
        )
    }

    fn escalation_due_ids(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<GateId>> {
        self.due_gate_ids(
            "SELECT id FROM gates WHERE status = 'pending' AND escalate_at IS NOT NULL AND escalate_at <= ?
             ORDER BY escalate_at LIMIT ?",
            now,
            limit,
        )
    }

    fn turns(&self, run: &RunId) -> Result<Vec<Turn>> {
        collect(self.conn, "SELECT data FROM turns WHERE run_id = ? ORDER BY idx", &[text(run.as_str())])
    }

    fn turns_after(&self, run: &RunId, after: u32) -> Result<Vec<Turn>> {
        collect(
            self.conn,
            "SELECT data FROM turns WHERE run_id = ? AND idx > ? ORDER BY idx",
            &[text(run.as_str()), SqlValue::Integer(i64::from(after))],
        )
    }

    fn context(&self, run: &RunId) -> Result<BTreeMap<String, serde_json::Value>> {
        let mut stmt = self.conn.prepare_cached("SELECT key, value FROM context WHERE run_id = ? ORDER BY key")?;
        let rows = stmt.query_map([run.as_str()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, v) = row?;
            out.insert(k, parse(&v)?);
        }
        Ok(out)
    }

    fn context_value(&self, run: &RunId, key: &str) -> Result<Option<serde_json::Value>> {
        let mut stmt = self.conn.prepare_cached("SELECT value FROM context WHERE run_id = ? AND key = ?")?;
        let value: Option<String> = stmt.query_row([run.as_str(), key], |r| r.get(0)).optional()?;
        value.map(|v| parse(&v)).transpose()
    }

    fn context_prefixed(&self, run: &RunId, prefix: &str) -> Result<BTreeMap<String, serde_json::Value>> {
        let end = crate::store::prefix_end(prefix);
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, value FROM context WHERE run_id = ?1 AND key >= ?2 AND (?3 IS NULL OR key < ?3) ORDER BY key",
        )?;
        let rows = stmt
            .query_map(params![run.as_str(), prefix, end], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, v) = row?;
            out.insert(k, parse(&v)?);
        }
        Ok(out)
    }

    fn global_memory(&self) -> Result<BTreeMap<String, serde_json::Value>> {
        let mut stmt = self.conn.prepare_cached("SELECT key, value FROM global_memory ORDER BY key")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (k, v) = row?;
            out.insert(k, parse(&v)?);
        }
        Ok(out)
    }

    fn plan_revisions(&self, run: &RunId) -> Result<Vec<PlanRevision>> {
        collect(self.conn, "SELECT data FROM plan_revisions WHERE run_id = ? ORDER BY revision", &[text(run.as_str())])
    }

    fn latest_plan(&self, run: &RunId) -> Result<Option<PlanRevision>> {
        one(
            self.conn,
            "SELECT data FROM plan_revisions WHERE run_id = ? ORDER BY revision DESC LIMIT 1",
            &[text(run.as_str())],
        )
    }

    fn rating(&self, agent: &str) -> Result<Option<CapabilityRating>> {
        one(self.conn, "SELECT data FROM agent_ratings WHERE agent = ?", &[text(agent)])
    }

    fn ratings(&self) -> Result<Vec<CapabilityRating>> {
        collect(self.conn, "SELECT data FROM agent_ratings ORDER BY agent", &[])
    }

    fn events_after(&self, seq: u64, filter: &EventFilter, limit: u32) -> Result<Vec<Event>> {
        let mut sql = "SELECT seq, hash, body FROM events WHERE seq > ? AND body IS NOT NULL".to_owned();
        let mut params = vec![SqlValue::Integer(seq as i64)];
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
        params.push(SqlValue::Integer(i64::from(limit)));
        read_events(self.conn, &sql, &params)
    }

    fn events_of_runs(&self, runs: &[RunId]) -> Result<Vec<Event>> {
        let mut out = Vec::new();
        for run in runs {
            out.extend(read_events(
                self.conn,
                "SELECT seq, hash, body FROM events WHERE run_id = ? AND body IS NOT NULL ORDER BY seq",
                &[text(run.as_str())],
            )?);
        }
        out.sort_by_key(|e| e.seq);
        Ok(out)
    }

    fn event_rows(&self, after: u64, limit: u32) -> Result<Vec<EventRow>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, run_id, body, body_hash, hash FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
        )?;
        let rows = stmt.query_map(params![after as i64, limit], |r| {
            Ok(EventRow {
                seq: r.get::<_, i64>(0)? as u64,
                run_id: r.get(1)?,
                body: r.get(2)?,
                body_hash: r.get(3)?,
                hash: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn head_seq(&self) -> Result<u64> {
        let n: i64 = self.conn.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    fn schema_probe(&self) -> Result<SchemaProbe> {
        let sql = "SELECT user_version, (SELECT count(*) FROM (SELECT 1 FROM events LIMIT 1)) FROM pragma_user_version";
        let found: i64 = self.conn.prepare_cached(sql)?.query_row([], |r| r.get(0))?;
        Ok(SchemaProbe { found, current: super::schema::CURRENT_VERSION })
    }

    fn stored_rows(&self, table: AuditTable) -> Result<Vec<StoredRow>> {
        let mut stmt = self.conn.prepare(table.select())?;
        let names: Vec<String> = stmt.column_names().into_iter().map(str::to_owned).collect();
        let data_at = names.len() - 1;
        let rows = stmt.query_map([], |r| {
            let mut columns = serde_json::Map::new();
            for (i, name) in names[..data_at].iter().enumerate() {
                let value = match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Integer(n) => n.into(),
                    rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                    rusqlite::types::ValueRef::Real(x) => x.into(),
                    rusqlite::types::ValueRef::Blob(b) => hex::encode(b).into(),
                    rusqlite::types::ValueRef::Null => serde_json::Value::Null,
                };
                columns.insert(name.clone(), value);
            }
            Ok(StoredRow { columns, data: r.get(data_at)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn tokens(&self) -> Result<Vec<Token>> {
        collect(self.conn, "SELECT data FROM tokens ORDER BY created_at, id", &[])
    }

    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<Token>> {
        let mut stmt =
            self.conn.prepare_cached("SELECT data FROM tokens WHERE secret_hash = ? AND revoked_at IS NULL")?;
        let data: Option<String> = stmt.query_row([&hash[..]], |r| r.get(0)).optional()?;
        data.map(|d| parse(&d)).transpose()
    }

    fn runs_of_agent(&self, filter: &RunFilter, agent: &str) -> Result<Vec<Run>> {
        self.runs(&RunFilter { agent: Some(agent.to_owned()), ..filter.clone() })
    }

    fn gate_tallies(&self) -> Result<Vec<GateTally>> {
        // One pass over gates, probing each one's decision through the
        // unique gate_id index; only the grouped rows reach memory.
        let mut stmt = self.conn.prepare_cached(
            "SELECT g.agent, g.kind, g.status,
                    CASE WHEN json_extract(d.data, '$.self_decided') THEN 'self' ELSE json_extract(d.data, '$.origin.by') END,
                    count(*),
                    coalesce(sum(d.latency_ms), 0),
                    coalesce(CASE json_type(r.data, '$.input.tool') WHEN 'text' THEN json_extract(r.data, '$.input.tool') END,
                             CASE json_type(r.data, '$.input.model') WHEN 'text' THEN json_extract(r.data, '$.input.model') END),
                    d.decided_by,
                    d.action
             FROM gates g JOIN runs r ON r.id = g.run_id LEFT JOIN decisions d ON d.gate_id = g.id
             GROUP BY 1, 2, 3, 4, 7, 8, 9",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(GateTally {
                agent: r.get(0)?,
                kind: r.get(1)?,
                status: r.get(2)?,
                origin: r.get(3)?,
                count: r.get::<_, i64>(4)? as u64,
                latency_ms_sum: r.get(5)?,
                model: r.get(6)?,
                decided_by: r.get(7)?,
                action: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn alert_figures(&self, since: DateTime<Utc>) -> Result<crate::alert::AlertFigures> {
        super::alerts::alert_figures(self.conn, since)
    }

    fn latest_alert_events(&self, limit: u32) -> Result<Vec<EventBody>> {
        super::alerts::latest_alert_events(self.conn, limit)
    }

    fn sla_tallies(&self, targets_ms: [i64; 4], now: DateTime<Utc>) -> Result<Vec<crate::alert::SlaTally>> {
        super::alerts::sla_tallies(self.conn, targets_ms, now)
    }

    fn top_corrections(&self, limit: u32) -> Result<Vec<Correction>> {
        let mut stmt = self.conn.prepare_cached(
            // `field`, not `path`: json_each has a `path` column of its own.
            "SELECT json_extract(c.value, '$.path') AS field, count(*) AS n
             FROM decisions d, json_each(d.data, '$.diff.changes') c
             WHERE d.action = 'edit' AND json_extract(d.data, '$.origin.by') = 'human'
             GROUP BY field ORDER BY n DESC, field LIMIT ?",
        )?;
        let rows = stmt.query_map([limit], |r| {
            Ok(Correction {
                path: r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                count: r.get::<_, i64>(1)? as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn allow_rule(&self, id: &AllowRuleId, now: DateTime<Utc>) -> Result<Option<AllowRule>> {
        super::rules::rule(self.conn, id, now)
    }

    fn allow_rules(&self, filter: &AllowRuleFilter, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
        super::rules::rules(self.conn, filter, now)
    }

    fn live_allow_rules(&self, agent: &str, action: &str, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
        super::rules::live_rules(self.conn, agent, action, now)
    }
}

fn read_events(conn: &Connection, sql: &str, params: &[SqlValue]) -> Result<Vec<Event>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?, r.get::<_, String>(2)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, hash, body) = row?;
        out.push(Event { seq: seq as u64, hash: hex::encode(hash), body: parse(&body)? });
    }
    Ok(out)
}

impl WriteTx for Db<'_, &mut WriteState> {
    fn insert_run(&mut self, run: &Run) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO runs (id, session_id, user_id, status, created_at, updated_at, data, parent_id)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                run.id.as_str(),
                run.session_id,
                run.user_id,
                run.status.as_str(),
                micros(run.created_at),
                micros(run.updated_at),
                to_json(run)?,
                run.parent_run_id.as_ref().map(|p| p.as_str().to_owned())
            ])
            .map_err(|e| match e {
                rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation => {
                    EngineError::invalid("run_id", format!("a run with id `{}` already exists", run.id))
                }
                e => e.into(),
            })?;
        Ok(())
    }

    fn update_run(&mut self, run: &Run) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE runs SET status = ?, updated_at = ?, data = ? WHERE id = ?")?
            .execute(params![run.status.as_str(), micros(run.updated_at), to_json(run)?, run.id.as_str()])?;
        Ok(())
    }

    fn insert_gate(&mut self, gate: &Gate) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at,
                                    expires_at, idempotency_key, data, escalate_at)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                 ON CONFLICT (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING",
            )?
            .execute(params![
                gate.id.as_str(),
                gate.run_id.as_str(),
                gate.kind().as_str(),
                gate.mode.rank(),
                gate.priority.rank(),
                gate.status.as_str(),
                gate.agent,
                micros(gate.created_at),
                gate.expires_at.map(micros),
                gate.idempotency_key,
                to_json(gate)?,
                gate.escalate_at().map(micros)
            ])?;
        Ok(n == 1)
    }

    fn update_gate_if(&mut self, gate: &Gate, expected: GateStatus) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE gates SET status = ?, priority = ?, expires_at = ?, data = ?, escalate_at = ?, mode_rank = ?
                 WHERE id = ? AND status = ?",
            )?
            .execute(params![
                gate.status.as_str(),
                gate.priority.rank(),
                gate.expires_at.map(micros),
                to_json(gate)?,
                gate.escalate_at().map(micros),
                gate.mode.rank(),
                gate.id.as_str(),
                expected.as_str()
            ])?;
        Ok(n == 1)
    }

    fn insert_decision(&mut self, d: &Decision) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO decisions (id, gate_id, run_id, action, decided_by, decided_at, latency_ms, data)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                d.id.as_str(),
                d.gate_id.as_str(),
                d.run_id.as_str(),
                d.action.as_str(),
                d.decided_by,
                micros(d.decided_at),
                d.latency_ms,
                to_json(d)?
            ])?;
        Ok(())
    }

    fn insert_turn(&mut self, turn: &Turn) -> Result<()> {
        self.conn.prepare_cached("INSERT INTO turns (id, run_id, idx, data) VALUES (?, ?, ?, ?)")?.execute(params![
            turn.id.as_str(),
            turn.run_id.as_str(),
            turn.index,
            to_json(turn)?
        ])?;
        Ok(())
    }

    fn put_context(&mut self, run: &RunId, key: &str, value: Option<&serde_json::Value>) -> Result<()> {
        match value {
            Some(v) => self
                .conn
                .prepare_cached("INSERT OR REPLACE INTO context (run_id, key, value) VALUES (?, ?, ?)")?
                .execute(params![run.as_str(), key, to_json(v)?])?,
            None => self
                .conn
                .prepare_cached("DELETE FROM context WHERE run_id = ? AND key = ?")?
                .execute(params![run.as_str(), key])?,
        };
        Ok(())
    }

    fn put_global_memory(&mut self, key: &str, value: Option<&serde_json::Value>) -> Result<()> {
        match value {
            Some(v) => self
                .conn
                .prepare_cached("INSERT OR REPLACE INTO global_memory (key, value) VALUES (?, ?)")?
                .execute(params![key, to_json(v)?])?,
            None => self.conn.prepare_cached("DELETE FROM global_memory WHERE key = ?")?.execute(params![key])?,
        };
        Ok(())
    }

    fn insert_plan_revision(&mut self, run: &RunId, revision: &PlanRevision) -> Result<()> {
        self.conn
            .prepare_cached("INSERT INTO plan_revisions (run_id, revision, data) VALUES (?, ?, ?)")?
            .execute(params![run.as_str(), revision.revision, to_json(revision)?])?;
        Ok(())
    }

    fn rate_agent(&mut self, agent: &str, change: RatingChange) -> Result<()> {
        let mut rating = self.rating(agent)?.unwrap_or_else(|| CapabilityRating::new(agent));
        rating.apply(change);
        self.conn
            .prepare_cached("INSERT OR REPLACE INTO agent_ratings (agent, data) VALUES (?, ?)")?
            .execute(params![rating.agent, to_json(&rating)?])?;
        Ok(())
    }

    fn append_event(&mut self, body: EventBody) -> Result<()> {
        let json = to_json(&body)?;
        let body_hash = event::body_hash(&json);
        let seq = self.state.head.seq + 1;
        let hash = event::link(self.state.key.as_ref(), &self.state.head.hash, seq, &body_hash);
        self.conn
            .prepare_cached(
                "INSERT INTO events (seq, at, run_id, session_id, user_id, kind, body, body_hash, hash)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                seq as i64,
                micros(body.at),
                body.run_id.as_ref().map(|r| r.as_str()),
                body.session_id,
                body.user_id,
                body.kind.name(),
                json,
                &body_hash[..],
                &hash[..]
            ])?;
        self.state.head = ChainHead { seq, hash };
        self.state.events.push(Arc::new(Event { seq, hash: hex::encode(hash), body }));
        Ok(())
    }

    fn insert_token(&mut self, token: &Token, secret_hash: &[u8; 32]) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO tokens (id, name, role, secret_hash, created_at, revoked_at, data) VALUES (?, ?, ?, ?, ?, ?, ?)",
            )?
            .execute(params![
                token.id,
                token.name,
                token.role.as_str(),
                &secret_hash[..],
                micros(token.created_at),
                token.revoked_at.map(micros),
                to_json(token)?
            ])?;
        Ok(())
    }

    fn update_token(&mut self, token: &Token) -> Result<()> {
        self.conn.prepare_cached("UPDATE tokens SET revoked_at = ?, data = ? WHERE id = ?")?.execute(params![
            token.revoked_at.map(micros),
            to_json(token)?,
            token.id
        ])?;
        Ok(())
    }

    fn insert_allow_rule(&mut self, rule: &AllowRule) -> Result<()> {
        super::rules::insert(self.conn, rule)
    }

    fn update_allow_rule(&mut self, rule: &AllowRule) -> Result<()> {
        super::rules::update(self.conn, rule)
    }

    fn purge_run(&mut self, run: &RunId) -> Result<()> {
        for sql in [
            "DELETE FROM decisions WHERE run_id = ?",
            "DELETE FROM gates WHERE run_id = ?",
            "DELETE FROM turns WHERE run_id = ?",
            "DELETE FROM context WHERE run_id = ?",
            "DELETE FROM plan_revisions WHERE run_id = ?",
            "UPDATE events SET body = NULL WHERE run_id = ?",
            "DELETE FROM runs WHERE id = ?",
        ] {
            self.conn.prepare_cached(sql)?.execute([run.as_str()])?;
        }
        Ok(())
    }
}

/// The `LIMIT`/`OFFSET` of a run listing (SQLite needs a limit before an
/// offset; -1 is none).
fn run_page(filter: &RunFilter) -> String {
    match (filter.limit, filter.offset.filter(|o| *o > 0)) {
        (Some(limit), Some(offset)) => format!(" LIMIT {limit} OFFSET {offset}"),
        (Some(limit), None) => format!(" LIMIT {limit}"),
        (None, Some(offset)) => format!(" LIMIT -1 OFFSET {offset}"),
        (None, None) => String::new(),
    }
}
