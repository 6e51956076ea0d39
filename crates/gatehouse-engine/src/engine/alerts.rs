//! Alerts and SLAs in the engine: the figures the server's alert sweep
//! compares with its thresholds (one snapshot), an alert raised or cleared
//! as a bookkeeping event in the log (so the event stream and the audit
//! see it), and SLA compliance per priority against the server's targets.

use chrono::{DateTime, Utc};

use crate::alert::{sla_compliance, Alert, AlertFigures, SlaCompliance, SlaTargets};
use crate::engine::Engine;
use crate::error::Result;
use crate::event::{EventBody, EventKind};
use crate::store::Store;

/// Who alert events are recorded as.
pub const ALERTS_ACTOR: &str = "alerts";

impl<S: Store> Engine<S> {
    /// What the alert sweep measures now; the auto-pass window starts at `since`.
    pub fn alert_figures(&self, since: DateTime<Utc>) -> Result<AlertFigures> {
        self.store().read(|r| r.alert_figures(since))
    }

    /// SLA compliance per priority (low to urgent) against `targets`, from one grouped scan.
    pub fn sla_compliance(&self, targets: &SlaTargets) -> Result<Vec<SlaCompliance>> {
        let (by_rank, now) = (targets.by_rank(), self.now());
        let tallies = self.store().read(|r| r.sla_tallies(by_rank, now))?;
        Ok(sla_compliance(&tallies, targets))
    }

    /// The alerts the log says are up: for each kind, its newest event, when
    /// that raised it (a server taking up where the last one left off).
    pub fn alerts_up(&self) -> Result<Vec<Alert>> {
        let events = self.store().read(|r| r.latest_alert_events(64))?;
        let mut seen = std::collections::HashSet::new();
        let mut up = Vec::new();
        for body in events {
            let (alert, raised) = match body.kind {
                EventKind::AlertRaised { alert } => (alert, true),
                EventKind::AlertCleared { alert } => (alert, false),
                _ => continue,
            };
            if seen.insert(alert.kind) && raised {
                up.push(alert);
            }
        }
        Ok(up)
    }

    /// Records that `alert` was raised (`raised`) or cleared, as an event of
    /// no run by `alerts`; `false` when the log already says so (another
    /// instance on the same database recorded the crossing first: a write
    /// that reads the log holds it until it commits, so each crossing is
    /// logged once).
    pub fn record_alert(&self, alert: Alert, raised: bool) -> Result<bool> {
        let at = self.now();
        self.store().write(move |tx| {
            let latest = tx.latest_alert_events(64)?;
            let up = latest
                .iter()
                .find_map(|body| match &body.kind {
                    EventKind::AlertRaised { alert: a } if a.kind == alert.kind => Some(true),
                    EventKind::AlertCleared { alert: a } if a.kind == alert.kind => Some(false),
                    _ => None,
                })
                .unwrap_or(false);
            if up == raised {
                return Ok(false);
            }
            let kind = if raised { EventKind::AlertRaised { alert } } else { EventKind::AlertCleared { alert } };
            tx.append_event(EventBody {
                at,
                run_id: None,
                session_id: None,
                user_id: None,
                actor: ALERTS_ACTOR.into(),
                kind,
            })
            .map(|()| true)
        })
    }
}
