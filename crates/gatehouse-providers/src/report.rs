//! A payload's validation report: every issue, named by field, with its
//! severity, and the fixes suggested for some of them. The checking itself
//! is in `validate.rs`; an error carries a report, so this module stands
//! below both.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::request::Payload;

/// How serious an issue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The schema forbids it: the provider will likely refuse the payload.
    Error,
    /// Allowed, but probably a mistake (a field the tool does not know).
    Warning,
}

/// What kind of problem a field has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    /// A required field is absent.
    Missing,
    /// A field the schema does not describe.
    Unexpected,
    /// A field of the wrong type, format or range.
    Invalid,
}

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationIssue {
    /// The field's path in the payload (`input_image`, `messages.0.content`;
    /// `payload` for the whole).
    pub field: String,
    /// What kind of problem.
    pub kind: IssueKind,
    /// Whether it fails validation.
    pub severity: Severity,
    /// What is wrong, for the reviewer.
    pub message: String,
}

/// A change to the payload that would fix an issue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fix", rename_all = "snake_case")]
pub enum Fix {
    /// Move a field's value to another name.
    MapField {
        /// The field the schema lacks.
        from: String,
        /// The field it probably meant.
        to: String,
    },
    /// Add a missing field.
    AddField {
        /// The field.
        field: String,
        /// Its suggested value.
        value: Value,
    },
}

/// A suggested fix, with the sentence a reviewer reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The change.
    #[serde(flatten)]
    pub fix: Fix,
    /// Why, in a sentence.
    pub message: String,
}

impl Suggestion {
    /// Applies the fix to `payload`: a mapping moves the value (over the
    /// example's, if `to` still had it); an added field never overwrites.
    pub fn apply(&self, payload: &mut Payload) {
        let fields = payload.fields_mut();
        match &self.fix {
            Fix::MapField { from, to } => {
                if let Some(value) = fields.remove(from) {
                    fields.insert(to.clone(), value);
                }
            }
            Fix::AddField { field, value } => {
                fields.entry(field.clone()).or_insert_with(|| value.clone());
            }
        }
    }
}

/// The result of validating a payload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ValidationReport {
    /// Whether no issue is an error.
    pub valid: bool,
    /// Every issue, errors first.
    pub issues: Vec<ValidationIssue>,
    /// Fixes for some of them.
    pub suggestions: Vec<Suggestion>,
}
