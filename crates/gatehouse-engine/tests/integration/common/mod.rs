//! Shared test fixtures: a fresh engine with a manual clock, on a real
//! SQLite file in a temporary directory, or, when the test command sets
//! `GATEHOUSE_TEST_BACKEND=postgres`, in a schema of its own in the
//! throwaway PostgreSQL cluster named by `GATEHOUSE_TEST_POSTGRES` (else one
//! this test binary starts). The same tests thus run against both backends.

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use gatehouse_engine::event::{self, AuditKey};
use gatehouse_engine::{Database, Engine, EngineConfig, ManualClock, NewRun, PgOptions, Run};
use tempfile::TempDir;

pub struct Fixture {
    pub engine: Engine,
    pub clock: ManualClock,
    pub dir: TempDir,
    database: Database,
    schema: Option<String>,
}

#[path = "../../../../../tests/support/postgres.rs"]
mod cluster;

/// The PostgreSQL URL of the test cluster, when the tests run on PostgreSQL:
/// `GATEHOUSE_TEST_POSTGRES`, else a throwaway cluster this test binary
/// starts once.
pub fn postgres_url() -> Option<String> {
    match std::env::var("GATEHOUSE_TEST_BACKEND").as_deref() {
        Ok("postgres") => Some(cluster::url()),
        Ok("sqlite") | Err(_) => None,
        Ok(other) => panic!("GATEHOUSE_TEST_BACKEND is `{other}`; use sqlite or postgres"),
    }
}

/// The certificate authority that signed the test cluster's certificate, when it offers TLS.
pub fn postgres_ca() -> Option<std::path::PathBuf> {
    cluster::ca()
}

fn open(database: &Database, schema: &Option<String>, clock: &ManualClock) -> Engine {
    open_keyed(database, schema, clock, None)
}

fn open_keyed(database: &Database, schema: &Option<String>, clock: &ManualClock, key: Option<AuditKey>) -> Engine {
    let config = EngineConfig {
        postgres: PgOptions { schema: schema.clone(), ..PgOptions::default() },
        audit_key: key,
        ..Default::default()
    };
    Engine::open_database(database, config, Arc::new(clock.clone())).expect("open engine")
}

impl Fixture {
    /// On the backend the test command chose.
    pub fn new() -> Self {
        match postgres_url() {
            Some(url) => Self::on(Database::Postgres(url)),
            None => Self::sqlite(),
        }
    }

    /// On SQLite, whatever the test command chose (SQLite's own behaviour).
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Self::with_dir(Database::Sqlite(dir.path().join("gatehouse.db")), dir)
    }

    fn on(database: Database) -> Self {
        Self::with_dir(database, tempfile::tempdir().expect("temp dir"))
    }

    fn with_dir(database: Database, dir: TempDir) -> Self {
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap());
        let schema =
            matches!(database, Database::Postgres(_)).then(|| format!("test_{}", uuid::Uuid::new_v4().simple()));
        let engine = open(&database, &schema, &clock);
        Self { engine, clock, dir, database, schema }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.database, Database::Postgres(_))
    }

    /// The SQLite file (SQLite fixtures only).
    pub fn db_path(&self) -> std::path::PathBuf {
        match &self.database {
            Database::Sqlite(path) => path.clone(),
            Database::Postgres(_) => panic!("db_path is for SQLite fixtures; use Fixture::sqlite()"),
        }
    }

    /// Another engine on the same data, as a second process or server instance would open it.
    pub fn open_again(&self) -> Engine {
        open(&self.database, &self.schema, &self.clock)
    }

    /// Closes the engine and opens the same data again, as a restart would.
    pub fn reopen(self) -> Self {
        let Self { engine, clock, dir, database, schema } = self;
        drop(engine);
        let engine = open(&database, &schema, &clock);
        Self { engine, clock, dir, database, schema }
    }

    /// Another engine on the same data whose chain is keyed with `key`
    /// (`None`: no key).
    pub fn open_with_key(&self, key: Option<AuditKey>) -> Engine {
        open_keyed(&self.database, &self.schema, &self.clock, key)
    }

    /// Rewrites the bodies of the events from `from` on with `edit` and
    /// recomputes their hashes and the plain chain after them, as a forger
    /// without the audit key would (tampering tests).
    pub fn forge_events_from(&self, from: u64, edit: impl Fn(&str) -> String) {
        let rows = self.query_events();
        let mut prev = event::GENESIS;
        let mut forged = Vec::new();
        for (seq, body, hash) in rows {
            if seq >= from {
                let body = edit(&body);
                let body_hash = event::body_hash(&body);
                let hash = event::chain(&prev, seq, &body_hash);
                forged.push((seq, body, body_hash.to_vec(), hash.to_vec()));
                prev = hash;
            } else {
                prev = hash.try_into().expect("32-byte hash");
            }
        }
        for (seq, body, body_hash, hash) in forged {
            let sql = format!(
                "UPDATE events SET body = '{}', body_hash = {}, hash = {} WHERE seq = {seq}",
                body.replace('\'', "''"),
                self.bytes_literal(&body_hash),
                self.bytes_literal(&hash)
            );
            self.tamper(&sql);
        }
    }

    fn bytes_literal(&self, bytes: &[u8]) -> String {
        if self.is_postgres() {
            format!("'\\x{}'::bytea", hex::encode(bytes))
        } else {
            format!("X'{}'", hex::encode(bytes))
        }
    }

    /// Every event's sequence number, body and hash, in order.
    fn query_events(&self) -> Vec<(u64, String, Vec<u8>)> {
        let sql = "SELECT seq, body, hash FROM events ORDER BY seq";
        match &self.database {
            Database::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                let mut stmt = conn.prepare(sql).unwrap();
                let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?, r.get(2)?))).unwrap();
                rows.map(Result::unwrap).collect()
            }
            Database::Postgres(url) => {
                let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect to the test cluster");
                let schema = self.schema.as_deref().expect("a schema");
                client.batch_execute(&format!("SET search_path TO \"{schema}\"")).unwrap();
                let rows = client.query(sql, &[]).unwrap();
                rows.iter().map(|r| (r.get::<_, i64>(0) as u64, r.get(1), r.get(2))).collect()
            }
        }
    }

    /// Runs SQL on the stored data behind the engine's back (tampering tests).
    pub fn tamper(&self, sql: &str) {
        match &self.database {
            Database::Sqlite(path) => rusqlite::Connection::open(path).unwrap().execute_batch(sql).unwrap(),
            Database::Postgres(url) => {
                let mut client = postgres::Client::connect(url, postgres::NoTls).expect("connect to the test cluster");
                let schema = self.schema.as_deref().expect("a schema");
                client.batch_execute(&format!("SET search_path TO \"{schema}\"; {sql}")).unwrap();
            }
        }
    }

    pub fn run(&self, agent: &str) -> Run {
        self.engine
            .create_run(NewRun { agent: agent.into(), title: format!("{agent}'s run"), ..NewRun::default() }, agent)
            .expect("create run")
    }

    pub fn run_with(&self, new: NewRun) -> Run {
        let agent = new.agent.clone();
        self.engine.create_run(new, &agent).expect("create run")
    }
}
