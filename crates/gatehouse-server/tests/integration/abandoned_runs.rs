//! Closing runs whose agent is gone, as `serve --abandoned-run-after` does:
//! a server on an engine with a manual clock, agents over HTTP, one sweep at
//! a time. A run nobody hears from is cancelled with the reason; a run whose
//! gate an agent is long-polling, or polled within the time, is kept.

use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use gatehouse_engine::{Engine, EngineConfig, ManualClock, TokenRole};
use gatehouse_server::abandoned::sweep_once;
use gatehouse_server::{RunningServer, ServerConfig};
use serde_json::{json, Value};

struct Clocked {
    server: RunningServer,
    clock: ManualClock,
    http: reqwest::Client,
    base: String,
    agent: String,
    reviewer: String,
    _dir: tempfile::TempDir,
}

impl Clocked {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap());
        let engine =
            Engine::open_with_clock(dir.path().join("gatehouse.db"), EngineConfig::default(), Arc::new(clock.clone()))
                .expect("engine");
        let agent = engine.create_token("deployer", TokenRole::Agent, "test").expect("token").1;
        let reviewer = engine.create_token("alice", TokenRole::Reviewer, "test").expect("token").1;
        let config = ServerConfig { bind: "127.0.0.1:0".parse().expect("addr"), ..ServerConfig::default() };
        let server = gatehouse_server::start(engine.clone(), config).await.expect("server starts");
        // What `close_abandoned_runs` does first: remember when long polls end.
        server.state.waiters.remember_gate_waits(engine);
        let base = format!("http://{}/api/hitl", server.addr);
        Self { server, clock, http: reqwest::Client::new(), base, agent, reviewer, _dir: dir }
    }

    async fn call(&self, method: reqwest::Method, path: &str, token: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(method, format!("{}{path}", self.base)).bearer_auth(token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("request");
        assert!(resp.status().is_success(), "{path}: {}", resp.status());
        resp.json().await.expect("json")
    }

    /// A run with an async question gate (the run stays at work): its id and the gate's.
    async fn run_with_gate(&self) -> (String, String) {
        let started = self.call(reqwest::Method::POST, "/run", &self.agent, Some(json!({"run_input": {}}))).await;
        let run = started["run_id"].as_str().expect("run_id").to_owned();
        let body = json!({"kind": "question", "text": "Which region?", "mode": "async"});
        let opened = self.call(reqwest::Method::POST, &format!("/runs/{run}/gates"), &self.agent, Some(body)).await;
        (run, opened["gate_id"].as_str().expect("gate_id").to_owned())
    }

    async fn status(&self, run: &str) -> (String, Value) {
        let body = self.call(reqwest::Method::GET, &format!("/run/{run}/status"), &self.reviewer, None).await;
        (body["status"].as_str().unwrap_or_default().to_owned(), body)
    }

    async fn sweep(&self) -> Vec<String> {
        let ended = sweep_once(&self.server.state, Duration::from_secs(30 * 60)).await.expect("sweep");
        ended.into_iter().map(|r| r.to_string()).collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_nobody_hears_from_is_cancelled_and_one_polled_within_the_time_is_kept() {
    let s = Clocked::start().await;
    let (polled, gate) = s.run_with_gate().await;
    let (silent, _) = s.run_with_gate().await;
    s.clock.advance(chrono::Duration::hours(2));
    // The agent of `polled` long-polls its gate (no event: a read), which ends undecided.
    let waited = s.call(reqwest::Method::GET, &format!("/gates/{gate}/wait?timeout=0.05"), &s.agent, None).await;
    assert_eq!(waited["status"], "pending");

    assert_eq!(s.sweep().await, vec![silent.clone()]);
    let (status, body) = s.status(&silent).await;
    assert_eq!(status, "cancelled", "{body}");
    assert_eq!(s.status(&polled).await.0, "active", "polled 0 minutes ago");

    s.clock.advance(chrono::Duration::minutes(31));
    assert_eq!(s.sweep().await, vec![polled.clone()]);
    let gate = s.call(reqwest::Method::GET, &format!("/gates/{gate}"), &s.reviewer, None).await;
    assert_eq!(gate["gate"]["status"], "cancelled", "its gate is withdrawn with it");
    let state = s.call(reqwest::Method::GET, &format!("/run/{polled}/state"), &s.reviewer, None).await;
    assert_eq!(state["run"]["status_reason"], "agent gone for 30 minutes", "{state}");
    assert!(s.sweep().await.is_empty(), "closed once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_gate_an_agent_is_long_polling_is_not_gone() {
    let s = Clocked::start().await;
    let (run, gate) = s.run_with_gate().await;
    let poll = {
        let (http, url, agent) = (s.http.clone(), format!("{}/gates/{gate}/wait?timeout=60", s.base), s.agent.clone());
        tokio::spawn(async move { http.get(url).bearer_auth(agent).send().await.expect("poll").json::<Value>().await })
    };
    while s.server.state.waiters.is_empty() {
        tokio::task::yield_now().await;
    }
    s.clock.advance(chrono::Duration::hours(5));
    assert!(s.sweep().await.is_empty(), "an agent waits on its gate");
    assert_eq!(s.status(&run).await.0, "active");

    let answer = json!({"action": "respond", "text": "eu-west-1"});
    s.call(reqwest::Method::POST, &format!("/gates/{gate}/resolve"), &s.reviewer, Some(answer)).await;
    let woken = poll.await.expect("poll task").expect("json");
    assert_eq!(woken["status"], "resolved");
}
