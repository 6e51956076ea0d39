//! Runs and turns. A run is the one concept behind a collaboration session,
//! a LangGraph thread, a blocker's task and an orchestrated model run; its
//! status machine covers all of their states and refuses every other move.
//! Over 600 lines only with its tests: the code above them is about 500, the
//! run, its status machine and its turn, which read best together.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{RunId, TurnId};
use crate::plan::ExecutionMode;
use crate::policy::HitlConfig;

/// Where a run is in its life. `Completed`, `Failed` and `Cancelled` are
/// terminal: nothing an agent sends leaves them, and `Completed` is final; a
/// failed or cancelled run comes back only through a reviewer's retry.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Created, not yet started (queued).
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
    /// Stopped by a person (a session's `aborted`).
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
    /// awaiting_human → active: a reviewer resumed it without waiting, its
    /// sync gates released (async, still open for a decision).
    Release,
    /// active → completed.
    Complete,
    /// any live state → failed.
    Fail,
    /// any live state → cancelled.
    Cancel,
    /// failed or cancelled → active: a reviewer tries the run again from
    /// its last good step, its history kept.
    Retry,
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
    /// Every status a run can still change from: the runs still at work.
    pub const LIVE: [RunStatus; 4] = [Self::Created, Self::Active, Self::AwaitingHuman, Self::Paused];

    /// Whether the run has ended (a reviewer may still retry a failed or cancelled one).
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
            (AwaitingHuman, Release) => Active,
            (Active, Complete) => Completed,
            (Created | Active | AwaitingHuman | Paused, Fail) => Failed,
            (Created | Active | AwaitingHuman | Paused, Cancel) => Cancelled,
            (Failed | Cancelled, Retry) => Active,
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

/// Turn-taking rules between a run's agents: its handoff protocol.
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

/// Step-through control of a run: its execution mode.
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

/// A condition that pauses a run in [`StepMode::Breakpoint`] after the
/// agent turn that meets it. Agents describe a turn's tool calls, handoffs
/// and errors in its `metadata`: `tool_call` (`{"tool_name": ..}`) or
/// `tool_calls` (a list of those), `handoff` (`{"destination_agent": ..}`,
/// or a tool call named `handoff`/`parallel_handoff`), `error`, and the
/// named `step` it reports.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "on", rename_all = "snake_case")]
pub enum Breakpoint {
    /// A tool call, of any tool or of the one named.
    ToolCall {
        /// Only this tool; any when absent.
        #[serde(default)]
        tool: Option<String>,
    },
    /// A handoff, to anyone or to the agent named.
    Handoff {
        /// Only handoffs to this agent; any when absent.
        #[serde(default)]
        to: Option<String>,
    },
    /// A turn that reports an error.
    Error,
    /// Any turn by this agent.
    Agent {
        /// The agent's name.
        name: String,
    },
    /// A turn that reports this step (its metadata's `step`), such as an
    /// orchestrated run's `call` or `response_review`.
    Step {
        /// The step's name.
        name: String,
    },
}

impl Breakpoint {
    /// Why `turn` trips this breakpoint, or `None` when it does not.
    pub fn hit(&self, turn: &Turn) -> Option<String> {
        let meta = &turn.metadata;
        let calls: Vec<&serde_json::Value> = meta
            .get("tool_call")
            .into_iter()
            .chain(meta.get("tool_calls").and_then(|c| c.as_array()).into_iter().flatten())
            .collect();
        let call_name = |c: &&serde_json::Value| {
            c.get("tool_name").or_else(|| c.get("name")).and_then(|n| n.as_str()).map(str::to_owned)
        };
        match self {
            Self::ToolCall { tool } => calls
                .iter()
                .filter_map(call_name)
                .find(|name| tool.as_deref().is_none_or(|t| t == name))
                .map(|name| format!("breakpoint: tool call `{name}`")),
            Self::Handoff { to } => {
                let mut targets: Vec<Option<String>> = Vec::new();
                if let Some(h) = meta.get("handoff").filter(|h| !h.is_null()) {
                    targets.push(destination(h));
                }
                for c in &calls {
                    if matches!(call_name(c).as_deref(), Some("handoff" | "parallel_handoff")) {
                        targets.push(c.get("args").and_then(destination));
                    }
                }
                targets.into_iter().find(|t| to.is_none() || t == to).map(|t| match t {
                    Some(t) => format!("breakpoint: handoff to `{t}`"),
                    None => "breakpoint: handoff".to_owned(),
                })
            }
            Self::Error => meta
                .get("error")
                .filter(|e| !e.is_null() && *e != &serde_json::Value::Bool(false))
                .map(|_| "breakpoint: the turn reports an error".to_owned()),
            Self::Agent { name } => (turn.actor == *name).then(|| format!("breakpoint: a turn by `{name}`")),
            Self::Step { name } => (meta.get("step").and_then(|s| s.as_str()) == Some(name.as_str()))
                .then(|| format!("breakpoint: step `{name}`")),
        }
    }
}

fn destination(v: &serde_json::Value) -> Option<String> {
    let name = v.get("destination_agent").or_else(|| v.get("to")).or_else(|| v.get("agent")).unwrap_or(v);
    name.as_str().map(str::to_owned)
}

/// A reviewer's instruction for a run's agents, held until an agent picks
/// up its next directive.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instruction {
    /// Its id (`ins_...`).
    pub id: String,
    /// What the reviewer says (markdown).
    pub text: String,
    /// Who said it.
    pub by: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// A run's intervention state: what is kept between turns.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RunControl {
    /// Conditions that pause the run in breakpoint mode.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// Reviewer instructions not yet delivered to an agent.
    #[serde(default)]
    pub pending_instructions: Vec<Instruction>,
    /// The agent a reviewer chose to act next, not yet delivered.
    #[serde(default)]
    pub next_agent: Option<String>,
}

/// What an agent should do now.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectiveAction {
    /// Carry on (the run is active, or waits on a gate the agent is waiting for).
    Continue,
    /// Hold: a reviewer paused the run, or step or breakpoint mode stopped it.
    Paused,
    /// Stop: the run was cancelled.
    Cancelled,
    /// Stop: the run completed or failed.
    Finished,
}

/// The answer to an agent's turn: whether to go on, and what reviewers said.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Directive {
    /// What to do.
    pub action: DirectiveAction,
    /// The run's status.
    pub run_status: RunStatus,
    /// Why it is paused or ended, when known.
    pub reason: Option<String>,
    /// Its step mode.
    pub step_mode: StepMode,
    /// Reviewer instructions delivered now (each exactly once).
    pub instructions: Vec<Instruction>,
    /// The agent a reviewer chose to act next, delivered now.
    pub next_agent: Option<String>,
}

impl Directive {
    /// The directive `run` implies, without delivering anything.
    pub fn of(run: &Run) -> Self {
        let action = match run.status {
            RunStatus::Created | RunStatus::Active | RunStatus::AwaitingHuman => DirectiveAction::Continue,
            RunStatus::Paused => DirectiveAction::Paused,
            RunStatus::Cancelled => DirectiveAction::Cancelled,
            RunStatus::Completed | RunStatus::Failed => DirectiveAction::Finished,
        };
        Self {
            action,
            run_status: run.status,
            reason: run.status_reason.clone(),
            step_mode: run.step_mode,
            instructions: Vec::new(),
            next_agent: None,
        }
    }
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
    /// The run whose agent started this one (a sub-agent's run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<RunId>,
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
    /// How the run's plan is executed.
    pub execution_mode: ExecutionMode,
    /// Step-through control.
    pub step_mode: StepMode,
    /// Breakpoints, pending reviewer instructions and the next-agent
    /// override: where a reviewer intervenes.
    #[serde(default)]
    pub control: RunControl,
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
    /// Set when the run came in with a recording (history, not live work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<crate::recording::Imported>,
    /// When the run expires: the sweep then cancels it, once, and its
    /// pending gates expire. None: it never does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// How many times a reviewer retried it after it failed or was cancelled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// Gates declared with the run, each opened when the run reaches its workflow node.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_gates: Vec<crate::gate::DeclaredGate>,
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
    /// The parent run, when a sub-agent's run is started from another run.
    #[serde(default)]
    pub parent_run_id: Option<RunId>,
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
    /// Conditions that pause the run in breakpoint mode.
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
    /// The run's input.
    #[serde(default)]
    pub input: serde_json::Value,
    /// When the run expires (cancelled by the sweep, its pending gates
    /// expired); must be in the future. None: it never does.
    #[serde(default)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Gates declared up front, each bound to a workflow node: reaching the
    /// node opens its gate with the declared kind, rubric and required score.
    #[serde(default)]
    pub declared_gates: Vec<crate::gate::DeclaredGate>,
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

fn is_zero(n: &u32) -> bool {
    *n == 0
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
            (AwaitingHuman, Release) => Active,
            (Active, Complete) => Completed,
            (s, Fail) if !s.is_terminal() => Failed,
            (s, Cancel) if !s.is_terminal() => Cancelled,
            (Failed | Cancelled, Retry) => Active,
            _ => return None,
        })
    }

    const TRANSITIONS: [RunTransition; 10] = [
        RunTransition::Start,
        RunTransition::AwaitHuman,
        RunTransition::HumanAnswered,
        RunTransition::Pause,
        RunTransition::Resume,
        RunTransition::ResumeAwaiting,
        RunTransition::Complete,
        RunTransition::Fail,
        RunTransition::Cancel,
        RunTransition::Retry,
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
        // 8 explicit moves (pause from two states), fail and cancel from the 4 live
        // states, and a retry from failed or cancelled.
        assert_eq!(allowed_count, 8 + 8 + 2);
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
        assert_eq!(forbidden, 7 * 10 - 18);
    }

    #[test]
    fn an_ended_run_comes_back_only_by_a_retry_and_a_completed_one_never() {
        assert!(TRANSITIONS.iter().all(|t| RunStatus::Completed.apply(*t).is_err()));
        for from in [RunStatus::Failed, RunStatus::Cancelled] {
            for t in TRANSITIONS {
                assert_eq!(from.apply(t).is_ok(), t == RunTransition::Retry, "{from:?} {t:?}");
            }
        }
    }

    #[test]
    fn the_older_spellings_aborted_and_queued_are_accepted() {
        let s: RunStatus = serde_json::from_str("\"aborted\"").unwrap();
        assert_eq!(s, RunStatus::Cancelled);
        let s: RunStatus = serde_json::from_str("\"queued\"").unwrap();
        assert_eq!(s, RunStatus::Created);
        assert_eq!(serde_json::to_string(&RunStatus::AwaitingHuman).unwrap(), "\"awaiting_human\"");
    }

    #[test]
    fn a_step_breakpoint_trips_only_on_its_named_step() {
        let turn = |meta: serde_json::Value| Turn {
            id: TurnId::new(),
            run_id: RunId::new(),
            index: 1,
            role: Role::Agent,
            actor: "gatehouse".into(),
            content: String::new(),
            score: None,
            metadata: meta,
            at: Utc::now(),
        };
        let b = Breakpoint::Step { name: "call".into() };
        assert_eq!(b.hit(&turn(serde_json::json!({"step": "call"}))).as_deref(), Some("breakpoint: step `call`"));
        assert_eq!(b.hit(&turn(serde_json::json!({"step": "payload_review"}))), None);
        assert_eq!(b.hit(&turn(serde_json::Value::Null)), None);
        let parsed: Breakpoint = serde_json::from_str(r#"{"on":"step","name":"call"}"#).unwrap();
        assert_eq!(parsed, b);
    }
}
