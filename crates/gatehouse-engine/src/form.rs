//! Response forms: a gate may say in a JSON Schema what answer it wants (as
//! MCP elicitation and LangGraph's `response_schema` do). The schema is
//! checked when the gate opens, and a reviewer's answer against it before
//! it is recorded, naming the first field that is wrong.

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
    jsonschema::validator_for(schema)
        .map(|_| ())
        .map_err(|e| EngineError::invalid("response_schema", format!("is not a valid JSON Schema: {e}")))
}

/// Checks `response` against `schema`, naming the first wrong field as
/// `response.a.b` (or `response` for the whole answer).
pub fn check_response(schema: &Value, response: &Value) -> Result<()> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| EngineError::invalid("response_schema", format!("is not a valid JSON Schema: {e}")))?;
    let Some(error) = validator.iter_errors(response).next() else { return Ok(()) };
    let path = error.instance_path.to_string();
    let field = path.split('/').filter(|p| !p.is_empty()).fold("response".to_owned(), |mut f, p| {
        f.push('.');
        f.push_str(&p.replace("~1", "/").replace("~0", "~"));
        f
    });
    Err(EngineError::invalid(field, error.to_string()))
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
    fn only_compilable_object_schemas_are_forms() {
        for bad in
            [json!("string"), json!({"type": "string"}), json!({"type": "object", "properties": {"a": {"type": 7}}})]
        {
            assert_eq!(field_of(check_schema(&bad)), "response_schema", "{bad}");
        }
    }
}
