//! Review metrics, the figures: how often gates wait for a human and how
//! often a policy passes them, per agent, per gate kind and per model; how
//! long humans take per kind, per model and per reviewer; how often each
//! reviewer and each model's gates are approved, edited or rejected; how
//! many gates expire; which payload fields reviewers correct most. The store counts the rows ([`GateTally`], [`Correction`]);
//! [`Metrics::from_tallies`] turns its counts into rates.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::gate::GateKind;
use crate::scoring::{CapabilityRating, CapabilityRatingView};

/// How many correction paths [`Metrics::common_corrections`] lists.
pub const TOP_CORRECTIONS: u32 = 10;

/// Gates of one agent, kind and status, decided by one origin (or not
/// decided), counted by the store in one grouped scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateTally {
    /// The asking agent.
    pub agent: String,
    /// The gate kind (snake_case).
    pub kind: String,
    /// The gate status (snake_case).
    pub status: String,
    /// The decision's `origin.by` (`human`, `auto`, `system`), or `self` for
    /// a person's decision on a gate their own token opened; `None` for undecided gates.
    pub origin: Option<String>,
    /// How many gates.
    pub count: u64,
    /// The sum of their decisions' latencies, milliseconds (0 when undecided).
    pub latency_ms_sum: i64,
    /// The model their run asked for (its input's `tool`, else its `model`), if it named one.
    pub model: Option<String>,
    /// Who decided them; `None` for undecided gates.
    pub decided_by: Option<String>,
    /// The decision's action (snake_case); `None` for undecided gates.
    pub action: Option<String>,
}

/// One payload field reviewers changed, and how often.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Correction {
    /// JSON pointer of the field (`/prompt`, `/args/branch`); empty for the whole payload.
    pub path: String,
    /// How many human edits changed, added or removed it.
    pub count: u64,
}

/// Review figures for a group of gates.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateRates {
    /// Gates opened.
    pub gates: u64,
    /// Gates a run policy or handoff protocol passed without a human.
    pub auto_passed: u64,
    /// Gates that waited for a human: every gate not auto-passed (decided by
    /// a person or by the system, still pending, expired or cancelled).
    pub waited_for_human: u64,
    /// Gates a person decided.
    pub human_decided: u64,
    /// Of those, gates decided with the token that opened them (only where
    /// the server allows self-review).
    pub self_decided: u64,
    /// `waited_for_human / gates`, the HITL rate; absent without gates.
    pub hitl_rate: Option<f64>,
    /// `auto_passed / gates`; absent without gates. With `hitl_rate` it sums to 1.
    pub auto_pass_rate: Option<f64>,
}

impl GateRates {
    fn finish(mut self) -> Self {
        self.waited_for_human = self.gates.saturating_sub(self.auto_passed);
        self.hitl_rate = ratio(self.waited_for_human, self.gates);
        self.auto_pass_rate = ratio(self.auto_passed, self.gates);
        self
    }
}

/// Review figures for one agent's gates.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMetrics {
    /// The asking agent.
    pub agent: String,
    /// Its gates' figures.
    #[serde(flatten)]
    pub rates: GateRates,
}

/// Review figures for one gate kind.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindMetrics {
    /// The gate kind, i.e. the review type.
    pub kind: GateKind,
    /// Its gates' figures.
    #[serde(flatten)]
    pub rates: GateRates,
    /// Mean milliseconds from opening to a person's decision; absent before the first.
    pub avg_human_latency_ms: Option<f64>,
}

/// How people decided a group of gates: counts of each action and their
/// share, with the mean time to decide.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionRates {
    /// Gates a person decided.
    pub decided: u64,
    /// Approved as proposed.
    pub approved: u64,
    /// Approved with the reviewer's changes.
    pub edited: u64,
    /// Rejected.
    pub rejected: u64,
    /// `approved / decided`; absent before the first decision.
    pub approval_rate: Option<f64>,
    /// `edited / decided`; absent before the first decision.
    pub edit_rate: Option<f64>,
    /// `rejected / decided`; absent before the first decision.
    pub rejection_rate: Option<f64>,
    /// Mean milliseconds from opening to the decision; absent before the first.
    pub avg_latency_ms: Option<f64>,
    #[serde(skip)]
    latency_ms_sum: i64,
}

impl DecisionRates {
    fn count(&mut self, action: Option<&str>, n: u64, latency_ms_sum: i64) {
        self.decided += n;
        self.latency_ms_sum += latency_ms_sum;
        match action {
            Some("approve") => self.approved += n,
            Some("edit") => self.edited += n,
            Some("reject") => self.rejected += n,
            _ => {}
        }
    }

    fn finish(mut self) -> Self {
        self.approval_rate = ratio(self.approved, self.decided);
        self.edit_rate = ratio(self.edited, self.decided);
        self.rejection_rate = ratio(self.rejected, self.decided);
        self.avg_latency_ms = mean(self.latency_ms_sum, self.decided);
        self
    }
}

/// Review figures for the gates of runs that asked for one model.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelMetrics {
    /// The model (a provider's tool such as `openai:gpt-4o-mini`, or what an agent's run input named).
    pub model: String,
    /// Its gates' figures: how many passed on their own, how many waited for a person.
    #[serde(flatten)]
    pub rates: GateRates,
    /// How people decided its gates.
    pub decisions: DecisionRates,
}

/// How one reviewer decided.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewerMetrics {
    /// The reviewer, as decisions record them.
    pub reviewer: String,
    /// Their decisions.
    #[serde(flatten)]
    pub decisions: DecisionRates,
    /// Of those, decisions on gates their own token opened (where the server allows it).
    pub self_decided: u64,
}

/// How many closed gates expired unanswered.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExpiryMetrics {
    /// Gates that expired.
    pub expired: u64,
    /// Gates no longer pending (resolved, expired or cancelled).
    pub closed: u64,
    /// `expired / closed`; absent before any gate closed.
    pub expiry_rate: Option<f64>,
}

/// The review metrics over the whole database.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// When these figures were computed.
    pub computed_at: DateTime<Utc>,
    /// Every gate together.
    pub overall: GateRates,
    /// Mean milliseconds to a person's decision over all kinds.
    pub avg_human_latency_ms: Option<f64>,
    /// Per asking agent, by name.
    pub by_agent: Vec<AgentMetrics>,
    /// Per gate kind that has gates, in kind order.
    pub by_kind: Vec<KindMetrics>,
    /// Per model that runs asked for, by name (gates of runs naming none are left out).
    pub by_model: Vec<ModelMetrics>,
    /// Per reviewer who decided a gate, by name.
    pub by_reviewer: Vec<ReviewerMetrics>,
    /// Expired against closed gates.
    pub expiry: ExpiryMetrics,
    /// The payload fields human edits changed most often (at most 10),
    /// most frequent first, ties by path.
    pub common_corrections: Vec<Correction>,
    /// Every agent's capability rating.
    pub capability_ratings: Vec<CapabilityRatingView>,
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn mean(sum: i64, count: u64) -> Option<f64> {
    (count > 0).then(|| sum as f64 / count as f64)
}

/// The kind's position in [`GateKind::ALL`], which orders `by_kind`.
fn kind_index(kind: &str) -> Result<usize> {
    GateKind::ALL
        .iter()
        .position(|k| k.as_str() == kind)
        .ok_or_else(|| EngineError::Storage(format!("a stored gate has the unknown kind `{kind}`")))
}

/// Human decisions of one group: how many and their summed latency.
#[derive(Default)]
struct Latency {
    count: u64,
    sum_ms: i64,
}

impl Metrics {
    /// The figures from the store's grouped counts, its most corrected
    /// fields and every agent's rating.
    pub fn from_tallies(
        computed_at: DateTime<Utc>,
        tallies: &[GateTally],
        common_corrections: Vec<Correction>,
        ratings: &[CapabilityRating],
    ) -> Result<Self> {
        let mut overall = GateRates::default();
        let mut by_agent: BTreeMap<String, GateRates> = BTreeMap::new();
        let mut by_kind: BTreeMap<usize, (GateRates, Latency)> = BTreeMap::new();
        let mut by_model: BTreeMap<String, (GateRates, DecisionRates)> = BTreeMap::new();
        let mut by_reviewer: BTreeMap<String, (DecisionRates, u64)> = BTreeMap::new();
        let mut expiry = ExpiryMetrics::default();
        let mut human = Latency::default();
        for t in tallies {
            let by_person = matches!(t.origin.as_deref(), Some("human" | "self"));
            if let Some(model) = &t.model {
                let (rates, decisions) = by_model.entry(model.clone()).or_default();
                rates.gates += t.count;
                match t.origin.as_deref() {
                    Some("auto") => rates.auto_passed += t.count,
                    Some("human" | "self") => rates.human_decided += t.count,
                    _ => {}
                }
                if t.origin.as_deref() == Some("self") {
                    rates.self_decided += t.count;
                }
                if by_person {
                    decisions.count(t.action.as_deref(), t.count, t.latency_ms_sum);
                }
            }
            if let (true, Some(reviewer)) = (by_person, &t.decided_by) {
                let (decisions, own) = by_reviewer.entry(reviewer.clone()).or_default();
                decisions.count(t.action.as_deref(), t.count, t.latency_ms_sum);
                if t.origin.as_deref() == Some("self") {
                    *own += t.count;
                }
            }
            let agent = by_agent.entry(t.agent.clone()).or_default();
            let (kind, kind_latency) = by_kind.entry(kind_index(&t.kind)?).or_default();
            for rates in [&mut overall, agent, kind] {
                rates.gates += t.count;
                match t.origin.as_deref() {
                    Some("auto") => rates.auto_passed += t.count,
                    Some("human") => rates.human_decided += t.count,
                    Some("self") => {
                        rates.human_decided += t.count;
                        rates.self_decided += t.count;
                    }
                    _ => {}
                }
            }
            if matches!(t.origin.as_deref(), Some("human" | "self")) {
                for latency in [&mut human, kind_latency] {
                    latency.count += t.count;
                    latency.sum_ms += t.latency_ms_sum;
                }
            }
            if t.status != "pending" {
                expiry.closed += t.count;
            }
            if t.status == "expired" {
                expiry.expired += t.count;
            }
        }
        expiry.expiry_rate = ratio(expiry.expired, expiry.closed);
        Ok(Metrics {
            computed_at,
            overall: overall.finish(),
            avg_human_latency_ms: mean(human.sum_ms, human.count),
            by_agent: by_agent
                .into_iter()
                .map(|(agent, rates)| AgentMetrics { agent, rates: rates.finish() })
                .collect(),
            by_kind: by_kind
                .into_iter()
                .map(|(kind, (rates, latency))| KindMetrics {
                    kind: GateKind::ALL[kind],
                    rates: rates.finish(),
                    avg_human_latency_ms: mean(latency.sum_ms, latency.count),
                })
                .collect(),
            by_model: by_model
                .into_iter()
                .map(|(model, (rates, decisions))| ModelMetrics {
                    model,
                    rates: rates.finish(),
                    decisions: decisions.finish(),
                })
                .collect(),
            by_reviewer: by_reviewer
                .into_iter()
                .map(|(reviewer, (decisions, self_decided))| ReviewerMetrics {
                    reviewer,
                    decisions: decisions.finish(),
                    self_decided,
                })
                .collect(),
            expiry,
            common_corrections,
            capability_ratings: ratings.iter().map(|r| r.view()).collect(),
        })
    }
}
