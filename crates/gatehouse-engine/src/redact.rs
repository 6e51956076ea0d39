//! Secret redaction for payload snapshots, so stored gates and recordings never hold secrets.
//! Key patterns blank the whole value under a secret-looking object key; value patterns blank
//! secret-looking substrings inside every string, wherever it sits in the JSON.

use std::borrow::Cow;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// Text that replaces a secret.
pub const DEFAULT_REPLACEMENT: &str = "[REDACTED]";

/// Built-in key patterns, matched case-insensitively against whole object keys. Anchored so
/// that `max_tokens`, `token_count` or `password_policy_url` are kept.
pub const DEFAULT_KEY_PATTERNS: &[&str] = &[
    r"^(.*[_-])?(api[_-]?key|secret|password|passwd|pwd|access[_-]?token|refresh[_-]?token|auth[_-]?token|token|authorization|private[_-]?key|credentials?|client[_-]?secret|cookie)$",
];

/// Built-in value patterns, applied in order. When a match has a capture group named
/// `secret` that took part, only that group is replaced (keeping e.g. `Bearer `, `password=`
/// or `https://user:`); otherwise the whole match is. URL credentials come before `key=value`
/// assignments so `https://x-access-token:tok@host` keeps its `@host`.
pub const DEFAULT_VALUE_PATTERNS: &[&str] = &[
    r"\b[Bb]earer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)",
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    r"\bxox[baprs]-[A-Za-z0-9-]{10,}",
    r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s/@]+)@",
    r#"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token)["']?\s*[=:]\s*["']?(?P<secret>[^\s"'&]+)"#,
    r"(?s)-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?P<secret>.*?)(?:-----END|$)",
];

/// Which patterns to use. Missing fields fall back to the built-ins, so a config that only
/// sets `value_patterns` still redacts secret keys.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RedactionConfig {
    /// Regexes matched case-insensitively against object keys.
    pub key_patterns: Vec<String>,
    /// Regexes matched inside every string value (case-sensitive unless they say `(?i)`).
    pub value_patterns: Vec<String>,
    /// Text that replaces each secret.
    pub replacement: String,
}

impl Default for RedactionConfig {
    fn default() -> Self {
        let owned = |ps: &[&str]| ps.iter().map(|p| p.to_string()).collect();
        Self {
            key_patterns: owned(DEFAULT_KEY_PATTERNS),
            value_patterns: owned(DEFAULT_VALUE_PATTERNS),
            replacement: DEFAULT_REPLACEMENT.to_owned(),
        }
    }
}

/// Why a [`RedactionConfig`] could not be compiled.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RedactError {
    /// A pattern is empty, is not a valid regex, or the set of them is too large.
    #[error("invalid redaction pattern `{pattern}`: {reason}")]
    BadPattern {
        /// The offending pattern (all of them, joined by ` | `, for a size-limit failure).
        pattern: String,
        /// The regex compiler's explanation.
        reason: String,
    },
    /// The replacement is empty; readers could not tell a secret was removed, and an empty
    /// marker cannot be recognised when redacting again.
    #[error("redaction replacement must not be empty")]
    EmptyReplacement,
}

/// A compiled redaction configuration; cheap to clone and share.
#[derive(Debug, Clone)]
pub struct Redactor {
    keys: RegexSet,
    // One scan of the set tells which value patterns can match, so clean strings cost a
    // single pass and only matching patterns run their (slower) capture search.
    values: RegexSet,
    value_patterns: Vec<Regex>,
    replacement: String,
}

impl Default for Redactor {
    /// The built-in patterns.
    fn default() -> Self {
        Self::new(&RedactionConfig::default()).expect("built-in redaction patterns compile")
    }
}

impl Redactor {
    /// Compiles `config`, naming the first pattern that fails.
    pub fn new(config: &RedactionConfig) -> Result<Self, RedactError> {
        if config.replacement.is_empty() {
            return Err(RedactError::EmptyReplacement);
        }
        for p in &config.key_patterns {
            compile(p, true)?;
        }
        let value_patterns = config.value_patterns.iter().map(|p| compile(p, false)).collect::<Result<_, _>>()?;
        Ok(Self {
            keys: compile_set(&config.key_patterns, true)?,
            values: compile_set(&config.value_patterns, false)?,
            value_patterns,
            replacement: config.replacement.clone(),
        })
    }

    /// A redactor that changes nothing.
    pub fn disabled() -> Self {
        Self {
            keys: RegexSet::empty(),
            values: RegexSet::empty(),
            value_patterns: Vec::new(),
            replacement: DEFAULT_REPLACEMENT.to_owned(),
        }
    }

    /// Whether `key` names a secret.
    pub fn is_secret_key(&self, key: &str) -> bool {
        self.keys.is_match(key)
    }

    /// Applies the value patterns to `s`, borrowing it back untouched when nothing matched
    /// (the common case, which costs one scan and no allocation).
    pub fn redact_str<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let hits = self.values.matches(s);
        if !hits.matched_any() {
            return Cow::Borrowed(s);
        }
        let mut out = Cow::Borrowed(s);
        for i in hits.iter() {
            if let Cow::Owned(next) = self.apply(&self.value_patterns[i], &out) {
                out = Cow::Owned(next);
            }
        }
        out
    }

    fn apply<'a>(&self, pattern: &Regex, s: &'a str) -> Cow<'a, str> {
        let mut out = String::new();
        let mut last = 0;
        for caps in pattern.captures_iter(s) {
            let span = caps.name("secret").or_else(|| caps.get(0));
            // Skip empty spans and ones starting with the replacement: those were redacted
            // already (by an earlier pass or pattern), which keeps redaction idempotent.
            let Some(m) = span.filter(|m| !m.is_empty() && !m.as_str().starts_with(&self.replacement)) else {
                continue;
            };
            out.push_str(&s[last..m.start()]);
            out.push_str(&self.replacement);
            last = m.end();
        }
        if last == 0 {
            return Cow::Borrowed(s);
        }
        out.push_str(&s[last..]);
        Cow::Owned(out)
    }

    /// Returns a redacted copy of `v`; for an owned payload prefer
    /// [`Redactor::redact_value_in_place`], which skips the copy.
    pub fn redact_value(&self, v: &Value) -> Value {
        let mut copy = v.clone();
        self.redact_value_in_place(&mut copy);
        copy
    }

    /// Redacts `v` in place, returning whether anything changed.
    pub fn redact_value_in_place(&self, v: &mut Value) -> bool {
        match v {
            Value::String(s) => match self.redact_str(s) {
                Cow::Borrowed(_) => false,
                Cow::Owned(new) => {
                    *s = new;
                    true
                }
            },
            Value::Array(items) => {
                items.iter_mut().fold(false, |changed, item| self.redact_value_in_place(item) | changed)
            }
            Value::Object(map) => {
                let mut changed = false;
                for (key, item) in map.iter_mut() {
                    changed |=
                        if self.is_secret_key(key) { self.blank(item) } else { self.redact_value_in_place(item) };
                }
                changed
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    /// Replaces a value under a secret key wholesale; null carries no secret and is kept.
    fn blank(&self, v: &mut Value) -> bool {
        match v {
            Value::Null => false,
            Value::String(s) if *s == self.replacement => false,
            _ => {
                *v = Value::String(self.replacement.clone());
                true
            }
        }
    }
}

fn compile(pattern: &str, case_insensitive: bool) -> Result<Regex, RedactError> {
    // An empty pattern matches everything, which is never what a config author meant.
    if pattern.is_empty() {
        return Err(bad_pattern(pattern, "pattern is empty".into()));
    }
    RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| bad_pattern(pattern, e.to_string()))
}

fn bad_pattern(pattern: &str, reason: String) -> RedactError {
    let pattern = pattern.to_owned();
    RedactError::BadPattern { pattern, reason }
}

fn compile_set(patterns: &[String], case_insensitive: bool) -> Result<RegexSet, RedactError> {
    // Each pattern already compiled alone, so a failure here is the combined size limit.
    RegexSetBuilder::new(patterns)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|e| bad_pattern(&patterns.join(" | "), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Asserts that each `(input, expected)` pair redacts as expected with the defaults.
    fn check(cases: &[(&str, &str)]) {
        let red = Redactor::default();
        for (input, expected) in cases {
            assert_eq!(red.redact_str(input), *expected, "input: {input}");
        }
    }

    #[test]
    fn secret_keys_are_blanked_in_nested_objects_and_arrays() {
        let v = json!({"cfg": {"api_key": "a", "X-Api-Key": "k", "apiKey": 1, "client_secret": {"a": 1},
            "password": null, "items": [{"access_token": "t"}, {"Authorization": "Basic dXNlcg=="}]}});
        let r = "[REDACTED]";
        let expected = json!({"cfg": {"api_key": r, "X-Api-Key": r, "apiKey": r, "client_secret": r,
            "password": null, "items": [{"access_token": r}, {"Authorization": r}]}});
        assert_eq!(Redactor::default().redact_value(&v), expected);
    }

    #[test]
    fn ordinary_keys_that_mention_tokens_or_passwords_are_kept() {
        let red = Redactor::default();
        let kept = "max_tokens token_count tokens_used password_policy_url secretary";
        assert!(kept.split(' ').all(|k| !red.is_secret_key(k)));
        let secret = "token refresh-token private_key credentials pwd db_password AccessToken";
        assert!(secret.split(' ').all(|k| red.is_secret_key(k)));
    }

    #[test]
    fn bearer_and_provider_tokens_are_redacted_inside_text() {
        check(&[
            ("Bearer eyJhbGciOi.J9x-y_z", "Bearer [REDACTED]"),
            ("use sk-abcdefghijklmnop1234 now", "use [REDACTED] now"),
            ("sk-proj-Abc123_def456-ghi789", "[REDACTED]"),
            ("sk-ant-api03-abcdefghijklmnop", "[REDACTED]"),
            ("key AKIAIOSFODNN7EXAMPLE.", "key [REDACTED]."),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123", "[REDACTED]"),
            ("token xoxb-1234567890-abcdef", "token [REDACTED]"),
        ]);
    }

    #[test]
    fn password_assignments_keep_the_key() {
        check(&[
            ("pw password=hunter2&n=1", "pw password=[REDACTED]&n=1"),
            ("passwd: s3cret! done", "passwd: [REDACTED] done"),
            (r#"{"db_pwd": "pa55"}"#, r#"{"db_pwd": "[REDACTED]"}"#),
        ]);
    }

    #[test]
    fn url_credentials_keep_the_user() {
        check(&[
            ("pg://admin:pa55@db:5432", "pg://admin:[REDACTED]@db:5432"),
            ("redis://:pa55@localhost", "redis://:[REDACTED]@localhost"),
            ("https://x-access-token:tok@github.com/o", "https://x-access-token:[REDACTED]@github.com/o"),
            ("https://example.com:80/p", "https://example.com:80/p"),
        ]);
    }

    #[test]
    fn pem_private_key_bodies_are_redacted() {
        check(&[
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAA=\n-----END RSA PRIVATE KEY-----\n",
                "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\n",
            ),
            ("-----BEGIN PRIVATE KEY-----\ncut", "-----BEGIN PRIVATE KEY-----[REDACTED]"),
        ]);
    }

    #[test]
    fn ordinary_prose_and_short_sk_words_are_kept() {
        let prose = "The password policy needs review; ask about sk-learn and the token budget.";
        let out = Redactor::default().redact_str(prose);
        assert!(matches!(out, Cow::Borrowed(_)));
        let v = json!({"max_tokens": 512, "text": prose});
        let mut copy = v.clone();
        assert!(!Redactor::default().redact_value_in_place(&mut copy));
        assert_eq!(copy, v);
    }

    #[test]
    fn secrets_under_ordinary_keys_and_in_markdown_are_redacted() {
        let mut v = json!({"notes": ["Run `curl -H 'Authorization: Bearer abcdef123456'`", 3]});
        assert!(Redactor::default().redact_value_in_place(&mut v));
        let expected = json!({"notes": ["Run `curl -H 'Authorization: Bearer [REDACTED]'`", 3]});
        assert_eq!(v, expected);
    }

    #[test]
    fn redacting_twice_equals_redacting_once() {
        let v = json!({"token": "t", "s": "password=x Bearer abcdefgh12 https://u:p@h sk-abcdefghijklmnopq1"});
        let red = Redactor::default();
        let mut once = red.redact_value(&v);
        assert_ne!(once, v);
        assert_eq!(red.redact_value(&once), once);
        assert!(!red.redact_value_in_place(&mut once));
    }

    #[test]
    fn custom_patterns_and_replacement_are_used() {
        let cfg = RedactionConfig {
            key_patterns: vec!["^ssn$".into()],
            value_patterns: vec![r"pin (?P<secret>\d{4})".into()],
            replacement: "***".into(),
        };
        let red = Redactor::new(&cfg).expect("valid patterns");
        let out = red.redact_value(&json!({"SSN": "1", "api_key": "k", "m": "pin 1234 ok"}));
        assert_eq!(out, json!({"SSN": "***", "api_key": "k", "m": "pin *** ok"}));
    }

    #[test]
    fn partial_config_falls_back_to_builtins() {
        let cfg: RedactionConfig = serde_json::from_str(r#"{"replacement": "<hidden>"}"#).expect("parses");
        let red = Redactor::new(&cfg).expect("valid");
        let out = red.redact_value(&json!({"password": "x"}));
        assert_eq!(out, json!({"password": "<hidden>"}));
    }

    #[test]
    fn bad_patterns_are_named_and_empty_patterns_or_replacement_rejected() {
        let mut cfg = RedactionConfig::default();
        cfg.value_patterns.push("(unclosed".into());
        let err = Redactor::new(&cfg).expect_err("bad regex");
        assert!(matches!(&err, RedactError::BadPattern { pattern, .. } if pattern == "(unclosed"));
        let msg = err.to_string();
        assert!(msg.starts_with("invalid redaction pattern `(unclosed`"), "{msg}");
        cfg.value_patterns.pop();
        cfg.key_patterns = vec![String::new()];
        assert!(Redactor::new(&cfg).is_err());
        let blank = RedactionConfig { replacement: String::new(), ..Default::default() };
        assert_eq!(Redactor::new(&blank).err(), Some(RedactError::EmptyReplacement));
    }

    #[test]
    fn disabled_redactor_changes_nothing() {
        let v = json!({"password": "hunter2", "s": "Bearer abcdefgh1234 sk-abcdefghijklmnopqrst"});
        let mut copy = v.clone();
        assert!(!Redactor::disabled().redact_value_in_place(&mut copy));
        assert_eq!(copy, v);
    }
}
