//! Long-poll waits. One dispatcher follows the engine's event broadcast and
//! wakes the agents waiting on a gate the moment it closes; a waiter
//! registers before it checks the gate, so a decision landing in between
//! is never missed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gatehouse_engine::{Engine, EventKind, GateId};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::Notify;

/// Gates being waited on, each with its wake-up.
#[derive(Default)]
pub struct Waiters {
    gates: Mutex<HashMap<GateId, (Arc<Notify>, usize)>>,
}

/// A registration; dropping it unregisters.
pub struct WaitTicket<'w> {
    waiters: &'w Waiters,
    gate: GateId,
    /// Notified when the gate closes.
    pub notify: Arc<Notify>,
}

impl Waiters {
    /// Registers interest in `gate`.
    pub fn register(&self, gate: &GateId) -> WaitTicket<'_> {
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        let entry = gates.entry(gate.clone()).or_insert_with(|| (Arc::new(Notify::new()), 0));
        entry.1 += 1;
        WaitTicket { waiters: self, gate: gate.clone(), notify: Arc::clone(&entry.0) }
    }

    /// How many gates are being waited on.
    pub fn len(&self) -> usize {
        self.gates.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn wake(&self, gate: &GateId) {
        if let Some((notify, _)) = self.gates.lock().unwrap_or_else(|p| p.into_inner()).get(gate) {
            notify.notify_waiters();
        }
    }

    fn wake_all(&self) {
        for (notify, _) in self.gates.lock().unwrap_or_else(|p| p.into_inner()).values() {
            notify.notify_waiters();
        }
    }

    /// Follows the engine's events forever, waking waiters of closed gates.
    pub async fn dispatch(self: Arc<Self>, engine: Engine) {
        let mut events = engine.live_events();
        loop {
            match events.recv().await {
                Ok(event) => {
                    let closed = match &event.body.kind {
                        EventKind::GateResolved { gate_id, .. }
                        | EventKind::GateExpired { gate_id, .. }
                        | EventKind::GateCancelled { gate_id, .. }
                        | EventKind::VoteRecorded { gate_id, .. } => Some(gate_id),
                        EventKind::GateAutoPassed { gate, .. } => Some(&gate.id),
                        _ => None,
                    };
                    if let Some(gate_id) = closed {
                        self.wake(gate_id);
                    }
                }
                // Missed some: every waiter re-checks its gate.
                Err(RecvError::Lagged(_)) => self.wake_all(),
                Err(RecvError::Closed) => return,
            }
        }
    }
}

impl Drop for WaitTicket<'_> {
    fn drop(&mut self) {
        let mut gates = self.waiters.gates.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = gates.get_mut(&self.gate) {
            entry.1 -= 1;
            if entry.1 == 0 {
                gates.remove(&self.gate);
            }
        }
    }
}
