//! Recordings: a run, a session or everything exported as one versioned
//! JSON document (snapshots plus the events that produced them), imported
//! losslessly into another database, and replayed event by event.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::decision::DecisionOrigin;
use crate::error::{EngineError, Result};
use crate::event::{AuditAnchor, EventBody, EventKind};
use crate::gate::{Gate, GateStatus};
use crate::ids::{GateId, RunId};
use crate::plan::PlanRevision;
use crate::redact::{idempotency_digest, is_idempotency_digest};
use crate::run::{Run, RunStatus, Turn};
use crate::scoring::CapabilityRating;
use crate::store::{GateFilter, ReadTx, RunFilter, Store};
use crate::Engine;

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

impl<S: Store> Engine<S> {
    /// Exports `scope` as a recording (secrets redacted).
    pub fn export(&self, scope: RecordingScope) -> Result<Recording> {
        // A session is stored redacted: named as it was sent, it is found.
        let scope = self.redacted(scope)?;
        let exported_at = self.now();
        let recording = self.store().read(|r| {
            let runs = match &scope {
                RecordingScope::Run { run_id } => {
                    vec![r.run(run_id)?.ok_or_else(|| crate::engine::runs::not_found_run(run_id))?]
                }
                RecordingScope::Session { session_id } => {
                    let runs = r.runs(&RunFilter { session_id: Some(session_id.clone()), ..RunFilter::default() })?;
                    if runs.is_empty() {
                        return Err(EngineError::NotFound { what: "session", id: session_id.clone() });
                    }
                    runs
                }
                RecordingScope::All => r.runs(&RunFilter::default())?,
            };
            let mut records = Vec::with_capacity(runs.len());
            for run in runs.into_iter().rev() {
                records.push(run_record(r, run)?);
            }
            let ids: Vec<RunId> = records.iter().map(|rec| rec.run.id.clone()).collect();
            let events =
                r.events_of_runs(&ids)?.into_iter().filter(|e| e.body.kind.is_recordable()).map(|e| e.body).collect();
            Ok(Recording {
                format: RECORDING_FORMAT.into(),
                version: RECORDING_VERSION,
                exported_at,
                scope: scope.clone(),
                runs: records,
                events,
                anchor: Some(crate::engine::audit::head_anchor(r)?),
            })
        })?;
        Ok(recording)
    }

    /// Imports a recording into this database in one transaction: every
    /// run, turn, gate, decision, context key and plan revision as it was,
    /// and its events appended to this log in their order. Refuses a
    /// recording whose runs already exist here, or that is inconsistent.
    pub fn import(&self, recording: Recording, actor: &str) -> Result<ImportSummary> {
        let recording = digest_idempotency_keys(self.redacted(recording)?)?;
        check_recording(&recording)?;
        let (actor, now) = (actor.to_owned(), self.now());
        let redactor = self.redactor().clone();
        self.store().write(move |tx| {
            let mut summary = ImportSummary { runs: Vec::new(), gates: 0, events: 0 };
            for rec in &recording.runs {
                if tx.run(&rec.run.id)?.is_some() {
                    return Err(EngineError::Recording(format!("run {} already exists in this database", rec.run.id)));
                }
                tx.insert_run(&rec.run)?;
                for turn in &rec.turns {
                    tx.insert_turn(turn)?;
                }
                for gate in &rec.gates {
                    let mut gate = gate.clone();
                    gate.payload = gate.payload.map(|p| redactor.redact_value(&p));
                    if !tx.insert_gate(&gate)? {
                        return Err(EngineError::Recording(format!("gate {} repeats an idempotency key", gate.id)));
                    }
                    if let Some(decision) = &gate.decision {
                        tx.insert_decision(decision)?;
                        if decision.origin == DecisionOrigin::Human && decision.action.judges_the_agent() {
                            let mut rating =
                                tx.rating(&gate.agent)?.unwrap_or_else(|| CapabilityRating::new(&gate.agent));
                            rating.record_decision(decision.action.counts_as_approval());
                            tx.put_rating(&rating)?;
                        }
                    }
                    summary.gates += 1;
                }
                for (key, value) in &rec.context {
                    tx.put_context(&rec.run.id, key, Some(value))?;
                }
                for revision in &rec.plan_revisions {
                    tx.insert_plan_revision(&rec.run.id, revision)?;
                }
                summary.runs.push(rec.run.id.clone());
            }
            for body in recording.events {
                if let EventKind::ScoreRecorded { agent, score, .. } = &body.kind {
                    let mut rating = tx.rating(agent)?.unwrap_or_else(|| CapabilityRating::new(agent));
                    rating.record_score(score.score);
                    tx.put_rating(&rating)?;
                }
                tx.append_event(body)?;
                summary.events += 1;
            }
            tx.append_event(EventBody {
                at: now,
                run_id: None,
                session_id: None,
                user_id: None,
                actor,
                kind: EventKind::RecordingImported { runs: summary.runs.clone(), events: summary.events },
            })?;
            Ok(summary)
        })
    }
}

/// The recording with its gates' idempotency keys digested, as this version
/// stores them (in its runs and in its events); a recording from an older
/// version carries them as the agent sent them.
fn digest_idempotency_keys(recording: Recording) -> Result<Recording> {
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

fn run_record(r: &dyn ReadTx, run: Run) -> Result<RunRecord> {
    let mut gates = r.gates(&GateFilter { run_id: Some(run.id.clone()), ..GateFilter::default() })?;
    gates.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(RunRecord {
        turns: r.turns(&run.id)?,
        gates,
        context: r.context(&run.id)?,
        plan_revisions: r.plan_revisions(&run.id)?,
        run,
    })
}

/// Rejects recordings this binary cannot import faithfully.
fn check_recording(rec: &Recording) -> Result<()> {
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
