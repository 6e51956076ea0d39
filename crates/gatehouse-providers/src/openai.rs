//! Any OpenAI-compatible chat completions endpoint (`POST
//! {base}/chat/completions`, `Authorization: Bearer`): OpenAI itself, and
//! the servers that copy its protocol (vLLM, llama.cpp's server, Ollama).

use std::time::Instant;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, AUTHORIZATION};
use reqwest::{Method, Url};
use serde_json::{json, Value};

use crate::config::{ConfigError, ProviderConfig};
use crate::error::ProviderError;
use crate::http::{openai_style_error, Exchange, Replay, Request, Transport};
use crate::prepare::{self, SystemPlacement};
use crate::provider::{Provider, ProviderKind};
use crate::request::{Payload, RunInput, Tool};
use crate::response::{FinishReason, ProviderResponse, Usage};

/// A chat completions provider.
#[derive(Debug)]
pub struct OpenAiProvider {
    transport: Transport,
    endpoint: String,
    url: Url,
    tools: Vec<Tool>,
}

impl OpenAiProvider {
    /// A provider for `config`, offering a chat tool per configured model.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base =
            config.endpoint().map_err(|message| ConfigError::Invalid { setting: config.name.clone(), message })?;
        let url = Url::parse(&format!("{}/chat/completions", base.as_str().trim_end_matches('/')))
            .map_err(|e| ConfigError::Invalid { setting: config.name.clone(), message: e.to_string() })?;
        Ok(Self {
            transport: Transport::new(config, AUTHORIZATION, "Bearer ")?,
            endpoint: base.as_str().trim_end_matches('/').to_owned(),
            url,
            tools: config.models.iter().map(|model| chat_tool(&config.name, model)).collect(),
        })
    }

    /// Adds a tool (a model with its own schema or example input).
    pub fn with_tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }
}

/// The chat tool for `model`: `{provider}:{model}`, validated by [`chat_schema`].
pub fn chat_tool(provider: &str, model: &str) -> Tool {
    Tool::new(format!("{provider}:{model}"), model, chat_schema())
        .with_description(format!("{model} through {provider}'s chat completions"))
}

/// The part of the chat completions request Gatehouse checks: a model, at
/// least one message with a role and content, sampling settings in range,
/// and no streaming (the answer is reviewed whole). Other fields pass.
pub fn chat_schema() -> Value {
    json!({
        "type": "object",
        "required": ["model", "messages"],
        "properties": {
            "model": {"type": "string", "minLength": 1},
            "messages": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": {"enum": ["system", "developer", "user", "assistant", "tool"]},
                        "content": {"type": ["string", "array"], "minLength": 1}
                    }
                }
            },
            "temperature": {"type": "number", "minimum": 0, "maximum": 2},
            "top_p": {"type": "number", "minimum": 0, "maximum": 1},
            "max_tokens": {"type": "integer", "minimum": 1},
            "max_completion_tokens": {"type": "integer", "minimum": 1},
            "n": {"const": 1},
            "seed": {"type": "integer"},
            "stop": {"type": ["string", "array"]},
            "stream": {"const": false}
        }
    })
}

#[async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        self.transport.provider()
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::OpenaiCompatible
    }

    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.endpoint)
    }

    fn prepare(&self, tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError> {
        prepare::chat(tool, input, SystemPlacement::Message)
    }

    async fn call(&self, _tool: &Tool, payload: &Payload) -> Result<ProviderResponse, ProviderError> {
        let started = Instant::now();
        let body = payload.to_value();
        let request = Request {
            method: Method::POST,
            url: self.url.clone(),
            body: Some(&body),
            headers: HeaderMap::new(),
            replay: Replay::Always,
            read_error: openai_style_error,
        };
        let exchange = self.transport.send(&request).await?;
        let mut response = completion(&self.transport, exchange)?;
        response.latency_ms = started.elapsed().as_millis() as u64;
        Ok(response)
    }
}

/// Reads a chat completion: the first choice's message.
fn completion(transport: &Transport, exchange: Exchange) -> Result<ProviderResponse, ProviderError> {
    let Exchange { status, body, attempts } = exchange;
    let Some(choice) = body.get("choices").and_then(|c| c.get(0)) else {
        return Err(transport.malformed(status, "the completion has no `choices[0]`"));
    };
    let message = &choice["message"];
    let refusal = message["refusal"].as_str().filter(|r| !r.is_empty());
    let text = match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        Value::Null => refusal.unwrap_or_default().to_owned(),
        other => return Err(transport.malformed(status, format!("`choices[0].message.content` is {other}"))),
    };
    let finish = match (refusal, choice["finish_reason"].as_str()) {
        (Some(_), _) => FinishReason::Refusal,
        (None, Some("stop")) => FinishReason::Stop,
        (None, Some("length")) => FinishReason::Length,
        (None, Some("content_filter")) => FinishReason::ContentFilter,
        (None, Some("tool_calls" | "function_call")) => FinishReason::ToolUse,
        (None, _) => FinishReason::Other,
    };
    let usage = body
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| Usage { input_tokens: u["prompt_tokens"].as_u64(), output_tokens: u["completion_tokens"].as_u64() });
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
