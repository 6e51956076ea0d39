//! The engine: the one place where Gatehouse's rules are applied. Each
//! public operation validates its input, then runs as one store transaction
//! that changes state and appends the matching events; callers receive
//! immutable snapshots. It knows nothing of HTTP, Tauri or any network.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast::{self, error::TryRecvError};

use crate::error::Result;
use crate::event::Event;
use crate::ids::{Clock, SystemClock};
use crate::redact::{RedactionConfig, Redactor};
use crate::store::{AnyStore, EventFilter, PgOptions, PgStore, SqliteStore, Store, StoreOptions};

mod alerts;
pub(crate) mod audit;
mod close;
pub mod collab;
pub mod control;
mod declared;
mod gates;
mod health;
mod implied;
mod maintenance;
mod memory;
pub mod metrics;
mod recordings;
mod release;
mod rules;
mod runs;
mod search;
mod tokens;
mod tx;
mod visibility;

pub use audit::AuditReport;
pub use declared::NodeReached;
pub use gates::RunAccess;
pub use health::PendingByMode;
pub use maintenance::PurgeReport;
pub use visibility::{GatePage, RunState};

/// How to run an engine.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EngineConfig {
    /// Durability and batching on SQLite.
    #[serde(skip)]
    pub store: StoreOptions,
    /// Schema and batching on PostgreSQL.
    #[serde(skip)]
    pub postgres: PgOptions,
    /// Secret patterns removed before anything is stored or exported.
    #[serde(default)]
    pub redaction: RedactionConfig,
    /// Keys the event log's hash chain (either backend); kept outside the database.
    #[serde(skip)]
    pub audit_key: Option<crate::event::AuditKey>,
}

/// Where an engine keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A SQLite file, created on first use: the embedded default.
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://USER:PASSWORD@HOST:PORT/DB`), shared
    /// by every server instance of a team.
    Postgres(String),
}

impl Database {
    /// A `postgres://` or `postgresql://` URL, else a SQLite file path.
    pub fn parse(location: &str) -> Self {
        if location.starts_with("postgres://") || location.starts_with("postgresql://") {
            Self::Postgres(location.to_owned())
        } else {
            Self::Sqlite(PathBuf::from(location))
        }
    }
}

/// The HITL engine over a store `S`. Cheap to clone; clones share state.
pub struct Engine<S: Store = AnyStore> {
    inner: Arc<Inner<S>>,
}

impl<S: Store> Clone for Engine<S> {
    fn clone(&self) -> Self {
        Self { inner: Arc::clone(&self.inner) }
    }
}

struct Inner<S> {
    store: S,
    clock: Arc<dyn Clock>,
    redactor: Redactor,
    closed: Arc<gates::closed::ClosedGates>,
}

impl Engine<AnyStore> {
    /// Opens the SQLite database at `path`, creating and migrating it.
    pub fn open(path: impl AsRef<Path>, config: EngineConfig) -> Result<Self> {
        Self::open_with_clock(path, config, Arc::new(SystemClock))
    }

    /// Opens with an injected clock (tests cross expiry deadlines with it).
    pub fn open_with_clock(path: impl AsRef<Path>, config: EngineConfig, clock: Arc<dyn Clock>) -> Result<Self> {
        Self::open_database(&Database::Sqlite(path.as_ref().to_path_buf()), config, clock)
    }

    /// Opens `database`, creating and migrating its tables.
    pub fn open_database(database: &Database, config: EngineConfig, clock: Arc<dyn Clock>) -> Result<Self> {
        let redactor = Redactor::new(&config.redaction)?;
        let key = config.audit_key;
        let store = match database {
            Database::Sqlite(path) => {
                let options = StoreOptions { audit_key: key.or(config.store.audit_key), ..config.store };
                AnyStore::Sqlite(SqliteStore::open(path, options)?)
            }
            Database::Postgres(url) => {
                let options = PgOptions { audit_key: key.or(config.postgres.audit_key), ..config.postgres };
                AnyStore::Postgres(Box::new(PgStore::connect(url, options)?))
            }
        };
        Ok(Self::with_store(store, clock, redactor))
    }
}

impl<S: Store> Engine<S> {
    /// An engine over any store.
    pub fn with_store(store: S, clock: Arc<dyn Clock>, redactor: Redactor) -> Self {
        Self { inner: Arc::new(Inner { store, clock, redactor, closed: Arc::default() }) }
    }

    /// The gates this engine just closed with a decision (`closed_by`).
    pub(crate) fn closed_gates(&self) -> &Arc<gates::closed::ClosedGates> {
        &self.inner.closed
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.inner.store
    }

    /// The engine's current time.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// `record`, a request or recording as a client sent it, with every
    /// string redacted: each operation passes what it receives through here
    /// before checking or storing it, so no secret reaches a row, an event,
    /// an error message, an export or a webhook.
    pub(crate) fn redacted<T: Serialize + serde::de::DeserializeOwned>(&self, record: T) -> Result<T> {
        self.redactor().redact_record(record).map_err(|e| {
            crate::error::EngineError::invalid("body", format!("a secret was found where it cannot be replaced: {e}"))
        })
    }

    /// A client's free text (a reason, a name, a key) with its secrets redacted.
    pub(crate) fn redacted_text(&self, text: &str) -> String {
        self.redactor().redact_str(text).into_owned()
    }

    /// Events after `seq` (0 for all) matching `filter`, at most `limit`.
    pub fn events_after(&self, seq: u64, filter: &EventFilter, limit: u32) -> Result<Vec<Event>> {
        self.inner.store.read(|r| r.events_after(seq, filter, limit))
    }

    /// Like [`Engine::events_after`], for a reader holding the token
    /// `token_id`: `None` once that token is revoked (or gone). Both are read
    /// in one snapshot, so the revocation is either seen here or comes after
    /// every event returned: a stream catching up from the log cannot pass
    /// its token's revocation, which no run's filter matches.
    pub fn events_after_while_live(
        &self,
        seq: u64,
        filter: &EventFilter,
        limit: u32,
        token_id: &str,
    ) -> Result<Option<Vec<Event>>> {
        self.inner.store.read(|r| {
            let live = r.tokens()?.iter().any(|t| t.id == token_id && t.revoked_at.is_none());
            if !live {
                return Ok(None);
            }
            r.events_after(seq, filter, limit).map(Some)
        })
    }

    /// The newest sequence number in the log.
    pub fn head_seq(&self) -> Result<u64> {
        self.inner.store.read(|r| r.head_seq())
    }

    /// Publishes events that other processes sharing the database
    /// appended (the CLI beside a running server on SQLite; PostgreSQL's
    /// listener does this as they commit), so this process's subscribers
    /// and waiters see them. Cheap when there are none.
    pub fn pick_up_external_events(&self) -> Result<()> {
        self.inner.store.pick_up_external_events()
    }

    /// Live events as they commit, with no backlog (for dispatchers that
    /// only care about what happens from now on).
    pub fn live_events(&self) -> broadcast::Receiver<Arc<Event>> {
        self.inner.store.subscribe()
    }

    /// Follows the log from after `from_seq`, first from disk, then live,
    /// with nothing missed and nothing repeated.
    pub fn subscribe(&self, from_seq: u64, filter: EventFilter) -> Subscription<S> {
        // Subscribe before reading the backlog so nothing committed in
        // between can fall through the gap; duplicates are dropped by seq.
        let live = self.inner.store.subscribe();
        Subscription {
            engine: self.clone(),
            live,
            filter,
            last_seq: from_seq,
            backlog: Default::default(),
            started: false,
        }
    }
}

/// A resumable view of the event log.
pub struct Subscription<S: Store = AnyStore> {
    engine: Engine<S>,
    live: broadcast::Receiver<Arc<Event>>,
    filter: EventFilter,
    /// The last sequence number consumed (delivered or filtered out).
    last_seq: u64,
    backlog: std::collections::VecDeque<Arc<Event>>,
    started: bool,
}

impl<S: Store> Subscription<S> {
    /// The sequence number of the last event consumed.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The next event, waiting up to `timeout` for one.
    pub fn next_timeout(&mut self, timeout: Duration) -> Result<Option<Arc<Event>>> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(event) = self.next_ready()? {
                return Ok(Some(event));
            }
            if std::time::Instant::now() >= deadline {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The next event if one is available now.
    pub fn next_ready(&mut self) -> Result<Option<Arc<Event>>> {
        if !self.started {
            self.started = true;
            self.catch_up()?;
        }
        loop {
            if let Some(event) = self.backlog.pop_front() {
                return Ok(Some(event));
            }
            match self.live.try_recv() {
                Ok(event) if event.seq <= self.last_seq => continue,
                Ok(event) if event.seq == self.last_seq + 1 => {
                    self.last_seq = event.seq;
                    if matches(&self.filter, &event) {
                        return Ok(Some(event));
                    }
                }
                // A gap, or the live buffer overflowed: the log on disk has it all.
                Ok(_) | Err(TryRecvError::Lagged(_)) => self.catch_up()?,
                Err(TryRecvError::Empty) | Err(TryRecvError::Closed) => return Ok(None),
            }
        }
    }

    /// Reads everything after `last_seq` from disk into the backlog.
    fn catch_up(&mut self) -> Result<()> {
        const PAGE: u32 = 10_000;
        loop {
            let events = self.engine.events_after(self.last_seq, &EventFilter::default(), PAGE)?;
            let full = events.len() == PAGE as usize;
            for event in events {
                self.last_seq = event.seq;
                if matches(&self.filter, &event) {
                    self.backlog.push_back(Arc::new(event));
                }
            }
            if !full {
                return Ok(());
            }
        }
    }
}

fn matches(filter: &EventFilter, event: &Event) -> bool {
    let b = &event.body;
    filter.run_id.as_ref().is_none_or(|r| b.run_id.as_ref() == Some(r))
        && filter.session_id.as_ref().is_none_or(|s| b.session_id.as_ref() == Some(s))
        && filter.user_id.as_ref().is_none_or(|u| b.user_id.as_ref() == Some(u))
}
