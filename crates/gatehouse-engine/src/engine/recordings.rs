//! Recordings in the engine: exporting a run, a session or everything
//! (snapshots, their events and the log's head as an anchor) in one read,
//! and importing one in one transaction. The recording format, its checks
//! and replay are in `recording.rs`.

use crate::decision::DecisionOrigin;
use crate::engine::audit::head_anchor;
use crate::engine::tx::not_found_run;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::ids::RunId;
use crate::recording::{
    check_recording, digest_idempotency_keys, ImportSummary, Recording, RecordingScope, RunRecord, RECORDING_FORMAT,
    RECORDING_VERSION,
};
use crate::run::Run;
use crate::scoring::CapabilityRating;
use crate::store::{GateFilter, ReadTx, RunFilter, Store};

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
