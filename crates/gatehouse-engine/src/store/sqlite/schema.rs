//! Versioned migrations. The schema's only source of truth: each entry is
//! applied once, all pending ones in a single transaction, and
//! `PRAGMA user_version` records how far a database has come so an older
//! binary refuses a newer database instead of misreading it.

use rusqlite::Connection;

use crate::error::{EngineError, Result};

/// Migration `i` brings a database from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the whole foundation.
    r#"
    CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        session_id  TEXT,
        user_id     TEXT,
        status      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        data        TEXT NOT NULL
    ) STRICT;
    CREATE INDEX runs_by_status ON runs (status, updated_at);
    CREATE INDEX runs_by_session ON runs (session_id, created_at) WHERE session_id IS NOT NULL;
    CREATE INDEX runs_by_user ON runs (user_id, created_at) WHERE user_id IS NOT NULL;

    CREATE TABLE gates (
        id               TEXT PRIMARY KEY,
        run_id           TEXT NOT NULL REFERENCES runs (id),
        kind             TEXT NOT NULL,
        mode_rank        INTEGER NOT NULL,
        priority         INTEGER NOT NULL,
        status           TEXT NOT NULL,
        agent            TEXT NOT NULL,
        created_at       INTEGER NOT NULL,
        expires_at       INTEGER,
        idempotency_key  TEXT,
        data             TEXT NOT NULL
    ) STRICT;
    -- The reviewer's queue: sync first, then priority, then age.
    CREATE INDEX gates_pending_queue ON gates (mode_rank, priority DESC, created_at)
        WHERE status = 'pending';
    -- The expiry sweep only ever looks at pending gates with a deadline.
    CREATE INDEX gates_expiry ON gates (expires_at)
        WHERE status = 'pending' AND expires_at IS NOT NULL;
    CREATE INDEX gates_by_run ON gates (run_id, created_at);
    CREATE INDEX gates_by_created ON gates (created_at);
    CREATE UNIQUE INDEX gates_idempotency ON gates (run_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;

    CREATE TABLE decisions (
        id          TEXT PRIMARY KEY,
        gate_id     TEXT NOT NULL UNIQUE REFERENCES gates (id),
        run_id      TEXT NOT NULL,
        action      TEXT NOT NULL,
        decided_by  TEXT NOT NULL,
        decided_at  INTEGER NOT NULL,
        latency_ms  INTEGER NOT NULL,
        data        TEXT NOT NULL
    ) STRICT;
    CREATE INDEX decisions_by_run ON decisions (run_id);

    CREATE TABLE turns (
        id      TEXT PRIMARY KEY,
        run_id  TEXT NOT NULL REFERENCES runs (id),
        idx     INTEGER NOT NULL,
        data    TEXT NOT NULL,
        UNIQUE (run_id, idx)
    ) STRICT;

    CREATE TABLE context (
        run_id  TEXT NOT NULL REFERENCES runs (id),
        key     TEXT NOT NULL,
        value   TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE plan_revisions (
        run_id    TEXT NOT NULL REFERENCES runs (id),
        revision  INTEGER NOT NULL,
        data      TEXT NOT NULL,
        PRIMARY KEY (run_id, revision)
    ) STRICT, WITHOUT ROWID;

    CREATE TABLE agent_ratings (
        agent  TEXT PRIMARY KEY,
        data   TEXT NOT NULL
    ) STRICT;

    -- The audit log. seq is gap-free (rows are never deleted; retention
    -- only clears `body`, keeping `body_hash` so the chain still verifies).
    CREATE TABLE events (
        seq         INTEGER PRIMARY KEY,
        at          INTEGER NOT NULL,
        run_id      TEXT,
        session_id  TEXT,
        user_id     TEXT,
        kind        TEXT NOT NULL,
        body        TEXT,
        body_hash   BLOB NOT NULL,
        hash        BLOB NOT NULL
    ) STRICT;
    CREATE INDEX events_by_run ON events (run_id, seq) WHERE run_id IS NOT NULL;
    CREATE INDEX events_by_session ON events (session_id, seq) WHERE session_id IS NOT NULL;
    CREATE INDEX events_by_user ON events (user_id, seq) WHERE user_id IS NOT NULL;
    "#,
    // 2: API tokens. Only a SHA-256 of each secret is kept.
    r#"
    CREATE TABLE tokens (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL,
        role        TEXT NOT NULL,
        secret_hash BLOB NOT NULL UNIQUE,
        created_at  INTEGER NOT NULL,
        revoked_at  INTEGER,
        data        TEXT NOT NULL
    ) STRICT;
    "#,
    // 3: a run's pending gates by blocking mode, so deciding a gate on a run
    // that has thousands of gates does not read them all.
    r#"
    CREATE INDEX gates_pending_by_run ON gates (run_id, mode_rank) WHERE status = 'pending';
    "#,
    // 4: full-text search over gates, pending and past. One FTS5 document
    // per gate, under the gate's rowid, written by triggers on `gates` so
    // every path that stores a gate (opening, each decision, votes, expiry,
    // cancellation, imports, purges) keeps it current in the same
    // transaction; a decider and their text join the document when the gate
    // is decided. The index keeps its own copy of the text: snippets need
    // it, and removing a document never depends on other rows being as they
    // were. `gate_search_source` is the one definition of a document.
    // Two- and three-character prefixes are indexed too, so the first
    // keystrokes of a search are as quick as whole words (about half as
    // large again; docs/benchmarks.md). VACUUM keeps `gates`' rowids because
    // the table has indexes; a test holds SQLite to that.
    r#"
    CREATE VIRTUAL TABLE gate_search USING fts5 (
        text, action, payload, details, agent, run, reviewer, decision,
        tokenize = 'unicode61 remove_diacritics 2',
        prefix = '2 3'
    );

    CREATE VIEW gate_search_source AS
    SELECT g.rowid AS doc,
        g.data ->> '$.text' AS text,
        concat_ws(' ', g.data ->> '$.spec.action',
            (SELECT group_concat(a.value ->> '$.name', ' ') FROM json_each(g.data, '$.actions') a)) AS action,
        concat_ws(' ', nullif(g.data -> '$.payload', 'null'),
            (SELECT group_concat(a.value -> '$.args', ' ') FROM json_each(g.data, '$.actions') a)) AS payload,
        concat_ws(' ', nullif(json_remove(g.data -> '$.spec', '$.kind', '$.action'), '{}'),
            g.data ->> '$.context.task_id', g.data ->> '$.context.task_description', g.data ->> '$.context.step',
            (SELECT group_concat(a.value ->> '$.description', ' ') FROM json_each(g.data, '$.actions') a),
            (SELECT group_concat(concat_ws(' ', o.value ->> '$.title', o.value ->> '$.description'), ' ')
                FROM json_each(g.data, '$.options') o)) AS details,
        g.agent AS agent,
        concat_ws(' ', g.run_id, (SELECT r.data ->> '$.title' FROM runs r WHERE r.id = g.run_id)) AS run,
        concat_ws(' ', g.data ->> '$.decision.decided_by',
            (SELECT group_concat(v.value ->> '$.reviewer', ' ') FROM json_each(g.data, '$.votes') v),
            (SELECT group_concat(a.value ->> '$.decision.decided_by', ' ') FROM json_each(g.data, '$.actions') a))
            AS reviewer,
        concat_ws(' ', g.data ->> '$.decision.text', nullif(g.data -> '$.decision.response', 'null'),
            g.data ->> '$.decision.option', g.data ->> '$.status_reason',
            (SELECT group_concat(v.value ->> '$.reason', ' ') FROM json_each(g.data, '$.votes') v),
            (SELECT group_concat(a.value ->> '$.decision.text', ' ') FROM json_each(g.data, '$.actions') a))
            AS decision
    FROM gates g;

    CREATE TRIGGER gate_search_insert AFTER INSERT ON gates BEGIN
        INSERT INTO gate_search (rowid, text, action, payload, details, agent, run, reviewer, decision)
            SELECT * FROM gate_search_source WHERE doc = new.rowid;
    END;
    CREATE TRIGGER gate_search_update AFTER UPDATE OF data ON gates BEGIN
        DELETE FROM gate_search WHERE rowid = old.rowid;
        INSERT INTO gate_search (rowid, text, action, payload, details, agent, run, reviewer, decision)
            SELECT * FROM gate_search_source WHERE doc = new.rowid;
    END;
    CREATE TRIGGER gate_search_delete AFTER DELETE ON gates BEGIN
        DELETE FROM gate_search WHERE rowid = old.rowid;
    END;

    -- The gates stored before this version.
    INSERT INTO gate_search (rowid, text, action, payload, details, agent, run, reviewer, decision)
        SELECT * FROM gate_search_source;
    "#,
    // 5: richer decisions. When a pending gate escalates after its wait (the
    // sweep looks only at due ones); allow-rules reviewers add while
    // deciding (looked up by agent and action as each gate opens); a
    // sub-agent's run names its parent run.
    r#"
    ALTER TABLE gates ADD COLUMN escalate_at INTEGER;
    CREATE INDEX gates_escalation ON gates (escalate_at) WHERE status = 'pending' AND escalate_at IS NOT NULL;

    CREATE TABLE allow_rules (
        id          TEXT PRIMARY KEY,
        agent       TEXT NOT NULL,
        action      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER,
        revoked_at  INTEGER,
        data        TEXT NOT NULL
    ) STRICT;
    CREATE INDEX allow_rules_live ON allow_rules (agent, action) WHERE revoked_at IS NULL;

    ALTER TABLE runs ADD COLUMN parent_id TEXT;
    CREATE INDEX runs_by_parent ON runs (parent_id, created_at) WHERE parent_id IS NOT NULL;
    "#,
    // The global memory team agents keep across runs (each value the
    // memory's entry as JSON: value, who stored it, when it expires).
    r#"
    CREATE TABLE global_memory (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    "#,
];

/// The schema version this binary writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` to [`CURRENT_VERSION`] in one transaction, or refuses a
/// database from a newer Gatehouse.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > CURRENT_VERSION {
        return Err(EngineError::NewerDatabase { found, supported: CURRENT_VERSION });
    }
    if found == CURRENT_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    for sql in &MIGRATIONS[found as usize..] {
        tx.execute_batch(sql)?;
    }
    tx.pragma_update(None, "user_version", CURRENT_VERSION)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).expect("explain");
        let rows = stmt.query_map([], |r| r.get::<_, String>(3)).expect("plan rows");
        rows.map(|r| r.expect("row")).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn the_hot_queries_use_their_indexes() {
        let mut conn = Connection::open_in_memory().expect("db");
        migrate(&mut conn).expect("migrate");
        let blocking =
            plan(&conn, "SELECT count(*) FROM gates WHERE run_id = 'r' AND status = 'pending' AND mode_rank = 0");
        assert!(blocking.contains("gates_pending_by_run"), "{blocking}");
        let queue = plan(
            &conn,
            "SELECT data FROM gates WHERE status = 'pending' ORDER BY mode_rank, priority DESC, created_at LIMIT 100",
        );
        assert!(queue.contains("gates_pending_queue"), "{queue}");
        assert!(!queue.contains("TEMP B-TREE FOR ORDER BY"), "the queue must not sort the whole table: {queue}");
    }

    #[test]
    fn migrating_twice_changes_nothing_and_records_the_version() {
        let mut conn = Connection::open_in_memory().expect("db");
        migrate(&mut conn).expect("first");
        migrate(&mut conn).expect("second");
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).expect("version");
        assert_eq!(version, CURRENT_VERSION);
    }
}
