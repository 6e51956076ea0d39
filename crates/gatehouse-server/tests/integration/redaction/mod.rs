//! No secret a client sends is kept: a request body is generated from the
//! OpenAPI document for every operation, and arguments for every MCP tool
//! from its input schema, with a canary (secrets of several families) in
//! every string field and the stored query parameter; then the database
//! (the SQLite file and its WAL, or every PostgreSQL row), every response,
//! the event stream, the exports, the webhook bodies and the server's log
//! must not hold the canary.

mod bodies;
mod witnesses;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use crate::common;

use bodies::{
    caller, canary_paths, fit, gate_for, node_run, paused_team_run, recording_with, string_fields, team_run, Generator,
    Ids, NODE,
};
use common::sse::Sse;
use common::TestServer;
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};
use witnesses::{hook_receiver, leak, mcp_calls, server_log, stored_bytes, urlencode};

/// What every canary carries, so a leak is found whatever the family.
const MARK: &str = "CANARY";

/// Secrets of several pattern families, each holding [`MARK`] where redaction
/// removes it; two texts, so that each fits a name (at most 128 characters).
const CANARIES: &[(&str, &str)] = &[
    ("keys", "Rotate sk-proj-CANARYopenai0123456789 eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.CANARYjwt0sig sk_live_CANARYstripe01 now"),
    ("blocks", "Rotate -----BEGIN PRIVATE KEY-----\nCANARYpem0\n-----END PRIVATE KEY----- Authorization: Basic CANARYbasic0 now"),
];

#[tokio::test]
async fn no_secret_sent_in_any_field_of_any_operation_is_stored_streamed_exported_sent_or_logged() {
    let log = server_log();
    let (hook, hooks) = hook_receiver().await;
    let s = TestServer::start_with(ServerConfig { webhook_url: Some(hook.clone()), ..ServerConfig::default() }).await;
    let (_, doc) = s.get("/openapi.json", &s.admin).await;
    let schemas = doc["components"]["schemas"].as_object().expect("schemas").clone();
    let mut stream = Sse::open(&s.http, s.url("/events"), &s.admin, Some(0)).await.expect("event stream");

    // Every operation with a request body, and what it must accept.
    let mut operations = BTreeMap::new();
    for (template, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("operations") {
            let Some(schema) = op["requestBody"]["content"]["application/json"]["schema"].as_object() else {
                continue;
            };
            // Paths are relative to `/api/hitl`; the older run endpoint sits beside it, at `/api/teams/run`.
            let path = match template.strip_prefix("/api/hitl") {
                Some(path) => path.to_owned(),
                None => format!("/..{}", template.strip_prefix("/api").unwrap_or(template)),
            };
            operations.insert(format!("{} {path}", method.to_uppercase()), Value::Object(schema.clone()));
        }
    }
    assert!(operations.len() >= 20, "the document lists every body: {}", operations.len());

    let mut responses = Vec::new();
    let mut sent: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut runs = Vec::new();
    for (family, canary) in CANARIES {
        // Most calls share a run; those that end it, change how it steps or decide its gates get their own.
        let shared = s.run().await;
        runs.push(shared.clone());
        for (op, schema) in &operations {
            let g = Generator { schemas: &schemas, canary, pick: 0 };
            let picks = if op.ends_with("/resolve") { 5 } else { g.choices(schema) };
            for pick in 0..picks {
                let own = ["/complete", "/fail", "/control", "/approve", "/recordings", "/plan", "/resolve", "/score"]
                    .iter()
                    .any(|o| op.ends_with(o));
                let run = if op.contains("/nodes/") {
                    node_run(&s).await
                } else if op.ends_with("/team") {
                    team_run(&s).await
                } else if op.ends_with("/restart-task") {
                    paused_team_run(&s).await
                } else if own {
                    s.run().await
                } else {
                    shared.clone()
                };
                // A gate also starts the run.
                let gate = if own { gate_for(&s, op, &run, pick).await } else { String::new() };
                if own || op.contains("/nodes/") || op.ends_with("/team") || op.ends_with("/restart-task") {
                    runs.push(run.clone());
                }
                let ids = Ids { run: run.clone(), gate: gate.clone(), hook: hook.clone(), pick };
                let g = Generator { schemas: &schemas, canary, pick };
                let mut body = if op == "POST /recordings" || op == "POST /replays" {
                    recording_with(&s, &run, canary).await
                } else {
                    g.body(schema)
                };
                fit(op, &mut body, canary, &ids);
                // A sub-team created with the canary as its purpose, dissolved by the call with the canary as its reason.
                if op.ends_with("/team") {
                    let create = json!({"action": "create_team", "team_name": "audit", "purpose": canary,
                        "agents": [{"name": "auditor", "role": "auditor", "provider": "scripted", "model": "chat"}]});
                    let (status, answer) = s.post(&format!("/runs/{run}/team"), &s.reviewer, create).await;
                    assert_eq!(status, 200, "{answer}");
                    sent.entry(op.clone()).or_default().insert(".purpose".into());
                }
                if op.ends_with("/plan") && pick > 0 {
                    let add = json!({"op": "add_task", "task_id": canary, "description": "rotate keys"});
                    let (status, answer) = s.post(&format!("/runs/{run}/plan"), &s.agent, add).await;
                    assert_eq!(status, 200, "{answer}");
                }
                let (method, template) = op.split_once(' ').expect("method and path");
                let path = template
                    .replace("{run_id}", &run)
                    .replace("{gate_id}", &gate)
                    .replace("{key}", "notes")
                    .replace("{node_id}", NODE);
                let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
                let (status, answer) = s.call(method, &path, caller(&s, op), Some(body.clone())).await;
                responses.push(format!("{op} ({family}): {status} {answer}"));
                if status < 300 {
                    canary_paths(&body, "", sent.entry(op.clone()).or_default());
                } else {
                    eprintln!("{op} ({family}, variant {pick}) refused: {status} {answer}");
                }
            }
        }
        // A reason given when a run is cancelled is stored too.
        let run = s.run().await;
        let path = format!("/run/{run}?reason={}", urlencode(canary));
        let (status, answer) = s.call(reqwest::Method::DELETE, &path, &s.reviewer, None).await;
        assert!(status < 300, "{status} {answer}");
        responses.push(format!("DELETE /run ({family}): {answer}"));
        runs.push(run);
    }

    responses.extend(mcp_calls(&s).await);

    // Every string field of every body was sent with a canary, and accepted.
    let mut missing = Vec::new();
    for (op, schema) in &operations {
        let g = Generator { schemas: &schemas, canary: "", pick: 0 };
        let mut fields = BTreeSet::new();
        string_fields(&g, schema, "", &mut fields, 0);
        let accepted = sent.get(op).cloned().unwrap_or_default();
        // A recording is the server's own export with the canary in its free text.
        // References to records that must exist (ids, a gate's option or action) are looked up, never stored.
        let references = [
            ".parent_run_id",
            ".approval_id",
            ".scope.runs[]",
            ".dependencies[]",
            ".plan.tasks[].dependencies[]",
            ".option",
            ".actions[].id",
        ];
        let exempt = |f: &str| {
            op.ends_with("/recordings")
                || op.ends_with("/replays")
                || (op.ends_with("/tokens") && f == ".teams[]")
                || (op.ends_with("/teams/run") && f == ".tool")
                || (op.ends_with("/team")
                    && [".name", ".provider", ".model", ".tools[]", ".team_name", ".remove_agents[]"].contains(&f))
                || (op.ends_with("/restart-task") && [".agent", ".task_id"].contains(&f))
                || references.contains(&f)
        };
        missing.extend(fields.difference(&accepted).filter(|f| !exempt(f)).map(|f| format!("{op} {f}")));
    }
    assert!(missing.is_empty(), "string fields never accepted with a canary:\n{}", missing.join("\n"));

    // Everything a client can read back: every listing, run and gate, their exports.
    for path in [
        "/gates?status=all&limit=500",
        "/runs?limit=500",
        "/allow-rules?status=all",
        "/tokens",
        "/metrics",
        "/audit/verify",
        "/approvals/pending",
        "/gates/search?q=rotate",
    ] {
        let (_, body) = s.get(path, &s.admin).await;
        responses.push(format!("GET {path}: {body}"));
    }
    let (_, found) = s.get("/gates/search?q=rotate&limit=1", &s.admin).await;
    assert!(
        !found["hits"].as_array().is_none_or(Vec::is_empty),
        "a redacted gate is found by its other words: {found}"
    );
    for run in &runs {
        let paths = [
            "/run/{}/state",
            "/runs/{}/context",
            "/runs/{}/context/history",
            "/runs/{}/plan",
            "/runs/{}/recording",
            "/runs/{}/events?limit=1000",
        ];
        for path in paths.map(|p| p.replace("{}", run)) {
            let (_, body) = s.get(&path, &s.admin).await;
            responses.push(format!("GET {path}: {body}"));
        }
    }
    // A session named with a secret is found by the name as sent.
    let path = format!("/sessions/{}/recording", urlencode(CANARIES[0].1));
    let (session_status, export) = s.get(&path, &s.admin).await;
    responses.push(format!("session recording: {export}"));

    let mut streamed = String::new();
    while let Some(msg) = stream.next(Duration::from_millis(500)).await {
        streamed.push_str(&msg.data.to_string());
    }
    tokio::time::sleep(Duration::from_millis(300)).await; // the last webhooks
    let log = log.lock().expect("log").clone();
    let hooks = hooks.lock().expect("hooks").join("\n");
    assert!(!streamed.is_empty() && !hooks.is_empty(), "the stream and the webhook carried the gates");

    let stored = stored_bytes(&s).await;
    let marker = b"[REDACTED]";
    assert!(stored.windows(marker.len()).any(|w| w == marker), "the rows were read, redacted");
    let responses = responses.join("\n");
    let places: [(&str, &[u8]); 5] = [
        ("the database", &stored),
        ("a response", responses.as_bytes()),
        ("the event stream", streamed.as_bytes()),
        ("a webhook body", hooks.as_bytes()),
        ("the server log", &log),
    ];
    let leaks: Vec<String> = places
        .iter()
        .filter_map(|(place, bytes)| leak(bytes).map(|at| format!("{place} holds a canary: …{at}…")))
        .collect();
    assert!(leaks.is_empty(), "{}", leaks.join("\n\n"));
    assert_eq!(session_status, 200, "the session's export, by the name as sent");
}
