//! The review checkpoints driven by Gatehouse: information, payload and response
//! review under each run policy, the reviewer's edits reaching the provider
//! and the result, the error/retry gate, and the audit trail of decision
//! types and latencies.

use crate::common;

use common::{decision_types, Harness};
use gatehouse_engine::{DecisionAction, DecisionInput, GateKind, GateSpec, RunStatus};
use gatehouse_providers::{ProviderError, Step};
use serde_json::json;

const CLEAR: &str = "Summarise the release notes for the beta in three sentences";

fn option(name: &str, action: DecisionAction) -> DecisionInput {
    DecisionInput { option: Some(name.into()), ..DecisionInput::new(action) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_human_waits_at_payload_and_response_and_the_edited_text_is_the_result() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    assert_eq!(run.agent, "gatehouse");
    assert_eq!(run.title, format!("scripted:chat: {CLEAR}"));

    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    assert_eq!(payload.payload.as_ref().unwrap()["messages"][0]["content"], CLEAR);
    assert_eq!(payload.example_input, Some(json!({"temperature": 0.2})));
    assert!(h.scripted.calls().is_empty(), "nothing is sent before the payload is approved");
    h.decide(&payload, DecisionInput::approve());

    let response = h.gate(&run.id, GateKind::ResponseReview).await;
    let GateSpec::ResponseReview { raw, audited, indicators } = &response.spec else { panic!("{:?}", response.spec) };
    assert!(raw.starts_with("Draft answer to"), "{raw}");
    assert_eq!(raw, audited);
    assert!(indicators.iter().any(|i| i.ends_with("words")), "{indicators:?}");
    h.decide(&response, DecisionInput::edit(json!({"audited": "The beta ships on Friday."})));

    let done = h.status(&run.id, RunStatus::Completed).await;
    let result = done.result.expect("a completed run has a result");
    assert_eq!(result["text"], "The beta ships on Friday.");
    assert_eq!((result["edited"].clone(), result["attempts"].clone()), (json!(true), json!(1)));
    assert_eq!(h.scripted.calls().len(), 1);
    let turns = h.turns(&run.id);
    assert_eq!(decision_types(&turns), ["payload_review human_approved", "response_review human_edited"]);
    let note = turns.iter().find(|t| t.metadata["step"] == "response_review").unwrap();
    assert!(note.metadata["latency_ms"].as_i64().unwrap() >= 0);
    assert_eq!(note.metadata["decided_by"], "alice");
    assert_eq!(note.metadata["gate_id"], json!(response.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_auto_policy_runs_to_the_end_recording_each_step_as_auto_approved() {
    let h = Harness::new();
    let run = h
        .start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert!(done.result.unwrap()["text"].as_str().unwrap().contains(CLEAR));
    let turns = h.turns(&run.id);
    assert_eq!(decision_types(&turns), ["payload_review auto_approved", "response_review auto_approved"]);
    assert!(h.gates(&run.id).iter().all(|g| g.status == gatehouse_engine::GateStatus::Resolved));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thresholds_stop_on_low_confidence_and_on_flagged_answers_only() {
    let h = Harness::new();
    let policy = json!({"hitl_config": {"run_policy": "auto_with_thresholds",
        "review_thresholds": {"confidence_min": 0.8, "safety_flags": ["pii"], "payload_changes_max": 3}}});
    // A clear prompt with a clean answer: nothing waits.
    let clear = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), policy.clone()).await;
    h.status(&clear.id, RunStatus::Completed).await;
    assert_eq!(decision_types(&h.turns(&clear.id)), ["payload_review auto_approved", "response_review auto_approved"]);

    // A two-word prompt: the information step is unsure and a human must look.
    h.scripted.script("scripted:chat", [Step::Reply("Mail ops@example.com to book it.".into())]);
    let vague = h.start(json!({"tool": "scripted:chat", "prompt": "book it"}), policy).await;
    let info = h.gate(&vague.id, GateKind::InformationReview).await;
    let GateSpec::InformationReview { confidence, reasons, .. } = &info.spec else { panic!() };
    assert!(confidence.unwrap() < 0.8);
    assert!(reasons[0].starts_with("The prompt is very short (2 words)"), "{reasons:?}");
    assert_eq!(info.payload, Some(json!({"prompt": "book it", "model": "scripted:chat"})));
    h.decide(&info, DecisionInput::approve());
    // The answer carries an email address: flagged `pii`, so the response waits too.
    let response = h.gate(&vague.id, GateKind::ResponseReview).await;
    assert_eq!(response.safety_flags, ["pii"]);
    h.decide(&response, DecisionInput::approve());
    h.status(&vague.id, RunStatus::Completed).await;
    assert_eq!(
        decision_types(&h.turns(&vague.id)),
        ["information_review human_approved", "payload_review auto_approved", "response_review human_approved"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_information_review_can_modify_the_prompt_and_change_the_model() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:flaky", "prompt": "write"}), json!({})).await;
    let info = h.gate(&run.id, GateKind::InformationReview).await;
    // A model nobody serves is refused, and the review is asked again saying why.
    h.decide(&info, DecisionInput::edit(json!({"prompt": "write", "model": "gpt-99"})));
    let again = h.gate(&run.id, GateKind::InformationReview).await;
    assert_ne!(again.id, info.id);
    let GateSpec::InformationReview { reasons, .. } = &again.spec else { panic!() };
    assert!(reasons[0].starts_with("The model was not changed: no provider offers `gpt-99`"), "{reasons:?}");
    h.decide(&again, DecisionInput::edit(json!({"prompt": "Write a haiku about the sea", "model": "scripted:chat"})));

    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    assert_eq!(payload.payload.as_ref().unwrap()["model"], "scripted-chat");
    assert_eq!(payload.payload.as_ref().unwrap()["messages"][0]["content"], "Write a haiku about the sea");
    h.decide(&payload, DecisionInput::approve());
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["tool"], "scripted:chat");
    assert_eq!(h.scripted.calls()[0].tool, "scripted:chat");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_the_request_cancels_the_run_with_the_reason() {
    let h = Harness::new();
    let run =
        h.start(json!({"tool": "scripted:chat", "prompt": "Write to jane@example.com now please"}), json!({})).await;
    let info = h.gate(&run.id, GateKind::InformationReview).await;
    assert_eq!(info.safety_flags, ["pii"]);
    h.decide(&info, DecisionInput::reject("no personal data"));
    let ended = h.status(&run.id, RunStatus::Cancelled).await;
    assert_eq!(ended.status_reason.as_deref(), Some("the request was rejected by alice: no personal data"));
    assert!(h.scripted.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_failing_validation_must_be_fixed_overridden_or_cancelled_by_a_human() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:caption", "prompt": "Describe this picture in one line",
        "inputs": {"image_file": "https://example.com/cat.png", "detail": "huge"}});
    // Even the auto policy stops: the payload is invalid.
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    let review = h.gate(&run.id, GateKind::PayloadReview).await;
    assert!(review.requires_human);
    let GateSpec::PayloadReview { validation, suggestions, required_fields } = &review.spec else { panic!() };
    assert!(validation.iter().any(|v| v.starts_with("detail:")), "{validation:?}");
    assert!(suggestions[0].starts_with("Map `image_file` to `input_image`"), "{suggestions:?}");
    assert_eq!(required_fields, &["prompt", "input_image"]);
    let names: Vec<&str> = review.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["apply_suggestions", "override_validation", "cancel"]);

    // One key press applies the mapping; `detail` is still wrong, so it is asked again.
    h.decide(&review, option("apply_suggestions", DecisionAction::Approve));
    let second = h.gate(&run.id, GateKind::PayloadReview).await;
    assert_ne!(second.id, review.id);
    let fixed = second.payload.clone().unwrap();
    assert_eq!(fixed["input_image"], "https://example.com/cat.png");
    assert!(fixed.get("image_file").is_none());
    // The reviewer fixes the last field by hand: valid, so it is sent.
    let mut edited = fixed.clone();
    edited["detail"] = json!("high");
    h.decide(&second, DecisionInput::edit(edited.clone()));
    h.status(&run.id, RunStatus::Completed).await;
    let sent = h.scripted.calls()[0].payload.to_value();
    assert_eq!(sent, edited);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_becomes_an_error_gate_offering_its_remedies() {
    let h = Harness::new();
    let refused = ProviderError::Rejected {
        provider: "scripted".into(),
        status: 400,
        message: "temperature must be at most 1".into(),
        error_type: Some("invalid_request_error".into()),
        field: Some("temperature".into()),
    };
    h.scripted.script("scripted:chat", [Step::Fail(refused), Step::Reply("Fixed: {prompt}".into())]);
    let run = h
        .start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let error = h.gate(&run.id, GateKind::PayloadReview).await;
    assert!(error.requires_human, "an error gate never passes on its own");
    assert!(error.text.contains("refused the request (HTTP 400): temperature must be at most 1"), "{}", error.text);
    assert_eq!(error.context.step.as_deref(), Some("error"));
    let names: Vec<&str> = error.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["retry", "cancel"]);
    assert!(error.allowed_actions.contains(&DecisionAction::Edit));
    // The failure is on the timeline as an error (for error breakpoints).
    let failed = h.turns(&run.id).into_iter().find(|t| t.metadata.get("error").is_some()).expect("an error turn");
    assert_eq!(failed.metadata["error"]["code"], "rejected");

    // An edit that is not a payload at all is refused to the reviewer, and the gate still waits.
    let refused = h.engine.resolve_gate(&error.id, DecisionInput::edit(json!("temperature 0.5")), "alice");
    assert!(refused.unwrap_err().to_string().starts_with("payload:"));
    let mut fixed = error.payload.clone().unwrap();
    fixed["temperature"] = json!(0.5);
    h.decide(&error, DecisionInput::edit(fixed));
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert!(done.result.unwrap()["text"].as_str().unwrap().starts_with("Fixed:"));
    let calls = h.scripted.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].payload.get("temperature"), Some(&json!(0.5)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_at_the_error_gate_ends_the_run() {
    let h = Harness::new();
    let run = h
        .start(json!({"tool": "scripted:flaky", "prompt": CLEAR}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let error = h.gate(&run.id, GateKind::PayloadReview).await;
    assert!(error.text.contains("unavailable"), "{}", error.text);
    h.decide(&error, option("cancel", DecisionAction::Reject));
    let ended = h.status(&run.id, RunStatus::Cancelled).await;
    assert!(ended.status_reason.unwrap().starts_with("cancelled by alice after `scripted:flaky` failed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_with_changes_asks_the_model_again_with_the_reviewers_changes() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PayloadReview).await, DecisionInput::approve());
    let response = h.gate(&run.id, GateKind::ResponseReview).await;
    h.decide(
        &response,
        DecisionInput { text: Some("shorter, and in French".into()), ..DecisionInput::new(DecisionAction::Retry) },
    );
    let second_payload = h.gate(&run.id, GateKind::PayloadReview).await;
    let prompt = second_payload.payload.as_ref().unwrap()["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(prompt, format!("{CLEAR}\n\nChanges asked by the reviewer: shorter, and in French"));
    h.decide(&second_payload, DecisionInput::approve());
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["attempts"], json!(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_run_inputs_are_refused_before_any_run_exists() {
    let h = Harness::new();
    let template = gatehouse_engine::NewRun::default();
    let err = h.orch.start(&json!({"tool": "nope", "prompt": "x"}), template.clone(), "alice").await.unwrap_err();
    assert!(err.to_string().starts_with("run_input.tool: no provider offers `nope`"), "{err}");
    let with_limit: gatehouse_engine::NewRun =
        serde_json::from_value(json!({"protocol": {"max_consecutive_agent_turns": 2}})).unwrap();
    let err = h.orch.start(&json!({"tool": "scripted:chat", "prompt": "x"}), with_limit, "alice").await.unwrap_err();
    assert!(err.to_string().starts_with("run_input.protocol:"), "{err}");
    assert!(h.engine.runs(&Default::default()).unwrap().is_empty());
}
