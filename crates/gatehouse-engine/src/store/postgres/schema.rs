//! Versioned migrations for PostgreSQL, the only source of its schema. The
//! tables mirror SQLite's (`store/schema.rs`): JSON snapshots as text (so
//! objects keep their key order and a recording round-trips byte for byte)
//! with their query columns beside them. Text that is ordered or compared
//! uses the "C" collation, so listings sort exactly as on SQLite whatever
//! the database's locale. `gatehouse_schema` records how far a database has
//! come; migrations run under an advisory lock, so instances starting
//! together migrate once.

use crate::error::{EngineError, Result};

use super::Conn;

/// Migration `i` brings a database from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: everything SQLite's versions 1 to 5 hold.
    r#"
    CREATE TABLE runs (
        id          TEXT COLLATE "C" PRIMARY KEY,
        session_id  TEXT COLLATE "C",
        user_id     TEXT COLLATE "C",
        status      TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        updated_at  BIGINT NOT NULL,
        parent_id   TEXT COLLATE "C",
        data        TEXT NOT NULL
    );
    CREATE INDEX runs_by_status ON runs (status, updated_at);
    CREATE INDEX runs_by_created ON runs (created_at, id);
    CREATE INDEX runs_by_session ON runs (session_id, created_at) WHERE session_id IS NOT NULL;
    CREATE INDEX runs_by_user ON runs (user_id, created_at) WHERE user_id IS NOT NULL;
    CREATE INDEX runs_by_parent ON runs (parent_id, created_at) WHERE parent_id IS NOT NULL;

    CREATE TABLE gates (
        id               TEXT COLLATE "C" PRIMARY KEY,
        run_id           TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
        kind             TEXT COLLATE "C" NOT NULL,
        mode_rank        BIGINT NOT NULL,
        priority         BIGINT NOT NULL,
        status           TEXT COLLATE "C" NOT NULL,
        agent            TEXT COLLATE "C" NOT NULL,
        created_at       BIGINT NOT NULL,
        expires_at       BIGINT,
        escalate_at      BIGINT,
        idempotency_key  TEXT COLLATE "C",
        data             TEXT NOT NULL
    );
    -- The reviewer's queue: sync first, then priority, then age.
    CREATE INDEX gates_pending_queue ON gates (mode_rank, priority DESC, created_at, id) WHERE status = 'pending';
    CREATE INDEX gates_pending_by_run ON gates (run_id, mode_rank) WHERE status = 'pending';
    -- The sweeps only ever look at pending gates with a deadline.
    CREATE INDEX gates_expiry ON gates (expires_at) WHERE status = 'pending' AND expires_at IS NOT NULL;
    CREATE INDEX gates_escalation ON gates (escalate_at) WHERE status = 'pending' AND escalate_at IS NOT NULL;
    CREATE INDEX gates_by_run ON gates (run_id, created_at);
    CREATE INDEX gates_by_created ON gates (created_at, id);
    CREATE UNIQUE INDEX gates_idempotency ON gates (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

    CREATE TABLE decisions (
        id          TEXT COLLATE "C" PRIMARY KEY,
        gate_id     TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES gates (id),
        run_id      TEXT COLLATE "C" NOT NULL,
        action      TEXT COLLATE "C" NOT NULL,
        decided_by  TEXT COLLATE "C" NOT NULL,
        decided_at  BIGINT NOT NULL,
        latency_ms  BIGINT NOT NULL,
        data        TEXT NOT NULL
    );
    CREATE INDEX decisions_by_run ON decisions (run_id);

    CREATE TABLE turns (
        id      TEXT COLLATE "C" PRIMARY KEY,
        run_id  TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
        idx     BIGINT NOT NULL,
        data    TEXT NOT NULL,
        UNIQUE (run_id, idx)
    );

    CREATE TABLE context (
        run_id  TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
        key     TEXT COLLATE "C" NOT NULL,
        value   TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );

    CREATE TABLE plan_revisions (
        run_id    TEXT COLLATE "C" NOT NULL REFERENCES runs (id),
        revision  BIGINT NOT NULL,
        data      TEXT NOT NULL,
        PRIMARY KEY (run_id, revision)
    );

    CREATE TABLE agent_ratings (
        agent  TEXT COLLATE "C" PRIMARY KEY,
        data   TEXT NOT NULL
    );

    -- The audit log. seq is gap-free: one writer at a time appends, under
    -- the chain's advisory lock (rows are never deleted; retention only
    -- clears `body`, keeping `body_hash` so the chain still verifies).
    CREATE TABLE events (
        seq         BIGINT PRIMARY KEY,
        at          BIGINT NOT NULL,
        run_id      TEXT COLLATE "C",
        session_id  TEXT COLLATE "C",
        user_id     TEXT COLLATE "C",
        kind        TEXT NOT NULL,
        body        TEXT,
        body_hash   BYTEA NOT NULL,
        hash        BYTEA NOT NULL
    );
    CREATE INDEX events_by_run ON events (run_id, seq) WHERE run_id IS NOT NULL;
    CREATE INDEX events_by_session ON events (session_id, seq) WHERE session_id IS NOT NULL;
    CREATE INDEX events_by_user ON events (user_id, seq) WHERE user_id IS NOT NULL;

    -- API tokens. Only a SHA-256 of each secret is kept.
    CREATE TABLE tokens (
        id          TEXT COLLATE "C" PRIMARY KEY,
        name        TEXT NOT NULL,
        role        TEXT NOT NULL,
        secret_hash BYTEA NOT NULL UNIQUE,
        created_at  BIGINT NOT NULL,
        revoked_at  BIGINT,
        data        TEXT NOT NULL
    );

    CREATE TABLE allow_rules (
        id          TEXT COLLATE "C" PRIMARY KEY,
        agent       TEXT COLLATE "C" NOT NULL,
        action      TEXT COLLATE "C" NOT NULL,
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT,
        revoked_at  BIGINT,
        data        TEXT NOT NULL
    );
    CREATE INDEX allow_rules_live ON allow_rules (agent, action) WHERE revoked_at IS NULL;
    "#,
];

/// The schema version this binary writes.
pub const CURRENT_VERSION: i32 = MIGRATIONS.len() as i32;

/// Brings the database (its current schema) to [`CURRENT_VERSION`] in one
/// transaction, or refuses one from a newer Gatehouse.
pub(super) fn migrate(conn: &Conn, lock: (i32, i32)) -> Result<()> {
    conn.batch("BEGIN")?;
    let result = migrate_locked(conn, lock);
    conn.batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" })?;
    result
}

fn migrate_locked(conn: &Conn, lock: (i32, i32)) -> Result<()> {
    conn.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&lock.0, &lock.1])?;
    conn.batch("CREATE TABLE IF NOT EXISTS gatehouse_schema (version INTEGER NOT NULL)")?;
    let found: i32 = match conn.query("SELECT version FROM gatehouse_schema", &[])?.first() {
        Some(row) => row.try_get(0)?,
        None => {
            conn.execute("INSERT INTO gatehouse_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    if found > CURRENT_VERSION {
        return Err(EngineError::NewerDatabase { found: i64::from(found), supported: i64::from(CURRENT_VERSION) });
    }
    for sql in &MIGRATIONS[found as usize..] {
        conn.batch(sql)?;
    }
    conn.execute("UPDATE gatehouse_schema SET version = $1", &[&CURRENT_VERSION])?;
    Ok(())
}
