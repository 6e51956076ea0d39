//! What a model answered, in one vocabulary for every provider: the text,
//! why it stopped, the tokens used and the whole raw body.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
