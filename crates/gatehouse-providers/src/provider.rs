//! The provider interface (`RunInput → AIProvider`) and the wire protocols
//! a provider speaks. A provider prepares a payload, validates it, calls the
//! model and audits the answer; each step is separate so the orchestrator
//! can stop at a gate between any two of them. The values that cross the
//! interface are in `request.rs` and `response.rs`.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::audit::{self, AuditedResponse};
use crate::error::ProviderError;
use crate::report::ValidationReport;
use crate::request::{Payload, RunInput, Tool};
use crate::response::ProviderResponse;
use crate::validate;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// `POST {base}/chat/completions`: OpenAI, vLLM, llama.cpp's server, Ollama.
    OpenaiCompatible,
    /// Anthropic's Messages API.
    Anthropic,
    /// Replicate's predictions API.
    Replicate,
    /// Canned answers, for the demo and tests.
    Scripted,
}

impl ProviderKind {
    /// The name it is registered under by default, and its tools' prefix.
    pub fn default_name(self) -> &'static str {
        match self {
            Self::OpenaiCompatible => "openai",
            Self::Anthropic => "anthropic",
            Self::Replicate => "replicate",
            Self::Scripted => "scripted",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OpenaiCompatible => "openai_compatible",
            Self::Anthropic => "anthropic",
            Self::Replicate => "replicate",
            Self::Scripted => "scripted",
        })
    }
}

/// A model provider (an `AIProvider`).
///
/// The steps are separate so a reviewer can stand between them: the
/// orchestrator prepares a payload, validates it (a payload review may
/// edit it or override a failed validation), calls, and audits the answer
/// for the response review. `call` never validates on its own.
#[async_trait]
pub trait Provider: Send + Sync + fmt::Debug {
    /// Its name in the registry (`openai`, `anthropic`, `replicate`, `scripted`).
    fn name(&self) -> &str;

    /// The wire protocol it speaks.
    fn kind(&self) -> ProviderKind;

    /// The tools it offers.
    fn tools(&self) -> &[Tool];

    /// Where it sends requests, without credentials; `None` for in-process providers.
    fn endpoint(&self) -> Option<&str> {
        None
    }

    /// The payload `tool` would be called with for `input`.
    fn prepare(&self, tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError>;

    /// Checks `payload` against the tool's input schema, with suggested fixes.
    fn validate(&self, tool: &Tool, payload: &Payload) -> ValidationReport {
        validate::check(tool, payload)
    }

    /// Calls the model. Transient failures are retried inside; what is
    /// returned as an error needs a decision.
    async fn call(&self, tool: &Tool, payload: &Payload) -> Result<ProviderResponse, ProviderError>;

    /// The answer as raw and cleaned text, with quality and safety indicators.
    fn audit(&self, response: &ProviderResponse) -> AuditedResponse {
        audit::audit(response)
    }
}
