//! Replicate's predictions API: `POST {base}/v1/predictions` with
//! `Prefer: wait` (the answer may come back finished), then polling the
//! prediction's `urls.get` until it succeeds, fails or is cancelled. A
//! prediction costs money, so creating one is retried only when Replicate
//! cannot have started it, and the key is only ever sent to its own origin.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
use reqwest::{Method, StatusCode, Url};
use serde_json::{json, Value};

use crate::config::{ConfigError, ProviderConfig};
use crate::error::{ProviderError, TransientFailure};
use crate::http::{ProviderMessage, Replay, Request, Transport};
use crate::prepare;
use crate::provider::{Provider, ProviderKind};
use crate::request::{Payload, RunInput, Tool};
use crate::response::{FinishReason, ProviderResponse, Usage};

/// A predictions provider.
#[derive(Debug)]
pub struct ReplicateProvider {
    transport: Transport,
    base: Url,
    endpoint: String,
    url: Url,
    prefer: HeaderValue,
    poll_interval: Duration,
    max_prediction_time: Duration,
    tools: Vec<Tool>,
}

impl ReplicateProvider {
    /// A provider for `config`, offering a tool per configured model. Their
    /// schema only asks for an object: give a tool the model's own input
    /// schema with [`ReplicateProvider::with_tool`] to validate its fields.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base =
            config.endpoint().map_err(|message| ConfigError::Invalid { setting: config.name.clone(), message })?;
        let url = Url::parse(&format!("{}/v1/predictions", base.as_str().trim_end_matches('/')))
            .map_err(|e| ConfigError::Invalid { setting: config.name.clone(), message: e.to_string() })?;
        // Replicate holds the request open for up to 60 s; stay inside our own timeout.
        let wait = config.timeout.as_secs().saturating_sub(1).clamp(1, 60);
        Ok(Self {
            transport: Transport::new(config, AUTHORIZATION, "Bearer ")?,
            endpoint: base.as_str().trim_end_matches('/').to_owned(),
            base,
            url,
            prefer: HeaderValue::from_str(&format!("wait={wait}")).expect("a number is a header value"),
            poll_interval: config.poll_interval,
            max_prediction_time: config.max_prediction_time,
            tools: config.models.iter().map(|model| model_tool(&config.name, model)).collect(),
        })
    }

    /// Adds a tool (a model with its input schema and example input).
    pub fn with_tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// `url` if it is on Replicate's origin (the one configured), so the key is sent nowhere else.
    fn own_url(&self, url: Option<&str>, what: &str) -> Result<Url, ProviderError> {
        let parsed = url.and_then(|u| Url::parse(u).ok());
        match parsed {
            Some(url) if url.origin() == self.base.origin() => Ok(url),
            Some(url) => Err(self.transport.malformed(
                StatusCode::OK,
                format!(
                    "the prediction's `{what}` URL ({}) is not on {}",
                    url.origin().ascii_serialization(),
                    self.endpoint
                ),
            )),
            None => Err(self.transport.malformed(StatusCode::OK, format!("the prediction has no `{what}` URL"))),
        }
    }

    async fn poll(&self, url: &Url, attempts: &mut u32) -> Result<Value, ProviderError> {
        let request = Request {
            method: Method::GET,
            url: url.clone(),
            body: None,
            headers: HeaderMap::new(),
            replay: Replay::Always,
            read_error: replicate_error,
        };
        let exchange = self.transport.send(&request).await?;
        *attempts += exchange.attempts;
        Ok(exchange.body)
    }

    /// Asks Replicate to stop a prediction we no longer wait for; a failure changes nothing for the caller.
    async fn cancel(&self, prediction: &Value) {
        let Ok(url) = self.own_url(prediction["urls"]["cancel"].as_str(), "cancel") else { return };
        let request = Request {
            method: Method::POST,
            url,
            body: None,
            headers: HeaderMap::new(),
            replay: Replay::Always,
            read_error: replicate_error,
        };
        if let Err(error) = self.transport.send(&request).await {
            tracing::warn!(provider = %self.transport.provider(), %error, "cancelling a prediction failed");
        }
    }
}

/// The tool for `model` (`owner/name` or `owner/name:version`): `{provider}:{model}`.
pub fn model_tool(provider: &str, model: &str) -> Tool {
    Tool::new(format!("{provider}:{model}"), model, json!({"type": "object"}))
        .with_description(format!("{model} on Replicate"))
}

#[async_trait]
impl Provider for ReplicateProvider {
    fn name(&self) -> &str {
        self.transport.provider()
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Replicate
    }

    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.endpoint)
    }

    fn prepare(&self, tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError> {
        prepare::inputs(tool, input)
    }

    async fn call(&self, tool: &Tool, payload: &Payload) -> Result<ProviderResponse, ProviderError> {
        let started = Instant::now();
        let body = json!({"version": tool.model, "input": payload});
        let mut headers = HeaderMap::new();
        headers.insert("prefer", self.prefer.clone());
        let create = Request {
            method: Method::POST,
            url: self.url.clone(),
            body: Some(&body),
            headers,
            replay: Replay::IfUnprocessed,
            read_error: replicate_error,
        };
        let created = self.transport.send(&create).await?;
        let mut attempts = created.attempts;
        let mut prediction = created.body;
        loop {
            let id = prediction["id"].as_str().unwrap_or("(no id)").to_owned();
            match prediction["status"].as_str() {
                Some("succeeded") => {
                    let mut response = self.succeeded(prediction, attempts);
                    response.latency_ms = started.elapsed().as_millis() as u64;
                    return Ok(response);
                }
                Some(status @ ("failed" | "canceled" | "aborted")) => {
                    let message = prediction["error"].as_str().map(|e| self.transport.scrub(e));
                    return Err(ProviderError::PredictionFailed {
                        provider: self.transport.provider().to_owned(),
                        id,
                        status: status.to_owned(),
                        message: message.unwrap_or_else(|| format!("the prediction was {status}")),
                    });
                }
                Some(status @ ("starting" | "processing")) => {
                    if started.elapsed() >= self.max_prediction_time {
                        self.cancel(&prediction).await;
                        let waited = self.max_prediction_time.as_secs();
                        return Err(ProviderError::Unavailable {
                            provider: self.transport.provider().to_owned(),
                            attempts,
                            failure: TransientFailure::Timeout {
                                message: format!(
                                    "prediction {id} was still {status} after {waited} s; it was cancelled"
                                ),
                            },
                        });
                    }
                }
                other => {
                    let status = other.map_or_else(|| "missing".to_owned(), |s| format!("`{s}`"));
                    return Err(self
                        .transport
                        .malformed(StatusCode::OK, format!("the prediction's status is {status}")));
                }
            }
            let url = self.own_url(prediction["urls"]["get"].as_str(), "get")?;
            tokio::time::sleep(self.poll_interval).await;
            prediction = self.poll(&url, &mut attempts).await?;
        }
    }
}

impl ReplicateProvider {
    fn succeeded(&self, prediction: Value, attempts: u32) -> ProviderResponse {
        let metrics = &prediction["metrics"];
        let usage = (metrics["input_token_count"].is_u64() || metrics["output_token_count"].is_u64()).then(|| Usage {
            input_tokens: metrics["input_token_count"].as_u64(),
            output_tokens: metrics["output_token_count"].as_u64(),
        });
        ProviderResponse {
            provider: self.transport.provider().to_owned(),
            id: prediction["id"].as_str().map(str::to_owned),
            model: prediction["model"].as_str().or(prediction["version"].as_str()).map(str::to_owned),
            text: output_text(&prediction["output"]),
            finish: FinishReason::Stop,
            usage,
            attempts,
            latency_ms: 0,
            raw: prediction,
        }
    }
}

/// A prediction's output as text: a language model's streamed pieces
/// joined, an image model's URLs one a line, anything else as JSON.
fn output_text(output: &Value) -> String {
    match output {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            let items: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            let urls = items.iter().any(|i| i.starts_with("https://") || i.starts_with("http://"));
            items.join(if urls { "\n" } else { "" })
        }
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// `{"title": ..., "detail": ..., "invalid_fields": [{"field": "input.seed", "description": ...}]}`
fn replicate_error(body: &Value) -> ProviderMessage {
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    let invalid = body["invalid_fields"].as_array().and_then(|fields| fields.first());
    let field = invalid.and_then(|f| {
        let field = f["field"].as_str()?;
        let described = f["description"].as_str().and_then(|d| d.strip_suffix(" is required"));
        match field.strip_prefix("input.") {
            Some(inner) => Some(inner.to_owned()),
            None if field == "input" => described.map(str::to_owned),
            None => Some(field.to_owned()),
        }
    });
    let mut message = text(&body["detail"]).or_else(|| text(&body["title"])).unwrap_or_default();
    if let Some(description) = invalid.and_then(|f| text(&f["description"])) {
        if !message.contains(&description) {
            message = format!("{message}: {description}");
        }
    }
    ProviderMessage { message, error_type: text(&body["title"]), field }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_read_as_text_by_their_shape() {
        assert_eq!(output_text(&json!(["Hel", "lo"])), "Hello");
        assert_eq!(
            output_text(&json!(["https://r.delivery/a.png", "https://r.delivery/b.png"])),
            "https://r.delivery/a.png\nhttps://r.delivery/b.png"
        );
        assert_eq!(output_text(&json!("done")), "done");
        assert_eq!(output_text(&Value::Null), "");
        assert_eq!(output_text(&json!({"n": 1})), "{\n  \"n\": 1\n}");
    }

    #[test]
    fn an_input_error_names_the_field() {
        let said = replicate_error(&json!({"title": "Input validation failed", "status": 422,
            "detail": "- input: prompt is required",
            "invalid_fields": [{"type": "required", "field": "input", "description": "prompt is required"}]}));
        assert_eq!(said.field.as_deref(), Some("prompt"));
        assert_eq!(said.message, "- input: prompt is required");
        let said = replicate_error(&json!({"title": "Invalid", "invalid_fields": [
            {"field": "input.seed", "description": "must be an integer"}]}));
        assert_eq!((said.field.as_deref(), said.message.as_str()), (Some("seed"), "Invalid: must be an integer"));
    }
}
