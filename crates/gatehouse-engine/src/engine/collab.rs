//! Shared context, the plan and progress of a run, and agents' ratings:
//! the collaborative state around gates. Every context change and plan
//! revision is logged with its actor and time, so both have full history.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::tx::{emit, ensure_live, load_run, not_found_run};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{Gate, GateStatus};
use crate::ids::RunId;
use crate::plan::{Plan, PlanOperation, PlanRevision, ProgressState, ProgressStatus};
use crate::run::{Run, RunStatus};
use crate::scoring::CapabilityRating;
use crate::store::{EventFilter, GateFilter, ReadTx, Store, WriteTx};

/// One change of a key in a run's shared context, an audited key-value store.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextChange {
    /// The key.
    pub key: String,
    /// Before (absent when the key was new).
    pub old: Option<serde_json::Value>,
    /// After (absent when the key was deleted).
    pub new: Option<serde_json::Value>,
    /// Who changed it.
    pub actor: String,
    /// When, in UTC.
    pub at: DateTime<Utc>,
}

fn check_key(key: &str) -> Result<()> {
    if key.trim().is_empty() || key.len() > 512 {
        return Err(EngineError::invalid("key", "a context key must be 1 to 512 characters"));
    }
    Ok(())
}

impl<S: Store> Engine<S> {
    /// Sets a shared-context key; returns the previous value.
    pub fn context_set(
        &self,
        run_id: &RunId,
        key: &str,
        value: serde_json::Value,
        actor: &str,
    ) -> Result<Option<serde_json::Value>> {
        let key = &self.redacted_text(key);
        check_key(key)?;
        let value = self.redactor().redact_value(&value);
        let (run_id, key, actor, now) = (run_id.clone(), key.to_owned(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "context changes")?;
            let old = tx.context_value(&run.id, &key)?;
            tx.put_context(&run.id, &key, Some(&value))?;
            emit(tx, &run, &actor, now, EventKind::ContextSet { key, old: old.clone(), new: value })?;
            Ok(old)
        })
    }

    /// Deletes a shared-context key; returns its last value.
    pub fn context_delete(&self, run_id: &RunId, key: &str, actor: &str) -> Result<Option<serde_json::Value>> {
        // Redacted as when it was set, so a key holding a secret is still found.
        let key = &self.redacted_text(key);
        check_key(key)?;
        let (run_id, key, actor, now) = (run_id.clone(), key.to_owned(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "context changes")?;
            let Some(old) = tx.context_value(&run.id, &key)? else {
                return Err(EngineError::NotFound { what: "context key", id: key });
            };
            tx.put_context(&run.id, &key, None)?;
            emit(tx, &run, &actor, now, EventKind::ContextDeleted { key, old: Some(old.clone()) })?;
            Ok(Some(old))
        })
    }

    /// The current shared context of a run.
    pub fn context(&self, run_id: &RunId) -> Result<BTreeMap<String, serde_json::Value>> {
        self.run(run_id)?;
        self.store().read(|r| r.context(run_id))
    }

    /// One key of a run's shared context, as it stands.
    pub fn context_value(&self, run_id: &RunId, key: &str) -> Result<Option<serde_json::Value>> {
        self.store().read(|r| {
            r.run(run_id)?.ok_or_else(|| not_found_run(run_id))?;
            r.context_value(run_id, key)
        })
    }

    /// The keys of a run's shared context that start with `prefix`.
    pub fn context_prefixed(&self, run_id: &RunId, prefix: &str) -> Result<BTreeMap<String, serde_json::Value>> {
        self.store().read(|r| {
            r.run(run_id)?.ok_or_else(|| not_found_run(run_id))?;
            r.context_prefixed(run_id, prefix)
        })
    }

    /// Every set and delete of a run's context, oldest first.
    pub fn context_history(&self, run_id: &RunId) -> Result<Vec<ContextChange>> {
        self.run(run_id)?;
        let filter = EventFilter { run_id: Some(run_id.clone()), ..EventFilter::default() };
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = self.events_after(after, &filter, 10_000)?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for e in page {
                let (key, old, new) = match e.body.kind {
                    EventKind::ContextSet { key, old, new } => (key, old, Some(new)),
                    EventKind::ContextDeleted { key, old } => (key, old, None),
                    _ => continue,
                };
                out.push(ContextChange { key, old, new, actor: e.body.actor, at: e.body.at });
            }
        }
        Ok(out)
    }

    /// The run's current plan (what `plan_read` returns), if it has one.
    pub fn plan(&self, run_id: &RunId) -> Result<Option<PlanRevision>> {
        self.run(run_id)?;
        self.store().read(|r| r.latest_plan(run_id))
    }

    /// Every revision of the run's plan with its change log (plan collaboration).
    pub fn plan_revisions(&self, run_id: &RunId) -> Result<Vec<PlanRevision>> {
        self.run(run_id)?;
        self.store().read(|r| r.plan_revisions(run_id))
    }

    /// Applies a plan operation, keeping the new revision and its change
    /// log. An operation that changes nothing returns the current revision.
    pub fn plan_apply(&self, run_id: &RunId, op: PlanOperation, actor: &str) -> Result<PlanRevision> {
        let op = self.redacted(op)?;
        let (run_id, actor, now) = (run_id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "plan changes")?;
            apply_plan_op(tx, &run, &op, &actor, now)
        })
    }

    /// Reads the run's newest plan and applies what `change` makes of it,
    /// in one transaction, so no change anyone commits between the read and
    /// the write is undone (a whole-plan edit built from a plan read
    /// earlier would overwrite it). `change` answers `None` to leave the
    /// plan as it is: the answer is then the newest revision (`None`
    /// without a plan).
    pub fn plan_revise<F>(&self, run_id: &RunId, actor: &str, change: F) -> Result<Option<PlanRevision>>
    where
        F: FnOnce(Option<&Plan>) -> Option<PlanOperation> + Send + 'static,
    {
        let redactor = self.redactor().clone();
        let (run_id, actor, now) = (run_id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "plan changes")?;
            let current = tx.latest_plan(&run.id)?;
            let Some(op) = change(current.as_ref().map(|r| &r.plan)) else {
                return Ok(current);
            };
            let op = redactor.redact_record(op).map_err(|e| {
                EngineError::invalid("body", format!("a secret was found where it cannot be replaced: {e}"))
            })?;
            apply_plan_op(tx, &run, &op, &actor, now).map(Some)
        })
    }

    /// Applies `op` unless task `task_id` has moved on from attempt
    /// `attempt` (its `metadata.attempt`, which a reviewer's restart
    /// counts up): then nothing is written and the answer is `None`.
    /// Checked against the plan in the same transaction as the write, so
    /// a driver settling an attempt never overwrites a restart that came
    /// after it last read the plan.
    pub fn plan_apply_at_attempt(
        &self,
        run_id: &RunId,
        task_id: &str,
        attempt: u64,
        op: PlanOperation,
        actor: &str,
    ) -> Result<Option<PlanRevision>> {
        let op = self.redacted(op)?;
        let (run_id, task_id, actor, now) = (run_id.clone(), task_id.to_owned(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "plan changes")?;
            let current = tx.latest_plan(&run.id)?;
            let task = current.as_ref().and_then(|c| c.plan.task(&task_id));
            let at = task.map(|t| t.metadata.get("attempt").and_then(Value::as_u64).unwrap_or(0));
            if at != Some(attempt) {
                return Ok(None);
            }
            apply_plan_op(tx, &run, &op, &actor, now).map(Some)
        })
    }

    /// Applies `op` for an agent of the run: as [`Engine::plan_apply`], but
    /// refused (`Weakens`, 403) when it would change how people review the
    /// plan: once the run has a plan, its `execution_mode`, its
    /// `human_intervention_points`, and a task's `kind` or
    /// `intervention_point` metadata are a reviewer's to change. Checked
    /// against the plan in the same transaction, so no reviewer's change
    /// between a read and the write is undone.
    pub fn plan_apply_by_agent(&self, run_id: &RunId, op: PlanOperation, actor: &str) -> Result<PlanRevision> {
        self.plan_apply_by_agent_unless(run_id, op, actor, |_, _| None)?
            .map_err(|rule| EngineError::Weakens { field: "plan".into(), rule })
    }

    /// As [`Engine::plan_apply_by_agent`], and `refuse` may turn the
    /// operation down too, judged against the plan in the same transaction
    /// (so a person's change committed after the agent last read the plan
    /// is never slipped past): `Ok(Err(why))` then, and nothing is written.
    pub fn plan_apply_by_agent_unless<F>(
        &self,
        run_id: &RunId,
        op: PlanOperation,
        actor: &str,
        refuse: F,
    ) -> Result<std::result::Result<PlanRevision, String>>
    where
        F: FnOnce(&Plan, &PlanOperation) -> Option<String> + Send + 'static,
    {
        let op = self.redacted(op)?;
        let (run_id, actor, now) = (run_id.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "plan changes")?;
            if let Some(current) = tx.latest_plan(&run.id)? {
                if let Some(field) = review_change(&current.plan, &op) {
                    return Err(EngineError::Weakens {
                        field,
                        rule: "an agent may not change how people review its plan; a reviewer may".into(),
                    });
                }
                if let Some(why) = refuse(&current.plan, &op) {
                    return Ok(Err(why));
                }
            }
            apply_plan_op(tx, &run, &op, &actor, now).map(Ok)
        })
    }

    /// A reviewer's restart of a plan task: the task and the tasks depending
    /// on it back to `pending` ([`Plan::restarted`]) as one revision with its
    /// change log, read and written in one transaction so no progress the
    /// run records meanwhile is undone; `feedback` goes to the task's
    /// `metadata.feedback` for its next attempt. 404 for a run without a plan.
    pub fn plan_restart_task(
        &self,
        run_id: &RunId,
        task_id: &str,
        feedback: Option<&str>,
        actor: &str,
    ) -> Result<PlanRevision> {
        let (run_id, task_id, actor, now) = (run_id.clone(), task_id.to_owned(), actor.to_owned(), self.now());
        let feedback = feedback.map(str::to_owned);
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "plan changes")?;
            let current = tx
                .latest_plan(&run.id)?
                .ok_or_else(|| EngineError::NotFound { what: "plan of run", id: run.id.to_string() })?;
            let mut plan = current.plan.restarted(&task_id)?;
            if let (Some(feedback), Some(task)) = (feedback, plan.tasks.iter_mut().find(|t| t.task_id == task_id)) {
                task.metadata.insert("feedback".into(), Value::from(feedback));
            }
            apply_plan_op(tx, &run, &PlanOperation::Replace { plan }, &actor, now)
        })
    }

    /// Progress of a run: its plan's tasks when it has a plan, otherwise
    /// its gates (decided or expired, of all opened; gates withdrawn by a
    /// cancel count for neither); a completed run is complete.
    pub fn progress(&self, run_id: &RunId) -> Result<ProgressState> {
        self.store().read(|r| {
            let run = r.run(run_id)?.ok_or_else(|| not_found_run(run_id))?;
            progress_of(r, &run)
        })
    }

    /// Where a run stands, read from one snapshot: the run, its latest plan,
    /// its pending gates (oldest first) and its progress. Read together, a
    /// gate that opens meanwhile shows with the status it gave the run.
    pub fn run_status(&self, run_id: &RunId) -> Result<RunStatusSnapshot> {
        self.store().read(|r| {
            let run = r.run(run_id)?.ok_or_else(|| not_found_run(run_id))?;
            let mut pending = r.gates(&GateFilter { run_id: Some(run_id.clone()), ..GateFilter::pending() })?;
            pending.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            Ok(RunStatusSnapshot { plan: r.latest_plan(run_id)?, pending, progress: progress_of(r, &run)?, run })
        })
    }

    /// One agent's capability rating.
    pub fn rating(&self, agent: &str) -> Result<CapabilityRating> {
        self.store()
            .read(|r| r.rating(agent))?
            .ok_or_else(|| EngineError::NotFound { what: "rating for agent", id: agent.to_owned() })
    }

    /// Every agent's capability rating.
    pub fn ratings(&self) -> Result<Vec<CapabilityRating>> {
        self.store().read(|r| r.ratings())
    }
}

/// The task metadata keys that decide where people review a plan's tasks.
const REVIEW_KEYS: [&str; 2] = ["kind", "intervention_point"];

/// The field through which `op` would change how people review `plan`, if any.
fn review_change(plan: &Plan, op: &PlanOperation) -> Option<String> {
    match op {
        PlanOperation::Replace { plan: new } => {
            if new.execution_mode != plan.execution_mode {
                return Some("plan.execution_mode".into());
            }
            if new.human_intervention_points != plan.human_intervention_points {
                return Some("plan.human_intervention_points".into());
            }
            new.tasks.iter().enumerate().find_map(|(i, task)| {
                let old = plan.tasks.iter().find(|t| t.task_id == task.task_id)?;
                let key = REVIEW_KEYS.into_iter().find(|k| old.metadata.get(*k) != task.metadata.get(*k))?;
                Some(format!("plan.tasks[{i}].metadata.{key}"))
            })
        }
        PlanOperation::UpdateTask { task_id, metadata, .. } => {
            let old = plan.tasks.iter().find(|t| t.task_id == *task_id)?;
            let key = REVIEW_KEYS.into_iter().find(|k| match metadata.get(*k) {
                None => false,
                Some(Value::Null) => old.metadata.get(*k).is_some_and(|v| !v.is_null()),
                Some(v) => old.metadata.get(*k) != Some(v),
            })?;
            Some(format!("metadata.{key}"))
        }
        _ => None,
    }
}

/// Applies `op` to the run's newest plan inside a transaction.
pub(crate) fn apply_plan_op(
    tx: &mut dyn WriteTx,
    run: &Run,
    op: &PlanOperation,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<PlanRevision> {
    let current = tx.latest_plan(&run.id)?;
    let base = current.as_ref().map(|r| r.plan.clone()).unwrap_or_default();
    let (plan, change_log) = base.apply(op)?;
    if let (Some(current), true) = (&current, change_log.is_empty()) {
        return Ok(current.clone());
    }
    let revision = PlanRevision {
        revision: current.map_or(1, |c| c.revision + 1),
        plan,
        change_log,
        actor: actor.to_owned(),
        at: now,
    };
    tx.insert_plan_revision(&run.id, &revision)?;
    emit(tx, run, actor, now, EventKind::PlanRevised { revision: Box::new(revision.clone()) })?;
    Ok(revision)
}

/// A run and what [`Engine::run_status`] reads with it, from one snapshot.
#[derive(Debug, Clone)]
pub struct RunStatusSnapshot {
    /// The run.
    pub run: Run,
    /// Its latest plan revision, if it has a plan.
    pub plan: Option<PlanRevision>,
    /// Its pending gates, oldest first.
    pub pending: Vec<Gate>,
    /// Its progress.
    pub progress: ProgressState,
}

/// Progress of `run` (see [`Engine::progress`]) within the snapshot `r`.
fn progress_of(r: &dyn ReadTx, run: &Run) -> Result<ProgressState> {
    let run_id = &run.id;
    let mut progress = match r.latest_plan(run_id)? {
        Some(rev) => rev.plan.progress(),
        None => {
            let all = GateFilter { run_id: Some(run_id.clone()), ..GateFilter::default() };
            let withdrawn = r.count_gates(&GateFilter { status: Some(GateStatus::Cancelled), ..all.clone() })?;
            let total = r.count_gates(&all)?.saturating_sub(withdrawn);
            let pending = r.count_gates(&GateFilter { status: Some(GateStatus::Pending), ..all })?;
            let total = u32::try_from(total).unwrap_or(u32::MAX);
            let closed = total.saturating_sub(u32::try_from(pending).unwrap_or(u32::MAX));
            ProgressState::from_counts(total, closed)
        }
    };
    if run.status == RunStatus::Completed {
        progress.status = ProgressStatus::Completed;
    } else if progress.status == ProgressStatus::Completed && !run.status.is_terminal() {
        progress.status = ProgressStatus::InProgress;
    }
    Ok(progress)
}
