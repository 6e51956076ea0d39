//! The store boundary. The engine's logic is written once against these
//! traits; a backend supplies transactions ([`Store::write`] runs one
//! closure atomically and appends its events to the hash-chained log) and
//! reads. SQLite is the embedded backend; PostgreSQL plugs in here.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::allow_rule::{AllowRule, AllowRuleFilter};
use crate::decision::Decision;
use crate::error::Result;
use crate::event::{AuditKey, Event, EventBody, EventRow};
use crate::gate::{BlockingMode, Gate, GateKind, GateStatus};
use crate::ids::{AllowRuleId, GateId, RunId};
use crate::metrics::{Correction, GateTally};
use crate::plan::PlanRevision;
use crate::run::{Run, RunStatus, Turn};
use crate::scoring::{CapabilityRating, RatingChange};
use crate::search::{GateSearch, SearchResults};
use crate::token::Token;

mod chain;
pub mod health;
pub mod postgres;
mod search_document;
mod snippets;
pub mod sqlite;

pub use health::{SchemaProbe, StatsSnapshot, StoreStats};
pub use postgres::{PgOptions, PgStore};
pub use sqlite::{SqliteStore, StoreOptions};

/// Which gates to list.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateFilter {
    /// Only this status.
    #[serde(default)]
    pub status: Option<GateStatus>,
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<GateKind>,
    /// Only this blocking mode.
    #[serde(default)]
    pub mode: Option<BlockingMode>,
    /// Only this run.
    #[serde(default)]
    pub run_id: Option<RunId>,
    /// Only the gates of these runs, in one query however many (`Some` of
    /// none matches nothing); `run_id`, if set, narrows them further.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunId>>,
    /// Only this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// At most this many (default: all).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many.
    #[serde(default)]
    pub offset: u32,
}

impl GateFilter {
    /// The reviewer's queue: pending gates in panel order.
    pub fn pending() -> Self {
        Self { status: Some(GateStatus::Pending), ..Self::default() }
    }
}

/// Which runs to list.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFilter {
    /// Any of these statuses (empty: all).
    #[serde(default)]
    pub statuses: Vec<RunStatus>,
    /// Only this user's.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Only this session's.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Only the runs this agent drives or takes part in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Only these runs, in one query however many (`Some` of none matches
    /// nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<RunId>>,
    /// At most this many (default: all).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many first (newest first), to page through long lists.
    #[serde(default)]
    pub offset: Option<u32>,
}

/// Which events to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventFilter {
    /// Only this run's.
    pub run_id: Option<RunId>,
    /// Only this session's.
    pub session_id: Option<String>,
    /// Only this user's.
    pub user_id: Option<String>,
}

/// The tables audit verification reads whole, to compare each row with
/// the state the event log implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditTable {
    /// `runs`.
    Runs,
    /// `gates`.
    Gates,
    /// `decisions`.
    Decisions,
    /// `turns`.
    Turns,
    /// `context` (its `value` is the row's data).
    Context,
    /// `plan_revisions`.
    PlanRevisions,
    /// `allow_rules`.
    AllowRules,
    /// `tokens` (never the secrets' hashes).
    Tokens,
    /// `global_memory` (its `value` is the row's data).
    GlobalMemory,
}

impl AuditTable {
    /// The query reading the table, the same on both backends: its query
    /// columns, then its JSON snapshot last.
    pub(crate) fn select(self) -> &'static str {
        match self {
            Self::Runs => "SELECT id, session_id, user_id, status, created_at, updated_at, parent_id, data FROM runs",
            Self::Gates => {
                "SELECT id, run_id, kind, mode_rank, priority, status, agent, created_at, expires_at, escalate_at, data
                 FROM gates"
            }
            Self::Decisions => {
                "SELECT id, gate_id, run_id, action, decided_by, decided_at, latency_ms, data FROM decisions"
            }
            Self::Turns => "SELECT id, run_id, idx, data FROM turns",
            Self::Context => "SELECT run_id, key, value FROM context",
            Self::PlanRevisions => "SELECT run_id, revision, data FROM plan_revisions",
            Self::AllowRules => "SELECT id, agent, action, created_at, expires_at, revoked_at, data FROM allow_rules",
            Self::Tokens => "SELECT id, name, role, created_at, revoked_at, data FROM tokens",
            Self::GlobalMemory => "SELECT key, value FROM global_memory",
        }
    }
}

/// A stored row as verification reads it: its query columns by name (text,
/// integers or null) and its JSON snapshot.
#[derive(Debug, Clone)]
pub struct StoredRow {
    /// The query columns.
    pub columns: serde_json::Map<String, serde_json::Value>,
    /// The snapshot.
    pub data: String,
}

/// Reads, inside a snapshot.
pub trait ReadTx {
    /// One run.
    fn run(&self, id: &RunId) -> Result<Option<Run>>;
    /// Runs matching `filter`, newest first.
    fn runs(&self, filter: &RunFilter) -> Result<Vec<Run>>;
    /// The runs whose parent is `parent` (sub-agents' runs), oldest first.
    fn child_runs(&self, parent: &RunId) -> Result<Vec<Run>>;
    /// Runs older than `cutoff` (by last change) in a terminal status.
    fn terminal_runs_before(&self, cutoff: chrono::DateTime<chrono::Utc>) -> Result<Vec<RunId>>;
    /// One gate, with its decision.
    fn gate(&self, id: &GateId) -> Result<Option<Gate>>;
    /// The gate an agent opened with this idempotency key on this run.
    fn gate_by_idempotency_key(&self, run: &RunId, key: &str) -> Result<Option<Gate>>;
    /// Gates matching `filter`: pending ones in panel order (sync first,
    /// then priority, then age), others newest first.
    fn gates(&self, filter: &GateFilter) -> Result<Vec<Gate>>;
    /// How many gates match `filter` (ignoring limit and offset).
    fn count_gates(&self, filter: &GateFilter) -> Result<u64>;
    /// Gates matching a search, newest first, with snippets of their
    /// matches (see [`GateSearch`]).
    fn search_gates(&self, search: &GateSearch) -> Result<SearchResults>;
    /// [`ReadTx::search_gates`] over the gates of `runs` only, in one
    /// query however many (its own `run_id`, if set, narrows them further).
    fn search_gates_of_runs(&self, search: &GateSearch, runs: &[RunId]) -> Result<SearchResults>;
    /// Pending sync gates of a run.
    fn pending_blocking_gates(&self, run: &RunId) -> Result<u64>;
    /// Ids of pending gates whose expiry is at or before `now`, oldest first.
    fn expired_gate_ids(&self, now: chrono::DateTime<chrono::Utc>, limit: u32) -> Result<Vec<GateId>>;
    /// Pending gates whose escalation is due at `now`, soonest first.
    fn escalation_due_ids(&self, now: chrono::DateTime<chrono::Utc>, limit: u32) -> Result<Vec<GateId>>;
    /// A run's turns in order.
    fn turns(&self, run: &RunId) -> Result<Vec<Turn>>;
    /// A run's turns after the turn index `after`, in order.
    fn turns_after(&self, run: &RunId, after: u32) -> Result<Vec<Turn>>;
    /// A run's current shared context.
    fn context(&self, run: &RunId) -> Result<BTreeMap<String, serde_json::Value>>;
    /// One key of a run's shared context.
    fn context_value(&self, run: &RunId, key: &str) -> Result<Option<serde_json::Value>>;
    /// The keys of a run's shared context that start with `prefix`.
    fn context_prefixed(&self, run: &RunId, prefix: &str) -> Result<BTreeMap<String, serde_json::Value>>;
    /// The global memory, kept across runs, by key.
    fn global_memory(&self) -> Result<BTreeMap<String, serde_json::Value>>;
    /// A run's plan revisions, oldest first.
    fn plan_revisions(&self, run: &RunId) -> Result<Vec<PlanRevision>>;
    /// A run's newest plan revision.
    fn latest_plan(&self, run: &RunId) -> Result<Option<PlanRevision>>;
    /// One agent's capability rating.
    fn rating(&self, agent: &str) -> Result<Option<CapabilityRating>>;
    /// Every agent's rating.
    fn ratings(&self) -> Result<Vec<CapabilityRating>>;
    /// Events after `seq` matching `filter`, at most `limit`.
    fn events_after(&self, seq: u64, filter: &EventFilter, limit: u32) -> Result<Vec<Event>>;
    /// All events of these runs, in log order (purged bodies skipped).
    fn events_of_runs(&self, runs: &[RunId]) -> Result<Vec<Event>>;
    /// Raw rows for verification, from `seq` on, at most `limit`.
    fn event_rows(&self, after: u64, limit: u32) -> Result<Vec<EventRow>>;
    /// The newest sequence number (0 when empty).
    fn head_seq(&self) -> Result<u64>;
    /// The readiness read: the recorded schema version, in one statement
    /// that also touches the event log (so a missing table shows).
    fn schema_probe(&self) -> Result<SchemaProbe>;
    /// Every row of `table`, for audit verification.
    fn stored_rows(&self, table: AuditTable) -> Result<Vec<StoredRow>>;
    /// Every API token (revoked ones too).
    fn tokens(&self) -> Result<Vec<Token>>;
    /// The live token whose secret hashes to `hash`.
    fn token_by_hash(&self, hash: &[u8; 32]) -> Result<Option<Token>>;
    /// Runs matching `filter` that `agent` drives or takes part in, newest
    /// first (as [`ReadTx::runs`] with the filter's `agent`).
    fn runs_of_agent(&self, filter: &RunFilter, agent: &str) -> Result<Vec<Run>>;
    /// Gates counted by agent, kind, status and decision origin, with their
    /// decisions' summed latencies (metrics; one grouped scan).
    fn gate_tallies(&self) -> Result<Vec<GateTally>>;
    /// The JSON pointers human edits changed most often, most frequent
    /// first (ties by path), at most `limit`.
    fn top_corrections(&self, limit: u32) -> Result<Vec<Correction>>;
    /// What the alert sweep measures: the oldest pending sync gate, the
    /// pending count, and gates opened and auto-passed since `since`.
    fn alert_figures(&self, since: chrono::DateTime<chrono::Utc>) -> Result<crate::alert::AlertFigures>;
    /// The newest `limit` alert events (raised or cleared), newest first.
    fn latest_alert_events(&self, limit: u32) -> Result<Vec<EventBody>>;
    /// Gates that waited for a person, per priority rank, against the
    /// decision targets (ms, by rank) at `now` (one grouped scan).
    fn sla_tallies(
        &self,
        targets_ms: [i64; 4],
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<crate::alert::SlaTally>>;
    /// One allow-rule, its status as of `now`.
    fn allow_rule(&self, id: &AllowRuleId, now: chrono::DateTime<chrono::Utc>) -> Result<Option<AllowRule>>;
    /// Allow-rules matching `filter` (statuses as of `now`), newest first.
    fn allow_rules(&self, filter: &AllowRuleFilter, now: chrono::DateTime<chrono::Utc>) -> Result<Vec<AllowRule>>;
    /// The rules live at `now` for `agent`'s `action`, oldest first.
    fn live_allow_rules(&self, agent: &str, action: &str, now: chrono::DateTime<chrono::Utc>)
        -> Result<Vec<AllowRule>>;
    /// What a gate about to open on run `id` needs read first, read
    /// together (a database server answers them in one round trip): the
    /// run; for each of `actions`, the rules live at `now` for `agent`'s
    /// action (as [`ReadTx::live_allow_rules`]); and the run's gate opened
    /// with `idempotency_key`, if one was given and such a gate exists (as
    /// [`ReadTx::gate_by_idempotency_key`]).
    fn reads_before_open(
        &self,
        id: &RunId,
        agent: &str,
        actions: &[&str],
        idempotency_key: Option<&str>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<BeforeOpen> {
        let run = self.run(id)?;
        let rules = actions.iter().map(|action| self.live_allow_rules(agent, action, now)).collect::<Result<_>>()?;
        let existing = match (&run, idempotency_key) {
            (Some(_), Some(key)) => self.gate_by_idempotency_key(id, key)?,
            _ => None,
        };
        Ok(BeforeOpen { run, rules, existing })
    }
}

/// What [`ReadTx::reads_before_open`] read.
#[derive(Debug)]
pub struct BeforeOpen {
    /// The run, if it exists.
    pub run: Option<Run>,
    /// Each action's live rules, in the order the actions were asked for.
    pub rules: Vec<Vec<AllowRule>>,
    /// The gate an earlier call with the same idempotency key opened.
    pub existing: Option<Gate>,
}

/// Writes, inside one atomic transaction.
pub trait WriteTx: ReadTx {
    /// Stores a new run.
    fn insert_run(&mut self, run: &Run) -> Result<()>;
    /// Replaces a run's snapshot.
    fn update_run(&mut self, run: &Run) -> Result<()>;
    /// Stores a new gate; `false` when its idempotency key is taken.
    fn insert_gate(&mut self, gate: &Gate) -> Result<bool>;
    /// Replaces a gate's snapshot only if its stored status is still
    /// `expected`; returns whether it did. This one conditional update is
    /// what makes the first resolver win.
    fn update_gate_if(&mut self, gate: &Gate, expected: GateStatus) -> Result<bool>;
    /// Stores a gate's decision (at most one per gate).
    fn insert_decision(&mut self, decision: &Decision) -> Result<()>;
    /// Stores a turn.
    fn insert_turn(&mut self, turn: &Turn) -> Result<()>;
    /// Sets (`Some`) or deletes (`None`) a context key.
    fn put_context(&mut self, run: &RunId, key: &str, value: Option<&serde_json::Value>) -> Result<()>;
    /// Sets (`Some`) or deletes (`None`) a key of the global memory.
    fn put_global_memory(&mut self, key: &str, value: Option<&serde_json::Value>) -> Result<()>;
    /// Stores a plan revision.
    fn insert_plan_revision(&mut self, run: &RunId, revision: &PlanRevision) -> Result<()>;
    /// Counts `change` in `agent`'s rating (made if missing). SQLite applies
    /// it at once; PostgreSQL as the write's group commits, under the
    /// chain's lock, so writes on different runs of one agent never wait
    /// for each other at its rating's row (a read of the rating later in
    /// the same write does not see it there).
    fn rate_agent(&mut self, agent: &str, change: RatingChange) -> Result<()>;
    /// Appends an event to the chained log; it is published after commit.
    /// Its `seq` and link are known once its write commits: on PostgreSQL
    /// a write group takes its place in the chain as it ends.
    fn append_event(&mut self, body: EventBody) -> Result<()>;
    /// Deletes a run's rows and drops the bodies of its events.
    fn purge_run(&mut self, run: &RunId) -> Result<()>;
    /// Stores a new token with the hash of its secret.
    fn insert_token(&mut self, token: &Token, secret_hash: &[u8; 32]) -> Result<()>;
    /// Replaces a token's snapshot (revocation).
    fn update_token(&mut self, token: &Token) -> Result<()>;
    /// Stores a new allow-rule.
    fn insert_allow_rule(&mut self, rule: &AllowRule) -> Result<()>;
    /// Replaces an allow-rule's snapshot (a use counted, a revocation).
    fn update_allow_rule(&mut self, rule: &AllowRule) -> Result<()>;
}

/// The next group of queued writes for a backend's writer: the first to
/// arrive, then whatever else is queued, up to `max`; `None` once the queue
/// is closed and empty.
pub(crate) fn next_group<J>(queue: &std::sync::mpsc::Receiver<J>, max: usize) -> Option<Vec<J>> {
    Some(group_from(queue.recv().ok()?, queue, max))
}

/// A group of `first` and what else is queued, up to `max` jobs, without waiting.
pub(crate) fn group_from<J>(first: J, queue: &std::sync::mpsc::Receiver<J>, max: usize) -> Vec<J> {
    let mut group = vec![first];
    while group.len() < max {
        match queue.try_recv() {
            Ok(job) => group.push(job),
            Err(_) => break,
        }
    }
    group
}

/// A transactional backend.
pub trait Store: Send + Sync + 'static {
    /// Runs `op` in one write transaction. Its events are appended in the
    /// same transaction and published to subscribers after the commit; if
    /// `op` fails nothing it did is kept.
    fn write<T, F>(&self, op: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        self.write_then(op, move |result| {
            let _ = reply.send(result);
        });
        answer.recv().map_err(|_| crate::error::EngineError::Storage("the store is closed".into()))?
    }

    /// [`Store::write`] handing the result to `done` instead of returning
    /// it, once the commit is durable (or has failed). A busy store queues
    /// the write for its writer and returns at once, and `done` runs on the
    /// writer. An idle SQLite store (nothing queued or committed for 2 ms)
    /// commits it on this thread instead (no handoff to a parked thread
    /// and back), and `done` runs here before this returns: an async
    /// caller may call it on its own thread, which is then held for one
    /// commit at most.
    fn write_then<T, F, D>(&self, op: F, done: D)
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static;

    /// Runs `op` against a consistent snapshot.
    fn read<T, F>(&self, op: F) -> Result<T>
    where
        F: FnOnce(&dyn ReadTx) -> Result<T>;

    /// Live events, published after each commit.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Event>>;

    /// The key this store chains its events with, if it has one.
    fn audit_key(&self) -> Option<&AuditKey> {
        None
    }

    /// Its transaction counters, when it keeps them.
    fn stats(&self) -> Option<StatsSnapshot> {
        None
    }

    /// Publishes what other processes committed since this one last
    /// looked, so its subscribers see it. By default an empty write, which
    /// catches up as every write does.
    fn pick_up_external_events(&self) -> Result<()> {
        self.write(|_| Ok(()))
    }
}

/// Either backend, chosen when the engine opens: SQLite, embedded, or
/// PostgreSQL, shared by a team's server instances.
pub enum AnyStore {
    /// A SQLite file.
    Sqlite(SqliteStore),
    /// A PostgreSQL database.
    Postgres(Box<PgStore>),
}

impl AnyStore {
    /// The SQLite file, when the store is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Self::Sqlite(s) => Some(s.path()),
            Self::Postgres(_) => None,
        }
    }

    /// Where the data is, for people (a PostgreSQL password never shows).
    pub fn description(&self) -> String {
        match self {
            Self::Sqlite(s) => format!("SQLite {}", s.path().display()),
            Self::Postgres(p) => p.description().to_owned(),
        }
    }
}

impl Store for AnyStore {
    fn write_then<T, F, D>(&self, op: F, done: D)
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static,
    {
        match self {
            Self::Sqlite(s) => s.write_then(op, done),
            Self::Postgres(p) => p.write_then(op, done),
        }
    }

    fn read<T, F>(&self, op: F) -> Result<T>
    where
        F: FnOnce(&dyn ReadTx) -> Result<T>,
    {
        match self {
            Self::Sqlite(s) => s.read(op),
            Self::Postgres(p) => p.read(op),
        }
    }

    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Event>> {
        match self {
            Self::Sqlite(s) => s.subscribe(),
            Self::Postgres(p) => p.subscribe(),
        }
    }

    fn audit_key(&self) -> Option<&AuditKey> {
        match self {
            Self::Sqlite(s) => s.audit_key(),
            Self::Postgres(p) => p.audit_key(),
        }
    }

    fn stats(&self) -> Option<StatsSnapshot> {
        match self {
            Self::Sqlite(s) => s.stats(),
            Self::Postgres(p) => p.stats(),
        }
    }

    fn pick_up_external_events(&self) -> Result<()> {
        match self {
            Self::Sqlite(s) => s.pick_up_external_events(),
            Self::Postgres(p) => p.pick_up_external_events(),
        }
    }
}

/// The first key after every key that starts with `prefix`, in byte order
/// (UTF-8 keeps the characters' order): keys with the prefix are those in
/// `prefix..prefix_end(prefix)`. None for a prefix no key can follow.
pub(crate) fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn a_prefix_ends_at_its_last_character_moved_on_by_one() {
        assert_eq!(prefix_end("memory:").as_deref(), Some("memory;"));
        assert_eq!(prefix_end("mé").as_deref(), Some("mê"));
        // Past the surrogates' gap, and past the last character there is.
        assert_eq!(prefix_end("a\u{d7ff}").as_deref(), Some("a\u{e000}"));
        assert_eq!(prefix_end("a\u{10ffff}").as_deref(), Some("b"));
        assert_eq!(prefix_end("\u{10ffff}"), None);
        assert_eq!(prefix_end(""), None);
    }
}
