//! Answer injection: a blocker answered while an orchestrated run works
//! goes into the model's next prompt through the run's template (or the
//! default one), the timeline shows what was injected, and a blocker still
//! open holds the next attempt until a person answers it.

use crate::common;

use common::Harness;
use gatehouse_engine::{DecisionAction, DecisionInput, GateKind, NewGate, RunStatus};
use gatehouse_orchestrator::injection::{render, DEFAULT_TEMPLATE};
use serde_json::json;

const CLEAR: &str = "Summarise the release notes for the beta in three sentences";

fn retry() -> DecisionInput {
    DecisionInput::new(DecisionAction::Retry)
}

fn prompt_of(payload: &serde_json::Value) -> String {
    payload["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_blocker_reaches_the_next_prompt_through_the_runs_template() {
    let h = Harness::new();
    let template = "Q: {question}\nA: {answer} (from {answered_by})";
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR, "answer_template": template}), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PayloadReview).await, DecisionInput::approve());
    let response = h.gate(&run.id, GateKind::ResponseReview).await;

    let blocker = h.engine.open_gate(&run.id, NewGate::question("Which audience?"), "writer").unwrap();
    h.decide(&blocker, DecisionInput::respond("Developers"));
    h.decide(&response, retry());

    let injected = "Q: Which audience?\nA: Developers (from alice)";
    let second = h.gate(&run.id, GateKind::PayloadReview).await;
    assert_eq!(prompt_of(second.payload.as_ref().unwrap()), format!("{CLEAR}\n\n{injected}"));
    h.decide(&second, DecisionInput::approve());
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    // The model was asked with it, and the timeline shows what was injected.
    let calls = h.scripted.calls();
    let sent = serde_json::to_string(&calls[1].payload).unwrap();
    assert!(sent.contains("Q: Which audience?\\nA: Developers (from alice)"), "{sent}");
    assert!(!serde_json::to_string(&calls[0].payload).unwrap().contains("Which audience?"));
    let turns = h.turns(&run.id);
    let shown: Vec<_> = turns.iter().filter(|t| t.metadata["step"] == "answer_injection").collect();
    assert_eq!(shown.len(), 1, "{:#?}", h.history(&run.id));
    assert!(shown[0].content.contains("> Q: Which audience?\n> A: Developers (from alice)"), "{}", shown[0].content);
    assert_eq!(shown[0].metadata["injected"]["gates"], json!([blocker.id.to_string()]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_blocker_holds_the_next_attempt_until_answered_with_the_default_template() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::PayloadReview).await, DecisionInput::approve());
    let response = h.gate(&run.id, GateKind::ResponseReview).await;
    let blocker = h.engine.open_gate(&run.id, NewGate::question("Formal or casual?"), "writer").unwrap();
    h.decide(&response, retry());
    h.decide(&blocker, DecisionInput::respond("Casual"));

    let second = h.gate(&run.id, GateKind::PayloadReview).await;
    let expected = render(DEFAULT_TEMPLATE, "Formal or casual?", "Casual", "alice");
    assert_eq!(prompt_of(second.payload.as_ref().unwrap()), format!("{CLEAR}\n\n{expected}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_without_the_answer_is_refused_naming_the_field() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:chat", "prompt": CLEAR, "answer_template": "Q: {question}"});
    let err = h.orch.start(&input, Default::default(), "alice").await.unwrap_err();
    assert!(err.to_string().contains("run_input.answer_template"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_plan_execution_a_blockers_answer_reaches_only_its_own_tasks_prompt() {
    let h = Harness::new();
    let input =
        json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": {"goal": false, "plan": true}});
    let run = h.start(input, json!({})).await;
    let plan = h.gate(&run.id, GateKind::PlanReview).await;
    let tasks = plan.payload.as_ref().unwrap()["tasks"].as_array().unwrap().clone();
    let first = tasks[0]["task_id"].as_str().unwrap().to_owned();

    let mut ask = NewGate::question("Which region first?");
    ask.context.task_id = Some(first.clone());
    let blocker = h.engine.open_gate(&run.id, ask, "planner").unwrap();
    h.decide(&blocker, DecisionInput::respond("EU"));
    h.decide(&plan, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    let injected = render(DEFAULT_TEMPLATE, "Which region first?", "EU", "alice");
    let sent: Vec<String> = h.scripted.calls().iter().map(|c| serde_json::to_string(&c.payload).unwrap()).collect();
    let with: Vec<bool> = sent.iter().map(|p| p.contains("User answer: EU")).collect();
    // The plan's own request, then one per task: only the first task's carries the answer.
    assert_eq!(with.iter().filter(|w| **w).count(), 1, "{sent:#?}");
    let shown: Vec<_> = h.turns(&run.id).into_iter().filter(|t| t.metadata["step"] == "answer_injection").collect();
    assert_eq!(shown.len(), 1);
    assert!(shown[0].content.contains(&injected.replace('\n', "\n> ")), "{}", shown[0].content);
}
