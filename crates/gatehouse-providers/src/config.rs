//! Provider configuration: where a provider lives, its key, the models it
//! offers as tools, and how patiently to call it. Read from the
//! environment (`GATEHOUSE_OPENAI_*`, `GATEHOUSE_ANTHROPIC_*`,
//! `GATEHOUSE_REPLICATE_*`) or built in code; the key is an [`ApiKey`], so
//! printing a configuration never shows it.

use std::time::Duration;

use reqwest::Url;

use crate::provider::ProviderKind;
use crate::retry::RetryPolicy;
use crate::secret::ApiKey;

/// Why a configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A setting is missing or malformed.
    #[error("{setting}: {message}")]
    Invalid {
        /// The setting (an environment variable's name, or a field).
        setting: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// Two providers offer a tool of the same name.
    #[error("two providers offer a tool named `{tool}`")]
    DuplicateTool {
        /// The tool.
        tool: String,
    },
    /// Two providers have the same name.
    #[error("two providers are named `{name}`")]
    DuplicateProvider {
        /// The name.
        name: String,
    },
}

impl ConfigError {
    fn invalid(setting: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid { setting: setting.into(), message: message.into() }
    }
}

/// How to reach one provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The provider's name in the registry, and its tools' prefix (`openai` makes `openai:gpt-4o-mini`).
    pub name: String,
    /// Its wire protocol.
    pub kind: ProviderKind,
    /// Its base URL: `https://api.openai.com/v1` (chat completions are at
    /// `{base}/chat/completions`), `https://api.anthropic.com`, `https://api.replicate.com`.
    pub base_url: String,
    /// Its key, if it needs one (local OpenAI-compatible servers often do not).
    pub api_key: Option<ApiKey>,
    /// The models it offers, one tool each.
    pub models: Vec<String>,
    /// How long one request may take, headers and body.
    pub timeout: Duration,
    /// How transient failures are retried.
    pub retry: RetryPolicy,
    /// Replicate: the wait between two polls of a prediction.
    pub poll_interval: Duration,
    /// Replicate: how long a prediction may run before it is cancelled.
    pub max_prediction_time: Duration,
}

impl ProviderConfig {
    /// A configuration with the defaults: the kind's public base URL, no
    /// key, no models, 120 s per request, the default retries.
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            name: kind.default_name().to_owned(),
            kind,
            base_url: default_base_url(kind).to_owned(),
            api_key: None,
            models: Vec::new(),
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            poll_interval: Duration::from_secs(1),
            max_prediction_time: Duration::from_secs(600),
        }
    }

    /// Sets the base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: ApiKey) -> Self {
        self.api_key = Some(key);
        self
    }

    /// Sets the models offered.
    pub fn with_models<S: Into<String>>(mut self, models: impl IntoIterator<Item = S>) -> Self {
        self.models = models.into_iter().map(Into::into).collect();
        self
    }

    /// The configuration for `kind` from the process environment; `None`
    /// when none of its variables is set. See [`ProviderConfig::from_lookup`].
    pub fn from_env(kind: ProviderKind) -> Result<Option<Self>, ConfigError> {
        Self::from_lookup(kind, |name| std::env::var(name).ok())
    }

    /// The configuration for `kind` from variables read through `lookup`;
    /// `None` when none is set. With `P` the kind's prefix
    /// (`GATEHOUSE_OPENAI`, `GATEHOUSE_ANTHROPIC`, `GATEHOUSE_REPLICATE`):
    /// `P_BASE_URL`, `P_API_KEY` (required except for OpenAI-compatible
    /// servers), `P_MODELS` (comma-separated; required for Replicate),
    /// `P_TIMEOUT_SECS` and `P_MAX_ATTEMPTS`.
    pub fn from_lookup(
        kind: ProviderKind,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        let prefix = match kind {
            ProviderKind::OpenaiCompatible => "GATEHOUSE_OPENAI",
            ProviderKind::Anthropic => "GATEHOUSE_ANTHROPIC",
            ProviderKind::Replicate => "GATEHOUSE_REPLICATE",
            ProviderKind::Scripted => return Ok(None),
        };
        let var = |suffix: &str| {
            let name = format!("{prefix}_{suffix}");
            let value = lookup(&name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
            (name, value)
        };
        let settings = ["BASE_URL", "API_KEY", "MODELS", "TIMEOUT_SECS", "MAX_ATTEMPTS"].map(var);
        if settings.iter().all(|(_, value)| value.is_none()) {
            return Ok(None);
        }
        let [base_url, api_key, models, timeout, attempts] = settings;

        let mut config = Self::new(kind);
        if let Some(url) = base_url.1 {
            config.base_url = url;
        }
        config.api_key = api_key.1.map(ApiKey::new);
        if config.api_key.is_none() && kind != ProviderKind::OpenaiCompatible {
            return Err(ConfigError::invalid(api_key.0, format!("is required to use {}", kind.default_name())));
        }
        config.models = match models.1 {
            Some(list) => list.split(',').map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned).collect(),
            None => default_models(kind).iter().map(|m| (*m).to_owned()).collect(),
        };
        if config.models.is_empty() {
            return Err(ConfigError::invalid(models.0, "name at least one model to offer, comma-separated"));
        }
        if let (name, Some(value)) = timeout {
            let seconds = value.parse::<u64>().ok().filter(|s| *s > 0);
            let seconds = seconds.ok_or_else(|| ConfigError::invalid(name, "must be a whole number of seconds"))?;
            config.timeout = Duration::from_secs(seconds);
        }
        if let (name, Some(value)) = attempts {
            let attempts = value.parse::<u32>().ok().filter(|a| (1..=10).contains(a));
            config.retry.max_attempts = attempts.ok_or_else(|| ConfigError::invalid(name, "must be from 1 to 10"))?;
        }
        config.endpoint().map_err(|message| ConfigError::invalid(base_url.0, message))?;
        Ok(Some(config))
    }

    /// The base URL checked and without a trailing slash.
    pub(crate) fn endpoint(&self) -> Result<Url, String> {
        let url = Url::parse(self.base_url.trim_end_matches('/'))
            .map_err(|e| format!("`{}` is not a URL: {e}", self.base_url))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(format!("`{}` must be an http or https URL", self.base_url));
        }
        if !url.username().is_empty() || url.password().is_some() || url.query().is_some() {
            return Err("must not carry credentials or a query; set the key on its own".to_owned());
        }
        Ok(url)
    }
}

fn default_base_url(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenaiCompatible => "https://api.openai.com/v1",
        ProviderKind::Anthropic => "https://api.anthropic.com",
        ProviderKind::Replicate => "https://api.replicate.com",
        ProviderKind::Scripted => "",
    }
}

/// Replicate has no default: a model's inputs are its own.
fn default_models(kind: ProviderKind) -> &'static [&'static str] {
    match kind {
        ProviderKind::OpenaiCompatible => &["gpt-4o-mini"],
        ProviderKind::Anthropic => &["claude-sonnet-4-5"],
        ProviderKind::Replicate | ProviderKind::Scripted => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(kind: ProviderKind, vars: &[(&str, &str)]) -> Result<Option<ProviderConfig>, ConfigError> {
        let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ProviderConfig::from_lookup(kind, |name| vars.get(name).cloned())
    }

    #[test]
    fn a_provider_without_variables_is_not_configured() {
        assert!(read(ProviderKind::Anthropic, &[]).unwrap().is_none());
        assert!(read(ProviderKind::OpenaiCompatible, &[("GATEHOUSE_OPENAI_API_KEY", "  ")]).unwrap().is_none());
    }

    #[test]
    fn a_local_openai_compatible_server_needs_only_its_url() {
        let config = read(
            ProviderKind::OpenaiCompatible,
            &[
                ("GATEHOUSE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/"),
                ("GATEHOUSE_OPENAI_MODELS", "llama3, qwen3"),
            ],
        )
        .unwrap()
        .unwrap();
        assert!(config.api_key.is_none());
        assert_eq!(config.models, ["llama3", "qwen3"]);
        assert_eq!(config.endpoint().unwrap().as_str(), "http://127.0.0.1:11434/v1");
    }

    #[test]
    fn settings_are_read_and_the_key_is_never_printed() {
        let config = read(
            ProviderKind::Replicate,
            &[
                ("GATEHOUSE_REPLICATE_API_KEY", "r8_secretsecret"),
                ("GATEHOUSE_REPLICATE_MODELS", "owner/model"),
                ("GATEHOUSE_REPLICATE_TIMEOUT_SECS", "30"),
                ("GATEHOUSE_REPLICATE_MAX_ATTEMPTS", "2"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!((config.timeout, config.retry.max_attempts), (Duration::from_secs(30), 2));
        assert_eq!(config.base_url, "https://api.replicate.com");
        let printed = format!("{config:?}");
        assert!(!printed.contains("r8_secretsecret") && printed.contains("[redacted]"), "{printed}");
    }

    #[test]
    fn bad_settings_name_their_variable() {
        let setting = |kind, vars: &[(&str, &str)]| match read(kind, vars) {
            Err(ConfigError::Invalid { setting, .. }) => setting,
            other => panic!("accepted: {other:?}"),
        };
        let anthropic = ProviderKind::Anthropic;
        assert_eq!(setting(anthropic, &[("GATEHOUSE_ANTHROPIC_MODELS", "m")]), "GATEHOUSE_ANTHROPIC_API_KEY");
        let replicate = [("GATEHOUSE_REPLICATE_API_KEY", "k")];
        assert_eq!(setting(ProviderKind::Replicate, &replicate), "GATEHOUSE_REPLICATE_MODELS");
        let key = ("GATEHOUSE_ANTHROPIC_API_KEY", "k");
        assert_eq!(
            setting(anthropic, &[key, ("GATEHOUSE_ANTHROPIC_TIMEOUT_SECS", "0")]),
            "GATEHOUSE_ANTHROPIC_TIMEOUT_SECS"
        );
        assert_eq!(
            setting(anthropic, &[key, ("GATEHOUSE_ANTHROPIC_MAX_ATTEMPTS", "x")]),
            "GATEHOUSE_ANTHROPIC_MAX_ATTEMPTS"
        );
        for url in ["ftp://host", "not a url", "https://user:pw@host", "https://host/?key=k"] {
            assert_eq!(
                setting(anthropic, &[key, ("GATEHOUSE_ANTHROPIC_BASE_URL", url)]),
                "GATEHOUSE_ANTHROPIC_BASE_URL"
            );
        }
    }
}
