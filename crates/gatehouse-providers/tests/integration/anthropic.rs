//! The Anthropic provider against a local server speaking the Messages API.

use crate::common;

use axum::http::Method;
use common::{assert_no_key, MockProvider, Reply, KEY};
use gatehouse_providers::anthropic::ANTHROPIC_VERSION;
use gatehouse_providers::{
    AnthropicProvider, FinishReason, Provider, ProviderError, ProviderKind, ProviderResponse, RunInput,
};
use serde_json::{json, Value};

const PATH: &str = "/v1/messages";

fn message(blocks: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "test-model",
        "content": blocks, "stop_reason": stop_reason,
        "usage": {"input_tokens": 20, "output_tokens": 8}
    })
}

async fn provider_for(replies: Vec<Reply>) -> (MockProvider, AnthropicProvider) {
    let server = MockProvider::start(vec![(Method::POST, PATH, replies)]).await;
    let provider = AnthropicProvider::new(&server.config(ProviderKind::Anthropic, "")).unwrap();
    (server, provider)
}

async fn call(provider: &AnthropicProvider) -> Result<ProviderResponse, ProviderError> {
    let tool = &provider.tools()[0];
    let input = RunInput {
        tool: tool.name.clone(),
        prompt: "Summarise the report".into(),
        system: Some("You are terse.".into()),
        ..RunInput::default()
    };
    let payload = provider.prepare(tool, &input).unwrap();
    assert!(provider.validate(tool, &payload).valid);
    provider.call(tool, &payload).await
}

#[tokio::test]
async fn a_message_is_sent_with_the_key_and_version_headers_and_its_text_blocks_read() {
    let blocks = json!([{"type": "text", "text": "First, "}, {"type": "tool_use", "id": "t", "name": "x", "input": {}},
                        {"type": "text", "text": "then."}]);
    let (server, provider) = provider_for(vec![Reply::json(200, message(blocks, "max_tokens"))]).await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.finish), ("First, then.", FinishReason::Length));
    assert_eq!(response.usage.map(|u| u.output_tokens), Some(Some(8)));
    assert!(provider.audit(&response).quality.truncated);

    let seen = &server.seen()[0];
    assert_eq!(seen.header("x-api-key"), Some(KEY));
    assert_eq!(seen.header("anthropic-version"), Some(ANTHROPIC_VERSION));
    assert_eq!(seen.header("authorization"), None);
    assert_eq!(
        seen.body,
        json!({"max_tokens": 1024, "model": "test-model", "system": "You are terse.",
               "messages": [{"role": "user", "content": "Summarise the report"}]})
    );
}

#[tokio::test]
async fn overloaded_529_is_retried() {
    let (server, provider) = provider_for(vec![
        Reply::json(529, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        Reply::json(200, message(json!([{"type": "text", "text": "ok"}]), "end_turn")),
    ])
    .await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.finish, response.attempts), ("ok", FinishReason::Stop, 2));
    assert_eq!(server.count(Method::POST, PATH), 2);
}

#[tokio::test]
async fn an_invalid_request_names_the_field_anthropic_blamed() {
    let (server, provider) = provider_for(vec![Reply::json(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}}),
    )])
    .await;
    let error = call(&provider).await.unwrap_err();
    assert_eq!(error.field(), Some("max_tokens"));
    assert_eq!(error.status(), Some(400));
    assert!(error.to_string().contains("max_tokens: Field required"), "{error}");
    assert_eq!(server.count(Method::POST, PATH), 1);
}

#[tokio::test]
async fn a_message_without_content_is_malformed() {
    let (_server, provider) = provider_for(vec![Reply::json(200, json!({"type": "message", "id": "msg_01"}))]).await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(&error, ProviderError::MalformedResponse { detail, .. } if detail.contains("content")),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_key_echoed_in_an_error_is_scrubbed() {
    let (_server, provider) = provider_for(vec![Reply::json(
        401,
        json!({"type": "error", "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}}),
    )])
    .await;
    let error = call(&provider).await.unwrap_err();
    assert!(matches!(&error, ProviderError::Rejected { status: 401, .. }), "{error:?}");
    assert!(error.to_string().contains("invalid x-api-key [redacted]"), "{error}");
    assert_no_key("the error's Debug", &format!("{error:?}"));
    assert_no_key("the provider's Debug", &format!("{provider:?}"));
}

#[tokio::test]
async fn a_payload_breaking_the_schema_is_reported_before_any_call() {
    let (server, provider) = provider_for(vec![]).await;
    let tool = &provider.tools()[0];
    let input = RunInput { tool: tool.name.clone(), prompt: "hi".into(), ..RunInput::default() };
    let mut payload = provider.prepare(tool, &input).unwrap();
    payload.fields_mut().insert("temperature".into(), json!(1.5));
    payload.fields_mut().remove("max_tokens");
    let report = provider.validate(tool, &payload);
    let fields: Vec<&str> = report.errors().map(|i| i.field.as_str()).collect();
    assert_eq!(fields, ["max_tokens", "temperature"]);
    assert_eq!(report.suggestions.len(), 1, "{:?}", report.suggestions);
    let error = report.into_result(&tool.name).unwrap_err();
    assert_eq!(error.field(), Some("max_tokens"));
    assert!(server.seen().is_empty());
}
