//! The tool layer through the real protocol (an rmcp client over an
//! in-memory pipe) on a real engine: a scripted reviewer decides each gate
//! while the call waits.

use crate::common;

use std::time::Duration;

use gatehouse_engine::{DecisionInput, Engine, Gate, GateFilter, GateKind, GateStatus};
use gatehouse_mcp::McpOptions;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::RoleClient;
use serde_json::{json, Value};

use common::{connect, engine, Client, EngineBackend};

type Session = RunningService<RoleClient, Client>;

fn options() -> McpOptions {
    McpOptions { progress_every: Duration::from_millis(50), ..McpOptions::default() }
}

async fn call(client: &Session, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)).await.expect("tools/call")
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().expect("structured content")
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// Decides the next pending gate once it has been pending a little while.
fn reviewer(
    engine: &Engine,
    decide: impl FnOnce(&Gate) -> DecisionInput + Send + 'static,
) -> tokio::task::JoinHandle<Gate> {
    let engine = engine.clone();
    tokio::spawn(async move {
        loop {
            let pending =
                engine.gates(&GateFilter { status: Some(GateStatus::Pending), ..GateFilter::default() }).unwrap();
            if let Some(gate) = pending.into_iter().next() {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let input = decide(&gate);
                return engine.resolve_gate(&gate.id, input, "alice").unwrap();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
}

#[tokio::test]
async fn an_approval_blocks_until_the_reviewer_edits_it_and_returns_the_edit_with_progress_on_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "claude-code").await.unwrap();
    let decided = reviewer(&engine, |gate| {
        assert_eq!(gate.payload, Some(json!({"build": 42, "target": "prod"})));
        DecisionInput::edit(json!({"build": 42, "target": "staging"}))
    });
    let result = call(
        &client,
        "request_approval",
        json!({"action": "deploy build 42", "context": {"build": 42, "target": "prod"}}),
    )
    .await;
    decided.await.unwrap();
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    let outcome = structured(&result);
    assert_eq!(outcome["decision"], "edit");
    assert_eq!(outcome["proceed"], true);
    assert_eq!(outcome["decided_by"], "alice");
    assert_eq!(outcome["payload"], json!({"build": 42, "target": "staging"}));
    assert!(text(&result).starts_with("Approved by alice with changes"), "{}", text(&result));
    let progress = client.service().progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "expected progress while waiting 200 ms, got {progress:?}");
    assert!(progress.windows(2).all(|w| w[1].progress > w[0].progress), "progress must increase");
    assert!(progress[0].message.as_deref().unwrap_or_default().contains(outcome["gate_id"].as_str().unwrap()));
}

#[tokio::test]
async fn a_session_works_in_one_run_named_after_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "cursor").await.unwrap();
    let first = structured(&call(&client, "ask_human", json!({"question": "Which region?", "mode": "async"})).await);
    let second = structured(&call(&client, "ask_human", json!({"question": "Which account?", "mode": "async"})).await);
    assert_eq!(first["run_id"], second["run_id"]);
    let run = engine.run(&first["run_id"].as_str().unwrap().into()).unwrap();
    assert_eq!(run.agent, "cursor");
    assert!(run.title.contains("cursor"), "{}", run.title);
}

#[tokio::test]
async fn a_session_that_ends_with_a_question_open_cancels_its_run_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "cursor").await.unwrap();
    let asked = structured(&call(&client, "ask_human", json!({"question": "Which region?", "mode": "async"})).await);
    let run_id = asked["run_id"].as_str().unwrap().into();
    client.cancel().await.unwrap();
    // The server's session ends once the client has gone; its run ends right after.
    let ended = loop {
        let run = engine.run(&run_id).unwrap();
        if run.status.is_terminal() {
            break run;
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(ended.status, gatehouse_engine::RunStatus::Cancelled);
    assert_eq!(ended.status_reason.as_deref(), Some(gatehouse_mcp::SESSION_CLOSED));
    let gate = engine.gate(&asked["gate_id"].as_str().unwrap().into()).unwrap();
    assert_eq!(gate.status, GateStatus::Cancelled);
}

#[tokio::test]
async fn async_mode_returns_a_pending_gate_and_check_gate_fetches_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "bot").await.unwrap();
    let opened = structured(
        &call(&client, "ask_human", json!({"question": "Which region?", "options": ["eu", "us"], "mode": "async"}))
            .await,
    );
    assert_eq!(opened["status"], "pending");
    let gate_id = opened["gate_id"].as_str().unwrap().to_owned();
    let now = structured(&call(&client, "check_gate", json!({"gate_id": gate_id})).await);
    assert_eq!(now["status"], "pending");
    let decided = reviewer(&engine, |_| DecisionInput::respond("eu-west-1"));
    let answered = call(&client, "check_gate", json!({"gate_id": gate_id, "wait_seconds": 30})).await;
    decided.await.unwrap();
    let answer = structured(&answered);
    assert_eq!(answer["status"], "resolved");
    assert_eq!(answer["decision"], "respond");
    assert_eq!(answer["message"], "eu-west-1");
    assert_eq!(answer["kind"], "question");
}

#[tokio::test]
async fn a_permission_prompt_is_allowed_with_the_reviewers_edit_or_denied_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "claude-code").await.unwrap();
    let decided = reviewer(&engine, |gate| {
        assert_eq!(gate.kind(), GateKind::Approval);
        assert!(gate.text.contains("rm -rf build"), "{}", gate.text);
        DecisionInput::edit(json!({"command": "rm -rf build/tmp"}))
    });
    let input = json!({"command": "rm -rf build"});
    let allowed =
        call(&client, "request_permission", json!({"tool_name": "Bash", "input": input, "tool_use_id": "toolu_1"}))
            .await;
    decided.await.unwrap();
    let answer: Value = serde_json::from_str(&text(&allowed)).expect("the text is the contract's JSON");
    assert_eq!(answer, json!({"behavior": "allow", "updatedInput": {"command": "rm -rf build/tmp"}}));

    let decided = reviewer(&engine, |_| DecisionInput::reject("not today"));
    let denied =
        call(&client, "request_permission", json!({"tool_name": "Bash", "input": {"command": "git push -f"}})).await;
    decided.await.unwrap();
    let answer: Value = serde_json::from_str(&text(&denied)).unwrap();
    assert_eq!(answer["behavior"], "deny");
    assert_eq!(answer["message"], "Denied by alice in Gatehouse: not today");
    assert_eq!(denied.is_error, Some(false));
}

#[tokio::test]
async fn a_rejection_is_an_answer_and_a_bad_argument_an_error_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "bot").await.unwrap();
    let decided = reviewer(&engine, |_| DecisionInput::reject("wrong build"));
    let rejected = call(&client, "request_approval", json!({"action": "deploy"})).await;
    decided.await.unwrap();
    assert_eq!(rejected.is_error, Some(false));
    assert_eq!(structured(&rejected)["proceed"], false);
    assert!(text(&rejected).contains("Rejected by alice"), "{}", text(&rejected));

    let bad = call(&client, "request_approval", json!({"action": "deploy", "urgency": "whenever"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(text(&bad).contains("urgency"), "{}", text(&bad));
    let missing = call(&client, "check_gate", json!({})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("gate_id"), "{}", text(&missing));
    let unknown = call(&client, "check_gate", json!({"gate_id": "gate_nope"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(structured(&unknown)["error"], "not_found");
}

#[tokio::test]
async fn a_review_edit_returns_the_reviewers_output() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "bot").await.unwrap();
    let decided = reviewer(&engine, |gate| {
        assert_eq!(gate.kind(), GateKind::ResponseReview);
        DecisionInput::edit(json!({"audited": "Dear customer, your refund is on its way."}))
    });
    let result = call(&client, "request_review", json!({"output": "hey, refund coming", "indicators": ["tone"]})).await;
    decided.await.unwrap();
    let outcome = structured(&result);
    assert_eq!(outcome["output"], "Dear customer, your refund is on its way.");
    assert_eq!(outcome["proceed"], true);
}

#[tokio::test]
async fn plan_tools_change_the_plan_and_a_proposal_is_reviewed_and_edited() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let client = connect(EngineBackend::new(engine.clone()), options(), "planner").await.unwrap();
    let empty = structured(&call(&client, "plan_read", json!({})).await);
    assert_eq!(empty["plan"], Value::Null);
    let decided = reviewer(&engine, |gate| {
        assert_eq!(gate.kind(), GateKind::PlanReview);
        let mut plan = gate.payload.clone().unwrap();
        plan["tasks"][1]["description"] = json!("Write tests first");
        DecisionInput::edit(plan)
    });
    let proposed = call(
        &client,
        "plan_propose",
        json!({"tasks": [
            {"task_id": "t1", "description": "Read the code"},
            {"task_id": "t2", "description": "Write tests", "dependencies": ["t1"], "priority": "high"}
        ]}),
    )
    .await;
    decided.await.unwrap();
    assert_eq!(structured(&proposed)["decision"], "edit", "{}", text(&proposed));
    let added = call(&client, "plan_add_task", json!({"description": "Ship it", "dependencies": ["t2"]})).await;
    assert_eq!(added.is_error, Some(false), "{}", text(&added));
    let updated = call(&client, "plan_update_task", json!({"task_id": "t1", "status": "completed"})).await;
    assert_eq!(updated.is_error, Some(false), "{}", text(&updated));
    let plan = structured(&call(&client, "plan_read", json!({})).await);
    assert_eq!(plan["plan"]["tasks"][1]["description"], "Write tests first");
    assert_eq!(plan["plan"]["tasks"][2]["description"], "Ship it");
    assert_eq!(plan["progress"]["completed"], 1);
    assert_eq!(plan["ready_tasks"], json!(["t2"]));
    let cycle = call(&client, "plan_set_dependencies", json!({"task_id": "t1", "dependencies": ["t2"]})).await;
    assert_eq!(cycle.is_error, Some(true));
    assert!(text(&cycle).contains("cycle"), "{}", text(&cycle));
}

#[tokio::test]
async fn a_waiting_call_rides_out_a_short_outage_and_gives_up_on_a_long_one() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(&dir);
    let backend = EngineBackend::new(engine.clone());
    let outage = backend.outage.clone();
    let options = McpOptions { reconnect_for: Duration::from_millis(400), ..options() };
    let client = connect(backend, options, "bot").await.unwrap();
    outage.store(3, std::sync::atomic::Ordering::SeqCst);
    let decided = reviewer(&engine, |_| DecisionInput::approve());
    let approved = call(&client, "request_approval", json!({"action": "restart"})).await;
    decided.await.unwrap();
    assert_eq!(structured(&approved)["decision"], "approve", "{}", text(&approved));

    outage.store(u32::MAX, std::sync::atomic::Ordering::SeqCst);
    let started = std::time::Instant::now();
    let failed = call(&client, "request_approval", json!({"action": "restart again"})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(structured(&failed)["error"], "unreachable");
    assert!(text(&failed).contains("Start Gatehouse"), "{}", text(&failed));
    assert!(started.elapsed() >= Duration::from_millis(400));
}
