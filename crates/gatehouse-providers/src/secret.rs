//! API keys, held so that nothing can print them: `Debug` and `Display`
//! show `[redacted]`, the key leaves this type only as a header value
//! marked sensitive, and [`ApiKey::scrub`] removes it from any text a
//! provider echoes back (some put the key they were sent in their errors).

use std::fmt;

use reqwest::header::HeaderValue;

/// What a key is shown as, everywhere.
pub const REDACTED: &str = "[redacted]";

/// A provider's API key. It is not `Serialize`, so it cannot end up in a
/// payload snapshot or a recording by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; surrounding whitespace (a pasted newline) is dropped.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into().trim().to_owned())
    }

    /// Whether the key is empty (and so is no key at all).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every occurrence of the key replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, REDACTED)
        }
    }

    /// The key as a header value (`prefix` is `"Bearer "` or empty), marked
    /// sensitive so HTTP logging never shows it; `None` when it has characters
    /// a header cannot carry.
    pub(crate) fn header_value(&self, prefix: &str) -> Option<HeaderValue> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", self.0)).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_prints_as_redacted_however_it_is_formatted() {
        let key = ApiKey::new(" sk-live-123456 \n");
        assert_eq!(format!("{key:?}"), REDACTED);
        assert_eq!(format!("{key}"), REDACTED);
        assert_eq!(format!("{:?}", Some(key.clone())), format!("Some({REDACTED})"));
    }

    #[test]
    fn scrub_removes_every_occurrence_of_the_key() {
        let key = ApiKey::new("sk-live-123456");
        assert_eq!(key.scrub("bad key sk-live-123456 (sk-live-123456)"), "bad key [redacted] ([redacted])");
        assert_eq!(ApiKey::new("").scrub("nothing to hide"), "nothing to hide");
    }

    #[test]
    fn the_header_value_is_sensitive_and_refuses_newlines() {
        let value = ApiKey::new("abc").header_value("Bearer ").unwrap();
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().unwrap(), "Bearer abc");
        assert!(ApiKey::new("a\nb").header_value("").is_none());
    }
}
