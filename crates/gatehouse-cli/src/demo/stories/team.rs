//! Team stories Gatehouse drives with the scripted provider: a coder, a
//! tester and a deployer (the tester finds failing tests once and hands
//! back to the coder, then hands to the deployer, whose deploy waits for a
//! reviewer's yes), with a plan of one task each that follows their turns
//! (the tester blocks its task on the failing tests); an architect whose proposal two agents vote on with
//! their reasoning before alice and bob decide it at a quorum gate; and a
//! team following a workflow (code, a people's review, deploy) whose first
//! review alice rejects, sending the work back to the coder; and the same
//! coder, tester and deployer left paused at a breakpoint on the handoff to
//! the deployer, for a newcomer to try the team interventions on (change
//! the team, choose the next agent, restart a task, step or resume).

use anyhow::Result;
use gatehouse_engine::{DecisionInput, GateKind, NewRun, RunStatus};
use serde_json::{json, Value};

use crate::demo::Sim;

/// How many runs this story creates.
pub const COUNT: u32 = 4;

/// The team of the story: three agents on the scripted model.
pub fn coder_tester_deployer() -> Value {
    let agent = |name: &str, role: &str, tools: &[&str]| json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools});
    json!([
        agent("coder", "coder", &["retrieve_memory"]),
        agent("tester", "tester", &["store_memory", "search_memory", "plan_update_task"]),
        agent("deployer", "deployer", &["retrieve_memory"]),
    ])
}

/// The coder → tester → coder → tester → deployer loop, its deploy approved.
pub fn play(sim: &mut Sim) -> Result<()> {
    let task = |id: &str, description: &str, agent: &str, after: &[&str]| json!({"task_id": id, "description": description, "assigned_agent": agent, "dependencies": after});
    let plan = json!({"tasks": [
        task("task_001", "Write the change", "coder", &[]),
        task("task_002", "Test the change", "tester", &["task_001"]),
        task("task_003", "Ship the change", "deployer", &["task_002"]),
    ]});
    let input =
        json!({"prompt": "Add a logout button to the account page", "team": coder_tester_deployer(), "plan": plan});
    let template: NewRun =
        serde_json::from_value(json!({"title": "Logout button (coder, tester, deployer)", "user_id": "maya"}))?;
    let run = sim.orchestrate(input, template)?;
    let deploy = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&deploy, DecisionInput::approve(), "alice")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)?;
    consensus(sim)?;
    review_cycle(sim)?;
    held_at_handoff(sim)
}

/// The coder, tester and deployer on a run that pauses at the handoff to
/// the deployer and is left there, waiting for a person.
fn held_at_handoff(sim: &mut Sim) -> Result<()> {
    let input = json!({"prompt": "Add a password strength meter to the sign-up page", "team": coder_tester_deployer()});
    let template: NewRun = serde_json::from_value(json!({
        "title": "Password meter (held at the handoff to the deployer: try the team controls)",
        "user_id": "maya",
        "step_mode": "breakpoint",
        "breakpoints": [{"on": "handoff", "to": "deployer"}],
    }))?;
    let run = sim.orchestrate(input, template)?;
    let paused = sim.await_status(&run, RunStatus::Paused)?;
    anyhow::ensure!(
        paused.status_reason.as_deref().is_some_and(|r| r.contains("handoff")),
        "demo: the held team run paused for another reason: {:?}",
        paused.status_reason
    );
    Ok(())
}

/// An approval with a reason.
fn approve(reason: &str) -> DecisionInput {
    DecisionInput { text: Some(reason.to_owned()), ..DecisionInput::approve() }
}

/// The architect proposes, the backend developer and the security reviewer
/// vote with their reasoning, and the people the proposal names decide.
fn consensus(sim: &mut Sim) -> Result<()> {
    let tools = ["propose_decision", "vote_on_proposal", "finalize_consensus"];
    let agent = |name: &str, role: &str| json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools});
    let team = json!([
        agent("architect", "architect"),
        agent("backend", "backend developer"),
        agent("security", "security reviewer")
    ]);
    let input = json!({"prompt": "Choose where the audit log is kept", "team": team});
    let template: NewRun =
        serde_json::from_value(json!({"title": "Audit log store (a proposal people decide)", "user_id": "maya"}))?;
    let run = sim.orchestrate(input, template)?;
    let quorum = sim.await_gate(&run, GateKind::Approval)?;
    anyhow::ensure!(quorum.text.contains("The team proposes:"), "demo: the quorum gate does not show the proposal");
    sim.decide(&quorum, approve("Backups of that database are already tested."), "alice")?;
    sim.decide(&quorum, DecisionInput::approve(), "bob")?;
    let answer = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&answer, DecisionInput::approve(), "alice")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}

/// A workflow of code, a people's review and deploy: alice rejects the
/// first review, the coder reworks the change, she approves the second.
fn review_cycle(sim: &mut Sim) -> Result<()> {
    let agent = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let pattern = json!({"name": "code_review_deploy", "workflow": [
        {"step": "code", "agent": "coder", "next_on_success": "review"},
        {"step": "review", "agent": "reviewer", "next_on_approve": "deploy", "next_on_reject": "coder"},
        {"step": "deploy", "agent": "deployer", "next_on_failure": "code"}
    ]});
    let input = json!({"prompt": "Add a dark mode toggle", "team": [agent("coder"), agent("reviewer"), agent("deployer")],
        "pattern": pattern});
    let template: NewRun =
        serde_json::from_value(json!({"title": "Dark mode (code, review, deploy)", "user_id": "maya"}))?;
    let run = sim.orchestrate(input, template)?;
    let first = sim.await_gate(&run, GateKind::Approval)?;
    sim.decide(&first, DecisionInput::reject("Add a test for the toggle."), "alice")?;
    let second = sim.await_gate(&run, GateKind::Approval)?;
    sim.decide(&second, approve("The test is there now."), "alice")?;
    let answer = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&answer, DecisionInput::approve(), "alice")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}
