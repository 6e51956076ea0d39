//! The engine's one error type. Every variant says what went wrong in terms
//! a caller can act on, and carries a stable [`ErrorCode`] so the HTTP layer
//! and the UI branch on codes, never on message text.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::decision::DecisionAction;
use crate::gate::{GateStatus, GateTransitionError};
use crate::ids::{GateId, RunId};
use crate::plan::PlanError;
use crate::policy::PolicyError;
use crate::redact::RedactError;
use crate::run::{RunStatus, RunTransitionError};
use crate::scoring::ScoreError;

/// Stable machine-readable error codes.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No such run, gate or key.
    NotFound,
    /// Someone else decided first, or the state forbids the change.
    Conflict,
    /// The input is malformed or breaks a rule.
    Invalid,
    /// The caller may not do this (a gate restricted to other deciders).
    Forbidden,
    /// The database is unusable or newer than this binary.
    Storage,
    /// The database cannot be reached for now (restarting, or the network);
    /// the same request may succeed shortly.
    Unavailable,
}

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// No such thing.
    #[error("no {what} with id `{id}`")]
    NotFound {
        /// What was looked for (run, gate, plan...).
        what: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The gate was decided, expired or cancelled before this attempt.
    #[error("{}", conflict_message(.gate_id, .status, .resolved_by.as_deref(), .resolved_at.as_ref()))]
    GateClosed {
        /// The gate.
        gate_id: GateId,
        /// Its terminal status.
        status: GateStatus,
        /// Who decided it, if it was decided.
        resolved_by: Option<String>,
        /// When it left pending.
        resolved_at: Option<DateTime<Utc>>,
    },
    /// A reviewer tried to vote twice on a quorum gate.
    #[error("{reviewer} has already voted on gate {gate_id}")]
    AlreadyVoted {
        /// The gate.
        gate_id: GateId,
        /// The reviewer.
        reviewer: String,
    },
    /// One of a gate's proposed actions was decided already.
    #[error("action `{action_id}` of gate {gate_id} was already decided by {decided_by} at {decided_at}")]
    ActionDecided {
        /// The gate.
        gate_id: GateId,
        /// The action.
        action_id: String,
        /// Who decided it.
        decided_by: String,
        /// When.
        decided_at: DateTime<Utc>,
    },
    /// A run cannot make this move.
    #[error(transparent)]
    RunTransition(#[from] RunTransitionError),
    /// A gate cannot make this move.
    #[error(transparent)]
    GateTransition(#[from] GateTransitionError),
    /// The run has ended; nothing more can be added to it.
    #[error("run {run_id} is {status:?} and accepts no more {what}")]
    RunEnded {
        /// The run.
        run_id: RunId,
        /// Its terminal status.
        status: RunStatus,
        /// What was attempted (gates, turns...).
        what: &'static str,
    },
    /// The run came in with a recording: it is history, and nothing here
    /// changes it (its status stays as recorded).
    #[error("run {run_id} was imported from a recording: it is history and accepts no {what}")]
    RunImported {
        /// The run.
        run_id: RunId,
        /// What was attempted (gates, turns, status changes...).
        what: &'static str,
    },
    /// The handoff protocol wants a human before another agent turn.
    #[error("run {run_id} has had {turns} agent turns in a row; a human turn or a decided gate is required first")]
    HandoffRequired {
        /// The run.
        run_id: RunId,
        /// Consecutive agent turns so far.
        turns: u32,
    },
    /// The run is paused; its agents wait for their directive until a
    /// reviewer steps or resumes it.
    #[error("run {run_id} is paused ({reason}); wait for its directive (`GET /runs/{run_id}/directive`) before the next agent turn")]
    RunPaused {
        /// The run.
        run_id: RunId,
        /// Why it is paused.
        reason: String,
    },
    /// The decision is not one this gate offers.
    #[error("gate {gate_id} does not allow `{}`; allowed: {}", .action.as_str(), join_actions(.allowed))]
    ActionNotAllowed {
        /// The gate.
        gate_id: GateId,
        /// What was attempted.
        action: DecisionAction,
        /// What the gate offers.
        allowed: Vec<DecisionAction>,
    },
    /// The gate names its deciders, and the caller is not one of them.
    #[error("gate {gate_id} may be decided only by {}; {who} may read it but not decide it", .deciders.join(", "))]
    NotADecider {
        /// The gate.
        gate_id: GateId,
        /// Who tried.
        who: String,
        /// Who may.
        deciders: Vec<String>,
    },
    /// An agent asked for less review than people set for it.
    #[error("{field}: {rule}")]
    Weakens {
        /// The field that would weaken the review, e.g. `hitl_config.run_policy`.
        field: String,
        /// The rule it breaks.
        rule: String,
    },
    /// The token that opened the gate tried to decide it.
    #[error(
        "gate {gate_id} was opened with the same token that tries to decide it; a gate is decided by someone other \
         than who asked: use another reviewer's token, or, for one person working alone, start the server with \
         `gatehouse serve --allow-self-review`"
    )]
    SelfDecision {
        /// The gate.
        gate_id: GateId,
    },
    /// A field of the input is wrong.
    #[error("{field}: {reason}")]
    Invalid {
        /// The offending field, e.g. `payload` or `hitl_config.run_policy`.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A plan operation was refused.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A score is out of range.
    #[error(transparent)]
    Score(#[from] ScoreError),
    /// A policy configuration is invalid.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A redaction pattern is invalid.
    #[error(transparent)]
    Redaction(#[from] RedactError),
    /// A recording cannot be imported.
    #[error("recording rejected: {0}")]
    Recording(String),
    /// The database was written by a newer Gatehouse.
    #[error("the database is at schema version {found}, but this Gatehouse understands only up to {supported}; upgrade Gatehouse")]
    NewerDatabase {
        /// The database's version.
        found: i64,
        /// The newest this binary knows.
        supported: i64,
    },
    /// SQLite or the file system failed.
    #[error("storage error: {0}")]
    Storage(String),
    /// The database server cannot be reached for now (it is restarting, or
    /// the connection to it broke): nothing of the operation was
    /// acknowledged, and trying again shortly may succeed.
    #[error("the database is unavailable for now ({0}); try again shortly")]
    Unavailable(String),
}

fn conflict_message(gate_id: &GateId, status: &GateStatus, by: Option<&str>, at: Option<&DateTime<Utc>>) -> String {
    match (status, by, at) {
        (GateStatus::Resolved, Some(by), Some(at)) => {
            format!("gate {gate_id} was already resolved by {by} at {}", at.to_rfc3339_opts(SecondsFormat::Secs, true))
        }
        (status, _, Some(at)) => format!(
            "gate {gate_id} is already {} (since {})",
            status.as_str(),
            at.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        (status, _, None) => format!("gate {gate_id} is already {}", status.as_str()),
    }
}

fn join_actions(actions: &[DecisionAction]) -> String {
    actions.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ")
}

impl EngineError {
    /// The stable code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::GateClosed { .. }
            | Self::AlreadyVoted { .. }
            | Self::ActionDecided { .. }
            | Self::RunTransition(_)
            | Self::GateTransition(_)
            | Self::RunEnded { .. }
            | Self::RunImported { .. }
            | Self::HandoffRequired { .. }
            | Self::RunPaused { .. } => ErrorCode::Conflict,
            Self::ActionNotAllowed { .. }
            | Self::Invalid { .. }
            | Self::Plan(_)
            | Self::Score(_)
            | Self::Policy(_)
            | Self::Redaction(_)
            | Self::Recording(_) => ErrorCode::Invalid,
            Self::NotADecider { .. } | Self::Weakens { .. } | Self::SelfDecision { .. } => ErrorCode::Forbidden,
            Self::NewerDatabase { .. } | Self::Storage(_) => ErrorCode::Storage,
            Self::Unavailable(_) => ErrorCode::Unavailable,
        }
    }

    /// The field of the input this error is about, where there is one.
    pub fn field(&self) -> Option<String> {
        match self {
            Self::Invalid { field, .. } | Self::Weakens { field, .. } => Some(field.clone()),
            Self::Policy(e) => Some(e.field()),
            _ => None,
        }
    }

    /// Shorthand for an invalid field.
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Invalid { field: field.into(), reason: reason.into() }
    }
}

impl From<rusqlite::Error> for EngineError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Storage(e.to_string())
    }
}

impl From<serde_json::Error> for EngineError {
    fn from(e: serde_json::Error) -> Self {
        Self::Storage(format!("stored JSON is unreadable: {e}"))
    }
}

/// The engine's result type.
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
