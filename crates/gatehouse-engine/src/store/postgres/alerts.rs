//! The alert sweep's and the SLA's reads on PostgreSQL, the same figures
//! as SQLite's (`store/sqlite/alerts.rs`): four counts in one statement and
//! one grouped scan of gates against their decisions per priority.

use chrono::{DateTime, Utc};

use super::Conn;
use crate::alert::{AlertFigures, SlaTally};
use crate::error::{EngineError, Result};
use crate::event::EventBody;

fn column<'a, T: tokio_postgres::types::FromSql<'a>>(row: &'a tokio_postgres::Row, i: usize) -> Result<T> {
    row.try_get(i).map_err(|e| EngineError::Storage(format!("unexpected column {i}: {e}")))
}

/// What the alert sweep compares with its thresholds; the window starts at `since`.
pub(super) fn alert_figures(conn: &Conn, since: DateTime<Utc>) -> Result<AlertFigures> {
    let since = since.timestamp_micros();
    let rows = conn.query(
        "SELECT (SELECT min(created_at) FROM gates WHERE status = 'pending' AND mode_rank = 0),
                (SELECT count(*) FROM gates WHERE status = 'pending'),
                (SELECT count(*) FROM gates WHERE created_at >= $1),
                (SELECT count(*) FROM gates g JOIN decisions d ON d.gate_id = g.id
                  WHERE g.created_at >= $1 AND d.data::jsonb -> 'origin' ->> 'by' = 'auto')",
        &[&since],
    )?;
    let row = rows.first().ok_or_else(|| EngineError::Storage("the alert figures returned no row".into()))?;
    Ok(AlertFigures {
        oldest_pending_sync: column::<Option<i64>>(row, 0)?.and_then(DateTime::from_timestamp_micros),
        pending: column::<i64>(row, 1)? as u64,
        opened_in_window: column::<i64>(row, 2)? as u64,
        auto_passed_in_window: column::<i64>(row, 3)? as u64,
    })
}

/// The newest `limit` alert events (raised or cleared), newest first.
pub(super) fn latest_alert_events(conn: &Conn, limit: u32) -> Result<Vec<EventBody>> {
    let rows = conn.query(
        "SELECT body FROM events WHERE run_id IS NULL AND kind IN ('alert_raised', 'alert_cleared')
           AND body IS NOT NULL ORDER BY seq DESC LIMIT $1",
        &[&i64::from(limit)],
    )?;
    rows.iter()
        .map(|r| {
            let body: String = column(r, 0)?;
            serde_json::from_str(&body).map_err(|e| EngineError::Storage(format!("an alert event: {e}")))
        })
        .collect()
}

/// Gates that waited for a person, per priority rank (see the SQLite twin).
pub(super) fn sla_tallies(conn: &Conn, targets_ms: [i64; 4], now: DateTime<Utc>) -> Result<Vec<SlaTally>> {
    let [low, normal, high, urgent] = targets_ms;
    let now = now.timestamp_micros();
    let rows = conn.query(
        "SELECT priority, count(*) FILTER (WHERE human), count(*) FILTER (WHERE human AND latency_ms <= target),
                count(*) FILTER (WHERE missed)
         FROM (SELECT g.priority, t.target,
                      coalesce(d.data::jsonb -> 'origin' ->> 'by' = 'human', false) AS human,
                      d.latency_ms,
                      (d.id IS NULL AND g.status = 'expired')
                        OR coalesce(d.data::jsonb -> 'origin' ->> 'by' = 'system', false)
                        OR (g.status = 'pending' AND $5::bigint - g.created_at > 1000 * t.target) AS missed
               FROM gates g
               CROSS JOIN LATERAL (SELECT CASE g.priority WHEN 0 THEN $1::bigint WHEN 1 THEN $2::bigint
                                                          WHEN 2 THEN $3::bigint ELSE $4::bigint END AS target) t
               LEFT JOIN decisions d ON d.gate_id = g.id
               WHERE g.status <> 'cancelled') s
         GROUP BY priority ORDER BY priority",
        &[&low, &normal, &high, &urgent, &now],
    )?;
    rows.iter()
        .map(|r| {
            Ok(SlaTally {
                rank: column(r, 0)?,
                decided: column::<i64>(r, 1)? as u64,
                within_target: column::<i64>(r, 2)? as u64,
                missed_undecided: column::<i64>(r, 3)? as u64,
            })
        })
        .collect()
}
