//! Step-through control of a run: step and breakpoint modes
//! that pause a run after an agent's turn, stepping a paused run one turn
//! on, and the reviewer's interventions an agent receives with its next
//! directive: injected instructions and the choice of the next agent.
//! Everything is kept on the run, so it survives restarts and recordings.

use chrono::{DateTime, Utc};

use crate::engine::tx::{emit, ensure_live, load_run, not_found_run, set_status};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::ids::RunId;
use crate::run::{Breakpoint, Directive, DirectiveAction, Instruction, Run, RunStatus, RunTransition, StepMode, Turn};
use crate::store::{Store, WriteTx};

/// At most this many breakpoints per run.
pub const MAX_BREAKPOINTS: usize = 100;
/// At most this many undelivered instructions per run.
pub const MAX_PENDING_INSTRUCTIONS: usize = 100;
/// The longest instruction, in characters.
pub const MAX_INSTRUCTION_CHARS: usize = 20_000;

/// Who pauses a run when step or breakpoint mode stops it.
const SYSTEM: &str = "gatehouse";

impl<S: Store> Engine<S> {
    /// Sets how a live run steps: continuous, step (pause after every agent
    /// turn) or breakpoint (pause after a turn that trips a breakpoint).
    pub fn set_run_control(
        &self,
        id: &RunId,
        step_mode: StepMode,
        breakpoints: Vec<Breakpoint>,
        actor: &str,
    ) -> Result<Run> {
        let breakpoints = self.redacted(breakpoints)?;
        check_breakpoints(&breakpoints)?;
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            ensure_live(&run, "control changes")?;
            run.step_mode = step_mode;
            run.control.breakpoints = breakpoints.clone();
            run.updated_at = now;
            tx.update_run(&run)?;
            emit(tx, &run, &actor, now, EventKind::RunControlChanged { step_mode, breakpoints })?;
            Ok(run)
        })
    }

    /// Lets a paused run go on for one agent turn: in step mode the next
    /// agent turn pauses it again. Only a paused run can step.
    pub fn step_run(&self, id: &RunId, actor: &str) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            let t = if tx.pending_blocking_gates(&run.id)? > 0 {
                RunTransition::ResumeAwaiting
            } else {
                RunTransition::Resume
            };
            set_status(tx, &mut run, t, &actor, Some(format!("stepped by {actor}")), now)?;
            Ok(run)
        })
    }

    /// Holds an instruction for the run's agents until one of them asks
    /// for its next directive.
    pub fn inject_instruction(&self, id: &RunId, text: &str, actor: &str) -> Result<Instruction> {
        let text = text.trim();
        if text.is_empty() {
            return Err(EngineError::invalid("text", "an instruction must say something"));
        }
        if text.chars().count() > MAX_INSTRUCTION_CHARS {
            return Err(EngineError::invalid("text", format!("at most {MAX_INSTRUCTION_CHARS} characters")));
        }
        let now = self.now();
        let instruction = Instruction {
            id: format!("ins_{}", uuid::Uuid::now_v7().simple()),
            text: self.redactor().redact_str(text).into_owned(),
            by: actor.to_owned(),
            at: now,
        };
        let (id, actor) = (id.clone(), actor.to_owned());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            ensure_live(&run, "instructions")?;
            if run.control.pending_instructions.len() >= MAX_PENDING_INSTRUCTIONS {
                return Err(EngineError::invalid(
                    "text",
                    format!("run {} already holds {MAX_PENDING_INSTRUCTIONS} undelivered instructions", run.id),
                ));
            }
            run.control.pending_instructions.push(instruction.clone());
            run.updated_at = now;
            tx.update_run(&run)?;
            emit(tx, &run, &actor, now, EventKind::InstructionInjected { instruction: instruction.clone() })?;
            Ok(instruction)
        })
    }

    /// Chooses the agent that acts next (`None` withdraws the choice); the
    /// choice reaches the run's agents with their next directive.
    pub fn set_next_agent(&self, id: &RunId, agent: Option<&str>, actor: &str) -> Result<Run> {
        let agent = agent.map(str::trim).filter(|a| !a.is_empty()).map(|a| self.redacted_text(a));
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            ensure_live(&run, "next-agent choices")?;
            run.control.next_agent = agent.clone();
            run.updated_at = now;
            tx.update_run(&run)?;
            emit(tx, &run, &actor, now, EventKind::NextAgentSet { agent })?;
            Ok(run)
        })
    }

    /// The run's directive for an agent, delivering held instructions and
    /// the next-agent choice when the run may continue.
    pub fn directive(&self, id: &RunId, actor: &str) -> Result<Directive> {
        let run = self.store().read(|r| r.run(id))?.ok_or_else(|| not_found_run(id))?;
        if !has_delivery(&run) {
            return Ok(Directive::of(&run));
        }
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            deliver(tx, &mut run, &actor, now)
        })
    }
}

/// Refuses breakpoint lists that could never work or are absurdly long.
pub(crate) fn check_breakpoints(breakpoints: &[Breakpoint]) -> Result<()> {
    if breakpoints.len() > MAX_BREAKPOINTS {
        return Err(EngineError::invalid("breakpoints", format!("at most {MAX_BREAKPOINTS}")));
    }
    for (i, b) in breakpoints.iter().enumerate() {
        let blank = match b {
            Breakpoint::Agent { name } | Breakpoint::Step { name } => name.trim().is_empty(),
            Breakpoint::ToolCall { tool: Some(t) } | Breakpoint::Handoff { to: Some(t) } => t.trim().is_empty(),
            _ => false,
        };
        if blank {
            return Err(EngineError::invalid(format!("breakpoints[{i}]"), "names an empty agent, tool or step"));
        }
    }
    Ok(())
}

fn has_delivery(run: &Run) -> bool {
    Directive::of(run).action == DirectiveAction::Continue
        && (!run.control.pending_instructions.is_empty() || run.control.next_agent.is_some())
}

/// After an agent's turn: step mode pauses the run; breakpoint mode pauses
/// it when the turn trips a breakpoint.
pub(crate) fn pause_if_stopped_here(
    tx: &mut dyn WriteTx,
    run: &mut Run,
    turn: &Turn,
    now: DateTime<Utc>,
) -> Result<()> {
    if !matches!(run.status, RunStatus::Active | RunStatus::AwaitingHuman) {
        return Ok(());
    }
    let reason = match run.step_mode {
        StepMode::Continuous => None,
        StepMode::Step => Some("step mode: paused after this turn until a reviewer steps".to_owned()),
        StepMode::Breakpoint => run.control.breakpoints.iter().find_map(|b| b.hit(turn)),
    };
    if let Some(reason) = reason {
        set_status(tx, run, RunTransition::Pause, SYSTEM, Some(reason), now)?;
    }
    Ok(())
}

/// The directive `run` implies; when it may continue, hands over (and
/// forgets) the held instructions and next-agent choice.
pub(crate) fn deliver(tx: &mut dyn WriteTx, run: &mut Run, actor: &str, now: DateTime<Utc>) -> Result<Directive> {
    let mut directive = Directive::of(run);
    if has_delivery(run) {
        directive.instructions = std::mem::take(&mut run.control.pending_instructions);
        directive.next_agent = run.control.next_agent.take();
        run.updated_at = now;
        tx.update_run(run)?;
        emit(
            tx,
            run,
            actor,
            now,
            EventKind::DirectiveDelivered {
                instructions: directive.instructions.clone(),
                next_agent: directive.next_agent.clone(),
            },
        )?;
    }
    Ok(directive)
}
