//! The OpenAI-compatible provider against a local server speaking the chat
//! completions protocol: answers, retries, timeouts, malformed bodies and
//! refusals, and the key kept out of everything but the request header.

use crate::common;

use std::time::Duration;

use axum::http::Method;
use common::{assert_no_key, MockProvider, Reply, KEY};
use gatehouse_providers::{
    FinishReason, OpenAiProvider, Provider, ProviderError, ProviderKind, Remedy, RunInput, TransientFailure,
};
use serde_json::{json, Value};

const PATH: &str = "/v1/chat/completions";

fn completion(text: &str, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "test-model-2025",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    })
}

async fn provider_for(routes: Vec<Reply>) -> (MockProvider, OpenAiProvider) {
    let server = MockProvider::start(vec![(Method::POST, PATH, routes)]).await;
    let provider = OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap();
    (server, provider)
}

async fn call(provider: &OpenAiProvider) -> Result<gatehouse_providers::ProviderResponse, ProviderError> {
    let tool = &provider.tools()[0];
    let input = RunInput { tool: tool.name.clone(), prompt: "Write a haiku".into(), ..RunInput::default() };
    let payload = provider.prepare(tool, &input).unwrap();
    provider.call(tool, &payload).await
}

#[tokio::test]
async fn a_completion_is_prepared_validated_called_and_audited() {
    let (server, provider) = provider_for(vec![Reply::json(200, completion("  Old pond\n\n\n\nfrog  ", "stop"))]).await;
    let tool = &provider.tools()[0];
    assert_eq!(tool.name, "openai:test-model");
    let input = RunInput {
        tool: tool.name.clone(),
        prompt: "Write a haiku".into(),
        system: Some("Be brief.".into()),
        inputs: json!({"temperature": 0.3}).as_object().cloned().unwrap(),
    };
    let payload = provider.prepare(tool, &input).unwrap();
    assert!(provider.validate(tool, &payload).valid);

    let response = provider.call(tool, &payload).await.unwrap();
    assert_eq!(
        (response.text.as_str(), response.finish, response.attempts),
        ("  Old pond\n\n\n\nfrog  ", FinishReason::Stop, 1)
    );
    assert_eq!((response.id.as_deref(), response.model.as_deref()), (Some("chatcmpl-1"), Some("test-model-2025")));
    assert_eq!(response.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((Some(12), Some(5))));
    assert_eq!(provider.audit(&response).cleaned, "Old pond\n\nfrog");

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(
        seen[0].body,
        json!({"temperature": 0.3, "model": "test-model", "messages": [
            {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Write a haiku"}]})
    );
}

#[tokio::test]
async fn a_429_then_a_503_are_retried_until_the_answer() {
    let (server, provider) = provider_for(vec![
        Reply::json(429, json!({"error": {"message": "Rate limit reached", "type": "requests"}}))
            .header("retry-after", "0"),
        Reply::text(503, "upstream busy"),
        Reply::json(200, completion("done", "stop")),
    ])
    .await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.attempts), ("done", 3));
    assert_eq!(server.count(Method::POST, PATH), 3);
}

#[tokio::test]
async fn transient_failures_past_the_last_attempt_are_unavailable_with_the_last_status() {
    let (server, provider) = provider_for(vec![Reply::json(502, json!({"error": {"message": "bad gateway"}}))]).await;
    let error = call(&provider).await.unwrap_err();
    let ProviderError::Unavailable {
        attempts: 3, failure: TransientFailure::Status { status: 502, message, .. }, ..
    } = &error
    else {
        panic!("not unavailable after 3 attempts: {error:?}");
    };
    assert_eq!(message, "bad gateway");
    assert_eq!(error.remedies(), &[Remedy::Retry, Remedy::Cancel]);
    assert_eq!(server.count(Method::POST, PATH), 3);
}

#[tokio::test]
async fn a_retry_after_longer_than_allowed_ends_the_retries_at_once() {
    let (server, provider) =
        provider_for(vec![Reply::json(429, json!({"error": {"message": "quota"}})).header("retry-after", "3600")])
            .await;
    let error = call(&provider).await.unwrap_err();
    let ProviderError::Unavailable { attempts: 1, failure: TransientFailure::Status { retry_after_ms, .. }, .. } =
        error
    else {
        panic!("retried or not unavailable: {error:?}");
    };
    assert_eq!(retry_after_ms, Some(3_600_000));
    assert_eq!(server.count(Method::POST, PATH), 1);
}

#[tokio::test]
async fn a_timeout_is_retried_then_reported_as_unavailable() {
    let server = MockProvider::start(vec![(
        Method::POST,
        PATH,
        vec![Reply::json(200, completion("late", "stop")).after(Duration::from_secs(30))],
    )])
    .await;
    let mut config = server.config(ProviderKind::OpenaiCompatible, "/v1");
    config.timeout = Duration::from_millis(200);
    config.retry.max_attempts = 2;
    let provider = OpenAiProvider::new(&config).unwrap();
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::Unavailable { attempts: 2, failure: TransientFailure::Timeout { .. }, .. }),
        "{error:?}"
    );
    assert_eq!(server.count(Method::POST, PATH), 2);
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable_as_a_connect_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let server = MockProvider::start(vec![]).await;
    let config = server.config(ProviderKind::OpenaiCompatible, "").with_base_url(format!("http://{address}/v1"));
    let error = call(&OpenAiProvider::new(&config).unwrap()).await.unwrap_err();
    assert!(
        matches!(error, ProviderError::Unavailable { attempts: 3, failure: TransientFailure::Connect { .. }, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_body_that_is_not_the_protocol_is_malformed_and_not_retried() {
    let (server, provider) = provider_for(vec![Reply::text(200, "<html>proxy login</html>")]).await;
    let error = call(&provider).await.unwrap_err();
    let ProviderError::MalformedResponse { status: 200, detail, .. } = &error else { panic!("{error:?}") };
    assert!(detail.contains("not JSON") && detail.contains("proxy login"), "{detail}");
    assert_eq!(server.count(Method::POST, PATH), 1);

    let (_server, provider) = provider_for(vec![Reply::json(200, json!({"object": "chat.completion"}))]).await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(&error, ProviderError::MalformedResponse { detail, .. } if detail.contains("choices")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_400_carries_the_providers_message_and_field_and_is_not_retried() {
    let (server, provider) = provider_for(vec![Reply::json(
        400,
        json!({"error": {"message": "Invalid 'temperature': must be at most 2.", "type": "invalid_request_error",
                         "param": "temperature", "code": "invalid_value"}}),
    )])
    .await;
    let error = call(&provider).await.unwrap_err();
    assert_eq!(
        error,
        ProviderError::Rejected {
            provider: "openai".into(),
            status: 400,
            message: "Invalid 'temperature': must be at most 2.".into(),
            error_type: Some("invalid_request_error".into()),
            field: Some("temperature".into()),
        }
    );
    assert_eq!(error.remedies(), &[Remedy::FixPayload, Remedy::Retry, Remedy::Cancel]);
    assert_eq!(server.count(Method::POST, PATH), 1);
}

#[tokio::test]
async fn an_ollama_style_error_string_is_read() {
    let (_server, provider) =
        provider_for(vec![Reply::json(404, json!({"error": "model \"test-model\" not found"}))]).await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(&error, ProviderError::Rejected { status: 404, message, .. } if message.contains("not found")),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_refusal_and_a_content_filter_reach_the_audit() {
    let refusal = json!({"choices": [{"message": {"role": "assistant", "content": null,
                                                  "refusal": "I can't help with that."}, "finish_reason": "stop"}]});
    let (_server, provider) = provider_for(vec![Reply::json(200, refusal)]).await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.finish), ("I can't help with that.", FinishReason::Refusal));
    assert!(provider.audit(&response).quality.refusal);

    let (_server, provider) = provider_for(vec![Reply::json(200, completion("partial", "content_filter"))]).await;
    let audited = provider.audit(&call(&provider).await.unwrap());
    assert_eq!(audited.safety_flags[0].flag.as_str(), "content_filter");
}

#[tokio::test]
async fn the_key_never_shows_in_errors_debug_output_or_payloads() {
    let echo = format!("Incorrect API key provided: {KEY}. You can find your API key at ...");
    let (server, provider) =
        provider_for(vec![Reply::json(401, json!({"error": {"message": echo, "type": "invalid_request_error"}}))])
            .await;
    let tool = &provider.tools()[0];
    let input = RunInput { tool: tool.name.clone(), prompt: "hi".into(), ..RunInput::default() };
    let payload = provider.prepare(tool, &input).unwrap();
    let error = provider.call(tool, &payload).await.unwrap_err();

    assert!(error.to_string().contains("Incorrect API key provided: [redacted]"), "{error}");
    assert_no_key("the error", &error.to_string());
    assert_no_key("the error's Debug", &format!("{error:?}"));
    assert_no_key("the error's JSON", &serde_json::to_string(&error).unwrap());
    assert_no_key("the provider's Debug", &format!("{provider:?}"));
    assert_no_key("the payload", &serde_json::to_string(&payload).unwrap());
    assert_eq!(error.remedies(), &[Remedy::Retry, Remedy::Cancel]);
    // It was sent, where it belongs.
    assert_eq!(server.seen()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
}

#[tokio::test]
async fn a_server_without_a_key_gets_no_authorization_header() {
    let server =
        MockProvider::start(vec![(Method::POST, PATH, vec![Reply::json(200, completion("hi", "stop"))])]).await;
    let mut config = server.config(ProviderKind::OpenaiCompatible, "/v1");
    config.api_key = None;
    let provider = OpenAiProvider::new(&config).unwrap();
    assert_eq!(call(&provider).await.unwrap().text, "hi");
    assert_eq!(server.seen()[0].header("authorization"), None);
}
