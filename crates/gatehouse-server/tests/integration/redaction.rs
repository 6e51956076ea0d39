//! No secret a client sends is kept: a request body is generated from the
//! OpenAPI document for every operation, with a canary secret in every string
//! field (and the stored query parameter), once per secret family; then the
//! database (the SQLite file and its WAL, or every PostgreSQL row), every
//! response, the event stream, the exports, the webhook bodies and the
//! server's log must not hold the canary.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use crate::common;

use common::sse::Sse;
use common::TestServer;
use gatehouse_engine::Database;
use gatehouse_server::ServerConfig;
use serde_json::{json, Map, Value};

/// What every canary carries, so a leak is found whatever the family.
const MARK: &str = "CANARY";

/// Secrets of several pattern families, each holding [`MARK`] where redaction
/// removes it; two texts, so that each fits a name (at most 128 characters).
const CANARIES: &[(&str, &str)] = &[
    ("keys", "Rotate sk-proj-CANARYopenai0123456789 eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.CANARYjwt0sig sk_live_CANARYstripe01 now"),
    ("blocks", "Rotate -----BEGIN PRIVATE KEY-----\nCANARYpem0\n-----END PRIVATE KEY----- Authorization: Basic CANARYbasic0 now"),
];

/// Everything the server wrote to its log, from every test in this binary.
fn server_log() -> &'static Arc<Mutex<Vec<u8>>> {
    static LOG: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let subscriber = tracing_subscriber::fmt()
            // What `gatehouse serve` logs unless told otherwise (`GATEHOUSE_LOG`).
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || LogWriter(sink.clone()))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        log
    })
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A body for `schema` with `canary` in every free string, taking variant
/// `pick` of every choice (`oneOf`) and every variant of an array's items.
struct Generator<'d> {
    schemas: &'d Map<String, Value>,
    canary: &'d str,
    pick: usize,
}

impl Generator<'_> {
    fn resolve<'s>(&'s self, mut schema: &'s Value) -> &'s Value {
        while let Some(name) = schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            schema = &self.schemas[name];
        }
        schema
    }

    /// The variants of a choice, without `null`.
    fn variants<'s>(&'s self, schema: &'s Value) -> Option<Vec<&'s Value>> {
        let list = schema.get("oneOf").or_else(|| schema.get("anyOf"))?.as_array()?;
        Some(list.iter().filter(|v| v["type"] != "null").collect())
    }

    fn body(&self, schema: &Value) -> Value {
        let schema = self.resolve(schema);
        if let Some(variants) = self.variants(schema) {
            return self.body(variants[self.pick % variants.len()]);
        }
        if let Some(parts) = schema["allOf"].as_array() {
            let mut merged = Map::new();
            for part in parts {
                if let Value::Object(fields) = self.body(part) {
                    merged.extend(fields);
                }
            }
            return Value::Object(merged);
        }
        let kind = match &schema["type"] {
            Value::Array(types) => types.iter().find(|t| *t != "null").cloned().unwrap_or(Value::Null),
            other => other.clone(),
        };
        match kind.as_str() {
            Some("string") => match (&schema["enum"], schema["format"].as_str()) {
                (Value::Array(values), _) => values[0].clone(),
                (_, Some("date-time")) => json!("2026-01-01T00:00:00Z"),
                _ => json!(self.canary),
            },
            Some("integer") | Some("number") => {
                schema["minimum"].as_f64().map_or(json!(1), |m| json!(m.max(1.0) as u64))
            }
            Some("boolean") => json!(false),
            Some("array") => {
                let items = self.resolve(&schema["items"]);
                match self.variants(items) {
                    Some(variants) => variants.iter().map(|v| self.body(v)).collect(),
                    None => json!([self.body(items)]),
                }
            }
            Some("object") | None if schema.get("properties").is_some() => {
                let fields = schema["properties"].as_object().expect("properties");
                fields.iter().map(|(k, v)| (k.clone(), self.body(v))).collect::<Map<_, _>>().into()
            }
            Some("object") if schema["additionalProperties"].is_object() => {
                json!({ "note": self.body(&schema["additionalProperties"]) })
            }
            // Any JSON: free-form data, under an ordinary key and a secret-looking one.
            _ => json!({"note": self.canary, "list": [self.canary], "password": "hunter2-CANARYkey"}),
        }
    }

    /// How many variants the body's own choice has (1 when it has none).
    fn choices(&self, schema: &Value) -> usize {
        let schema = self.resolve(schema);
        if let Some(variants) = self.variants(schema) {
            return variants.len();
        }
        schema["allOf"].as_array().map_or(1, |parts| parts.iter().map(|p| self.choices(p)).max().unwrap_or(1))
    }
}

/// The string fields of `schema` (JSON paths, `[]` for array items), to
/// check that every one of them was sent with a canary and accepted.
fn string_fields(g: &Generator, schema: &Value, path: &str, out: &mut BTreeSet<String>, depth: usize) {
    let schema = g.resolve(schema);
    if depth > 10 {
        return;
    }
    if let Some(variants) = g.variants(schema) {
        variants.iter().for_each(|v| string_fields(g, v, path, out, depth + 1));
        return;
    }
    if let Some(parts) = schema["allOf"].as_array() {
        parts.iter().for_each(|p| string_fields(g, p, path, out, depth + 1));
        return;
    }
    let types = match &schema["type"] {
        Value::Array(types) => types.clone(),
        Value::Null => vec![],
        t => vec![t.clone()],
    };
    if types.contains(&json!("string")) && schema["enum"].is_null() && schema["format"].is_null() {
        out.insert(path.to_owned());
    } else if types.contains(&json!("array")) {
        string_fields(g, &schema["items"], &format!("{path}[]"), out, depth + 1);
    } else if let Some(fields) = schema["properties"].as_object() {
        fields.iter().for_each(|(k, v)| string_fields(g, v, &format!("{path}.{k}"), out, depth + 1));
    }
}

/// The paths of `body`'s strings that hold the canary (`[]` for array items).
fn canary_paths(body: &Value, path: &str, out: &mut BTreeSet<String>) {
    match body {
        Value::String(s) if s.contains(MARK) => {
            out.insert(path.to_owned());
        }
        Value::Array(items) => items.iter().for_each(|v| canary_paths(v, &format!("{path}[]"), out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| canary_paths(v, &format!("{path}.{k}"), out)),
        _ => {}
    }
}

/// Fields a generated body cannot keep as generated, set to what the
/// operation needs (a real id, a choice that fits the gate); each keeps a
/// canary wherever the field is free text.
fn fit(op: &str, body: &mut Value, canary: &str, ctx: &Ids) {
    let obj = body.as_object_mut().expect("object body");
    match op {
        "POST /run" => {
            obj.insert("run_input".into(), json!({"prompt": canary}));
            obj.insert("parent_run_id".into(), json!(ctx.run));
            if let Some(config) = obj.get_mut("hitl_config").and_then(Value::as_object_mut) {
                config.insert("run_policy".into(), json!("require_human"));
                config.insert("webhook_url".into(), json!(format!("{}?note={canary}", ctx.hook)));
            }
            obj.insert("protocol".into(), json!({}));
        }
        "POST /runs/{run_id}/gates" => {
            for field in ["allowed_actions", "quorum", "on_timeout", "expires_in_secs"] {
                obj.remove(field);
            }
            obj.insert("escalate_after_secs".into(), json!(3600));
            obj.insert("mode".into(), json!("async"));
            obj.insert("confidence".into(), json!(0.5));
            obj.insert(
                "response_schema".into(),
                json!({"type": "object", "description": canary,
                "properties": {"answer": {"type": "string", "description": canary}}}),
            );
            obj.insert("payload_schema".into(), json!({"type": "object", "description": canary}));
            if obj["kind"] != "approval" {
                obj.remove("actions");
            } else if let Some(actions) = obj.get_mut("actions").and_then(Value::as_array_mut) {
                for action in actions.iter_mut().filter_map(Value::as_object_mut) {
                    action.remove("allowed_actions");
                }
            }
            let first = if obj["kind"] == "question" { "respond" } else { "approve" };
            if let Some(options) = obj.get_mut("options").and_then(Value::as_array_mut) {
                options.iter_mut().for_each(|o| o["action"] = json!(first));
            }
        }
        "POST /gates/{gate_id}/resolve" => {
            obj.remove("option");
            if ctx.pick == 3 {
                // One of the gate's two actions, by its id.
                obj.insert("action".into(), json!("approve"));
                obj["actions"][0]["id"] = json!("a1");
                obj["actions"][0]["action"] = json!("approve");
                obj["actions"][0].as_object_mut().expect("choice").remove("args");
            } else {
                obj.remove("actions");
            }
            if ctx.pick == 4 {
                obj.insert("action".into(), json!("approve"));
                obj["score"]["score"] = json!(4);
            } else {
                obj.remove("score");
            }
            if ctx.pick > 2 {
                for field in ["response", "payload", "allow_rule"] {
                    obj.remove(field);
                }
                return;
            }
            match ctx.pick {
                0 => {
                    obj.insert("action".into(), json!("approve"));
                    // A rule's arguments must match the gate's; they are checked on allow-rules.
                    if let Some(rule) = obj.get_mut("allow_rule").and_then(Value::as_object_mut) {
                        rule.remove("args");
                    }
                    obj.remove("response");
                    obj.remove("payload");
                }
                1 => {
                    obj.insert("action".into(), json!("edit"));
                    obj.remove("response");
                    obj.remove("allow_rule");
                }
                _ => {
                    obj.insert("action".into(), json!("respond"));
                    obj.insert("response".into(), json!({"answer": canary}));
                    obj.remove("payload");
                    obj.remove("allow_rule");
                }
            }
        }
        "POST /run/{run_id}/approve" => {
            obj.insert("approval_id".into(), json!(ctx.gate));
        }
        "POST /runs/{run_id}/plan" => {
            for field in ["dependencies", "plan"] {
                if let Some(Value::Object(plan)) = obj.get_mut(field) {
                    plan.get_mut("tasks").and_then(Value::as_array_mut).into_iter().flatten().for_each(|t| {
                        t["dependencies"] = json!([]);
                    });
                } else if obj.contains_key(field) {
                    obj.insert(field.into(), json!([]));
                }
            }
        }
        "POST /runs/{run_id}/turns" => {
            obj.insert("role".into(), json!("agent"));
        }
        "POST /tokens" => {
            // A team is a name of letters and digits, refused otherwise.
            obj.insert("teams".into(), json!(["ops"]));
            obj.insert("role".into(), json!("agent"));
            obj.insert("scope".into(), json!({"agents": [canary]}));
        }
        "POST /gates/{gate_id}/score" => {
            obj.insert("score".into(), json!(4));
        }
        _ => {}
    }
}

/// Real ids an operation may need, fresh for each call.
struct Ids {
    run: String,
    gate: String,
    hook: String,
    pick: usize,
}

/// The role that may call an operation, and the gate it needs.
fn caller<'s>(s: &'s TestServer, op: &str) -> &'s str {
    match op {
        "POST /allow-rules"
        | "POST /gates/{gate_id}/resolve"
        | "POST /gates/{gate_id}/score"
        | "POST /run/{run_id}/approve"
        | "PUT /runs/{run_id}/control"
        | "POST /runs/{run_id}/instructions"
        | "PUT /runs/{run_id}/next-agent" => &s.reviewer,
        "POST /recordings" | "POST /tokens" | "POST /retention/purge" | "POST /run" => &s.admin,
        _ => &s.agent,
    }
}

/// A gate of the kind the call decides.
async fn gate_for(s: &TestServer, op: &str, run: &str, pick: usize) -> String {
    let body = match (op, pick) {
        ("POST /gates/{gate_id}/score", _) | ("POST /gates/{gate_id}/resolve", 4) => {
            json!({"kind": "quality_score", "text": "Score it", "deliverable_id": "d1", "rubric": ["clarity"]})
        }
        ("POST /gates/{gate_id}/resolve", 3) => json!({"kind": "approval", "action": "deploy", "text": "Deploy?",
            "mode": "async", "actions": [{"id": "a1", "name": "deploy", "args": {"n": 1}}, {"id": "a2", "name": "notify", "args": {}}]}),
        ("POST /gates/{gate_id}/resolve", 2) => json!({"kind": "question", "text": "Region?", "mode": "async",
            "response_schema": {"type": "object", "properties": {"answer": {"type": "string"}}}}),
        // Its own payload, so an allow-rule made by an earlier decision does not pass it.
        _ => json!({"kind": "approval", "action": "deploy", "text": "Deploy?", "mode": "async",
            "payload": {"n": uuid::Uuid::new_v4().to_string()}}),
    };
    s.gate(run, body).await
}

/// A recording of a run with the canary in its free text, under new ids so
/// it can be imported beside the run it came from.
async fn recording_with(s: &TestServer, run: &str, canary: &str) -> Value {
    let (status, export) = s.get(&format!("/runs/{run}/recording"), &s.admin).await;
    assert_eq!(status, 200, "{export}");
    let mut text = export.to_string();
    fn ids(v: &Value, out: &mut BTreeSet<String>) {
        let is_id = |s: &str| {
            s.split_once('_').is_some_and(|(prefix, hex)| {
                prefix.bytes().all(|b| b.is_ascii_lowercase())
                    && hex.len() == 32
                    && hex.bytes().all(|b| b.is_ascii_hexdigit())
            })
        };
        match v {
            Value::String(s) if is_id(s) => drop(out.insert(s.clone())),
            Value::Array(items) => items.iter().for_each(|i| ids(i, out)),
            Value::Object(map) => map.values().for_each(|i| ids(i, out)),
            _ => {}
        }
    }
    let mut found = BTreeSet::new();
    ids(&export, &mut found);
    for id in found {
        let prefix = id.split_once('_').expect("prefixed id").0;
        text = text.replace(&id, &format!("{prefix}_{}", uuid::Uuid::now_v7().simple()));
    }
    let mut recording: Value = serde_json::from_str(&text).expect("JSON");
    fn salt(v: &mut Value, canary: &str) {
        match v {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    match (key.as_str(), item) {
                        ("title" | "text" | "content" | "reason" | "status_reason" | "note", Value::String(s)) => {
                            s.push(' ');
                            s.push_str(canary);
                        }
                        ("payload" | "input" | "metadata", item @ Value::Object(_)) => {
                            item["secret_note"] = json!(canary)
                        }
                        (_, item) => salt(item, canary),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| salt(i, canary)),
            _ => {}
        }
    }
    salt(&mut recording, canary);
    recording
}

/// Where a stored copy of the canary would be: the SQLite file and its WAL
/// as bytes, or every row of the test's PostgreSQL schema as text.
async fn stored_bytes(s: &TestServer) -> Vec<u8> {
    match &s.database {
        Database::Sqlite(path) => {
            let mut bytes = Vec::new();
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let file = format!("{}{suffix}", path.display());
                bytes.extend(std::fs::read(&file).unwrap_or_default());
            }
            bytes
        }
        Database::Postgres(url) => {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(conn);
            let schema = s.schema.clone().expect("schema");
            let tables = client
                .query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1", &[&schema])
                .await
                .expect("tables");
            let mut dump = String::new();
            for row in tables {
                let table: String = row.get(0);
                let rows =
                    client.query(&format!("SELECT t::text FROM \"{schema}\".\"{table}\" t"), &[]).await.expect("dump");
                rows.iter().for_each(|r| dump.push_str(&r.get::<_, String>(0)));
            }
            dump.into_bytes()
        }
    }
}

/// A webhook receiver that keeps every body it gets.
async fn hook_receiver() -> (String, Arc<Mutex<Vec<String>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let sink = got.clone();
    let app = axum::Router::new().fallback(move |body: String| {
        let sink = sink.clone();
        async move {
            sink.lock().expect("hooks").push(body);
            "ok"
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    (url, got)
}

/// Calls every MCP tool at `/mcp` with arguments generated from its input
/// schema (a canary in every string; a real run and gate where it names
/// one, asynchronous where it may wait), while a reviewer rejects whatever
/// waits; answers with every result. The gate tools must succeed.
async fn mcp_calls(s: &TestServer) -> Vec<String> {
    use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;

    let uri = format!("http://{}/mcp", s.server.addr);
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(uri).auth_header(&s.agent),
    );
    let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("canary", "1.0.0"));
    let session = info.serve(transport).await.expect("MCP session");
    let (http, base, token) = (s.http.clone(), s.base.clone(), s.reviewer.clone());
    let rejecter = tokio::spawn(async move {
        loop {
            let list: Value =
                http.get(format!("{base}/gates")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
            for gate in list["gates"].as_array().cloned().unwrap_or_default() {
                let id = gate["id"].as_str().unwrap_or_default();
                let url = format!("{base}/gates/{id}/resolve");
                let _ = http.post(url).bearer_auth(&token).json(&json!({"action": "reject"})).send().await;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Region?", "mode": "async"})).await;
    let mut results = Vec::new();
    for tool in session.list_all_tools().await.expect("tools") {
        let schema = Value::Object((*tool.input_schema).clone());
        let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
        for (family, canary) in CANARIES {
            let mut args = Generator { schemas: &defs, canary, pick: 0 }.body(&schema);
            for (field, value) in [("run_id", json!(run)), ("gate_id", json!(gate)), ("mode", json!("async"))] {
                if let Some(slot) = args.get_mut(field) {
                    *slot = value;
                }
            }
            args.as_object_mut().expect("arguments").remove("wait_seconds");
            let Value::Object(arguments) = args else { unreachable!() };
            let call = session.call_tool(CallToolRequestParams::new(tool.name.to_string()).with_arguments(arguments));
            let result = tokio::time::timeout(Duration::from_secs(5), call).await.expect("the tool answers");
            let text = format!("{result:?}");
            let gate_tool = tool.name.starts_with("request_") || tool.name == "ask_human";
            assert!(
                !gate_tool || result.as_ref().is_ok_and(|r| r.is_error != Some(true)),
                "{} ({family}): {text}",
                tool.name
            );
            results.push(format!("MCP {} ({family}): {text}", tool.name));
        }
    }
    rejecter.abort();
    results
}

/// Where `MARK` sits in `haystack`, with some context, if anywhere.
fn leak(haystack: &[u8]) -> Option<String> {
    let at = haystack.windows(MARK.len()).position(|w| w == MARK.as_bytes())?;
    let from = at.saturating_sub(120);
    Some(String::from_utf8_lossy(&haystack[from..(at + 60).min(haystack.len())]).into_owned())
}

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
            let path = template.strip_prefix("/api/hitl").unwrap_or(template);
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
                let run = if own { s.run().await } else { shared.clone() };
                // A gate also starts the run.
                let gate = if own { gate_for(&s, op, &run, pick).await } else { String::new() };
                if own {
                    runs.push(run.clone());
                }
                let ids = Ids { run: run.clone(), gate: gate.clone(), hook: hook.clone(), pick };
                let g = Generator { schemas: &schemas, canary, pick };
                let mut body =
                    if op == "POST /recordings" { recording_with(&s, &run, canary).await } else { g.body(schema) };
                fit(op, &mut body, canary, &ids);
                if op.ends_with("/plan") && pick > 0 {
                    let add = json!({"op": "add_task", "task_id": canary, "description": "rotate keys"});
                    let (status, answer) = s.post(&format!("/runs/{run}/plan"), &s.agent, add).await;
                    assert_eq!(status, 200, "{answer}");
                }
                let (method, template) = op.split_once(' ').expect("method and path");
                let path = template.replace("{run_id}", &run).replace("{gate_id}", &gate).replace("{key}", "notes");
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
            op.ends_with("/recordings") || (op.ends_with("/tokens") && f == ".teams[]") || references.contains(&f)
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
    // A session named with a secret is exported under its redacted name.
    let session = gatehouse_engine::redact::Redactor::default().redact_str(CANARIES[0].1).into_owned();
    let (status, export) = s.get(&format!("/sessions/{}/recording", urlencode(&session)), &s.admin).await;
    assert_eq!(status, 200, "{export}");
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
}

/// `text` percent-encoded for a query string or a path segment.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
