//! The information step (the information agent): before anything
//! is sent, how sure Gatehouse is that the request can be carried out as
//! asked, why, what is unsafe in it, and what settings would help. The
//! check is deterministic and explains every point it takes off, so a
//! reviewer can see why the run stopped:
//!
//! - a prompt of fewer than [`SHORT_PROMPT_WORDS`] words leaves the model
//!   guessing: 0.35 off;
//! - a payload that cannot be prepared, or each field failing the tool's
//!   schema: 0.3 off each (0.6 at most); each field the tool does not know,
//!   and each suggested fix: 0.15 off (0.3 at most each); the suggested
//!   fixes become the recommended settings;
//! - personal data or credential-like strings in the prompt or inputs are
//!   safety flags (they take nothing off; policies list the flags they stop on).
//!
//! A caller with its own information step sends its assessment with the
//! run; the lower confidence and both sets of reasons and flags count.

use gatehouse_providers::{audit, Fix, Payload, ProviderError, RunInput, Severity, ValidationReport};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Below this many words a prompt counts as ambiguous.
pub const SHORT_PROMPT_WORDS: usize = 3;

/// Confidence under which the information step asks for review even when
/// it found no single reason.
pub const CONFIDENT: f64 = 0.8;

/// What the information step found (the information agent's additions to its response).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// 0..1: how sure the request can be carried out as asked.
    pub confidence: f64,
    /// Why to continue or pause.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// NSFW, PII risk, copyright risk...
    #[serde(default)]
    pub safety_flags: Vec<String>,
    /// Suggested overrides (payload fields and their values).
    #[serde(default)]
    pub recommended_settings: Map<String, Value>,
}

impl Assessment {
    /// Whether a reviewer should look before the run goes on.
    pub fn has_concerns(&self) -> bool {
        self.confidence < CONFIDENT || !self.reasons.is_empty() || !self.safety_flags.is_empty()
    }

    /// This assessment with `other`'s findings: the lower confidence, every reason, flag and setting once.
    pub fn merged(mut self, other: &Assessment) -> Self {
        self.confidence = self.confidence.min(other.confidence);
        for reason in &other.reasons {
            if !self.reasons.contains(reason) {
                self.reasons.push(reason.clone());
            }
        }
        for flag in &other.safety_flags {
            if !self.safety_flags.iter().any(|f| f.eq_ignore_ascii_case(flag)) {
                self.safety_flags.push(flag.clone());
            }
        }
        for (k, v) in &other.recommended_settings {
            self.recommended_settings.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self
    }
}

/// Assesses `input` given the payload it prepares to (or why it could not).
pub fn assess(input: &RunInput, prepared: Result<(&Payload, &ValidationReport), &ProviderError>) -> Assessment {
    let mut confidence: f64 = 1.0;
    let mut reasons = Vec::new();
    let words = input.prompt.split_whitespace().count();
    if words < SHORT_PROMPT_WORDS {
        confidence -= 0.35;
        let plural = if words == 1 { "" } else { "s" };
        reasons.push(format!(
            "The prompt is very short ({words} word{plural}): the model may have to guess what is wanted."
        ));
    }
    let mut settings = Map::new();
    match prepared {
        Err(error) => {
            confidence -= 0.3;
            reasons.push(format!("No payload can be prepared yet: {error}."));
        }
        Ok((payload, report)) => {
            let errors: Vec<_> = report.errors().collect();
            confidence -= (0.3 * errors.len() as f64).min(0.6);
            for issue in errors {
                reasons.push(format!("`{}`: {}", issue.field, issue.message));
            }
            let warnings = report.issues.len() - report.errors().count();
            confidence -= (0.15 * warnings as f64).min(0.3);
            for issue in report.issues.iter().filter(|i| i.severity == Severity::Warning) {
                reasons.push(issue.message.clone());
            }
            confidence -= (0.15 * report.suggestions.len() as f64).min(0.3);
            for suggestion in &report.suggestions {
                reasons.push(format!("Suggested: {}", suggestion.message));
            }
            for suggestion in &report.suggestions {
                match &suggestion.fix {
                    Fix::MapField { from, to } => {
                        if let Some(value) = payload.get(from) {
                            settings.insert(to.clone(), value.clone());
                        }
                    }
                    Fix::AddField { field, value } => {
                        settings.insert(field.clone(), value.clone());
                    }
                }
            }
        }
    }
    let mut text = input.prompt.clone();
    for value in input.inputs.values() {
        text.push('\n');
        match value {
            Value::String(s) => text.push_str(s),
            other => text.push_str(&other.to_string()),
        }
    }
    let mut safety_flags: Vec<String> = Vec::new();
    for flag in audit::scan(&text) {
        reasons.push(format!("The request contains {} ({}).", flag.detail, flag.flag.as_str()));
        let name = flag.flag.as_str().to_owned();
        if !safety_flags.contains(&name) {
            safety_flags.push(name);
        }
    }
    Assessment { confidence: confidence.clamp(0.0, 1.0), reasons, safety_flags, recommended_settings: settings }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_providers::{Provider, ProviderRegistry};

    fn check(tool: &str, prompt: &str, inputs: Value) -> Assessment {
        let registry = ProviderRegistry::from_lookup(|_| None).unwrap();
        let found = registry.resolve(tool).unwrap();
        let input = RunInput {
            tool: tool.into(),
            prompt: prompt.into(),
            inputs: inputs.as_object().cloned().unwrap_or_default(),
            ..RunInput::default()
        };
        let provider: &dyn Provider = found.provider.as_ref();
        match provider.prepare(found.tool, &input) {
            Ok(payload) => {
                let report = provider.validate(found.tool, &payload);
                assess(&input, Ok((&payload, &report)))
            }
            Err(e) => assess(&input, Err(&e)),
        }
    }

    #[test]
    fn a_clear_request_has_no_concerns() {
        let a = check("scripted:chat", "Summarise the release notes for the beta", Value::Null);
        assert_eq!(a.confidence, 1.0);
        assert!(!a.has_concerns(), "{a:?}");
    }

    #[test]
    fn a_short_prompt_is_ambiguous() {
        let a = check("scripted:chat", "do it", Value::Null);
        assert!((a.confidence - 0.65).abs() < 1e-9);
        assert!(a.reasons[0].starts_with("The prompt is very short (2 words)"));
        assert!(a.has_concerns());
    }

    #[test]
    fn personal_data_is_flagged_without_being_quoted() {
        let a = check("scripted:chat", "Write to jane.doe@example.com about the launch", Value::Null);
        assert_eq!(a.safety_flags, ["pii"]);
        assert!(a.reasons.iter().all(|r| !r.contains("jane.doe")), "{:?}", a.reasons);
        assert_eq!(a.confidence, 1.0);
        assert!(a.has_concerns());
    }

    #[test]
    fn schema_failures_lower_confidence_and_recommend_the_fix() {
        let a = check(
            "scripted:caption",
            "Describe this picture in one line",
            serde_json::json!({"image_file": "https://example.com/cat.png"}),
        );
        assert!(a.confidence < CONFIDENT, "{a:?}");
        assert!(a.reasons.iter().any(|r| r.contains("input_image")), "{:?}", a.reasons);
        assert_eq!(a.recommended_settings.get("input_image"), Some(&Value::from("https://example.com/cat.png")));
    }

    #[test]
    fn a_callers_assessment_adds_to_gatehouses() {
        let own = check("scripted:chat", "Summarise the release notes for the beta", Value::Null);
        let theirs = Assessment {
            confidence: 0.4,
            reasons: vec!["copyrighted lyrics requested".into()],
            safety_flags: vec!["copyright".into()],
            recommended_settings: Map::new(),
        };
        let merged = own.merged(&theirs);
        assert_eq!((merged.confidence, merged.safety_flags.as_slice()), (0.4, &["copyright".to_owned()][..]));
        assert!(merged.has_concerns());
    }
}
