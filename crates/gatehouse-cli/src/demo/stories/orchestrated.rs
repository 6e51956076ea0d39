//! Orchestrated stories: runs Gatehouse drives itself with the scripted
//! provider (the review checkpoints and goal and plan collaboration), reviewed by the
//! demo's people. Three are left waiting for whoever opens the reviewer UI:
//! a goal in its third round, a payload before its call, and a supervised
//! release plan before its deployment.

use anyhow::Result;
use gatehouse_engine::{DecisionAction, DecisionInput, GateKind, NewRun, RunStatus};
use serde_json::{json, Value};

use crate::demo::Sim;

/// How many runs these stories create.
pub const COUNT: u32 = 6;

fn policy(config: Value) -> NewRun {
    serde_json::from_value(config).unwrap_or_default()
}

fn option(name: &str) -> DecisionInput {
    DecisionInput { option: Some(name.into()), ..DecisionInput::approve() }
}

/// Every orchestrated story, in order.
pub fn play(sim: &mut Sim) -> Result<()> {
    release_notes(sim)?;
    alt_text(sim)?;
    flaky_model(sim)?;
    beta_launch(sim)?;
    incident_summary(sim)?;
    supervised_release(sim)
}

/// A draft reviewed at each step; the answer edited before it is accepted.
fn release_notes(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:chat",
        "prompt": "Draft the release notes for Gatehouse 0.9 from this week's merged pull requests"});
    let run = sim.orchestrate(input, policy(json!({"user_id": "maya", "session_id": "release-0.9"})))?;
    let payload = sim.await_gate(&run, GateKind::PayloadReview)?;
    sim.decide(&payload, DecisionInput::approve(), "alice")?;
    let response = sim.await_gate(&run, GateKind::ResponseReview)?;
    let edited = json!({"audited": "Gatehouse 0.9: orchestrated runs, search, and faster reviews. Full notes below."});
    sim.decide(&response, DecisionInput::edit(edited), "bob")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}

/// The information step notices the image under the wrong field; the
/// reviewer applies the suggested mapping with one key.
fn alt_text(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:caption", "prompt": "Write alt text for the spring catalogue's hero image",
        "inputs": {"image_file": "https://assets.example.com/spring/hero.png"}});
    let run = sim.orchestrate(input, policy(json!({"user_id": "lena"})))?;
    let info = sim.await_gate(&run, GateKind::InformationReview)?;
    sim.decide(&info, DecisionInput::approve(), "carol")?;
    let payload = sim.await_gate(&run, GateKind::PayloadReview)?;
    sim.decide(&payload, option("apply_suggestions"), "carol")?;
    let fixed = sim.await_gate(&run, GateKind::PayloadReview)?;
    sim.decide(&fixed, DecisionInput::approve(), "carol")?;
    let response = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&response, DecisionInput::approve(), "carol")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}

/// An `auto` run whose model is unavailable once: the error gate is the
/// only thing a person sees, and a retry finishes the run.
fn flaky_model(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:flaky", "prompt": "Classify yesterday's support tickets by product area"});
    let run = sim.orchestrate(input, policy(json!({"hitl_config": {"run_policy": "auto"}})))?;
    let error = sim.await_gate(&run, GateKind::PayloadReview)?;
    sim.decide(&error, option("retry"), "bob")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}

/// Goal collaboration, two rounds refined; the third waits.
fn beta_launch(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:chat", "prompt": "Plan the public beta launch", "collaborate": true});
    let run = sim.orchestrate(input, policy(json!({"title": "Beta launch (goal and plan)", "user_id": "maya"})))?;
    for feedback in ["for customers in the EU first", "ready to announce by Friday"] {
        let goal = sim.await_gate(&run, GateKind::GoalReview)?;
        let refine = DecisionInput { text: Some(feedback.into()), ..DecisionInput::new(DecisionAction::NeedsRevision) };
        sim.decide(&goal, refine, "alice")?;
    }
    sim.await_gate(&run, GateKind::GoalReview)?;
    sim.report(&run)
}

/// Waits at its payload review for whoever opens the UI.
fn incident_summary(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:chat",
        "prompt": "Summarise this week's incident reports for Monday's operations review"});
    let run = sim.orchestrate(input, policy(json!({"user_id": "omar", "session_id": "ops-weekly"})))?;
    sim.await_gate(&run, GateKind::PayloadReview)?;
    sim.report(&run)
}

/// A supervised plan that stops before deploying and on errors: each task
/// approved, the failed migration retried, the build's replan (a smoke test
/// first) approved; the deployment waits for whoever opens the UI.
fn supervised_release(sim: &mut Sim) -> Result<()> {
    let input = json!({"tool": "scripted:chat", "prompt": "Release Gatehouse 0.9 to production",
        "collaborate": {"goal": false, "execution_mode": "supervised",
                        "human_intervention_points": ["before_deployment", "on_error"]}});
    let run = sim.orchestrate(input, policy(json!({"title": "Release 0.9 (supervised plan)", "user_id": "omar"})))?;
    let plan = sim.await_gate(&run, GateKind::PlanReview)?;
    sim.decide(&plan, DecisionInput::approve(), "alice")?;
    // The migration, its failure (retried), the build, its replan, the smoke test.
    for kind in [GateKind::Approval, GateKind::Approval, GateKind::Approval, GateKind::PlanReview, GateKind::Approval] {
        let gate = sim.await_gate(&run, kind)?;
        let decision = match gate.context.step.as_deref() {
            Some("task_error") => DecisionInput::new(DecisionAction::Retry),
            _ => DecisionInput::approve(),
        };
        sim.decide(&gate, decision, "bob")?;
    }
    sim.await_gate(&run, GateKind::Approval)?;
    sim.report(&run)
}
