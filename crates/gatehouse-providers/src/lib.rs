//! Model providers for Gatehouse's orchestrated runs: the provider
//! layer (`RunInput → AIProvider`). Each [`Provider`] prepares a payload
//! from a run input, validates it against its tool's JSON Schema (with
//! suggested fixes), calls the model over HTTP (retrying transient
//! failures with backoff) and audits the answer into raw and cleaned
//! text. The [`ProviderRegistry`] maps tool names to providers.
//!
//! This crate knows nothing of gates or the engine: the orchestrator puts
//! a reviewer between the steps, and turns a [`ProviderError`] into an
//! error gate offering its [`Remedy`]s.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use gatehouse_providers::{ProviderRegistry, RunInput};
//!
//! let registry = ProviderRegistry::from_env()?;
//! let input = RunInput { tool: "scripted:chat".into(), prompt: "Plan a launch".into(), ..RunInput::default() };
//! let found = registry.resolve(&input.tool)?;
//! let payload = found.provider.prepare(found.tool, &input)?;
//! found.provider.validate(found.tool, &payload).into_result(&found.tool.name)?;
//! let response = found.provider.call(found.tool, &payload).await?;
//! let audited = found.provider.audit(&response);
//! println!("{}", audited.cleaned);
//! # Ok(())
//! # }
//! ```

pub mod anthropic;
pub mod audit;
pub mod config;
pub mod error;
mod http;
pub mod openai;
pub mod prepare;
pub mod provider;
pub mod registry;
pub mod replicate;
pub mod report;
pub mod request;
pub mod response;
pub mod retry;
pub mod scripted;
pub mod scripted_release;
pub mod scripted_team;
pub mod scripted_teamflow;
pub mod scripted_teamplan;
pub mod secret;
mod similar;
pub mod text_tools;
pub mod validate;

pub use anthropic::AnthropicProvider;
pub use audit::{AuditedResponse, Quality, SafetyFlag, SafetyKind};
pub use config::{ConfigError, ProviderConfig};
pub use error::{ProviderError, Remedy, TransientFailure};
pub use openai::OpenAiProvider;
pub use provider::{Provider, ProviderKind};
pub use registry::{ProviderListing, ProviderRegistry, Resolved, ToolListing};
pub use replicate::ReplicateProvider;
pub use report::{Fix, IssueKind, Severity, Suggestion, ValidationIssue, ValidationReport};
pub use request::{Payload, RunInput, Tool};
pub use response::{FinishReason, ProviderResponse, Usage};
pub use retry::RetryPolicy;
pub use scripted::{PayloadShape, ScriptedCall, ScriptedProvider, Step};
pub use secret::ApiKey;
