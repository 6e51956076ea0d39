//! The steps every write operation is made of, inside its one transaction:
//! load a run and check it is live, move it through a transition (a run
//! that ends withdraws its pending gates through `close_pending`), append an
//! event, send a waiting run back to work once its last blocking gate
//! closes, record a score. Operations (`runs.rs`, `control.rs`,
//! `gates/*`, ...) point down to this file, never at each other.

use chrono::{DateTime, Utc};

use crate::engine::close::{close_pending, skip_if_closed, Closing};
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::gate::BlockingMode;
use crate::ids::{GateId, RunId};
use crate::run::{Run, RunStatus, RunTransition};
use crate::scoring::{QualityScore, RatingChange};
use crate::store::{GateFilter, WriteTx};

/// How deep sub-agents may nest.
pub(crate) const MAX_DEPTH: usize = 16;

/// Appends an event about `run`.
pub(crate) fn emit(tx: &mut dyn WriteTx, run: &Run, actor: &str, at: DateTime<Utc>, kind: EventKind) -> Result<()> {
    tx.append_event(EventBody {
        at,
        run_id: Some(run.id.clone()),
        session_id: run.session_id.clone(),
        user_id: run.user_id.clone(),
        actor: actor.to_owned(),
        kind,
    })
}

pub(crate) fn not_found_run(id: &RunId) -> EngineError {
    EngineError::NotFound { what: "run", id: id.to_string() }
}

pub(crate) fn load_run(tx: &dyn WriteTx, id: &RunId) -> Result<Run> {
    tx.run(id)?.ok_or_else(|| not_found_run(id))
}

pub(crate) fn ensure_live(run: &Run, what: &'static str) -> Result<()> {
    ensure_not_imported(run, what)?;
    if run.status.is_terminal() {
        return Err(EngineError::RunEnded { run_id: run.id.clone(), status: run.status, what });
    }
    Ok(())
}

/// Refuses any change to an imported run: it is history from another
/// database, whatever status it was recorded with.
pub(crate) fn ensure_not_imported(run: &Run, what: &'static str) -> Result<()> {
    match run.imported {
        Some(_) => Err(EngineError::RunImported { run_id: run.id.clone(), what }),
        None => Ok(()),
    }
}

/// Moves `run` through `t`, saves it, logs it, and when the run ends
/// withdraws its pending gates. An imported run is refused.
pub(crate) fn set_status(
    tx: &mut dyn WriteTx,
    run: &mut Run,
    t: RunTransition,
    actor: &str,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Result<()> {
    ensure_not_imported(run, "status changes")?;
    let from = run.status;
    run.status = from.apply(t)?;
    run.updated_at = now;
    // The reason belongs to the status it came with: a new status without
    // one drops the old (a step's "stepped by", a pause's), an unchanged
    // status keeps it.
    if reason.is_some() || run.status != from {
        run.status_reason = reason.clone();
    }
    tx.update_run(run)?;
    emit(tx, run, actor, now, EventKind::RunStatusChanged { from, to: run.status, reason })?;
    if run.status.is_terminal() {
        withdraw_pending_gates(tx, run, actor, now)?;
    }
    Ok(())
}

/// Cancels the pending gates of a run that has just ended. A gate someone
/// else closed first is passed over: its closing stands.
fn withdraw_pending_gates(tx: &mut dyn WriteTx, run: &Run, actor: &str, now: DateTime<Utc>) -> Result<()> {
    let pending = tx.gates(&GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() })?;
    for mut gate in pending {
        let why = format!("run {} is {}", run.id, run.status.as_str());
        if skip_if_closed(close_pending(tx, &mut gate, Closing::Cancelled(why.clone()), now))? {
            emit(tx, run, actor, now, EventKind::GateCancelled { gate_id: gate.id.clone(), reason: why })?;
        }
    }
    Ok(())
}

/// After a blocking gate closes: a waiting run with no more blocking gates
/// goes back to work. Whether the run was stored (with whatever else the
/// caller changed in it).
pub(crate) fn after_gate_closed(
    tx: &mut dyn WriteTx,
    run: &mut Run,
    mode: BlockingMode,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<bool> {
    if mode == BlockingMode::Sync && run.status == RunStatus::AwaitingHuman && tx.pending_blocking_gates(&run.id)? == 0
    {
        set_status(tx, run, RunTransition::HumanAnswered, actor, None, now)?;
        return Ok(true);
    }
    Ok(false)
}

/// Records a score for `agent`'s work and updates its rating.
pub(crate) fn record_score(
    tx: &mut dyn WriteTx,
    run: &Run,
    agent: &str,
    gate_id: Option<GateId>,
    score: QualityScore,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    tx.rate_agent(agent, RatingChange::Score(score.score))?;
    emit(tx, run, actor, now, EventKind::ScoreRecorded { agent: agent.to_owned(), gate_id, score: Box::new(score) })?;
    Ok(())
}

/// The agents of the chain of runs down to `run`, the first parent's first.
pub(crate) fn agent_chain(tx: &mut dyn WriteTx, run: &Run) -> Result<Vec<String>> {
    let mut agents = vec![run.agent.clone()];
    let mut parent = run.parent_run_id.clone();
    while let Some(id) = parent.filter(|_| agents.len() < MAX_DEPTH) {
        let Some(up) = tx.run(&id)? else { break };
        agents.push(up.agent.clone());
        parent = up.parent_run_id;
    }
    agents.reverse();
    Ok(agents)
}
