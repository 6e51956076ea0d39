//! Webhooks for new sync gates against a real local receiver: the blocker
//! webhook payload arrives promptly, async gates are not announced, a run's own
//! `hitl_config.webhook_url` wins over the server's, and a dead or hanging
//! receiver neither slows gate creation nor goes uncounted.

use crate::common;

use std::time::{Duration, Instant};

use axum::extract::State;
use axum::Json;
use common::TestServer;
use gatehouse_engine::policy::HitlConfig;
use gatehouse_engine::NewRun;
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// A local webhook receiver: its URL and what it received.
struct Receiver {
    url: String,
    got: mpsc::UnboundedReceiver<Value>,
}

impl Receiver {
    /// Answers every POST after `delay` (zero for a healthy receiver).
    async fn start(delay: Duration) -> Self {
        let (tx, got) = mpsc::unbounded_channel();
        let app =
            axum::Router::new()
                .route(
                    "/hook",
                    axum::routing::post(
                        |State((tx, delay)): State<(mpsc::UnboundedSender<Value>, Duration)>,
                         Json(body): Json<Value>| async move {
                            tokio::time::sleep(delay).await;
                            let _ = tx.send(body);
                            "ok"
                        },
                    ),
                )
                .with_state((tx, delay));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, got }
    }

    async fn next(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.got.recv()).await.ok().flatten()
    }
}

async fn server_posting_to(url: &str) -> TestServer {
    TestServer::start_with(ServerConfig { webhook_url: Some(url.to_owned()), ..ServerConfig::default() }).await
}

async fn new_run(s: &TestServer, webhook_url: Option<String>) -> String {
    let engine = s.server.state.engine_handle().clone();
    let hitl_config = HitlConfig { webhook_url, ..HitlConfig::default() };
    let new = NewRun { agent: "deployer".into(), hitl_config, ..NewRun::default() };
    let run = tokio::task::spawn_blocking(move || engine.create_run(new, "deployer")).await.unwrap().unwrap();
    run.id.to_string()
}

fn question(text: &str, mode: &str) -> Value {
    json!({"kind": "question", "text": text, "mode": mode, "context": {"task_id": "task-7"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_sync_gate_is_posted_with_the_blocker_webhook_fields() {
    let mut receiver = Receiver::start(Duration::ZERO).await;
    let s = server_posting_to(&receiver.url).await;
    let run = new_run(&s, None).await;
    let (status, opened) = s.post(&format!("/runs/{run}/gates"), &s.agent, question("Which region?", "sync")).await;
    assert_eq!(status, 201, "{opened}");
    let gate_id = opened["gate_id"].as_str().unwrap();

    let hook = receiver.next(Duration::from_secs(1)).await.expect("webhook within a second");
    assert_eq!(hook["blocker_id"], gate_id);
    assert_eq!(hook["question"], "Which region?");
    assert_eq!(hook["agent_id"], "deployer");
    assert_eq!(hook["task_id"], "task-7");
    assert_eq!(hook["type"], "SYNC");
    assert_eq!(hook["run_id"], run.as_str());
    let sent: chrono::DateTime<chrono::Utc> = hook["created_at"].as_str().unwrap().parse().expect("RFC 3339");
    let stored: chrono::DateTime<chrono::Utc> = opened["gate"]["created_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(sent, stored);
    let link = hook["dashboard_url"].as_str().unwrap();
    assert!(link.starts_with(&format!("http://{}", s.server.addr)) && link.contains(gate_id), "{link}");

    // A gate without a task names its run instead.
    s.gate(&run, json!({"kind": "question", "text": "And the size?"})).await;
    let hook = receiver.next(Duration::from_secs(1)).await.expect("second webhook");
    assert_eq!(hook["task_id"], run.as_str());
    // Counted once the receiver's answer is back, just after it got the body.
    let deadline = Instant::now() + Duration::from_secs(2);
    while s.server.state.webhooks.stats().delivered < 2 {
        assert!(Instant::now() < deadline, "{:?}", s.server.state.webhooks.stats());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.server.state.webhooks.stats().failed, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_and_advisory_gates_are_not_announced() {
    let mut receiver = Receiver::start(Duration::ZERO).await;
    let s = server_posting_to(&receiver.url).await;
    let run = new_run(&s, None).await;
    s.gate(&run, question("for later", "async")).await;
    s.gate(&run, question("fyi", "advisory")).await;
    assert!(receiver.next(Duration::from_millis(500)).await.is_none(), "non-blocking gates were announced");
    s.gate(&run, question("blocking", "sync")).await;
    let hook = receiver.next(Duration::from_secs(1)).await.expect("the sync gate");
    assert_eq!(hook["question"], "blocking", "the first and only announcement is the sync gate");
    assert!(receiver.next(Duration::from_millis(200)).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_own_webhook_url_overrides_the_servers() {
    let mut server_default = Receiver::start(Duration::ZERO).await;
    let mut per_run = Receiver::start(Duration::ZERO).await;
    let s = server_posting_to(&server_default.url).await;
    let special = new_run(&s, Some(per_run.url.clone())).await;
    let ordinary = new_run(&s, None).await;

    s.gate(&special, question("to the run's receiver", "sync")).await;
    let hook = per_run.next(Duration::from_secs(1)).await.expect("per-run receiver");
    assert_eq!(hook["run_id"], special.as_str());
    s.gate(&ordinary, question("to the default receiver", "sync")).await;
    let hook = server_default.next(Duration::from_secs(1)).await.expect("default receiver");
    assert_eq!(hook["run_id"], ordinary.as_str(), "the default receiver saw only the ordinary run");
    // Each run's next gate goes where its first went (the runs' URLs are remembered, not read again).
    s.gate(&special, question("again to the run's receiver", "sync")).await;
    s.gate(&ordinary, question("again to the default receiver", "sync")).await;
    let hook = per_run.next(Duration::from_secs(1)).await.expect("per-run receiver, again");
    assert_eq!(hook["question"], "again to the run's receiver");
    let hook = server_default.next(Duration::from_secs(1)).await.expect("default receiver, again");
    assert_eq!(hook["question"], "again to the default receiver");
    assert!(per_run.next(Duration::from_millis(200)).await.is_none());
    assert!(server_default.next(Duration::from_millis(200)).await.is_none());
}

/// Opens a sync gate and returns how long the HTTP round trip took.
async fn timed_gate(s: &TestServer, run: &str) -> Duration {
    let started = Instant::now();
    s.gate(run, question("is anyone there?", "sync")).await;
    started.elapsed()
}

async fn wait_for_failures(s: &TestServer, n: u64, within: Duration) {
    let deadline = Instant::now() + within;
    while s.server.state.webhooks.stats().failed < n {
        assert!(Instant::now() < deadline, "failures not counted: {:?}", s.server.state.webhooks.stats());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_does_not_delay_gates_and_is_counted() {
    // A port that was bound and released: connections are refused.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let s = server_posting_to(&url).await;
    let run = new_run(&s, None).await;
    for _ in 0..3 {
        let took = timed_gate(&s, &run).await;
        assert!(took < Duration::from_millis(1000), "gate creation waited for the webhook: {took:?}");
    }
    wait_for_failures(&s, 3, Duration::from_secs(5)).await;
    assert_eq!(s.server.state.webhooks.stats().delivered, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_receiver_does_not_delay_gates_and_times_out() {
    let receiver = Receiver::start(Duration::from_secs(30)).await;
    let s = server_posting_to(&receiver.url).await;
    let run = new_run(&s, None).await;
    let took = timed_gate(&s, &run).await;
    assert!(took < Duration::from_millis(1000), "gate creation waited for the webhook: {took:?}");
    // The gate is usable at once although the receiver has not answered.
    let (status, list) = s.get(&format!("/gates?run_id={run}"), &s.reviewer).await;
    assert_eq!((status, list["total"].as_u64()), (200, Some(1)), "{list}");
    assert_eq!(s.server.state.webhooks.stats().failed, 0, "not given up yet");
    // The sender gives up after its 5 s timeout.
    wait_for_failures(&s, 1, Duration::from_secs(9)).await;
    assert_eq!(s.server.state.webhooks.stats().delivered, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escalated_gate_is_announced_whatever_its_mode_with_the_reason() {
    let mut receiver = Receiver::start(Duration::ZERO).await;
    let s = server_posting_to(&receiver.url).await;
    let run = s.run().await;
    let body = json!({"kind": "approval", "action": "restart", "mode": "async", "text": "Restart the cache?",
                      "expires_in_secs": 1, "on_timeout": "escalate"});
    let gate = s.gate(&run, body).await;
    assert!(receiver.next(Duration::from_millis(300)).await.is_none(), "a new async gate is not announced");
    // The server's own sweep (every few seconds) escalates it once it is due.
    let got = receiver.next(Duration::from_secs(15)).await.expect("the escalation is announced");
    assert_eq!(got["blocker_id"], gate.as_str(), "{got}");
    assert_eq!(got["type"], "ASYNC", "{got}");
    assert_eq!(got["priority"], "urgent", "{got}");
    assert!(got["escalation"].as_str().unwrap_or_default().contains("escalated to urgent"), "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_escalating_after_its_wait_names_whom_it_brings_in() {
    let mut receiver = Receiver::start(Duration::ZERO).await;
    let s = server_posting_to(&receiver.url).await;
    let run = s.run().await;
    let body = json!({"kind": "approval", "action": "rotate_keys", "mode": "async", "text": "Rotate the keys?",
                      "deciders": ["alice"], "escalate_after_secs": 1, "escalate_to": ["role:oncall", "dave"]});
    let gate = s.gate(&run, body).await;
    let got = receiver.next(Duration::from_secs(15)).await.expect("the escalation is announced");
    assert_eq!(got["blocker_id"], gate.as_str(), "{got}");
    assert_eq!(got["priority"], "high", "{got}");
    assert_eq!(got["notify"], json!(["role:oncall", "dave"]), "{got}");
    assert_eq!(got["deciders"], json!(["alice", "role:oncall", "dave"]), "{got}");
    assert!(got["escalation"].as_str().unwrap_or_default().contains("and to role:oncall, dave"), "{got}");
    // Still pending (an escalation decides nothing), and it escalated once.
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "pending", "{detail}");
    assert!(receiver.next(Duration::from_secs(6)).await.is_none(), "announced once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_that_redirects_is_not_followed() {
    // The configured target answers 307 to somewhere else; that other place must never hear of the gate.
    let mut elsewhere = Receiver::start(Duration::ZERO).await;
    let target = elsewhere.url.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let target = target.clone();
            async move { (axum::http::StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, target)]) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let redirecting = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let s = server_posting_to(&redirecting).await;
    let run = new_run(&s, None).await;
    s.gate(&run, question("Redirect me?", "sync")).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while s.server.state.webhooks.stats().failed == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.server.state.webhooks.stats().failed, 1, "a redirect is a failed delivery");
    assert!(elsewhere.next(Duration::from_millis(300)).await.is_none(), "the redirect was followed");
}
