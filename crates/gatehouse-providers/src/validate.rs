//! Payload validation for the payload review: every way a payload breaks
//! its tool's input schema, named by field, and the fixes it
//! suggests: map a field the schema lacks to a similarly named one it wants
//! (`image_file` to `input_image`), or add a missing required field from
//! the tool's example input or the schema's default.

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value};

use crate::error::ProviderError;
use crate::report::{Fix, IssueKind, Severity, Suggestion, ValidationIssue, ValidationReport};
use crate::request::{Payload, Tool};
use crate::similar::field_similarity;

impl ValidationReport {
    /// The issues that fail validation.
    pub fn errors(&self) -> impl Iterator<Item = &ValidationIssue> {
        self.issues.iter().filter(|issue| issue.severity == Severity::Error)
    }

    /// The first error and how many more there are, in one line.
    pub fn summary(&self) -> String {
        let mut errors = self.errors();
        match (errors.next(), errors.count()) {
            (None, _) => "valid".to_owned(),
            (Some(first), 0) => format!("`{}`: {}", first.field, first.message),
            (Some(first), more) => format!("`{}`: {} (and {more} more)", first.field, first.message),
        }
    }

    /// `Ok` when valid, otherwise [`ProviderError::InvalidPayload`] carrying this report.
    pub fn into_result(self, tool: &str) -> Result<(), ProviderError> {
        if self.valid {
            Ok(())
        } else {
            Err(ProviderError::InvalidPayload { tool: tool.to_owned(), report: self })
        }
    }
}

/// Validates `payload` against `tool`'s input schema (no remote references
/// are fetched) and suggests fixes.
pub fn check(tool: &Tool, payload: &Payload) -> ValidationReport {
    let instance = payload.to_value();
    let mut issues = match jsonschema::validator_for(&tool.input_schema) {
        Ok(validator) => validator.iter_errors(&instance).flat_map(|error| issues_of(&error)).collect(),
        Err(error) => vec![ValidationIssue {
            field: "payload".to_owned(),
            kind: IssueKind::Invalid,
            severity: Severity::Error,
            message: format!("the tool's input schema cannot be compiled: {error}"),
        }],
    };
    let properties = tool.input_schema.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties {
        for field in payload.fields().keys().filter(|f| !properties.contains_key(*f)) {
            if !issues.iter().any(|issue| &issue.field == field) {
                issues.push(ValidationIssue {
                    field: field.clone(),
                    kind: IssueKind::Unexpected,
                    severity: Severity::Warning,
                    message: format!("`{field}` is not an input of this tool; the provider may ignore it"),
                });
            }
        }
    }
    issues.sort_by_key(|issue| issue.severity != Severity::Error);
    let suggestions = properties.map(|p| suggest(tool, payload, p)).unwrap_or_default();
    ValidationReport { valid: !issues.iter().any(|i| i.severity == Severity::Error), issues, suggestions }
}

fn issues_of(error: &jsonschema::ValidationError<'_>) -> Vec<ValidationIssue> {
    let at = dotted(error.instance_path().as_str());
    let issue = |field: String, kind, message| ValidationIssue { field, kind, severity: Severity::Error, message };
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
            vec![issue(join(&at, &name), IssueKind::Missing, format!("`{name}` is required; add it to the payload"))]
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| issue(join(&at, name), IssueKind::Unexpected, format!("`{name}` is not an input of this tool")))
            .collect(),
        _ => vec![issue(if at.is_empty() { "payload".to_owned() } else { at }, IssueKind::Invalid, error.to_string())],
    }
}

/// A JSON pointer (`/messages/0/content`) as a dotted path (`messages.0.content`).
fn dotted(pointer: &str) -> String {
    let parts: Vec<String> =
        pointer.split('/').filter(|p| !p.is_empty()).map(|p| p.replace("~1", "/").replace("~0", "~")).collect();
    parts.join(".")
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// Field mappings first (a value the reviewer already gave, under the
/// wrong name), then values for required fields still missing.
fn suggest(tool: &Tool, payload: &Payload, properties: &Map<String, Value>) -> Vec<Suggestion> {
    let fields = payload.fields();
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let unknown: Vec<&String> = fields.keys().filter(|f| !properties.contains_key(*f)).collect();
    // A field still holding the example's value is as good as missing: the
    // reviewer's own value under the wrong name would be silently ignored.
    let untouched = |p: &String| fields.get(p).is_some_and(|v| tool.example_input.get(p) == Some(v));
    let missing: Vec<(usize, &String)> =
        properties.keys().enumerate().filter(|(_, p)| !fields.contains_key(*p) || untouched(p)).collect();

    // Every plausible (missing, unknown) pair, best first: most similar,
    // then required fields before optional ones, then schema order.
    let mut pairs = Vec::new();
    for &(order, target) in &missing {
        for (rank, &source) in unknown.iter().enumerate() {
            let score = field_similarity(source, target);
            if score > 0 && fits(&properties[target], &fields[source]) {
                pairs.push((score, !required.contains(&target.as_str()), order, rank, source, target));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.cmp(&a.0).then((a.1, a.2, a.3).cmp(&(b.1, b.2, b.3))));

    let mut suggestions = Vec::new();
    let (mut used, mut mapped) = (Vec::new(), Vec::new());
    for (_, optional, _, _, source, target) in pairs {
        if used.contains(&source) || mapped.contains(&target) {
            continue;
        }
        used.push(source);
        mapped.push(target);
        let why = match (untouched(target), optional) {
            (true, _) => "still has the example's value",
            (false, true) => "is an optional input",
            (false, false) => "is a required input",
        };
        suggestions.push(Suggestion {
            fix: Fix::MapField { from: source.clone(), to: target.clone() },
            message: format!("Map `{source}` to `{target}`: the tool does not know `{source}`, and `{target}` {why}"),
        });
    }
    for name in required.iter().filter(|r| !fields.contains_key(**r) && !mapped.iter().any(|m| m == *r)) {
        let (value, source) =
            match (tool.example_input.get(*name), properties.get(*name).and_then(|p| p.get("default"))) {
                (Some(example), _) => (example.clone(), "the tool's example input"),
                (None, Some(default)) => (default.clone(), "the schema's default"),
                (None, None) => continue,
            };
        suggestions.push(Suggestion {
            message: format!("Add `{name}` to the payload: {source} has {value}"),
            fix: Fix::AddField { field: (*name).to_owned(), value },
        });
    }
    suggestions
}

/// Whether `value` is acceptable to the property's own schema; a property
/// schema that cannot be compiled alone (a `$ref` into the root) passes.
fn fits(property: &Value, value: &Value) -> bool {
    jsonschema::validator_for(property).map(|validator| validator.is_valid(value)).unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn captioner() -> Tool {
        Tool::new(
            "replicate:captioner",
            "owner/captioner",
            json!({
                "type": "object",
                "properties": {
                    "prompt": {"type": "string", "minLength": 1},
                    "input_image": {"type": "string", "format": "uri"},
                    "seed": {"type": "integer"},
                    "temperature": {"type": "number", "minimum": 0, "maximum": 2, "default": 0.7}
                },
                "required": ["prompt", "input_image", "temperature"]
            }),
        )
        .with_example(json!({"prompt": "a cat", "input_image": "https://example.com/cat.png"}))
    }

    fn payload(value: Value) -> Payload {
        Payload::from_value(value).unwrap()
    }

    #[test]
    fn a_payload_the_schema_accepts_is_valid_with_nothing_to_suggest() {
        let report = check(
            &captioner(),
            &payload(json!({"prompt": "a dog", "input_image": "https://e.com/d.png", "temperature": 1})),
        );
        assert!(report.valid, "{report:?}");
        assert!(report.issues.is_empty() && report.suggestions.is_empty());
        assert_eq!(report.summary(), "valid");
    }

    #[test]
    fn image_file_is_suggested_as_input_image_and_the_fix_makes_the_payload_valid() {
        let tool = captioner();
        let mut sent = payload(json!({"prompt": "a dog", "image_file": "https://e.com/d.png", "temperature": 1}));
        let report = check(&tool, &sent);
        assert!(!report.valid);
        let missing = report.errors().next().unwrap();
        assert_eq!((missing.field.as_str(), missing.kind), ("input_image", IssueKind::Missing));
        let warning = report.issues.iter().find(|i| i.field == "image_file").unwrap();
        assert_eq!((warning.kind, warning.severity), (IssueKind::Unexpected, Severity::Warning));
        assert_eq!(report.suggestions.len(), 1, "{:?}", report.suggestions);
        let mapping = &report.suggestions[0];
        assert_eq!(mapping.fix, Fix::MapField { from: "image_file".into(), to: "input_image".into() });
        assert!(mapping.message.starts_with("Map `image_file` to `input_image`"), "{}", mapping.message);

        mapping.apply(&mut sent);
        assert_eq!(sent.get("input_image"), Some(&json!("https://e.com/d.png")));
        assert!(check(&tool, &sent).valid);
    }

    #[test]
    fn a_field_still_holding_the_examples_value_is_a_mapping_target() {
        let tool = captioner();
        let mut sent = payload(json!({"prompt": "a dog", "input_image": "https://example.com/cat.png",
                                      "image_file": "https://e.com/dog.png", "temperature": 1}));
        let report = check(&tool, &sent);
        assert!(report.valid, "only a warning: {report:?}");
        assert_eq!(report.suggestions[0].fix, Fix::MapField { from: "image_file".into(), to: "input_image".into() });
        assert!(report.suggestions[0].message.ends_with("still has the example's value"));
        report.suggestions[0].apply(&mut sent);
        assert_eq!(sent.get("input_image"), Some(&json!("https://e.com/dog.png")));
        assert_eq!(sent.get("image_file"), None);

        // A value the reviewer chose is not replaced.
        let chosen = payload(json!({"prompt": "p", "input_image": "https://e.com/mine.png",
                                    "image_file": "https://e.com/dog.png", "temperature": 1}));
        assert!(check(&tool, &chosen).suggestions.is_empty());
    }

    #[test]
    fn a_missing_required_field_is_offered_from_the_example_then_the_default() {
        let tool = captioner();
        let report = check(&tool, &payload(json!({"input_image": "https://e.com/d.png"})));
        let fixes: Vec<&Fix> = report.suggestions.iter().map(|s| &s.fix).collect();
        assert_eq!(
            fixes,
            [
                &Fix::AddField { field: "prompt".into(), value: json!("a cat") },
                &Fix::AddField { field: "temperature".into(), value: json!(0.7) },
            ]
        );
        assert_eq!(report.summary(), "`prompt`: `prompt` is required; add it to the payload (and 1 more)");
    }

    #[test]
    fn a_dissimilar_or_ill_typed_extra_field_is_not_suggested() {
        let report = check(&captioner(), &payload(json!({"prompt": "p", "temperature": 1, "steps": 30})));
        assert!(report.suggestions.iter().all(|s| !matches!(s.fix, Fix::MapField { .. })), "{report:?}");
        // Similar name, but a number cannot be the image's URI.
        let report = check(&captioner(), &payload(json!({"prompt": "p", "temperature": 1, "image_file": 3})));
        assert!(report.suggestions.iter().all(|s| !matches!(s.fix, Fix::MapField { .. })), "{report:?}");
    }

    #[test]
    fn a_wrong_value_names_its_nested_field() {
        let tool = Tool::new(
            "chat",
            "m",
            json!({"type": "object", "properties": {"messages": {"type": "array", "items": {
                "type": "object", "properties": {"content": {"type": "string"}}}}}}),
        );
        let report = check(&tool, &payload(json!({"messages": [{"content": "ok"}, {"content": 7}]})));
        let error = report.errors().next().unwrap();
        assert_eq!((error.field.as_str(), error.kind), ("messages.1.content", IssueKind::Invalid));
        assert!(error.message.contains("string"), "{}", error.message);
    }

    #[test]
    fn a_closed_schema_makes_an_unknown_field_an_error_and_a_broken_schema_is_reported() {
        let closed = Tool::new("t", "m", json!({"type": "object", "properties": {}, "additionalProperties": false}));
        let report = check(&closed, &payload(json!({"x": 1})));
        assert_eq!(report.issues.len(), 1, "{report:?}");
        assert_eq!((report.issues[0].kind, report.issues[0].severity), (IssueKind::Unexpected, Severity::Error));

        let broken = Tool::new("t", "m", json!({"type": "object", "properties": {"a": {"type": 7}}}));
        let error = check(&broken, &payload(json!({}))).into_result("t").unwrap_err();
        assert_eq!(error.field(), Some("payload"));
        assert!(error.to_string().contains("cannot be compiled"), "{error}");
    }
}
