//! A reviewer resumes an orchestrated run that awaits a human: the run
//! leaves `awaiting_human`, but its driver never takes the release for an
//! approval. It keeps waiting on the released gate and acts on the decision
//! when one comes.

use crate::common;

use common::Harness;
use gatehouse_engine::{DecisionInput, GateKind, GateStatus, RunStatus};
use serde_json::json;

const CLEAR: &str = "Summarise the release notes for the beta in three sentences";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_gate_is_no_approval_the_driver_waits_for_its_decision() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    let resumed = h.engine.resume_run(&run.id, "alice").unwrap();
    assert_eq!(resumed.status, RunStatus::Active, "the run no longer shows as waiting");
    let released = h.engine.gate(&payload.id).unwrap();
    assert!(released.released.is_some() && released.status == GateStatus::Pending);

    // Had the driver gone on at the release, it would have called the model
    // and moved to the response review; a no now could no longer stop it.
    h.decide(&payload, DecisionInput::reject("wrong tool"));
    let ended = h.status(&run.id, RunStatus::Cancelled).await;
    assert!(ended.status_reason.unwrap_or_default().contains("wrong tool"));
    assert!(h.scripted.calls().is_empty(), "{:#?}", h.history(&run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_release_the_decision_drives_the_run_on() {
    let h = Harness::new();
    let run = h.start(json!({"tool": "scripted:chat", "prompt": CLEAR}), json!({})).await;
    let payload = h.gate(&run.id, GateKind::PayloadReview).await;
    h.engine.resume_run(&run.id, "alice").unwrap();
    h.decide(&payload, DecisionInput::approve());
    h.decide(&h.gate(&run.id, GateKind::ResponseReview).await, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(h.scripted.calls().len(), 1);
}
