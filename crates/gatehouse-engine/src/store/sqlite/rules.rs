//! Allow-rules on SQLite (table `allow_rules`, migration 5): the rule as
//! JSON in `data`, its agent, action and times beside it. The lookup as a
//! gate opens walks the partial index `allow_rules_live (agent, action)
//! WHERE revoked_at IS NULL`, so revoked rules cost nothing there.

use chrono::{DateTime, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use crate::allow_rule::{AllowRule, AllowRuleFilter, AllowRuleStatus};
use crate::error::{EngineError, Result};
use crate::ids::AllowRuleId;

fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

fn read(data: &str, now: DateTime<Utc>) -> Result<AllowRule> {
    Ok(serde_json::from_str::<AllowRule>(data)?.as_of(now))
}

fn collect(conn: &Connection, sql: &str, params: &[SqlValue], now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(params.iter()), |r| r.get::<_, String>(0))?;
    rows.map(|data| read(&data?, now)).collect()
}

/// One rule.
pub(crate) fn rule(conn: &Connection, id: &AllowRuleId, now: DateTime<Utc>) -> Result<Option<AllowRule>> {
    let data: Option<String> = conn
        .prepare_cached("SELECT data FROM allow_rules WHERE id = ?")?
        .query_row([id.as_str()], |r| r.get(0))
        .optional()?;
    data.map(|d| read(&d, now)).transpose()
}

/// Rules matching `filter`, newest first.
pub(crate) fn rules(conn: &Connection, filter: &AllowRuleFilter, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
    let mut clauses = Vec::new();
    let mut params = Vec::new();
    if let Some(agent) = &filter.agent {
        clauses.push("agent = ?");
        params.push(SqlValue::Text(agent.clone()));
    }
    match filter.status {
        None => {}
        Some(AllowRuleStatus::Live) => {
            clauses.push("revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)");
            params.push(SqlValue::Integer(micros(now)));
        }
        Some(AllowRuleStatus::Expired) => {
            clauses.push("revoked_at IS NULL AND expires_at <= ?");
            params.push(SqlValue::Integer(micros(now)));
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
    collect(conn, &sql, &params, now)
}

/// The live rules for `agent`'s `action` at `now`, oldest first.
pub(crate) fn live_rules(conn: &Connection, agent: &str, action: &str, now: DateTime<Utc>) -> Result<Vec<AllowRule>> {
    collect(
        conn,
        "SELECT data FROM allow_rules
         WHERE agent = ? AND action = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
         ORDER BY created_at, id",
        &[SqlValue::Text(agent.to_owned()), SqlValue::Text(action.to_owned()), SqlValue::Integer(micros(now))],
        now,
    )
}

fn to_json(rule: &AllowRule) -> Result<String> {
    serde_json::to_string(rule).map_err(|e| EngineError::Storage(format!("cannot encode: {e}")))
}

/// Stores a new rule.
pub(crate) fn insert(conn: &Connection, rule: &AllowRule) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO allow_rules (id, agent, action, created_at, expires_at, revoked_at, data)
         VALUES (?, ?, ?, ?, ?, ?, ?)",
    )?
    .execute(params![
        rule.id.as_str(),
        rule.agent,
        rule.action,
        micros(rule.created_at),
        rule.expires_at.map(micros),
        rule.revoked_at.map(micros),
        to_json(rule)?
    ])?;
    Ok(())
}

/// Replaces a rule's snapshot (a use counted, a revocation). A use of a
/// live rule sets only its snapshot: naming `revoked_at` in the `SET`
/// would make SQLite rewrite the live-rules index (whose `WHERE` reads it)
/// on every gate the rule passes, one page more in every such commit.
pub(crate) fn update(conn: &Connection, rule: &AllowRule) -> Result<()> {
    let data = to_json(rule)?;
    if rule.revoked_at.is_none() {
        let live = conn
            .prepare_cached("UPDATE allow_rules SET data = ? WHERE id = ? AND revoked_at IS NULL")?
            .execute(params![data, rule.id.as_str()])?;
        if live == 1 {
            return Ok(());
        }
    }
    conn.prepare_cached("UPDATE allow_rules SET revoked_at = ?, data = ? WHERE id = ?")?.execute(params![
        rule.revoked_at.map(micros),
        data,
        rule.id.as_str()
    ])?;
    Ok(())
}
