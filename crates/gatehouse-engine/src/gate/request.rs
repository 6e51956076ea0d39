//! What an agent supplies to open a gate (`NewGate`): the request before
//! the engine checks it and makes it a [`Gate`](super::Gate). The tools'
//! own gates are built by the constructors in `tool_gates.rs`.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::*;

/// What an agent supplies to open a gate.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewGate {
    /// Kind-specific content (carries the `kind` tag).
    #[serde(flatten)]
    pub spec: GateSpec,
    /// Sync, async or advisory.
    #[serde(default)]
    pub mode: BlockingMode,
    /// Urgency.
    #[serde(default)]
    pub priority: Priority,
    /// The asking agent; defaults to the run's agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// The question or action, markdown.
    pub text: String,
    /// Task and step.
    #[serde(default)]
    pub context: GateContext,
    /// The proposed payload.
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
    /// To diff the payload against.
    #[serde(default)]
    pub example_input: Option<serde_json::Value>,
    /// Decisions a reviewer may take; defaults by kind.
    #[serde(default)]
    pub allowed_actions: Vec<DecisionAction>,
    /// Never auto-passed.
    #[serde(default)]
    pub requires_human: bool,
    /// The agent's confidence in its proposal, 0..1: a run policy with
    /// `confidence_min` passes a gate only when it is reported and high enough.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Safety concerns the agent flagged (nsfw, pii...).
    #[serde(default)]
    pub safety_flags: Vec<String>,
    /// Several reviewers must agree.
    #[serde(default)]
    pub quorum: Option<Quorum>,
    /// Several proposed actions, each decided on its own (approval gates
    /// only): an agent's parallel tool calls in one gate.
    #[serde(default)]
    pub actions: Vec<ProposedAction>,
    /// The form of the answer wanted: a JSON Schema of an object (string,
    /// number, integer, boolean and enum fields with defaults; nested
    /// objects). A reviewer's `respond` must carry a `response` it accepts.
    #[serde(default)]
    pub response_schema: Option<serde_json::Value>,
    /// Opaque state to get back with the decision (at most 64 KiB of JSON;
    /// secrets in it are redacted like everything stored).
    #[serde(default)]
    pub agent_state: Option<serde_json::Value>,
    /// Preset answers or rejections (at most 9): each is one key press for
    /// the reviewer (1 to 9) and one of the gate's allowed decisions.
    #[serde(default)]
    pub options: Vec<PresetOption>,
    /// What happens when nobody answers in time (needs an expiry): expire
    /// (the default), reject, approve (never for `requires_human` gates or
    /// runs whose policy requires a human), escalate once, or fail the run.
    #[serde(default)]
    pub on_timeout: TimeoutFallback,
    /// Seconds until it expires; question gates default to 24 h, others never.
    #[serde(default)]
    pub expires_in_secs: Option<u64>,
    /// What the payload should look like: a JSON Schema (the tool's input
    /// schema, say). A payload that does not fit still opens the gate, with
    /// its problems listed and approving it as is withheld.
    #[serde(default)]
    pub payload_schema: Option<serde_json::Value>,
    /// Who may decide it: reviewers by name, or `role:NAME` for everyone
    /// whose token has that role (`admin`, `reviewer`) or team (at most 50).
    #[serde(default)]
    pub deciders: Vec<String>,
    /// Seconds after which, still pending, it escalates: its priority rises
    /// a step (to high at least), `escalate_to` may decide it too and are
    /// notified (webhook, desktop notification), and its timeline says so.
    #[serde(default)]
    pub escalate_after_secs: Option<u64>,
    /// Reviewers (`alice`) or roles (`role:sre`) an escalation brings in.
    #[serde(default)]
    pub escalate_to: Vec<String>,
    /// The workflow node this gate belongs to. When the run declared a gate
    /// for it, the declared kind, rubric, required score and review apply;
    /// what is sent here may only add to them.
    #[serde(default)]
    pub workflow_node_id: Option<String>,
    /// The agent's idempotency key: a retry with the same key returns the
    /// first gate instead of opening a second.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// The id of the API token opening it, set by the server from the
    /// request's credentials, never from its body.
    #[serde(skip)]
    pub opened_by: Option<String>,
}

impl NewGate {
    /// A gate of `spec` asking `text`, with every other field defaulted.
    pub fn new(spec: GateSpec, text: impl Into<String>) -> Self {
        Self {
            spec,
            mode: BlockingMode::Sync,
            priority: Priority::Normal,
            agent: None,
            text: text.into(),
            context: GateContext::default(),
            payload: None,
            example_input: None,
            allowed_actions: Vec::new(),
            requires_human: false,
            confidence: None,
            safety_flags: Vec::new(),
            quorum: None,
            actions: Vec::new(),
            response_schema: None,
            agent_state: None,
            options: Vec::new(),
            on_timeout: TimeoutFallback::Expire,
            expires_in_secs: None,
            payload_schema: None,
            deciders: Vec::new(),
            escalate_after_secs: None,
            escalate_to: Vec::new(),
            workflow_node_id: None,
            idempotency_key: None,
            opened_by: None,
        }
    }

    /// A blocker question.
    pub fn question(text: impl Into<String>) -> Self {
        Self::new(GateSpec::Question {}, text)
    }

    /// An approval of `action` with `payload`.
    pub fn approval(action: impl Into<String>, text: impl Into<String>, payload: serde_json::Value) -> Self {
        let mut gate = Self::new(GateSpec::Approval { action: action.into() }, text);
        gate.payload = Some(payload);
        gate
    }

    /// When the gate expires if opened at `now`.
    pub fn expiry(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match (self.expires_in_secs, self.spec.kind()) {
            (Some(secs), _) => Some(now + Duration::seconds(secs.min(MAX_WAIT_SECS) as i64)),
            (None, GateKind::Question) => Some(now + DEFAULT_QUESTION_EXPIRY),
            (None, _) => None,
        }
    }
}
