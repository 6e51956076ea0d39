//! Versioned migrations for PostgreSQL, the only source of its schema. The
//! tables mirror SQLite's (`store/sqlite/schema.rs`): JSON snapshots as text (so
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
    // 2: gate search, as SQLite's version 4 has it. One row of `gate_search`
    // per gate, written by triggers on `gates` so every path that stores a
    // gate (opening, each decision, votes, expiry, cancellation, imports,
    // purges) keeps it current in the same transaction. A row keeps the
    // eight fields of SQLite's `gate_search_source` view as text (snippets
    // are cut from it) and their words as a tsvector. Stock PostgreSQL
    // only, no extension: words are folded as SQLite's `unicode61
    // remove_diacritics 2` folds them (case, Latin diacritics; punctuation
    // and symbols separate words), then read by the `simple` configuration.
    r#"
    -- The text as the index reads it: lower case, Latin letters without
    -- their diacritics (decomposed, the marks after a Latin letter dropped,
    -- recomposed), and punctuation, symbols and control characters as
    -- spaces. Character for character, except for the rare text that
    -- decomposition does not give back as it was (snippets map what
    -- `ts_headline` marks in the folded text back onto the text). ASCII
    -- needs no decomposition; a database whose encoding is not UTF-8 cannot
    -- decompose, and keeps diacritics.
    CREATE FUNCTION gate_search_fold(t text) RETURNS text
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        RETURN regexp_replace(
            lower(CASE WHEN octet_length(t) = char_length(t) OR current_setting('server_encoding') <> 'UTF8' THEN t
                  ELSE normalize(regexp_replace(normalize(t, NFD), E'([A-Za-z])[\\u0300-\\u036f]+', E'\\1', 'g'), NFC)
                  END COLLATE "default"),
            -- The database's punctuation class (ASCII only when LC_CTYPE is
            -- C), and the blocks that hold what else separates words:
            -- Latin-1's punctuation and symbols, general punctuation,
            -- currencies, arrows to miscellaneous symbols, CJK and fullwidth
            -- punctuation, private use (the snippets' markers) and emoji.
            E'[[:punct:][:cntrl:]\\u0080-\\u00a9\\u00ab-\\u00b1\\u00b4\\u00b6-\\u00b8\\u00bb\\u00bf\\u00d7\\u00f7'
            '\\u2000-\\u206f\\u20a0-\\u20cf\\u2190-\\u2bff\\u3000-\\u303f\\ue000-\\uf8ff\\ufe30-\\ufe4f'
            '\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40\\uff5b-\\uff65\\U0001f000-\\U0001faff]',
            ' ', 'g');

    -- One word a reviewer typed, as a query: its tokens as a phrase, the
    -- last one a prefix when `prefix`. NULL when nothing in it is a token,
    -- so that it matches nothing (every word must match).
    CREATE FUNCTION gate_search_word(word text, prefix boolean) RETURNS tsquery
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    BEGIN ATOMIC
        SELECT CASE WHEN numnode(q) = 0 THEN NULL WHEN prefix THEN (q::text || ':*')::tsquery ELSE q END
        FROM phraseto_tsquery('simple', gate_search_fold(word)) AS q;
    END;

    CREATE TABLE gate_search (
        gate_id     TEXT COLLATE "C" PRIMARY KEY,
        run_id      TEXT COLLATE "C" NOT NULL,
        kind        TEXT COLLATE "C" NOT NULL,
        status      TEXT COLLATE "C" NOT NULL,
        created_at  BIGINT NOT NULL,
        text        TEXT,
        action      TEXT,
        payload     TEXT,
        details     TEXT,
        agent       TEXT,
        run         TEXT,
        reviewer    TEXT,
        decision    TEXT,
        document    TSVECTOR NOT NULL
    );
    CREATE INDEX gate_search_document ON gate_search USING gin (document);
    -- Newest first: a page of a common word may walk this instead of sorting every match.
    CREATE INDEX gate_search_by_created ON gate_search (created_at, gate_id);

    -- A gate's document, from its snapshot (`data`, JSON text), its agent
    -- and its run: what SQLite's `gate_search_source` view selects, field
    -- for field. A field that is missing or of another JSON type than
    -- expected adds nothing. The gate's kind and status are kept beside it
    -- so that a search filtering on them never reads `gates` to do so.
    CREATE FUNCTION gate_search_put(the_gate gates) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE
        g jsonb := the_gate.data::jsonb;
        spec jsonb := CASE WHEN jsonb_typeof(g -> 'spec') = 'object' THEN g -> 'spec' ELSE '{}' END;
        context jsonb := CASE WHEN jsonb_typeof(g -> 'context') = 'object' THEN g -> 'context' ELSE '{}' END;
        decision jsonb := CASE WHEN jsonb_typeof(g -> 'decision') = 'object' THEN g -> 'decision' ELSE '{}' END;
        actions jsonb := CASE WHEN jsonb_typeof(g -> 'actions') = 'array' THEN g -> 'actions' ELSE '[]' END;
        options jsonb := CASE WHEN jsonb_typeof(g -> 'options') = 'array' THEN g -> 'options' ELSE '[]' END;
        votes jsonb := CASE WHEN jsonb_typeof(g -> 'votes') = 'array' THEN g -> 'votes' ELSE '[]' END;
        f text[];
        words text[];
    BEGIN
        f := ARRAY[
            g ->> 'text',
            concat_ws(' ', spec ->> 'action',
                (SELECT string_agg(a ->> 'name', ' ') FROM jsonb_array_elements(actions) a)),
            concat_ws(' ', nullif(g -> 'payload', 'null')::text,
                (SELECT string_agg((a -> 'args')::text, ' ') FROM jsonb_array_elements(actions) a)),
            concat_ws(' ', nullif(spec - 'kind' - 'action', '{}')::text,
                context ->> 'task_id', context ->> 'task_description', context ->> 'step',
                (SELECT string_agg(a ->> 'description', ' ') FROM jsonb_array_elements(actions) a),
                (SELECT string_agg(concat_ws(' ', o ->> 'title', o ->> 'description'), ' ')
                    FROM jsonb_array_elements(options) o)),
            the_gate.agent,
            concat_ws(' ', the_gate.run_id, (SELECT r.data::json ->> 'title' FROM runs r WHERE r.id = the_gate.run_id)),
            concat_ws(' ', decision ->> 'decided_by',
                (SELECT string_agg(v ->> 'reviewer', ' ') FROM jsonb_array_elements(votes) v),
                (SELECT string_agg(a -> 'decision' ->> 'decided_by', ' ') FROM jsonb_array_elements(actions) a)),
            concat_ws(' ', decision ->> 'text', nullif(decision -> 'response', 'null')::text,
                decision ->> 'option', g ->> 'status_reason',
                (SELECT string_agg(v ->> 'reason', ' ') FROM jsonb_array_elements(votes) v),
                (SELECT string_agg(a -> 'decision' ->> 'text', ' ') FROM jsonb_array_elements(actions) a))
        ];
        words := ARRAY(SELECT gate_search_fold(x) FROM unnest(f) x);
        -- A tsvector holds at most 1 MiB of distinct words: a gate that
        -- could reach that is indexed by the start of each field.
        IF octet_length(array_to_string(words, ' ')) > 1000000 THEN
            words := ARRAY(SELECT left(x, 30000) FROM unnest(words) x);
        END IF;
        INSERT INTO gate_search AS s (gate_id, run_id, kind, status, created_at,
                text, action, payload, details, agent, run, reviewer, decision, document)
            -- One JSON string per field: phrases never match across two.
            VALUES (the_gate.id, the_gate.run_id, the_gate.kind, the_gate.status, the_gate.created_at,
                f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], to_tsvector('simple', to_jsonb(words)))
            ON CONFLICT ON CONSTRAINT gate_search_pkey DO UPDATE SET run_id = excluded.run_id,
                kind = excluded.kind, status = excluded.status, created_at = excluded.created_at,
                text = excluded.text, action = excluded.action,
                payload = excluded.payload, details = excluded.details, agent = excluded.agent,
                run = excluded.run, reviewer = excluded.reviewer, decision = excluded.decision,
                document = excluded.document;
    END
    $fn$;

    -- Keeps a gate's document current as the gate is stored, changed, removed.
    CREATE FUNCTION gate_search_follow() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM gate_search WHERE gate_id = OLD.id;
            RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' AND OLD.id <> NEW.id THEN
            DELETE FROM gate_search WHERE gate_id = OLD.id;
        END IF;
        PERFORM gate_search_put(NEW);
        RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER gate_search_insert AFTER INSERT ON gates
        FOR EACH ROW EXECUTE FUNCTION gate_search_follow();
    CREATE TRIGGER gate_search_update AFTER UPDATE OF data, run_id, kind, status, agent, created_at ON gates
        FOR EACH ROW EXECUTE FUNCTION gate_search_follow();
    CREATE TRIGGER gate_search_delete AFTER DELETE ON gates
        FOR EACH ROW EXECUTE FUNCTION gate_search_follow();

    -- The gates stored before this version.
    DO $$ BEGIN PERFORM gate_search_put(g) FROM gates g; END $$;
    "#,
    // The global memory team agents keep across runs, as SQLite keeps it.
    r#"
    CREATE TABLE global_memory (
        key    TEXT COLLATE "C" PRIMARY KEY,
        value  TEXT NOT NULL
    );
    "#,
    // 4: the same search documents for a third of the CPU. Every gate
    // stored runs `gate_search_put` twice a lifecycle (opened, decided),
    // and it was a third of the database's CPU under load: its eight
    // subqueries each started an executor, and the fold, a non-inlinable
    // SQL function (STRICT around a CASE, IMMUTABLE around the stable
    // `current_setting`), started one per field. Now the fold is inlined
    // (STABLE, not STRICT: NULL in still gives NULL out), the arrays are
    // read once each and only when not empty, and the fields are folded
    // in one expression. Every document is as before (checked row for row
    // against version 3's on 6,546 gates), so nothing is rebuilt.
    r#"
    CREATE OR REPLACE FUNCTION gate_search_fold(t text) RETURNS text
        LANGUAGE sql STABLE PARALLEL SAFE
        RETURN regexp_replace(
            lower(CASE WHEN octet_length(t) = char_length(t) OR current_setting('server_encoding') <> 'UTF8' THEN t
                  ELSE normalize(regexp_replace(normalize(t, NFD), E'([A-Za-z])[\\u0300-\\u036f]+', E'\\1', 'g'), NFC)
                  END COLLATE "default"),
            E'[[:punct:][:cntrl:]\\u0080-\\u00a9\\u00ab-\\u00b1\\u00b4\\u00b6-\\u00b8\\u00bb\\u00bf\\u00d7\\u00f7'
            '\\u2000-\\u206f\\u20a0-\\u20cf\\u2190-\\u2bff\\u3000-\\u303f\\ue000-\\uf8ff\\ufe30-\\ufe4f'
            '\\uff01-\\uff0f\\uff1a-\\uff20\\uff3b-\\uff40\\uff5b-\\uff65\\U0001f000-\\U0001faff]',
            ' ', 'g');

    CREATE OR REPLACE FUNCTION gate_search_put(the_gate gates) RETURNS void LANGUAGE plpgsql AS $fn$
    DECLARE
        g jsonb := the_gate.data::jsonb;
        spec jsonb := CASE WHEN jsonb_typeof(g -> 'spec') = 'object' THEN g -> 'spec' ELSE '{}' END;
        context jsonb := CASE WHEN jsonb_typeof(g -> 'context') = 'object' THEN g -> 'context' ELSE '{}' END;
        decision jsonb := CASE WHEN jsonb_typeof(g -> 'decision') = 'object' THEN g -> 'decision' ELSE '{}' END;
        actions jsonb := CASE WHEN jsonb_typeof(g -> 'actions') = 'array' THEN g -> 'actions' ELSE '[]' END;
        options jsonb := CASE WHEN jsonb_typeof(g -> 'options') = 'array' THEN g -> 'options' ELSE '[]' END;
        votes jsonb := CASE WHEN jsonb_typeof(g -> 'votes') = 'array' THEN g -> 'votes' ELSE '[]' END;
        action_names text;
        action_args text;
        action_descriptions text;
        action_deciders text;
        action_texts text;
        option_texts text;
        vote_reviewers text;
        vote_reasons text;
        run_title text;
        f text[];
        words text[];
    BEGIN
        IF jsonb_array_length(actions) > 0 THEN
            SELECT string_agg(a ->> 'name', ' '), string_agg((a -> 'args')::text, ' '),
                   string_agg(a ->> 'description', ' '), string_agg(a -> 'decision' ->> 'decided_by', ' '),
                   string_agg(a -> 'decision' ->> 'text', ' ')
                INTO action_names, action_args, action_descriptions, action_deciders, action_texts
                FROM jsonb_array_elements(actions) a;
        END IF;
        IF jsonb_array_length(options) > 0 THEN
            SELECT string_agg(concat_ws(' ', o ->> 'title', o ->> 'description'), ' ') INTO option_texts
                FROM jsonb_array_elements(options) o;
        END IF;
        IF jsonb_array_length(votes) > 0 THEN
            SELECT string_agg(v ->> 'reviewer', ' '), string_agg(v ->> 'reason', ' ') INTO vote_reviewers, vote_reasons
                FROM jsonb_array_elements(votes) v;
        END IF;
        SELECT r.data::json ->> 'title' INTO run_title FROM runs r WHERE r.id = the_gate.run_id;
        f := ARRAY[
            g ->> 'text',
            concat_ws(' ', spec ->> 'action', action_names),
            concat_ws(' ', nullif(g -> 'payload', 'null')::text, action_args),
            concat_ws(' ', nullif(spec - 'kind' - 'action', '{}')::text,
                context ->> 'task_id', context ->> 'task_description', context ->> 'step',
                action_descriptions, option_texts),
            the_gate.agent,
            concat_ws(' ', the_gate.run_id, run_title),
            concat_ws(' ', decision ->> 'decided_by', vote_reviewers, action_deciders),
            concat_ws(' ', decision ->> 'text', nullif(decision -> 'response', 'null')::text,
                decision ->> 'option', g ->> 'status_reason', vote_reasons, action_texts)
        ];
        words := ARRAY[gate_search_fold(f[1]), gate_search_fold(f[2]), gate_search_fold(f[3]), gate_search_fold(f[4]),
                       gate_search_fold(f[5]), gate_search_fold(f[6]), gate_search_fold(f[7]), gate_search_fold(f[8])];
        IF octet_length(array_to_string(words, ' ')) > 1000000 THEN
            words := ARRAY(SELECT left(x, 30000) FROM unnest(words) x);
        END IF;
        INSERT INTO gate_search AS s (gate_id, run_id, kind, status, created_at,
                text, action, payload, details, agent, run, reviewer, decision, document)
            VALUES (the_gate.id, the_gate.run_id, the_gate.kind, the_gate.status, the_gate.created_at,
                f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], to_tsvector('simple', to_jsonb(words)))
            ON CONFLICT ON CONSTRAINT gate_search_pkey DO UPDATE SET run_id = excluded.run_id,
                kind = excluded.kind, status = excluded.status, created_at = excluded.created_at,
                text = excluded.text, action = excluded.action,
                payload = excluded.payload, details = excluded.details, agent = excluded.agent,
                run = excluded.run, reviewer = excluded.reviewer, decision = excluded.decision,
                document = excluded.document;
    END
    $fn$;
    "#,
    // 5: a gate's search document written by a statement sent right behind
    // the one that stores the gate (`gate_rows.rs`), from fields read in
    // Rust from the gate: the insert and update triggers parsed the gate's
    // JSON again and ran PL/pgSQL for every gate stored, a quarter of the
    // database's CPU under load. Removing a gate still removes its
    // document here. The documents stored so far stay: the same words
    // (the JSON in a payload field is now written as SQLite writes it,
    // keys in their order and no spaces).
    r#"
    DROP TRIGGER gate_search_insert ON gates;
    DROP TRIGGER gate_search_update ON gates;
    CREATE OR REPLACE FUNCTION gate_search_follow() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        DELETE FROM gate_search WHERE gate_id = OLD.id;
        RETURN NULL;
    END
    $fn$;
    DROP FUNCTION gate_search_put(gates);
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
