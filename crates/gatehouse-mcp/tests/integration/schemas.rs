//! The tools' input schemas, as an assistant reads them: every tool and
//! field described, required fields and enums stated, no references to
//! resolve, and the permission prompt exactly its contract.

use crate::common;

use std::sync::Arc;

use gatehouse_mcp::{GatehouseMcp, McpOptions};
use serde_json::{json, Value};

fn tools() -> Vec<(String, Value, String)> {
    let dir = tempfile::tempdir().unwrap();
    let backend = common::EngineBackend::new(common::engine(&dir));
    GatehouseMcp::new(Arc::new(backend), McpOptions::default())
        .tools()
        .into_iter()
        .map(|t| {
            (
                t.name.to_string(),
                Value::Object((*t.input_schema).clone()),
                t.description.unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn schema(name: &str) -> Value {
    tools().into_iter().find(|(n, _, _)| n == name).map(|(_, s, _)| s).unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn the_server_offers_the_gate_and_plan_tools() {
    let mut names: Vec<String> = tools().into_iter().map(|(n, _, _)| n).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ask_human",
            "check_gate",
            "plan_add_task",
            "plan_assign_task",
            "plan_estimate_duration",
            "plan_propose",
            "plan_read",
            "plan_set_dependencies",
            "plan_update_task",
            "request_approval",
            "request_feedback",
            "request_permission",
            "request_review",
        ]
    );
}

#[test]
fn every_tool_and_every_field_is_described_and_nothing_needs_resolving() {
    for (name, schema, description) in tools() {
        assert!(description.len() > 30, "{name} needs a description");
        assert_eq!(schema["type"], "object", "{name}");
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{name} has references: {text}");
        let mut objects = vec![schema.clone()];
        while let Some(object) = objects.pop() {
            for (field, property) in object["properties"].as_object().into_iter().flatten() {
                let said = property["description"].as_str().unwrap_or_default();
                assert!(said.len() > 10, "{name}.{field} has no description");
                if let Some(items) = property.get("items").filter(|i| i.get("properties").is_some()) {
                    objects.push(items.clone());
                }
            }
        }
    }
}

#[test]
fn required_fields_and_enums_are_stated() {
    let approval = schema("request_approval");
    assert_eq!(approval["required"], json!(["action"]));
    assert_eq!(approval["properties"]["mode"]["enum"], json!(["sync", "async"]));
    assert_eq!(approval["properties"]["urgency"]["enum"], json!(["low", "normal", "high", "urgent"]));
    assert_eq!(approval["properties"]["context"]["type"], json!(["object", "null"]));
    assert_eq!(schema("ask_human")["required"], json!(["question"]));
    assert_eq!(schema("request_feedback")["required"], json!(["artifact"]));
    assert_eq!(schema("request_review")["required"], json!(["output"]));
    assert_eq!(schema("check_gate")["required"], json!(["gate_id"]));
    let propose = schema("plan_propose");
    assert_eq!(propose["required"], json!(["tasks"]));
    let task = &propose["properties"]["tasks"]["items"];
    assert_eq!(task["required"], json!(["task_id", "description"]));
    assert_eq!(task["properties"]["priority"]["enum"], json!(["low", "medium", "high", "critical"]));
    let update = schema("plan_update_task");
    assert_eq!(update["required"], json!(["task_id"]));
    assert!(update["properties"]["status"].to_string().contains("in_progress"));
}

#[test]
fn the_permission_prompt_takes_exactly_its_contracts_fields() {
    let permission = schema("request_permission");
    let mut fields: Vec<&String> = permission["properties"].as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["input", "tool_name", "tool_use_id"]);
    assert_eq!(permission["required"], json!(["tool_name", "input"]));
    assert_eq!(permission["properties"]["input"]["type"], "object");
}
