//! The global memory: a key-value store the team agents of every run share,
//! kept across runs (a run's own memory lives in its shared context). Each
//! set and delete is logged as an event of no run, so retention never drops
//! it with the run that wrote it, and audit verification replays it like
//! any row. Values are stored as sent (the orchestrator keeps its entries,
//! with who stored them and when they expire, as JSON).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::engine::collab::ContextChange;
use crate::engine::tx::{ensure_live, load_run};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::ids::RunId;
use crate::store::{EventFilter, Store, WriteTx};

/// The most changes [`Engine::global_memory_history`] returns, newest kept.
pub const GLOBAL_HISTORY_LIMIT: usize = 1000;

fn check_key(key: &str) -> Result<()> {
    if key.trim().is_empty() || key.len() > 512 {
        return Err(EngineError::invalid("key", "a memory key must be 1 to 512 characters"));
    }
    Ok(())
}

fn append(tx: &mut dyn WriteTx, actor: &str, at: DateTime<Utc>, kind: EventKind) -> Result<()> {
    let body = EventBody { at, run_id: None, session_id: None, user_id: None, actor: actor.to_owned(), kind };
    tx.append_event(body)?;
    Ok(())
}

impl<S: Store> Engine<S> {
    /// Sets a global memory key for `actor`, an agent of `from_run` (which
    /// must be live); returns the previous value. Setting the value already
    /// there changes nothing and logs nothing.
    pub fn global_memory_set(&self, key: &str, value: Value, actor: &str, from_run: &RunId) -> Result<Option<Value>> {
        let key = self.redacted_text(key);
        check_key(&key)?;
        let value = self.redactor().redact_value(&value);
        let (run_id, actor, now) = (from_run.clone(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let run = load_run(tx, &run_id)?;
            ensure_live(&run, "memory changes")?;
            let old = tx.global_memory()?.remove(&key);
            if old.as_ref() == Some(&value) {
                return Ok(old);
            }
            tx.put_global_memory(&key, Some(&value))?;
            let from_run = Some(run.id.clone());
            append(tx, &actor, now, EventKind::GlobalMemorySet { key, old: old.clone(), new: value, from_run })?;
            Ok(old)
        })
    }

    /// Deletes a global memory key; returns its last value.
    pub fn global_memory_delete(&self, key: &str, actor: &str) -> Result<Value> {
        let key = self.redacted_text(key);
        check_key(&key)?;
        let (actor, now) = (actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let Some(old) = tx.global_memory()?.remove(&key) else {
                return Err(EngineError::NotFound { what: "memory key", id: key });
            };
            tx.put_global_memory(&key, None)?;
            append(tx, &actor, now, EventKind::GlobalMemoryDeleted { key, old: Some(old.clone()) })?;
            Ok(old)
        })
    }

    /// The global memory as it stands, by key.
    pub fn global_memory(&self) -> Result<BTreeMap<String, Value>> {
        self.store().read(|r| r.global_memory())
    }

    /// The global memory's changes, oldest first: the newest
    /// [`GLOBAL_HISTORY_LIMIT`], read from the log.
    pub fn global_memory_history(&self) -> Result<Vec<ContextChange>> {
        let filter = EventFilter::default();
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = self.events_after(after, &filter, 10_000)?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for e in page {
                let (key, old, new) = match e.body.kind {
                    EventKind::GlobalMemorySet { key, old, new, .. } => (key, old, Some(new)),
                    EventKind::GlobalMemoryDeleted { key, old } => (key, old, None),
                    _ => continue,
                };
                out.push(ContextChange { key, old, new, actor: e.body.actor, at: e.body.at });
            }
            if out.len() > GLOBAL_HISTORY_LIMIT {
                out.drain(..out.len() - GLOBAL_HISTORY_LIMIT);
            }
        }
        Ok(out)
    }
}
