//! The PostgreSQL backend, for a team server: several Gatehouse instances
//! share one database and behave as one.
//!
//! - **Writes** go to writer threads (two per instance unless
//!   `PgOptions::writers` says otherwise, each on its own connection) that
//!   commit queued operations in groups, each under its own savepoint.
//!   A write locks the row of each run it reads, so writes on one run take
//!   turns and conditional updates (first resolver wins, each sweep's
//!   expiry) see the write before them, while writes on different runs,
//!   from any instance, run side by side. Only a group's tail is
//!   serialised: it takes the chain's advisory lock, links its events to
//!   the committed head whoever wrote it and commits, so `seq` stays
//!   gap-free and in commit order (`group.rs`).
//! - **Events** reach every instance: a group that appended events
//!   `NOTIFY`s the schema's channel in its transaction; each instance
//!   `LISTEN`s on its own connection and publishes what it has not yet
//!   published from the log, in order. An instance publishes its own
//!   commits at once, after what others committed before them; the
//!   notification names the instance that sent it, so its own listener
//!   does not read them back.
//! - **Reads** run on pooled connections in a repeatable-read, read-only
//!   transaction: one consistent snapshot per closure, as on SQLite.
//!
//! The driver is `tokio-postgres`; its connections are driven by a small
//! runtime the store owns, and callers wait on their replies with a plain
//! executor, so the store may be used from any thread, inside an async
//! runtime or not, exactly like the SQLite one.
//!
//! - **Restarts**: no connection is assumed alive. The writer, the
//!   listener and the read pool each reconnect on their own; what counts as
//!   the database being unreachable, and how a group's callers hear it, is
//!   in `failure.rs`; TLS (`sslmode`, `sslrootcert`) in `tls.rs`.
//!
//! Over 600 lines: the listener, the publisher, the read pool and the
//! writers' start share one connection setup (`Target`, `Conn`); the
//! writers' loop is in `writer.rs`, its pipelined writes in `pipeline.rs`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use tokio::sync::broadcast;
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, Config, Row, Statement};

use crate::error::{EngineError, Result};
use crate::event::{AuditKey, Event};
use crate::store::{EventFilter, ReadTx, StatsSnapshot, Store, StoreStats, WriteTx};

mod alerts;
mod failure;
mod gate_rows;
mod group;
mod pipeline;
mod queries;
mod schema;
mod search;
mod tls;
mod writer;

use failure::{describe, Refusal};
use pipeline::Pipeline;
use queries::PgDb;
use writer::{Job, TypedJob, Writer};

/// How to connect to PostgreSQL.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Keep Gatehouse's tables in this schema (created if missing) instead
    /// of the connection's default (`public`). Instances sharing a database
    /// share data only within one schema.
    pub schema: Option<String>,
    /// Most operations committed together in one transaction.
    pub max_batch: usize,
    /// Writer threads, each committing groups on its own connection: groups
    /// of different writers are in flight at once (writes of different runs
    /// never wait for each other; see `ARCHITECTURE.md`).
    pub writers: usize,
    /// Live events buffered per subscriber before it must catch up from the log.
    pub event_buffer: usize,
    /// Keys the hash chain of every event this store appends.
    pub audit_key: Option<AuditKey>,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self { schema: None, max_batch: 512, writers: DEFAULT_WRITERS, event_buffer: 8192, audit_key: None }
    }
}

/// Writer threads per instance unless `PgOptions::writers` says otherwise.
/// Two: while one waits for the database's replies the other's group is in
/// flight; on a 2-core machine shared with the database, two made one
/// instance 1.7 to 2 times as fast as one, and four slower than two
/// (`docs/benchmarks.md`).
const DEFAULT_WRITERS: usize = 2;
/// The first key of Gatehouse's advisory locks (the chain's, taken at each
/// write group's tail); the second is the schema's hash.
const LOCK_CHAIN: i32 = 0x4761_7465; // "Gate"
const LOCK_MIGRATE: i32 = 0x4761_7466;
/// Idle read connections kept for reuse. With 8, 32 busy agents made the
/// server open about 45 connections a second (a process each on the
/// database server); a team's database must allow this many, plus the
/// writers and the listener, per instance.
const IDLE_READERS: usize = 16;
/// How long the writer keeps trying to reconnect before answering a
/// group's writes that the database is unavailable: long enough to ride out
/// a fast restart, short enough that no caller waits long.
const RECONNECT_FOR: Duration = Duration::from_secs(3);
/// How long a new connection may take when the connection string says nothing.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an idle listener reads the log anyway (a notification lost
/// while it reconnected is picked up here).
const LISTEN_POLL: Duration = Duration::from_secs(2);

/// One connection, with its prepared statements. Used by one thread at a time.
pub(crate) struct Conn {
    client: Arc<tokio_postgres::Client>,
    statements: RefCell<HashMap<String, Statement>>,
    driver: Driver,
    /// Writes sent and not yet answered (the writer's; see [`Conn::defer`]).
    pipeline: Pipeline,
    /// Where each wait for the database's reply is counted.
    stats: Arc<StoreStats>,
}

/// What moves a connection's bytes while its thread waits for a reply.
enum Driver {
    /// The store's runtime thread; the caller waits with a plain executor.
    Shared,
    /// The waiting thread itself, on a runtime of the connection's own: no
    /// hand-off between threads per statement. The writer's, whose
    /// statements run one after another and bound how fast groups commit.
    Own(tokio::runtime::Runtime),
}

/// Prepared statements kept per connection; dynamic listings make a few
/// dozen shapes, so reaching this means something varies that should not.
const STATEMENT_CACHE: usize = 256;

impl Conn {
    fn new(client: tokio_postgres::Client, driver: Driver, stats: Arc<StoreStats>) -> Self {
        Self {
            client: Arc::new(client),
            statements: RefCell::new(HashMap::new()),
            driver,
            pipeline: Pipeline::default(),
            stats,
        }
    }

    /// Waits for `future`, driving the connection as its [`Driver`] says,
    /// and reads the replies of the deferred writes sent before it (which
    /// the connection answers first). Each call is one round trip to the
    /// database, counted in the store's stats.
    ///
    /// `request` makes the future, and may be called again: when a request
    /// the job before the running one deferred proves refused here
    /// ([`Pipeline::carry`]), the transaction is rolled back to that job's
    /// savepoint, what the running job deferred since is sent again, and so
    /// is this request (one more round trip, only then).
    fn wait<F: std::future::Future>(&self, request: impl Fn() -> F) -> F::Output {
        self.stats.round_trip();
        match &self.driver {
            Driver::Shared => futures_executor::block_on(request()),
            Driver::Own(runtime) if self.pipeline.is_empty() => runtime.block_on(request()),
            Driver::Own(runtime) => {
                let (sent, carried, again) = self.pipeline.take();
                // The request is polled first, so it leaves at once, after the deferred ones.
                let (out, failed) = runtime.block_on(async { futures_util::join!(request(), pipeline::settle(sent)) });
                match failed {
                    Some((at, e)) if at < carried => {
                        // The job before was refused, and everything after
                        // its refused request with it (the savepoint's
                        // `RELEASE` among them): its savepoint is the one to
                        // roll back to, and becomes the running job's.
                        self.pipeline.note_carried(e);
                        if let Err(e) = runtime.block_on(self.client.batch_execute("ROLLBACK TO job")) {
                            self.pipeline.note(Some(e));
                            return out;
                        }
                        for send in again {
                            self.pipeline.send(send);
                        }
                        self.wait(request)
                    }
                    failed => {
                        self.pipeline.note(failed.map(|(_, e)| e));
                        out
                    }
                }
            }
        }
    }

    /// Counts the deferred requests not answered yet as the job before's:
    /// the running job's first wait reads their replies ([`Pipeline::carry`]).
    pub(crate) fn carry(&self) {
        self.pipeline.carry();
    }

    /// Whether the job before's deferred requests await their replies.
    pub(crate) fn carrying(&self) -> bool {
        self.pipeline.carrying()
    }

    /// Whether what a write group keeps of the rows it holds may be out of
    /// date: the job before's writes are not answered yet, or proved refused
    /// and the writer has not forgotten what that job changed.
    pub(crate) fn holds_unsure(&self) -> bool {
        self.pipeline.carrying() || self.pipeline.carried_failed()
    }

    /// The refusal of the job before's deferred request, once read.
    pub(crate) fn take_carried_failure(&self) -> Option<EngineError> {
        self.pipeline.take_carried_failure().map(EngineError::from)
    }

    /// `e`, or the deferred write that failed before it: the cause, where
    /// `e` would only say the transaction was aborted.
    fn cause(&self, e: tokio_postgres::Error) -> tokio_postgres::Error {
        self.pipeline.failure().unwrap_or(e)
    }

    /// Runs `sql` without waiting for its reply when the connection is
    /// driven by its own thread (the writer's): the next statement waited
    /// for, or [`Conn::flush`], reads it. Otherwise runs it now.
    pub(crate) fn defer(&self, sql: &str, params: Vec<Box<dyn ToSql + Sync + Send>>) -> Result<()> {
        let statement = self.statement(sql).map_err(|e| self.cause(e))?;
        match &self.driver {
            Driver::Shared => {
                self.wait(|| self.client.execute_raw(&statement, params.iter().map(|p| p.as_ref() as &dyn ToSql)))?;
            }
            Driver::Own(_) => {
                let (client, params) = (Arc::clone(&self.client), Arc::new(params));
                self.pipeline.send(Box::new(move || {
                    let (client, statement, params) = (Arc::clone(&client), statement.clone(), Arc::clone(&params));
                    Box::pin(async move {
                        client.execute_raw(&statement, params.iter().map(|p| p.as_ref() as &dyn ToSql)).await
                    })
                }));
            }
        }
        Ok(())
    }

    /// As [`Conn::defer`], for statements without parameters.
    pub(crate) fn defer_batch(&self, sql: &'static str) {
        let client = Arc::clone(&self.client);
        self.pipeline.send(Box::new(move || {
            let client = Arc::clone(&client);
            Box::pin(async move { client.batch_execute(sql).await.map(|()| 0) })
        }));
    }

    /// Reads the replies of every deferred write; the first that failed, if any.
    pub(crate) fn flush(&self) -> Result<()> {
        if !self.pipeline.is_empty() {
            self.wait(|| std::future::ready(()));
        }
        match self.pipeline.failure() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    fn statement(&self, sql: &str) -> std::result::Result<Statement, tokio_postgres::Error> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.wait(|| self.client.prepare(sql))?;
        let mut cache = self.statements.borrow_mut();
        if cache.len() >= STATEMENT_CACHE {
            cache.clear();
        }
        cache.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }

    /// The rows `sql` returns.
    pub(crate) fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let statement = self.statement(sql).map_err(|e| self.cause(e))?;
        self.wait(|| self.client.query(&statement, params)).map_err(|e| self.cause(e).into())
    }

    /// How many rows `sql` changed.
    pub(crate) fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        Ok(self.execute_raw(sql, params)?)
    }

    /// As [`Conn::execute`], with PostgreSQL's own error (to tell a constraint apart).
    pub(crate) fn execute_raw(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> std::result::Result<u64, tokio_postgres::Error> {
        let statement = self.statement(sql).map_err(|e| self.cause(e))?;
        self.wait(|| self.client.execute(&statement, params)).map_err(|e| self.cause(e))
    }

    /// Runs statements without parameters (transaction control, DDL).
    pub(crate) fn batch(&self, sql: &str) -> Result<()> {
        self.wait(|| self.client.batch_execute(sql)).map_err(|e| self.cause(e).into())
    }

    /// Sends statements without parameters and does not wait for them: the
    /// connection runs requests in order, so the next one sent runs after
    /// them, and their replies are read and dropped. For transaction
    /// control whose failure the next statement would show anyway (a read's
    /// `BEGIN`, a read-only `COMMIT`): it saves a round trip each. Only on a
    /// shared driver, which writes the request at once.
    fn send(&self, sql: &str) {
        debug_assert!(matches!(self.driver, Driver::Shared));
        // The request leaves on the future's first poll; the rest is waiting.
        let _ = self.client.batch_execute(sql).now_or_never();
    }

    /// The rows of each request, sent one right behind the other in one
    /// wait (each runs once the one before it is done); no wait for none.
    fn query_all(&self, requests: &[(&str, &[&(dyn ToSql + Sync)])]) -> Result<Vec<Vec<Row>>> {
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let statements = requests
            .iter()
            .map(|(sql, _)| self.statement(sql).map_err(|e| self.cause(e)))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        // Polled in order: the requests leave in order.
        let replies = self.wait(|| {
            futures_util::future::join_all(
                statements.iter().zip(requests).map(|(statement, (_, params))| self.client.query(statement, params)),
            )
        });
        replies.into_iter().map(|rows| rows.map_err(|e| self.cause(e).into())).collect()
    }

    fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

/// What the listener thread is told.
enum Signal {
    /// A notification arrived on the channel: its payload, the last event
    /// its commit appended and the instance that committed it ([`Notice`]).
    Notified(String),
    /// The listening connection ended.
    Closed,
    /// The store is closing.
    Stop,
}

/// Where to connect and what a connection starts with.
#[derive(Clone)]
struct Target {
    config: Config,
    /// The TLS `sslmode` and `sslrootcert` ask for.
    tls: tls::PgTls,
    /// `SET search_path` for every connection, when a schema was chosen.
    search_path: Option<String>,
    runtime: tokio::runtime::Handle,
    /// The store's counters: every connection counts its round trips there.
    stats: Arc<StoreStats>,
}

impl Target {
    /// A new connection; with `signals`, its notifications are forwarded there.
    fn connect(&self, signals: Option<Sender<Signal>>) -> Result<Conn> {
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let task = self.runtime.spawn(async move {
            let (client, mut connection) = config.connect(tls).await?;
            tokio::spawn(async move {
                let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(message) = messages.next().await {
                    match message {
                        Ok(AsyncMessage::Notification(note)) => {
                            if let Some(signals) = &signals {
                                let _ = signals.send(Signal::Notified(note.payload().to_owned()));
                            }
                        }
                        Ok(_) => {}
                        Err(e) => {
                            tracing::warn!(error = %describe(&e), "a PostgreSQL connection failed");
                            break;
                        }
                    }
                }
                if let Some(signals) = &signals {
                    let _ = signals.send(Signal::Closed);
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        let client = futures_executor::block_on(task)
            .map_err(|e| EngineError::Storage(format!("the PostgreSQL connection task failed: {e}")))??;
        self.prepared(Conn::new(client, Driver::Shared, Arc::clone(&self.stats)))
    }

    /// A new connection driven by the thread that uses it ([`Driver::Own`]).
    fn connect_own(&self) -> Result<Conn> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| EngineError::Storage(format!("cannot start a PostgreSQL connection's runtime: {e}")))?;
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let client = runtime.block_on(async move {
            let (client, connection) = config.connect(tls).await?;
            tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::warn!(error = %describe(&e), "a PostgreSQL connection failed");
                }
            });
            Ok::<_, tokio_postgres::Error>(client)
        })?;
        self.prepared(Conn::new(client, Driver::Own(runtime), Arc::clone(&self.stats)))
    }

    /// `conn` in the chosen schema.
    fn prepared(&self, conn: Conn) -> Result<Conn> {
        if let Some(path) = &self.search_path {
            conn.batch(&format!("SET search_path TO {path}"))?;
        }
        Ok(conn)
    }

    /// Connects as [`Target::connect_own`], retrying for up to
    /// [`RECONNECT_FOR`] (the database restarting).
    fn reconnect_own(&self) -> Result<Conn> {
        let deadline = std::time::Instant::now() + RECONNECT_FOR;
        loop {
            match self.connect_own() {
                Ok(conn) => return Ok(conn),
                Err(e) if std::time::Instant::now() >= deadline => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %e, "reconnecting to PostgreSQL");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }
}

/// `name` as a quoted identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as a string literal (standard-conforming strings, PostgreSQL's default since 9.1).
fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Publishes committed events to this instance's subscribers, in order and
/// once each, whichever instance committed them.
struct Publisher {
    published: Mutex<u64>,
    bus: broadcast::Sender<Arc<Event>>,
}

impl Publisher {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, u64>> {
        self.published.lock().map_err(|_| EngineError::Storage("the event publisher's lock was poisoned".into()))
    }

    /// Sends what the log holds after the last published event (up to
    /// `before`, exclusive, when given).
    fn send_from_log(&self, conn: &Conn, published: &mut u64, before: Option<u64>) -> Result<()> {
        const PAGE: u32 = 10_000;
        let db = PgDb { conn, state: () };
        loop {
            let page = db.events_after(*published, &EventFilter::default(), PAGE)?;
            let full = page.len() == PAGE as usize;
            for event in page {
                if before.is_some_and(|b| event.seq >= b) {
                    return Ok(());
                }
                *published = event.seq;
                let _ = self.bus.send(Arc::new(event));
            }
            if !full {
                return Ok(());
            }
        }
    }

    /// Publishes events this instance just committed, first any that other
    /// instances committed before them.
    fn committed(&self, conn: &Conn, events: Vec<Arc<Event>>) -> Result<()> {
        let Some(first) = events.first().map(|e| e.seq) else { return Ok(()) };
        let mut published = self.lock()?;
        if first > *published + 1 {
            self.send_from_log(conn, &mut published, Some(first))?;
        }
        for event in events {
            if event.seq > *published {
                *published = event.seq;
                // No subscribers is fine: the log is the source of truth.
                let _ = self.bus.send(event);
            }
        }
        Ok(())
    }

    /// The last event published (`None` if the lock was poisoned).
    fn published(&self) -> Option<u64> {
        self.lock().ok().map(|published| *published)
    }

    /// Publishes whatever the log holds that is not published yet.
    fn catch_up(&self, conn: &Conn) -> Result<()> {
        let mut published = self.lock()?;
        self.send_from_log(conn, &mut published, None)
    }
}

/// A commit's notification, as its payload says: `SEQ INSTANCE`, the last
/// event the commit appended and the instance whose writer committed it
/// (an instance of an older Gatehouse sends `SEQ` alone).
#[derive(Debug, PartialEq)]
struct Notice<'a> {
    seq: Option<u64>,
    from: Option<&'a str>,
}

impl<'a> Notice<'a> {
    fn parse(payload: &'a str) -> Self {
        let mut parts = payload.split(' ');
        Self { seq: parts.next().and_then(|seq| seq.parse().ok()), from: parts.next() }
    }

    /// The payload of a commit by `instance` ending at `seq`.
    fn payload(seq: u64, instance: &str) -> String {
        format!("{seq} {instance}")
    }

    /// Whether the listener of `instance`, having published up to
    /// `published`, must read the log for this commit. Not for its own: its
    /// writer publishes those as it commits, after reading from the log
    /// anything other instances committed before them (`Publisher::committed`);
    /// reading them back would cost a round trip per commit and hold the
    /// publisher's lock against that writer. Not for another's it has
    /// published already. A payload it cannot read, it reads for.
    fn calls_for_a_read(&self, instance: &str, published: u64) -> bool {
        match (self.seq, self.from) {
            (_, Some(from)) if from == instance => false,
            (Some(seq), _) => seq > published,
            (None, _) => true,
        }
    }
}

/// The PostgreSQL store.
pub struct PgStore {
    target: Target,
    description: String,
    jobs: Option<Sender<Box<dyn Job>>>,
    writers: Vec<JoinHandle<()>>,
    listener: Option<(Sender<Signal>, JoinHandle<()>)>,
    readers: Mutex<Vec<Conn>>,
    bus: broadcast::Sender<Arc<Event>>,
    runtime: Option<tokio::runtime::Runtime>,
    audit_key: Option<AuditKey>,
    stats: Arc<StoreStats>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`),
    /// creating and migrating Gatehouse's tables if needed.
    /// TLS as libpq's `sslmode` and `sslrootcert` say (see [`tls`]).
    pub fn connect(url: &str, options: PgOptions) -> Result<Self> {
        let (url, tls) = tls::TlsSettings::split(url)?;
        let mut config: Config = url.parse().map_err(|e| {
            EngineError::Storage(format!(
                "the PostgreSQL URL is not valid ({e}); expected postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let description = describe_target(&config);
        let tls = tls.connector()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gatehouse-postgres")
            .enable_all()
            .build()
            .map_err(|e| EngineError::Storage(format!("cannot start the PostgreSQL driver: {e}")))?;
        let stats = Arc::new(StoreStats::default());
        let mut target =
            Target { config, tls, search_path: None, runtime: runtime.handle().clone(), stats: Arc::clone(&stats) };
        // An outage (nothing answers, the connection breaks) stays one: the
        // caller may try again; anything else is a setting to fix.
        let first = target.connect(None).map_err(|e| match e {
            EngineError::Unavailable(why) => {
                EngineError::Unavailable(format!("cannot connect to {description}: {why}"))
            }
            EngineError::Storage(why) => EngineError::Storage(format!("cannot connect to {description}: {why}")),
            other => EngineError::Storage(format!("cannot connect to {description}: {other}")),
        })?;
        if let Some(schema) = &options.schema {
            first.batch(&format!("CREATE SCHEMA IF NOT EXISTS {}", quote_ident(schema)))?;
            target.search_path = Some(quote_ident(schema));
            first.batch(&format!("SET search_path TO {}", quote_ident(schema)))?;
        }
        let row = first.query("SELECT current_schema(), hashtext(current_schema())", &[])?;
        let (schema, schema_key): (Option<String>, Option<i32>) = match row.first() {
            Some(r) => (r.try_get(0)?, r.try_get(1)?),
            None => (None, None),
        };
        let (Some(schema), Some(schema_key)) = (schema, schema_key) else {
            return Err(EngineError::Storage(format!(
                "{description} has no schema to keep Gatehouse's tables in (its search_path names none that exists)"
            )));
        };
        schema::migrate(&first, (LOCK_MIGRATE, schema_key))?;
        let head = queries::chain_head(&first)?.seq;

        let (bus, _) = broadcast::channel(options.event_buffer.max(16));
        let publisher = Arc::new(Publisher { published: Mutex::new(head), bus: bus.clone() });
        let channel = channel_name(&schema);
        // Names this instance's commits in their notifications.
        let instance = uuid::Uuid::new_v4().simple().to_string()[..16].to_owned();

        let (signals, listened) = mpsc::channel();
        let listener = {
            let (target, publisher, channel, signals) =
                (target.clone(), Arc::clone(&publisher), channel.clone(), signals.clone());
            let instance = instance.clone();
            std::thread::Builder::new()
                .name("gatehouse-listen".into())
                .spawn(move || listen(target, channel, &instance, publisher, signals, listened))
                .map_err(|e| EngineError::Storage(format!("cannot start the event listener: {e}")))?
        };
        let (jobs, queue) = mpsc::channel::<Box<dyn Job>>();
        let queue = Arc::new(Mutex::new(queue));
        let mut writers = Vec::new();
        for n in 0..options.writers.max(1) {
            let (target, stats, queue) = (target.clone(), Arc::clone(&stats), Arc::clone(&queue));
            let (channel, instance, publisher) = (channel.clone(), instance.clone(), Arc::clone(&publisher));
            let max_batch = options.max_batch.max(1);
            let key = options.audit_key.clone();
            // The writer's connection is made on its thread, which drives it
            // (a runtime may not start inside the caller's, if it has one).
            let (started, start) = mpsc::sync_channel(1);
            let thread = std::thread::Builder::new()
                .name(format!("gatehouse-writer-{n}"))
                .spawn(move || match target.connect_own() {
                    Ok(conn) => {
                        let _ = started.send(Ok(()));
                        let lock = (LOCK_CHAIN, schema_key);
                        Writer { target, conn, lock, channel, instance, idle_since: None, publisher, key, stats }
                            .run(&queue, max_batch)
                    }
                    Err(e) => {
                        let _ = started.send(Err(e));
                    }
                })
                .map_err(|e| EngineError::Storage(format!("cannot start the writer thread: {e}")))?;
            writers.push(thread);
            let ready = start.recv().map_err(|_| EngineError::Storage("the writer thread ended at start".into()));
            if let Err(e) = ready.and_then(|started| started) {
                let _ = signals.send(Signal::Stop);
                drop(jobs);
                for writer in writers {
                    let _ = writer.join();
                }
                return Err(e);
            }
        }
        Ok(Self {
            target,
            description: match writers.len() {
                1 => format!("{description}, schema {schema}, 1 writer connection"),
                n => format!("{description}, schema {schema}, {n} writer connections"),
            },
            jobs: Some(jobs),
            writers,
            listener: Some((signals, listener)),
            readers: Mutex::new(vec![first]),
            bus,
            runtime: Some(runtime),
            audit_key: options.audit_key,
            stats,
        })
    }

    /// Where the store is, for people (never the password).
    pub fn description(&self) -> &str {
        &self.description
    }

    fn reader(&self) -> Result<Conn> {
        let pooled = self.readers.lock().map_err(|_| poisoned())?.pop();
        match pooled {
            Some(conn) if !conn.is_closed() => Ok(conn),
            _ => self.target.connect(None),
        }
    }
}

fn poisoned() -> EngineError {
    EngineError::Storage("the reader pool lock was poisoned".into())
}

/// `postgres://user@host:port/db`, without the password.
fn describe_target(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    format!("PostgreSQL postgres://{user}@{host}:{port}/{db}")
}

/// The notification channel of a schema (at most 63 bytes, PostgreSQL's limit).
fn channel_name(schema: &str) -> String {
    let name = format!("gatehouse:{schema}");
    if name.len() <= 63 {
        return name;
    }
    use sha2::Digest;
    format!("gatehouse:{}", hex::encode(&sha2::Sha256::digest(schema.as_bytes())[..16]))
}

/// The listener thread: LISTENs on the channel and publishes what other
/// instances commit; reconnects when its connection ends.
fn listen(
    target: Target,
    channel: String,
    instance: &str,
    publisher: Arc<Publisher>,
    signals: Sender<Signal>,
    listened: Receiver<Signal>,
) {
    loop {
        let conn = match target.connect(Some(signals.clone())) {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(error = %e, "the event listener cannot connect; retrying");
                match listened.recv_timeout(Duration::from_millis(500)) {
                    Ok(Signal::Stop) => return,
                    _ => continue,
                }
            }
        };
        if let Err(e) = conn.batch(&format!("LISTEN {}", quote_ident(&channel))) {
            tracing::warn!(error = %e, "the event listener cannot LISTEN; retrying");
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        // Read the log first: anything committed before LISTEN took effect.
        let mut due = true;
        loop {
            if due {
                if let Err(e) = publisher.catch_up(&conn) {
                    tracing::warn!(error = %e, "the event listener cannot read the log");
                }
            }
            match listened.recv_timeout(LISTEN_POLL) {
                Ok(Signal::Notified(payload)) => {
                    // One read covers every notification already queued.
                    let mut payloads = vec![payload];
                    while let Ok(signal) = listened.try_recv() {
                        match signal {
                            Signal::Notified(payload) => payloads.push(payload),
                            Signal::Closed => {} // seen below
                            Signal::Stop => return,
                        }
                    }
                    due = publisher.published().is_none_or(|published| {
                        payloads.iter().any(|p| Notice::parse(p).calls_for_a_read(instance, published))
                    });
                }
                Err(RecvTimeoutError::Timeout) => due = true,
                Ok(Signal::Closed) => break,
                Ok(Signal::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            }
            if conn.is_closed() {
                break;
            }
        }
    }
}

impl Store for PgStore {
    /// Queues `op` for the writer and returns at once: `done` gets the
    /// result on the writer's thread once the group has committed (or
    /// failed), so an async caller need not hold a thread while it waits.
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
        let job: Box<dyn Job> = Box::new(TypedJob::new(op, done));
        let closed = || Refusal::Failed("the store is closed".into());
        match &self.jobs {
            Some(jobs) => {
                if let Err(mpsc::SendError(job)) = jobs.send(job) {
                    job.abort(closed());
                }
            }
            None => job.abort(closed()),
        }
    }

    fn read<T, F>(&self, op: F) -> Result<T>
    where
        F: FnOnce(&dyn ReadTx) -> Result<T>,
    {
        self.stats.read_started();
        let conn = self.reader()?;
        // Sent ahead of the closure's first statement, in the same round trip.
        conn.send("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        let result = op(&PgDb { conn: &conn, state: () });
        // Ends before the connection's next use begins: requests run in order.
        conn.send(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
        if let Ok(mut pool) = self.readers.lock() {
            if matches!(result, Err(EngineError::Unavailable(_))) {
                // The database went away: the idle connections went with it.
                pool.clear();
            } else if !conn.is_closed() && pool.len() < IDLE_READERS {
                pool.push(conn);
            }
        }
        result
    }

    fn audit_key(&self) -> Option<&AuditKey> {
        self.audit_key.as_ref()
    }

    fn stats(&self) -> Option<StatsSnapshot> {
        Some(self.stats.snapshot())
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.bus.subscribe()
    }

    /// Nothing to do: the listener publishes other instances' commits as
    /// their notifications arrive.
    fn pick_up_external_events(&self) -> Result<()> {
        Ok(())
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Closing the queue ends the writer after it drains what is queued.
        self.jobs.take();
        for writer in self.writers.drain(..) {
            let _ = writer.join();
        }
        if let Some((signals, listener)) = self.listener.take() {
            let _ = signals.send(Signal::Stop);
            let _ = listener.join();
        }
        if let Ok(mut pool) = self.readers.lock() {
            pool.clear();
        }
        if let Some(runtime) = self.runtime.take() {
            // Never blocks, so dropping the store inside an async runtime is fine.
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Notice;

    #[test]
    fn a_listener_reads_the_log_for_other_instances_commits_it_has_not_published_never_for_its_own() {
        let payload = Notice::payload(26, "a1b2");
        assert_eq!(Notice::parse(&payload), Notice { seq: Some(26), from: Some("a1b2") });
        // Its own commit: its writer publishes it, even before the listener hears of it.
        assert!(!Notice::parse(&payload).calls_for_a_read("a1b2", 24));
        // Another instance's commit, not yet published here; then already published.
        assert!(Notice::parse(&payload).calls_for_a_read("c3d4", 24));
        assert!(!Notice::parse(&payload).calls_for_a_read("c3d4", 26));
        // An older instance names only the sequence number.
        assert!(Notice::parse("26").calls_for_a_read("a1b2", 25));
        assert!(!Notice::parse("26").calls_for_a_read("a1b2", 26));
        // A payload that says nothing readable: read, to be safe.
        assert!(Notice::parse("").calls_for_a_read("a1b2", 26));
        assert!(Notice::parse("x a1b2 y").calls_for_a_read("c3d4", 26));
    }
}
