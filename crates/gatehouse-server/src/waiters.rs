//! Long-poll waits. One dispatcher follows the engine's event broadcast and
//! wakes the agents waiting on a gate the moment it closes (or a reviewer
//! releases it), and those held
//! on a paused run the moment its status changes; a waiter registers
//! before it checks, so a change landing in between is never missed. Once
//! asked to ([`Waiters::remember_gate_waits`]), it also remembers when an
//! agent's long poll last ended with its gate still pending: an agent
//! between two long polls is still there (the sweep of abandoned runs asks).
//!
//! A gate this server's engine decided is handed to its waiters with the
//! wake-up ([`Engine::closed_by`]), so they answer without reading it back;
//! a decision from elsewhere (another instance, the CLI) wakes them to read.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{DateTime, Utc};
use gatehouse_engine::{Engine, EventKind, Gate, GateId, RunId};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::Notify;

/// Things being waited on, each with its wake-up and its number of waiters.
pub struct Registry<K> {
    entries: Mutex<HashMap<K, Entry>>,
    /// When a wait on each key last ended undecided, on the engine's clock;
    /// kept only once `clock` is set, and forgotten once older than asked.
    left: Mutex<HashMap<K, DateTime<Utc>>>,
    clock: OnceLock<Engine>,
}

/// One key's waiters.
struct Entry {
    notify: Arc<Notify>,
    waiters: usize,
    /// The gate as the decision that woke them left it, when it is known.
    closed: Option<Arc<Gate>>,
}

impl<K> Default for Registry<K> {
    fn default() -> Self {
        Self { entries: Mutex::new(HashMap::new()), left: Mutex::new(HashMap::new()), clock: OnceLock::new() }
    }
}

/// A registration; dropping it unregisters.
pub struct WaitTicket<'w, K: Eq + Hash + Clone> {
    registry: &'w Registry<K>,
    key: K,
    /// Notified when the thing waited on changes.
    pub notify: Arc<Notify>,
}

impl<K: Eq + Hash + Clone> Registry<K> {
    /// Registers interest in `key`.
    pub fn register(&self, key: &K) -> WaitTicket<'_, K> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
            notify: Arc::new(Notify::new()),
            waiters: 0,
            closed: None,
        });
        entry.waiters += 1;
        WaitTicket { registry: self, key: key.clone(), notify: Arc::clone(&entry.notify) }
    }

    /// How many keys are being waited on.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many waits are registered, over every key.
    pub fn waiting(&self) -> usize {
        self.entries.lock().map(|g| g.values().map(|e| e.waiters).sum()).unwrap_or(0)
    }

    /// Notes that a wait on `key` ended with nothing to report (remembered
    /// once a clock is set).
    fn note_left(&self, key: &K) {
        if let Some(clock) = self.clock.get() {
            let now = clock.now();
            self.left.lock().unwrap_or_else(|p| p.into_inner()).insert(key.clone(), now);
        }
    }

    /// The keys waited on now, or whose wait ended undecided at `since` or
    /// later; forgets those that ended earlier.
    fn waited_since(&self, since: DateTime<Utc>) -> Vec<K> {
        // Entries first, then `left`: the order a ticket's drop takes them in.
        let mut keys: HashSet<K> = self.entries.lock().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect();
        let mut left = self.left.lock().unwrap_or_else(|p| p.into_inner());
        left.retain(|_, at| *at >= since);
        keys.extend(left.keys().cloned());
        keys.into_iter().collect()
    }

    fn wake(&self, key: &K) {
        self.wake_with(key, None);
    }

    /// Wakes `key`'s waiters, handing them `closed` first when it is known.
    fn wake_with(&self, key: &K, closed: Option<Arc<Gate>>) {
        if let Some(entry) = self.entries.lock().unwrap_or_else(|p| p.into_inner()).get_mut(key) {
            if closed.is_some() {
                entry.closed = closed;
            }
            entry.notify.notify_waiters();
        }
    }

    fn wake_all(&self) {
        for entry in self.entries.lock().unwrap_or_else(|p| p.into_inner()).values() {
            entry.notify.notify_waiters();
        }
    }
}

impl<K: Eq + Hash + Clone> WaitTicket<'_, K> {
    /// The gate as the decision that woke this wait left it, when the
    /// wake-up carried it (a decision this server's engine made).
    pub fn closed(&self) -> Option<Arc<Gate>> {
        let entries = self.registry.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(&self.key).and_then(|entry| entry.closed.clone())
    }
}

impl<K: Eq + Hash + Clone> Drop for WaitTicket<'_, K> {
    fn drop(&mut self) {
        let mut entries = self.registry.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = entries.get_mut(&self.key) {
            entry.waiters -= 1;
            if entry.waiters == 0 {
                entries.remove(&self.key);
            }
        }
    }
}

/// Agents long-polling gates, and agents held on paused runs.
#[derive(Default)]
pub struct Waiters {
    gates: Registry<GateId>,
    runs: Registry<RunId>,
}

impl Waiters {
    /// Registers interest in `gate` closing.
    pub fn register(&self, gate: &GateId) -> WaitTicket<'_, GateId> {
        self.gates.register(gate)
    }

    /// Registers interest in `run`'s status changing.
    pub fn register_run(&self, run: &RunId) -> WaitTicket<'_, RunId> {
        self.runs.register(run)
    }

    /// From now on, remember when an agent's wait on a gate ended with the
    /// gate still pending (on `engine`'s clock), for
    /// [`Waiters::gates_waited_since`].
    pub fn remember_gate_waits(&self, engine: Engine) {
        // Already remembering: the first clock stays.
        let _ = self.gates.clock.set(engine);
    }

    /// A long poll on `gate` ended with the gate still pending: its agent
    /// was there then, and will likely poll again.
    pub fn left_pending(&self, gate: &GateId) {
        self.gates.note_left(gate);
    }

    /// The gates an agent waits on now, or whose wait ended undecided at
    /// `since` or later (remembered once [`Waiters::remember_gate_waits`] was called).
    pub fn gates_waited_since(&self, since: DateTime<Utc>) -> Vec<GateId> {
        self.gates.waited_since(since)
    }

    /// How many gates are being waited on.
    pub fn len(&self) -> usize {
        self.gates.len()
    }

    /// Whether nobody waits on a gate.
    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }

    /// Long polls in progress: on gates, and held on paused runs.
    pub fn waiting(&self) -> (usize, usize) {
        (self.gates.waiting(), self.runs.waiting())
    }

    /// Follows the engine's events forever, waking waiters of closed gates.
    pub async fn dispatch(self: Arc<Self>, engine: Engine) {
        let mut events = engine.live_events();
        loop {
            match events.recv().await {
                Ok(event) => {
                    if let EventKind::GateResolved { gate_id, decision } = &event.body.kind {
                        // Taken even when nobody waits, so the engine does not keep it.
                        self.gates.wake_with(gate_id, engine.closed_by(&decision.id));
                    }
                    let closed = match &event.body.kind {
                        EventKind::GateExpired { gate_id, .. }
                        | EventKind::GateCancelled { gate_id, .. }
                        | EventKind::GateReleased { gate_id, .. }
                        | EventKind::VoteRecorded { gate_id, .. } => Some(gate_id),
                        EventKind::GateAutoPassed { gate, .. } => Some(&gate.id),
                        _ => None,
                    };
                    if let Some(gate_id) = closed {
                        self.gates.wake(gate_id);
                    }
                    if let (EventKind::RunStatusChanged { .. }, Some(run)) = (&event.body.kind, &event.body.run_id) {
                        self.runs.wake(run);
                    }
                }
                // Missed some: every waiter re-checks.
                Err(RecvError::Lagged(_)) => {
                    self.gates.wake_all();
                    self.runs.wake_all();
                }
                Err(RecvError::Closed) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_engine::{DecisionInput, EngineConfig, NewGate, NewRun};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_decision_this_engine_made_wakes_its_waiters_with_the_gate_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(dir.path().join("gatehouse.db"), EngineConfig::default()).unwrap();
        let waiters = Arc::new(Waiters::default());
        tokio::spawn(Arc::clone(&waiters).dispatch(engine.clone()));
        let run = engine.create_run(NewRun { agent: "agent".into(), ..NewRun::default() }, "agent").unwrap();
        let gate = engine.open_gate(&run.id, NewGate::question("Ship it?"), "agent").unwrap();

        let ticket = waiters.register(&gate.id);
        let woken = ticket.notify.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        assert!(ticket.closed().is_none());
        let deciding = engine.clone();
        let id = gate.id.clone();
        tokio::task::spawn_blocking(move || deciding.resolve_gate(&id, DecisionInput::respond("Yes"), "alice"))
            .await
            .unwrap()
            .unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), woken).await.expect("the decision woke the waiter");
        let handed = ticket.closed().expect("the wake-up carried the gate");
        assert_eq!(*handed, engine.gate(&gate.id).unwrap());
        assert!(handed.status.is_terminal());
    }
}
