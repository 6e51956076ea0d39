//! Schemas on gates. Response forms: a gate may say in a JSON Schema what
//! answer it wants (as MCP elicitation and LangGraph's `response_schema`
//! do); the schema is checked when the gate opens, and a reviewer's answer
//! against it before it is recorded, naming the first field that is wrong.
//! Payload schemas: a gate may declare what its payload should look like (a
//! tool's input schema); a payload that does not fit is still shown, with
//! its problems, and a reviewer's edit must fit.

use serde_json::Value;

use crate::error::{EngineError, Result};

/// The largest schema a gate may carry, in bytes of JSON.
const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// Checks that `schema` is a JSON Schema of an object that can be compiled
/// (no remote references are fetched).
pub fn check_schema(schema: &Value) -> Result<()> {
    let Some(object) = schema.as_object() else {
        return Err(EngineError::invalid("response_schema", "must be a JSON Schema object"));
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(EngineError::invalid("response_schema", "must describe an object (`\"type\": \"object\"`)"));
    }
    if serde_json::to_vec(schema).map(|b| b.len()).unwrap_or(usize::MAX) > MAX_SCHEMA_BYTES {
        return Err(EngineError::invalid("response_schema", format!("must be at most {MAX_SCHEMA_BYTES} bytes")));
    }
    jsonschema::validator_for(schema).map(|_| ()).map_err(|e| not_a_schema("response_schema", &e))
}

/// A schema the validator refused, saying where in the schema it went wrong.
fn not_a_schema(field: &str, error: &jsonschema::ValidationError<'_>) -> EngineError {
    let at = error.instance_path().to_string();
    let place = if at.is_empty() { String::new() } else { format!(" at `{at}`") };
    EngineError::invalid(field, format!("is not a valid JSON Schema{place}: {error}"))
}

/// Checks `response` against `schema`, naming the first wrong field as
/// `response.a.b` (or `response` for the whole answer).
pub fn check_response(schema: &Value, response: &Value) -> Result<()> {
    check_against("response_schema", schema, "response", response)
}

/// Checks that a gate's `payload_schema` is a JSON Schema that compiles.
pub fn check_payload_schema(schema: &Value) -> Result<()> {
    if !schema.is_object() {
        return Err(EngineError::invalid("payload_schema", "must be a JSON Schema object"));
    }
    if serde_json::to_vec(schema).map(|b| b.len()).unwrap_or(usize::MAX) > MAX_SCHEMA_BYTES {
        return Err(EngineError::invalid("payload_schema", format!("must be at most {MAX_SCHEMA_BYTES} bytes")));
    }
    jsonschema::validator_for(schema).map(|_| ()).map_err(|e| not_a_schema("payload_schema", &e))
}

/// The most problems kept for one payload.
const MAX_PROBLEMS: usize = 20;

/// Where `payload` breaks `schema`, as `path: what` lines (the whole payload
/// is `payload`), at most [`MAX_PROBLEMS`]; none when it fits.
pub fn payload_problems(schema: &Value, payload: &Value) -> Vec<String> {
    let Ok(validator) = jsonschema::validator_for(schema) else { return Vec::new() };
    validator
        .iter_errors(payload)
        .take(MAX_PROBLEMS)
        .map(|e| format!("{}: {e}", dotted("payload", &e.instance_path().to_string())))
        .collect()
}

/// Checks an edited payload against the gate's `payload_schema`, naming the first wrong field.
pub fn check_payload(schema: &Value, payload: &Value) -> Result<()> {
    check_against("payload_schema", schema, "payload", payload)
}

fn check_against(schema_field: &str, schema: &Value, root: &str, instance: &Value) -> Result<()> {
    let validator = jsonschema::validator_for(schema).map_err(|e| not_a_schema(schema_field, &e))?;
    let Some(error) = validator.iter_errors(instance).next() else { return Ok(()) };
    Err(EngineError::invalid(dotted(root, &error.instance_path().to_string()), error.to_string()))
}

/// A JSON pointer as `root.a.b`.
fn dotted(root: &str, pointer: &str) -> String {
    pointer.split('/').filter(|p| !p.is_empty()).fold(root.to_owned(), |mut f, p| {
        f.push('.');
        f.push_str(&p.replace("~1", "/").replace("~0", "~"));
        f
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "enum": ["eu", "us"], "default": "eu"},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "canary": {"type": "boolean"},
                "owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}},
                          "required": ["email"]}
            },
            "required": ["region", "replicas"]
        })
    }

    fn field_of(r: Result<()>) -> String {
        match r {
            Err(EngineError::Invalid { field, .. }) => field,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn an_answer_the_form_accepts_passes() {
        check_schema(&form()).unwrap();
        check_response(&form(), &json!({"region": "us", "replicas": 3, "owner": {"email": "a@b.c"}})).unwrap();
    }

    #[test]
    fn a_wrong_answer_names_its_field() {
        assert_eq!(field_of(check_response(&form(), &json!({"region": "mars", "replicas": 3}))), "response.region");
        assert_eq!(field_of(check_response(&form(), &json!({"region": "eu", "replicas": 0}))), "response.replicas");
        assert_eq!(field_of(check_response(&form(), &json!({"region": "eu"}))), "response");
        assert_eq!(
            field_of(check_response(&form(), &json!({"region": "eu", "replicas": 1, "owner": {}}))),
            "response.owner"
        );
        assert_eq!(field_of(check_response(&form(), &json!("eu"))), "response");
    }

    #[test]
    fn a_payload_off_its_schema_lists_its_problems_and_an_edit_must_fit() {
        let schema = json!({"type": "object", "required": ["image"], "properties": {"width": {"type": "integer", "maximum": 4096}}});
        check_payload_schema(&schema).unwrap();
        let problems = payload_problems(&schema, &json!({"width": 9000}));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("payload.width: ")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("payload: ") && p.contains("image")), "{problems:?}");
        assert!(payload_problems(&schema, &json!({"image": "a.png", "width": 100})).is_empty());
        assert_eq!(field_of(check_payload(&schema, &json!({"image": "a.png", "width": 9000}))), "payload.width");
        assert_eq!(field_of(check_payload_schema(&json!({"type": 7}))), "payload_schema");
    }

    #[test]
    fn only_compilable_object_schemas_are_forms() {
        for bad in
            [json!("string"), json!({"type": "string"}), json!({"type": "object", "properties": {"a": {"type": 7}}})]
        {
            assert_eq!(field_of(check_schema(&bad)), "response_schema", "{bad}");
        }
        let err = check_schema(&json!({"type": "object", "properties": {"a": {"type": 7}}})).unwrap_err();
        assert!(
            err.to_string().starts_with("response_schema: is not a valid JSON Schema at `/properties/a/type`: 7 "),
            "{err}"
        );
    }
}
