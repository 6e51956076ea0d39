//! The Replicate provider against a local server speaking the predictions
//! API: `Prefer: wait`, polling, failed and overdue predictions, retries
//! that never start a second prediction, and the key kept on Replicate's origin.

use crate::common;

use std::time::Duration;

use axum::http::Method;
use common::{assert_no_key, MockProvider, Reply, KEY};
use gatehouse_providers::{
    Fix, Provider, ProviderError, ProviderKind, ProviderResponse, ReplicateProvider, RunInput, Tool, TransientFailure,
};
use serde_json::{json, Value};

const CREATE: &str = "/v1/predictions";
const GET: &str = "/v1/predictions/p1";
const CANCEL: &str = "/v1/predictions/p1/cancel";

fn prediction(status: &str, output: Value) -> Value {
    json!({
        "id": "p1", "model": "owner/captioner", "version": "v1", "status": status, "output": output,
        "error": null, "metrics": {"input_token_count": 9, "output_token_count": 4},
        "urls": {"get": "{base}/v1/predictions/p1", "cancel": "{base}/v1/predictions/p1/cancel"}
    })
}

fn captioner() -> Tool {
    Tool::new(
        "replicate:captioner",
        "owner/captioner:v1",
        json!({
            "type": "object",
            "required": ["prompt", "input_image"],
            "properties": {"prompt": {"type": "string"}, "input_image": {"type": "string", "format": "uri"}}
        }),
    )
    .with_example(json!({"prompt": "describe", "input_image": "https://example.com/a.png"}))
}

async fn provider_for(routes: Vec<(Method, &str, Vec<Reply>)>) -> (MockProvider, ReplicateProvider) {
    let server = MockProvider::start(routes).await;
    let provider = ReplicateProvider::new(&server.config(ProviderKind::Replicate, "")).unwrap().with_tool(captioner());
    (server, provider)
}

async fn call(provider: &ReplicateProvider) -> Result<ProviderResponse, ProviderError> {
    let tool = captioner();
    let payload = provider.prepare(&tool, &RunInput { prompt: "What is this?".into(), ..RunInput::default() }).unwrap();
    provider.call(&tool, &payload).await
}

#[tokio::test]
async fn a_prediction_is_created_then_polled_until_it_succeeds() {
    let (server, provider) = provider_for(vec![
        (Method::POST, CREATE, vec![Reply::json(201, prediction("starting", Value::Null))]),
        (
            Method::GET,
            GET,
            vec![
                Reply::json(200, prediction("processing", json!(["A ca"]))),
                Reply::json(200, prediction("succeeded", json!(["A ca", "t."]))),
            ],
        ),
    ])
    .await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.attempts), ("A cat.", 3));
    assert_eq!((response.id.as_deref(), response.model.as_deref()), (Some("p1"), Some("owner/captioner")));
    assert_eq!(response.usage.map(|u| u.input_tokens), Some(Some(9)));

    let seen = server.seen();
    let methods: Vec<(&Method, &str)> = seen.iter().map(|s| (&s.method, s.path.as_str())).collect();
    assert_eq!(methods, [(&Method::POST, CREATE), (&Method::GET, GET), (&Method::GET, GET)]);
    assert_eq!(
        seen[0].body,
        json!({"version": "owner/captioner:v1",
               "input": {"prompt": "What is this?", "input_image": "https://example.com/a.png"}})
    );
    assert!(seen.iter().all(|s| s.header("authorization") == Some(format!("Bearer {KEY}").as_str())));
    assert!(seen[0].header("prefer").is_some_and(|p| p.starts_with("wait")), "{:?}", seen[0].header("prefer"));
}

#[tokio::test]
async fn an_answer_within_prefer_wait_needs_no_poll() {
    let (server, provider) = provider_for(vec![(
        Method::POST,
        CREATE,
        vec![Reply::json(201, prediction("succeeded", json!(["https://r.example/1.png", "https://r.example/2.png"])))],
    )])
    .await;
    let response = call(&provider).await.unwrap();
    assert_eq!(response.text, "https://r.example/1.png\nhttps://r.example/2.png");
    assert_eq!(response.attempts, 1);
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn a_failed_prediction_carries_its_error() {
    let mut failed = prediction("failed", Value::Null);
    failed["error"] = json!("CUDA out of memory");
    let (_server, provider) = provider_for(vec![
        (Method::POST, CREATE, vec![Reply::json(201, prediction("processing", Value::Null))]),
        (Method::GET, GET, vec![Reply::json(200, failed)]),
    ])
    .await;
    let error = call(&provider).await.unwrap_err();
    assert_eq!(
        error,
        ProviderError::PredictionFailed {
            provider: "replicate".into(),
            id: "p1".into(),
            status: "failed".into(),
            message: "CUDA out of memory".into(),
        }
    );
}

#[tokio::test]
async fn creating_is_retried_after_a_429_but_never_after_a_500() {
    let (server, provider) = provider_for(vec![(
        Method::POST,
        CREATE,
        vec![
            Reply::json(429, json!({"title": "Too many requests", "status": 429})).header("retry-after", "0"),
            Reply::json(201, prediction("succeeded", json!("ok"))),
        ],
    )])
    .await;
    assert_eq!(call(&provider).await.unwrap().attempts, 2);
    assert_eq!(server.count(Method::POST, CREATE), 2);

    // A 500 may have started the prediction: a second POST could run (and bill) it twice.
    let (server, provider) = provider_for(vec![(
        Method::POST,
        CREATE,
        vec![
            Reply::json(500, json!({"detail": "internal error"})),
            Reply::json(201, prediction("succeeded", json!("ok"))),
        ],
    )])
    .await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(
            &error,
            ProviderError::Unavailable { attempts: 1, failure: TransientFailure::Status { status: 500, .. }, .. }
        ),
        "{error:?}"
    );
    assert_eq!(server.count(Method::POST, CREATE), 1);
}

#[tokio::test]
async fn a_poll_failing_with_503_is_retried() {
    let (server, provider) = provider_for(vec![
        (Method::POST, CREATE, vec![Reply::json(201, prediction("starting", Value::Null))]),
        (Method::GET, GET, vec![Reply::text(503, "busy"), Reply::json(200, prediction("succeeded", json!("done")))]),
    ])
    .await;
    let response = call(&provider).await.unwrap();
    assert_eq!((response.text.as_str(), response.attempts), ("done", 3));
    assert_eq!(server.count(Method::GET, GET), 2);
}

#[tokio::test]
async fn an_input_error_names_the_field_and_the_validation_suggests_the_mapping() {
    let (_server, provider) = provider_for(vec![(
        Method::POST,
        CREATE,
        vec![Reply::json(
            422,
            json!({"title": "Input validation failed", "status": 422, "detail": "- input: input_image is required",
                   "invalid_fields": [{"type": "required", "field": "input", "description": "input_image is required"}]}),
        )],
    )])
    .await;
    let tool = captioner();
    let mut tool_without_example = tool.clone();
    tool_without_example.example_input.clear();
    let input = RunInput {
        prompt: "What is this?".into(),
        inputs: json!({"image_file": "https://example.com/b.png"}).as_object().cloned().unwrap(),
        ..RunInput::default()
    };
    let payload = provider.prepare(&tool_without_example, &input).unwrap();
    let report = provider.validate(&tool, &payload);
    assert!(!report.valid);
    assert_eq!(report.suggestions[0].fix, Fix::MapField { from: "image_file".into(), to: "input_image".into() });

    // Overriding the validation sends it anyway; Replicate refuses, naming the field.
    let error = provider.call(&tool, &payload).await.unwrap_err();
    assert_eq!((error.status(), error.field()), (Some(422), Some("input_image")));
}

#[tokio::test]
async fn a_poll_url_on_another_origin_is_refused_and_gets_no_key() {
    let mut elsewhere = prediction("starting", Value::Null);
    elsewhere["urls"]["get"] = json!("http://attacker.invalid/v1/predictions/p1");
    let (server, provider) = provider_for(vec![(Method::POST, CREATE, vec![Reply::json(201, elsewhere)])]).await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(&error, ProviderError::MalformedResponse { detail, .. } if detail.contains("attacker.invalid")),
        "{error:?}"
    );
    assert_eq!(server.seen().len(), 1);
    assert_no_key("the error", &format!("{error:?}"));
}

#[tokio::test]
async fn a_prediction_running_past_its_time_is_cancelled() {
    let server = MockProvider::start(vec![
        (Method::POST, CREATE, vec![Reply::json(201, prediction("processing", Value::Null))]),
        (Method::POST, CANCEL, vec![Reply::json(200, prediction("canceled", Value::Null))]),
    ])
    .await;
    let mut config = server.config(ProviderKind::Replicate, "");
    config.max_prediction_time = Duration::ZERO;
    let provider = ReplicateProvider::new(&config).unwrap();
    let error = call(&provider).await.unwrap_err();
    let ProviderError::Unavailable { failure: TransientFailure::Timeout { message }, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(message.contains("p1") && message.contains("cancelled"), "{message}");
    assert_eq!(server.count(Method::POST, CANCEL), 1);
    assert_eq!(server.count(Method::GET, GET), 0);
}

#[tokio::test]
async fn an_unknown_status_is_malformed() {
    let (_server, provider) =
        provider_for(vec![(Method::POST, CREATE, vec![Reply::json(201, prediction("dreaming", Value::Null))])]).await;
    let error = call(&provider).await.unwrap_err();
    assert!(
        matches!(&error, ProviderError::MalformedResponse { detail, .. } if detail.contains("`dreaming`")),
        "{error:?}"
    );
}
