//! Gates this engine just closed with a decision, kept from the decision's
//! write until the live stream delivers the `GateResolved` event that logs
//! it. A long-polling agent woken by that event can then be answered with
//! the gate as the committed write left it, without reading it back.
//!
//! A gate is kept under its decision's id, which only a committed write's
//! event names: a write that is rolled back leaves an entry nobody asks
//! for, and the oldest entries go once [`KEPT`] are held.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::decision::Decision;
use crate::gate::Gate;
use crate::ids::DecisionId;
use crate::store::Store;
use crate::Engine;

/// Most gates held at once: the decisions of a few write groups waiting
/// for their events to be read off the live stream.
pub(crate) const KEPT: usize = 64;

/// Recently closed gates, by the id of the decision that closed them.
#[derive(Default)]
pub(crate) struct ClosedGates {
    gates: Mutex<VecDeque<(DecisionId, Arc<Gate>)>>,
}

impl ClosedGates {
    /// Keeps `gate`, closed by `decision`, dropping the oldest beyond [`KEPT`].
    pub(crate) fn keep(&self, decision: &Decision, gate: &Gate) {
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        if gates.len() >= KEPT {
            gates.pop_front();
        }
        gates.push_back((decision.id.clone(), Arc::new(gate.clone())));
    }

    fn take(&self, decision: &DecisionId) -> Option<Arc<Gate>> {
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        let at = gates.iter().position(|(id, _)| id == decision)?;
        gates.remove(at).map(|(_, gate)| gate)
    }
}

impl<S: Store> Engine<S> {
    /// The gate `decision` closed, as its committed write left it, if this
    /// engine made that decision and nobody took the gate yet; for
    /// whoever reads the decision's `GateResolved` event off
    /// [`Engine::live_events`]. Taken once.
    pub fn closed_by(&self, decision: &DecisionId) -> Option<Arc<Gate>> {
        self.closed_gates().take(decision)
    }
}
