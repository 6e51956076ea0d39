//! The guards in front of every handler: bearer tokens, the `Host` check
//! against DNS rebinding, same-origin only, the body limit and field-naming
//! JSON errors, and that a refused request changes nothing. Also that the
//! OpenAPI document is served and describes the gate API.

use crate::common;

use common::TestServer;
use gatehouse_engine::{GateFilter, NewRun};
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};

async fn new_run(s: &TestServer) -> String {
    let engine = s.server.state.engine_handle().clone();
    let new = NewRun { agent: "deployer".into(), ..NewRun::default() };
    let run = tokio::task::spawn_blocking(move || engine.create_run(new, "deployer")).await.unwrap().unwrap();
    run.id.to_string()
}

/// (gates of any status, head of the event log): what a refused request must not move.
async fn stored(s: &TestServer) -> (u64, u64) {
    let engine = s.server.state.engine_handle().clone();
    tokio::task::spawn_blocking(move || {
        let all = GateFilter { status: None, ..GateFilter::default() };
        (engine.count_gates(&all).unwrap(), engine.head_seq().unwrap())
    })
    .await
    .unwrap()
}

async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn approval() -> Value {
    json!({"kind": "approval", "action": "deploy", "text": "Deploy?", "payload": {"env": "prod"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_required_and_must_be_known() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let before = stored(&s).await;
    let url = s.url(&format!("/runs/{run}/gates"));

    let (status, body) = send(s.http.post(&url).json(&approval())).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "unauthorized");
    assert!(body["message"].as_str().unwrap().contains("Authorization: Bearer"), "{body}");

    let (status, body) = send(s.http.post(&url).bearer_auth("ghs_not_a_real_token").json(&approval())).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "unauthorized");

    let (status, _) = send(s.http.get(s.url("/gates")).header("Authorization", "Basic YWxpY2U6c2VjcmV0")).await;
    assert_eq!(status, 401, "only bearer tokens are accepted");

    let (status, _) = send(s.http.get(s.url("/gates?access_token=nope"))).await;
    assert_eq!(status, 401);
    assert_eq!(stored(&s).await, before, "refused requests changed nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_url_is_refused_with_a_json_error_naming_the_header() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval()).await;
    let before = stored(&s).await;

    let resolve = s.url(&format!("/gates/{gate}/resolve?access_token={}", s.reviewer));
    let (status, body) = send(s.http.post(resolve).json(&json!({"action": "approve"}))).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], "unauthorized");
    assert!(body["message"].as_str().unwrap().contains("Authorization: Bearer"), "{body}");
    for path in ["/gates", "/events", "/events?after=0"] {
        let sep = if path.contains('?') { '&' } else { '?' };
        let (status, body) = send(s.http.get(s.url(&format!("{path}{sep}access_token={}", s.reviewer)))).await;
        assert_eq!(status, 401, "{path}: {body}");
        assert!(body["message"].as_str().unwrap().contains("token in the URL is refused"), "{path}: {body}");
    }
    assert_eq!(stored(&s).await, before, "the gate is still pending: nothing was decided");
    let (status, body) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!((status, body["gate"]["status"].as_str()), (200, Some("pending")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_allowing_query_tokens_takes_them_on_the_event_stream_only() {
    let s = TestServer::start_with(ServerConfig { allow_query_token: true, ..ServerConfig::default() }).await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval()).await;

    let events = s.http.get(s.url(&format!("/events?after=0&access_token={}", s.reviewer))).send().await.unwrap();
    assert_eq!(events.status(), 200);
    let (status, _) = send(s.http.get(s.url("/events?access_token=nope"))).await;
    assert_eq!(status, 401, "checked like a header's");
    let (status, body) = send(s.http.get(s.url(&format!("/gates?access_token={}", s.reviewer)))).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["message"].as_str().unwrap().contains("only GET /events"), "{body}");
    let resolve = s.url(&format!("/gates/{gate}/resolve?access_token={}", s.reviewer));
    let (status, body) = send(s.http.post(resolve).json(&json!({"action": "approve"}))).await;
    assert_eq!(status, 401, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_cross_origin_requests_are_refused() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let before = stored(&s).await;
    let url = s.url(&format!("/runs/{run}/gates"));

    // DNS rebinding: a page on evil.example resolving to 127.0.0.1.
    let (status, body) =
        send(s.http.post(&url).bearer_auth(&s.agent).header("Host", "evil.example").json(&approval())).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "forbidden");
    assert!(body["message"].as_str().unwrap().contains("evil.example"), "{body}");
    let (status, _) =
        send(s.http.get(s.url("/gates")).bearer_auth(&s.reviewer).header("Host", "evil.example:80")).await;
    assert_eq!(status, 403);

    let (status, body) =
        send(s.http.post(&url).bearer_auth(&s.agent).header("Origin", "http://evil.example").json(&approval())).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().unwrap().contains("cross-origin"), "{body}");
    assert_eq!(stored(&s).await, before, "refused requests changed nothing");

    // The server's own origin (the reviewer UI) and `localhost` are fine.
    let own = format!("http://{}", s.server.addr);
    let (status, body) = send(s.http.post(&url).bearer_auth(&s.agent).header("Origin", own).json(&approval())).await;
    assert_eq!(status, 201, "{body}");
    let localhost = format!("localhost:{}", s.server.addr.port());
    let (status, _) = send(s.http.get(s.url("/gates")).bearer_auth(&s.reviewer).header("Host", localhost)).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_servers_public_name_and_allowed_origins_are_accepted_and_nothing_else() {
    let config = ServerConfig {
        public_url: Some("https://gatehouse.example.com/".into()),
        allowed_origins: vec!["https://ui.example.com".into()],
        ..ServerConfig::default()
    };
    let s = TestServer::start_with(config).await;
    let run = new_run(&s).await;
    let url = s.url(&format!("/runs/{run}/gates"));

    // A proxy passing the public name on as `Host`, with or without a port.
    for host in ["gatehouse.example.com", "GateHouse.Example.com:443"] {
        let (status, body) = send(s.http.get(s.url("/gates")).bearer_auth(&s.reviewer).header("Host", host)).await;
        assert_eq!(status, 200, "{host}: {body}");
    }
    // Browsers on the public origin (behind a proxy that sets `Host` to the bound address) and an allowed one.
    for origin in ["https://gatehouse.example.com", "https://ui.example.com"] {
        let (status, body) =
            send(s.http.post(&url).bearer_auth(&s.agent).header("Origin", origin).json(&approval())).await;
        assert_eq!(status, 201, "{origin}: {body}");
    }
    // The public origin from a page on the public host, as a browser sends it.
    let req = s.http.get(s.url("/gates")).bearer_auth(&s.reviewer);
    let req = req.header("Host", "gatehouse.example.com").header("Origin", "https://gatehouse.example.com");
    assert_eq!(send(req).await.0, 200);

    let before = stored(&s).await;
    // Another scheme or port is another origin; so is every other site.
    for origin in ["http://gatehouse.example.com", "https://gatehouse.example.com:8443", "https://evil.example", "null"]
    {
        let (status, body) =
            send(s.http.post(&url).bearer_auth(&s.agent).header("Origin", origin).json(&approval())).await;
        assert_eq!(status, 403, "{origin}: {body}");
        let message = body["message"].as_str().unwrap();
        assert!(message.contains(origin) && message.contains("--allowed-origin"), "{body}");
    }
    let (status, body) =
        send(s.http.get(s.url("/gates")).bearer_auth(&s.reviewer).header("Host", "gatehouse.example.org")).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().unwrap().contains("gatehouse.example.org"), "{body}");
    assert_eq!(stored(&s).await, before, "refused requests changed nothing");

    // Links point at the public URL.
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": {}})).await;
    assert_eq!(status, 201, "{body}");
    assert!(body["events_url"].as_str().unwrap().starts_with("https://gatehouse.example.com/api/hitl/"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_413_and_stores_nothing() {
    let s = TestServer::start_with(ServerConfig { body_limit: 1024, ..ServerConfig::default() }).await;
    let run = new_run(&s).await;
    let before = stored(&s).await;
    let mut big = approval();
    big["payload"] = json!({"blob": "x".repeat(4096)});
    let (status, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, big).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["code"], "payload_too_large");
    assert_eq!(stored(&s).await, before);
    // Under the limit is accepted.
    let (status, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, approval()).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_422_naming_the_field() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval()).await;
    let before = stored(&s).await;
    let open = format!("/runs/{run}/gates");

    let mut wrong_mode = approval();
    wrong_mode["mode"] = json!(42);
    let (status, body) = s.post(&open, &s.agent, wrong_mode).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], "invalid");
    assert!(body["message"].as_str().unwrap().starts_with("mode"), "the message names the field: {body}");

    let mut wrong_priority = approval();
    wrong_priority["priority"] = json!("whenever");
    let (status, body) = s.post(&open, &s.agent, wrong_priority).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("priority"), "{body}");

    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": 5})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("action"), "{body}");

    let (status, body) = s
        .post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "edit", "text": ["not", "text"]}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("text"), "{body}");

    let (status, body) = send(
        s.http
            .post(s.url(&open))
            .bearer_auth(&s.agent)
            .header("Content-Type", "application/json")
            .body(r#"{"kind": "approval", "text": "#),
    )
    .await;
    assert_eq!(status, 422, "truncated JSON: {body}");
    assert_eq!(body["code"], "invalid");

    let (status, body) = s.post(&open, &s.agent, json!({"kind": "approval", "text": "   "})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().contains("text"), "{body}");

    assert_eq!(stored(&s).await, before, "rejected bodies changed nothing");
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_describes_the_gate_api() {
    let s = TestServer::start().await;
    let resp = s.http.get(format!("http://{}/api/hitl/openapi.json", s.server.addr)).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    let doc: Value = serde_json::from_str(&resp.text().await.unwrap()).expect("valid JSON");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().unwrap();
    for path in [
        "/api/hitl/runs/{run_id}/gates",
        "/api/hitl/gates",
        "/api/hitl/gates/{gate_id}",
        "/api/hitl/gates/{gate_id}/wait",
        "/api/hitl/gates/{gate_id}/resolve",
        "/api/hitl/events",
    ] {
        assert!(paths.contains_key(path), "{path} missing from {:?}", paths.keys().collect::<Vec<_>>());
    }
    assert!(paths["/api/hitl/runs/{run_id}/gates"]["post"].is_object());
    assert!(paths["/api/hitl/gates/{gate_id}/resolve"]["post"].is_object());
    let sse = &paths["/api/hitl/events"]["get"]["responses"]["200"]["content"];
    assert!(sse.get("text/event-stream").is_some(), "{sse}");
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for schema in ["Gate", "NewGate", "DecisionInput", "Event", "ApiErrorBody"] {
        assert!(schemas.contains_key(schema), "{schema} missing from {:?}", schemas.keys().collect::<Vec<_>>());
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
}

#[tokio::test]
async fn the_same_server_serves_the_reviewer_ui_beside_the_api() {
    let dist = tempfile::tempdir().unwrap();
    std::fs::write(dist.path().join("index.html"), "<!doctype html><title>Gatehouse reviewer</title>").unwrap();
    let s = TestServer::start_with(ServerConfig { ui_dir: Some(dist.path().to_path_buf()), ..ServerConfig::default() })
        .await;
    let client = reqwest::Client::new();
    let root = format!("http://{}", s.server.addr);
    for page in ["/", "/runs/run_1"] {
        let resp = client.get(format!("{root}{page}")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{page}");
        assert!(resp.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));
        assert!(resp.text().await.unwrap().contains("Gatehouse reviewer"), "{page}");
    }
    // The API still wants its token, and unknown API paths stay JSON errors.
    let (status, body) = send(client.get(s.url("/gates"))).await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = send(client.get(s.url("/no-such-thing")).bearer_auth(&s.admin)).await;
    assert_eq!(status, 404, "{body}");
    assert!(body["message"].is_string(), "{body}");
}
