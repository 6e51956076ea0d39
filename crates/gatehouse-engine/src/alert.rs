//! Alerts and review SLAs, the figures: what the server's alert sweep
//! measures ([`AlertFigures`], read by the store in one snapshot), the
//! alert a crossed threshold raises ([`Alert`], kept in the event log as
//! `alert_raised` and `alert_cleared`), and how many gates of each priority
//! a person decided within its target ([`SlaTally`] counted by the store,
//! [`SlaCompliance`] the share). The thresholds and targets themselves are
//! the server's configuration; the engine only counts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::gate::Priority;

/// What an alert watches.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// A sync gate (its agent blocked) has waited longer than the threshold, in minutes.
    SyncGateWaiting,
    /// More gates are pending than the threshold.
    PendingQueue,
    /// The share of gates a policy or rule passed without a person, over the window, is above the threshold (%).
    AutoPassRate,
    /// Webhook deliveries failed, over the window, more often than the threshold.
    WebhookFailures,
}

impl AlertKind {
    /// Every kind, in the order they are evaluated and shown.
    pub const ALL: [AlertKind; 4] =
        [Self::SyncGateWaiting, Self::PendingQueue, Self::AutoPassRate, Self::WebhookFailures];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SyncGateWaiting => "sync_gate_waiting",
            Self::PendingQueue => "pending_queue",
            Self::AutoPassRate => "auto_pass_rate",
            Self::WebhookFailures => "webhook_failures",
        }
    }
}

/// An alert: which figure crossed which threshold, and by how much.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alert {
    /// What it watches.
    pub kind: AlertKind,
    /// The figure when it was raised or cleared (minutes, gates, percent or failures, by kind).
    pub value: f64,
    /// The configured threshold it is compared with.
    pub threshold: f64,
    /// One line for a person: what is wrong, or that it is over.
    pub message: String,
}

/// What the alert sweep reads of the store, in one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertFigures {
    /// When the oldest pending sync gate opened; `None` without one.
    pub oldest_pending_sync: Option<DateTime<Utc>>,
    /// Gates pending, every mode.
    pub pending: u64,
    /// Gates opened since the window's start.
    pub opened_in_window: u64,
    /// Of those, gates a policy or allow-rule passed as they opened.
    pub auto_passed_in_window: u64,
}

/// Decision targets per priority, milliseconds from opening to a person's decision.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlaTargets {
    /// Target for `low` gates, ms.
    pub low_ms: u64,
    /// Target for `normal` gates, ms.
    pub normal_ms: u64,
    /// Target for `high` gates, ms.
    pub high_ms: u64,
    /// Target for `urgent` gates, ms.
    pub urgent_ms: u64,
}

impl Default for SlaTargets {
    /// A day for low, four hours for normal, an hour for high, fifteen minutes for urgent.
    fn default() -> Self {
        const MINUTE: u64 = 60_000;
        Self { low_ms: 24 * 60 * MINUTE, normal_ms: 4 * 60 * MINUTE, high_ms: 60 * MINUTE, urgent_ms: 15 * MINUTE }
    }
}

impl SlaTargets {
    /// The target for `priority`, ms.
    pub fn for_priority(&self, priority: Priority) -> u64 {
        match priority {
            Priority::Low => self.low_ms,
            Priority::Normal => self.normal_ms,
            Priority::High => self.high_ms,
            Priority::Urgent => self.urgent_ms,
        }
    }

    /// The targets in priority rank order (low first), as the store's queries bind them.
    pub fn by_rank(&self) -> [i64; 4] {
        [self.low_ms, self.normal_ms, self.high_ms, self.urgent_ms].map(|ms| i64::try_from(ms).unwrap_or(i64::MAX))
    }
}

/// Gates of one priority rank that waited for a person, counted by the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlaTally {
    /// The priority's rank ([`Priority::rank`]).
    pub rank: i64,
    /// Gates a person decided.
    pub decided: u64,
    /// Of those, decided within the target.
    pub within_target: u64,
    /// Gates still pending past their target, or that expired without a decision.
    pub missed_undecided: u64,
}

/// SLA compliance for one priority.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaCompliance {
    /// The priority.
    pub priority: Priority,
    /// Its decision target, ms.
    pub target_ms: u64,
    /// Gates counted: decided by a person, or past the target undecided (pending or expired).
    pub gates: u64,
    /// Decided by a person within the target.
    pub within_target: u64,
    /// `within_target / gates`; absent without gates.
    pub compliance: Option<f64>,
}

/// SLA compliance per priority (low to urgent), from the store's tallies.
pub fn sla_compliance(tallies: &[SlaTally], targets: &SlaTargets) -> Vec<SlaCompliance> {
    [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent]
        .into_iter()
        .map(|priority| {
            let mine = tallies.iter().filter(|t| t.rank == priority.rank());
            let (gates, within_target) =
                mine.fold((0, 0), |(g, w), t| (g + t.decided + t.missed_undecided, w + t.within_target));
            let compliance = (gates > 0).then(|| within_target as f64 / gates as f64);
            SlaCompliance { priority, target_ms: targets.for_priority(priority), gates, within_target, compliance }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compliance_counts_missed_undecided_gates_against_their_priority() {
        let tallies = [
            SlaTally { rank: Priority::Urgent.rank(), decided: 3, within_target: 2, missed_undecided: 1 },
            SlaTally { rank: Priority::Normal.rank(), decided: 1, within_target: 1, missed_undecided: 0 },
        ];
        let rows = sla_compliance(&tallies, &SlaTargets::default());
        let urgent = rows.iter().find(|r| r.priority == Priority::Urgent).unwrap();
        assert_eq!((urgent.gates, urgent.within_target, urgent.compliance), (4, 2, Some(0.5)));
        assert_eq!(urgent.target_ms, 15 * 60_000);
        let low = rows.iter().find(|r| r.priority == Priority::Low).unwrap();
        assert_eq!((low.gates, low.compliance), (0, None), "no gates, no share");
    }
}
