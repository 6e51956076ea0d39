//! The event log's vocabulary and its hash chain. Every change appends one
//! typed event in the same transaction as the change; each event's hash
//! covers the previous hash, its sequence number and its body, so removing
//! or altering any recorded decision breaks the chain. With an [`AuditKey`]
//! (kept outside the database) the chain is an HMAC, so a forger who
//! rewrites the database cannot recompute it; an [`AuditAnchor`] kept
//! elsewhere pins the head, so truncation shows too.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::allow_rule::AllowRule;
use crate::decision::{Decision, DecisionInput};
use crate::gate::{ActionDecision, Gate, GateStatus, Priority, Vote};
use crate::ids::{GateId, RunId};
use crate::plan::PlanRevision;
use crate::run::{Breakpoint, Instruction, Run, RunStatus, StepMode, Turn};
use crate::scoring::QualityScore;

/// What happened. Tagged with `type` in JSON.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A run was created.
    RunCreated {
        /// The new run.
        run: Box<Run>,
    },
    /// A run changed status.
    RunStatusChanged {
        /// Before.
        from: RunStatus,
        /// After.
        to: RunStatus,
        /// Why, when there is a reason worth keeping.
        #[serde(default)]
        reason: Option<String>,
    },
    /// A turn was added.
    TurnAdded {
        /// The turn.
        turn: Box<Turn>,
    },
    /// A gate opened and waits for a human.
    GateOpened {
        /// The gate.
        gate: Box<Gate>,
    },
    /// A gate opened and a policy passed it at once.
    GateAutoPassed {
        /// The gate as opened.
        gate: Box<Gate>,
        /// The automatic decision.
        decision: Box<Decision>,
    },
    /// A gate was decided.
    GateResolved {
        /// The gate.
        gate_id: GateId,
        /// The decision.
        decision: Box<Decision>,
    },
    /// A reviewer decided some of a gate's proposed actions; the others
    /// are still open.
    ActionsDecided {
        /// The gate.
        gate_id: GateId,
        /// The decisions taken now, in the gate's order.
        decisions: Vec<ActionDecision>,
    },
    /// Nobody answered in time and the gate's fallback escalated it: it is
    /// now urgent and waits until the new expiry.
    GateEscalated {
        /// The gate.
        gate_id: GateId,
        /// Its new priority.
        priority: Priority,
        /// Its expiry from now on, if it has one.
        #[serde(default)]
        expires_at: Option<DateTime<Utc>>,
        /// Why.
        reason: String,
        /// The reviewers and roles brought in and notified.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        notify: Vec<String>,
    },
    /// A reviewer released a sync gate so its run goes on without waiting:
    /// the gate is async from now on and still open for a decision. Not a
    /// decision: an agent waiting on it is told it was released.
    GateReleased {
        /// The gate.
        gate_id: GateId,
        /// Why, as the release says it.
        reason: String,
    },
    /// A reviewer voted on a quorum gate that is still open.
    VoteRecorded {
        /// The gate.
        gate_id: GateId,
        /// The vote.
        vote: Vote,
    },
    /// A decision arrived after the gate had closed; kept so no input is lost.
    ResolutionRefused {
        /// The gate.
        gate_id: GateId,
        /// Who tried.
        attempted_by: String,
        /// What they tried.
        attempted: Box<DecisionInput>,
        /// The gate's status at the time.
        status: GateStatus,
        /// Who had resolved it.
        #[serde(default)]
        resolved_by: Option<String>,
    },
    /// Nobody answered in time.
    GateExpired {
        /// The gate.
        gate_id: GateId,
        /// Why.
        reason: String,
    },
    /// The gate was withdrawn.
    GateCancelled {
        /// The gate.
        gate_id: GateId,
        /// Why.
        reason: String,
    },
    /// A shared-context key was set.
    ContextSet {
        /// The key.
        key: String,
        /// Before, if it existed.
        #[serde(default)]
        old: Option<serde_json::Value>,
        /// After.
        new: serde_json::Value,
    },
    /// A shared-context key was deleted.
    ContextDeleted {
        /// The key.
        key: String,
        /// Its last value.
        #[serde(default)]
        old: Option<serde_json::Value>,
    },
    /// The run's plan has a new revision.
    PlanRevised {
        /// The revision.
        revision: Box<PlanRevision>,
    },
    /// A deliverable was scored.
    ScoreRecorded {
        /// The agent whose work was scored.
        agent: String,
        /// The gate it was scored at, if any.
        #[serde(default)]
        gate_id: Option<GateId>,
        /// The score.
        score: Box<QualityScore>,
    },
    /// A reviewer changed how the run steps: its mode and breakpoints.
    RunControlChanged {
        /// The new step mode.
        step_mode: StepMode,
        /// The new breakpoints.
        breakpoints: Vec<Breakpoint>,
    },
    /// A reviewer injected an instruction for the run's agents.
    InstructionInjected {
        /// The instruction.
        instruction: Instruction,
    },
    /// A reviewer chose (or, with `null`, stopped choosing) the next agent.
    NextAgentSet {
        /// The agent.
        #[serde(default)]
        agent: Option<String>,
    },
    /// Held instructions and the next-agent choice reached an agent.
    DirectiveDelivered {
        /// The instructions delivered.
        instructions: Vec<Instruction>,
        /// The next agent delivered, if one was chosen.
        #[serde(default)]
        next_agent: Option<String>,
    },
    /// A reviewer made an allow-rule: until it expires or is revoked,
    /// approval gates it matches pass as they open (each such gate's
    /// `gate_auto_passed` names it as the decider, `rule:<id>`). Made while
    /// deciding, it belongs to the decided gate's run.
    AllowRuleCreated {
        /// The rule.
        rule: Box<AllowRule>,
    },
    /// A reviewer revoked an allow-rule: it matches nothing from now on
    /// (bookkeeping; not part of recordings).
    AllowRuleRevoked {
        /// The rule as revoked.
        rule: Box<AllowRule>,
    },
    /// A recording was imported (bookkeeping; not part of recordings).
    RecordingImported {
        /// The runs it brought.
        runs: Vec<RunId>,
        /// How many events it held.
        events: u64,
    },
    /// An API token was created (bookkeeping).
    TokenCreated {
        /// Its public record.
        token: crate::token::Token,
    },
    /// An API token was revoked (bookkeeping).
    TokenRevoked {
        /// Its id.
        token_id: String,
    },
    /// Terminal runs were purged by retention (bookkeeping; not part of recordings).
    RetentionPurged {
        /// The purged runs; their events keep their hashes but lose their bodies.
        runs: Vec<RunId>,
        /// The cutoff.
        older_than: DateTime<Utc>,
    },
    /// A configured alert threshold was crossed (bookkeeping; not part of
    /// recordings). Raised once per crossing, until cleared.
    AlertRaised {
        /// The figure, its threshold and what it means.
        alert: crate::alert::Alert,
    },
    /// An alert's figure went back within its threshold (bookkeeping).
    AlertCleared {
        /// The figure now, its threshold and what it means.
        alert: crate::alert::Alert,
    },
    /// A key of the global memory, kept across runs, was set (an event of no run,
    /// so retention never drops it with the run that wrote it).
    GlobalMemorySet {
        /// The key.
        key: String,
        /// Before, if it existed.
        #[serde(default)]
        old: Option<serde_json::Value>,
        /// After.
        new: serde_json::Value,
        /// The run whose agent set it.
        #[serde(default)]
        from_run: Option<RunId>,
    },
    /// A key of the global memory was deleted.
    GlobalMemoryDeleted {
        /// The key.
        key: String,
        /// Its last value.
        #[serde(default)]
        old: Option<serde_json::Value>,
    },
}

impl EventKind {
    /// The snake_case type name, stored in its own column for filtering.
    pub fn name(&self) -> &'static str {
        match self {
            Self::RunCreated { .. } => "run_created",
            Self::RunStatusChanged { .. } => "run_status_changed",
            Self::TurnAdded { .. } => "turn_added",
            Self::GateOpened { .. } => "gate_opened",
            Self::GateAutoPassed { .. } => "gate_auto_passed",
            Self::GateResolved { .. } => "gate_resolved",
            Self::ActionsDecided { .. } => "actions_decided",
            Self::GateEscalated { .. } => "gate_escalated",
            Self::GateReleased { .. } => "gate_released",
            Self::VoteRecorded { .. } => "vote_recorded",
            Self::ResolutionRefused { .. } => "resolution_refused",
            Self::GateExpired { .. } => "gate_expired",
            Self::GateCancelled { .. } => "gate_cancelled",
            Self::ContextSet { .. } => "context_set",
            Self::ContextDeleted { .. } => "context_deleted",
            Self::PlanRevised { .. } => "plan_revised",
            Self::ScoreRecorded { .. } => "score_recorded",
            Self::RunControlChanged { .. } => "run_control_changed",
            Self::InstructionInjected { .. } => "instruction_injected",
            Self::NextAgentSet { .. } => "next_agent_set",
            Self::DirectiveDelivered { .. } => "directive_delivered",
            Self::AllowRuleCreated { .. } => "allow_rule_created",
            Self::AllowRuleRevoked { .. } => "allow_rule_revoked",
            Self::RecordingImported { .. } => "recording_imported",
            Self::TokenCreated { .. } => "token_created",
            Self::TokenRevoked { .. } => "token_revoked",
            Self::RetentionPurged { .. } => "retention_purged",
            Self::AlertRaised { .. } => "alert_raised",
            Self::AlertCleared { .. } => "alert_cleared",
            Self::GlobalMemorySet { .. } => "global_memory_set",
            Self::GlobalMemoryDeleted { .. } => "global_memory_deleted",
        }
    }

    /// Whether this event describes the work itself (and so belongs in a
    /// recording) rather than the database's own bookkeeping.
    pub fn is_recordable(&self) -> bool {
        !matches!(
            self,
            Self::RecordingImported { .. }
                | Self::RetentionPurged { .. }
                | Self::AlertRaised { .. }
                | Self::AlertCleared { .. }
                | Self::TokenCreated { .. }
                | Self::TokenRevoked { .. }
                | Self::AllowRuleRevoked { .. }
                | Self::GlobalMemorySet { .. }
                | Self::GlobalMemoryDeleted { .. }
        )
    }
}

/// An event's content, everything but its place in the log.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventBody {
    /// When it happened.
    pub at: DateTime<Utc>,
    /// The run it concerns.
    #[serde(default)]
    pub run_id: Option<RunId>,
    /// The run's session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The run's user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Who caused it.
    pub actor: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// A logged event: its body, gap-free sequence number and chained hash.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the log, from 1, without gaps.
    pub seq: u64,
    /// Hex SHA-256 chained to the previous event.
    pub hash: String,
    /// The content.
    #[serde(flatten)]
    pub body: EventBody,
}

/// The hash before the first event.
pub const GENESIS: [u8; 32] = [0; 32];

/// SHA-256 of a stored body.
pub fn body_hash(body_json: &str) -> [u8; 32] {
    Sha256::digest(body_json.as_bytes()).into()
}

/// The chain step: `sha256(prev || seq (big-endian) || body_hash)`. The body
/// enters through its own hash so retention can drop a purged body and keep
/// the chain verifiable.
pub fn chain(prev: &[u8; 32], seq: u64, body_hash: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(prev);
    h.update(seq.to_be_bytes());
    h.update(body_hash);
    h.finalize().into()
}

/// The chain step a writer takes: keyed with `key` when it has one
/// ([`AuditKey::chain`]), else plain [`chain`].
pub fn link(key: Option<&AuditKey>, prev: &[u8; 32], seq: u64, body_hash: &[u8; 32]) -> [u8; 32] {
    match key {
        Some(key) => key.chain(prev, seq, body_hash),
        None => chain(prev, seq, body_hash),
    }
}

/// The secret that keys the chain: `hmac-sha256(key, prev || seq ||
/// body_hash)`, the same bytes as [`chain`]. Kept outside the database (a
/// 0600 file beside the admin token, the OS keychain, or
/// `GATEHOUSE_AUDIT_KEY`), so whoever can write the database cannot forge
/// a chain that verifies with it. A log written before its key keeps its
/// plain links: verification accepts plain links only before the first
/// keyed one.
#[derive(Clone)]
pub struct AuditKey(std::sync::Arc<Hmac<Sha256>>);

impl AuditKey {
    /// Shortest secret accepted, in bytes.
    pub const MIN_LEN: usize = 32;

    /// A key from its text (as [`AuditKey::generate`] writes it, or any
    /// secret of at least [`AuditKey::MIN_LEN`] bytes); surrounding
    /// whitespace is ignored.
    pub fn from_text(text: &str) -> Result<Self, String> {
        let secret = text.trim();
        if secret.len() < Self::MIN_LEN {
            return Err(format!("an audit key needs at least {} characters", Self::MIN_LEN));
        }
        let mac = Hmac::new_from_slice(secret.as_bytes()).map_err(|e| e.to_string())?;
        Ok(Self(std::sync::Arc::new(mac)))
    }

    /// A new random secret's text: 64 hex digits (two random UUIDs, as
    /// token secrets are made).
    pub fn generate() -> String {
        format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
    }

    /// The keyed chain step.
    pub fn chain(&self, prev: &[u8; 32], seq: u64, body_hash: &[u8; 32]) -> [u8; 32] {
        // The keyed state is computed once; each link starts from a copy.
        let mut mac = Hmac::<Sha256>::clone(&self.0);
        mac.update(prev);
        mac.update(&seq.to_be_bytes());
        mac.update(body_hash);
        mac.finalize().into_bytes().into()
    }
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditKey([redacted])")
    }
}

/// The log's head as someone kept it elsewhere: `SEQ:HASH` (hex). Verifying
/// against it proves the log still holds that event with that hash, so
/// nothing up to it was truncated or rewritten.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditAnchor {
    /// The head's sequence number (0 for an empty log).
    pub seq: u64,
    /// Its chained hash, hex.
    pub hash: String,
}

impl std::fmt::Display for AuditAnchor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.seq, self.hash)
    }
}

impl std::str::FromStr for AuditAnchor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not an anchor: expected SEQ:HASH, as `gatehouse audit anchor` prints it");
        let (seq, hash) = s.trim().split_once(':').ok_or_else(bad)?;
        let seq = seq.parse().map_err(|_| bad())?;
        let hash = hash.to_ascii_lowercase();
        if hash.len() != 64 || hex::decode(&hash).is_err() {
            return Err(bad());
        }
        Ok(Self { seq, hash })
    }
}

/// A stored event row as read for verification.
#[derive(Debug, Clone)]
pub struct EventRow {
    /// Sequence number.
    pub seq: u64,
    /// Run, if any.
    pub run_id: Option<String>,
    /// Body JSON, `None` once purged.
    pub body: Option<String>,
    /// Stored body hash.
    pub body_hash: Vec<u8>,
    /// Stored chain hash.
    pub hash: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_depends_on_previous_hash_sequence_and_body() {
        let b = body_hash("{}");
        let h1 = chain(&GENESIS, 1, &b);
        assert_ne!(h1, chain(&GENESIS, 2, &b));
        assert_ne!(h1, chain(&[1; 32], 1, &b));
        assert_ne!(h1, chain(&GENESIS, 1, &body_hash("{ }")));
        assert_eq!(h1, chain(&GENESIS, 1, &b));
    }

    #[test]
    fn a_keyed_link_differs_from_a_plain_one_and_from_another_keys() {
        let b = body_hash("{}");
        let key = AuditKey::from_text(&AuditKey::generate()).unwrap();
        let other = AuditKey::from_text(&AuditKey::generate()).unwrap();
        let keyed = link(Some(&key), &GENESIS, 1, &b);
        assert_ne!(keyed, chain(&GENESIS, 1, &b));
        assert_ne!(keyed, other.chain(&GENESIS, 1, &b));
        assert_eq!(keyed, key.chain(&GENESIS, 1, &b));
        assert!(AuditKey::from_text("too short").is_err());
    }

    #[test]
    fn an_anchor_reads_back_what_it_prints() {
        let anchor = AuditAnchor { seq: 42, hash: hex::encode([7u8; 32]) };
        assert_eq!(anchor.to_string().parse::<AuditAnchor>().unwrap(), anchor);
        assert!("42".parse::<AuditAnchor>().is_err());
        assert!("x:00".parse::<AuditAnchor>().is_err());
    }

    #[test]
    fn event_json_is_flat_with_a_type_tag() {
        let e = Event {
            seq: 7,
            hash: "ab".into(),
            body: EventBody {
                at: DateTime::<Utc>::from_timestamp(0, 0).unwrap_or_default(),
                run_id: Some(RunId::from("run_1")),
                session_id: None,
                user_id: None,
                actor: "alice".into(),
                kind: EventKind::GateExpired { gate_id: GateId::from("gate_1"), reason: "late".into() },
            },
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "gate_expired");
        assert_eq!(v["seq"], 7);
        assert_eq!(v["gate_id"], "gate_1");
        let back: Event = serde_json::from_value(v).unwrap();
        assert_eq!(back, e);
    }
}
