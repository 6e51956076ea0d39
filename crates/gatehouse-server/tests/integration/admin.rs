//! Administration over real HTTP: recordings exported from one server and
//! imported into another, tokens (create, list, revoke), retention, audit
//! verification and the review metrics on a known workload with a manual
//! clock, plus who may call each.

use crate::common;

use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use common::TestServer;
use gatehouse_engine::{Engine, EngineConfig, ManualClock, NewTurn, Role, RunId, TokenRole};
use gatehouse_server::{RunningServer, ServerConfig};
use reqwest::Method;
use serde_json::{json, Value};

fn message(body: &Value) -> &str {
    body["message"].as_str().unwrap_or_default()
}

async fn start_run(s: &TestServer, token: &str, body: Value) -> String {
    let (status, started) = s.post("/run", token, body).await;
    assert_eq!(status, 201, "{started}");
    started["run_id"].as_str().expect("run_id").to_owned()
}

/// A run with a turn, context, an edited payload review and a pending question.
async fn eventful_run(s: &TestServer) -> String {
    let run =
        start_run(s, &s.agent, json!({"run_input": {"prompt": "a cat"}, "session_id": "s1", "user_id": "u1"})).await;
    let gate = s.gate(&run, json!({"kind": "payload_review", "text": "Send?", "payload": {"prompt": "a cat"}})).await;
    let edit = json!({"approval_id": gate, "action": "edit", "edits": {"prompt": "a dog"}});
    let (status, _) = s.post(&format!("/run/{run}/approve"), &s.reviewer, edit).await;
    assert_eq!(status, 200);
    s.gate(&run, json!({"kind": "question", "text": "Colour?"})).await;
    let (engine, id) = (s.server.state.engine_handle().clone(), RunId::from_string(run.clone()));
    tokio::task::spawn_blocking(move || {
        engine.add_turn(&id, NewTurn::new(Role::Agent, "Rendering"), "deployer").unwrap();
        engine.context_set(&id, "model", json!("sdxl"), "deployer").unwrap();
    })
    .await
    .unwrap();
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_exported_from_one_server_and_imported_into_another_gives_the_same_runs() {
    let (a, b) = (TestServer::start().await, TestServer::start().await);
    let run = eventful_run(&a).await;
    let (status, recording) = a.get(&format!("/runs/{run}/recording"), &a.reviewer).await;
    assert_eq!(status, 200, "{recording}");
    assert_eq!(
        (recording["format"].as_str(), recording["scope"]["run_id"].as_str()),
        (Some("gatehouse-recording"), Some(run.as_str()))
    );

    let (status, summary) = b.post("/recordings", &b.admin, recording.clone()).await;
    assert_eq!(status, 201, "{summary}");
    assert_eq!((summary["runs"].clone(), summary["gates"].as_u64()), (json!([run]), Some(2)));
    assert_eq!(summary["events"].as_u64(), recording["events"].as_array().map(|e| e.len() as u64));
    let (_, there) = a.get(&format!("/run/{run}/state"), &a.reviewer).await;
    let (status, here) = b.get(&format!("/run/{run}/state"), &b.reviewer).await;
    assert_eq!(status, 200, "{here}");
    assert_eq!(here["turns"], there["turns"], "the same turns");
    assert_eq!(here["context"], there["context"], "the same context");
    assert_eq!(here["run"]["imported"]["by"], "root", "the run is marked imported: {here}");
    assert_eq!(here["run"]["status"], there["run"]["status"], "the recorded status is kept: {here}");
    let (_, listed) = b.get("/runs/active?session_id=s1", &b.reviewer).await;
    assert_eq!(listed["runs"], json!([]), "an imported run is history, never among the live ones: {listed}");
    let (_, waiting) = b.get("/runs?status=awaiting_human,active", &b.reviewer).await;
    assert_eq!(waiting["runs"], json!([]), "nor under a live status: {waiting}");
    let (_, all) = b.get("/runs", &b.reviewer).await;
    assert_eq!(all["runs"][0]["imported"]["by"], "root", "it is listed as history: {all}");
    assert_eq!(all["runs"][0]["pending_gates"], 0, "an imported gate is history, not a blocker");
    for verb in ["pause", "retry"] {
        let (status, body) = b.post(&format!("/run/{run}/{verb}"), &b.reviewer, json!({})).await;
        assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "{verb}: {body}");
        assert!(message(&body).contains("imported from a recording"), "{verb}: {body}");
    }
    let (_, pending) = b.get("/gates", &b.reviewer).await;
    assert_eq!(pending["total"], 0, "{pending}");

    let (status, body) = b.post("/recordings", &b.reviewer, recording).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "importing twice: {body}");
    assert!(message(&body).contains(&run), "{body}");
    assert_eq!(body["field"], "runs[0].run.id", "the clash points at the run it already has: {body}");
    let (_, audit) = b.get("/audit/verify", &b.admin).await;
    assert_eq!(audit["problems"], json!([]), "the import keeps the log intact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_recording_is_422_naming_the_field_and_nothing_is_imported() {
    let (a, b) = (TestServer::start().await, TestServer::start().await);
    let run = eventful_run(&a).await;
    let (_, recording) = a.get(&format!("/runs/{run}/recording"), &a.reviewer).await;
    let mut bad = recording.clone();
    bad["runs"][0]["run"]["status"] = json!("sleeping");
    let (status, body) = b.post("/recordings", &b.admin, bad).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("runs[0].run.status"), "{body}");
    let mut foreign = recording.clone();
    foreign["format"] = json!("something-else");
    let (status, body) = b.post("/recordings", &b.admin, foreign).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("format"), "{body}");
    let (status, body) = b.post("/recordings", &b.admin, json!({"format": "gatehouse-recording"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("version"), "{body}");
    let (status, _) = b.get(&format!("/run/{run}/status"), &b.reviewer).await;
    assert_eq!(status, 404, "nothing was imported");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_recordings_hold_every_run_and_agents_export_only_their_own() {
    let s = TestServer::start().await;
    let first = eventful_run(&s).await;
    let second = start_run(&s, &s.agent, json!({"run_input": {}, "session_id": "s1"})).await;
    let (status, recording) = s.get("/sessions/s1/recording", &s.reviewer).await;
    assert_eq!(status, 200, "{recording}");
    assert_eq!(recording["scope"], json!({"scope": "session", "session_id": "s1"}));
    let ids: Vec<_> = recording["runs"].as_array().unwrap().iter().map(|r| r["run"]["id"].clone()).collect();
    assert_eq!(ids, vec![json!(first), json!(second)], "oldest first");
    let (status, _) = s.get("/sessions/s1/recording", &s.agent).await;
    assert_eq!(status, 200, "the agent drives every run of s1");
    let (status, _) = s.get("/sessions/s1/recording", &s.other_agent).await;
    assert_eq!(status, 403);
    start_run(&s, &s.other_agent, json!({"run_input": {}, "session_id": "s1"})).await;
    let (status, _) = s.get("/sessions/s1/recording", &s.agent).await;
    assert_eq!(status, 403, "s1 now holds another agent's run");
    let (status, _) = s.get("/sessions/nope/recording", &s.reviewer).await;
    assert_eq!(status, 404);

    let (status, own) = s.get(&format!("/runs/{first}/recording"), &s.agent).await;
    assert_eq!(status, 200);
    let (status, _) = s.get(&format!("/runs/{first}/recording"), &s.other_agent).await;
    assert_eq!(status, 403);
    let (status, _) = s.get("/runs/run_nope/recording", &s.reviewer).await;
    assert_eq!(status, 404);
    let (status, body) = s.post("/recordings", &s.agent, own).await;
    assert_eq!(status, 403, "agents may not import: {body}");
    let resp = s.http.get(s.url(&format!("/runs/{first}/recording"))).send().await.unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admins_create_list_and_revoke_tokens_and_a_revoked_token_gets_401() {
    let s = TestServer::start().await;
    let (status, created) = s.post("/tokens", &s.admin, json!({"name": "carol", "role": "reviewer"})).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        (created["token"]["name"].as_str(), created["token"]["role"].as_str()),
        (Some("carol"), Some("reviewer"))
    );
    let secret = created["secret"].as_str().unwrap().to_owned();
    let (status, _) = s.get("/approvals/pending", &secret).await;
    assert_eq!(status, 200, "the new secret works at once");

    let (status, list) = s.get("/tokens", &s.admin).await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<_> = list["tokens"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["root", "alice", "bob", "deployer", "intruder", "carol"]);
    assert!(!list.to_string().contains(&secret), "secrets are never listed");

    let (status, revoked) = s.call(Method::DELETE, "/tokens/carol", &s.admin, None).await;
    assert_eq!(status, 200, "{revoked}");
    assert!(revoked["revoked_at"].is_string());
    let (status, body) = s.get("/approvals/pending", &secret).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")), "revoked, even though it was cached");
    let (status, _) = s.call(Method::DELETE, "/tokens/carol", &s.admin, None).await;
    assert_eq!(status, 404, "no live token is named carol any more");

    let (status, body) = s.post("/tokens", &s.admin, json!({"name": "dave", "role": "superuser"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("role"), "{body}");
    let (status, body) = s.post("/tokens", &s.admin, json!({"name": " ", "role": "agent"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).starts_with("name"), "{body}");
    for token in [&s.reviewer, &s.agent] {
        let (status, _) = s.post("/tokens", token, json!({"name": "eve", "role": "admin"})).await;
        assert_eq!(status, 403);
        let (status, _) = s.get("/tokens", token).await;
        assert_eq!(status, 403);
        let (status, _) = s.call(Method::DELETE, "/tokens/alice", token, None).await;
        assert_eq!(status, 403);
    }
    let resp = s.http.get(s.url("/tokens")).send().await.unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_purges_ended_runs_only_and_the_audit_log_still_verifies() {
    let s = TestServer::start().await;
    let ended = eventful_run(&s).await;
    let live = s.run().await;
    let (status, _) = s.call(Method::DELETE, &format!("/run/{ended}"), &s.reviewer, None).await;
    assert_eq!(status, 200);

    let (status, _) = s.post("/retention/purge", &s.reviewer, json!({"older_than_days": 0})).await;
    assert_eq!(status, 403, "retention is for admins");
    let (status, body) = s.post("/retention/purge", &s.admin, json!({})).await;
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("older_than_days"), "{body}");
    let (status, body) = s.post("/retention/purge", &s.admin, json!({"older_than_days": 30})).await;
    assert_eq!((status, body["runs"].clone()), (200, json!([])), "nothing is 30 days old: {body}");
    let (status, report) = s.post("/retention/purge", &s.admin, json!({"older_than_days": 0})).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["runs"], json!([ended]));
    let (status, _) = s.get(&format!("/run/{ended}/status"), &s.reviewer).await;
    assert_eq!(status, 404, "purged");
    let (status, _) = s.get(&format!("/run/{live}/status"), &s.reviewer).await;
    assert_eq!(status, 200, "a live run is never purged");

    let (status, audit) = s.get("/audit/verify", &s.admin).await;
    assert_eq!(status, 200, "{audit}");
    assert_eq!(audit["problems"], json!([]));
    assert!(audit["events"].as_u64().unwrap() > 5 && audit["purged_events"].as_u64().unwrap() > 0, "{audit}");
    assert_eq!(audit["head_hash"].as_str().map(str::len), Some(64));
    let (status, _) = s.get("/audit/verify", &s.reviewer).await;
    assert_eq!(status, 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_anchor_is_for_admins_and_verify_checks_the_log_against_it() {
    let s = TestServer::start().await;
    eventful_run(&s).await;
    let (status, anchor) = s.get("/audit/anchor", &s.admin).await;
    assert_eq!(status, 200, "{anchor}");
    assert!(anchor["seq"].as_u64().unwrap() > 1 && anchor["hash"].as_str().map(str::len) == Some(64), "{anchor}");
    let (status, _) = s.get("/audit/anchor", &s.reviewer).await;
    assert_eq!(status, 403, "the anchor is for admins");

    let kept = format!("{}:{}", anchor["seq"], anchor["hash"].as_str().unwrap());
    let (status, audit) = s.get(&format!("/audit/verify?anchor={kept}"), &s.admin).await;
    assert_eq!((status, audit["problems"].clone()), (200, json!([])), "{audit}");
    let ahead = format!("{}:{}", anchor["seq"].as_u64().unwrap() + 1000, "0".repeat(64));
    let (status, audit) = s.get(&format!("/audit/verify?anchor={ahead}"), &s.admin).await;
    assert_eq!(status, 200, "{audit}");
    assert!(audit["problems"].to_string().contains("truncated"), "{audit}");
    let (status, body) = s.get("/audit/verify?anchor=nonsense", &s.admin).await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("anchor"), "{body}");
}

/// A server over an engine with a manual clock, so latencies are exact.
struct Clocked {
    server: RunningServer,
    clock: ManualClock,
    http: reqwest::Client,
    reviewer: String,
    agent: String,
    _dir: tempfile::TempDir,
}

impl Clocked {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 11, 1, 9, 0, 0).unwrap());
        let engine =
            Engine::open_with_clock(dir.path().join("g.db"), EngineConfig::default(), Arc::new(clock.clone())).unwrap();
        let reviewer = engine.create_token("alice", TokenRole::Reviewer, "test").unwrap().1;
        let agent = engine.create_token("deployer", TokenRole::Agent, "test").unwrap().1;
        let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ..ServerConfig::default() };
        let server = gatehouse_server::start(engine, config).await.expect("server starts");
        Self { server, clock, http: reqwest::Client::new(), reviewer, agent, _dir: dir }
    }

    async fn call(&self, method: Method, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
        let mut req =
            self.http.request(method, format!("http://{}/api/hitl{path}", self.server.addr)).bearer_auth(token);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap_or(Value::Null))
    }

    async fn gate(&self, run: &str, body: Value) -> String {
        let (status, opened) = self.call(Method::POST, &format!("/runs/{run}/gates"), &self.agent, Some(body)).await;
        assert_eq!(status, 201, "{opened}");
        opened["gate_id"].as_str().unwrap().to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_report_rates_latencies_expiry_corrections_ratings_and_webhooks_for_a_known_workload() {
    let c = Clocked::start().await;
    let run = |body: Value| c.call(Method::POST, "/run", &c.agent, Some(body));
    // A person sets the auto policy for the agent's run; the agent may not.
    let (_, auto) = c
        .call(
            Method::POST,
            "/run",
            &c.reviewer,
            Some(json!({"run_input": {}, "agent": "deployer",
            "hitl_config": {"run_policy": "auto"}})),
        )
        .await;
    let (_, strict) = run(json!({"run_input": {}})).await;
    let (auto, strict) = (auto["run_id"].as_str().unwrap(), strict["run_id"].as_str().unwrap());
    c.gate(auto, json!({"kind": "approval", "action": "deploy", "text": "Deploy?"})).await;
    let payload = c
        .gate(strict, json!({"kind": "payload_review", "text": "Send?", "payload": {"prompt": "a cat", "steps": 20}}))
        .await;
    let question = c.gate(strict, json!({"kind": "question", "text": "Colour?"})).await;

    c.clock.advance(Duration::seconds(30));
    let edit = json!({"approval_id": payload, "action": "edit", "edits": {"prompt": "a dog"}});
    let (status, _) = c.call(Method::POST, &format!("/run/{strict}/approve"), &c.reviewer, Some(edit)).await;
    assert_eq!(status, 200);
    c.clock.advance(Duration::seconds(30));
    let answer = json!({"action": "respond", "text": "Blue"});
    let (status, _) = c.call(Method::POST, &format!("/gates/{question}/resolve"), &c.reviewer, Some(answer)).await;
    assert_eq!(status, 200);

    let (status, body) = c.call(Method::GET, "/metrics", &c.agent, None).await;
    assert_eq!(status, 403, "agents may not read metrics: {body}");
    let (status, m) = c.call(Method::GET, "/metrics", &c.reviewer, None).await;
    assert_eq!(status, 200, "{m}");
    let o = &m["overall"];
    assert_eq!(
        (o["gates"].as_u64(), o["auto_passed"].as_u64(), o["waited_for_human"].as_u64(), o["human_decided"].as_u64()),
        (Some(3), Some(1), Some(2), Some(2))
    );
    assert_eq!((o["hitl_rate"].as_f64(), o["auto_pass_rate"].as_f64()), (Some(2.0 / 3.0), Some(1.0 / 3.0)));
    assert_eq!(m["avg_human_latency_ms"].as_f64(), Some(45_000.0));
    let kinds: Vec<_> = m["by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kind"].as_str().unwrap(),
                k["gates"].as_u64().unwrap(),
                k["auto_pass_rate"].as_f64(),
                k["avg_human_latency_ms"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("approval", 1, Some(1.0), None),
            ("payload_review", 1, Some(0.0), Some(30_000.0)),
            ("question", 1, Some(0.0), Some(60_000.0))
        ]
    );
    assert_eq!(m["by_agent"][0]["agent"], "deployer");
    assert_eq!(m["by_agent"][0]["hitl_rate"].as_f64(), Some(2.0 / 3.0));
    assert_eq!(m["expiry"], json!({"expired": 0, "closed": 3, "expiry_rate": 0.0}));
    assert_eq!(m["common_corrections"], json!([{"path": "/prompt", "count": 1}]));
    // The edited payload judged the agent (an approval); the answered question did not.
    let rating = &m["capability_ratings"][0];
    assert_eq!(
        (rating["agent"].as_str(), rating["decisions"].as_u64(), rating["approvals"].as_u64()),
        (Some("deployer"), Some(1), Some(1))
    );
    assert_eq!(m["webhooks"], json!({"delivered": 0, "failed": 0, "alerts_failed": 0}));
    let resp = c.http.get(format!("http://{}/api/hitl/metrics", c.server.addr)).send().await.unwrap();
    assert_eq!(resp.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_describes_every_admin_path() {
    let s = TestServer::start().await;
    let doc: Value = s
        .http
        .get(format!("http://{}/api/hitl/openapi.json", s.server.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let paths = doc["paths"].as_object().unwrap();
    for (path, method) in [
        ("/api/hitl/runs/{run_id}/recording", "get"),
        ("/api/hitl/sessions/{session_id}/recording", "get"),
        ("/api/hitl/recordings", "post"),
        ("/api/hitl/tokens", "post"),
        ("/api/hitl/tokens", "get"),
        ("/api/hitl/tokens/{id_or_name}", "delete"),
        ("/api/hitl/retention/purge", "post"),
        ("/api/hitl/audit/verify", "get"),
        ("/api/hitl/audit/anchor", "get"),
        ("/api/hitl/metrics", "get"),
    ] {
        assert!(paths.get(path).and_then(|p| p.get(method)).is_some(), "{method} {path} missing");
    }
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for schema in [
        "Recording",
        "ImportSummary",
        "CreatedToken",
        "PurgeReport",
        "AuditReport",
        "AuditAnchor",
        "MetricsResponse",
        "Metrics",
    ] {
        assert!(schemas.contains_key(schema), "{schema} missing from {:?}", schemas.keys().collect::<Vec<_>>());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_retention_purges_ended_runs_when_the_server_starts() {
    let s = TestServer::start().await;
    let ended = eventful_run(&s).await;
    let live = s.run().await;
    let (status, _) = s.call(Method::DELETE, &format!("/run/{ended}"), &s.reviewer, None).await;
    assert_eq!(status, 200);

    // A server started with retention (0 days: every ended run) purges at once, as its day begins.
    let config =
        ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), retention_days: Some(0), ..ServerConfig::default() };
    let _kept = gatehouse_server::start(common::open_engine(&s.database, &s.schema), config).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.get(&format!("/run/{ended}/status"), &s.reviewer).await.0 != 404 {
        assert!(std::time::Instant::now() < deadline, "the ended run was not purged");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, _) = s.get(&format!("/run/{live}/status"), &s.reviewer).await;
    assert_eq!(status, 200, "a live run is never purged");
    let (_, audit) = s.get("/audit/verify", &s.admin).await;
    assert_eq!(audit["problems"], json!([]), "{audit}");
    assert!(audit["purged_events"].as_u64().unwrap() > 0, "{audit}");
    let log = common::open_engine(&s.database, &s.schema);
    let events = log.events_after(0, &gatehouse_engine::store::EventFilter::default(), 10_000).unwrap();
    let purge = events.iter().find(|e| matches!(e.body.kind, gatehouse_engine::EventKind::RetentionPurged { .. }));
    assert_eq!(purge.map(|e| e.body.actor.as_str()), Some("retention"), "the purge is in the log, by retention");
}
