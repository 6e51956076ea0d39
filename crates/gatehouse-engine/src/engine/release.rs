//! Resuming a run that awaits a human: "go on without waiting". Its
//! pending sync gates become async (each marked `released`, each with a
//! `gate_released` event naming the reviewer) and stay open for a decision;
//! the run goes back to `active`. A release decides nothing: an agent
//! waiting on such a gate is told it was released, never that it passed.
//! Only people release (the server lets reviewers and admins call it).

use chrono::{DateTime, Utc};

use crate::engine::close::{save_pending, skip_if_closed};
use crate::engine::tx::{emit, set_status};
use crate::error::Result;
use crate::event::EventKind;
use crate::gate::{BlockingMode, Released};
use crate::run::{Run, RunTransition};
use crate::store::{GateFilter, WriteTx};

/// Releases `run`'s pending sync gates and sets it active, in the caller's
/// transaction. A gate someone closed first is passed over.
pub(crate) fn release_sync_gates(tx: &mut dyn WriteTx, run: &mut Run, actor: &str, now: DateTime<Utc>) -> Result<()> {
    let filter = GateFilter { run_id: Some(run.id.clone()), mode: Some(BlockingMode::Sync), ..GateFilter::pending() };
    let reason = format!("released by {actor}: the run goes on without waiting; the gate stays open for a decision");
    let mut released = 0usize;
    for mut gate in tx.gates(&filter)? {
        gate.released = Some(Released { by: actor.to_owned(), at: now, from_mode: gate.mode });
        gate.mode = BlockingMode::Async;
        if skip_if_closed(save_pending(tx, &gate))? {
            released += 1;
            emit(tx, run, actor, now, EventKind::GateReleased { gate_id: gate.id.clone(), reason: reason.clone() })?;
        }
    }
    let why = format!("resumed by {actor} without waiting: {released} gate(s) released, still open for a decision");
    set_status(tx, run, RunTransition::Release, actor, Some(why), now)
}
