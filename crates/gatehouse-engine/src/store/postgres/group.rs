//! A PostgreSQL write group's events and rating changes. Its jobs append
//! events without a place in the hash chain; the group takes the chain lock
//! only to link them to the committed head and store them, as it ends
//! (`writer.rs`), or first when a job in it reads the event log or purges a
//! run (`queries.rs`, so a write sees its own events, as on SQLite). The
//! rows go in one `INSERT ... SELECT FROM unnest(...)`. The agents' rating
//! changes are counted under the same lock as the group ends, read in the
//! lock's request, so no two groups wait for each other at an agent's
//! rating until then. A failed job's savepoint rollback is undone here too
//! ([`JobMark`]), and so is a job refused only after the next one began
//! (its writes' replies carried into that job's first wait, `pipeline.rs`):
//! what it appended and rated is forgotten ([`PgWrite::absorb_carried`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use tokio_postgres::types::ToSql;

use super::queries::{chain_head_of, CHAIN_HEAD};
use super::Conn;
use crate::error::{EngineError, Result};
use crate::event::{self, AuditKey, Event, EventBody};
use crate::gate::GateStatus;
use crate::scoring::{CapabilityRating, RatingChange};
use crate::store::chain::ChainHead;

/// An owned parameter, for a statement sent without waiting ([`Conn::defer`]).
fn own<T: ToSql + Sync + Send + 'static>(value: T) -> Box<dyn ToSql + Sync + Send> {
    Box::new(value)
}

/// A write group's state on PostgreSQL: the events its jobs appended, and
/// whether it holds the chain lock yet. Shared through `&self` by the read
/// side of a write (`ReadTx` reads the log), hence the cell.
pub(crate) struct PgWrite {
    key: Option<AuditKey>,
    /// The chain's advisory lock: Gatehouse's key and the schema's.
    lock: (i32, i32),
    log: RefCell<GroupLog>,
    /// The runs whose rows the group holds, as stored (or as it updated
    /// them): no other transaction can change them before it commits, so a
    /// job reads them here without a round trip. Emptied when a job fails
    /// (its savepoint's rollback undoes its updates and may let its row
    /// locks go).
    runs: RefCell<HashMap<String, String>>,
    /// What the group read of held runs' gates, true until it commits for
    /// the same reason, and so emptied with `runs`: [`Held`].
    held: RefCell<Held>,
    /// Where the running job began.
    job_start: Cell<Option<JobMark>>,
    /// Where the job before began, while its writes' replies are carried
    /// into the running job's first wait (`Conn::carry`).
    carried_from: Cell<Option<JobMark>>,
    /// The job before's refusal, found after it ended, for the writer.
    late: RefCell<Option<EngineError>>,
}

/// Facts a write group read about the gates of runs whose rows it holds.
/// Every write to a run's gates happens while its writer holds the run's
/// row, so no other transaction can make these untrue before the group
/// commits; a write that relies on one need not wait to learn whether it
/// applied (`queries.rs`), and any write that does not rely on one waits
/// as before.
#[derive(Default)]
struct Held {
    /// Each gate read, with its status as read or as the group last set it.
    gate_status: HashMap<String, GateStatus>,
    /// Idempotency keys (run, key) read as unused on their run.
    unused_keys: std::collections::HashSet<(String, String)>,
}

#[derive(Default)]
struct GroupLog {
    /// The chain's end after the last event linked, once the group holds the chain lock.
    head: Option<ChainHead>,
    events: Vec<Appended>,
    /// How many of `events` are in the table.
    stored: usize,
    /// Rating changes, in the order made; counted as the group ends.
    ratings: Vec<(String, RatingChange)>,
    /// The stored ratings of the agents in `ratings`, read with the chain lock.
    read: Option<Vec<CapabilityRating>>,
}

/// One appended event: its body as stored, and its place once linked.
struct Appended {
    body: EventBody,
    json: String,
    body_hash: [u8; 32],
    link: Option<ChainHead>,
}

/// Where a job began, to undo its part of a [`PgWrite`] if it fails.
#[derive(Clone, Copy)]
pub(crate) struct JobMark {
    head: Option<ChainHead>,
    appended: usize,
    stored: usize,
    rated: usize,
}

impl PgWrite {
    pub fn new(key: Option<AuditKey>, lock: (i32, i32)) -> Self {
        Self {
            key,
            lock,
            log: RefCell::new(GroupLog::default()),
            runs: RefCell::new(HashMap::new()),
            held: RefCell::new(Held::default()),
            job_start: Cell::new(None),
            carried_from: Cell::new(None),
            late: RefCell::new(None),
        }
    }

    /// Notes where a job begins.
    pub fn begin_job(&self) {
        self.job_start.set(Some(self.mark()));
    }

    /// Where the running job began (moved back when the job before it
    /// proved refused and what it appended was forgotten).
    pub fn job_start(&self) -> JobMark {
        self.job_start.get().unwrap_or_else(|| self.mark())
    }

    /// Whether the running job, ending well, may leave its writes' replies
    /// to the next job's first wait: not once the group holds the chain (a
    /// refusal found later would have to unlink what came after it).
    pub fn may_carry(&self) -> bool {
        self.log.borrow().head.is_none()
    }

    /// The running job's writes are carried into the next job's first wait.
    pub fn carry_from_here(&self) {
        self.carried_from.set(self.job_start.get());
    }

    /// If the job before proved refused (`Conn::wait` rolled its savepoint
    /// back), forgets what it appended and rated and everything kept of the
    /// rows the group holds, keeps its refusal for the writer, and moves
    /// the running job's start back to where the job before began.
    pub fn absorb_carried(&self, conn: &Conn) {
        let Some(refusal) = conn.take_carried_failure() else { return };
        if let (Some(from), Some(to)) = (self.carried_from.take(), self.job_start.get()) {
            let mut log = self.log.borrow_mut();
            log.events.drain(from.appended..to.appended);
            log.ratings.drain(from.rated..to.rated);
            log.read = None;
            self.job_start.set(Some(JobMark { appended: from.appended, rated: from.rated, ..to }));
        }
        self.runs.borrow_mut().clear();
        *self.held.borrow_mut() = Held::default();
        self.late.borrow_mut().get_or_insert(refusal);
    }

    /// Reads the replies the job before carried, if they are still due,
    /// and absorbs its refusal: before the group takes the chain, so that
    /// nothing of a refused job is linked.
    fn settle_carried(&self, conn: &Conn) -> Result<()> {
        let settled = if conn.carrying() { conn.flush() } else { Ok(()) };
        self.absorb_carried(conn);
        settled
    }

    /// The job before's refusal, found after it ended.
    pub fn take_late(&self) -> Option<EngineError> {
        self.late.borrow_mut().take()
    }

    /// Keeps an appended event, linked at once if the group holds the chain lock.
    pub fn append(&mut self, body: EventBody) -> Result<()> {
        let json = serde_json::to_string(&body).map_err(|e| EngineError::Storage(format!("cannot encode: {e}")))?;
        let body_hash = event::body_hash(&json);
        let log = self.log.get_mut();
        log.events.push(Appended { body, json, body_hash, link: None });
        if log.head.is_some() {
            log.link(self.key.as_ref());
        }
        Ok(())
    }

    /// Where the group stands before a job runs.
    pub fn mark(&self) -> JobMark {
        let log = self.log.borrow();
        JobMark { head: log.head, appended: log.events.len(), stored: log.stored, rated: log.ratings.len() }
    }

    /// Forgets what a failed job appended, once its savepoint is rolled
    /// back: that rollback also removed the rows stored since the job
    /// began (earlier jobs' among them), which are stored again later. If
    /// the job took the chain lock, the rollback may have let it go: the
    /// group takes it again before it stores anything, and links its events
    /// afresh from the head it then reads.
    pub fn undo(&mut self, mark: JobMark) {
        self.runs.get_mut().clear();
        *self.held.get_mut() = Held::default();
        let log = self.log.get_mut();
        log.events.truncate(mark.appended);
        log.ratings.truncate(mark.rated);
        log.read = None;
        log.stored = mark.stored;
        log.head = mark.head;
        if mark.head.is_none() {
            log.events.iter_mut().for_each(|e| e.link = None);
        }
    }

    /// Keeps a rating change, counted as the group ends.
    pub fn rate(&mut self, agent: &str, change: RatingChange) {
        self.log.get_mut().ratings.push((agent.to_owned(), change));
    }

    /// The agents whose ratings the group changes, each once.
    fn rated_agents(&self) -> Vec<String> {
        let mut agents: Vec<String> = Vec::new();
        for (agent, _) in &self.log.borrow().ratings {
            if !agents.contains(agent) {
                agents.push(agent.clone());
            }
        }
        agents
    }

    /// Takes the chain lock now, with the replies of the last job's writes
    /// (the connection answers those first, so a failure among them fails
    /// this request too, and the job), when the group has events or rating
    /// changes to store as it ends; otherwise reads those replies only.
    pub fn hold_chain_now(&self, conn: &Conn) -> Result<()> {
        let agents = self.rated_agents();
        let log = self.log.borrow();
        if log.head.is_some() || (log.events.is_empty() && agents.is_empty()) {
            drop(log);
            return conn.flush();
        }
        drop(log);
        self.hold_chain(conn, &agents)
    }

    /// Takes the chain lock, unless the group holds it, and links the
    /// events appended so far to the committed head. Every group of every
    /// instance appends to the log under this lock, from its tail to its
    /// commit, so `seq` stays gap-free and in commit order. In the same
    /// request, reads the stored ratings of `agents`, kept for the end.
    fn hold_chain(&self, conn: &Conn, agents: &[String]) -> Result<()> {
        if self.log.borrow().head.is_some() {
            return Ok(());
        }
        self.settle_carried(conn)?;
        // Prepared statements, each planned once per connection; the
        // ratings' read goes right behind the lock, in the same wait.
        let (key, schema) = self.lock;
        let lock: [&(dyn ToSql + Sync); 2] = [&key, &schema];
        let ratings: [&(dyn ToSql + Sync); 1] = [&agents];
        let mut requests = vec![(CHAIN_LOCK, &lock[..]), (CHAIN_HEAD, &[][..])];
        if !agents.is_empty() {
            requests.push((RATINGS_OF, &ratings[..]));
        }
        let replies = conn.query_all(&requests)?;
        let head = chain_head_of(replies.get(1).and_then(|rows| rows.first()))?;
        let mut log = self.log.borrow_mut();
        log.head = Some(head);
        log.link(self.key.as_ref());
        if let Some(rows) = replies.get(2) {
            log.read = Some(ratings_of(rows)?);
        }
        Ok(())
    }

    /// Counts the group's rating changes on the stored ratings (read under
    /// the chain lock: every group changes ratings only there) and sends
    /// the results, without waiting.
    fn store_ratings(&self, conn: &Conn, agents: Vec<String>) -> Result<()> {
        if agents.is_empty() {
            return Ok(());
        }
        let read = self.log.borrow_mut().read.take();
        let stored = match read {
            Some(stored) => stored,
            None => ratings_of(&conn.query(RATINGS_OF, &[&agents])?)?,
        };
        let mut ratings: Vec<CapabilityRating> = agents
            .iter()
            .map(|agent| {
                stored.iter().find(|r| &r.agent == agent).cloned().unwrap_or_else(|| CapabilityRating::new(agent))
            })
            .collect();
        for (agent, change) in &self.log.borrow().ratings {
            if let Some(rating) = ratings.iter_mut().find(|r| &r.agent == agent) {
                rating.apply(*change);
            }
        }
        let data = ratings
            .iter()
            .map(|r| serde_json::to_string(r).map_err(|e| EngineError::Storage(format!("cannot encode: {e}"))))
            .collect::<Result<Vec<String>>>()?;
        conn.defer(
            "INSERT INTO agent_ratings (agent, data) SELECT * FROM unnest($1::text[], $2::text[])
             ON CONFLICT (agent) DO UPDATE SET data = excluded.data",
            vec![own(agents), own(data)],
        )
    }

    /// Takes the chain lock and stores what is appended and not stored
    /// yet: before a job reads the log (it then sees every event committed
    /// before, its group's own, and no other instance appends until it
    /// commits) and as the group ends. Sent without waiting: the next
    /// statement waited for reads its reply, and a failure there fails
    /// whoever waits (the job, or the group's commit).
    fn store(&self, conn: &Conn) -> Result<()> {
        self.hold_chain(conn, &[])?;
        let mut log = self.log.borrow_mut();
        if log.stored < log.events.len() {
            insert_events(conn, &log.events[log.stored..])?;
            log.stored = log.events.len();
        }
        Ok(())
    }

    /// As the group ends: counts its rating changes, stores the rest of its
    /// events and gives them, as they will be published once it commits. A
    /// group that appended none, changed no rating and read no log never
    /// takes the chain lock.
    pub fn finish(self, conn: &Conn) -> Result<Vec<Arc<Event>>> {
        let agents = self.rated_agents();
        if !self.log.borrow().events.is_empty() || !agents.is_empty() {
            self.hold_chain(conn, &agents)?;
            self.store_ratings(conn, agents)?;
            self.store(conn)?;
        }
        self.log
            .into_inner()
            .events
            .into_iter()
            .map(|e| {
                let link = e.link.ok_or_else(|| EngineError::Storage("an event was stored without its link".into()))?;
                Ok(Arc::new(Event { seq: link.seq, hash: hex::encode(link.hash), body: e.body }))
            })
            .collect()
    }
}

impl GroupLog {
    /// Links the events not linked yet, in order, from `head`.
    fn link(&mut self, key: Option<&AuditKey>) {
        let Some(mut head) = self.head else { return };
        for e in self.events.iter_mut().filter(|e| e.link.is_none()) {
            let seq = head.seq + 1;
            head = ChainHead { seq, hash: event::link(key, &head.hash, seq, &e.body_hash) };
            e.link = Some(head);
        }
        self.head = Some(head);
    }
}

/// The stored ratings of the agents in `$1`.
const RATINGS_OF: &str = "SELECT data FROM agent_ratings WHERE agent = ANY($1)";

/// The chain's advisory lock, held to the end of the transaction: `$1`
/// Gatehouse's key, `$2` the schema's.
const CHAIN_LOCK: &str = "SELECT pg_advisory_xact_lock($1, $2)";

fn ratings_of(rows: &[tokio_postgres::Row]) -> Result<Vec<CapabilityRating>> {
    rows.iter().map(|row| Ok(serde_json::from_str(row.try_get::<_, &str>(0)?)?)).collect()
}

/// What a transaction does before it reads the event log, and how it reads
/// rows it may go on to change: a write group stores its events first,
/// locks what it reads and keeps the runs it holds (see `queries.rs`); a
/// read transaction none of these.
pub(crate) trait TxSide {
    fn store_events(&self, conn: &Conn) -> Result<()>;
    /// Whether reads lock the rows they return (`FOR NO KEY UPDATE`).
    fn locks_rows(&self) -> bool;
    /// A run whose row the group holds, as stored (JSON).
    fn held_run(&self, id: &str) -> Option<String>;
    /// Keeps a run whose row the group holds (`None`: forgets it, and
    /// what the group read of any run's gates).
    fn hold_run(&self, id: &str, data: Option<String>);
    /// The status of gate `id` as the group read or last set it, read
    /// while it held the gate's run.
    fn held_gate_status(&self, id: &str) -> Option<GateStatus>;
    /// Keeps gate `id`'s status (read while holding its run; `None`: forgets it).
    fn hold_gate_status(&self, id: &str, status: Option<GateStatus>);
    /// Whether `key` was read as unused on `run` while the group held the
    /// run; forgets it (a gate is about to take it).
    fn take_unused_key(&self, run: &str, key: &str) -> bool;
    /// Keeps that `key` is unused on `run`, read while holding the run.
    fn hold_unused_key(&self, run: &str, key: &str);
}

impl TxSide for () {
    fn store_events(&self, _: &Conn) -> Result<()> {
        Ok(())
    }

    fn locks_rows(&self) -> bool {
        false
    }

    fn held_run(&self, _: &str) -> Option<String> {
        None
    }

    fn hold_run(&self, _: &str, _: Option<String>) {}

    fn held_gate_status(&self, _: &str) -> Option<GateStatus> {
        None
    }

    fn hold_gate_status(&self, _: &str, _: Option<GateStatus>) {}

    fn take_unused_key(&self, _: &str, _: &str) -> bool {
        false
    }

    fn hold_unused_key(&self, _: &str, _: &str) {}
}

impl TxSide for &mut PgWrite {
    fn store_events(&self, conn: &Conn) -> Result<()> {
        self.store(conn)
    }

    fn locks_rows(&self) -> bool {
        true
    }

    fn held_run(&self, id: &str) -> Option<String> {
        self.runs.borrow().get(id).cloned()
    }

    fn hold_run(&self, id: &str, data: Option<String>) {
        let mut runs = self.runs.borrow_mut();
        match data {
            Some(data) => runs.insert(id.to_owned(), data),
            None => {
                // Its gates go (a purge): forget what was read of any.
                *self.held.borrow_mut() = Held::default();
                runs.remove(id)
            }
        };
    }

    fn held_gate_status(&self, id: &str) -> Option<GateStatus> {
        self.held.borrow().gate_status.get(id).copied()
    }

    fn hold_gate_status(&self, id: &str, status: Option<GateStatus>) {
        let mut held = self.held.borrow_mut();
        match status {
            Some(status) => held.gate_status.insert(id.to_owned(), status),
            None => held.gate_status.remove(id),
        };
    }

    fn take_unused_key(&self, run: &str, key: &str) -> bool {
        self.held.borrow_mut().unused_keys.remove(&(run.to_owned(), key.to_owned()))
    }

    fn hold_unused_key(&self, run: &str, key: &str) {
        self.held.borrow_mut().unused_keys.insert((run.to_owned(), key.to_owned()));
    }
}

/// Sends one `INSERT` for the linked `events`, without waiting for its reply.
fn insert_events(conn: &Conn, events: &[Appended]) -> Result<()> {
    let n = events.len();
    let (mut seq, mut at, mut run_id, mut session_id, mut user_id) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut kind, mut body, mut body_hash, mut hash) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for e in events {
        let link = e.link.ok_or_else(|| EngineError::Storage("an event was about to be stored unlinked".into()))?;
        seq.push(link.seq as i64);
        at.push(e.body.at.timestamp_micros());
        run_id.push(e.body.run_id.as_ref().map(|r| r.to_string()));
        session_id.push(e.body.session_id.clone());
        user_id.push(e.body.user_id.clone());
        kind.push(e.body.kind.name());
        body.push(e.json.clone());
        body_hash.push(e.body_hash.to_vec());
        hash.push(link.hash.to_vec());
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
