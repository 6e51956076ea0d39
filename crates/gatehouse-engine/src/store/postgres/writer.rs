//! The PostgreSQL writers: threads (two per instance unless
//! `PgOptions::writers` says otherwise) that commit queued writes in
//! groups, one transaction each, every job under its own savepoint, each
//! on a connection it drives itself. A group is a request to begin (and the
//! first savepoint, sent without waiting when the writer was just busy),
//! each job's reads (locking the rows of the runs it reads, `queries.rs`),
//! whose first also reads the replies of the writes the job before sent
//! without waiting (`pipeline.rs`), the last job's writes with the chain's
//! lock and head if the group appended events, and a request to end (the
//! group's events in one `INSERT`, `PgWrite` in `group.rs`; the
//! notification; `COMMIT`). Only that tail is serialised across writers
//! and instances.

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use super::failure::Refusal;
use super::group::PgWrite;
use super::queries::PgDb;
use super::{quote_literal, Conn, Notice, Publisher, Target};
use crate::error::{EngineError, Result};
use crate::event::AuditKey;
use crate::store::{next_group, StoreStats, WriteTx};

/// Answers a job's caller once its group ended: `Err` when the group did
/// not commit, or the job proved refused after it ended.
type Finish = Box<dyn FnOnce(Result<()>) + Send>;

/// A writer that committed a group this recently sends the next one's
/// `BEGIN` without waiting for it (saving a round trip under load); after
/// longer, it waits, so a connection the database closed meanwhile (a
/// restart) is found before any job runs and the group is begun again.
const BUSY_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// An operation queued for the writer.
pub(super) trait Job: Send {
    /// Runs inside the group's transaction, under the savepoint `job`; returns
    /// what to do once the group has committed (or failed). `last`: no job
    /// follows in the group, which then asks for the chain's lock with this
    /// job's replies.
    fn run(self: Box<Self>, db: &mut PgDb<'_, &mut PgWrite>, last: bool) -> Finish;
    /// Answers without running (the group could not begin).
    fn abort(self: Box<Self>, refusal: Refusal);
}

/// A write and whom to answer: `done` gets its result once its group ends.
pub(super) struct TypedJob<T, F, D> {
    op: F,
    done: D,
    _result: std::marker::PhantomData<fn() -> T>,
}

impl<T, F, D> TypedJob<T, F, D> {
    pub(super) fn new(op: F, done: D) -> Self {
        Self { op, done, _result: std::marker::PhantomData }
    }
}

impl<T, F, D> Job for TypedJob<T, F, D>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn WriteTx) -> Result<T> + Send + 'static,
    D: FnOnce(Result<T>) + Send + 'static,
{
    fn run(self: Box<Self>, db: &mut PgDb<'_, &mut PgWrite>, last: bool) -> Finish {
        let TypedJob { op, done, .. } = *self;
        let result = in_savepoint(db, op, last);
        Box::new(move |ended| done(ended.and(result)))
    }

    fn abort(self: Box<Self>, refusal: Refusal) {
        (self.done)(Err(refusal.error()));
    }
}

/// The writer thread's state.
pub(super) struct Writer {
    pub target: Target,
    pub conn: Conn,
    /// The chain's advisory lock: Gatehouse's key and the schema's.
    pub lock: (i32, i32),
    /// Where a group's commit notifies the other instances.
    pub channel: String,
    /// This instance, as its notifications name it (`Notice`).
    pub instance: String,
    /// When the last group ended: a writer busy a moment ago knows its
    /// connection is up, and sends a group's `BEGIN` without waiting.
    pub idle_since: Option<std::time::Instant>,
    pub publisher: Arc<Publisher>,
    pub key: Option<AuditKey>,
    pub stats: Arc<StoreStats>,
}

impl Writer {
    /// Commits groups from `queue`, shared with the instance's other
    /// writers: one waits for the next jobs while the others commit.
    pub(super) fn run(mut self, queue: &Mutex<Receiver<Box<dyn Job>>>, max_batch: usize) {
        loop {
            let group = match queue.lock() {
                Ok(queue) => next_group(&queue, max_batch),
                Err(_) => None,
            };
            match group {
                Some(group) => self.commit(group),
                None => return,
            }
        }
    }

    /// Commits `batch` as one group, on a new connection if the last one
    /// ended; a group whose connection proves closed before any job ran
    /// (the database restarted since the last group) is begun once more.
    fn commit(&mut self, batch: Vec<Box<dyn Job>>) {
        let mut batch = Some(batch);
        let mut lost = self.conn.is_closed();
        for _ in 0..2 {
            if lost {
                if let Err(e) = self.target.reconnect_own().map(|conn| self.conn = conn) {
                    let refusal = Refusal::of("cannot reconnect to the database", &e);
                    for job in batch.take().into_iter().flatten() {
                        job.abort(refusal.clone());
                    }
                    return;
                }
            }
            match self.group(batch.take().unwrap_or_default()) {
                Ok(()) => return,
                Err(unbegun) => (batch, lost) = (Some(unbegun), true),
            }
        }
        for job in batch.into_iter().flatten() {
            job.abort(Refusal::Unavailable("the database connection closed twice in a row".into()));
        }
    }

    /// Runs one group of jobs in one transaction: a request begins it (and
    /// the first job's savepoint), one between jobs; the last job's replies
    /// come with the chain's lock and head if the group appended events;
    /// one request ends it (the events, the notification and the commit).
    /// The begin is sent without waiting when the writer committed a group
    /// under [`BUSY_WITHIN`] ago; otherwise it is waited for, and the jobs
    /// are given back, none run, if the connection proved closed.
    fn group(&mut self, batch: Vec<Box<dyn Job>>) -> std::result::Result<(), Vec<Box<dyn Job>>> {
        let busy = self.idle_since.is_some_and(|t| t.elapsed() < BUSY_WITHIN);
        self.idle_since = None;
        let begun = match busy {
            true => {
                self.conn.defer_batch("BEGIN; SAVEPOINT job");
                Ok(())
            }
            false => self.conn.batch("BEGIN; SAVEPOINT job"),
        };
        match begun {
            Ok(()) => {}
            Err(e) if self.conn.is_closed() || matches!(e, EngineError::Unavailable(_)) => return Err(batch),
            Err(e) => {
                let _ = self.conn.batch("ROLLBACK");
                let refusal = Refusal::of("cannot begin a transaction", &e);
                for job in batch {
                    job.abort(refusal.clone());
                }
                return Ok(());
            }
        };
        let mut state = PgWrite::new(self.key.clone(), self.lock);
        // Each job's answer, and its refusal when found only after it ended.
        let mut finishes: Vec<(Finish, Option<EngineError>)> = Vec::with_capacity(batch.len());
        {
            let mut db = PgDb { conn: &self.conn, state: &mut state };
            let n = batch.len();
            for (i, job) in batch.into_iter().enumerate() {
                if i > 0 {
                    // A failed job rolled back to its savepoint, which stays; either way start afresh.
                    // If this fails, so do the next statements and the commit, and every job hears it.
                    // Sent without waiting: the job's first statement waits for it. Carried with the
                    // job before's writes, if they are: refused with them, it is not sent again.
                    db.conn.defer_batch("RELEASE job; SAVEPOINT job");
                    if db.conn.carrying() {
                        db.conn.carry();
                    }
                }
                let finish = job.run(&mut db, i + 1 == n);
                if let (Some(refusal), Some(before)) = (db.state.take_late(), finishes.last_mut()) {
                    before.1 = Some(refusal);
                }
                finishes.push((finish, None));
            }
        }
        // The group's events, linked under the chain's lock and stored in
        // one statement sent ahead of the commit. `COMMIT` in a transaction
        // an error left aborted rolls back without an error; the statement
        // before it fails there instead (and the rest of the request is
        // skipped), so no caller hears success for a group that did not
        // commit.
        let events = state.finish(&self.conn);
        let end = match events.as_ref().ok().and_then(|events| events.last()) {
            Some(last) => format!(
                "SELECT pg_notify({}, {}); COMMIT",
                quote_literal(&self.channel),
                quote_literal(&Notice::payload(last.seq, &self.instance))
            ),
            None => "SELECT 1; COMMIT".to_owned(),
        };
        let ended = events.and_then(|events| self.conn.batch(&end).map(|()| events));
        // Only a group that committed counts the writer busy. After one that
        // failed (the database went away mid-group), the next group's begin
        // is waited for, so a closed connection is found before any job
        // runs and the group is begun again on a new one, however soon the
        // database is back.
        self.idle_since = ended.is_ok().then(std::time::Instant::now);
        match ended {
            Ok(events) => {
                self.stats.group_committed();
                if let Err(e) = self.publisher.committed(&self.conn, events) {
                    // Subscribers catch up from the log; the commit stands.
                    tracing::warn!(error = %e, "cannot publish committed events");
                }
                for (finish, refusal) in finishes {
                    finish(refusal.map_or(Ok(()), Err));
                }
            }
            Err(e) => {
                // A connection lost at `COMMIT` may have committed: its
                // callers hear "unavailable", never success, and the
                // listener publishes whatever the log then holds.
                let _ = self.conn.batch("ROLLBACK");
                let refusal = Refusal::of("the commit failed", &e);
                for (finish, _) in finishes {
                    finish(Err(refusal.clone().error()));
                }
            }
        }
        Ok(())
    }
}

/// Runs one job under the savepoint `job` (the group set it) so its
/// failure undoes only its own work, including the events it appended.
/// The last job of a group asks for the chain's lock with its replies.
///
/// A job that ends well, with a job after it, leaves its deferred writes'
/// replies to that job's first wait (one round trip fewer per job), unless
/// the group holds the chain or the replies of the job before are still
/// due (this job never waited): then they are read now. A refusal among
/// the carried replies is found in the next job's wait, which rolls back
/// to this job's savepoint and sends the next job's requests again
/// (`Conn::wait`); the next job then forgets what this one appended
/// ([`PgWrite::absorb_carried`]) and the writer fails this one with it.
fn in_savepoint<T>(
    db: &mut PgDb<'_, &mut PgWrite>,
    op: impl FnOnce(&mut dyn WriteTx) -> Result<T>,
    last: bool,
) -> Result<T> {
    db.state.begin_job();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| op(db)))
        .unwrap_or_else(|_| Err(EngineError::Storage("an engine operation panicked".into())));
    let carry = !last && result.is_ok() && db.state.may_carry() && !db.conn.carrying();
    // Otherwise the job's deferred writes are answered before it ends: one
    // that failed fails the job (its cause is reported, not the abort
    // after it, nor the chain lock's request, which an aborted savepoint
    // refuses).
    let settled = match (last, &result) {
        (true, Ok(_)) => db.state.hold_chain_now(db.conn),
        _ if carry => Ok(()),
        _ => db.conn.flush(),
    };
    db.state.absorb_carried(db.conn);
    let result = settled.and(result);
    if result.is_err() {
        db.conn.batch("ROLLBACK TO job")?;
        db.state.undo(db.state.job_start());
    } else if carry {
        db.conn.carry();
        db.state.carry_from_here();
    }
    result
}
