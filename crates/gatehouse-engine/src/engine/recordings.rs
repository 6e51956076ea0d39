//! Recordings in the engine: exporting a run, a session or everything
//! (snapshots, their events and the log's head as an anchor) in one read,
//! and importing one in one transaction. The recording format, its checks
//! and replay are in `recording.rs`.

use chrono::{DateTime, Utc};

use crate::decision::DecisionOrigin;
use crate::engine::audit::head_anchor;
use crate::engine::close::{close_pending, Closing};
use crate::engine::tx::{emit, not_found_run};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::gate::{Gate, GateStatus};
use crate::ids::RunId;
use crate::recording::{
    check_recording, digest_idempotency_keys, ImportSummary, Imported, Recording, RecordingScope, RunRecord,
    IMPORTED_UNDECIDED, RECORDING_FORMAT, RECORDING_VERSION,
};
use crate::run::Run;
use crate::scoring::RatingChange;
use crate::store::{GateFilter, ReadTx, RunFilter, Store, WriteTx};

impl<S: Store> Engine<S> {
    /// Exports `scope` as a recording (secrets redacted).
    pub fn export(&self, scope: RecordingScope) -> Result<Recording> {
        // A session is stored redacted: named as it was sent, it is found.
        let scope = self.redacted(scope)?;
        let exported_at = self.now();
        let recording = self.store().read(|r| {
            let runs = match &scope {
                RecordingScope::Run { run_id } => {
                    vec![r.run(run_id)?.ok_or_else(|| not_found_run(run_id))?]
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
                anchor: Some(head_anchor(r)?),
            })
        })?;
        Ok(recording)
    }

    /// A recording made ready to replay live (never stored): redacted as an
    /// import would be, and checked the same way.
    pub fn recording_for_replay(&self, recording: Recording) -> Result<Recording> {
        let recording = digest_idempotency_keys(self.redacted(recording)?)?;
        check_recording(&recording)?;
        Ok(recording)
    }

    /// Imports a recording into this database in one transaction: every
    /// run, turn, gate, decision, context key and plan revision as it was,
    /// each run and gate marked [`Imported`], and its events appended to
    /// this log in their order. Imports are history: a gate still pending
    /// in the recording is closed as cancelled ([`IMPORTED_UNDECIDED`],
    /// with its event), since no agent of this database waits for it.
    /// Refuses a recording whose runs already exist here, or that is
    /// inconsistent.
    pub fn import(&self, recording: Recording, actor: &str) -> Result<ImportSummary> {
        let recording = digest_idempotency_keys(self.redacted(recording)?)?;
        check_recording(&recording)?;
        let (actor, now) = (actor.to_owned(), self.now());
        let mark = Imported { at: now, by: actor.clone() };
        let redactor = self.redactor().clone();
        self.store().write(move |tx| {
            let mut summary = ImportSummary { runs: Vec::new(), gates: 0, events: 0 };
            let mut undecided = Vec::new();
            for rec in &recording.runs {
                if tx.run(&rec.run.id)?.is_some() {
                    return Err(EngineError::Recording(format!("run {} already exists in this database", rec.run.id)));
                }
                let run = Run { imported: Some(mark.clone()), ..rec.run.clone() };
                tx.insert_run(&run)?;
                for turn in &rec.turns {
                    tx.insert_turn(turn)?;
                }
                for gate in &rec.gates {
                    let gate = Gate {
                        payload: gate.payload.as_ref().map(|p| redactor.redact_value(p)),
                        imported: Some(mark.clone()),
                        ..gate.clone()
                    };
                    import_gate(tx, &gate)?;
                    if gate.status == GateStatus::Pending {
                        undecided.push((run.clone(), gate));
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
                    tx.rate_agent(agent, RatingChange::Score(score.score))?;
                }
                tx.append_event(body)?;
                summary.events += 1;
            }
            tx.append_event(EventBody {
                at: now,
                run_id: None,
                session_id: None,
                user_id: None,
                actor: actor.clone(),
                kind: EventKind::RecordingImported { runs: summary.runs.clone(), events: summary.events },
            })?;
            for (run, mut gate) in undecided {
                close_undecided(tx, &run, &mut gate, &actor, now)?;
            }
            Ok(summary)
        })
    }
}

/// Stores one imported gate with its decision, counting a human's decision
/// in its agent's rating as the original database did.
fn import_gate(tx: &mut dyn WriteTx, gate: &Gate) -> Result<()> {
    if !tx.insert_gate(gate)? {
        return Err(EngineError::Recording(format!("gate {} repeats an idempotency key", gate.id)));
    }
    if let Some(decision) = &gate.decision {
        tx.insert_decision(decision)?;
        if decision.origin == DecisionOrigin::Human && decision.action.judges_the_agent() {
            tx.rate_agent(&gate.agent, RatingChange::Decision { approved: decision.action.counts_as_approval() })?;
        }
    }
    Ok(())
}

/// Closes a gate the recording left pending, with the event that says so:
/// imported work is never a live blocker here.
fn close_undecided(tx: &mut dyn WriteTx, run: &Run, gate: &mut Gate, actor: &str, now: DateTime<Utc>) -> Result<()> {
    close_pending(tx, gate, Closing::Cancelled(IMPORTED_UNDECIDED.into()), now)?;
    emit(
        tx,
        run,
        actor,
        now,
        EventKind::GateCancelled { gate_id: gate.id.clone(), reason: IMPORTED_UNDECIDED.into() },
    )?;
    Ok(())
}

/// Everything about `run`, as a recording carries it.
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
