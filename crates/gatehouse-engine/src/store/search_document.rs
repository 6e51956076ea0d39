//! What a gate's search document holds, read from the gate's snapshot: six
//! of the eight fields the search index keeps (the other two, the agent and
//! the run, come from the gate's columns and its run's title).
//!
//! SQLite selects them in SQL (`gate_search_source`, `sqlite/schema.rs`)
//! from the stored JSON as its triggers store a gate. PostgreSQL is given
//! them by a statement sent right behind the one that stores the gate
//! (`postgres/gate_rows.rs`), so the database does not parse the snapshot
//! again to index it; this is that view's definition field for field,
//! checked against it on SQLite (`tests` below). A field missing from the snapshot, or of another JSON
//! type than a gate gives it, adds nothing.

use serde_json::{Map, Value};

/// The fields of a gate's search document its snapshot gives, each `None`
/// when nothing in the gate fills it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SearchFields {
    /// The question or action.
    pub text: Option<String>,
    /// The spec's action and the proposed actions' names.
    pub action: Option<String>,
    /// The payload and the proposed actions' arguments, as JSON.
    pub payload: Option<String>,
    /// The rest of the spec (as JSON), the task and step, the actions'
    /// descriptions, the preset options.
    pub details: Option<String>,
    /// Who decided: the decision's reviewer, the voters, the actions' deciders.
    pub reviewer: Option<String>,
    /// What was decided: the decision's text, response and option, why the
    /// gate closed, the votes' reasons, the actions' decision texts.
    pub decision: Option<String>,
}

impl SearchFields {
    /// The fields of `gate`, a gate's snapshot as stored.
    pub fn of(gate: &Value) -> Self {
        let spec = object(gate.get("spec"));
        let context = object(gate.get("context"));
        let decision = object(gate.get("decision"));
        let actions = array(gate.get("actions"));
        let options = array(gate.get("options"));
        let votes = array(gate.get("votes"));
        let each = |items: &[Value], field: &dyn Fn(&Value) -> Option<String>| joined(items.iter().map(field));
        let detail = spec.filter(|spec| spec.keys().any(|k| k != "kind" && k != "action")).map(|spec| {
            let rest: Map<String, Value> = spec
                .iter()
                .filter(|(k, _)| *k != "kind" && *k != "action")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Value::Object(rest).to_string()
        });
        Self {
            text: as_text(gate.get("text")),
            action: Some(concat_ws([
                as_text(spec.and_then(|s| s.get("action"))),
                each(actions, &|a| as_text(a.get("name"))),
            ])),
            payload: Some(concat_ws([
                as_json(gate.get("payload")),
                each(actions, &|a| a.get("args").map(Value::to_string)),
            ])),
            details: Some(concat_ws([
                detail,
                as_text(context.and_then(|c| c.get("task_id"))),
                as_text(context.and_then(|c| c.get("task_description"))),
                as_text(context.and_then(|c| c.get("step"))),
                each(actions, &|a| as_text(a.get("description"))),
                each(options, &|o| Some(concat_ws([as_text(o.get("title")), as_text(o.get("description"))]))),
            ])),
            reviewer: Some(concat_ws([
                as_text(decision.and_then(|d| d.get("decided_by"))),
                each(votes, &|v| as_text(v.get("reviewer"))),
                each(actions, &|a| as_text(a.get("decision").and_then(|d| d.get("decided_by")))),
            ])),
            decision: Some(concat_ws([
                as_text(decision.and_then(|d| d.get("text"))),
                as_json(decision.and_then(|d| d.get("response"))),
                as_text(decision.and_then(|d| d.get("option"))),
                as_text(gate.get("status_reason")),
                each(votes, &|v| as_text(v.get("reason"))),
                each(actions, &|a| as_text(a.get("decision").and_then(|d| d.get("text")))),
            ])),
        }
    }

    /// The run field: the run's id and its title.
    pub fn run(run_id: &str, title: Option<&str>) -> String {
        concat_ws([Some(run_id.to_owned()), title.map(str::to_owned)])
    }
}

fn object(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A value as text (SQL's `->>`): a string as itself, null or missing as
/// nothing, anything else as its JSON.
fn as_text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A value as JSON (SQL's `nullif(x -> 'f', 'null')`): null or missing as nothing.
fn as_json(value: Option<&Value>) -> Option<String> {
    value.filter(|v| !v.is_null()).map(Value::to_string)
}

/// The parts there are and are not empty, joined by spaces (SQLite's
/// `concat_ws(' ', ...)`): empty when there are none.
fn concat_ws<const N: usize>(parts: [Option<String>; N]) -> String {
    parts.into_iter().flatten().filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Each item's part there is, joined by spaces (SQL's `string_agg(x, ' ')`
/// over the items): nothing when no item has one.
fn joined(parts: impl Iterator<Item = Option<String>>) -> Option<String> {
    let parts: Vec<String> = parts.flatten().collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::SearchFields;
    use crate::store::sqlite::{SqliteStore, StoreOptions};

    /// Snapshots of every shape a gate's search fields take: the fields
    /// each fills and leaves out, empty and missing arrays and objects,
    /// JSON payloads, arguments and responses, and text that JSON escapes.
    fn snapshots() -> Vec<Value> {
        vec![
            json!({"text": "Deploy?", "spec": {"kind": "approval", "action": "deploy"},
                   "payload": {"build": 1, "tags": ["a", "b"], "ratio": 0.25, "ok": true, "none": null},
                   "context": {"task_id": "t-1", "task_description": "Ship it", "step": "release"}, "status": "pending"}),
            json!({"text": "Which colour?", "spec": {"kind": "choice", "choices": ["red", "blue"], "multi": false},
                   "payload": null, "options": [{"title": "Red", "description": "warm"}, {"title": "Blue"}, {}],
                   "decision": {"decided_by": "alice", "text": "red it is", "response": {"choice": "red"}, "option": "Red"}}),
            json!({"text": "Run these?", "spec": {"kind": "tool_call"},
                   "actions": [{"name": "rm", "args": {"path": "/tmp/x", "force": true}, "description": "remove",
                                "decision": {"decided_by": "bob", "text": "fine"}},
                               {"name": "ls", "args": "plain", "decision": null},
                               {"description": "no name"}],
                   "votes": [{"reviewer": "carol", "reason": "ok"}, {"reviewer": "dave"}],
                   "status_reason": "quorum reached", "decision": {"decided_by": "carol", "response": null}}),
            json!({"text": "Score it \u{e9}l\u{e8}ve \"quoted\"\n\ttabbed", "spec": {"kind": "score", "rubric": "1-5 \u{e9}l\u{e8}ve", "min": 1.5},
                   "context": {"step": "3"}, "decision": {"response": "plain \"text\"", "text": ""}, "payload": "raw \\ \u{1}"}),
            json!({"text": "Nothing else", "actions": [], "options": [], "votes": [], "context": {}, "spec": {},
                   "payload": [1, {"deep": ["x", null]}], "status_reason": null, "decision": null}),
            json!({}),
        ]
    }

    #[test]
    fn a_gates_fields_are_what_sqlites_view_of_its_document_selects() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("gatehouse.db");
        drop(SqliteStore::open(&path, StoreOptions::default()).expect("store"));
        let db = rusqlite::Connection::open(&path).expect("open");
        db.execute(
            "INSERT INTO runs (id, status, created_at, updated_at, data) VALUES ('run_1', 'active', 0, 0, '{\"title\": \"Release\"}')",
            [],
        )
        .expect("a run");
        for (i, snapshot) in snapshots().into_iter().enumerate() {
            db.execute(
                "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at, data)
                 VALUES (?1, 'run_1', 'approval', 0, 0, 'pending', 'deployer', 0, ?2)",
                (format!("gate_{i}"), snapshot.to_string()),
            )
            .expect("a gate");
            let view = db
                .query_row(
                    "SELECT s.text, s.action, s.payload, s.details, s.reviewer, s.decision, s.agent, s.run
                     FROM gate_search_source s JOIN gates g ON g.rowid = s.doc WHERE g.id = ?1",
                    [format!("gate_{i}")],
                    |row| {
                        let fields = SearchFields {
                            text: row.get(0)?,
                            action: row.get(1)?,
                            payload: row.get(2)?,
                            details: row.get(3)?,
                            reviewer: row.get(4)?,
                            decision: row.get(5)?,
                        };
                        Ok((fields, row.get::<_, String>(6)?, row.get::<_, String>(7)?))
                    },
                )
                .expect("the view's fields");
            assert_eq!(SearchFields::of(&snapshot), view.0, "snapshot {i}: {snapshot}");
            assert_eq!((view.1.as_str(), view.2.as_str()), ("deployer", "run_1 Release"));
        }
    }
}
