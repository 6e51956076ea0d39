//! The words every gate is described in: its kind, blocking mode,
//! priority and status, with the one rule of its lifecycle (pending, then
//! exactly one terminal state that never changes).

use serde::{Deserialize, Serialize};

use crate::decision::DecisionAction;

/// Every kind of gate Gatehouse offers.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    /// Approve a proposed action (a tool call, a deployment).
    Approval,
    /// Review a payload before it is sent (pre-call).
    PayloadReview,
    /// A blocker question.
    Question,
    /// Review what the information step found (pre-run).
    InformationReview,
    /// Raw against audited output (post-call).
    ResponseReview,
    /// Score a deliverable against a rubric (a quality gate).
    QualityScore,
    /// Refine or accept a goal (goal collaboration).
    GoalReview,
    /// Approve, modify or reject a plan (plan collaboration).
    PlanReview,
}

impl GateKind {
    /// The snake_case name used in storage, policies and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approval => "approval",
            Self::PayloadReview => "payload_review",
            Self::Question => "question",
            Self::InformationReview => "information_review",
            Self::ResponseReview => "response_review",
            Self::QualityScore => "quality_score",
            Self::GoalReview => "goal_review",
            Self::PlanReview => "plan_review",
        }
    }

    /// Whether a run policy may pass this kind without a human. Questions,
    /// scores and goal or plan reviews need an answer only a person gives.
    pub fn policy_may_auto_pass(self) -> bool {
        matches!(self, Self::Approval | Self::PayloadReview | Self::InformationReview | Self::ResponseReview)
    }

    /// The decisions a reviewer may take on this kind when the agent names none.
    pub fn default_actions(self) -> Vec<DecisionAction> {
        use DecisionAction::*;
        match self {
            Self::Approval | Self::PayloadReview => vec![Approve, Edit, Reject],
            Self::Question => vec![Respond, Defer],
            Self::InformationReview => vec![Approve, Edit, Reject],
            Self::ResponseReview => vec![Approve, Edit, Retry, Reject],
            Self::QualityScore => vec![Approve, NeedsRevision, Reject],
            Self::GoalReview => vec![Approve, NeedsRevision],
            Self::PlanReview => vec![Approve, Edit, NeedsRevision, Reject],
        }
    }

    /// All kinds.
    pub const ALL: [GateKind; 8] = [
        Self::Approval,
        Self::PayloadReview,
        Self::Question,
        Self::InformationReview,
        Self::ResponseReview,
        Self::QualityScore,
        Self::GoalReview,
        Self::PlanReview,
    ];
}

/// Whether the asking agent stops: sync waits for the answer, async carries on, advisory welcomes input it does not need.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockingMode {
    /// The agent waits for the answer.
    #[default]
    #[serde(alias = "SYNC", alias = "synchronous")]
    Sync,
    /// The agent continues and collects the answer later.
    #[serde(alias = "ASYNC", alias = "asynchronous")]
    Async,
    /// Informational: input welcome, not required.
    #[serde(alias = "ADVISORY")]
    Advisory,
}

impl BlockingMode {
    /// Sort rank for the reviewer's panel: sync first.
    pub fn rank(self) -> i64 {
        match self {
            Self::Sync => 0,
            Self::Async => 1,
            Self::Advisory => 2,
        }
    }
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Async => "async",
            Self::Advisory => "advisory",
        }
    }
}

/// How urgent a gate is. Higher sorts first within a blocking mode.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// The default.
    #[default]
    #[serde(alias = "medium")]
    Normal,
    /// Soon.
    High,
    /// Now.
    #[serde(alias = "critical")]
    Urgent,
}

impl Priority {
    /// Numeric rank, higher is more urgent.
    pub fn rank(self) -> i64 {
        self as i64
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
            Self::Urgent => "urgent",
        }
    }
}

/// Where a gate is. Pending is the only non-terminal state.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// Waiting for a decision.
    Pending,
    /// Decided by a human, a policy or the system.
    Resolved,
    /// Nobody answered in time.
    Expired,
    /// Withdrawn (its run ended or the agent no longer needs it).
    Cancelled,
}

/// A refused gate status change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a gate that is {from:?} cannot become {to:?}")]
pub struct GateTransitionError {
    /// Where it was.
    pub from: GateStatus,
    /// Where it was asked to go.
    pub to: GateStatus,
}

impl GateStatus {
    /// Whether the gate can still be decided.
    pub fn is_terminal(self) -> bool {
        self != Self::Pending
    }
    /// Pending goes to exactly one terminal state; terminal states never change.
    pub fn transition(self, to: GateStatus) -> Result<GateStatus, GateTransitionError> {
        match (self, to) {
            (Self::Pending, Self::Resolved | Self::Expired | Self::Cancelled) => Ok(to),
            (from, to) => Err(GateTransitionError { from, to }),
        }
    }
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Resolved => "resolved",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }
    /// All statuses.
    pub const ALL: [GateStatus; 4] = [Self::Pending, Self::Resolved, Self::Expired, Self::Cancelled];
}
