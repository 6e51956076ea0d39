//! Closing runs whose agent is gone (`serve --abandoned-run-after`): beside
//! the server, the engine's sweep of abandoned runs runs every so often,
//! told which gates agents are waiting on, or left off waiting on within the
//! time, so an agent long-polling a gate keeps its run.

use std::time::Duration;

use gatehouse_engine::RunId;

use crate::state::AppState;

/// Sweeps for abandoned runs forever: every tenth of `gone_after` (at least
/// a second, at most a minute), each run not heard from for `gone_after` is
/// cancelled once ([`gatehouse_engine::Engine::sweep_abandoned_runs`]).
pub async fn close_abandoned_runs(state: AppState, gone_after: Duration) {
    state.waiters.remember_gate_waits(state.engine_handle().clone());
    let every = (gone_after / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        match sweep_once(&state, gone_after).await {
            Ok(ended) if !ended.is_empty() => tracing::info!(count = ended.len(), "closed runs whose agent is gone"),
            Ok(_) => {}
            Err(err) => tracing::error!(error = %err, "the sweep of abandoned runs failed"),
        }
    }
}

/// One sweep: cancels the runs not heard from for `gone_after`, keeping
/// those whose gates an agent waits on (or left off waiting on within it).
/// Only runs whose waits were remembered ([`crate::waiters::Waiters::remember_gate_waits`])
/// count a finished long poll as heard from.
pub async fn sweep_once(state: &AppState, gone_after: Duration) -> gatehouse_engine::Result<Vec<RunId>> {
    let engine = state.engine_handle().clone();
    let gone_after = chrono::Duration::from_std(gone_after)
        .map_err(|_| gatehouse_engine::EngineError::invalid("gone_after", "is too long"))?;
    let waited = state.waiters.gates_waited_since(engine.now() - gone_after);
    tokio::task::spawn_blocking(move || engine.sweep_abandoned_runs(gone_after, &waited))
        .await
        .map_err(|e| gatehouse_engine::EngineError::Storage(format!("the sweep task failed: {e}")))?
}

/// How long an agent may go unheard before its run is closed: `None` is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoneAfter(pub Option<Duration>);

/// Reads `off`, or a whole number followed by `s`, `m`, `h` or `d` (`90m`,
/// `24h`, `7d`), at least a minute and at most a year; the error says what
/// is accepted.
pub fn parse_gone_after(text: &str) -> Result<GoneAfter, String> {
    let hint = "use a time such as 30m, 24h or 7d (at least a minute), or `off`";
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") {
        return Ok(GoneAfter(None));
    }
    let unit_at = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_at);
    let seconds_per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        _ => return Err(format!("`{text}` is not a time; {hint}")),
    };
    let secs = number.parse::<u64>().ok().and_then(|n| n.checked_mul(seconds_per));
    match secs {
        Some(secs) if (60..=366 * 86_400).contains(&secs) => Ok(GoneAfter(Some(Duration::from_secs(secs)))),
        _ => Err(format!("`{text}` is out of range; {hint}, at most 366d")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_in_their_units_and_off_turns_the_sweep_off() {
        assert_eq!(parse_gone_after("30m"), Ok(GoneAfter(Some(Duration::from_secs(1_800)))));
        assert_eq!(parse_gone_after("24h"), Ok(GoneAfter(Some(Duration::from_secs(86_400)))));
        assert_eq!(parse_gone_after("7d"), Ok(GoneAfter(Some(Duration::from_secs(604_800)))));
        assert_eq!(parse_gone_after("90s"), Ok(GoneAfter(Some(Duration::from_secs(90)))));
        assert_eq!(parse_gone_after("OFF"), Ok(GoneAfter(None)));
    }

    #[test]
    fn a_bad_time_is_refused_saying_what_is_accepted() {
        for bad in ["", "30", "m", "30 minutes", "-5m", "1.5h", "59s", "400d", "99999999999999999999d"] {
            let err = parse_gone_after(bad).unwrap_err();
            assert!(err.contains("30m, 24h or 7d"), "{bad}: {err}");
        }
    }
}
