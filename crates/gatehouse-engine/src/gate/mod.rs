//! Gates: the questions agents put to humans. A gate is pending and then
//! reaches exactly one terminal state (resolved, expired or cancelled) that
//! never changes again.
//!
//! Its vocabulary (kind, mode, priority, status) is in `vocabulary.rs`,
//! what an agent sends to open one in `request.rs`.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

pub use crate::decision::ActionDecision;
use crate::decision::{Decision, DecisionAction};
use crate::ids::{GateId, RunId};

mod declared;
mod released;
mod request;
mod vocabulary;

pub use declared::{DeclaredGate, KindMismatch};
pub use released::Released;
pub use request::NewGate;
pub use vocabulary::{BlockingMode, GateKind, GateStatus, GateTransitionError, Priority};

/// How long a question gate waits before it expires, by default (a stale blocker's 24 hours).
pub const DEFAULT_QUESTION_EXPIRY: Duration = Duration::hours(24);

/// The longest wait a client may ask for (`expires_in_secs`,
/// `escalate_after_secs`, a tool's `timeout`, an allow-rule's `for_secs`):
/// ten years, in seconds. Longer is refused, naming the field.
pub const MAX_WAIT_SECS: u64 = 10 * 366 * 24 * 60 * 60;

/// What the gate is about, beyond the common fields: one variant per kind.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GateSpec {
    /// Approve an action.
    Approval {
        /// The action's name, e.g. `deploy` or a tool name.
        #[serde(default)]
        action: String,
    },
    /// Review a payload before the call.
    PayloadReview {
        /// Validation results from the tool's checks.
        #[serde(default)]
        validation: Vec<String>,
        /// Suggested fixes, e.g. "map image_file to input_image".
        #[serde(default)]
        suggestions: Vec<String>,
        /// Fields the tool requires.
        #[serde(default)]
        required_fields: Vec<String>,
    },
    /// A blocker question.
    Question {},
    /// Review what the information step found.
    InformationReview {
        /// 0..1 confidence.
        #[serde(default)]
        confidence: Option<f64>,
        /// Why to continue or pause.
        #[serde(default)]
        reasons: Vec<String>,
        /// NSFW, PII risk, copyright risk...
        #[serde(default)]
        safety_flags: Vec<String>,
        /// Suggested overrides.
        #[serde(default)]
        recommended_settings: serde_json::Value,
    },
    /// Raw output against audited output.
    ResponseReview {
        /// The provider's raw output.
        raw: String,
        /// The audited, cleaned text.
        audited: String,
        /// Quality and safety indicators.
        #[serde(default)]
        indicators: Vec<String>,
    },
    /// Score a deliverable.
    QualityScore {
        /// What is scored.
        #[serde(default)]
        deliverable_id: String,
        /// Minimum passing score (1..5).
        #[serde(default = "default_required_score")]
        required_score: f64,
        /// Criteria to score.
        #[serde(default)]
        rubric: Vec<String>,
    },
    /// Refine or accept a goal.
    GoalReview {
        /// The goal under review.
        goal: serde_json::Value,
        /// Refinement round, from 1.
        #[serde(default = "one")]
        round: u32,
    },
    /// Approve, modify or reject a plan.
    PlanReview {
        /// The plan revision under review, if the plan lives in Gatehouse.
        #[serde(default)]
        plan_revision: Option<u32>,
        /// Review round, from 1.
        #[serde(default = "one")]
        round: u32,
    },
}

fn default_required_score() -> f64 {
    crate::scoring::DEFAULT_REQUIRED_SCORE
}
fn one() -> u32 {
    1
}

impl GateSpec {
    /// The kind this spec belongs to.
    pub fn kind(&self) -> GateKind {
        match self {
            Self::Approval { .. } => GateKind::Approval,
            Self::PayloadReview { .. } => GateKind::PayloadReview,
            Self::Question {} => GateKind::Question,
            Self::InformationReview { .. } => GateKind::InformationReview,
            Self::ResponseReview { .. } => GateKind::ResponseReview,
            Self::QualityScore { .. } => GateKind::QualityScore,
            Self::GoalReview { .. } => GateKind::GoalReview,
            Self::PlanReview { .. } => GateKind::PlanReview,
        }
    }
}

/// Where in the agent's work the gate arose: its task context.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GateContext {
    /// The plan task, if any.
    #[serde(default)]
    pub task_id: Option<String>,
    /// What the task is about.
    #[serde(default)]
    pub task_description: Option<String>,
    /// The current step.
    #[serde(default)]
    pub step: Option<String>,
}

/// How many distinct reviewers must agree before the gate is decided.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quorum {
    /// Approvals needed.
    pub required: u32,
    /// Rejections that reject the gate; 1 means any rejection rejects.
    #[serde(default = "one")]
    pub rejections_to_reject: u32,
}

/// One reviewer's vote on a quorum gate.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vote {
    /// Who voted.
    pub reviewer: String,
    /// Approve or reject.
    pub action: DecisionAction,
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
    /// When.
    pub at: DateTime<Utc>,
}

/// What Gatehouse does with a gate nobody answered in time. Applied once,
/// by the expiry sweep, and recorded as the system's decision with the reason.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutFallback {
    /// The gate expires (a sync gate's run fails, as a stale blocker's does).
    #[default]
    Expire,
    /// Gatehouse rejects it.
    Reject,
    /// Gatehouse approves it.
    Approve,
    /// Its priority rises to urgent and it waits one more window; then it expires.
    Escalate,
    /// It expires and its run fails, sync or not.
    Fail,
}

impl TimeoutFallback {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Expire => "expire",
            Self::Reject => "reject",
            Self::Approve => "approve",
            Self::Escalate => "escalate",
            Self::Fail => "fail",
        }
    }
    fn is_default(&self) -> bool {
        *self == Self::Expire
    }
}

/// A gate's escalation after a wait (beside any timeout fallback).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Escalation {
    /// Seconds of waiting before it escalates.
    pub after_secs: u64,
    /// Who it brings in and notifies: reviewers by name or `role:NAME`.
    #[serde(default)]
    pub to: Vec<String>,
    /// When it is due.
    pub due_at: DateTime<Utc>,
    /// When it escalated; none while it has not.
    #[serde(default)]
    pub escalated_at: Option<DateTime<Utc>>,
}

/// A named answer or rejection offered with a gate.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PresetOption {
    /// Its name, unique in the gate (recorded with the decision).
    pub name: String,
    /// What the reviewer sees.
    pub title: String,
    /// More about it.
    #[serde(default)]
    pub description: Option<String>,
    /// The decision it takes: `respond` (an answer) by default, or `reject`,
    /// `approve`... (one the gate allows).
    #[serde(default = "respond")]
    pub action: DecisionAction,
    /// The answer or reason it sends; its title when absent.
    #[serde(default)]
    pub text: Option<String>,
}

fn respond() -> DecisionAction {
    DecisionAction::Respond
}

/// One of several actions proposed in one gate.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedAction {
    /// Its id within the gate (the agent's tool-call id); numbered from
    /// `action-1` when the agent gives none.
    #[serde(default)]
    pub id: String,
    /// The action or tool name.
    pub name: String,
    /// Its arguments.
    #[serde(default)]
    pub args: serde_json::Value,
    /// What it does and why, markdown.
    #[serde(default)]
    pub description: Option<String>,
    /// Decisions a reviewer may take on it (from approve, edit, reject and
    /// respond); all four when empty.
    #[serde(default)]
    pub allowed_actions: Vec<DecisionAction>,
    /// Its decision, once taken (ignored when opening the gate).
    #[serde(default)]
    pub decision: Option<ActionDecision>,
}

impl ProposedAction {
    /// The decisions an action may take when its agent named none.
    pub const DEFAULT_ACTIONS: [DecisionAction; 4] =
        [DecisionAction::Approve, DecisionAction::Edit, DecisionAction::Reject, DecisionAction::Respond];

    /// Whether a reviewer may take `action` on it.
    pub fn allows(&self, action: DecisionAction) -> bool {
        if self.allowed_actions.is_empty() {
            Self::DEFAULT_ACTIONS.contains(&action)
        } else {
            self.allowed_actions.contains(&action)
        }
    }
}

/// A gate, as callers see it: an immutable snapshot.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    /// Its id.
    pub id: GateId,
    /// Its run.
    pub run_id: RunId,
    /// Kind-specific content.
    pub spec: GateSpec,
    /// Sync, async or advisory.
    pub mode: BlockingMode,
    /// Urgency.
    pub priority: Priority,
    /// The asking agent.
    pub agent: String,
    /// The question or action, markdown.
    pub text: String,
    /// Task and step.
    pub context: GateContext,
    /// The proposed payload (redacted).
    pub payload: Option<serde_json::Value>,
    /// What the payload should look like, to diff against.
    pub example_input: Option<serde_json::Value>,
    /// Decisions a reviewer may take.
    pub allowed_actions: Vec<DecisionAction>,
    /// Never auto-passed by a policy or protocol.
    pub requires_human: bool,
    /// The agent's confidence in its proposal, 0..1 (for policy thresholds).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Safety concerns the agent flagged (nsfw, pii...).
    #[serde(default)]
    pub safety_flags: Vec<String>,
    /// Several reviewers must agree.
    pub quorum: Option<Quorum>,
    /// Votes so far (quorum gates).
    pub votes: Vec<Vote>,
    /// Several proposed actions in one gate (an agent's parallel tool
    /// calls), each decided on its own, with its decision once taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ProposedAction>,
    /// The form of the answer wanted: a JSON Schema of an object. A
    /// `respond` decision must then carry a `response` the schema accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<serde_json::Value>,
    /// Opaque state the agent attached, returned with the gate (and so with
    /// its decision) so a stateless agent can pick up where it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<serde_json::Value>,
    /// Preset answers or rejections the reviewer can pick with one key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<PresetOption>,
    /// What happens when nobody answers before `expires_at`.
    #[serde(default, skip_serializing_if = "TimeoutFallback::is_default")]
    pub on_timeout: TimeoutFallback,
    /// Who may decide it: reviewers by name, or `role:NAME` for everyone
    /// whose token has that role (`admin`, `reviewer`) or team. Anyone with
    /// a reviewer token may when empty; others see it read-only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deciders: Vec<String>,
    /// Escalation after a wait: when, to whom, and whether it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
    /// What the payload should look like (a JSON Schema, such as the
    /// tool's input schema), when the agent declared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_schema: Option<serde_json::Value>,
    /// Where the payload breaks `payload_schema` (`payload.width: ...`).
    /// Such a gate is shown with its payload as sent, never passes on its
    /// own, and cannot be approved as is: edit it to fit, or reject it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payload_problems: Vec<String>,
    /// For a sub-agent's gate: the agents of the chain of runs that led to
    /// it, from the first parent's down to its own run's (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_chain: Vec<String>,
    /// The workflow node it belongs to; a gate the run declared for that
    /// node opens with the declared kind, rubric and required score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow_node_id: Option<String>,
    /// Set once a reviewer released it (it was sync; its run went on
    /// without waiting): still pending and answerable, never a decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub released: Option<Released>,
    /// Where it is.
    pub status: GateStatus,
    /// The decision that resolved it.
    pub decision: Option<Decision>,
    /// Why it expired or was cancelled.
    pub status_reason: Option<String>,
    /// The agent's idempotency key.
    pub idempotency_key: Option<String>,
    /// The id of the API token that opened it (none when the engine was
    /// called directly): that token never decides it, unless the server
    /// allows self-review, and then its decision says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opened_by: Option<String>,
    /// When it opened.
    pub created_at: DateTime<Utc>,
    /// When it expires, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// When it left pending.
    pub closed_at: Option<DateTime<Utc>>,
    /// Set when the gate came in with a recording (history, not live work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<crate::recording::Imported>,
}

impl Gate {
    /// The kind of this gate.
    pub fn kind(&self) -> GateKind {
        self.spec.kind()
    }

    /// When it escalates, while it still will.
    pub fn escalate_at(&self) -> Option<DateTime<Utc>> {
        self.escalation.as_ref().filter(|e| e.escalated_at.is_none()).map(|e| e.due_at)
    }

    /// Whether `who` may decide it: anyone when it names no deciders;
    /// otherwise a decider by name, or by one of `who`'s roles (`role:NAME`).
    pub fn may_decide(&self, who: &Decider) -> bool {
        self.deciders.is_empty()
            || self.deciders.iter().any(|d| match d.strip_prefix("role:") {
                Some(role) => who.roles.iter().any(|r| r == role),
                None => *d == who.name,
            })
    }
    /// A one-line preview for the panel: the first 50 characters of the text.
    pub fn preview(&self) -> String {
        let line = self.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let mut out: String = line.chars().take(50).collect();
        if line.chars().count() > 50 {
            out.push('…');
        }
        out
    }
}

/// Who is deciding: a reviewer's name and roles (their token's role and teams).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Decider {
    /// The reviewer's name.
    pub name: String,
    /// `admin`, `reviewer`, and the teams on their token.
    pub roles: Vec<String>,
    /// The id of the token they decide with, when they use one: it may not
    /// decide a gate it opened ([`Gate::opened_by`]).
    pub token: Option<String>,
    /// Whether this server lets a token decide the gates it opened (the
    /// single-user desktop app, `serve --allow-self-review`); such a
    /// decision is marked `self_decided`.
    pub self_review: bool,
}

impl Decider {
    /// A reviewer by name with these roles.
    pub fn new(name: impl Into<String>, roles: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self { name: name.into(), roles: roles.into_iter().map(Into::into).collect(), ..Self::default() }
    }

    /// The same reviewer deciding with the token `id`.
    pub fn with_token(self, id: impl Into<String>) -> Self {
        Self { token: Some(id.into()), ..self }
    }

    /// Whether deciding `gate` is deciding a gate of one's own (its token opened it).
    pub fn opened(&self, gate: &Gate) -> bool {
        self.token.is_some() && self.token == gate.opened_by
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_reaches_each_terminal_state_and_nothing_else() {
        for to in GateStatus::ALL {
            let r = GateStatus::Pending.transition(to);
            assert_eq!(r.is_ok(), to != GateStatus::Pending, "{to:?}");
        }
    }

    #[test]
    fn terminal_gates_never_change() {
        for from in [GateStatus::Resolved, GateStatus::Expired, GateStatus::Cancelled] {
            for to in GateStatus::ALL {
                assert_eq!(from.transition(to), Err(GateTransitionError { from, to }));
            }
        }
    }

    #[test]
    fn question_gates_expire_after_24_hours_by_default_and_others_never() {
        let now = Utc::now();
        assert_eq!(NewGate::question("?").expiry(now), Some(now + Duration::hours(24)));
        let approval = NewGate::approval("deploy", "Deploy?", serde_json::json!({}));
        assert_eq!(approval.expiry(now), None);
        let mut custom = NewGate::question("?");
        custom.expires_in_secs = Some(60);
        assert_eq!(custom.expiry(now), Some(now + Duration::seconds(60)));
    }

    #[test]
    fn new_gate_parses_from_agent_json_with_the_older_spellings() {
        let g: NewGate = serde_json::from_value(serde_json::json!({
            "kind": "question", "text": "Which API key?", "mode": "SYNC", "priority": "critical"
        }))
        .unwrap();
        assert_eq!(g.spec.kind(), GateKind::Question);
        assert_eq!(g.mode, BlockingMode::Sync);
        assert_eq!(g.priority, Priority::Urgent);
    }

    #[test]
    fn preview_is_the_first_fifty_characters_of_the_first_line() {
        let mut g: Gate = serde_json::from_value(serde_json::json!({
            "id": "gate_1", "run_id": "run_1", "spec": {"kind": "question"}, "mode": "sync",
            "priority": "normal", "agent": "a", "text": "", "context": {}, "payload": null,
            "example_input": null, "allowed_actions": [], "requires_human": false, "quorum": null,
            "votes": [], "status": "pending", "decision": null, "status_reason": null,
            "idempotency_key": null, "created_at": "2026-01-01T00:00:00Z", "expires_at": null,
            "closed_at": null
        }))
        .unwrap();
        g.text = format!("\n{}\nsecond line", "x".repeat(60));
        assert_eq!(g.preview(), format!("{}…", "x".repeat(50)));
        g.text = "Short?".into();
        assert_eq!(g.preview(), "Short?");
    }
}
