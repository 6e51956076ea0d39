//! Runs and turns. A run is the one concept behind a collaboration session,
//! a LangGraph thread, a blocker's task and an orchestrated model run; its
//! status machine covers every seed's states and refuses every other move.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{RunId, TurnId};
use crate::plan::ExecutionMode;
use crate::policy::HitlConfig;

/// Where a run is in its life. `Completed`, `Failed` and `Cancelled` are
/// terminal: nothing leaves them.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created, not yet started (seed 004's `queued`).
    #[serde(alias = "queued")]
    Created,
    /// Agents are working.
    Active,
    /// A blocking gate waits for a human.
    AwaitingHuman,
    /// A reviewer paused the run.
    Paused,
    /// Finished successfully.
    Completed,
    /// Finished with an error (for example a blocking gate expired).
    Failed,
    /// Stopped by a person (seed 000's `aborted`).
    #[serde(alias = "aborted")]
    Cancelled,
}

/// Every way a run's status can be asked to change.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunTransition {
    /// created → active.
    Start,
    /// active → awaiting_human, when a blocking gate opens.
    AwaitHuman,
    /// awaiting_human → active, when the last blocking gate is decided.
    HumanAnswered,
    /// active or awaiting_human → paused.
    Pause,
    /// paused → active.
    Resume,
    /// paused → awaiting_human, when blocking gates are still pending.
    ResumeAwaiting,
    /// active → completed.
    Complete,
    /// any live state → failed.
    Fail,
    /// any live state → cancelled.
    Cancel,
}

/// A refused status change, naming both ends.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("a run that is {from:?} cannot {transition:?}")]
pub struct RunTransitionError {
    /// Where the run was.
    pub from: RunStatus,
    /// What was asked.
    pub transition: RunTransition,
}

impl RunStatus {
    /// Whether nothing can change this run any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The status after `t`, or the typed refusal.
    pub fn apply(self, t: RunTransition) -> Result<RunStatus, RunTransitionError> {
        use RunStatus::*;
        use RunTransition::*;
        let next = match (self, t) {
            (Created, Start) => Active,
            (Active, AwaitHuman) => AwaitingHuman,
            (AwaitingHuman, HumanAnswered) => Active,
            (Active | AwaitingHuman, Pause) => Paused,
            (Paused, Resume) => Active,
            (Paused, ResumeAwaiting) => AwaitingHuman,
            (Active, Complete) => Completed,
            (Created | Active | AwaitingHuman | Paused, Fail) => Failed,
            (Created | Active | AwaitingHuman | Paused, Cancel) => Cancelled,
            (from, transition) => return Err(RunTransitionError { from, transition }),
        };
        Ok(next)
    }

    /// All statuses, for exhaustive tests and filters.
    pub const ALL: [RunStatus; 7] = [
        Self::Created,
        Self::Active,
        Self::AwaitingHuman,
        Self::Paused,
        Self::Completed,
        Self::Failed,
        Self::Cancelled,
    ];

    /// The snake_case name used in storage and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Active => "active",
            Self::AwaitingHuman => "awaiting_human",
            Self::Paused => "paused",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// Who takes part in a run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A person.
    Human,
    /// An AI agent.
    Agent,
    /// Gatehouse itself (policies, sweeps).
    System,
}

/// A named participant of a run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Participant {
    /// Display name, e.g. `BackendWorker-abc123` or `alice`.
    pub name: String,
    /// What kind of participant this is.
    pub role: Role,
}

/// Turn-taking rules (seed 000's handoff protocol).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HandoffProtocol {
    /// After this many agent turns in a row, a human turn or a decided gate
    /// is required before another agent turn is accepted.
    #[serde(default)]
    pub max_consecutive_agent_turns: Option<u32>,
    /// Quality gates scored automatically at or above this pass without a
    /// human, unless the gate `requires_human`.
    #[serde(default)]
    pub auto_approve_threshold: Option<f64>,
}

/// Step-through control of a run (seed 003's execution modes).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepMode {
    /// Normal execution without pauses.
    #[default]
    Continuous,
    /// Pause after each agent turn until a reviewer steps.
    Step,
    /// Pause on breakpoint conditions.
    Breakpoint,
}

/// One run, as callers see it: an immutable snapshot.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The run's id.
    pub id: RunId,
    /// Human-readable title.
    pub title: String,
    /// The agent that drives the run.
    pub agent: String,
    /// The user on whose behalf it runs.
    pub user_id: Option<String>,
    /// The session it belongs to.
    pub session_id: Option<String>,
    /// Who takes part.
    pub participants: Vec<Participant>,
    /// Where it is.
    pub status: RunStatus,
    /// Why it failed or was cancelled.
    pub status_reason: Option<String>,
    /// Review policy for its gates.
    pub hitl_config: HitlConfig,
    /// Turn-taking rules.
    pub protocol: HandoffProtocol,
    /// Seed 003's execution mode of its plan.
    pub execution_mode: ExecutionMode,
    /// Step-through control.
    pub step_mode: StepMode,
    /// The input it was started with (redacted).
    pub input: serde_json::Value,
    /// The final result, once completed.
    pub result: Option<serde_json::Value>,
    /// Turns so far.
    pub turn_count: u32,
    /// Agent turns since the last human turn or decided gate.
    pub consecutive_agent_turns: u32,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

/// What a caller supplies to create a run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NewRun {
    /// Human-readable title.
    #[serde(default)]
    pub title: String,
    /// The driving agent's name.
    #[serde(default)]
    pub agent: String,
    /// The user.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Participants besides the agent.
    #[serde(default)]
    pub participants: Vec<Participant>,
    /// Review policy.
    #[serde(default)]
    pub hitl_config: HitlConfig,
    /// Turn-taking rules.
    #[serde(default)]
    pub protocol: HandoffProtocol,
    /// Step-through control.
    #[serde(default)]
    pub step_mode: StepMode,
    /// The run's input.
    #[serde(default)]
    pub input: serde_json::Value,
}

/// What a caller supplies to add a turn.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTurn {
    /// Human, agent or system.
    pub role: Role,
    /// Who speaks; defaults to the caller's identity.
    #[serde(default)]
    pub actor: Option<String>,
    /// What they say (markdown).
    pub content: String,
    /// An optional 1..5 quality score of the turn's deliverable.
    #[serde(default)]
    pub score: Option<f64>,
    /// Free-form data (tool calls, artifacts).
    #[serde(default)]
    pub metadata: serde_json::Value,
}

impl NewTurn {
    /// A turn of `role` saying `content`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self { role, actor: None, content: content.into(), score: None, metadata: serde_json::Value::Null }
    }
}

/// One turn: who spoke, what they said, and an optional score.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The turn's id.
    pub id: TurnId,
    /// Its run.
    pub run_id: RunId,
    /// Position in the run, from 1.
    pub index: u32,
    /// Human, agent or system.
    pub role: Role,
    /// Who spoke.
    pub actor: String,
    /// What they said (markdown).
    pub content: String,
    /// An optional quality score of this turn's deliverable.
    pub score: Option<f64>,
    /// Free-form data (tool calls, artifacts).
    #[serde(default)]
    pub metadata: serde_json::Value,
    /// When.
    pub at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(from: RunStatus, t: RunTransition) -> Option<RunStatus> {
        use RunStatus::*;
        use RunTransition::*;
        Some(match (from, t) {
            (Created, Start) => Active,
            (Active, AwaitHuman) => AwaitingHuman,
            (AwaitingHuman, HumanAnswered) => Active,
            (Active, Pause) | (AwaitingHuman, Pause) => Paused,
            (Paused, Resume) => Active,
            (Paused, ResumeAwaiting) => AwaitingHuman,
            (Active, Complete) => Completed,
            (s, Fail) if !s.is_terminal() => Failed,
            (s, Cancel) if !s.is_terminal() => Cancelled,
            _ => return None,
        })
    }

    const TRANSITIONS: [RunTransition; 9] = [
        RunTransition::Start,
        RunTransition::AwaitHuman,
        RunTransition::HumanAnswered,
        RunTransition::Pause,
        RunTransition::Resume,
        RunTransition::ResumeAwaiting,
        RunTransition::Complete,
        RunTransition::Fail,
        RunTransition::Cancel,
    ];

    #[test]
    fn every_allowed_run_transition_lands_where_the_table_says() {
        let mut allowed_count = 0;
        for from in RunStatus::ALL {
            for t in TRANSITIONS {
                if let Some(to) = allowed(from, t) {
                    allowed_count += 1;
                    assert_eq!(from.apply(t), Ok(to), "{from:?} {t:?}");
                }
            }
        }
        // 8 explicit moves (pause from two states) plus fail and cancel from the 4 live states.
        assert_eq!(allowed_count, 8 + 8);
    }

    #[test]
    fn every_forbidden_run_transition_is_a_typed_error_naming_both_ends() {
        let mut forbidden = 0;
        for from in RunStatus::ALL {
            for t in TRANSITIONS {
                if allowed(from, t).is_none() {
                    forbidden += 1;
                    let err = from.apply(t).unwrap_err();
                    assert_eq!((err.from, err.transition), (from, t));
                }
            }
        }
        assert_eq!(forbidden, 7 * 9 - 16);
    }

    #[test]
    fn terminal_runs_have_no_way_back() {
        for from in [RunStatus::Completed, RunStatus::Failed, RunStatus::Cancelled] {
            assert!(TRANSITIONS.iter().all(|t| from.apply(*t).is_err()));
        }
    }

    #[test]
    fn seed_spellings_aborted_and_queued_are_accepted() {
        let s: RunStatus = serde_json::from_str("\"aborted\"").unwrap();
        assert_eq!(s, RunStatus::Cancelled);
        let s: RunStatus = serde_json::from_str("\"queued\"").unwrap();
        assert_eq!(s, RunStatus::Created);
        assert_eq!(serde_json::to_string(&RunStatus::AwaitingHuman).unwrap(), "\"awaiting_human\"");
    }
}
