//! Scheduled retention (`serve --retention-days N`, the desktop app's
//! `retention_days` setting): ended runs older than N days are purged when
//! the server starts and once a day after, through the same engine call as
//! `POST /retention/purge`, so pending work is never touched and every
//! purge is an audit event (`retention_purged`, by `retention`).

use std::time::Duration;

use gatehouse_engine::Engine;

/// How often retention runs after the first purge at start.
pub const EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// Purges ended runs older than `days` now and every [`EVERY`] after, for
/// as long as the server runs. A failed purge is logged and tried again at
/// the next turn; nothing is lost by waiting.
pub async fn purge_daily(engine: Engine, days: u32) {
    let mut turn = tokio::time::interval(EVERY);
    loop {
        turn.tick().await;
        let e = engine.clone();
        match tokio::task::spawn_blocking(move || e.purge_terminal_runs(days)).await {
            Ok(Ok(report)) if !report.runs.is_empty() => {
                tracing::info!(runs = report.runs.len(), older_than_days = days, "retention purged ended runs")
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "scheduled retention failed; it runs again tomorrow"),
            Err(e) => tracing::error!(error = %e, "scheduled retention's task failed"),
        }
    }
}
