//! Test harness: a real Gatehouse server on an ephemeral loopback port over
//! a real SQLite file (or, with `GATEHOUSE_TEST_BACKEND=postgres`, a schema
//! of its own in the test cluster named by `GATEHOUSE_TEST_POSTGRES`, else
//! one this test binary starts), with
//! tokens for each role and a small HTTP client. A second instance on the
//! same PostgreSQL data serves the team-server tests. The team tests share
//! `member` (a scripted team member) and `until` (poll a path until its body holds).

pub mod sse;

use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_engine::{Database, Engine, EngineConfig, PgOptions, SystemClock, TokenRole};
use gatehouse_server::{RunningServer, ServerConfig};
use serde_json::{json, Value};

pub struct TestServer {
    pub server: RunningServer,
    pub base: String,
    pub http: reqwest::Client,
    pub admin: String,
    pub reviewer: String,
    pub reviewer2: String,
    pub agent: String,
    pub other_agent: String,
    /// Holds the SQLite file's directory until the server is dropped.
    _dir: tempfile::TempDir,
    /// Where the data is, and the PostgreSQL schema, so another instance can open it.
    pub database: Database,
    pub schema: Option<String>,
}

#[path = "../../../../../tests/support/postgres.rs"]
pub mod cluster;

/// The test cluster's URL (`GATEHOUSE_TEST_POSTGRES`, else a throwaway
/// cluster this test binary starts once), for the team-server tests.
pub fn postgres_url() -> String {
    cluster::url()
}

/// Opens an engine on `database` (in `schema`, on PostgreSQL).
pub fn open_engine(database: &Database, schema: &Option<String>) -> Engine {
    let config =
        EngineConfig { postgres: PgOptions { schema: schema.clone(), ..PgOptions::default() }, ..Default::default() };
    Engine::open_database(database, config, Arc::new(SystemClock)).expect("engine")
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(ServerConfig::default()).await
    }

    pub async fn start_with(config: ServerConfig) -> Self {
        match std::env::var("GATEHOUSE_TEST_BACKEND").as_deref() {
            Ok("postgres") => Self::start_postgres_with(config).await,
            Ok("sqlite") | Err(_) => {
                let dir = tempfile::tempdir().expect("temp dir");
                let database = Database::Sqlite(dir.path().join("gatehouse.db"));
                Self::start_on(database, None, dir, config).await
            }
            Ok(other) => panic!("GATEHOUSE_TEST_BACKEND is `{other}`; use sqlite or postgres"),
        }
    }

    /// On PostgreSQL, whatever the backend of the other tests.
    pub async fn start_postgres() -> Self {
        Self::start_postgres_with(ServerConfig::default()).await
    }

    /// On the PostgreSQL cluster at `url` (one a test started for itself).
    pub async fn start_postgres_at(url: &str) -> Self {
        let schema = Some(format!("test_{}", uuid::Uuid::new_v4().simple()));
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_on(Database::Postgres(url.to_owned()), schema, dir, ServerConfig::default()).await
    }

    pub async fn start_postgres_with(config: ServerConfig) -> Self {
        let schema = Some(format!("test_{}", uuid::Uuid::new_v4().simple()));
        let dir = tempfile::tempdir().expect("temp dir");
        Self::start_on(Database::Postgres(postgres_url()), schema, dir, config).await
    }

    /// Another server instance on the same data, with the same tokens.
    pub async fn another_instance(&self) -> Self {
        let engine = open_engine(&self.database, &self.schema);
        let config = ServerConfig { bind: "127.0.0.1:0".parse().expect("addr"), ..ServerConfig::default() };
        let server = gatehouse_server::start(engine, config).await.expect("server starts");
        Self {
            base: format!("http://{}/api/hitl", server.addr),
            server,
            http: reqwest::Client::new(),
            admin: self.admin.clone(),
            reviewer: self.reviewer.clone(),
            reviewer2: self.reviewer2.clone(),
            agent: self.agent.clone(),
            other_agent: self.other_agent.clone(),
            _dir: tempfile::tempdir().expect("temp dir"),
            database: self.database.clone(),
            schema: self.schema.clone(),
        }
    }

    async fn start_on(
        database: Database,
        schema: Option<String>,
        dir: tempfile::TempDir,
        mut config: ServerConfig,
    ) -> Self {
        let engine = open_engine(&database, &schema);
        let token = |name: &str, role| engine.create_token(name, role, "test").expect("token").1;
        let (admin, reviewer, reviewer2) =
            (token("root", TokenRole::Admin), token("alice", TokenRole::Reviewer), token("bob", TokenRole::Reviewer));
        let (agent, other_agent) = (token("deployer", TokenRole::Agent), token("intruder", TokenRole::Agent));
        config.bind = "127.0.0.1:0".parse().expect("addr");
        let server = gatehouse_server::start(engine, config).await.expect("server starts");
        let base = format!("http://{}/api/hitl", server.addr);
        Self {
            server,
            base,
            http: reqwest::Client::new(),
            admin,
            reviewer,
            reviewer2,
            agent,
            other_agent,
            _dir: dir,
            database,
            schema,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn call(&self, method: reqwest::Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.http.request(method, self.url(path)).bearer_auth(token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, token, None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, token, Some(body)).await
    }

    /// Creates a run driven by the `deployer` agent and returns its id.
    pub async fn run(&self) -> String {
        let (status, body) =
            self.post("/run", &self.agent, serde_json::json!({"run_input": {"prompt": "deploy"}})).await;
        assert_eq!(status, 201, "{body}");
        body["run_id"].as_str().expect("run_id").to_owned()
    }

    /// Opens a gate on `run` as the agent and returns its id.
    pub async fn gate(&self, run: &str, body: Value) -> String {
        let (status, body) = self.post(&format!("/runs/{run}/gates"), &self.agent, body).await;
        assert_eq!(status, 201, "{body}");
        body["gate_id"].as_str().expect("gate_id").to_owned()
    }
}

/// A team member on the scripted provider's `chat` model, with these tools.
pub fn member(name: &str, role: &str, tools: &[&str]) -> Value {
    json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools})
}

/// Polls `path` until `done` holds for its body.
pub async fn until(s: &TestServer, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = s.get(path, &s.reviewer).await;
        if status == 200 && done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "gave up waiting on {path}: {status} {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
