//! Housekeeping that keeps the store bounded and honest: the expiry sweep
//! (each stale gate expires exactly once and fails its task), the sweep of
//! runs whose agent is gone (cancelled once, their gates withdrawn), the
//! sweep of runs past their `expires_at` (cancelled once, their gates expired),
//! retention (purges old terminal runs, never pending work); audit
//! verification is in `audit.rs`.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::decision::{DecisionAction, DecisionInput, DecisionOrigin};
use crate::engine::close::{close_pending, save_pending, skip_if_closed, Closing};
use crate::engine::collab::apply_plan_op;
use crate::engine::gates::decision::decide_gate;
use crate::engine::tx::{after_gate_closed, emit, load_run, set_status};
use crate::engine::Engine;
use crate::error::Result;
use crate::event::{EventBody, EventKind};
use crate::gate::{BlockingMode, Gate, GateStatus, Priority, TimeoutFallback};
use crate::ids::{GateId, RunId};
use crate::plan::{PlanOperation, TaskStatus};
use crate::run::{Run, RunStatus, RunTransition};
use crate::store::{GateFilter, RunFilter, Store, WriteTx};

/// What a retention purge removed.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PurgeReport {
    /// Runs removed.
    pub runs: Vec<RunId>,
    /// Terminal runs last changed before this were purged.
    pub older_than: DateTime<Utc>,
}

impl<S: Store> Engine<S> {
    /// Expires every pending gate whose deadline has passed, exactly once
    /// each. A blocking gate's run fails with the reason; a gate tied to a
    /// plan task marks that task failed.
    pub fn sweep_expired(&self) -> Result<Vec<GateId>> {
        self.sweep_in_batches(expire_due)
    }

    /// Escalates every pending gate whose wait is over, exactly once each:
    /// its priority rises a step (to high at least), the reviewers and
    /// roles it escalates to may decide it too (when it names deciders),
    /// and `gate_escalated` on its timeline names them for the webhook and
    /// the desktop notification.
    pub fn sweep_escalations(&self) -> Result<Vec<GateId>> {
        self.sweep_in_batches(escalate_due)
    }

    /// Cancels every run in `created` or `active` whose agent has not been
    /// heard from for `gone_after`, exactly once each, with the reason
    /// "agent gone for N minutes" (N being `gone_after`); its pending gates
    /// are withdrawn as for any run that ends, and the status change is in
    /// the event log. Heard
    /// from means the run's last change or last event (any call on it, any
    /// gate opened or decided), or a wait on one of its gates: `waited_gates`
    /// are the gates an agent is long-polling now or left off polling
    /// within `gone_after` (the server knows them, the store does not).
    /// Runs waiting for a human (`awaiting_human`) or paused are never swept.
    pub fn sweep_abandoned_runs(&self, gone_after: Duration, waited_gates: &[GateId]) -> Result<Vec<RunId>> {
        if gone_after <= Duration::zero() {
            return Err(crate::error::EngineError::invalid("gone_after", "must be longer than zero"));
        }
        let now = self.now();
        let cutoff = now - gone_after;
        let waited = waited_gates.to_vec();
        let candidates = self.store().read(move |tx| {
            let mut waited_runs = HashSet::new();
            for gate in &waited {
                waited_runs.extend(tx.gate(gate)?.map(|g| g.run_id));
            }
            let live =
                tx.runs(&RunFilter { statuses: vec![RunStatus::Created, RunStatus::Active], ..RunFilter::default() })?;
            Ok(live
                .into_iter()
                .filter(|r| r.updated_at < cutoff && !waited_runs.contains(&r.id))
                .map(|r| r.id)
                .collect::<Vec<_>>())
        })?;
        let mut ended = Vec::new();
        for batch in candidates.chunks(SWEEP_BATCH) {
            let batch = batch.to_vec();
            ended.extend(self.store().write(move |tx| cancel_abandoned(tx, &batch, gone_after, now))?);
        }
        Ok(ended)
    }

    /// Cancels every live run whose `expires_at` has passed, exactly once
    /// each, as `system` with the reason "the run expired at ...": its
    /// pending gates expire first (each with its `gate_expired` event), so
    /// agents waiting on them hear why. Returns the runs ended.
    pub fn sweep_expired_runs(&self) -> Result<Vec<RunId>> {
        let now = self.now();
        let due = self.store().read(move |r| {
            let live = r.runs(&RunFilter { statuses: RunStatus::LIVE.to_vec(), ..RunFilter::default() })?;
            Ok(live
                .into_iter()
                .filter(|run| run.expires_at.is_some_and(|at| at <= now))
                .map(|run| run.id)
                .collect::<Vec<_>>())
        })?;
        let mut ended = Vec::new();
        for batch in due.chunks(SWEEP_BATCH) {
            let batch = batch.to_vec();
            ended.extend(self.store().write(move |tx| expire_runs(tx, &batch, now))?);
        }
        Ok(ended)
    }

    /// Runs `batch` on the gates due now, [`SWEEP_BATCH`] at a time, each
    /// batch one transaction, until a batch comes back short.
    fn sweep_in_batches(
        &self,
        batch: fn(&mut dyn WriteTx, DateTime<Utc>) -> Result<Vec<GateId>>,
    ) -> Result<Vec<GateId>> {
        let mut swept = Vec::new();
        loop {
            let now = self.now();
            let done = self.store().write(move |tx| batch(tx, now))?;
            let n = done.len();
            swept.extend(done);
            if n < SWEEP_BATCH {
                return Ok(swept);
            }
        }
    }

    /// Purges terminal runs last changed more than `days` ago. Runs with
    /// pending gates are never purged. Their events keep their place and
    /// hash in the chain but lose their bodies.
    pub fn purge_terminal_runs(&self, days: u32) -> Result<PurgeReport> {
        // A hundred years back is as far as a date goes here; more would leave the calendar.
        const MAX_DAYS: u32 = 36_500;
        if days > MAX_DAYS {
            return Err(crate::error::EngineError::invalid(
                "older_than_days",
                format!("must be at most {MAX_DAYS} (a hundred years), got {days}"),
            ));
        }
        let older_than = self.now() - Duration::days(i64::from(days));
        let now = self.now();
        self.store().write(move |tx| {
            let runs = tx.terminal_runs_before(older_than)?;
            for run in &runs {
                tx.purge_run(run)?;
            }
            if !runs.is_empty() {
                tx.append_event(EventBody {
                    at: now,
                    run_id: None,
                    session_id: None,
                    user_id: None,
                    actor: "retention".into(),
                    kind: EventKind::RetentionPurged { runs: runs.clone(), older_than },
                })?;
            }
            Ok(PurgeReport { runs, older_than })
        })
    }
}

fn human_duration(d: Duration) -> String {
    let secs = d.num_seconds().max(0);
    match secs {
        s if s >= 86_400 && s % 3_600 == 0 => format!("{}h", s / 3_600),
        s if s >= 3_600 => format!("{}h {}m", s / 3_600, (s % 3_600) / 60),
        s if s >= 60 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Cancels those of `runs` still live and silent for `gone_after`,
/// re-checked inside the write so an agent heard from meanwhile keeps its run.
fn cancel_abandoned(
    tx: &mut dyn WriteTx,
    runs: &[RunId],
    gone_after: Duration,
    now: DateTime<Utc>,
) -> Result<Vec<RunId>> {
    let mut ended = Vec::new();
    for id in runs {
        let Some(mut run) = tx.run(id)? else { continue };
        if !silent_since(tx, &run, now - gone_after)? {
            continue;
        }
        let reason = format!("agent gone for {}", minutes(gone_after));
        set_status(tx, &mut run, RunTransition::Cancel, "system", Some(reason), now)?;
        ended.push(run.id);
    }
    Ok(ended)
}

/// Ends each of `runs` still live and past its `expires_at` (another
/// sweep may have ended it first): its pending gates expire, then it is
/// cancelled with the reason.
fn expire_runs(tx: &mut dyn WriteTx, runs: &[RunId], now: DateTime<Utc>) -> Result<Vec<RunId>> {
    let mut ended = Vec::new();
    for id in runs {
        let Some(mut run) = tx.run(id)? else { continue };
        let Some(at) = run.expires_at.filter(|at| *at <= now && !run.status.is_terminal() && run.imported.is_none())
        else {
            continue;
        };
        let reason = format!("the run expired at {}", at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        for mut gate in tx.gates(&GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() })? {
            if skip_if_closed(close_pending(tx, &mut gate, Closing::Expired(reason.clone()), now))? {
                emit(
                    tx,
                    &run,
                    "system",
                    now,
                    EventKind::GateExpired { gate_id: gate.id.clone(), reason: reason.clone() },
                )?;
            }
        }
        set_status(tx, &mut run, RunTransition::Cancel, "system", Some(reason), now)?;
        ended.push(run.id);
    }
    Ok(ended)
}

/// Whether `run` is still `created` or `active` and its agent was last
/// heard from (its last change or event) before `cutoff`.
fn silent_since(tx: &dyn WriteTx, run: &Run, cutoff: DateTime<Utc>) -> Result<bool> {
    if !matches!(run.status, RunStatus::Created | RunStatus::Active) {
        return Ok(false);
    }
    let last_event = tx.events_of_runs(std::slice::from_ref(&run.id))?.last().map(|e| e.body.at);
    let heard = last_event.map_or(run.updated_at, |at| at.max(run.updated_at));
    Ok(heard < cutoff)
}

/// `d` in whole minutes ("1 minute", "90 minutes"), in seconds when shorter.
fn minutes(d: Duration) -> String {
    match (d.num_minutes(), d.num_seconds()) {
        (0, 1) => "1 second".into(),
        (0, s) => format!("{s} seconds"),
        (1, _) => "1 minute".into(),
        (m, _) => format!("{m} minutes"),
    }
}

/// How many due gates one sweep transaction takes.
const SWEEP_BATCH: usize = 256;

/// Expires (or applies the fallback of) the gates whose deadline passed by `now`.
fn expire_due(tx: &mut dyn WriteTx, now: DateTime<Utc>) -> Result<Vec<GateId>> {
    let ids = tx.expired_gate_ids(now, SWEEP_BATCH as u32)?;
    let mut done = Vec::new();
    for id in ids {
        // An earlier gate of this batch may have closed it (a sync gate's
        // expiry fails its run, withdrawing the run's other gates).
        let Some(gate) = tx.gate(&id)?.filter(|g| g.status == GateStatus::Pending) else { continue };
        let timed_out = match gate.on_timeout {
            TimeoutFallback::Reject | TimeoutFallback::Approve => decide_unanswered(tx, gate, now)?,
            TimeoutFallback::Escalate => escalate_unanswered(tx, gate, now)?,
            TimeoutFallback::Expire | TimeoutFallback::Fail => expire(tx, gate, now)?,
        };
        if timed_out {
            done.push(id);
        }
    }
    Ok(done)
}

/// Why a gate's wait ended, as its timeout says it.
fn unanswered(gate: &Gate, now: DateTime<Utc>) -> String {
    format!("no answer within {}", human_duration(now - gate.created_at))
}

/// A gate's approve or reject fallback: the system decides it. False when
/// someone decided it first.
fn decide_unanswered(tx: &mut dyn WriteTx, gate: Gate, now: DateTime<Utc>) -> Result<bool> {
    let action =
        if gate.on_timeout == TimeoutFallback::Approve { DecisionAction::Approve } else { DecisionAction::Reject };
    let reason = format!("{}: the gate's fallback {}s it", unanswered(&gate, now), action.as_str());
    let input = DecisionInput { text: Some(reason.clone()), ..DecisionInput::new(action) };
    let decided = decide_gate(tx, gate, input, "system", DecisionOrigin::System { reason }, now);
    skip_if_closed(decided.map(drop))
}

/// A gate's escalate fallback, once: urgent, with another window to wait,
/// which ends as a plain expiry. False when someone closed it first.
fn escalate_unanswered(tx: &mut dyn WriteTx, mut gate: Gate, now: DateTime<Utc>) -> Result<bool> {
    let window = gate.expires_at.map_or(Duration::hours(1), |at| at - gate.created_at);
    let expires_at = now + window.max(Duration::seconds(1));
    let reason = format!("{}: escalated to urgent, waiting until {expires_at}", unanswered(&gate, now));
    gate.priority = Priority::Urgent;
    gate.expires_at = Some(expires_at);
    gate.on_timeout = TimeoutFallback::Expire;
    if !skip_if_closed(save_pending(tx, &gate))? {
        return Ok(false);
    }
    let run = load_run(tx, &gate.run_id)?;
    let kind = EventKind::GateEscalated {
        gate_id: gate.id.clone(),
        priority: Priority::Urgent,
        expires_at: Some(expires_at),
        reason,
        notify: Vec::new(),
    };
    emit(tx, &run, "system", now, kind)?;
    Ok(true)
}

/// Expires a gate: a task it is tied to fails, and so does its run when the
/// gate was blocking or its fallback says fail. False when someone closed
/// it first.
fn expire(tx: &mut dyn WriteTx, mut gate: Gate, now: DateTime<Utc>) -> Result<bool> {
    let fail_run = gate.mode == BlockingMode::Sync || gate.on_timeout == TimeoutFallback::Fail;
    let reason = format!("expired after {} without resolution", human_duration(now - gate.created_at));
    if !skip_if_closed(close_pending(tx, &mut gate, Closing::Expired(reason.clone()), now))? {
        return Ok(false);
    }
    let mut run = load_run(tx, &gate.run_id)?;
    emit(tx, &run, "system", now, EventKind::GateExpired { gate_id: gate.id.clone(), reason: reason.clone() })?;
    let failure = format!("gate {} {reason}: {}", gate.id, gate.preview());
    if let Some(task_id) = &gate.context.task_id {
        let has_task = tx.latest_plan(&run.id)?.is_some_and(|p| p.plan.task(task_id).is_some());
        if has_task && !run.status.is_terminal() {
            let mut metadata = serde_json::Map::new();
            metadata.insert("failure_reason".into(), failure.clone().into());
            let op = PlanOperation::UpdateTask { task_id: task_id.clone(), status: Some(TaskStatus::Failed), metadata };
            apply_plan_op(tx, &run, &op, "system", now)?;
        }
    }
    if fail_run && !run.status.is_terminal() {
        set_status(tx, &mut run, RunTransition::Fail, "system", Some(failure), now)?;
    } else {
        after_gate_closed(tx, &mut run, gate.mode, "system", now)?;
    }
    Ok(true)
}

/// Escalates the gates whose wait was over by `now`.
fn escalate_due(tx: &mut dyn WriteTx, now: DateTime<Utc>) -> Result<Vec<GateId>> {
    let mut done = Vec::new();
    for id in tx.escalation_due_ids(now, SWEEP_BATCH as u32)? {
        let Some(mut gate) = tx.gate(&id)? else { continue };
        let Some(mut escalation) = gate.escalation.clone() else { continue };
        escalation.escalated_at = Some(now);
        gate.priority = match gate.priority {
            Priority::Low | Priority::Normal => Priority::High,
            Priority::High | Priority::Urgent => Priority::Urgent,
        };
        if !gate.deciders.is_empty() {
            for name in &escalation.to {
                if !gate.deciders.contains(name) {
                    gate.deciders.push(name.clone());
                }
            }
        }
        let waited = human_duration(now - gate.created_at);
        let reason = match escalation.to.as_slice() {
            [] => format!("no answer within {waited}: escalated to {}", gate.priority.as_str()),
            to => {
                format!("no answer within {waited}: escalated to {} and to {}", gate.priority.as_str(), to.join(", "))
            }
        };
        let notify = escalation.to.clone();
        gate.escalation = Some(escalation);
        if !skip_if_closed(save_pending(tx, &gate))? {
            continue;
        }
        let run = load_run(tx, &gate.run_id)?;
        let kind = EventKind::GateEscalated {
            gate_id: id.clone(),
            priority: gate.priority,
            expires_at: gate.expires_at,
            reason,
            notify,
        };
        emit(tx, &run, "system", now, kind)?;
        done.push(id);
    }
    Ok(done)
}
