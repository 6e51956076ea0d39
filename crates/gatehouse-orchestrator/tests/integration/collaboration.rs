//! Goal and plan collaboration inside an orchestrated run: the goal refined over three rounds
//! before it is accepted, the plan modified (by feedback and by editing it)
//! and approved, execution asking nothing more; a rejected plan ends the
//! run cleanly.

use crate::common;

use common::Harness;
use gatehouse_engine::plan::TaskStatus;
use gatehouse_engine::{DecisionAction, DecisionInput, GateKind, GateSpec, GateStatus, RunStatus};
use serde_json::{json, Value};

fn refine(feedback: &str) -> DecisionInput {
    DecisionInput { text: Some(feedback.into()), ..DecisionInput::new(DecisionAction::NeedsRevision) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_goal_rounds_a_modified_plan_then_execution_without_questions() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": true});
    let run = h.start(input, json!({})).await;

    let mut goals = Vec::new();
    for (round, feedback) in [(1, Some("for the EU only")), (2, Some("by Friday")), (3, None)] {
        let gate = h.gate(&run.id, GateKind::GoalReview).await;
        let GateSpec::GoalReview { goal, round: r } = &gate.spec else { panic!("{:?}", gate.spec) };
        assert_eq!(*r, round);
        goals.push(goal.as_str().unwrap().to_owned());
        match feedback {
            Some(f) => h.decide(&gate, refine(f)),
            None => h.decide(&gate, DecisionInput::approve()),
        };
    }
    assert_eq!(goals[0], "Launch the beta, done well enough that a reviewer can check it.");
    assert_eq!(goals[1], format!("{}, taking into account: for the EU only.", goals[0]));
    assert_eq!(goals[2], format!("{}, taking into account: by Friday.", goals[1]));

    // Plan round 1: three tasks; the reviewer asks for a change.
    let plan1 = h.gate(&run.id, GateKind::PlanReview).await;
    assert_eq!(plan1.spec, GateSpec::PlanReview { plan_revision: Some(1), round: 1 });
    assert_eq!(plan1.payload.as_ref().unwrap()["tasks"].as_array().unwrap().len(), 3);
    h.decide(&plan1, refine("add a rollback step"));
    // Round 2 reflects the feedback; its revision's change log says what changed.
    let plan2 = h.gate(&run.id, GateKind::PlanReview).await;
    assert_eq!(plan2.spec, GateSpec::PlanReview { plan_revision: Some(2), round: 2 });
    let revisions = h.engine.plan_revisions(&run.id).unwrap();
    assert_eq!(revisions.len(), 2);
    assert!(!revisions[1].change_log.is_empty());
    let tasks = plan2.payload.as_ref().unwrap()["tasks"].as_array().unwrap().clone();
    assert_eq!(tasks[2]["description"], "Address the feedback: add a rollback step");
    // The reviewer edits the plan: drops the last task, and approves.
    let mut edited = plan2.payload.clone().unwrap();
    edited["tasks"].as_array_mut().unwrap().pop();
    h.decide(&plan2, DecisionInput::edit(edited));

    let done = h.status(&run.id, RunStatus::Completed).await;
    let result = done.result.unwrap();
    assert_eq!(result["goal"], Value::String(goals[2].clone()));
    let outputs = result["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 3, "{outputs:?}");
    assert_eq!(outputs[2]["output"], "Done: Address the feedback: add a rollback step.");
    // Execution asked nothing: every gate was a goal or plan review, all answered.
    let gates = h.gates(&run.id);
    assert_eq!(gates.len(), 5);
    assert!(gates.iter().all(|g| matches!(g.kind(), GateKind::GoalReview | GateKind::PlanReview)));
    assert!(gates.iter().all(|g| g.status == GateStatus::Resolved));
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert!(plan.tasks.iter().all(|t| t.status == TaskStatus::Completed), "{plan:?}");
    assert_eq!(plan.tasks[0].metadata["output"], outputs[0]["output"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejecting_the_plan_ends_the_run_cleanly_without_executing() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": {"goal": false}});
    let run = h.start(input, json!({})).await;
    let plan = h.gate(&run.id, GateKind::PlanReview).await;
    h.decide(&plan, DecisionInput::reject("too risky this quarter"));
    let ended = h.status(&run.id, RunStatus::Cancelled).await;
    assert_eq!(ended.status_reason.as_deref(), Some("the plan was rejected by alice: too risky this quarter"));
    let calls = h.scripted.calls();
    assert_eq!(calls.len(), 1, "only the plan was asked for");
    let plan = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert!(plan.tasks.iter().all(|t| t.status == TaskStatus::Pending));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_only_collaboration_executes_the_accepted_goal_in_one_call() {
    let h = Harness::new();
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": {"plan": false}});
    let run = h.start(input, json!({})).await;
    h.decide(&h.gate(&run.id, GateKind::GoalReview).await, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    let result = done.result.unwrap();
    assert_eq!(result["outputs"].as_array().unwrap().len(), 1);
    assert!(h.engine.plan(&run.id).unwrap().is_none());
}
