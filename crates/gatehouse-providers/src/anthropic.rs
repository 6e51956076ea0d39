//! Anthropic's Messages API (`POST {base}/v1/messages`, `x-api-key`,
//! `anthropic-version`).

use std::sync::LazyLock;
use std::time::Instant;

use async_trait::async_trait;
use regex::Regex;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};
use serde_json::{json, Value};

use crate::config::{ConfigError, ProviderConfig};
use crate::error::ProviderError;
use crate::http::{Exchange, ProviderMessage, Replay, Request, Transport};
use crate::prepare::{self, SystemPlacement};
use crate::provider::{Provider, ProviderKind};
use crate::request::{Payload, RunInput, Tool};
use crate::response::{FinishReason, ProviderResponse, Usage};

/// The API version sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The answer length a prepared payload asks for unless the tool's example says otherwise.
const DEFAULT_MAX_TOKENS: u64 = 1024;

/// A Messages API provider.
#[derive(Debug)]
pub struct AnthropicProvider {
    transport: Transport,
    endpoint: String,
    url: Url,
    tools: Vec<Tool>,
}

impl AnthropicProvider {
    /// A provider for `config`, offering a messages tool per configured model.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base =
            config.endpoint().map_err(|message| ConfigError::Invalid { setting: config.name.clone(), message })?;
        let url = Url::parse(&format!("{}/v1/messages", base.as_str().trim_end_matches('/')))
            .map_err(|e| ConfigError::Invalid { setting: config.name.clone(), message: e.to_string() })?;
        Ok(Self {
            transport: Transport::new(config, HeaderName::from_static("x-api-key"), "")?,
            endpoint: base.as_str().trim_end_matches('/').to_owned(),
            url,
            tools: config.models.iter().map(|model| messages_tool(&config.name, model)).collect(),
        })
    }

    /// Adds a tool (a model with its own schema or example input).
    pub fn with_tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }
}

/// The messages tool for `model`: `{provider}:{model}`, validated by
/// [`messages_schema`], asking for up to 1024 tokens by default.
pub fn messages_tool(provider: &str, model: &str) -> Tool {
    Tool::new(format!("{provider}:{model}"), model, messages_schema())
        .with_description(format!("{model} through {provider}'s Messages API"))
        .with_example(json!({"max_tokens": DEFAULT_MAX_TOKENS}))
}

/// The part of the Messages request Gatehouse checks.
pub fn messages_schema() -> Value {
    json!({
        "type": "object",
        "required": ["model", "max_tokens", "messages"],
        "properties": {
            "model": {"type": "string", "minLength": 1},
            "max_tokens": {"type": "integer", "minimum": 1},
            "system": {"type": ["string", "array"]},
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": {"enum": ["user", "assistant"]},
                        "content": {"type": ["string", "array"], "minLength": 1}
                    }
                }
            },
            "temperature": {"type": "number", "minimum": 0, "maximum": 1},
            "top_p": {"type": "number", "minimum": 0, "maximum": 1},
            "top_k": {"type": "integer", "minimum": 0},
            "stop_sequences": {"type": "array", "items": {"type": "string"}},
            "stream": {"const": false}
        }
    })
}

#[async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        self.transport.provider()
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Anthropic
    }

    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.endpoint)
    }

    fn prepare(&self, tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError> {
        prepare::chat(tool, input, SystemPlacement::TopLevel)
    }

    async fn call(&self, _tool: &Tool, payload: &Payload) -> Result<ProviderResponse, ProviderError> {
        let started = Instant::now();
        let body = payload.to_value();
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
        let request = Request {
            method: Method::POST,
            url: self.url.clone(),
            body: Some(&body),
            headers,
            replay: Replay::Always,
            read_error: anthropic_error,
        };
        let exchange = self.transport.send(&request).await?;
        let mut response = message(&self.transport, exchange)?;
        response.latency_ms = started.elapsed().as_millis() as u64;
        Ok(response)
    }
}

/// Reads a message: its text blocks, joined.
fn message(transport: &Transport, exchange: Exchange) -> Result<ProviderResponse, ProviderError> {
    let Exchange { status, body, attempts } = exchange;
    let Some(blocks) = body.get("content").and_then(Value::as_array) else {
        return Err(transport.malformed(status, "the message has no `content` array"));
    };
    let text: String = blocks.iter().filter(|b| b["type"] == "text").filter_map(|b| b["text"].as_str()).collect();
    let finish = match body["stop_reason"].as_str() {
        Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some("refusal") => FinishReason::Refusal,
        Some("tool_use") => FinishReason::ToolUse,
        _ => FinishReason::Other,
    };
    let usage = body
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| Usage { input_tokens: u["input_tokens"].as_u64(), output_tokens: u["output_tokens"].as_u64() });
    Ok(ProviderResponse {
        provider: transport.provider().to_owned(),
        id: body["id"].as_str().map(str::to_owned),
        model: body["model"].as_str().map(str::to_owned),
        text,
        finish,
        usage,
        attempts,
        latency_ms: 0,
        raw: body,
    })
}

/// A leading field path in Anthropic's messages: `messages.0.content: ...`.
static FIELD_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*): ").expect("valid regex"));

/// `{"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}`
fn anthropic_error(body: &Value) -> ProviderMessage {
    let error = &body["error"];
    let message = error["message"].as_str().unwrap_or_default().to_owned();
    ProviderMessage {
        field: FIELD_PREFIX.captures(&message).map(|c| c[1].to_owned()),
        error_type: error["type"].as_str().map(str::to_owned),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_naming_a_field_is_read_with_that_field() {
        let said = anthropic_error(&json!({"type": "error", "error": {
            "type": "invalid_request_error", "message": "messages.0.content: Input should be a valid list"}}));
        assert_eq!(said.field.as_deref(), Some("messages.0.content"));
        assert_eq!(said.error_type.as_deref(), Some("invalid_request_error"));
        let said = anthropic_error(&json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}));
        assert_eq!((said.message.as_str(), said.field), ("Overloaded", None));
    }
}
