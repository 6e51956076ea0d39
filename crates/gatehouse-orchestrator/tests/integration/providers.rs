//! Orchestrated runs against local servers speaking each provider's wire
//! protocol (chat completions, Messages, predictions): the answer reaches
//! the response review and the result, a malformed answer becomes an
//! error gate, and the key never reaches the run's turns, gates or result.

use crate::common;

use std::sync::Arc;

use axum::http::Method;
use common::Harness;
use gatehouse_engine::{DecisionInput, GateKind, RunStatus};
use gatehouse_providers::{AnthropicProvider, OpenAiProvider, Provider, ProviderKind, ReplicateProvider, Tool};
use serde_json::{json, Value};

use crate::wire;

use wire::{assert_no_key, MockProvider, Reply};

const PROMPT: &str = "Summarise the release notes for the beta in three sentences";

/// Everything the run stored, as text, to look for the key in.
fn stored(h: &Harness, run: &gatehouse_engine::RunId) -> String {
    let run_json = serde_json::to_string(&h.engine.run(run).unwrap()).unwrap();
    let turns = serde_json::to_string(&h.turns(run)).unwrap();
    let gates = serde_json::to_string(&h.gates(run)).unwrap();
    format!("{run_json}{turns}{gates}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_server_answers_through_the_reviews() {
    let completion = json!({"id": "c1", "model": "test-model", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "<think>short</think>The beta ships Friday."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5}});
    let server =
        MockProvider::start(vec![(Method::POST, "/v1/chat/completions", vec![Reply::json(200, completion)])]).await;
    let provider = OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap();
    let h = Harness::with(vec![Arc::new(provider)]);
    let run = h.start(json!({"tool": "openai:test-model", "prompt": PROMPT}), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PayloadReview).await, DecisionInput::approve());
    let review = h.gate(&run.id, GateKind::ResponseReview).await;
    let gatehouse_engine::GateSpec::ResponseReview { raw, audited, indicators } = &review.spec else { panic!() };
    assert_eq!(
        (raw.as_str(), audited.as_str()),
        ("<think>short</think>The beta ships Friday.", "The beta ships Friday.")
    );
    assert!(indicators.contains(&"reasoning removed".to_owned()), "{indicators:?}");
    h.decide(&review, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    let result = done.result.unwrap();
    assert_eq!(result["text"], "The beta ships Friday.");
    assert_eq!(result["response"]["usage"], json!({"input_tokens": 12, "output_tokens": 5}));
    let sent = &server.seen()[0];
    assert_eq!(sent.body["messages"][0]["content"], PROMPT);
    assert_no_key("the run's records", &stored(&h, &run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropics_messages_api_answers_through_the_reviews() {
    let message = json!({"id": "msg_01", "type": "message", "role": "assistant", "model": "test-model",
        "content": [{"type": "text", "text": "Ships Friday."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 8}});
    let server = MockProvider::start(vec![(Method::POST, "/v1/messages", vec![Reply::json(200, message)])]).await;
    let provider = AnthropicProvider::new(&server.config(ProviderKind::Anthropic, "")).unwrap();
    let h = Harness::with(vec![Arc::new(provider)]);
    let run = h
        .start(
            json!({"tool": "anthropic:test-model", "prompt": PROMPT, "system": "Be terse."}),
            json!({"hitl_config": {"run_policy": "auto"}}),
        )
        .await;
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "Ships Friday.");
    assert_eq!(server.seen()[0].body["system"], "Be terse.");
    assert_no_key("the run's records", &stored(&h, &run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicate_prediction_is_polled_and_its_input_mapped_by_the_reviewer() {
    let prediction = |status: &str, output: Value| {
        json!({"id": "p1", "model": "owner/captioner", "version": "v1", "status": status, "output": output, "error": null,
            "urls": {"get": "{base}/v1/predictions/p1", "cancel": "{base}/v1/predictions/p1/cancel"}})
    };
    let server = MockProvider::start(vec![
        (Method::POST, "/v1/predictions", vec![Reply::json(201, prediction("starting", Value::Null))]),
        (
            Method::GET,
            "/v1/predictions/p1",
            vec![
                Reply::json(200, prediction("processing", Value::Null)),
                Reply::json(200, prediction("succeeded", json!(["A cat on a windowsill."]))),
            ],
        ),
    ])
    .await;
    let captioner = Tool::new(
        "replicate:captioner",
        "owner/captioner:v1",
        json!({"type": "object", "required": ["prompt", "input_image"],
            "properties": {"prompt": {"type": "string"}, "input_image": {"type": "string", "format": "uri"}}}),
    )
    .with_example(json!({"prompt": "describe", "input_image": "https://example.com/a.png"}));
    let provider = ReplicateProvider::new(&server.config(ProviderKind::Replicate, "")).unwrap().with_tool(captioner);
    let h = Harness::with(vec![Arc::new(provider)]);
    // The HITL run API's request shape: the tool from `agent_tool_config`.
    let input = json!({"prompt": "What is in this picture?", "inputs": {"image_file": "https://example.com/cat.png"},
        "agent_tool_config": {"REPLICATETOOL": {"data": {"model_name": "captioner"}}}});
    let run = h.start(input, json!({})).await;
    // The information step saw `image_file` and recommends mapping it.
    let info = h.gate(&run.id, GateKind::InformationReview).await;
    let gatehouse_engine::GateSpec::InformationReview { recommended_settings, .. } = &info.spec else { panic!() };
    assert_eq!(recommended_settings["input_image"], "https://example.com/cat.png");
    h.decide(&info, DecisionInput::approve());
    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    let mut fixed = payload.payload.clone().unwrap();
    let image = fixed.as_object_mut().unwrap().shift_remove("image_file").unwrap();
    fixed["input_image"] = image;
    h.decide(&payload, DecisionInput::edit(fixed));
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "A cat on a windowsill.");
    let created = server.seen().into_iter().find(|s| s.method == Method::POST).unwrap();
    assert_eq!(created.body["input"]["input_image"], "https://example.com/cat.png");
    assert_no_key("the run's records", &stored(&h, &run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_answer_is_an_error_gate_and_a_retry_recovers() {
    let good = json!({"id": "c2", "model": "test-model", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "Recovered."}, "finish_reason": "stop"}]});
    let server = MockProvider::start(vec![(
        Method::POST,
        "/v1/chat/completions",
        vec![Reply::text(200, "<html>gateway</html>"), Reply::json(200, good)],
    )])
    .await;
    let provider: Arc<dyn Provider> =
        Arc::new(OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap());
    let h = Harness::with(vec![provider]);
    let run = h
        .start(json!({"tool": "openai:test-model", "prompt": PROMPT}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let error = h.gate(&run.id, GateKind::PayloadReview).await;
    assert!(error.text.contains("sent a response Gatehouse cannot read"), "{}", error.text);
    let names: Vec<&str> = error.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["retry", "cancel"]);
    h.decide(&error, DecisionInput { option: Some("retry".into()), ..DecisionInput::approve() });
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "Recovered.");
    assert_eq!(server.count(Method::POST, "/v1/chat/completions"), 2);
}
