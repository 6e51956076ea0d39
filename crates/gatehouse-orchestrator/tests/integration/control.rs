//! Reviewers control orchestrated runs like any other: pause and resume at
//! any point, cancel (even during a provider call), and the
//! step-through modes (step after each step; breakpoints on a tool call,
//! an error or a named step).

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::Harness;
use gatehouse_engine::{DecisionInput, GateKind, RunStatus, StepMode};
use gatehouse_providers::{ProviderError, Step, TransientFailure};
use serde_json::json;

const CLEAR: &str = "Summarise the release notes for the beta in three sentences";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_run_takes_no_step_until_resumed() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    h.engine.pause_run(&run.id, "alice").unwrap();
    // The gate can still be decided, but the paused run does not call the model.
    h.decide(&payload, DecisionInput::approve());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(h.scripted.calls().is_empty(), "{:#?}", h.history(&run.id));
    assert_eq!(h.engine.run(&run.id).unwrap().status, RunStatus::Paused);

    h.engine.resume_run(&run.id, "alice").unwrap();
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(h.scripted.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_run_withdraws_its_gate_and_stops_the_driver() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    h.engine.cancel_run(&run.id, "alice", Some("not needed")).unwrap();
    let gate =
        h.until(|e| Ok(Some(e.gate(&payload.id)?).filter(|g| g.status != gatehouse_engine::GateStatus::Pending))).await;
    assert_eq!(gate.unwrap().status, gatehouse_engine::GateStatus::Cancelled);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ended = h.engine.run(&run.id).unwrap();
    assert_eq!((ended.status, ended.status_reason.as_deref()), (RunStatus::Cancelled, Some("not needed")));
    assert!(h.scripted.calls().is_empty());
}

/// A provider whose calls never answer, counting them; with `hold`, its
/// first call holds whoever drops it (see [`HoldSignals`]).
#[derive(Debug, Default)]
struct Hanging {
    calls: std::sync::atomic::AtomicUsize,
    tools: Vec<gatehouse_providers::Tool>,
    hold: Option<HoldSignals>,
}

#[async_trait::async_trait]
impl gatehouse_providers::Provider for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }
    fn kind(&self) -> gatehouse_providers::ProviderKind {
        gatehouse_providers::ProviderKind::Scripted
    }
    fn tools(&self) -> &[gatehouse_providers::Tool] {
        &self.tools
    }
    fn prepare(
        &self,
        tool: &gatehouse_providers::Tool,
        input: &gatehouse_providers::RunInput,
    ) -> Result<gatehouse_providers::Payload, ProviderError> {
        gatehouse_providers::prepare::inputs(tool, input)
    }
    async fn call(
        &self,
        _: &gatehouse_providers::Tool,
        _: &gatehouse_providers::Payload,
    ) -> Result<gatehouse_providers::ProviderResponse, ProviderError> {
        let first = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
        let _hold = self.hold.as_ref().filter(|_| first).map(|signals| Hold {
            dropping: signals.dropping.lock().expect("sender").clone(),
            go: Arc::clone(&signals.go),
        });
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_during_a_provider_call_drops_the_call() {
    let hanging = Arc::new(Hanging {
        tools: vec![gatehouse_providers::Tool::new("hanging:model", "model", json!({"type": "object"}))],
        ..Hanging::default()
    });
    let h = Harness::with(vec![hanging.clone()]);
    let run = h
        .start(json!({"tool": "hanging:model", "prompt": CLEAR}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let called = h.until(|_| Ok((hanging.calls.load(std::sync::atomic::Ordering::SeqCst) == 1).then_some(()))).await;
    assert!(called.is_some(), "{:#?}", h.history(&run.id));
    h.engine.cancel_run(&run.id, "alice", None).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let turns = h.turns(&run.id);
    assert!(turns.iter().all(|t| t.metadata["step"] != "call"), "no call was recorded: {:#?}", h.history(&run.id));
    assert_eq!(h.engine.run(&run.id).unwrap().status, RunStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_mode_pauses_after_each_step_until_the_reviewer_steps() {
    let h = Harness::new();
    let run = h
        .start(
            json!({"tool": "scripted:chat", "prompt": CLEAR}),
            json!({"step_mode": "step", "hitl_config": {"run_policy": "auto"}}),
        )
        .await;
    assert_eq!(run.step_mode, StepMode::Step);
    let mut steps = Vec::new();
    loop {
        let run_now = h
            .until(|e| {
                Ok(Some(e.run(&run.id)?).filter(|r| matches!(r.status, RunStatus::Paused | RunStatus::Completed)))
            })
            .await
            .expect("the run pauses or completes");
        if run_now.status == RunStatus::Completed {
            break;
        }
        let last = h.turns(&run.id).into_iter().rev().find(|t| t.role == gatehouse_engine::Role::Agent).unwrap();
        steps.push(last.metadata["step"].as_str().unwrap().to_owned());
        h.engine.step_run(&run.id, "alice").unwrap();
        assert!(steps.len() < 10, "{steps:?}");
    }
    assert_eq!(steps, ["information", "payload", "call"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_call_breakpoint_stops_before_the_call_and_a_step_breakpoint_after_it() {
    let h = Harness::new();
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "tool_call", "tool": "scripted:chat"}],
        "hitl_config": {"run_policy": "auto"}});
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), config).await;
    let paused = h.status(&run.id, RunStatus::Paused).await;
    assert_eq!(paused.status_reason.as_deref(), Some("breakpoint: tool call `scripted:chat`"));
    assert!(h.scripted.calls().is_empty(), "the payload step proposes the call; nothing was sent");
    h.engine.resume_run(&run.id, "alice").unwrap();
    h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(h.scripted.calls().len(), 1);

    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "call"}],
        "hitl_config": {"run_policy": "auto"}});
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), config).await;
    let paused = h.status(&run.id, RunStatus::Paused).await;
    assert_eq!(paused.status_reason.as_deref(), Some("breakpoint: step `call`"));
    assert_eq!(h.scripted.calls().len(), 2, "paused after the call");
    h.engine.resume_run(&run.id, "alice").unwrap();
    h.status(&run.id, RunStatus::Completed).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_breakpoint_stops_on_a_failed_call() {
    let h = Harness::new();
    let unavailable = ProviderError::Unavailable {
        provider: "scripted".into(),
        attempts: 3,
        failure: TransientFailure::Status { status: 503, message: "busy".into(), retry_after_ms: None },
    };
    h.scripted.script("scripted:chat", [Step::Fail(unavailable), Step::Reply("ok".into())]);
    let config =
        json!({"step_mode": "breakpoint", "breakpoints": [{"on": "error"}], "hitl_config": {"run_policy": "auto"}});
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), config).await;
    let paused = h.status(&run.id, RunStatus::Paused).await;
    assert_eq!(paused.status_reason.as_deref(), Some("breakpoint: the turn reports an error"));
    h.engine.resume_run(&run.id, "alice").unwrap();
    let error = h.gate(&run.id, GateKind::PayloadReview).await;
    h.decide(&error, DecisionInput { option: Some("retry".into()), ..DecisionInput::approve() });
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["text"], "ok");
}

/// Signals for [`Hanging::hold`]: the first call, dropped, says so on
/// `dropping` and holds the dropping thread (the run's drive, winding down)
/// until the test sends on the other end of `go`.
#[derive(Debug)]
struct HoldSignals {
    dropping: std::sync::Mutex<std::sync::mpsc::Sender<()>>,
    go: Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
}

/// Dropped with the first call: says so, then waits for the test.
struct Hold {
    dropping: std::sync::mpsc::Sender<()>,
    go: Arc<std::sync::Mutex<std::sync::mpsc::Receiver<()>>>,
}

impl Drop for Hold {
    fn drop(&mut self) {
        let _ = self.dropping.send(());
        let _ = self.go.lock().map(|go| go.recv_timeout(common::PATIENCE));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_retried_while_its_cancelled_drive_winds_down_is_driven_again() {
    let (dropping, dropped) = std::sync::mpsc::channel();
    let (go, wait) = std::sync::mpsc::channel();
    let held = Arc::new(Hanging {
        tools: vec![gatehouse_providers::Tool::new("hanging:model", "model", json!({"type": "object"}))],
        hold: Some(HoldSignals {
            dropping: std::sync::Mutex::new(dropping),
            go: Arc::new(std::sync::Mutex::new(wait)),
        }),
        ..Hanging::default()
    });
    let h = Harness::with(vec![held.clone()]);
    let run = h
        .start(json!({"tool": "hanging:model", "prompt": CLEAR}), json!({"hitl_config": {"run_policy": "auto"}}))
        .await;
    let called = h.until(|_| Ok((held.calls.load(std::sync::atomic::Ordering::SeqCst) == 1).then_some(()))).await;
    assert!(called.is_some(), "{:#?}", h.history(&run.id));

    // The cancel drops the call; the drive is held there, not yet ended,
    // while a reviewer retries the run and Gatehouse takes it up again.
    h.engine.cancel_run(&run.id, "alice", None).unwrap();
    dropped.recv_timeout(common::PATIENCE).expect("the cancel drops the provider call");
    let retried = h.engine.retry_run(&run.id, "alice").unwrap();
    assert!(h.orch.take_up(&retried));
    go.send(()).unwrap();

    // The ending drive drives the run again from its journal: a second call.
    let again = h.until(|_| Ok((held.calls.load(std::sync::atomic::Ordering::SeqCst) == 2).then_some(()))).await;
    assert!(again.is_some(), "the retried run was left undriven: {:#?}", h.history(&run.id));
    assert_eq!(h.engine.run(&run.id).unwrap().status, RunStatus::Active);
    h.engine.cancel_run(&run.id, "alice", None).unwrap();
}
