//! Every error a client gets is the JSON error body (`code`, `message`,
//! and `field` naming the offending parameter where there is one): bad
//! query and path values on every operation of the OpenAPI document, the
//! router's own 404 and 405, and rmcp's answers at `/mcp`.

use crate::common;

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

/// Sends `request` and returns its status and JSON error body, failing the
/// test if the body is not the JSON error body.
async fn json_error(request: reqwest::RequestBuilder, what: &str) -> (u16, Value) {
    let resp = request.send().await.expect("request");
    let status = resp.status().as_u16();
    let content_type = resp.headers().get("content-type").map(|v| v.to_str().unwrap_or_default().to_owned());
    let text = resp.text().await.unwrap_or_default();
    assert!(status >= 400, "{what}: {status} {text}");
    assert_eq!(content_type.as_deref(), Some("application/json"), "{what}: {status} {text}");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{what}: not JSON: {text}"));
    assert!(body["code"].is_string(), "{what}: no code: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: no message: {body}");
    (status, body)
}

/// Whether a parameter's schema is one that `abc` cannot be: a number, a
/// boolean or an enum (directly, in `oneOf`, or behind a `$ref`).
fn rejects_text(schema: &Value, doc: &Value) -> bool {
    if let Some(name) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
        return rejects_text(&doc["components"]["schemas"][name], doc);
    }
    if let Some(options) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        return options.iter().filter(|o| o["type"] != "null").all(|o| rejects_text(o, doc));
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect(),
        _ => Vec::new(),
    };
    schema["enum"].is_array()
        || (!types.is_empty() && types.iter().all(|t| ["integer", "number", "boolean"].contains(t)))
}

#[tokio::test]
async fn every_operations_bad_query_and_path_values_answer_json_naming_the_parameter() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Region?"})).await;
    let (_, doc) = s.get("/openapi.json", &s.admin).await;

    // The document's paths are absolute (`/api/hitl/...`).
    let url = |path: &str| format!("http://{}{path}", s.server.addr);
    let mut checked = 0;
    for (template, operations) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in operations.as_object().expect("operations") {
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method");
            let parameters = operation["parameters"].as_array().cloned().unwrap_or_default();
            let real_path = template.replace("{run_id}", &run).replace("{gate_id}", &gate);
            for parameter in &parameters {
                let name = parameter["name"].as_str().expect("a parameter name");
                let what = format!("{method} {template} with a bad {name}");
                let (url, documented) = match parameter["in"].as_str() {
                    // Not UTF-8 once decoded: no path parameter can be read from it.
                    Some("path") => (url(&template.replace(&format!("{{{name}}}"), "%FF")), true),
                    Some("query") if rejects_text(&parameter["schema"], &doc) => {
                        (url(&format!("{real_path}?{name}=abc")), true)
                    }
                    _ => continue,
                };
                assert!(documented && operation["responses"]["422"].is_object(), "{what}: 422 is not documented");
                let mut named = false;
                for token in [&s.admin, &s.agent] {
                    let (status, body) =
                        json_error(s.http.request(method.clone(), &url).bearer_auth(token), &what).await;
                    assert!(status < 500, "{what}: {status} {body}");
                    named |= status == 422 && body["field"] == name;
                }
                assert!(named, "{what}: no 422 naming `{name}` for the admin or the agent");
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "only {checked} parameters checked");
}

#[tokio::test]
async fn the_reported_plain_text_errors_are_json_naming_the_field() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Region?"})).await;
    for (path, field, value) in [
        ("/gates?limit=-1".to_owned(), "limit", "`-1`"),
        ("/gates?kind=".to_owned(), "kind", "``"),
        (format!("/gates/{gate}/wait?timeout=abc"), "timeout", "`abc`"),
    ] {
        let (status, body) = json_error(s.http.get(s.url(&path)).bearer_auth(&s.reviewer), &path).await;
        assert_eq!(
            (status, body["code"].as_str(), body["field"].as_str()),
            (422, Some("invalid"), Some(field)),
            "{path}: {body}"
        );
        let message = body["message"].as_str().unwrap();
        assert!(message.starts_with(field) && message.contains(value), "{path}: {body}");
    }
}

#[tokio::test]
async fn an_engine_refusal_names_its_field() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, json!({"kind": "question", "text": ""})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["field"], "text", "{body}");
}

#[tokio::test]
async fn the_routers_404_and_405_are_json() {
    let s = TestServer::start().await;
    let (status, body) = json_error(s.http.delete(s.url("/gates")).bearer_auth(&s.admin), "DELETE /gates").await;
    assert_eq!((status, body["code"].as_str()), (405, Some("method_not_allowed")), "{body}");
    let (status, body) = json_error(s.http.get(s.url("/no-such-route")).bearer_auth(&s.admin), "unknown path").await;
    assert_eq!((status, body["code"].as_str()), (404, Some("not_found")), "{body}");
}

#[tokio::test]
async fn mcp_answers_an_oversized_or_non_json_body_with_json() {
    let s = TestServer::start_with(gatehouse_server::ServerConfig { body_limit: 1024, ..Default::default() }).await;
    let mcp = format!("http://{}/mcp", s.server.addr);
    let post = || s.http.post(&mcp).bearer_auth(&s.agent).header("accept", "application/json, text/event-stream");
    let (status, body) = json_error(
        post().header("content-type", "application/json").body(format!("{{\"x\": \"{}\"}}", "a".repeat(4096))),
        "an oversized MCP body",
    )
    .await;
    assert_eq!((status, body["code"].as_str()), (413, Some("payload_too_large")), "{body}");
    let (status, body) = json_error(post().header("content-type", "text/plain").body("hello"), "a text MCP body").await;
    assert_eq!((status, body["code"].as_str()), (415, Some("invalid")), "{body}");
}

#[tokio::test]
async fn an_error_quoting_what_the_client_sent_does_not_echo_a_secret() {
    let s = TestServer::start().await;
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    let (status, body) = s.post("/run", &s.agent, serde_json::json!({"run_input": {}, "agent": secret})).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| m.contains("may start runs only for itself")), "{body}");
    assert!(!body.to_string().contains("abcdefghijklmnopqrstuvwxyz0123456789"), "{body}");
}

#[tokio::test]
async fn a_wait_longer_than_ten_years_is_refused_naming_the_field_not_a_500() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let cases = [
        (
            format!("/runs/{run}/gates"),
            json!({"kind": "question", "text": "x", "expires_in_secs": 9_000_000_000_000u64}),
            "expires_in_secs",
        ),
        (
            format!("/runs/{run}/gates"),
            json!({"kind": "question", "text": "x", "escalate_after_secs": u64::MAX, "escalate_to": ["ops"]}),
            "escalate_after_secs",
        ),
        (
            format!("/runs/{run}/tools/request_approval"),
            json!({"action": "deploy", "timeout": 9_000_000_000_000u64}),
            "timeout",
        ),
    ];
    for (path, body, field) in cases {
        let (status, reply) = s.post(&path, &s.agent, body.clone()).await;
        assert_eq!(status, 422, "{body}: {reply}");
        assert_eq!(reply["field"], field, "{body}: {reply}");
    }
}

#[tokio::test]
async fn a_retention_of_more_than_a_hundred_years_is_refused_naming_the_field() {
    let s = TestServer::start().await;
    let (status, reply) = s.post("/retention/purge", &s.admin, json!({"older_than_days": 3_628_801})).await;
    assert_eq!(status, 422, "{reply}");
    assert_eq!(reply["field"], "older_than_days", "{reply}");
    let (status, reply) = s.post("/retention/purge", &s.admin, json!({"older_than_days": u32::MAX})).await;
    assert_eq!(status, 422, "a date before the calendar is refused, not a panic: {reply}");
}

#[tokio::test]
async fn a_nul_character_in_a_body_path_or_query_is_refused_naming_where_and_stores_nothing() {
    // PostgreSQL's text cannot hold U+0000: let through, it failed the write
    // with a 500 (and, inside a write group's shared statements, could fail
    // the writes queued beside it). Every backend refuses it first.
    let s = TestServer::start().await;
    let run = s.run().await;
    let engine = s.server.state.engine_handle().clone();
    let head = move || engine.head_seq().unwrap();
    let before = tokio::task::spawn_blocking(head.clone()).await.unwrap();
    let bodies = [
        (json!({"kind": "question", "text": "Ship\u{0}?"}), "text"),
        (json!({"kind": "approval", "action": "deploy", "payload": {"build": ["ok", "x\u{0}y"]}}), "payload.build[1]"),
        (json!({"kind": "approval", "action": "deploy", "payload": {"a\u{0}b": 1}}), "payload.a\u{0}b"),
    ];
    for (body, field) in bodies {
        let (status, reply) = s.post(&format!("/runs/{run}/gates"), &s.agent, body.clone()).await;
        assert_eq!((status, reply["code"].as_str()), (422, Some("invalid")), "{body}: {reply}");
        assert_eq!(reply["field"], field, "{body}: {reply}");
        assert!(reply["message"].as_str().is_some_and(|m| m.contains("NUL")), "{reply}");
    }
    let (status, reply) = s.get("/gates/gate%00x", &s.reviewer).await;
    assert_eq!((status, reply["field"].as_str()), (422, Some("gate_id")), "{reply}");
    let (status, reply) = s.get("/runs?session_id=a%00b", &s.reviewer).await;
    assert_eq!((status, reply["field"].as_str()), (422, Some("session_id")), "{reply}");
    let (status, reply) =
        s.call(Method::PUT, &format!("/runs/{run}/context/k%00"), &s.agent, Some(json!({"value": 1}))).await;
    assert_eq!((status, reply["field"].as_str()), (422, Some("key")), "{reply}");
    assert_eq!(tokio::task::spawn_blocking(head).await.unwrap(), before, "nothing refused was logged");
    // An escaped backslash before `u0000` is text, not U+0000.
    let (status, reply) =
        s.post(&format!("/runs/{run}/gates"), &s.agent, json!({"kind": "question", "text": "C:\\u0000"})).await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["gate"]["text"], "C:\\u0000", "{reply}");
}

#[tokio::test]
async fn a_run_whose_session_user_or_agent_is_longer_than_an_index_keeps_is_refused_naming_it() {
    // PostgreSQL indexes each (an entry must fit a third of a page): a
    // random 9,000-character session was a 500 there, and, refused at a
    // write group's end, would have failed the writes beside it.
    let s = TestServer::start().await;
    let long: String = (0..9000).map(|i| char::from(b'a' + ((i * 7919) % 26) as u8)).collect();
    for field in ["session_id", "user_id"] {
        let (status, reply) = s.post("/run", &s.agent, json!({"run_input": {}, field: long})).await;
        assert_eq!((status, reply["field"].as_str()), (422, Some(field)), "{reply}");
    }
    let (status, reply) = s.post("/run", &s.admin, json!({"run_input": {}, "agent": long})).await;
    assert_eq!((status, reply["field"].as_str()), (422, Some("agent")), "{reply}");
    let (status, reply) = s.post("/run", &s.agent, json!({"run_input": {}, "session_id": "s".repeat(255)})).await;
    assert_eq!(status, 201, "255 characters are kept: {reply}");
}
