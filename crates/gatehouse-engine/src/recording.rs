//! Recordings: a run, a session or everything exported as one versioned
//! JSON document (snapshots plus the events that produced them), imported
//! losslessly into another database, and replayed event by event. Export
//! and import are engine operations, in `engine/recordings.rs`.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::event::{AuditAnchor, EventBody, EventKind};
use crate::gate::{Gate, GateStatus};
use crate::ids::{GateId, RunId};
use crate::plan::PlanRevision;
use crate::redact::{idempotency_digest, is_idempotency_digest};
use crate::run::{Run, RunStatus, Turn};

/// The `format` field every recording carries.
pub const RECORDING_FORMAT: &str = "gatehouse-recording";
/// The version this binary writes and reads.
pub const RECORDING_VERSION: u32 = 1;

/// What a recording covers.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum RecordingScope {
    /// One run.
    Run {
        /// The run.
        run_id: RunId,
    },
    /// Every run of a session.
    Session {
        /// The session.
        session_id: String,
    },
    /// The whole database.
    All,
}

/// Everything about one run.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's snapshot.
    pub run: Run,
    /// Its turns in order.
    pub turns: Vec<Turn>,
    /// Its gates, oldest first, with decisions.
    pub gates: Vec<Gate>,
    /// Its shared context now (the history is in the events).
    pub context: BTreeMap<String, serde_json::Value>,
    /// Every plan revision with its change log.
    pub plan_revisions: Vec<PlanRevision>,
}

/// A session recording.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// Always [`RECORDING_FORMAT`].
    pub format: String,
    /// The format version.
    pub version: u32,
    /// When it was exported.
    pub exported_at: DateTime<Utc>,
    /// What it covers.
    pub scope: RecordingScope,
    /// The runs.
    pub runs: Vec<RunRecord>,
    /// Their events in order.
    pub events: Vec<EventBody>,
    /// The exporting database's log head when it was exported: verifying
    /// that database against it (`gatehouse audit verify --anchor`) shows
    /// its log still holds what this recording was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<AuditAnchor>,
}

/// The mark an import leaves on each run and gate it brought in: they are
/// history from another database, not work this one saw happen.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Imported {
    /// When the recording was imported here.
    pub at: DateTime<Utc>,
    /// Who imported it.
    pub by: String,
}

/// Why a gate still pending in a recording is closed by its import: no
/// agent of this database waits for it, so it is history, not work.
pub const IMPORTED_UNDECIDED: &str = "imported undecided: no agent here waits for it";

/// What an import brought in.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportSummary {
    /// Runs added.
    pub runs: Vec<RunId>,
    /// Gates added.
    pub gates: u64,
    /// Events appended.
    pub events: u64,
}

/// The recording with its gates' idempotency keys digested, as this version
/// stores them (in its runs and in its events); a recording from an older
/// version carries them as the agent sent them.
pub(crate) fn digest_idempotency_keys(recording: Recording) -> Result<Recording> {
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (field, item) in map.iter_mut() {
                    match item {
                        serde_json::Value::String(key) if field == "idempotency_key" && !is_idempotency_digest(key) => {
                            *key = idempotency_digest(key);
                        }
                        _ => walk(item),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let invalid = |e: serde_json::Error| EngineError::Recording(e.to_string());
    let mut value = serde_json::to_value(recording).map_err(invalid)?;
    walk(&mut value);
    serde_json::from_value(value).map_err(invalid)
}

/// Rejects recordings this binary cannot import faithfully.
pub(crate) fn check_recording(rec: &Recording) -> Result<()> {
    if rec.format != RECORDING_FORMAT {
        return Err(EngineError::Recording(format!("format is `{}`, expected `{RECORDING_FORMAT}`", rec.format)));
    }
    if rec.version != RECORDING_VERSION {
        return Err(EngineError::Recording(format!(
            "version {} is not supported (this Gatehouse reads version {RECORDING_VERSION})",
            rec.version
        )));
    }
    let mut runs = HashSet::new();
    for r in &rec.runs {
        if !runs.insert(&r.run.id) {
            return Err(EngineError::Recording(format!("run {} appears twice", r.run.id)));
        }
        for g in &r.gates {
            if g.run_id != r.run.id {
                return Err(EngineError::Recording(format!(
                    "gate {} claims run {} but is listed under {}",
                    g.id, g.run_id, r.run.id
                )));
            }
            if g.decision.as_ref().is_some_and(|d| d.gate_id != g.id) {
                return Err(EngineError::Recording(format!("gate {} carries another gate's decision", g.id)));
            }
        }
        for t in &r.turns {
            if t.run_id != r.run.id {
                return Err(EngineError::Recording(format!("turn {} belongs to another run", t.id)));
            }
        }
    }
    for (i, e) in rec.events.iter().enumerate() {
        match &e.run_id {
            Some(run) if runs.contains(run) => {}
            _ => return Err(EngineError::Recording(format!("event {i} does not belong to a recorded run"))),
        }
        if !e.kind.is_recordable() {
            return Err(EngineError::Recording(format!("event {i} is database bookkeeping, not part of a recording")));
        }
    }
    Ok(())
}

/// What a replay has reconstructed so far.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayState {
    /// Each run's status.
    pub runs: BTreeMap<RunId, RunStatus>,
    /// Each gate's status.
    pub gates: BTreeMap<GateId, GateStatus>,
    /// Turns seen.
    pub turns: u64,
    /// Decisions seen.
    pub decisions: u64,
}

/// Steps through a recording's events in order, folding them into a
/// [`ReplayState`] so a viewer can show the session as it unfolded.
pub struct Replay<'r> {
    events: &'r [EventBody],
    position: usize,
    state: ReplayState,
}

impl<'r> Replay<'r> {
    /// A replay at the start of `recording`.
    pub fn new(recording: &'r Recording) -> Self {
        Self { events: &recording.events, position: 0, state: ReplayState::default() }
    }

    /// How many events have been replayed.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The reconstructed state so far.
    pub fn state(&self) -> &ReplayState {
        &self.state
    }

    /// Replays the next event, returning it; `None` at the end.
    pub fn step(&mut self) -> Option<&'r EventBody> {
        let event = self.events.get(self.position)?;
        self.position += 1;
        let s = &mut self.state;
        match &event.kind {
            EventKind::RunCreated { run } => {
                s.runs.insert(run.id.clone(), run.status);
            }
            EventKind::RunStatusChanged { to, .. } => {
                if let Some(run) = &event.run_id {
                    s.runs.insert(run.clone(), *to);
                }
            }
            EventKind::TurnAdded { .. } => s.turns += 1,
            EventKind::GateOpened { gate } => {
                s.gates.insert(gate.id.clone(), GateStatus::Pending);
            }
            EventKind::GateAutoPassed { gate, .. } => {
                s.gates.insert(gate.id.clone(), GateStatus::Resolved);
                s.decisions += 1;
            }
            EventKind::GateResolved { gate_id, .. } => {
                s.gates.insert(gate_id.clone(), GateStatus::Resolved);
                s.decisions += 1;
            }
            EventKind::GateExpired { gate_id, .. } => {
                s.gates.insert(gate_id.clone(), GateStatus::Expired);
            }
            EventKind::GateCancelled { gate_id, .. } => {
                s.gates.insert(gate_id.clone(), GateStatus::Cancelled);
            }
            _ => {}
        }
        Some(event)
    }
}

impl Iterator for Replay<'_> {
    type Item = EventBody;
    fn next(&mut self) -> Option<EventBody> {
        self.step().cloned()
    }
}
