//! The hot path of a gate, one file per step, each pointing only at the
//! ones listed after it:
//!
//! - `open.rs`: an agent opens a gate; the run's policy or a reviewer's
//!   allow-rule may pass it at once (stored resolved, never pending), else
//!   it is stored **pending**.
//! - `decide.rs`: a reviewer decides a pending gate (`resolve_gate`), or
//!   its opener withdraws it (`cancel_gate`); `quality.rs`: a score decides
//!   a quality gate when it may.
//! - `actions.rs`: a gate of several proposed actions, decided one by one;
//!   `votes.rs`: a quorum gate, vote by vote.
//! - `decision.rs`: the decision itself, closed with and then recorded;
//!   every path that decides a gate ends here, the timeout fallbacks of
//!   `engine/maintenance.rs` too.
//! - `engine/close.rs` (below this folder, beside `engine/tx.rs`, whose run
//!   ending closes gates too): `close_pending`, the one conditional update
//!   through which every path closes a pending gate (decisions, expiry,
//!   cancellation, a run ending), and `save_pending` for changes that keep
//!   it pending (votes, some actions, escalations). The first resolver wins
//!   there; the loser gets `GateClosed` naming the winner.
//! - `validate.rs`: the checks on a gate to open and a decision to take.
//!
//! open → pending → close_pending: nothing else moves a gate out of pending.

use crate::engine::close::not_found_gate;
use crate::engine::tx::not_found_run;
use crate::engine::Engine;
use crate::error::Result;
use crate::gate::Gate;
use crate::ids::GateId;
use crate::run::Run;
use crate::store::{GateFilter, Store};

mod actions;
pub(crate) mod closed;
mod decide;
pub(crate) mod decision;
mod open;
mod quality;
#[cfg(test)]
mod races;
mod validate;
mod votes;

pub use open::RunAccess;

impl<S: Store> Engine<S> {
    /// One gate.
    pub fn gate(&self, id: &GateId) -> Result<Gate> {
        self.store().read(|r| r.gate(id))?.ok_or_else(|| not_found_gate(id))
    }

    /// One gate and its run, read in one transaction (one snapshot, one
    /// round trip to the database fewer than reading them apart).
    pub fn gate_and_run(&self, id: &GateId) -> Result<(Gate, Run)> {
        self.store().read(|r| {
            let gate = r.gate(id)?.ok_or_else(|| not_found_gate(id))?;
            let run = r.run(&gate.run_id)?.ok_or_else(|| not_found_run(&gate.run_id))?;
            Ok((gate, run))
        })
    }

    /// Gates matching `filter`; pending ones in panel order.
    pub fn gates(&self, filter: &GateFilter) -> Result<Vec<Gate>> {
        self.store().read(|r| r.gates(filter))
    }

    /// How many gates match `filter`.
    pub fn count_gates(&self, filter: &GateFilter) -> Result<u64> {
        self.store().read(|r| r.count_gates(filter))
    }
}
