//! Alerts against a real server: each threshold raises an `alert_raised`
//! event once however many sweeps see it over, clears it once when the
//! figure is back within, and posts both to the server's webhook; `GET
//! /alerts` and the metrics' SLA section show the configuration. Sweeps are
//! run by hand (`alerts::sweep_once`); the engine's clock is a manual one
//! where time matters.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::Json;
use common::TestServer;
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{AlertKind, Database, Engine, EngineConfig, ManualClock, NewGate, NewRun, TokenRole};
use gatehouse_server::alerts::{sweep_once, AlertConfig};
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// A local webhook receiver keeping only alert posts.
async fn receiver() -> (String, mpsc::UnboundedReceiver<Value>) {
    let (tx, got) = mpsc::unbounded_channel();
    let app = axum::Router::new()
        .route(
            "/hook",
            axum::routing::post(|State(tx): State<mpsc::UnboundedSender<Value>>, Json(body): Json<Value>| async move {
                if body.get("alert").is_some() {
                    let _ = tx.send(body);
                }
                "ok"
            }),
        )
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, got)
}

async fn next_alert(got: &mut mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(10), got.recv()).await.expect("an alert post").expect("open")
}

/// The alert events in the log, as (type, alert kind).
fn alert_events(engine: &Engine) -> Vec<(String, String)> {
    let events = engine.events_after(0, &EventFilter::default(), 10_000).unwrap();
    events
        .iter()
        .filter(|e| e.body.kind.name().starts_with("alert_"))
        .map(|e| {
            let body = serde_json::to_value(&e.body.kind).unwrap();
            (e.body.kind.name().to_owned(), body["alert"]["kind"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

async fn sweep(s: &TestServer) {
    sweep_once(&s.server.state).await.expect("the sweep runs");
}

fn engine_of(s: &TestServer) -> Engine {
    s.server.state.engine_handle().clone()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_pending_queue_raises_one_alert_until_it_shrinks_then_clears_it() {
    let (url, mut got) = receiver().await;
    let alerts = AlertConfig { pending_queue: Some(1), ..AlertConfig::default() };
    let s = TestServer::start_with(ServerConfig { webhook_url: Some(url), alerts, ..ServerConfig::default() }).await;
    let run = s.run().await;
    let async_question = |t: &str| json!({"kind": "question", "text": t, "mode": "async"});
    let first = s.gate(&run, async_question("One?")).await;
    s.gate(&run, async_question("Two?")).await;

    sweep(&s).await;
    sweep(&s).await;
    let e = engine_of(&s);
    assert_eq!(blocking(move || alert_events(&e)).await, [("alert_raised".into(), "pending_queue".into())]);
    let post = next_alert(&mut got).await;
    assert_eq!((post["alert"].as_str(), post["state"].as_str()), (Some("pending_queue"), Some("raised")));
    assert_eq!(post["value"], 2.0);
    let (status, body) = s.get("/alerts", &s.reviewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["config"]["pending_queue"], 1);
    assert_eq!(body["active"][0]["kind"], "pending_queue");

    let (status, body) =
        s.post(&format!("/gates/{first}/resolve"), &s.reviewer, json!({"action": "respond", "response": "yes"})).await;
    assert_eq!(status, 200, "{body}");
    sweep(&s).await;
    sweep(&s).await;
    let e = engine_of(&s);
    let kinds: Vec<String> = blocking(move || alert_events(&e)).await.into_iter().map(|(t, _)| t).collect();
    assert_eq!(kinds, ["alert_raised", "alert_cleared"], "cleared once, never raised again while within");
    assert_eq!(next_alert(&mut got).await["state"], "cleared");
    assert_eq!(s.get("/alerts", &s.reviewer).await.1["active"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sync_gate_waiting_past_its_minutes_raises_an_alert() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(chrono::Utc::now());
    let engine = Engine::open_database(
        &Database::Sqlite(dir.path().join("g.db")),
        EngineConfig::default(),
        Arc::new(clock.clone()),
    )
    .unwrap();
    let reviewer = engine.create_token("alice", TokenRole::Reviewer, "test").unwrap().1;
    let run = engine.create_run(NewRun { agent: "ops".into(), ..NewRun::default() }, "ops").unwrap();
    let gate = engine.open_gate(&run.id, NewGate::question("Roll back?"), "ops").unwrap();
    let alerts = AlertConfig { sync_gate_waiting_minutes: Some(30), ..AlertConfig::default() };
    let (url, mut got) = receiver().await;
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        webhook_url: Some(url),
        alerts,
        ..ServerConfig::default()
    };
    let server = gatehouse_server::start(engine.clone(), config).await.unwrap();

    sweep_once(&server.state).await.unwrap();
    let e = engine.clone();
    assert!(blocking(move || alert_events(&e)).await.is_empty(), "not yet thirty minutes");
    clock.advance(chrono::Duration::minutes(31));
    sweep_once(&server.state).await.unwrap();
    sweep_once(&server.state).await.unwrap();
    let e = engine.clone();
    assert_eq!(blocking(move || alert_events(&e)).await, [("alert_raised".into(), "sync_gate_waiting".into())]);
    let http = reqwest::Client::new();
    let body: Value = http
        .get(format!("http://{}/api/hitl/alerts", server.addr))
        .bearer_auth(&reviewer)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["active"][0]["value"], 31.0);
    let post = next_alert(&mut got).await;
    assert_eq!((post["alert"].as_str(), post["state"].as_str()), (Some("sync_gate_waiting"), Some("raised")));
    assert_eq!(post["message"], "a sync gate has waited 31 minutes (alert over 30)");

    let e = engine.clone();
    blocking(move || e.resolve_gate(&gate.id, gatehouse_engine::DecisionInput::respond("yes"), "alice").unwrap()).await;
    sweep_once(&server.state).await.unwrap();
    let e = engine.clone();
    assert_eq!(blocking(move || alert_events(&e)).await.last().unwrap().0, "alert_cleared");
    assert_eq!(next_alert(&mut got).await["state"], "cleared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_high_auto_pass_rate_over_the_window_raises_an_alert() {
    let (url, mut got) = receiver().await;
    let alerts = AlertConfig { auto_pass_rate_percent: Some(50.0), ..AlertConfig::default() };
    let s = TestServer::start_with(ServerConfig { webhook_url: Some(url), alerts, ..ServerConfig::default() }).await;
    let e = engine_of(&s);
    blocking(move || {
        let auto = HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() };
        let run =
            e.create_run(NewRun { agent: "robot".into(), hitl_config: auto, ..NewRun::default() }, "robot").unwrap();
        for i in 0..3 {
            e.open_gate(&run.id, NewGate::approval("ship", format!("Ship {i}?"), json!({})), "robot").unwrap();
        }
    })
    .await;
    sweep(&s).await;
    sweep(&s).await;
    let e = engine_of(&s);
    assert_eq!(blocking(move || alert_events(&e)).await, [("alert_raised".into(), "auto_pass_rate".into())]);
    let post = next_alert(&mut got).await;
    assert_eq!((post["alert"].as_str(), post["value"].as_f64()), (Some("auto_pass_rate"), Some(100.0)));

    // Four gates that wait for a person bring the rate to 3 of 7, under half: cleared once.
    let run = s.run().await;
    for i in 0..4 {
        s.gate(&run, json!({"kind": "question", "text": format!("Ask {i}?"), "mode": "async"})).await;
    }
    sweep(&s).await;
    sweep(&s).await;
    let e = engine_of(&s);
    let kinds: Vec<String> = blocking(move || alert_events(&e)).await.into_iter().map(|(t, _)| t).collect();
    assert_eq!(kinds, ["alert_raised", "alert_cleared"]);
    assert_eq!(next_alert(&mut got).await["state"], "cleared");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_webhook_deliveries_raise_an_alert_without_counting_the_alerts_own_post() {
    // A port nothing listens on: every delivery is refused.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let alerts = AlertConfig { webhook_failures: Some(1), ..AlertConfig::default() };
    let config = ServerConfig { webhook_url: Some(format!("http://{dead}/hook")), alerts, ..ServerConfig::default() };
    let s = TestServer::start_with(config).await;
    let run = s.run().await;
    for text in ["One?", "Two?"] {
        s.gate(&run, json!({"kind": "question", "text": text, "mode": "sync"})).await;
    }
    let webhooks = Arc::clone(&s.server.state.webhooks);
    tokio::time::timeout(Duration::from_secs(20), async {
        while webhooks.stats().failed < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("both deliveries fail");
    sweep(&s).await;
    sweep(&s).await;
    let e = engine_of(&s);
    assert_eq!(blocking(move || alert_events(&e)).await, [("alert_raised".into(), "webhook_failures".into())]);
    tokio::time::timeout(Duration::from_secs(20), async {
        while webhooks.stats().alerts_failed < 1 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the alert's post fails too");
    assert_eq!(webhooks.stats().failed, 2, "the alert's own failed post is not a gate delivery");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_metrics_show_sla_compliance_per_priority_with_the_configured_targets() {
    let alerts = AlertConfig {
        sla: gatehouse_engine::SlaTargets { urgent_ms: 3_600_000, ..Default::default() },
        ..AlertConfig::default()
    };
    let s = TestServer::start_with(ServerConfig { alerts, ..ServerConfig::default() }).await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Now?", "priority": "urgent"})).await;
    let (status, _) =
        s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "respond", "response": "ok"})).await;
    assert_eq!(status, 200);
    let (status, body) = s.get("/metrics", &s.reviewer).await;
    assert_eq!(status, 200, "{body}");
    let urgent = body["sla"].as_array().unwrap().iter().find(|r| r["priority"] == "urgent").unwrap().clone();
    assert_eq!((urgent["target_ms"].as_u64(), urgent["gates"].as_u64()), (Some(3_600_000), Some(1)));
    assert_eq!(urgent["compliance"], 1.0);
    assert_eq!(s.get("/alerts", &s.agent).await.0, 403, "agents do not read the alerts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_takes_up_the_alerts_the_log_says_are_up() {
    // What a previous server left: a pending gate and the alert it raised.
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("g.db"), EngineConfig::default()).unwrap();
    let run = engine.create_run(NewRun { agent: "ops".into(), ..NewRun::default() }, "ops").unwrap();
    let mut question = NewGate::question("One?");
    question.mode = gatehouse_engine::BlockingMode::Async;
    let gate = engine.open_gate(&run.id, question, "ops").unwrap();
    let message = "1 gate pending (alert over 0)".to_owned();
    let alert = gatehouse_engine::Alert { kind: AlertKind::PendingQueue, value: 1.0, threshold: 0.0, message };
    engine.record_alert(alert, true).unwrap();

    // The next server neither raises it again nor forgets to clear it.
    let alerts = AlertConfig { pending_queue: Some(0), ..AlertConfig::default() };
    let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), alerts, ..ServerConfig::default() };
    let server = gatehouse_server::start(engine.clone(), config).await.unwrap();
    assert_eq!(server.state.alerts.lock().await.active().len(), 1);
    sweep_once(&server.state).await.unwrap();
    let e = engine.clone();
    assert_eq!(blocking(move || alert_events(&e)).await.len(), 1, "not raised twice");
    let e = engine.clone();
    blocking(move || e.resolve_gate(&gate.id, gatehouse_engine::DecisionInput::respond("ok"), "alice").unwrap()).await;
    sweep_once(&server.state).await.unwrap();
    let e = engine.clone();
    let kinds: Vec<String> = blocking(move || alert_events(&e)).await.into_iter().map(|(t, _)| t).collect();
    assert_eq!(kinds, ["alert_raised", "alert_cleared"], "the new server clears what the old one raised");
}
