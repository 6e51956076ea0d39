//! The provider interface (`RunInput → AIProvider`) and the
//! values that cross it: the run input, a tool and its input schema, the
//! payload sent, and the provider's response. A provider prepares a payload,
//! validates it, calls the model and audits the answer; each step is separate
//! so the orchestrator can stop at a gate between any two of them.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::audit::{self, AuditedResponse};
use crate::error::ProviderError;
use crate::validate::{self, ValidationReport};

/// What a run asks for: a prompt for one tool, and any further inputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunInput {
    /// The tool (see [`Tool::name`]) to run.
    pub tool: String,
    /// What the user asks the model.
    pub prompt: String,
    /// Instructions for the model, where the tool takes them.
    pub system: Option<String>,
    /// Further fields of the payload (`temperature`, an image URL...),
    /// laid over the tool's `example_input`.
    pub inputs: Map<String, Value>,
}

/// One thing a provider can run: a model with the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The registry's name for it, unique across providers (`openai:gpt-4o-mini`).
    pub name: String,
    /// What it does, for the reviewer.
    #[serde(default)]
    pub description: String,
    /// The provider's model id (`gpt-4o-mini`, `owner/model:version`).
    pub model: String,
    /// The JSON Schema every payload is validated against.
    pub input_schema: Value,
    /// A known-good input; prepared payloads start from it, and reviewers
    /// see a payload's changes from it.
    #[serde(default)]
    pub example_input: Map<String, Value>,
    /// The payload field the prompt goes in, for tools that take inputs
    /// rather than chat messages.
    #[serde(default = "default_prompt_field")]
    pub prompt_field: String,
}

fn default_prompt_field() -> String {
    "prompt".to_owned()
}

impl Tool {
    /// A tool with no description and no example input.
    pub fn new(name: impl Into<String>, model: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            model: model.into(),
            input_schema,
            example_input: Map::new(),
            prompt_field: default_prompt_field(),
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the example input (ignored unless `example` is an object).
    pub fn with_example(mut self, example: Value) -> Self {
        if let Value::Object(map) = example {
            self.example_input = map;
        }
        self
    }
}

/// The body a provider is called with: a JSON object, without credentials
/// (keys travel in headers only), so it is safe to snapshot and show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Payload(Map<String, Value>);

impl Payload {
    /// The payload of a JSON object; `None` for any other value.
    pub fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Object(map) => Some(Self(map)),
            _ => None,
        }
    }

    /// Its fields.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.0
    }

    /// Its fields, to change.
    pub fn fields_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.0
    }

    /// One field.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field)
    }

    /// The payload as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

impl From<Map<String, Value>> for Payload {
    fn from(map: Map<String, Value>) -> Self {
        Self(map)
    }
}

/// Why the model stopped, in one vocabulary for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It hit the token limit: the answer is cut short.
    Length,
    /// The provider's content filter withheld some or all of it.
    ContentFilter,
    /// The model declined to answer.
    Refusal,
    /// It asked to call a tool instead of answering.
    ToolUse,
    /// The provider did not say, or said something else.
    Other,
}

/// Tokens used, where the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: Option<u64>,
    /// Tokens written.
    pub output_tokens: Option<u64>,
}

/// What a provider answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderResponse {
    /// The provider's name.
    pub provider: String,
    /// The provider's id for this answer (completion, message or prediction id).
    pub id: Option<String>,
    /// The model that answered, as the provider names it.
    pub model: Option<String>,
    /// The output as text (an image model's output URLs, one a line).
    pub text: String,
    /// Why it stopped.
    pub finish: FinishReason,
    /// Tokens used.
    pub usage: Option<Usage>,
    /// The provider's whole response body.
    pub raw: Value,
    /// HTTP requests it took, retries included (and polls, for predictions).
    pub attempts: u32,
    /// Time from the first request to the answer, in milliseconds.
    pub latency_ms: u64,
}

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
