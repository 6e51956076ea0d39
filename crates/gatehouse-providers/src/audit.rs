//! The response audit (the response audit agent): the model's raw
//! text beside a cleaned copy, with quality indicators (empty, cut short,
//! a refusal, reasoning removed) and safety flags (personal data, secrets,
//! the provider's content filter) for the response review. Deterministic:
//! the same response always audits the same way.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::response::{FinishReason, ProviderResponse};

/// What a safety flag is about; serialized as the names run policies use
/// in `safety_flags` thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyKind {
    /// Personal data: email addresses, phone numbers, card numbers.
    Pii,
    /// Something that looks like a credential.
    Secret,
    /// The provider's content filter acted on the answer.
    ContentFilter,
}

impl SafetyKind {
    /// The flag's name (`pii`, `secret`, `content_filter`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pii => "pii",
            Self::Secret => "secret",
            Self::ContentFilter => "content_filter",
        }
    }
}

/// One safety concern. The detail never quotes the matched text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SafetyFlag {
    /// What it is about.
    pub flag: SafetyKind,
    /// What was found, for the reviewer.
    pub detail: String,
}

/// Quality indicators of an answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quality {
    /// Nothing left after cleaning.
    pub empty: bool,
    /// Cut short by the token limit.
    pub truncated: bool,
    /// The model declined.
    pub refusal: bool,
    /// `<think>` reasoning was removed from the cleaned text.
    pub reasoning_removed: bool,
    /// Characters in the cleaned text.
    pub characters: usize,
    /// Words in the cleaned text.
    pub words: usize,
}

/// An answer ready for the response review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditedResponse {
    /// The text as the model returned it.
    pub raw: String,
    /// The text a reviewer accepts or edits.
    pub cleaned: String,
    /// Quality indicators.
    pub quality: Quality,
    /// Safety concerns, if any.
    pub safety_flags: Vec<SafetyFlag>,
}

impl AuditedResponse {
    /// Whether any flag is of `kind`.
    pub fn is_flagged(&self, kind: SafetyKind) -> bool {
        self.safety_flags.iter().any(|f| f.flag == kind)
    }
}

static REASONING: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<think>.*?</think>").expect("valid regex"));
static BLANK_LINES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\n{3,}").expect("valid regex"));
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}").expect("valid"));
static PHONE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\+\d[\d ().-]{7,16}\d").expect("valid regex"));
static CARD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b\d(?:[ -]?\d){12,18}\b").expect("valid regex"));
static SECRET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"sk-[A-Za-z0-9_-]{20,}|r8_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}",
        r"|gh[pousr]_[A-Za-z0-9]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY-----",
    ))
    .expect("valid regex")
});
const REFUSALS: &[&str] = &[
    "i'm sorry, but i can't",
    "i’m sorry, but i can’t",
    "i'm sorry, but i cannot",
    "i cannot help with",
    "i can't help with",
    "i can't assist with",
    "i cannot assist with",
    "i won't be able to help",
];

/// Audits a provider's answer.
pub fn audit(response: &ProviderResponse) -> AuditedResponse {
    let raw = response.text.clone();
    let normalized = raw.replace("\r\n", "\n");
    let without_reasoning = REASONING.replace_all(&normalized, "");
    let reasoning_removed = without_reasoning.len() != normalized.len();
    let trimmed_lines: Vec<&str> = without_reasoning.lines().map(str::trim_end).collect();
    let cleaned = BLANK_LINES.replace_all(&trimmed_lines.join("\n"), "\n\n").trim().to_owned();

    let lowered = cleaned.to_lowercase();
    let quality = Quality {
        empty: cleaned.is_empty(),
        truncated: response.finish == FinishReason::Length,
        refusal: response.finish == FinishReason::Refusal || REFUSALS.iter().any(|r| lowered.starts_with(r)),
        reasoning_removed,
        characters: cleaned.chars().count(),
        words: cleaned.split_whitespace().count(),
    };
    AuditedResponse { safety_flags: safety_flags(&cleaned, response.finish), raw, cleaned, quality }
}

/// Safety concerns in any text (a prompt, a run's inputs): personal data
/// and credential-like strings, never quoting them.
pub fn scan(text: &str) -> Vec<SafetyFlag> {
    safety_flags(text, FinishReason::Stop)
}

fn safety_flags(text: &str, finish: FinishReason) -> Vec<SafetyFlag> {
    let mut flags = Vec::new();
    let mut flag = |flag, count: usize, what: &str| {
        if count > 0 {
            let plural = if count == 1 { "" } else { "s" };
            flags.push(SafetyFlag { flag, detail: format!("{count} {what}{plural}") });
        }
    };
    flag(SafetyKind::Pii, EMAIL.find_iter(text).count(), "email address");
    flag(SafetyKind::Pii, PHONE.find_iter(text).count(), "phone number");
    flag(SafetyKind::Pii, CARD.find_iter(text).filter(|m| luhn(m.as_str())).count(), "payment card number");
    flag(SafetyKind::Secret, SECRET.find_iter(text).count(), "credential-like string");
    if finish == FinishReason::ContentFilter {
        flags.push(SafetyFlag {
            flag: SafetyKind::ContentFilter,
            detail: "the provider's content filter withheld part of the answer".to_owned(),
        });
    }
    flags
}

/// Whether a run of digits passes the Luhn check card numbers carry.
fn luhn(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|c| c.to_digit(10)).collect();
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                if d * 2 > 9 {
                    d * 2 - 9
                } else {
                    d * 2
                }
            } else {
                d
            }
        })
        .sum();
    digits.len() >= 13 && sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn response(text: &str, finish: FinishReason) -> ProviderResponse {
        ProviderResponse {
            provider: "scripted".into(),
            id: None,
            model: None,
            text: text.into(),
            finish,
            usage: None,
            raw: Value::Null,
            attempts: 1,
            latency_ms: 0,
        }
    }

    #[test]
    fn cleaning_drops_reasoning_and_extra_blank_lines_but_keeps_the_raw_text() {
        let raw = "<think>the user wants\na haiku</think>\r\n\r\nOld pond,   \n\n\n\nfrog jumps in.\n";
        let audited = audit(&response(raw, FinishReason::Stop));
        assert_eq!(audited.raw, raw);
        assert_eq!(audited.cleaned, "Old pond,\n\nfrog jumps in.");
        assert!(audited.quality.reasoning_removed);
        assert_eq!((audited.quality.words, audited.quality.characters), (5, 25));
        assert!(audited.safety_flags.is_empty());
    }

    #[test]
    fn truncation_refusal_and_emptiness_are_indicated() {
        assert!(audit(&response("half an ans", FinishReason::Length)).quality.truncated);
        assert!(audit(&response("I'm sorry, but I can't help with that.", FinishReason::Stop)).quality.refusal);
        assert!(audit(&response("", FinishReason::Refusal)).quality.refusal);
        assert!(audit(&response("<think>hmm</think>  ", FinishReason::Stop)).quality.empty);
        assert!(!audit(&response("Sure: I can't see why not.", FinishReason::Stop)).quality.refusal);
    }

    #[test]
    fn personal_data_and_secrets_are_flagged_without_quoting_them() {
        let text = "Mail ada@example.org or call +44 20 7946 0958; card 4111 1111 1111 1111; \
                    key sk-abcdefghijklmnopqrstuvwxyz123456";
        let audited = audit(&response(text, FinishReason::ContentFilter));
        let flags: Vec<(&str, &str)> =
            audited.safety_flags.iter().map(|f| (f.flag.as_str(), f.detail.as_str())).collect();
        assert_eq!(
            flags,
            [
                ("pii", "1 email address"),
                ("pii", "1 phone number"),
                ("pii", "1 payment card number"),
                ("secret", "1 credential-like string"),
                ("content_filter", "the provider's content filter withheld part of the answer"),
            ]
        );
        assert!(audited.is_flagged(SafetyKind::Secret));
    }

    #[test]
    fn digits_failing_the_luhn_check_are_not_a_card() {
        assert!(luhn("4111111111111111"));
        assert!(!luhn("4111111111111112"));
        assert!(audit(&response("order 1234 5678 9012 3456", FinishReason::Stop)).safety_flags.is_empty());
    }
}
