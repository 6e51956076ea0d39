//! Decisions: what a reviewer (or a policy, or the system) decided on a
//! gate, who, when, how long the gate waited, and for edits the diff
//! against the agent's original so the edit can be shown and undone.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::allow_rule::AllowRuleRequest;
use crate::diff::PayloadDiff;
use crate::ids::{DecisionId, GateId, RunId};
use crate::policy::DecisionType;
use crate::scoring::QualityScore;

/// What was decided.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionAction {
    /// Go ahead as proposed (a goal review's `accept` too).
    #[serde(alias = "accept", alias = "approved")]
    Approve,
    /// Go ahead with the reviewer's edited payload.
    Edit,
    /// Do not go ahead.
    #[serde(alias = "rejected")]
    Reject,
    /// A free-text answer (a blocker's answer, feedback).
    Respond,
    /// Rework and ask again (a goal's `refine`, a plan's `modify` with feedback).
    #[serde(alias = "refine", alias = "modify")]
    NeedsRevision,
    /// Not now: the agent continues without the answer.
    #[serde(alias = "deferred")]
    Defer,
    /// Try the step again (with changes).
    Retry,
}

impl DecisionAction {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Edit => "edit",
            Self::Reject => "reject",
            Self::Respond => "respond",
            Self::NeedsRevision => "needs_revision",
            Self::Defer => "defer",
            Self::Retry => "retry",
        }
    }
    /// Whether the agent may proceed with the (possibly edited) proposal.
    pub fn lets_agent_proceed(self) -> bool {
        matches!(self, Self::Approve | Self::Edit | Self::Respond | Self::Defer)
    }
    /// Whether this decision judges what the agent proposed, and so counts in
    /// its capability rating's approval rate. An answer to a question and a
    /// deferral judge nothing: they leave the rating as it was.
    pub fn judges_the_agent(self) -> bool {
        !matches!(self, Self::Respond | Self::Defer)
    }
    /// Whether this decision counts as an approval in an agent's capability
    /// rating: the proposal went ahead, as is or edited.
    pub fn counts_as_approval(self) -> bool {
        matches!(self, Self::Approve | Self::Edit)
    }
    /// All actions.
    pub const ALL: [DecisionAction; 7] =
        [Self::Approve, Self::Edit, Self::Reject, Self::Respond, Self::NeedsRevision, Self::Defer, Self::Retry];
}

/// Who stands behind a decision.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum DecisionOrigin {
    /// A reviewer decided.
    Human,
    /// A run policy or handoff protocol passed the gate without a human.
    Auto {
        /// Why it passed.
        reason: String,
    },
    /// Gatehouse decided (a timeout fallback, a quorum tally).
    System {
        /// Why.
        reason: String,
    },
}

/// A reviewer's decision as submitted, before the engine checks it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionInput {
    /// What is decided.
    pub action: DecisionAction,
    /// The edited payload, for `edit`.
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
    /// The answer, feedback or reason.
    #[serde(default)]
    pub text: Option<String>,
    /// A quality score (quality gates).
    #[serde(default)]
    pub score: Option<QualityScore>,
    /// Decisions on some of a gate's proposed actions, by id. The gate
    /// resolves once each of its actions is decided; a bare `approve` or
    /// `reject` decides every action still open.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionChoice>,
    /// A `respond` decision's answer as data: the filled form of a gate
    /// with a `response_schema` (required there, and checked against it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<serde_json::Value>,
    /// The name of the gate's preset option chosen: its decision and text
    /// (the text when none is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// With `approve` or `edit` on an approval gate: also always allow
    /// this action of this agent (with arguments matching a pattern, for a
    /// while or until revoked). The rule is made with the decision, in the
    /// same transaction, by the reviewer deciding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_rule: Option<AllowRuleRequest>,
    /// Set by the engine, never by the request: the deciding token opened
    /// the gate (allowed only where the server allows self-review).
    #[serde(skip)]
    pub self_decided: bool,
}

/// A reviewer's decision on one of a gate's proposed actions.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionChoice {
    /// The action's id.
    pub id: String,
    /// Approve, edit, reject or respond.
    pub action: DecisionAction,
    /// For edits: a new name for the action.
    #[serde(default)]
    pub name: Option<String>,
    /// For edits: the arguments to use.
    #[serde(default)]
    pub args: Option<serde_json::Value>,
    /// A rejection's reason (optional) or a response's text (required).
    #[serde(default)]
    pub text: Option<String>,
}

impl DecisionInput {
    /// A bare decision.
    pub fn new(action: DecisionAction) -> Self {
        Self {
            action,
            payload: None,
            text: None,
            score: None,
            actions: Vec::new(),
            response: None,
            option: None,
            allow_rule: None,
            self_decided: false,
        }
    }
    /// Approve as proposed.
    pub fn approve() -> Self {
        Self::new(DecisionAction::Approve)
    }
    /// Reject with a reason.
    pub fn reject(reason: impl Into<String>) -> Self {
        Self { text: Some(reason.into()), ..Self::new(DecisionAction::Reject) }
    }
    /// Answer in free text.
    pub fn respond(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), ..Self::new(DecisionAction::Respond) }
    }
    /// Approve an edited payload.
    pub fn edit(payload: serde_json::Value) -> Self {
        Self { payload: Some(payload), ..Self::new(DecisionAction::Edit) }
    }
}

/// A recorded decision.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Its id.
    pub id: DecisionId,
    /// The gate decided.
    pub gate_id: GateId,
    /// The gate's run.
    pub run_id: RunId,
    /// What was decided.
    pub action: DecisionAction,
    /// The identity that decided (a token's identity, `policy`, `system`).
    pub decided_by: String,
    /// Human, auto or system.
    pub origin: DecisionOrigin,
    /// Answer, feedback or reason.
    pub text: Option<String>,
    /// The edited payload.
    pub payload: Option<serde_json::Value>,
    /// For edits: the change against the agent's original.
    pub diff: Option<PayloadDiff>,
    /// The score given.
    pub score: Option<QualityScore>,
    /// For a gate of several actions: each action's decision, in the
    /// gate's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionDecision>,
    /// The answer as data (a gate with a response form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<serde_json::Value>,
    /// The preset option chosen, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// When.
    pub decided_at: DateTime<Utc>,
    /// Milliseconds from the gate opening to this decision.
    pub latency_ms: i64,
    /// Decided with the same token that opened the gate, on a server that
    /// allows it (the single-user desktop app, `serve --allow-self-review`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub self_decided: bool,
}

impl Decision {
    /// The audit trail's classification of a decision.
    pub fn decision_type(&self) -> DecisionType {
        match (&self.origin, self.action) {
            (DecisionOrigin::Auto { .. }, _) => DecisionType::AutoApproved,
            (DecisionOrigin::System { .. }, _) => DecisionType::SystemDecided,
            (DecisionOrigin::Human, DecisionAction::Approve) => DecisionType::HumanApproved,
            (DecisionOrigin::Human, DecisionAction::Edit) => DecisionType::HumanEdited,
            (DecisionOrigin::Human, DecisionAction::Reject) => DecisionType::HumanRejected,
            (DecisionOrigin::Human, _) => DecisionType::HumanResponded,
        }
    }
}

/// The decision on one proposed action.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionDecision {
    /// The action's id.
    pub id: String,
    /// Approve, edit, reject or respond.
    pub action: DecisionAction,
    /// For edits: the action's name, when the reviewer changed it.
    #[serde(default)]
    pub name: Option<String>,
    /// For edits: the arguments to use instead of the proposed ones.
    #[serde(default)]
    pub args: Option<serde_json::Value>,
    /// A rejection's reason or a response's text.
    #[serde(default)]
    pub text: Option<String>,
    /// Who decided it.
    pub decided_by: String,
    /// When.
    pub decided_at: DateTime<Utc>,
}
