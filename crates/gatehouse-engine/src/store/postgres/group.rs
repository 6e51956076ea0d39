//! A PostgreSQL write group's state beside the chain: the rows of the
//! events its jobs appended, stored together in one `INSERT ... SELECT
//! FROM unnest(...)` as the group ends (`writer.rs`), or first when a job
//! in the group reads the event log or purges a run (`queries.rs`), and
//! what a failed job's savepoint rollback undoes of it.

use std::cell::Cell;

use tokio_postgres::types::ToSql;

use super::Conn;
use crate::error::Result;
use crate::store::chain::{ChainHead, WriteState};

/// An owned parameter, for a statement sent without waiting ([`Conn::defer`]).
fn own<T: ToSql + Sync + Send + 'static>(value: T) -> Box<dyn ToSql + Sync + Send> {
    Box::new(value)
}

/// A write group's state on PostgreSQL: the chain as both backends keep
/// it, and the rows of the events its jobs appended. The rows are stored
/// together, in one statement, when the group ends, or first when
/// something in the group reads or changes the event log (so a write sees
/// its own events, as on SQLite).
pub(crate) struct PgWrite {
    pub chain: WriteState,
    rows: Vec<EventInsert>,
    /// How many of `rows` are in the table.
    stored: Cell<usize>,
}

/// One event's row, as `append_event` made it.
#[derive(Clone)]
pub(crate) struct EventInsert {
    pub seq: i64,
    pub at: i64,
    pub run_id: Option<String>,
    pub session_id: Option<String>,
    pub user_id: Option<String>,
    pub kind: &'static str,
    pub body: String,
    pub body_hash: Vec<u8>,
    pub hash: Vec<u8>,
}

/// Where a job began, to undo its part of a [`PgWrite`] if it fails.
#[derive(Clone, Copy)]
pub(crate) struct JobMark {
    head: ChainHead,
    appended: usize,
    stored: usize,
}

impl PgWrite {
    pub fn new(chain: WriteState) -> Self {
        Self { chain, rows: Vec::new(), stored: Cell::new(0) }
    }

    /// Keeps an appended event's row, to be stored with the group's others.
    pub fn append(&mut self, row: EventInsert) {
        self.rows.push(row);
    }

    /// Where the group stands before a job runs.
    pub fn mark(&self) -> JobMark {
        JobMark { head: self.chain.head, appended: self.rows.len(), stored: self.stored.get() }
    }

    /// Forgets what a failed job appended, once its savepoint is rolled
    /// back: that rollback also removed the rows stored since the job
    /// began (earlier jobs' among them), which are stored again later.
    pub fn undo(&mut self, mark: JobMark) {
        self.chain.head = mark.head;
        self.chain.events.truncate(mark.appended);
        self.rows.truncate(mark.appended);
        self.stored.set(mark.stored);
    }
}

/// What a reader of the event log must do first: in a write group, store
/// the events appended so far; nothing for a read transaction.
pub(crate) trait StoresEvents {
    fn store_events(&self, conn: &Conn) -> Result<()>;
}

impl StoresEvents for () {
    fn store_events(&self, _: &Conn) -> Result<()> {
        Ok(())
    }
}

impl StoresEvents for &mut PgWrite {
    fn store_events(&self, conn: &Conn) -> Result<()> {
        let pending = self.rows[self.stored.get()..].to_vec();
        insert_events(conn, pending)?;
        self.stored.set(self.rows.len());
        Ok(())
    }
}

impl PgWrite {
    /// Stores the events not stored yet, as the group ends.
    pub fn store_the_rest(&mut self, conn: &Conn) -> Result<()> {
        let pending = self.rows.split_off(self.stored.get());
        insert_events(conn, pending)?;
        self.stored.set(self.rows.len());
        Ok(())
    }
}

/// Sends one `INSERT` for `rows`, without waiting for its reply: the next
/// statement waited for reads it, and a failure there fails whoever waits
/// (the job, or the group's commit).
fn insert_events(conn: &Conn, rows: Vec<EventInsert>) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let n = rows.len();
    let (mut seq, mut at, mut run_id, mut session_id, mut user_id) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut kind, mut body, mut body_hash, mut hash) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for row in rows {
        seq.push(row.seq);
        at.push(row.at);
        run_id.push(row.run_id);
        session_id.push(row.session_id);
        user_id.push(row.user_id);
        kind.push(row.kind);
        body.push(row.body);
        body_hash.push(row.body_hash);
        hash.push(row.hash);
    }
    conn.defer(
        "INSERT INTO events (seq, at, run_id, session_id, user_id, kind, body, body_hash, hash)
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[],
                              $6::text[], $7::text[], $8::bytea[], $9::bytea[])",
        vec![
            own(seq),
            own(at),
            own(run_id),
            own(session_id),
            own(user_id),
            own(kind),
            own(body),
            own(body_hash),
            own(hash),
        ],
    )
}
