//! Alerts: configurable thresholds (`serve --alert-*`, the desktop's
//! `connection.json`) checked by the server's housekeeping sweep. A figure
//! that crosses its threshold raises an alert once: an `alert_raised` event
//! in the log (so event streams, the UI's and the desktop's notifications
//! and the audit see it) and a POST to the server's webhook; it is cleared
//! (`alert_cleared`) when the figure is back within, and not raised again
//! until it crosses again. Which alerts are up is kept in this process and
//! read back from the log when the server starts ([`take_up`]), so a restart
//! neither raises an alert still up again nor forgets to clear it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use gatehouse_engine::{Alert, AlertFigures, AlertKind, SlaTargets};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::state::AppState;

/// The thresholds and SLA targets; every alert is off unless given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AlertConfig {
    /// Raise when a sync gate (its agent blocked) has waited longer than this many minutes.
    #[serde(default)]
    pub sync_gate_waiting_minutes: Option<u32>,
    /// Raise when more gates than this are pending.
    #[serde(default)]
    pub pending_queue: Option<u64>,
    /// Raise when more than this percentage of the gates opened over the window passed without a person.
    #[serde(default)]
    pub auto_pass_rate_percent: Option<f64>,
    /// Raise when more webhook deliveries than this failed over the window.
    #[serde(default)]
    pub webhook_failures: Option<u64>,
    /// The window of the auto-pass rate and of webhook failures, minutes (default 60).
    #[serde(default = "default_window")]
    pub window_minutes: u32,
    /// Decision targets per priority, for SLA compliance.
    #[serde(default)]
    pub sla: SlaTargets,
}

fn default_window() -> u32 {
    60
}

impl Default for AlertConfig {
    fn default() -> Self {
        Self {
            sync_gate_waiting_minutes: None,
            pending_queue: None,
            auto_pass_rate_percent: None,
            webhook_failures: None,
            window_minutes: default_window(),
            sla: SlaTargets::default(),
        }
    }
}

impl AlertConfig {
    /// Checks the values; the error names the field and what it must be.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if let Some(p) = self.auto_pass_rate_percent {
            if !(0.0..=100.0).contains(&p) {
                return Err(("auto_pass_rate_percent", format!("must be from 0 to 100, got {p}")));
            }
        }
        if self.window_minutes == 0 {
            return Err(("window_minutes", "must be at least 1".into()));
        }
        let targets = [
            ("sla.low_ms", self.sla.low_ms),
            ("sla.normal_ms", self.sla.normal_ms),
            ("sla.high_ms", self.sla.high_ms),
            ("sla.urgent_ms", self.sla.urgent_ms),
        ];
        match targets.into_iter().find(|(_, ms)| *ms == 0) {
            Some((field, _)) => Err((field, "must be at least 1 ms".into())),
            None => Ok(()),
        }
    }

    /// Whether any threshold is set.
    pub fn any(&self) -> bool {
        self.sync_gate_waiting_minutes.is_some()
            || self.pending_queue.is_some()
            || self.auto_pass_rate_percent.is_some()
            || self.webhook_failures.is_some()
    }

    fn window(&self) -> Duration {
        Duration::minutes(i64::from(self.window_minutes))
    }
}

/// What the sweep measured: the store's figures and webhook failures over the window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    /// The store's figures.
    pub figures: AlertFigures,
    /// Gate webhook deliveries that failed over the window.
    pub webhook_failures: u64,
    /// When it was measured.
    pub at: DateTime<Utc>,
}

/// Each configured alert's state now: `Some` when its figure is over its threshold.
pub fn evaluate(config: &AlertConfig, m: &Measured) -> Vec<(AlertKind, Option<Alert>)> {
    let window = config.window_minutes;
    let mut out = Vec::new();
    if let Some(limit) = config.sync_gate_waiting_minutes {
        let waited = m.figures.oldest_pending_sync.map(|at| (m.at - at).num_seconds().max(0) as f64 / 60.0);
        let over = waited.filter(|w| *w > f64::from(limit));
        let alert = over.map(|w| Alert {
            kind: AlertKind::SyncGateWaiting,
            value: w.floor(),
            threshold: f64::from(limit),
            message: format!("a sync gate has waited {} (alert over {limit})", minutes(w.floor())),
        });
        out.push((AlertKind::SyncGateWaiting, alert));
    }
    if let Some(limit) = config.pending_queue {
        let alert = (m.figures.pending > limit).then(|| Alert {
            kind: AlertKind::PendingQueue,
            value: m.figures.pending as f64,
            threshold: limit as f64,
            message: format!("{} pending (alert over {limit})", gates(m.figures.pending)),
        });
        out.push((AlertKind::PendingQueue, alert));
    }
    if let Some(limit) = config.auto_pass_rate_percent {
        let (opened, passed) = (m.figures.opened_in_window, m.figures.auto_passed_in_window);
        let rate = (opened > 0).then(|| 100.0 * passed as f64 / opened as f64);
        let alert = rate.filter(|r| *r > limit).map(|r| Alert {
            kind: AlertKind::AutoPassRate,
            value: (r * 10.0).round() / 10.0,
            threshold: limit,
            message: format!(
                "{r:.0}% of the {} opened in the last {} passed without a person (alert over {limit}%)",
                gates(opened),
                minutes(f64::from(window))
            ),
        });
        out.push((AlertKind::AutoPassRate, alert));
    }
    if let Some(limit) = config.webhook_failures {
        let alert = (m.webhook_failures > limit).then(|| Alert {
            kind: AlertKind::WebhookFailures,
            value: m.webhook_failures as f64,
            threshold: limit as f64,
            message: format!(
                "{} failed in the last {} (alert over {limit})",
                plural(m.webhook_failures, "webhook delivery", "webhook deliveries"),
                minutes(f64::from(window))
            ),
        });
        out.push((AlertKind::WebhookFailures, alert));
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn gates(n: u64) -> String {
    plural(n, "gate", "gates")
}

fn minutes(m: f64) -> String {
    if m == 1.0 {
        "1 minute".to_owned()
    } else {
        format!("{m} minutes")
    }
}

/// A change to record: an alert raised, or one cleared.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The alert as raised, or as it stands when cleared.
    pub alert: Alert,
    /// Raised (`true`) or cleared.
    pub raised: bool,
}

/// Which alerts are up, and the webhook failure counts over the window.
#[derive(Debug, Default)]
pub struct AlertBook {
    up: BTreeMap<AlertKind, Alert>,
    failures: VecDeque<(DateTime<Utc>, u64)>,
}

impl AlertBook {
    /// The alerts up now.
    pub fn active(&self) -> Vec<Alert> {
        self.up.values().cloned().collect()
    }

    /// Takes `alerts` as up (read back from the log at start).
    pub fn seed(&mut self, alerts: Vec<Alert>) {
        for alert in alerts {
            self.up.insert(alert.kind, alert);
        }
    }

    /// Gate webhook failures over `window` ending `now`, given the running
    /// total `failed` (the first call counts every failure since the start).
    pub fn failures_over(&mut self, window: Duration, now: DateTime<Utc>, failed: u64) -> u64 {
        if self.failures.is_empty() {
            self.failures.push_back((now, 0));
        }
        self.failures.push_back((now, failed));
        while self.failures.len() > 1 && self.failures.get(1).is_some_and(|(at, _)| *at <= now - window) {
            self.failures.pop_front();
        }
        let oldest = self.failures.front().map(|(_, n)| *n).unwrap_or(failed);
        failed.saturating_sub(oldest)
    }

    /// The changes `states` make: an alert not up and now over is raised; one
    /// up and now within is cleared; one up and still over changes nothing.
    pub fn apply(&mut self, states: Vec<(AlertKind, Option<Alert>)>, config: &AlertConfig) -> Vec<Change> {
        let mut changes = Vec::new();
        for (kind, now) in states {
            match (self.up.contains_key(&kind), now) {
                (false, Some(alert)) => {
                    self.up.insert(kind, alert.clone());
                    changes.push(Change { alert, raised: true });
                }
                (true, None) => {
                    if let Some(was) = self.up.remove(&kind) {
                        changes.push(Change { alert: cleared(was, config), raised: false });
                    }
                }
                _ => {}
            }
        }
        changes
    }
}

fn cleared(was: Alert, config: &AlertConfig) -> Alert {
    let what = match was.kind {
        AlertKind::SyncGateWaiting => "no sync gate waits".to_owned(),
        AlertKind::PendingQueue => "the pending queue is".to_owned(),
        AlertKind::AutoPassRate => format!("the auto-pass rate over {} minutes is", config.window_minutes),
        AlertKind::WebhookFailures => format!("webhook failures over {} minutes are", config.window_minutes),
    };
    Alert { message: format!("cleared: {what} within the threshold ({})", was.threshold), ..was }
}

/// Takes up the alerts the log says are up, before the first sweep.
pub async fn take_up(state: &AppState) -> gatehouse_engine::Result<()> {
    if !state.config.alerts.any() {
        return Ok(());
    }
    let up = state.engine(|e| e.alerts_up()).await.map_err(api_to_engine)?;
    state.alerts.lock().await.seed(up);
    Ok(())
}

/// One evaluation: measures, raises and clears, records each change as an
/// event and posts it to the server's webhook. Returns the changes. Safe to
/// call from anywhere: evaluations take turns, so an alert is raised once.
pub async fn sweep_once(state: &AppState) -> gatehouse_engine::Result<Vec<Change>> {
    let config = state.config.alerts.clone();
    if !config.any() {
        return Ok(Vec::new());
    }
    let mut book = state.alerts.lock().await;
    let since = state.engine_handle().now() - config.window();
    let figures = state.engine(move |e| e.alert_figures(since)).await.map_err(api_to_engine)?;
    let at = state.engine_handle().now();
    let webhook_failures = book.failures_over(config.window(), at, state.webhooks.stats().failed);
    let changes = book.apply(evaluate(&config, &Measured { figures, webhook_failures, at }), &config);
    drop(book);
    for change in &changes {
        let (alert, raised) = (change.alert.clone(), change.raised);
        let recorded = state.engine(move |e| e.record_alert(alert, raised)).await.map_err(api_to_engine)?;
        if !recorded {
            // Another instance on the same database logged this crossing first, and posts it.
            continue;
        }
        // Posted beside the sweep: a slow receiver must not hold up expiry and escalation.
        let (webhooks, alert, public_url) = (Arc::clone(&state.webhooks), change.alert.clone(), state.public_url());
        tokio::spawn(async move { webhooks.deliver_alert(&alert, raised, &public_url).await });
    }
    Ok(changes)
}

fn api_to_engine(e: crate::error::ApiError) -> gatehouse_engine::EngineError {
    gatehouse_engine::EngineError::Storage(e.message().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000, 0).unwrap() + Duration::minutes(minutes)
    }

    #[test]
    fn webhook_failures_count_only_those_within_the_window() {
        let mut book = AlertBook::default();
        let window = Duration::minutes(60);
        assert_eq!(book.failures_over(window, at(0), 5), 5, "every failure since the start");
        assert_eq!(book.failures_over(window, at(30), 9), 9);
        assert_eq!(book.failures_over(window, at(61), 10), 5, "the five before minute 1 left the window");
        assert_eq!(book.failures_over(window, at(200), 10), 0);
    }

    #[test]
    fn an_alert_is_raised_once_and_cleared_once() {
        let config = AlertConfig { pending_queue: Some(2), ..AlertConfig::default() };
        let mut book = AlertBook::default();
        let measure = |pending| Measured {
            figures: AlertFigures { pending, ..AlertFigures::default() },
            webhook_failures: 0,
            at: at(0),
        };
        let zero = AlertConfig { pending_queue: Some(0), ..AlertConfig::default() };
        let one = AlertBook::default().apply(evaluate(&zero, &measure(1)), &zero);
        assert_eq!(one[0].alert.message, "1 gate pending (alert over 0)");
        let raised = book.apply(evaluate(&config, &measure(3)), &config);
        assert_eq!(raised.len(), 1);
        assert!(raised[0].raised);
        assert_eq!(raised[0].alert.message, "3 gates pending (alert over 2)");
        assert!(book.apply(evaluate(&config, &measure(5)), &config).is_empty(), "still over: nothing new");
        let cleared = book.apply(evaluate(&config, &measure(2)), &config);
        assert_eq!((cleared.len(), cleared[0].raised), (1, false));
        assert!(book.active().is_empty());
    }

    #[test]
    fn a_bad_percentage_or_window_is_named() {
        let bad = AlertConfig { auto_pass_rate_percent: Some(120.0), ..AlertConfig::default() };
        assert_eq!(bad.check().unwrap_err().0, "auto_pass_rate_percent");
        let bad = AlertConfig { window_minutes: 0, ..AlertConfig::default() };
        assert_eq!(bad.check().unwrap_err().0, "window_minutes");
    }
}
