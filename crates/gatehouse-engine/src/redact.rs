//! Secret redaction for payload snapshots, so stored gates and recordings never hold secrets.
//! Key patterns blank the whole value under a secret-looking object key; value patterns blank
//! secret-looking substrings inside every string, wherever it sits in the JSON.

use std::borrow::Cow;

use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

/// Fields of requests and records that hold JSON Schemas: their property names describe a form
/// or a tool's input (a `password` field is a question, not a secret), so
/// [`Redactor::redact_record`] checks only their strings.
pub const SCHEMA_FIELDS: &[&str] = &["response_schema", "payload_schema"];

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
/// assignments so `https://x-access-token:tok@host` keeps its `@host`. Each needs a prefix or
/// shape that ordinary text lacks, so ids, UUIDs, hex digests and prose are left alone.
pub const DEFAULT_VALUE_PATTERNS: &[&str] = &[
    // `Authorization: Bearer ...` and any bearer token.
    r"\b[Bb]earer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)",
    // `Authorization: Basic ...` (and Digest, Token) header values.
    r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:basic|digest|token)\s+(?P<secret>[^\s"',;]+)"#,
    // A bare `Basic` credential that looks encoded (padded).
    r"\bBasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={1,2})",
    // OpenAI (`sk-`, `sk-proj-`) and Anthropic (`sk-ant-`) keys.
    r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}",
    // Stripe secret and restricted keys, live or test, and webhook secrets.
    r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}",
    r"\bwhsec_[A-Za-z0-9]{16,}",
    // AWS access key ids.
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    // GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`) and fine-grained ones.
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{22,}",
    // Slack tokens (`xoxb-`, `xoxp-`, ...).
    r"\bxox[a-z]-[A-Za-z0-9-]{10,}",
    // Google API keys.
    r"\bAIza[0-9A-Za-z_-]{30,}",
    // JSON Web Tokens: a base64url JSON header and payload, and a signature.
    r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    // Passwords in URLs.
    r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:(?P<secret>[^\s/@]+)@",
    // `password=...`, `api_key: ...`, `aws_secret_access_key = ...` and their kin.
    r#"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|secret[_-]?(?:access[_-]?)?key|api[_-]?key|access[_-]?token|refresh[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)["']?\s*[=:]\s*["']?(?P<secret>[^\s"'&,;]+)"#,
    // PEM private key blocks (the body, up to the end line or the end of the text).
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

    /// Redacts every string of a record a client sent (a request, a recording), returning it
    /// unchanged when nothing matched. Object keys are checked too: no field of a request is
    /// named like a secret, so only free-form JSON (payloads, arguments, metadata) meets them;
    /// JSON Schemas (under [`SCHEMA_FIELDS`]) name fields rather than hold values, so only
    /// their strings are checked.
    pub fn redact_record<T: Serialize + DeserializeOwned>(&self, record: T) -> Result<T, serde_json::Error> {
        let mut value = serde_json::to_value(&record)?;
        if !self.redact_record_in_place(&mut value) {
            return Ok(record);
        }
        serde_json::from_value(value)
    }

    fn redact_record_in_place(&self, v: &mut Value) -> bool {
        match v {
            Value::Array(items) => {
                items.iter_mut().fold(false, |changed, item| self.redact_record_in_place(item) | changed)
            }
            Value::Object(map) => {
                let mut changed = false;
                for (key, item) in map.iter_mut() {
                    changed |= if SCHEMA_FIELDS.contains(&key.as_str()) {
                        self.redact_strings_in_place(item)
                    } else if self.is_secret_key(key) {
                        self.blank(item)
                    } else {
                        self.redact_record_in_place(item)
                    };
                }
                changed
            }
            _ => self.redact_strings_in_place(v),
        }
    }

    /// Applies the value patterns to every string in `v`, keys aside.
    fn redact_strings_in_place(&self, v: &mut Value) -> bool {
        match v {
            Value::String(s) => match self.redact_str(s) {
                Cow::Borrowed(_) => false,
                Cow::Owned(new) => {
                    *s = new;
                    true
                }
            },
            Value::Array(items) => {
                items.iter_mut().fold(false, |changed, item| self.redact_strings_in_place(item) | changed)
            }
            Value::Object(map) => {
                map.values_mut().fold(false, |changed, item| self.redact_strings_in_place(item) | changed)
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

/// How an idempotency key is stored and looked up: its SHA-256, in hex. An agent may put
/// anything in a key (a secret too), and it only ever needs to be compared.
pub fn idempotency_digest(key: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Whether `key` is already an [`idempotency_digest`] (a recording exported by this version).
pub fn is_idempotency_digest(key: &str) -> bool {
    key.len() == 64 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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
    fn every_provider_key_family_is_redacted() {
        check(&[
            ("openai sk-abcdefghijklmnop1234", "openai [REDACTED]"),
            ("openai sk-proj-Abc123_def456-ghi789xyz", "openai [REDACTED]"),
            ("anthropic sk-ant-api03-abcdefghijklmnop", "anthropic [REDACTED]"),
            ("stripe sk_live_51HabcDEF0123456789 ok", "stripe [REDACTED] ok"),
            ("stripe rk_live_51HabcDEF0123456789 ok", "stripe [REDACTED] ok"),
            ("stripe sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED]"),
            ("stripe rk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED]"),
            ("aws AKIAIOSFODNN7EXAMPLE.", "aws [REDACTED]."),
            ("aws ASIAIOSFODNN7EXAMPLE", "aws [REDACTED]"),
            ("github ghp_abcdefghijklmnopqrstuvwxyz0123", "github [REDACTED]"),
            ("github gho_abcdefghijklmnopqrstuvwxyz0123", "github [REDACTED]"),
            ("github github_pat_11ABCDEFG0abcdefghijklmnop_qrstuv", "github [REDACTED]"),
            ("slack xoxb-1234567890-abcdef", "slack [REDACTED]"),
            ("slack xoxp-1234567890-abcdef", "slack [REDACTED]"),
            ("slack xoxe-1234567890-abcdef", "slack [REDACTED]"),
            ("google AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "google [REDACTED]"),
        ]);
    }

    #[test]
    fn aws_secret_keys_are_redacted_where_they_are_assigned() {
        check(&[
            ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"),
            ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[REDACTED]"),
            ("secret_key: wJalrXUtnFEMI/K7MDENG", "secret_key: [REDACTED]"),
        ]);
    }

    #[test]
    fn bare_json_web_tokens_are_redacted() {
        let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        check(&[
            (&format!("session {jwt} expired"), "session [REDACTED] expired"),
            ("unsigned eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0. end", "unsigned [REDACTED] end"),
        ]);
    }

    #[test]
    fn authorization_headers_keep_their_scheme() {
        check(&[
            ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"),
            (r#"{"authorization": "basic dXNlcjpwYXNz"}"#, r#"{"authorization": "basic [REDACTED]"}"#),
            ("curl -H 'Authorization: Bearer abcdef123456'", "curl -H 'Authorization: Bearer [REDACTED]'"),
            ("Authorization: Token 0123456789abcdef", "Authorization: Token [REDACTED]"),
            ("header Basic YWxhZGRpbjpvcGVuc2VzYW1l= sent", "header Basic [REDACTED] sent"),
        ]);
    }

    #[test]
    fn key_value_secrets_are_redacted_in_every_spelling() {
        check(&[
            ("api_key: abc123def", "api_key: [REDACTED]"),
            ("API-KEY=abc123def", "API-KEY=[REDACTED]"),
            ("apikey=\"abc123def\"", "apikey=\"[REDACTED]\""),
            ("client_secret=abc, next", "client_secret=[REDACTED], next"),
            ("DB_PASSWORD=hunter2;", "DB_PASSWORD=[REDACTED];"),
            ("auth_token: t0k3n", "auth_token: [REDACTED]"),
        ]);
    }

    #[test]
    fn ids_hashes_and_ordinary_words_are_left_alone() {
        let red = Redactor::default();
        let kept = [
            "0192f0c4-7b1e-7c3a-9d2e-5f6a7b8c9d0e",
            "550e8400-e29b-41d4-a716-446655440000",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            "run 0192f0c4-7b1e-7c3a-9d2e-5f6a7b8c9d0e gate_id task_001 step-2",
            "Basic understanding of the deploy; basic auth is off",
            "the password policy, the secret sauce, an api key rotation plan, token budget",
            "sk-learn, ask_live_demo, xox, AIza, eyJ, github_pat_ short",
            "https://example.com:8443/path?x=1 and mailto:a@b.c",
            "lg:thread-42:interrupt-7:1",
            "Bearer of bad news",
            "[REDACTED]",
        ];
        for text in kept {
            assert!(matches!(red.redact_str(text), Cow::Borrowed(_)), "redacted: {text}");
        }
    }

    #[test]
    fn a_redacted_text_keeps_its_ordinary_words() {
        let out =
            Redactor::default().redact_str("Rotate the staging key sk-proj-Abc123_def456-ghi789xyz before Friday");
        assert_eq!(out, "Rotate the staging key [REDACTED] before Friday");
    }

    #[test]
    fn records_are_redacted_in_every_string_but_their_schemas_keep_their_fields() {
        let record = json!({
            "title": "deploy with sk-proj-Abc123_def456-ghi789xyz",
            "context": {"task_id": "t1", "step": "password=hunter2"},
            "options": [{"title": "use AKIAIOSFODNN7EXAMPLE"}],
            "payload": {"api_key": "k"},
            "response_schema": {"properties": {"password": {"type": "string", "description": "Bearer abcdefgh1234"}}},
        });
        let out = Redactor::default().redact_record(record).expect("still a record");
        let expected = json!({
            "title": "deploy with [REDACTED]",
            "context": {"task_id": "t1", "step": "password=[REDACTED]"},
            "options": [{"title": "use [REDACTED]"}],
            "payload": {"api_key": "[REDACTED]"},
            "response_schema": {"properties": {"password": {"type": "string", "description": "Bearer [REDACTED]"}}},
        });
        assert_eq!(out, expected);
    }

    #[test]
    fn idempotency_keys_are_digested_the_same_way_every_time() {
        let key = idempotency_digest("sk-proj-Abc123_def456-ghi789xyz");
        assert_eq!(key, idempotency_digest("sk-proj-Abc123_def456-ghi789xyz"));
        assert_ne!(key, idempotency_digest("another key"));
        assert!(is_idempotency_digest(&key) && !is_idempotency_digest("lg:thread:1"));
        assert!(matches!(Redactor::default().redact_str(&key), Cow::Borrowed(_)));
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
