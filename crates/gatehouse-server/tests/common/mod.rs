//! Test harness: a real Gatehouse server on an ephemeral loopback port over
//! a real SQLite file, with tokens for each role and a small HTTP client.

#![allow(dead_code)]

use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use gatehouse_server::{RunningServer, ServerConfig};
use serde_json::Value;

pub struct TestServer {
    pub server: RunningServer,
    pub base: String,
    pub http: reqwest::Client,
    pub admin: String,
    pub reviewer: String,
    pub reviewer2: String,
    pub agent: String,
    pub other_agent: String,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(ServerConfig::default()).await
    }

    pub async fn start_with(mut config: ServerConfig) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = Engine::open(dir.path().join("gatehouse.db"), EngineConfig::default()).expect("engine");
        let token = |name: &str, role| engine.create_token(name, role, "test").expect("token").1;
        let (admin, reviewer, reviewer2) =
            (token("root", TokenRole::Admin), token("alice", TokenRole::Reviewer), token("bob", TokenRole::Reviewer));
        let (agent, other_agent) = (token("deployer", TokenRole::Agent), token("intruder", TokenRole::Agent));
        config.bind = "127.0.0.1:0".parse().expect("addr");
        let server = gatehouse_server::start(engine, config).await.expect("server starts");
        let base = format!("http://{}/api/hitl", server.addr);
        Self { server, base, http: reqwest::Client::new(), admin, reviewer, reviewer2, agent, other_agent, dir }
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
