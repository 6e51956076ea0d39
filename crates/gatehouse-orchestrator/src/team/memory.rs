//! The team's memory: `store_memory`, `retrieve_memory` and `search_memory`
//! in three scopes. `run` and `team` live in the run's shared context, the
//! engine's audited key-value store (on SQLite and PostgreSQL alike), under
//! keys `memory:SCOPE:KEY`; `global` lives in the engine's global memory,
//! kept across runs, which the team agents of every run read and write
//! (and reviewers read, `GET /memory/global`). Each value is kept with who
//! stored it, from which run, and when it expires; the history is the
//! store's. Handoffs write their context here too (`handoff:TURN` in the
//! run scope), and each handoff and the run's end keep a snapshot of the
//! run's memory beside it (`snapshot:LABEL`, state preservation), read with
//! [`snapshots`].

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::driver::{Handle, Step};

use super::tools::text_arg;

/// Where a value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scope {
    /// This run's working memory.
    Run,
    /// What the run's team shares.
    Team,
    /// What the team agents of every run share, kept across runs.
    Global,
}

impl Scope {
    fn read(args: &Value) -> Result<Self, String> {
        match text_arg(args, "scope").unwrap_or("run") {
            "run" => Ok(Self::Run),
            "team" => Ok(Self::Team),
            "global" => Ok(Self::Global),
            other => Err(format!("scope `{other}` is unknown: use `run`, `team` or `global`")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Team => "team",
            Self::Global => "global",
        }
    }
}

/// The longest key.
const MAX_KEY: usize = 200;
/// The longest time to live, a year in seconds.
const MAX_TTL: i64 = 366 * 24 * 3600;

/// A remembered value as the context holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub value: Value,
    pub by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// The run it was stored from (global entries, which outlive it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// The context key of `key` in `scope`.
pub(crate) fn context_key(scope: Scope, key: &str) -> String {
    format!("memory:{}:{key}", scope.name())
}

/// The run context's key of a reviewer's `scope` (`run` or `team`; the
/// global memory is not in a run's context) and `key`, or why there is none.
pub fn reviewer_context_key(scope: &str, key: &str) -> Result<String, String> {
    match scope {
        "run" => Ok(context_key(Scope::Run, key)),
        "team" => Ok(context_key(Scope::Team, key)),
        "global" => Err("the global memory is not a run's: delete its keys at /memory/global/{key}".to_owned()),
        other => Err(format!("scope `{other}` is unknown: use `run` or `team`")),
    }
}

/// Stores `value` under `key`; a value already there, the same, is not stored again
/// (a step replayed after a restart writes nothing twice). A handoff's
/// record takes a snapshot of the run's memory beside it.
pub(crate) async fn put(h: &Handle, scope: Scope, key: &str, mut entry: Entry) -> Step<()> {
    let id = h.run_id.clone();
    if scope == Scope::Global {
        entry.run = Some(id.to_string());
        let (key, value) = (key.to_owned(), serde_json::to_value(&entry).unwrap_or(Value::Null));
        return h.engine(move |e| e.global_memory_set(&key, value, crate::AGENT, &id).map(|_| ())).await;
    }
    let context = context_key(scope, key);
    let value = serde_json::to_value(&entry).unwrap_or(Value::Null);
    h.engine(move |e| {
        if e.context_value(&id, &context)?.as_ref() != Some(&value) {
            e.context_set(&id, &context, value, crate::AGENT)?;
        }
        Ok(())
    })
    .await?;
    if scope == Scope::Run && key.starts_with("handoff:") {
        snapshot(h, key).await?;
    }
    Ok(())
}

/// The context key of the snapshot labelled `label`.
const SNAPSHOT: &str = "snapshot:";

/// Keeps a snapshot of the run's memory (its `run` and `team` scopes, as
/// they stand) under `snapshot:LABEL`, once: a label already kept is not
/// taken again, so a run driven again after a restart keeps the first.
pub(crate) async fn snapshot(h: &Handle, label: &str) -> Step<()> {
    let (id, key) = (h.run_id.clone(), format!("{SNAPSHOT}{label}"));
    h.engine(move |e| {
        if e.context_value(&id, &key)?.is_some() {
            return Ok(());
        }
        let memory: Map<String, Value> = e
            .context_prefixed(&id, "memory:")?
            .into_iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("memory:")?.to_owned(), v)))
            .filter(|(k, _)| !k.starts_with("global:"))
            .collect();
        e.context_set(&id, &key, json!({"at": e.now(), "memory": memory}), crate::AGENT)?;
        Ok(())
    })
    .await
}

/// One remembered value as a reviewer reads it (a snapshot's, or the global memory's).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemoryEntry {
    /// Its key (in a snapshot, `SCOPE:KEY`).
    pub key: String,
    /// Its value.
    pub value: Value,
    /// The agent that stored it.
    pub by: String,
    /// When it expires, if it does.
    pub expires_at: Option<DateTime<Utc>>,
    /// The run it was stored from (global entries).
    pub run_id: Option<String>,
}

impl MemoryEntry {
    /// `entry`, kept under `key`.
    pub fn new(key: String, entry: Entry) -> Self {
        Self { key, value: entry.value, by: entry.by, expires_at: entry.expires_at, run_id: entry.run }
    }
}

/// A snapshot of a run's memory, as a reviewer reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MemorySnapshot {
    /// What it was taken at: `handoff:TURN`, or `end`.
    pub label: String,
    /// When.
    pub at: Option<DateTime<Utc>>,
    /// The run's memory then (its `run` and `team` scopes), by `SCOPE:KEY`.
    pub entries: Vec<MemoryEntry>,
}

/// The snapshots kept in a run's context, in the order they were taken.
pub fn snapshots(context: &std::collections::BTreeMap<String, Value>) -> Vec<MemorySnapshot> {
    let mut found: Vec<MemorySnapshot> = context
        .iter()
        .filter_map(|(k, v)| {
            let label = k.strip_prefix(SNAPSHOT)?.to_owned();
            let at = v.get("at").and_then(|t| serde_json::from_value(t.clone()).ok());
            let memory = v.get("memory").and_then(Value::as_object).cloned().unwrap_or_default();
            let entries = memory
                .into_iter()
                .filter_map(|(k, v)| Some(MemoryEntry::new(k, serde_json::from_value::<Entry>(v).ok()?)))
                .collect();
            Some(MemorySnapshot { label, at, entries })
        })
        .collect();
    // Handoffs by their turn, then the end (times can tie).
    let order = |label: &str| match label.strip_prefix("handoff:").and_then(|n| n.parse::<u64>().ok()) {
        Some(turn) => (0, turn),
        None => (1, u64::from(label != "end")),
    };
    found.sort_by(|a, b| (order(&a.label), &a.label).cmp(&(order(&b.label), &b.label)));
    found
}

/// `store_memory(key, value, scope, ttl)`: the answer for the agent.
pub(crate) async fn store(h: &Handle, agent: &str, args: &Value) -> Step<String> {
    let scope = match Scope::read(args) {
        Ok(s) => s,
        Err(e) => return Ok(format!("store_memory: {e}")),
    };
    let Some(key) = text_arg(args, "key").filter(|k| k.chars().count() <= MAX_KEY) else {
        return Ok(format!("store_memory: `key` is required, a string of 1 to {MAX_KEY} characters"));
    };
    let Some(value) = args.get("value").filter(|v| !v.is_null()).cloned() else {
        return Ok("store_memory: `value` is required".to_owned());
    };
    let ttl = match args.get("ttl") {
        None | Some(Value::Null) => None,
        Some(t) => match t.as_i64().filter(|s| (1..=MAX_TTL).contains(s)) {
            Some(s) => Some(s),
            None => return Ok(format!("store_memory: `ttl` must be whole seconds from 1 to {MAX_TTL}")),
        },
    };
    let now = now(h).await?;
    let expires_at = ttl.map(|s| now + Duration::seconds(s));
    put(h, scope, key, Entry { value, by: agent.to_owned(), expires_at, run: None }).await?;
    let until = expires_at.map(|t| format!(" until {}", t.to_rfc3339())).unwrap_or_default();
    Ok(format!("store_memory: kept `{key}` in the {} memory{until}", scope.name()))
}

/// `retrieve_memory(key, scope)`: the value, or why there is none.
pub(crate) async fn retrieve(h: &Handle, args: &Value) -> Step<String> {
    let scope = match Scope::read(args) {
        Ok(s) => s,
        Err(e) => return Ok(format!("retrieve_memory: {e}")),
    };
    let Some(key) = text_arg(args, "key") else {
        return Ok("retrieve_memory: `key` is required".to_owned());
    };
    let now = now(h).await?;
    let found = live_entries(h, scope, now).await?.into_iter().find(|(k, _)| k == key);
    Ok(match found {
        Some((_, entry)) => format!("retrieve_memory `{key}`: {}", entry.value),
        None => format!("retrieve_memory: nothing kept under `{key}` in the {} memory", scope.name()),
    })
}

/// `search_memory(query, scope)`: the keys and values holding the query's text.
pub(crate) async fn search(h: &Handle, args: &Value) -> Step<String> {
    let scope = match Scope::read(args) {
        Ok(s) => s,
        Err(e) => return Ok(format!("search_memory: {e}")),
    };
    let Some(query) = text_arg(args, "query") else {
        return Ok("search_memory: `query` is required".to_owned());
    };
    let needle = query.to_lowercase();
    let now = now(h).await?;
    let hits: Vec<String> = live_entries(h, scope, now)
        .await?
        .into_iter()
        .filter(|(k, e)| k.to_lowercase().contains(&needle) || e.value.to_string().to_lowercase().contains(&needle))
        .map(|(k, e)| format!("- {k}: {}", e.value))
        .collect();
    Ok(if hits.is_empty() {
        format!("search_memory: nothing in the {} memory holds `{query}`", scope.name())
    } else {
        format!("search_memory `{query}`:\n{}", hits.join("\n"))
    })
}

/// The scope's unexpired entries, by key.
async fn live_entries(h: &Handle, scope: Scope, now: DateTime<Utc>) -> Step<Vec<(String, Entry)>> {
    let id = h.run_id.clone();
    let (stored, prefix) = match scope {
        Scope::Global => (h.engine(|e| e.global_memory()).await?, String::new()),
        _ => {
            let prefix = context_key(scope, "");
            let within = prefix.clone();
            (h.engine(move |e| e.context_prefixed(&id, &within)).await?, prefix)
        }
    };
    Ok(live(stored, &prefix, now))
}

/// The entries of `stored` under `prefix` (without it) that have not expired at `now`.
pub fn live(
    stored: std::collections::BTreeMap<String, Value>,
    prefix: &str,
    now: DateTime<Utc>,
) -> Vec<(String, Entry)> {
    stored
        .into_iter()
        .filter_map(|(k, v)| Some((k.strip_prefix(prefix)?.to_owned(), serde_json::from_value::<Entry>(v).ok()?)))
        .filter(|(_, e)| e.expires_at.is_none_or(|t| t > now))
        .collect()
}

/// The engine's clock (a test's injected one included).
async fn now(h: &Handle) -> Step<DateTime<Utc>> {
    h.engine(|e| Ok(e.now())).await
}

/// The handoff's record in the run's memory.
pub(crate) fn handoff_entry(from: &str, to: &str, reason: &str, context: &Value) -> Entry {
    Entry {
        value: json!({"from": from, "to": to, "reason": reason, "context": context}),
        by: from.to_owned(),
        expires_at: None,
        run: None,
    }
}
