//! The embedded SQLite backend: one writer thread that owns the write
//! connection and commits queued operations in groups (one fsync for many
//! acknowledged changes), and a pool of read connections working in
//! parallel on WAL snapshots. Nothing here blocks an async runtime except
//! the caller's own wait for its reply.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::broadcast;

use crate::error::{EngineError, Result};
use crate::event::{AuditKey, Event};
use crate::private_files;
use crate::store::chain::{ChainHead, WriteState};
use crate::store::{next_group, ReadTx, StatsSnapshot, Store, StoreStats, WriteTx};

mod alerts;
mod queries;
mod rules;
mod schema;
// Visible to the store for the PostgreSQL search test, which checks it reads text as SQLite does.
pub(in crate::store) mod search;
#[cfg(test)]
mod tests;

use queries::Db;

/// How to open a database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// `synchronous=FULL` (the default): an acknowledged decision survives
    /// power loss. `false` selects NORMAL, durable across process crashes only.
    pub synchronous_full: bool,
    /// Most operations committed together in one transaction.
    pub max_batch: usize,
    /// Live events buffered per subscriber before it must catch up from disk.
    pub event_buffer: usize,
    /// Keys the hash chain of every event this store appends.
    pub audit_key: Option<AuditKey>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self { synchronous_full: true, max_batch: 512, event_buffer: 8192, audit_key: None }
    }
}

/// An operation queued for the writer.
trait Job: Send {
    /// Runs inside the group transaction, under its own savepoint.
    fn run(self: Box<Self>, db: &mut Db<'_, &mut WriteState>) -> Box<dyn Completion>;
    /// Answers without running (the transaction could not begin).
    fn abort(self: Box<Self>, error: String);
}

/// The reply of a job that ran, sent once its group has committed.
trait Completion: Send {
    fn finish(self: Box<Self>, commit: std::result::Result<(), String>);
}

/// A write and whom to answer: `done` gets its result once its group has
/// committed (or failed), on the writer's thread.
struct TypedJob<T, F, D> {
    op: F,
    done: D,
    _result: std::marker::PhantomData<fn() -> T>,
}

struct Reply<T, D> {
    result: Result<T>,
    done: D,
}

impl<T, D> Completion for Reply<T, D>
where
    T: Send + 'static,
    D: FnOnce(Result<T>) + Send + 'static,
{
    fn finish(self: Box<Self>, commit: std::result::Result<(), String>) {
        let outcome = match commit {
            Ok(()) => self.result,
            Err(e) => Err(EngineError::Storage(e)),
        };
        (self.done)(outcome);
    }
}

impl<T, F, D> Job for TypedJob<T, F, D>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
    D: FnOnce(Result<T>) + Send + 'static,
{
    fn run(self: Box<Self>, db: &mut Db<'_, &mut WriteState>) -> Box<dyn Completion> {
        let TypedJob { op, done, .. } = *self;
        let result = in_savepoint(db, op);
        Box::new(Reply { result, done })
    }

    fn abort(self: Box<Self>, error: String) {
        (self.done)(Err(EngineError::Storage(error)));
    }
}

/// Runs one job under a savepoint so its failure undoes only its own work,
/// including the events it appended to the chain.
fn in_savepoint<T>(db: &mut Db<'_, &mut WriteState>, op: impl FnOnce(&mut dyn WriteTx) -> Result<T>) -> Result<T> {
    let head = db.state.head;
    let published = db.state.events.len();
    cached(db.conn, "SAVEPOINT job")?;
    let result = catch_unwind(AssertUnwindSafe(|| op(db)))
        .unwrap_or_else(|_| Err(EngineError::Storage("an engine operation panicked".into())));
    match &result {
        Ok(_) => cached(db.conn, "RELEASE job")?,
        Err(_) => {
            db.conn.execute_batch("ROLLBACK TO job; RELEASE job")?;
            db.state.head = head;
            db.state.events.truncate(published);
        }
    }
    result
}

/// Runs one statement that answers no rows (a transaction's `BEGIN`,
/// `COMMIT`, a savepoint) from the connection's statement cache: every
/// write and read runs four of them, and `execute_batch` parses each anew.
fn cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// The SQLite store.
pub struct SqliteStore {
    path: PathBuf,
    jobs: Option<Sender<Box<dyn Job>>>,
    writer: Option<JoinHandle<()>>,
    readers: Mutex<Vec<Connection>>,
    bus: broadcast::Sender<Arc<Event>>,
    audit_key: Option<AuditKey>,
    stats: Arc<StoreStats>,
}

fn configure(conn: &Connection, synchronous_full: bool) -> Result<()> {
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", if synchronous_full { "FULL" } else { "NORMAL" })?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // 8 MB: the hot pages of a write are the indexes' right edges; a larger
    // cache only fills with new rows (measured: 25 MB more server RSS).
    conn.pragma_update(None, "cache_size", -8_000)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

/// Idle read connections kept for reuse; more are opened under load and
/// closed when returned, so a burst does not pin memory forever.
const IDLE_READERS: usize = 8;

impl SqliteStore {
    /// Opens (creating and migrating if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>, options: StoreOptions) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        make_private(&path)?;
        let mut conn = Connection::open(&path)
            .map_err(|e| EngineError::Storage(format!("cannot open {}: {e}", path.display())))?;
        configure(&conn, options.synchronous_full)?;
        schema::migrate(&mut conn)?;
        let head = ChainHead::load(&conn)?;
        let (bus, _) = broadcast::channel(options.event_buffer.max(16));
        let (jobs, queue) = mpsc::channel::<Box<dyn Job>>();
        let writer_bus = bus.clone();
        let key = options.audit_key.clone();
        let max_batch = options.max_batch.max(1);
        let stats = Arc::new(StoreStats::default());
        let writer_stats = Arc::clone(&stats);
        let writer = std::thread::Builder::new()
            .name("gatehouse-writer".into())
            .spawn(move || write_loop(conn, head, key, queue, writer_bus, max_batch, &writer_stats))
            .map_err(|e| EngineError::Storage(format!("cannot start the writer thread: {e}")))?;
        let audit_key = options.audit_key;
        Ok(Self {
            path,
            jobs: Some(jobs),
            writer: Some(writer),
            readers: Mutex::new(Vec::new()),
            bus,
            audit_key,
            stats,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn reader(&self) -> Result<Connection> {
        if let Some(conn) = self.readers.lock().map_err(|_| poisoned())?.pop() {
            return Ok(conn);
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // SQLite's default 2 MB page cache: up to 16 readers are open under
        // load, and larger caches cost the server more memory than they save.
        conn.pragma_update(None, "cache_size", -2_000)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.set_prepared_statement_cache_capacity(64);
        Ok(conn)
    }
}

/// Creates the database file (and its directory) readable only by its
/// owner before SQLite opens it, and tightens an existing one: SQLite makes
/// a new database 0644 whatever the umask, and gives `-wal` and `-shm` the
/// database file's mode, so 0600 here keeps all three private.
fn make_private(path: &Path) -> Result<()> {
    let failed =
        |what: &Path, e: std::io::Error| EngineError::Storage(format!("cannot create {}: {e}", what.display()));
    if let Some(dir) = path.parent() {
        private_files::create_private_dir(dir).map_err(|e| failed(dir, e))?;
    }
    if !path.exists() {
        private_files::create_private_file(path).map_err(|e| failed(path, e))?;
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let file = PathBuf::from(file);
        private_files::restrict_to_owner(&file).map_err(|e| {
            EngineError::Storage(format!("cannot make {} readable only by its owner: {e}", file.display()))
        })?;
    }
    Ok(())
}

fn poisoned() -> EngineError {
    EngineError::Storage("the reader pool lock was poisoned".into())
}

fn write_loop(
    conn: Connection,
    mut head: ChainHead,
    key: Option<AuditKey>,
    queue: Receiver<Box<dyn Job>>,
    bus: broadcast::Sender<Arc<Event>>,
    max_batch: usize,
    stats: &StoreStats,
) {
    while let Some(batch) = next_group(&queue, max_batch) {
        if let Err(e) = cached(&conn, "BEGIN IMMEDIATE") {
            for job in batch {
                job.abort(format!("cannot begin a transaction: {e}"));
            }
            continue;
        }
        // Another process (the CLI beside a running server) may have appended
        // events since our last commit: continue the chain from the disk, and
        // publish what it wrote so subscribers here see it too.
        let external = match catch_up_external(&conn, head) {
            Ok((disk_head, external)) => {
                head = disk_head;
                external
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                for job in batch {
                    job.abort(format!("cannot read the event log: {e}"));
                }
                continue;
            }
        };
        let mut state = WriteState { head, key: key.clone(), events: Vec::new() };
        let mut db = Db { conn: &conn, state: &mut state };
        let completions: Vec<_> = batch.into_iter().map(|job| job.run(&mut db)).collect();
        match cached(&conn, "COMMIT") {
            Ok(()) => {
                stats.group_committed();
                head = state.head;
                for event in external.into_iter().chain(state.events) {
                    // No subscribers is fine: the log is the source of truth.
                    let _ = bus.send(event);
                }
                for c in completions {
                    c.finish(Ok(()));
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                head = ChainHead::load(&conn).unwrap_or(head);
                for c in completions {
                    c.finish(Err(format!("commit failed: {e}")));
                }
            }
        }
    }
}

/// The chain head on disk and the events other processes appended after `ours`.
fn catch_up_external(conn: &Connection, ours: ChainHead) -> Result<(ChainHead, Vec<Arc<Event>>)> {
    let disk = ChainHead::load(conn)?;
    if disk.seq <= ours.seq {
        return Ok((disk, Vec::new()));
    }
    let db = Db { conn, state: () };
    let mut events = Vec::new();
    let mut after = ours.seq;
    while after < disk.seq {
        let page = db.events_after(after, &crate::store::EventFilter::default(), 10_000)?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        events.extend(page.into_iter().map(Arc::new));
    }
    Ok((disk, events))
}

impl Store for SqliteStore {
    /// Queues `op` for the writer and returns at once: the caller's thread
    /// is not held while the group commits, and `done` runs on the writer.
    fn write_then<T, F, D>(&self, op: F, done: D)
    where
        T: Send + 'static,
        F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static,
    {
        let in_flight = self.stats.queued_write_started();
        let done = move |result| {
            drop(in_flight);
            done(result);
        };
        let job: Box<dyn Job> = Box::new(TypedJob { op, done, _result: std::marker::PhantomData });
        let closed = "the store is closed".to_owned();
        match &self.jobs {
            Some(jobs) => {
                if let Err(mpsc::SendError(job)) = jobs.send(job) {
                    job.abort(closed);
                }
            }
            None => job.abort(closed),
        }
    }

    fn read<T, F>(&self, op: F) -> Result<T>
    where
        F: FnOnce(&dyn ReadTx) -> Result<T>,
    {
        self.stats.read_started();
        let conn = self.reader()?;
        // One snapshot for the whole closure, so multi-query reads (exports,
        // verification) see a single consistent state.
        cached(&conn, "BEGIN")?;
        let result = op(&Db { conn: &conn, state: () });
        let end = cached(&conn, if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
        if end.is_ok() {
            if let Ok(mut pool) = self.readers.lock() {
                if pool.len() < IDLE_READERS {
                    pool.push(conn);
                }
            }
        }
        result
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.bus.subscribe()
    }

    fn audit_key(&self) -> Option<&AuditKey> {
        self.audit_key.as_ref()
    }

    fn stats(&self) -> Option<StatsSnapshot> {
        Some(self.stats.snapshot())
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the queue ends the writer after it drains what is queued.
        self.jobs.take();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}
