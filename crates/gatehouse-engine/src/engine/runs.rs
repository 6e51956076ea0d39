//! Run lifecycle and turns: create, start, pause, resume, complete, fail,
//! cancel; turns under the handoff protocol. Ending a run withdraws its
//! pending gates in the same transaction, so no gate outlives its run.

use chrono::{DateTime, Utc};

use crate::engine::control::{check_breakpoints, deliver, pause_if_stopped_here};
use crate::engine::declared::check_declared;
use crate::engine::release::release_sync_gates;
use crate::engine::tx::{emit, ensure_live, load_run, not_found_run, record_score, set_status, MAX_DEPTH};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::ids::{RunId, TurnId};
use crate::plan::ExecutionMode;
use crate::run::{Directive, NewRun, NewTurn, Role, Run, RunControl, RunStatus, RunTransition, Turn};
use crate::scoring::QualityScore;
use crate::store::{ReadTx, RunFilter, Store, WriteTx};

impl<S: Store> Engine<S> {
    /// Creates a run in `created`.
    pub fn create_run(&self, new: NewRun, actor: &str) -> Result<Run> {
        let new = self.redacted(new)?;
        new.hitl_config.validate()?;
        check_breakpoints(&new.breakpoints)?;
        check_declared(&new.declared_gates)?;
        check_label("agent", Some(&new.agent))?;
        check_label("session_id", new.session_id.as_deref())?;
        check_label("user_id", new.user_id.as_deref())?;
        if let Some(t) = new.protocol.auto_approve_threshold {
            if !(1.0..=5.0).contains(&t) {
                return Err(EngineError::invalid(
                    "protocol.auto_approve_threshold",
                    format!("must be a score from 1 to 5, got {t}"),
                ));
            }
        }
        let now = self.now();
        if let Some(at) = new.expires_at.filter(|at| *at <= now) {
            return Err(EngineError::invalid("expires_at", format!("must be in the future, got {}", at.to_rfc3339())));
        }
        let agent = if new.agent.trim().is_empty() { actor.to_owned() } else { new.agent };
        let run = Run {
            id: RunId::new(),
            title: new.title,
            agent,
            user_id: new.user_id,
            session_id: new.session_id,
            parent_run_id: new.parent_run_id,
            participants: new.participants,
            status: RunStatus::Created,
            status_reason: None,
            hitl_config: new.hitl_config,
            protocol: new.protocol,
            execution_mode: ExecutionMode::default(),
            step_mode: new.step_mode,
            control: RunControl { breakpoints: new.breakpoints, ..RunControl::default() },
            input: self.redactor().redact_value(&new.input),
            result: None,
            turn_count: 0,
            consecutive_agent_turns: 0,
            created_at: now,
            updated_at: now,
            imported: None,
            expires_at: new.expires_at,
            retries: 0,
            declared_gates: new.declared_gates,
        };
        let actor = actor.to_owned();
        self.store().write(move |tx| {
            if let Some(parent) = &run.parent_run_id {
                check_parent(tx, parent)?;
            }
            tx.insert_run(&run)?;
            emit(tx, &run, &actor, now, EventKind::RunCreated { run: Box::new(run.clone()) })?;
            Ok(run)
        })
    }

    /// One run.
    pub fn run(&self, id: &RunId) -> Result<Run> {
        self.store().read(|r| r.run(id))?.ok_or_else(|| not_found_run(id))
    }

    /// Runs matching `filter`, newest first.
    pub fn runs(&self, filter: &RunFilter) -> Result<Vec<Run>> {
        // Users and sessions are stored redacted: named as they were sent, they are found.
        let filter = RunFilter {
            user_id: filter.user_id.as_deref().map(|u| self.redacted_text(u)),
            session_id: filter.session_id.as_deref().map(|s| self.redacted_text(s)),
            ..filter.clone()
        };
        self.store().read(|r| r.runs(&filter))
    }

    /// created → active.
    pub fn start_run(&self, id: &RunId, actor: &str) -> Result<Run> {
        self.change_run(id, actor, RunTransition::Start, None, None)
    }

    /// Tries a failed or cancelled run again: back to `active`, its history
    /// kept and its retries counted, with "retried by ..." as the reason.
    /// Whoever drives it picks it up from its last good step (Gatehouse
    /// itself, for an orchestrated run); a gate withdrawn when it ended stays
    /// closed, and the step asks again.
    pub fn retry_run(&self, id: &RunId, actor: &str) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            run.retries += 1;
            let reason = format!("retried by {actor} (retry {})", run.retries);
            set_status(tx, &mut run, RunTransition::Retry, &actor, Some(reason), now)?;
            Ok(run)
        })
    }

    /// Pauses an active or waiting run, and with it its sub-agents' live
    /// runs (all the way down), saying they were paused with it.
    pub fn pause_run(&self, id: &RunId, actor: &str) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            set_status(tx, &mut run, RunTransition::Pause, &actor, None, now)?;
            for mut child in descendants(tx, &run.id)? {
                if matches!(child.status, RunStatus::Active | RunStatus::AwaitingHuman) {
                    let why = format!("{PAUSED_WITH_PARENT}{}", run.id);
                    set_status(tx, &mut child, RunTransition::Pause, &actor, Some(why), now)?;
                }
            }
            Ok(run)
        })
    }

    /// Resumes a paused run (back to waiting if blocking gates are
    /// pending), and the sub-agents' runs that were paused with it; one a
    /// reviewer paused on its own stays paused. A run awaiting a human goes
    /// on without waiting: its sync gates are released (`release.rs`).
    pub fn resume_run(&self, id: &RunId, actor: &str) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            if run.status == RunStatus::AwaitingHuman {
                release_sync_gates(tx, &mut run, &actor, now)?;
                return Ok(run);
            }
            resume(tx, &mut run, &actor, now)?;
            for mut child in descendants(tx, &run.id)? {
                let with_parent = child.status_reason.as_deref().is_some_and(|r| r.starts_with(PAUSED_WITH_PARENT));
                if child.status == RunStatus::Paused && with_parent {
                    resume(tx, &mut child, &actor, now)?;
                }
            }
            Ok(run)
        })
    }

    /// The run's chain of runs, from the first parent down to itself.
    pub fn run_chain(&self, id: &RunId) -> Result<Vec<Run>> {
        self.store().read(|r| run_chain_in(r, id))
    }

    /// The runs sub-agents started from this one, oldest first.
    pub fn child_runs(&self, id: &RunId) -> Result<Vec<Run>> {
        self.store().read(|r| r.child_runs(id))
    }

    /// Completes an active run with an optional result.
    pub fn complete_run(&self, id: &RunId, actor: &str, result: Option<serde_json::Value>) -> Result<Run> {
        let result = result.map(|v| self.redactor().redact_value(&v));
        self.change_run(id, actor, RunTransition::Complete, None, result)
    }

    /// Fails a run with a reason.
    pub fn fail_run(&self, id: &RunId, actor: &str, reason: &str) -> Result<Run> {
        self.change_run(id, actor, RunTransition::Fail, Some(self.redacted_text(reason)), None)
    }

    /// Cancels a run (aborts a session) and its sub-agents' live runs, all
    /// the way down; their pending gates are withdrawn with them.
    pub fn cancel_run(&self, id: &RunId, actor: &str, reason: Option<&str>) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        let reason = reason.map(|r| self.redacted_text(r));
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            set_status(tx, &mut run, RunTransition::Cancel, &actor, reason, now)?;
            for mut child in descendants(tx, &run.id)? {
                if !child.status.is_terminal() {
                    let why = format!("cancelled with its parent run {}", run.id);
                    set_status(tx, &mut child, RunTransition::Cancel, &actor, Some(why), now)?;
                }
            }
            Ok(run)
        })
    }

    fn change_run(
        &self,
        id: &RunId,
        actor: &str,
        t: RunTransition,
        reason: Option<String>,
        result: Option<serde_json::Value>,
    ) -> Result<Run> {
        let (id, actor, now) = (id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &id)?;
            if result.is_some() {
                run.result = result;
            }
            set_status(tx, &mut run, t, &actor, reason, now)?;
            Ok(run)
        })
    }

    /// Adds a turn. Agent turns obey the handoff protocol; a human turn
    /// resets the count. A turn on a created run starts it. An agent turn
    /// in step mode, or one that trips a breakpoint in breakpoint mode,
    /// pauses the run until a reviewer steps or resumes it; a paused run
    /// takes no agent turns.
    pub fn add_turn(&self, run_id: &RunId, turn: NewTurn, actor: &str) -> Result<Turn> {
        Ok(self.turn_with(run_id, turn, actor, false)?.0)
    }

    /// Adds an agent's turn like [`Engine::add_turn`] and answers with the
    /// run's directive, delivering held reviewer instructions and the
    /// next-agent choice when the run may continue (each exactly once).
    pub fn agent_turn(&self, run_id: &RunId, turn: NewTurn, actor: &str) -> Result<(Turn, Directive)> {
        self.turn_with(run_id, turn, actor, true)
    }

    fn turn_with(&self, run_id: &RunId, turn: NewTurn, actor: &str, direct: bool) -> Result<(Turn, Directive)> {
        let turn = self.redacted(turn)?;
        if let Some(score) = turn.score {
            QualityScore::new("turn", actor, score, self.now())?;
        }
        let content = self.redactor().redact_str(&turn.content).into_owned();
        let metadata = self.redactor().redact_value(&turn.metadata);
        let (run_id, now) = (run_id.clone(), self.now());
        let speaker = turn.actor.clone().unwrap_or_else(|| actor.to_owned());
        let actor = actor.to_owned();
        self.store().write(move |tx| {
            let mut run = load_run(tx, &run_id)?;
            ensure_live(&run, "turns")?;
            if run.status == RunStatus::Created {
                set_status(tx, &mut run, RunTransition::Start, &actor, None, now)?;
            }
            match turn.role {
                Role::Agent => {
                    if run.status == RunStatus::Paused {
                        let reason = run.status_reason.clone().unwrap_or_else(|| "by a reviewer".to_owned());
                        return Err(EngineError::RunPaused { run_id: run.id.clone(), reason });
                    }
                    if let Some(max) = run.protocol.max_consecutive_agent_turns {
                        if run.consecutive_agent_turns >= max {
                            return Err(EngineError::HandoffRequired {
                                run_id: run.id.clone(),
                                turns: run.consecutive_agent_turns,
                            });
                        }
                    }
                    run.consecutive_agent_turns += 1;
                }
                Role::Human => run.consecutive_agent_turns = 0,
                Role::System => {}
            }
            run.turn_count += 1;
            run.updated_at = now;
            let turn = Turn {
                id: TurnId::new(),
                run_id: run.id.clone(),
                index: run.turn_count,
                role: turn.role,
                actor: speaker,
                content,
                score: turn.score,
                metadata,
                at: now,
            };
            tx.insert_turn(&turn)?;
            tx.update_run(&run)?;
            emit(tx, &run, &actor, now, EventKind::TurnAdded { turn: Box::new(turn.clone()) })?;
            if let (Some(score), Role::Agent) = (turn.score, turn.role) {
                let qs = QualityScore::new(turn.id.as_str(), &actor, score, now)?;
                record_score(tx, &run, &turn.actor, None, qs, &actor, now)?;
            }
            if turn.role == Role::Agent {
                pause_if_stopped_here(tx, &mut run, &turn, now)?;
            }
            let directive = if direct && turn.role == Role::Agent {
                deliver(tx, &mut run, &actor, now)?
            } else {
                Directive::of(&run)
            };
            Ok((turn, directive))
        })
    }

    /// A run's turns in order.
    pub fn turns(&self, run_id: &RunId) -> Result<Vec<Turn>> {
        self.store().read(|r| r.turns(run_id))
    }

    /// A run's turns after the turn index `after`, in order: what a loop
    /// that already read up to `after` has not seen (indices only grow).
    pub fn turns_after(&self, run_id: &RunId, after: u32) -> Result<Vec<Turn>> {
        self.store().read(|r| r.turns_after(run_id, after))
    }
}

/// Why a sub-agent's run is paused when its parent's pause reached it.
const PAUSED_WITH_PARENT: &str = "paused with its parent run ";

fn resume(tx: &mut dyn WriteTx, run: &mut Run, actor: &str, now: DateTime<Utc>) -> Result<()> {
    let t = if tx.pending_blocking_gates(&run.id)? > 0 { RunTransition::ResumeAwaiting } else { RunTransition::Resume };
    set_status(tx, run, t, actor, None, now)
}

/// Every run below `id` (children, their children...), parents first.
fn descendants(tx: &mut dyn WriteTx, id: &RunId) -> Result<Vec<Run>> {
    let mut out: Vec<Run> = Vec::new();
    let mut level = vec![id.clone()];
    for _ in 0..MAX_DEPTH {
        let mut next = Vec::new();
        for parent in &level {
            for child in tx.child_runs(parent)? {
                if child.id != *id && !out.iter().any(|r| r.id == child.id) {
                    next.push(child.id.clone());
                    out.push(child);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    Ok(out)
}

/// A sub-agent's run needs a live parent, at most [`MAX_DEPTH`] levels down.
fn check_parent(tx: &mut dyn WriteTx, parent: &RunId) -> Result<()> {
    let mut at =
        tx.run(parent)?.ok_or_else(|| EngineError::invalid("parent_run_id", format!("no run with id `{parent}`")))?;
    if at.status.is_terminal() {
        return Err(EngineError::invalid(
            "parent_run_id",
            format!("run {parent} is {}: a sub-agent cannot start from it", at.status.as_str()),
        ));
    }
    for _ in 1..MAX_DEPTH {
        match at.parent_run_id.clone() {
            None => return Ok(()),
            Some(up) => match tx.run(&up)? {
                Some(run) => at = run,
                None => return Ok(()),
            },
        }
    }
    Err(EngineError::invalid("parent_run_id", format!("sub-agents nest at most {MAX_DEPTH} runs deep")))
}

/// [`Engine::run_chain`] read in the transaction `r`.
pub(crate) fn run_chain_in(r: &(impl ReadTx + ?Sized), id: &RunId) -> Result<Vec<Run>> {
    let mut chain = vec![r.run(id)?.ok_or_else(|| not_found_run(id))?];
    while let Some(parent) = chain.last().and_then(|run| run.parent_run_id.clone()) {
        if chain.len() > MAX_DEPTH || chain.iter().any(|run| run.id == parent) {
            break;
        }
        match r.run(&parent)? {
            Some(run) => chain.push(run),
            None => break,
        }
    }
    chain.reverse();
    Ok(chain)
}

/// The longest agent name, session or user a run may carry: each is kept
/// in an index on every backend (PostgreSQL's entries must fit a third of
/// a page, and one refused at a group's end would fail its neighbours).
const MAX_LABEL: usize = 255;

/// Checks an agent name, session or user given to a new run (blank is none).
fn check_label(field: &str, value: Option<&str>) -> Result<()> {
    match value {
        Some(v) if v.chars().count() > MAX_LABEL => {
            Err(EngineError::invalid(field, format!("must be at most {MAX_LABEL} characters")))
        }
        _ => Ok(()),
    }
}
