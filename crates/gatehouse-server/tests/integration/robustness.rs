//! No client mistake yields a 500, and none changes stored data: every
//! operation in the generated OpenAPI document is called with every role's
//! token and a set of broken bodies (missing, empty, the wrong JSON type,
//! malformed, unknown fields only) against unknown and real ids.

use crate::common;

use common::TestServer;
use serde_json::{json, Value};

/// Bodies a careless or hostile client sends.
fn bad_bodies() -> Vec<Option<(&'static str, String)>> {
    vec![
        None,
        Some(("application/json", String::new())),
        Some(("application/json", "[]".into())),
        Some(("application/json", "\"text\"".into())),
        Some(("application/json", "{\"unknown\": {\"deeply\": [1, 2, 3]}}".into())),
        Some(("application/json", "{\"kind\": 7, \"action\": [], \"text\": null, \"role\": {}}".into())),
        Some(("application/json", "{not json".into())),
        Some(("application/json", "{\"text\": \"\\ud800\"}".into())),
        // U+0000, which PostgreSQL's text cannot hold, in the fields most operations read.
        Some((
            "application/json",
            "{\"text\": \"a\\u0000b\", \"action\": \"x\\u0000\", \"name\": \"n\\u0000\", \"role\": \"agent\", \"kind\": \"question\", \"run_input\": {}, \"value\": \"\\u0000\"}".into(),
        )),
        Some(("text/plain", "approve".into())),
    ]
}

async fn head(s: &TestServer) -> (u64, u64) {
    let engine = s.server.state.engine_handle().clone();
    tokio::task::spawn_blocking(move || {
        let all = gatehouse_engine::GateFilter { status: None, ..gatehouse_engine::GateFilter::default() };
        (engine.head_seq().unwrap(), engine.count_gates(&all).unwrap())
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn every_operation_answers_broken_requests_without_a_500_or_a_change() {
    let s = TestServer::start().await;
    // Real ids, so handlers get past the lookups: a run with a decided gate.
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Region?"})).await;
    let (status, body) =
        s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "respond", "text": "eu"})).await;
    assert_eq!(status, 200, "{body}");

    let (_, doc) = s.get("/openapi.json", &s.admin).await;
    let paths = doc["paths"].as_object().expect("paths").clone();
    assert!(paths.len() >= 40, "the document lists every route: {}", paths.len());
    let ids: [(&str, &str); 5] = [
        ("run_id", run.as_str()),
        ("gate_id", gate.as_str()),
        ("session_id", "s1"),
        ("key", "k"),
        ("id_or_name", "nobody"),
    ];

    let mut calls = 0;
    for (template, ops) in &paths {
        if template.ends_with("/events") && !template.contains("{run_id}") {
            continue; // the SSE stream never ends; tests/events.rs covers its errors
        }
        for method in ops.as_object().unwrap().keys() {
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            for real in [false, true] {
                let mut path = template.clone();
                for (name, value) in ids {
                    let value = if real { value.to_owned() } else { format!("no-such-{name}") };
                    path = path.replace(&format!("{{{name}}}"), &value);
                }
                // Never hold: these calls must answer at once.
                let path = format!("{path}?timeout=0&wait=0&limit=nope");
                for token in [&s.agent, &s.other_agent, &s.reviewer, &s.admin] {
                    for body in bad_bodies() {
                        let before = head(&s).await;
                        let mut req = s.http.request(method.clone(), s.url(&path)).bearer_auth(token);
                        if let Some((content_type, text)) = &body {
                            req = req.header("content-type", *content_type).body(text.clone());
                        }
                        let resp = req.send().await.expect("request");
                        let status = resp.status().as_u16();
                        let text = resp.text().await.unwrap_or_default();
                        calls += 1;
                        assert!(status < 500, "{method} {path} with {body:?}: {status} {text}");
                        if status >= 400 {
                            let err: Value = serde_json::from_str(&text)
                                .unwrap_or_else(|_| panic!("{method} {path}: error body is not JSON: {text}"));
                            assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()), "{method} {path}: {text}");
                            assert_eq!(
                                head(&s).await,
                                before,
                                "{method} {path} with {body:?} was refused ({status}) but changed data"
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(calls > 1000, "{calls}");
}
