//! The bodies of the redaction test: generated from an operation's schema
//! in the OpenAPI document (a canary in every free string), then fitted to
//! what the operation needs to accept them (real ids, choices that fit).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::MARK;
use crate::common::TestServer;

/// A body for `schema` with `canary` in every free string, taking variant
/// `pick` of every choice (`oneOf`) and every variant of an array's items.
pub(super) struct Generator<'d> {
    pub schemas: &'d Map<String, Value>,
    pub canary: &'d str,
    pub pick: usize,
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

    pub(super) fn body(&self, schema: &Value) -> Value {
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
    pub(super) fn choices(&self, schema: &Value) -> usize {
        let schema = self.resolve(schema);
        if let Some(variants) = self.variants(schema) {
            return variants.len();
        }
        schema["allOf"].as_array().map_or(1, |parts| parts.iter().map(|p| self.choices(p)).max().unwrap_or(1))
    }
}

/// The string fields of `schema` (JSON paths, `[]` for array items), to
/// check that every one of them was sent with a canary and accepted.
pub(super) fn string_fields(g: &Generator, schema: &Value, path: &str, out: &mut BTreeSet<String>, depth: usize) {
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
pub(super) fn canary_paths(body: &Value, path: &str, out: &mut BTreeSet<String>) {
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
pub(super) fn fit(op: &str, body: &mut Value, canary: &str, ctx: &Ids) {
    // A live replay of a recording with the canary in its free text, held so it sends nothing unasked.
    if op == "POST /replays" {
        *body = json!({"recording": body.take(), "paused": true, "speed": 2});
        return;
    }
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
            // A gate declared for a node: a quality gate, with its free text.
            obj.insert(
                "declared_gates".into(),
                json!([{"workflow_node_id": canary, "kind": "quality_score", "text": canary, "rubric": [canary],
                    "required_score": 4, "mode": "sync"}]),
            );
            // One way of saying when it expires, an hour away.
            obj.remove("expires_at");
            obj.insert("expires_in_secs".into(), json!(3600));
        }
        // The older run endpoint: the tool is looked up among the providers' tools, never free text.
        "POST /../teams/run" => {
            obj.insert("tool".into(), json!("scripted:chat"));
            if let Some(config) = obj.get_mut("hitl_config").and_then(Value::as_object_mut) {
                config.insert("run_policy".into(), json!("require_human"));
                config.insert("webhook_url".into(), json!(format!("{}?note={canary}", ctx.hook)));
            }
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
        // A reassignment of the team run's coder: its new role is free text; the provider,
        // model and tools are looked up in the registry. With the key-block canaries the call
        // dissolves the sub-team created before it (its purpose the canary), the canary its reason.
        "POST /runs/{run_id}/team" if canary.contains("PRIVATE KEY") => {
            *body = json!({"action": "dissolve_team", "team_name": "audit", "reason": canary});
        }
        "POST /runs/{run_id}/team" => {
            obj.insert("action".into(), json!("update"));
            obj.insert("name".into(), json!("coder"));
            for field in ["agent", "provider", "model", "tools", "team_name", "agents", "purpose", "add_agents"] {
                obj.remove(field);
            }
            for field in ["remove_agents", "reason"] {
                obj.remove(field);
            }
        }
        // The coder of a paused team run goes back; the instruction is free text
        // (a plan task's id is for plan collaboration runs).
        "POST /runs/{run_id}/restart-task" => {
            obj.insert("agent".into(), json!("coder"));
            obj.remove("task_id");
        }
        _ => {}
    }
}

/// Real ids an operation may need, fresh for each call.
pub(super) struct Ids {
    pub run: String,
    pub gate: String,
    pub hook: String,
    pub pick: usize,
}

/// The role that may call an operation, and the gate it needs.
pub(super) fn caller<'s>(s: &'s TestServer, op: &str) -> &'s str {
    match op {
        "POST /allow-rules"
        | "POST /gates/{gate_id}/resolve"
        | "POST /gates/{gate_id}/score"
        | "POST /run/{run_id}/approve"
        | "PUT /runs/{run_id}/control"
        | "POST /runs/{run_id}/instructions"
        | "PUT /runs/{run_id}/next-agent"
        | "POST /replays"
        | "POST /replays/{replay_id}/control"
        | "POST /runs/{run_id}/team"
        | "POST /runs/{run_id}/restart-task"
        // A plan's `replace` may change how people review it, a reviewer's
        // call once the run has a plan; agents' plan calls redact alike.
        | "POST /runs/{run_id}/plan" => &s.reviewer,
        "POST /recordings"
        | "POST /tokens"
        | "POST /signin-links"
        | "POST /retention/purge"
        | "POST /run"
        | "POST /../teams/run" => &s.admin,
        _ => &s.agent,
    }
}

/// The node a run made by [`node_run`] declares a gate at.
pub(super) const NODE: &str = "review";

/// A run declaring a gate at [`NODE`], for reaching it.
pub(super) async fn node_run(s: &TestServer) -> String {
    let body =
        json!({"run_input": {"prompt": "write"}, "declared_gates": [{"workflow_node_id": NODE, "kind": "approval"}]});
    let (status, started) = s.post("/run", &s.agent, body).await;
    assert_eq!(status, 201, "{started}");
    started["run_id"].as_str().expect("run_id").to_owned()
}

/// A team run (a coder and a tester), for the calls that change a team.
pub(super) async fn team_run(s: &TestServer) -> String {
    let agent = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let input = json!({"prompt": "Fix the login page", "team": [agent("coder"), agent("tester")]});
    let (status, body) = s.post("/run", &s.admin, json!({"run_input": input})).await;
    assert_eq!(status, 201, "{body}");
    body["run_id"].as_str().expect("run id").to_owned()
}

/// A team run paused at a breakpoint after each agent turn (no gate opens), for a restart.
pub(super) async fn paused_team_run(s: &TestServer) -> String {
    let agent = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let input = json!({"prompt": "Fix the login page", "team": [agent("coder"), agent("tester")]});
    let body =
        json!({"run_input": input, "step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let (status, body) = s.post("/run", &s.admin, body).await;
    assert_eq!(status, 201, "{body}");
    body["run_id"].as_str().expect("run id").to_owned()
}

/// A gate of the kind the call decides.
pub(super) async fn gate_for(s: &TestServer, op: &str, run: &str, pick: usize) -> String {
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
pub(super) async fn recording_with(s: &TestServer, run: &str, canary: &str) -> Value {
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
