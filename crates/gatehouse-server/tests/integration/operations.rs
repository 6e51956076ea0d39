//! The operations endpoints at the root: `/healthz` answers without the
//! database, `/readyz` says 503 with `Retry-After` and what is not ready
//! while the database cannot serve, and `/metrics` is the Prometheus text
//! format, labelled by route template, behind a token unless made public.

use std::collections::{HashMap, HashSet};

use gatehouse_engine::Database;
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};

use crate::common::TestServer;

/// Runs `sql` on the server's database behind its back.
async fn behind_its_back(s: &TestServer, sqlite: &str, postgres: &str) {
    match &s.database {
        Database::Sqlite(path) => {
            let conn = rusqlite::Connection::open(path).expect("open");
            conn.execute_batch(sqlite).expect("sql");
        }
        Database::Postgres(url) => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(conn);
            let schema = s.schema.clone().expect("schema");
            let sql = postgres.replace("SCHEMA", &format!("\"{schema}\""));
            client.batch_execute(&sql).await.expect("sql");
        }
    }
}

/// Moves the event log away (or back), so every read of it fails.
async fn hide_the_event_log(s: &TestServer, hidden: bool) {
    let (from, to) = if hidden { ("events", "events_away") } else { ("events_away", "events") };
    let sql = format!("ALTER TABLE {from} RENAME TO {to}");
    behind_its_back(s, &sql, &format!("ALTER TABLE SCHEMA.{from} RENAME TO {to}")).await;
}

fn root(s: &TestServer, path: &str) -> String {
    format!("http://{}{path}", s.server.addr)
}

/// GETs `path` at the root, with `token` if given: status, headers, body.
async fn get(s: &TestServer, path: &str, token: Option<&str>) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = s.http.get(root(s, path));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.expect("request");
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    (status, headers, resp.text().await.expect("body"))
}

/// One sample of the text format.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: HashMap<String, String>,
    value: f64,
}

/// Parses the Prometheus text format strictly enough to catch a malformed
/// line: every sample has a `# TYPE` for its family, declared before it.
fn parse(text: &str) -> Vec<Sample> {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(["counter", "gauge", "histogram", "untyped"].contains(&kind), "{line}");
            types.insert(name.to_owned(), kind.to_owned());
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment: {line}");
        let (series, value) = line.rsplit_once(' ').expect("series and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, labels_of(rest.strip_suffix('}').expect("closing brace"))),
            None => (series, HashMap::new()),
        };
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix).filter(|f| types.get(*f).is_some_and(|k| k == "histogram")))
            .unwrap_or(name);
        assert!(types.contains_key(family), "no # TYPE before {line}");
        samples.push(Sample { name: name.to_owned(), labels, value });
    }
    samples
}

fn labels_of(text: &str) -> HashMap<String, String> {
    let mut labels = HashMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"").expect("label=\"value\"");
        let end = after.find('"').expect("closing quote");
        labels.insert(key.trim_start_matches(',').to_owned(), after[..end].to_owned());
        rest = &after[end + 1..];
    }
    labels
}

/// The value of the sample `name` whose labels include `want`.
fn value(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|s| s.name == name && want.iter().all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v)))
        .map(|s| s.value)
}

async fn scrape(s: &TestServer) -> Vec<Sample> {
    let (status, headers, text) = get(s, "/metrics", Some(&s.reviewer)).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    parse(&text)
}

#[tokio::test]
async fn healthz_answers_without_a_token_even_when_the_database_cannot() {
    let s = TestServer::start().await;
    hide_the_event_log(&s, true).await;
    let (status, _, body) = get(&s, "/healthz", None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).expect("json"), json!({"status": "ok"}));
}

#[tokio::test]
async fn readyz_is_503_with_retry_after_while_the_database_cannot_serve_and_200_again_after() {
    let s = TestServer::start().await;
    let (status, _, body) = get(&s, "/readyz", None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).expect("json")["status"], "ready");

    hide_the_event_log(&s, true).await;
    let (status, headers, body) = get(&s, "/readyz", None).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(headers["retry-after"], "5");
    let json: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(json["not_ready"], json!(["database"]), "{json}");
    let lower = body.to_lowercase();
    for leak in ["events", "table", "sql", "gatehouse.db", "/tmp", "test_", "postgres://", "relation"] {
        assert!(!lower.contains(leak), "the body says `{leak}`: {body}");
    }

    hide_the_event_log(&s, false).await;
    let (status, _, body) = get(&s, "/readyz", None).await;
    assert_eq!(status, 200, "ready again once the database serves: {body}");
}

#[tokio::test]
async fn readyz_is_503_naming_the_migrations_when_the_schema_is_not_this_binarys() {
    let s = TestServer::start().await;
    behind_its_back(&s, "PRAGMA user_version = 9999", "UPDATE SCHEMA.gatehouse_schema SET version = 9999").await;
    let (status, headers, body) = get(&s, "/readyz", None).await;
    assert_eq!(status, 503, "{body}");
    assert!(headers.contains_key("retry-after"));
    let json: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(json["not_ready"], json!(["migrations"]), "{json}");
    assert!(json["message"].as_str().expect("message").contains("9999"), "{json}");
}

#[tokio::test]
async fn metrics_need_a_token_unless_the_server_makes_them_public() {
    let s = TestServer::start().await;
    let (status, _, body) = get(&s, "/metrics", None).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).expect("json")["code"], "unauthorized");
    let (status, _, _) = get(&s, "/metrics", Some("not-a-token")).await;
    assert_eq!(status, 401);
    for token in [&s.agent, &s.reviewer, &s.admin] {
        let (status, _, body) = get(&s, "/metrics", Some(token)).await;
        assert_eq!(status, 200, "any valid token reads them: {body}");
    }

    let public = TestServer::start_with(ServerConfig { metrics_public: true, ..ServerConfig::default() }).await;
    let (status, _, body) = get(&public, "/metrics", None).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("# TYPE gatehouse_gates_pending gauge"), "{body}");
}

#[tokio::test]
async fn operations_paths_are_outside_the_openapi_document_and_the_ui() {
    let s = TestServer::start().await;
    let (_, doc) = s.get("/openapi.json", &s.reviewer).await;
    let paths: HashSet<&String> = doc["paths"].as_object().expect("paths").keys().collect();
    assert!(!paths.is_empty());
    for path in ["/healthz", "/readyz", "/metrics"] {
        assert!(!paths.contains(&path.to_owned()), "{path} is in the OpenAPI document");
        let (_, headers, _) = get(&s, path, Some(&s.reviewer)).await;
        assert!(!headers["content-type"].to_str().expect("ascii").starts_with("text/html"), "{path} is the UI");
    }
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_gauge_the_pending_gates() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let mut gates = Vec::new();
    for n in 0..3 {
        gates.push(
            s.gate(&run, json!({"kind": "question", "text": format!("Which region {n}?"), "mode": "sync"})).await,
        );
    }
    s.gate(&run, json!({"kind": "question", "text": "Later?", "mode": "async"})).await;
    let (status, _) = s.get(&format!("/gates/{}", gates[0]), &s.reviewer).await;
    assert_eq!(status, 200);
    let (status, _) = s.get("/gates/gate_that_does_not_exist", &s.reviewer).await;
    assert_eq!(status, 404);

    let before = scrape(&s).await;
    assert_eq!(value(&before, "gatehouse_gates_pending", &[("mode", "sync")]), Some(3.0));
    assert_eq!(value(&before, "gatehouse_gates_pending", &[("mode", "async")]), Some(1.0));
    let opened = [("method", "POST"), ("route", "/api/hitl/runs/{run_id}/gates"), ("status", "2xx")];
    assert_eq!(value(&before, "gatehouse_http_requests_total", &opened), Some(4.0));
    let read = [("method", "GET"), ("route", "/api/hitl/gates/{gate_id}")];
    assert_eq!(value(&before, "gatehouse_http_requests_total", &[read[0], read[1], ("status", "2xx")]), Some(1.0));
    assert_eq!(value(&before, "gatehouse_http_requests_total", &[read[0], read[1], ("status", "4xx")]), Some(1.0));
    let latency = [read[0], read[1], ("le", "+Inf")];
    assert_eq!(value(&before, "gatehouse_http_request_duration_seconds_bucket", &latency), Some(2.0));
    for sample in &before {
        for label in sample.labels.values() {
            assert!(!gates.iter().any(|g| label.contains(g.as_str())), "an id in a label: {sample:?}");
            assert!(!label.contains("gate_that_does_not_exist"), "a raw path in a label: {sample:?}");
        }
    }
    let writes = value(&before, "gatehouse_store_writes_total", &[]).expect("store writes");
    assert!(writes >= 5.0, "a run and four gates at least: {writes}");
    assert!(value(&before, "gatehouse_store_write_transactions_total", &[]).expect("groups") >= 1.0);
    assert_eq!(value(&before, "gatehouse_store_writes_in_flight", &[]), Some(0.0));

    let respond = json!({"action": "respond", "text": "eu-west-1"});
    let (status, _) = s.post(&format!("/gates/{}/resolve", gates[0]), &s.reviewer, respond).await;
    assert_eq!(status, 200);
    let after = scrape(&s).await;
    assert_eq!(value(&after, "gatehouse_gates_pending", &[("mode", "sync")]), Some(2.0));
    let scraped = [("method", "GET"), ("route", "/metrics"), ("status", "2xx")];
    let scrapes = |samples: &[Sample]| value(samples, "gatehouse_http_requests_total", &scraped).unwrap_or(0.0);
    assert_eq!(scrapes(&after), scrapes(&before) + 1.0, "the first scrape is counted once it is answered");
    assert!(value(&after, "gatehouse_store_writes_total", &[]).expect("writes") > writes);
    // PostgreSQL's replies are waited for (the decision's among them); SQLite, in the process, has none.
    let trips = |samples: &[Sample]| value(samples, "gatehouse_store_round_trips_total", &[]).expect("round trips");
    match matches!(s.database, gatehouse_engine::Database::Postgres(_)) {
        true => assert!(trips(&after) > trips(&before), "{} then {}", trips(&before), trips(&after)),
        false => assert_eq!((trips(&before), trips(&after)), (0.0, 0.0)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_gauge_the_agents_in_a_long_poll() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Which region?", "mode": "sync"})).await;
    let waiting = |samples: &[Sample]| value(samples, "gatehouse_agents_waiting", &[("on", "gate")]);
    assert_eq!(waiting(&scrape(&s).await), Some(0.0));

    let url = s.url(&format!("/gates/{gate}/wait?timeout=30"));
    let poll = tokio::spawn(s.http.get(url).bearer_auth(s.agent.clone()).send());
    // The poll registers before it reads; wait for the gauge to show it (no sleep: each scrape is a request).
    let mut seen = None;
    for _ in 0..2_000 {
        seen = waiting(&scrape(&s).await);
        if seen == Some(1.0) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(seen, Some(1.0), "the long poll shows as one agent waiting");
    let (status, _) =
        s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "respond", "text": "eu"})).await;
    assert_eq!(status, 200);
    let resp = poll.await.expect("poll task").expect("poll");
    assert_eq!(resp.status(), 200);
    assert_eq!(waiting(&scrape(&s).await), Some(0.0));
}
