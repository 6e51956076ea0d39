//! "First resolver wins", in one place. Every path that closes a pending
//! gate (a decision, a vote reaching its quorum, the last of a batch's
//! actions, expiry and the timeout fallbacks, a cancellation, a run ending)
//! goes through [`close_pending`]; every change that leaves a gate pending
//! (a vote counted, some actions decided, an escalation) goes through
//! [`save_pending`]. Both are one conditional update that applies only
//! while the gate is still pending; whoever comes second gets
//! `GateClosed`, read afresh from the store, naming who closed it and how,
//! and has written nothing.

use chrono::{DateTime, Utc};

use crate::decision::Decision;
use crate::error::{EngineError, Result};
use crate::gate::{Gate, GateStatus};
use crate::ids::GateId;
use crate::store::WriteTx;

/// How a pending gate closes.
pub(crate) enum Closing {
    /// Decided: by a reviewer, a quorum, a policy or a timeout fallback.
    Resolved(Box<Decision>),
    /// Withdrawn, with the reason (by its opener, or because its run ended).
    Cancelled(String),
    /// Its deadline passed unanswered, with the reason.
    Expired(String),
}

/// Closes `gate` as `closing` says, if it is still pending in the store:
/// sets its status, `closed_at` and decision or reason, and saves it with
/// one conditional update. If another path closed it first (or `gate` is
/// not pending), nothing is written and the error is `GateClosed` naming
/// the winner as the store has it now.
pub(crate) fn close_pending(tx: &mut dyn WriteTx, gate: &mut Gate, closing: Closing, now: DateTime<Utc>) -> Result<()> {
    let to = match &closing {
        Closing::Resolved(_) => GateStatus::Resolved,
        Closing::Cancelled(_) => GateStatus::Cancelled,
        Closing::Expired(_) => GateStatus::Expired,
    };
    let Ok(status) = gate.status.transition(to) else {
        return Err(conflict(tx, &gate.id)?);
    };
    gate.status = status;
    gate.closed_at = Some(now);
    match closing {
        Closing::Resolved(decision) => gate.decision = Some(*decision),
        Closing::Cancelled(reason) | Closing::Expired(reason) => gate.status_reason = Some(reason),
    }
    write_if_pending(tx, gate)
}

/// Saves a change to a gate that stays pending (a vote counted, some of its
/// actions decided, an escalation), if it is still pending in the store;
/// else nothing is written and the error is `GateClosed`, as for
/// [`close_pending`].
pub(crate) fn save_pending(tx: &mut dyn WriteTx, gate: &Gate) -> Result<()> {
    if gate.status != GateStatus::Pending {
        return Err(conflict(tx, &gate.id)?);
    }
    write_if_pending(tx, gate)
}

/// For sweeps and cascades that pass over a gate someone else closed first:
/// `Ok(true)` when `attempt` (a [`close_pending`] or [`save_pending`]) won,
/// `Ok(false)` when it lost the race, any other error as it is.
pub(crate) fn skip_if_closed(attempt: Result<()>) -> Result<bool> {
    match attempt {
        Ok(()) => Ok(true),
        Err(EngineError::GateClosed { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The conflict an attempt on `gate` (closed already) gets: its status, who
/// decided it and when it left pending.
pub(crate) fn closed_error(gate: &Gate) -> EngineError {
    EngineError::GateClosed {
        gate_id: gate.id.clone(),
        status: gate.status,
        resolved_by: gate.decision.as_ref().map(|d| d.decided_by.clone()),
        resolved_at: gate.closed_at,
    }
}

pub(crate) fn not_found_gate(id: &GateId) -> EngineError {
    EngineError::NotFound { what: "gate", id: id.to_string() }
}

/// The one conditional update: `UPDATE ... WHERE status = 'pending'`.
fn write_if_pending(tx: &mut dyn WriteTx, gate: &Gate) -> Result<()> {
    if tx.update_gate_if(gate, GateStatus::Pending)? {
        return Ok(());
    }
    Err(conflict(tx, &gate.id)?)
}

/// The gate as the store has it now (the winner's doing), as a conflict.
fn conflict(tx: &dyn WriteTx, id: &GateId) -> Result<EngineError> {
    let current = tx.gate(id)?.ok_or_else(|| not_found_gate(id))?;
    Ok(closed_error(&current))
}
