//! Webhooks for new sync gates: a POST with the blocker payload
//! and a link to open the gate, sent in the background with a 5 s timeout.
//! Failures are logged and counted and never delay or fail gate creation.
//! Alerts (`alerts.rs`) are posted to the server's webhook too, counted
//! apart, so a failing receiver's own alert cannot feed its failure count.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gatehouse_engine::{BlockingMode, Engine, EventKind, Gate, RunId};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use utoipa::ToSchema;

/// What a webhook receiver gets (the blocker webhook's fields plus Gatehouse's own).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct WebhookPayload {
    /// The gate's id (the blocker id).
    pub blocker_id: String,
    /// The question or action.
    pub question: String,
    /// The asking agent.
    pub agent_id: String,
    /// The plan task, or the run when there is none.
    pub task_id: String,
    /// `SYNC`, `ASYNC` or `ADVISORY`: new gates are announced when they
    /// block (sync), escalations whatever their mode.
    #[serde(rename = "type")]
    pub kind_of_block: String,
    /// When the gate opened (RFC 3339).
    pub created_at: String,
    /// Where a reviewer opens it.
    pub dashboard_url: String,
    /// The gate's kind.
    pub gate_kind: String,
    /// Its run.
    pub run_id: String,
    /// Its priority.
    pub priority: String,
    /// Set when the gate escalated (nobody answered in time): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<String>,
    /// On an escalation: the reviewers and roles it brings in, to notify.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<String>,
    /// Who may decide the gate (reviewers, `role:NAME`); anyone when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<String>,
}

/// What a webhook receiver gets when an alert is raised or cleared.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AlertWebhookPayload {
    /// What the alert watches.
    pub alert: gatehouse_engine::AlertKind,
    /// `raised` or `cleared`.
    pub state: String,
    /// The figure now.
    pub value: f64,
    /// Its threshold.
    pub threshold: f64,
    /// One line for a person.
    pub message: String,
    /// Where a reviewer sees the figures.
    pub dashboard_url: String,
}

/// Delivery counters, for metrics and tests.
#[derive(Debug, Default, Clone, Copy, Serialize, ToSchema)]
pub struct WebhookStats {
    /// Receivers that answered 2xx.
    pub delivered: u64,
    /// Timeouts, refused connections and non-2xx answers.
    pub failed: u64,
    /// Alert posts that failed (not counted in `failed`).
    #[serde(default)]
    pub alerts_failed: u64,
}

/// The webhook URL each recently announced run named when it started
/// (`None`: none, the server's applies), so announcing its next sync gate
/// reads nothing: a run's `hitl_config` never changes once it starts.
/// Forgotten all at once past [`RunUrls::MOST`] runs.
#[derive(Default)]
struct RunUrls(std::sync::Mutex<std::collections::HashMap<RunId, Option<String>>>);

impl RunUrls {
    /// Runs remembered at most.
    const MOST: usize = 4096;

    /// The run's own URL, if the run is remembered (`Some(None)`: it has none).
    fn get(&self, run: &RunId) -> Option<Option<String>> {
        self.0.lock().ok()?.get(run).cloned()
    }

    fn put(&self, run: &RunId, url: Option<String>) {
        let Ok(mut urls) = self.0.lock() else { return };
        if urls.len() >= Self::MOST {
            urls.clear();
        }
        urls.insert(run.clone(), url);
    }
}

/// The webhook sender.
pub struct Webhooks {
    default_url: Option<String>,
    /// Each recently announced run's own webhook URL.
    run_urls: RunUrls,
    client: reqwest::Client,
    delivered: AtomicU64,
    failed: AtomicU64,
    alerts_failed: AtomicU64,
}

impl Webhooks {
    /// A sender posting to `default_url` unless a run overrides it.
    pub fn new(default_url: Option<String>) -> Self {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .connect_timeout(Duration::from_secs(5))
            // A redirect would send the gate somewhere nobody configured.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            default_url,
            run_urls: RunUrls::default(),
            client,
            delivered: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            alerts_failed: AtomicU64::new(0),
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> WebhookStats {
        WebhookStats {
            delivered: self.delivered.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            alerts_failed: self.alerts_failed.load(Ordering::Relaxed),
        }
    }

    /// Follows the engine's events and announces every new sync gate.
    pub async fn dispatch(self: Arc<Self>, engine: Engine, public_url: String) {
        let mut events = engine.live_events();
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(missed = n, "webhook dispatcher fell behind; some gates were not announced");
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            // New sync gates, and every escalation (fetched: the event names only the gate).
            let (opened, escalation) = match &event.body.kind {
                EventKind::GateOpened { gate } if gate.mode == BlockingMode::Sync => (Some(gate.clone()), None),
                EventKind::GateEscalated { gate_id, reason, notify, .. } => {
                    (None, Some((gate_id.clone(), reason.clone(), notify.clone())))
                }
                _ => continue,
            };
            let (engine, me, public_url) = (engine.clone(), Arc::clone(&self), public_url.clone());
            tokio::spawn(async move {
                // A run announced before: its URL is known, nothing to read.
                let known = opened.as_ref().and_then(|gate| me.run_urls.get(&gate.run_id));
                let found = match (opened, known) {
                    (Some(gate), Some(run_url)) => Some((*gate, run_url, None)),
                    (opened, _) => {
                        let me = Arc::clone(&me);
                        tokio::task::spawn_blocking(move || {
                            let gate = match (opened, &escalation) {
                                (Some(gate), _) => *gate,
                                (None, Some((id, _, _))) => engine.gate(id).ok()?,
                                (None, None) => return None,
                            };
                            let run_url = match me.run_urls.get(&gate.run_id) {
                                Some(url) => url,
                                None => engine.run(&gate.run_id).ok().and_then(|run| {
                                    me.run_urls.put(&gate.run_id, run.hitl_config.webhook_url.clone());
                                    run.hitl_config.webhook_url
                                }),
                            };
                            Some((gate, run_url, escalation.map(|(_, reason, notify)| (reason, notify))))
                        })
                        .await
                        .ok()
                        .flatten()
                    }
                };
                let Some((gate, run_url, escalation)) = found else { return };
                if let Some(url) = run_url.or_else(|| me.default_url.clone()) {
                    let mut body = payload(&gate, &public_url);
                    if let Some((reason, notify)) = escalation {
                        body.escalation = Some(reason);
                        body.notify = notify;
                    }
                    me.deliver(&url, &body).await;
                }
            });
        }
    }

    /// Posts an alert raised or cleared to the server's webhook, if it has one.
    pub async fn deliver_alert(&self, alert: &gatehouse_engine::Alert, raised: bool, public_url: &str) {
        let Some(url) = &self.default_url else { return };
        let body = AlertWebhookPayload {
            alert: alert.kind,
            state: if raised { "raised" } else { "cleared" }.into(),
            value: alert.value,
            threshold: alert.threshold,
            message: alert.message.clone(),
            dashboard_url: format!("{public_url}/#metrics"),
        };
        let refused = match self.client.post(url).json(&body).send().await {
            Ok(resp) if resp.status().is_success() => None,
            Ok(resp) => Some(resp.status().to_string()),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = refused {
            self.alerts_failed.fetch_add(1, Ordering::Relaxed);
            tracing::error!(%url, error = %why, alert = alert.kind.as_str(), "alert webhook delivery failed");
        }
    }

    async fn deliver(&self, url: &str, payload: &WebhookPayload) {
        match self.client.post(url).json(payload).send().await {
            Ok(resp) if resp.status().is_success() => {
                self.delivered.fetch_add(1, Ordering::Relaxed);
            }
            Ok(resp) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                tracing::error!(%url, status = %resp.status(), gate = %payload.blocker_id, "webhook receiver refused the gate");
            }
            Err(e) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                tracing::error!(%url, error = %e, gate = %payload.blocker_id, "webhook delivery failed");
            }
        }
    }
}

fn payload(gate: &Gate, public_url: &str) -> WebhookPayload {
    WebhookPayload {
        blocker_id: gate.id.to_string(),
        question: gate.text.clone(),
        agent_id: gate.agent.clone(),
        task_id: gate.context.task_id.clone().unwrap_or_else(|| gate.run_id.to_string()),
        kind_of_block: gate.mode.as_str().to_uppercase(),
        created_at: gate.created_at.to_rfc3339(),
        dashboard_url: format!("{public_url}/#gate-{}", gate.id),
        gate_kind: gate.kind().as_str().into(),
        run_id: gate.run_id.to_string(),
        priority: gate.priority.as_str().to_owned(),
        escalation: None,
        notify: Vec::new(),
        deciders: gate.deciders.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_url_is_remembered_with_its_absence_and_all_are_forgotten_past_the_bound() {
        let urls = RunUrls::default();
        let (with, without) = (RunId::from_string("run_a"), RunId::from_string("run_b"));
        assert_eq!(urls.get(&with), None, "not read yet");
        urls.put(&with, Some("https://hooks.example/a".into()));
        urls.put(&without, None);
        assert_eq!(urls.get(&with), Some(Some("https://hooks.example/a".into())));
        assert_eq!(urls.get(&without), Some(None), "known to have none: the server's URL applies");
        for i in 0..RunUrls::MOST {
            urls.put(&RunId::from_string(format!("run_{i}")), None);
        }
        assert_eq!(urls.get(&with), None, "forgotten, read again when next needed");
        assert!(urls.0.lock().unwrap().len() <= RunUrls::MOST);
    }
}
