//! The alert sweep's and the SLA's reads on SQLite: four counts in one
//! statement (the oldest pending sync gate from the pending-queue index,
//! the window from `gates_by_created`), and one grouped scan of gates
//! against their decisions for compliance per priority.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection};

use crate::alert::{AlertFigures, SlaTally};
use crate::error::{EngineError, Result};
use crate::event::EventBody;

/// What the alert sweep compares with its thresholds; the window starts at `since`.
pub(super) fn alert_figures(conn: &Connection, since: DateTime<Utc>) -> Result<AlertFigures> {
    let mut stmt = conn.prepare_cached(
        "SELECT (SELECT min(created_at) FROM gates WHERE status = 'pending' AND mode_rank = 0),
                (SELECT count(*) FROM gates WHERE status = 'pending'),
                (SELECT count(*) FROM gates WHERE created_at >= ?1),
                (SELECT count(*) FROM gates g JOIN decisions d ON d.gate_id = g.id
                  WHERE g.created_at >= ?1 AND json_extract(d.data, '$.origin.by') = 'auto')",
    )?;
    let figures = stmt.query_row(params![since.timestamp_micros()], |r| {
        Ok(AlertFigures {
            oldest_pending_sync: r.get::<_, Option<i64>>(0)?.and_then(DateTime::from_timestamp_micros),
            pending: r.get::<_, i64>(1)? as u64,
            opened_in_window: r.get::<_, i64>(2)? as u64,
            auto_passed_in_window: r.get::<_, i64>(3)? as u64,
        })
    })?;
    Ok(figures)
}

/// The newest `limit` alert events (raised or cleared), newest first: read
/// backwards along the log from its head, once when a server starts.
pub(super) fn latest_alert_events(conn: &Connection, limit: u32) -> Result<Vec<EventBody>> {
    let mut stmt = conn.prepare_cached(
        "SELECT body FROM events WHERE run_id IS NULL AND kind IN ('alert_raised', 'alert_cleared')
           AND body IS NOT NULL ORDER BY seq DESC LIMIT ?",
    )?;
    let bodies = stmt.query_map([limit], |r| r.get::<_, String>(0))?;
    bodies
        .map(|body| serde_json::from_str(&body?).map_err(|e| EngineError::Storage(format!("an alert event: {e}"))))
        .collect()
}

/// Gates that waited for a person, per priority rank: decided by a person
/// (and within `targets_ms`, indexed by rank), or missed undecided (expired,
/// closed by a timeout fallback, or still pending past the target at `now`).
pub(super) fn sla_tallies(conn: &Connection, targets_ms: [i64; 4], now: DateTime<Utc>) -> Result<Vec<SlaTally>> {
    let mut stmt = conn.prepare_cached(
        "SELECT priority, sum(human), sum(human AND latency_ms <= target), sum(missed)
         FROM (SELECT g.priority,
                      CASE g.priority WHEN 0 THEN ?1 WHEN 1 THEN ?2 WHEN 2 THEN ?3 ELSE ?4 END AS target,
                      coalesce(json_extract(d.data, '$.origin.by') = 'human', 0) AS human,
                      d.latency_ms,
                      (d.id IS NULL AND g.status = 'expired')
                        OR coalesce(json_extract(d.data, '$.origin.by') = 'system', 0)
                        OR (g.status = 'pending'
                            AND ?5 - g.created_at > 1000 * CASE g.priority WHEN 0 THEN ?1 WHEN 1 THEN ?2
                                                                          WHEN 2 THEN ?3 ELSE ?4 END) AS missed
               FROM gates g LEFT JOIN decisions d ON d.gate_id = g.id
               WHERE g.status <> 'cancelled')
         GROUP BY priority ORDER BY priority",
    )?;
    let [low, normal, high, urgent] = targets_ms;
    let rows = stmt.query_map(params![low, normal, high, urgent, now.timestamp_micros()], |r| {
        Ok(SlaTally {
            rank: r.get(0)?,
            decided: r.get::<_, i64>(1)? as u64,
            within_target: r.get::<_, i64>(2)? as u64,
            missed_undecided: r.get::<_, i64>(3)? as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
