//! The provider registry: every configured provider, and which one runs
//! each tool. Its listing is what `GET /api/hitl/providers` shows: names,
//! kinds, endpoints and tools, never keys.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::anthropic::AnthropicProvider;
use crate::config::{ConfigError, ProviderConfig};
use crate::error::ProviderError;
use crate::openai::OpenAiProvider;
use crate::provider::{Provider, ProviderKind};
use crate::replicate::ReplicateProvider;
use crate::request::Tool;
use crate::scripted::ScriptedProvider;

/// Providers by the tools they offer.
#[derive(Debug, Default, Clone)]
pub struct ProviderRegistry {
    providers: Vec<Arc<dyn Provider>>,
    /// Tool name to (provider index, tool index).
    tools: BTreeMap<String, (usize, usize)>,
}

/// One tool in the listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolListing {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The provider's model id.
    pub model: String,
}

/// One provider in the listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderListing {
    /// Its name.
    pub name: String,
    /// Its wire protocol.
    pub kind: ProviderKind,
    /// Where it sends requests (no credentials); none for the scripted provider.
    pub endpoint: Option<String>,
    /// Its tools.
    pub tools: Vec<ToolListing>,
}

/// A tool and the provider that runs it.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a> {
    /// The provider.
    pub provider: &'a Arc<dyn Provider>,
    /// The tool.
    pub tool: &'a Tool,
}

impl ProviderRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The scripted demo provider, then every provider configured in the
    /// process environment (see [`ProviderConfig::from_lookup`]).
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// As [`ProviderRegistry::from_env`], reading variables through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut registry = Self::new();
        registry.register(Arc::new(ScriptedProvider::demo()))?;
        for kind in [ProviderKind::OpenaiCompatible, ProviderKind::Anthropic, ProviderKind::Replicate] {
            if let Some(config) = ProviderConfig::from_lookup(kind, &lookup)? {
                registry.register(build(&config)?)?;
            }
        }
        Ok(registry)
    }

    /// Adds a provider and its tools; a provider or tool name already taken is refused.
    pub fn register(&mut self, provider: Arc<dyn Provider>) -> Result<(), ConfigError> {
        if self.providers.iter().any(|p| p.name() == provider.name()) {
            return Err(ConfigError::DuplicateProvider { name: provider.name().to_owned() });
        }
        let index = self.providers.len();
        let mut added = BTreeMap::new();
        for (position, tool) in provider.tools().iter().enumerate() {
            if self.tools.contains_key(&tool.name) || added.insert(tool.name.clone(), (index, position)).is_some() {
                return Err(ConfigError::DuplicateTool { tool: tool.name.clone() });
            }
        }
        self.tools.extend(added);
        self.providers.push(provider);
        Ok(())
    }

    /// The tool named `tool` and its provider.
    pub fn resolve(&self, tool: &str) -> Result<Resolved<'_>, ProviderError> {
        let &(provider, position) =
            self.tools.get(tool).ok_or_else(|| ProviderError::UnknownTool { tool: tool.to_owned() })?;
        let provider = &self.providers[provider];
        Ok(Resolved { provider, tool: &provider.tools()[position] })
    }

    /// The provider named `name`.
    pub fn provider(&self, name: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.iter().find(|p| p.name() == name)
    }

    /// Every provider with its tools, in the order they were registered.
    pub fn listing(&self) -> Vec<ProviderListing> {
        self.providers
            .iter()
            .map(|provider| ProviderListing {
                name: provider.name().to_owned(),
                kind: provider.kind(),
                endpoint: provider.endpoint().map(str::to_owned),
                tools: provider
                    .tools()
                    .iter()
                    .map(|t| ToolListing {
                        name: t.name.clone(),
                        description: t.description.clone(),
                        model: t.model.clone(),
                    })
                    .collect(),
            })
            .collect()
    }
}

/// The provider `config` describes.
pub fn build(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ConfigError> {
    Ok(match config.kind {
        ProviderKind::OpenaiCompatible => Arc::new(OpenAiProvider::new(config)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::Replicate => Arc::new(ReplicateProvider::new(config)?),
        ProviderKind::Scripted => Arc::new(ScriptedProvider::new(config.name.clone())),
    })
}
