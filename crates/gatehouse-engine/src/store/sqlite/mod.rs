//! The embedded SQLite backend: one write connection, committing queued
//! operations in groups (one fsync for many acknowledged changes), and a
//! pool of read connections working in parallel on WAL snapshots.
//!
//! A write finds the write connection either busy or idle. Busy, the write
//! is queued, and the writer thread commits it with whatever else queued
//! meanwhile once the group before it is done. Idle (nothing committing,
//! nothing queued, nothing committed for `INLINE_AFTER_IDLE`), the caller
//! commits it itself, on its own thread: on an otherwise quiet server each
//! handoff to a parked thread and back costs more than the write (a VM's
//! halted vCPU wakes slowly), and a lone write gains nothing from waiting
//! for a group. Under load writes come closer together than that and all
//! queue, so groups stay large and no async worker is held by a commit
//! (committing whenever the connection was free cost 16% of the HTTP
//! throughput, `docs/benchmarks.md`). Either way one connection writes at
//! a time, in the order the writes were queued, and a write's events are
//! published, in commit order, before its caller is answered.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};
use tokio::sync::broadcast;

use crate::error::{EngineError, Result};
use crate::event::{AuditKey, Event};
use crate::private_files;
use crate::store::chain::{ChainHead, WriteState};
use crate::store::{group_from, ReadTx, StatsSnapshot, Store, StoreStats, WriteTx};

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
    /// The write connection, held by whoever is committing: the writer
    /// thread for a queued group, or a caller who found it idle.
    connection: Arc<Mutex<WriteConnection>>,
    /// Writes queued and not yet taken by the writer thread: a caller
    /// commits its own write only when none is, so none overtakes them.
    queued: Arc<AtomicUsize>,
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
        let stats = Arc::new(StoreStats::default());
        let connection = Arc::new(Mutex::new(WriteConnection {
            conn,
            head,
            last_commit: None,
            inline_after: INLINE_AFTER_IDLE,
            key: options.audit_key.clone(),
            bus: bus.clone(),
            stats: Arc::clone(&stats),
        }));
        let queued = Arc::new(AtomicUsize::new(0));
        let max_batch = options.max_batch.max(1);
        let writer = {
            let (connection, queued) = (Arc::clone(&connection), Arc::clone(&queued));
            std::thread::Builder::new()
                .name("gatehouse-writer".into())
                .spawn(move || write_loop(&connection, &queue, &queued, max_batch))
                .map_err(|e| EngineError::Storage(format!("cannot start the writer thread: {e}")))?
        };
        let audit_key = options.audit_key;
        Ok(Self {
            path,
            jobs: Some(jobs),
            connection,
            queued,
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

/// How long the write connection must have been idle for a caller to
/// commit its own write rather than queue it: longer than writes are apart
/// under load (a group's commit, then the next), shorter than an agent's
/// pause between two gates.
const INLINE_AFTER_IDLE: Duration = Duration::from_millis(2);

/// The write connection and what outlives a group: the chain's head as
/// this process last committed it.
struct WriteConnection {
    conn: Connection,
    head: ChainHead,
    /// When its last group ended (`None`: none yet).
    last_commit: Option<Instant>,
    /// `INLINE_AFTER_IDLE`, which the tests change.
    inline_after: Duration,
    key: Option<AuditKey>,
    bus: broadcast::Sender<Arc<Event>>,
    stats: Arc<StoreStats>,
}

/// The write connection, whoever held it last: a job's panic is caught in
/// its savepoint, so a poisoned lock still guards a consistent connection.
fn hold(connection: &Mutex<WriteConnection>) -> MutexGuard<'_, WriteConnection> {
    connection.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The writer thread: each queued group in turn, until the store closes.
fn write_loop(
    connection: &Mutex<WriteConnection>,
    queue: &Receiver<Box<dyn Job>>,
    queued: &AtomicUsize,
    max_batch: usize,
) {
    while let Ok(first) = queue.recv() {
        let mut held = hold(connection);
        // The group is what queued while the connection was busy, taken
        // once it is free (so writes queued behind a caller's own commit
        // commit together), and counted out only now: until then a caller
        // who finds the connection free still sees them queued and queues
        // behind them.
        let batch = group_from(first, queue, max_batch);
        queued.fetch_sub(batch.len(), Ordering::SeqCst);
        let answers = held.commit(batch);
        drop(held);
        answers.send();
    }
}

/// The replies of a group, sent once the connection is free again.
struct Answers {
    completions: Vec<Box<dyn Completion>>,
    commit: std::result::Result<(), String>,
}

impl Answers {
    fn send(self) {
        for c in self.completions {
            c.finish(self.commit.clone());
        }
    }
}

impl WriteConnection {
    /// Runs `batch` in one transaction, each job under its own savepoint,
    /// commits it, and publishes its events; the replies are the caller's
    /// to send once it has let go of the connection.
    fn commit(&mut self, batch: Vec<Box<dyn Job>>) -> Answers {
        let answers = self.commit_group(batch);
        self.last_commit = Some(Instant::now());
        answers
    }

    /// Whether it has been idle long enough for a caller to commit its own write.
    fn idle(&self) -> bool {
        self.last_commit.is_none_or(|at| at.elapsed() >= self.inline_after)
    }

    fn commit_group(&mut self, batch: Vec<Box<dyn Job>>) -> Answers {
        let conn = &self.conn;
        if let Err(e) = cached(conn, "BEGIN IMMEDIATE") {
            for job in batch {
                job.abort(format!("cannot begin a transaction: {e}"));
            }
            return Answers { completions: Vec::new(), commit: Ok(()) };
        }
        // Another process (the CLI beside a running server) may have appended
        // events since our last commit: continue the chain from the disk, and
        // publish what it wrote so subscribers here see it too.
        let external = match catch_up_external(conn, self.head) {
            Ok((disk_head, external)) => {
                self.head = disk_head;
                external
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                for job in batch {
                    job.abort(format!("cannot read the event log: {e}"));
                }
                return Answers { completions: Vec::new(), commit: Ok(()) };
            }
        };
        let mut state = WriteState { head: self.head, key: self.key.clone(), events: Vec::new() };
        let mut db = Db { conn, state: &mut state };
        let completions: Vec<_> = batch.into_iter().map(|job| job.run(&mut db)).collect();
        match cached(conn, "COMMIT") {
            Ok(()) => {
                self.stats.group_committed();
                self.head = state.head;
                for event in external.into_iter().chain(state.events) {
                    // No subscribers is fine: the log is the source of truth.
                    let _ = self.bus.send(event);
                }
                Answers { completions, commit: Ok(()) }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                self.head = ChainHead::load(conn).unwrap_or(self.head);
                Answers { completions, commit: Err(format!("commit failed: {e}")) }
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
    /// Commits `op` on this thread when the write connection is idle (free,
    /// nothing queued, nothing committed for `INLINE_AFTER_IDLE`);
    /// otherwise queues it for the writer and returns at once, and `done`
    /// runs on the writer once its group has committed.
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
        if let Ok(mut connection) = self.connection.try_lock() {
            if self.queued.load(Ordering::SeqCst) == 0 && connection.idle() {
                let answers = connection.commit(vec![job]);
                drop(connection);
                return answers.send();
            }
        }
        let closed = "the store is closed".to_owned();
        match &self.jobs {
            Some(jobs) => {
                self.queued.fetch_add(1, Ordering::SeqCst);
                if let Err(mpsc::SendError(job)) = jobs.send(job) {
                    self.queued.fetch_sub(1, Ordering::SeqCst);
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
