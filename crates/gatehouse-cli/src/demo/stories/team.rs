//! A team story: a coder, a tester and a deployer Gatehouse drives with
//! the scripted provider. The tester finds failing tests once and hands
//! back to the coder, then hands to the deployer, whose deploy waits for a
//! reviewer's yes before the run completes.

use anyhow::Result;
use gatehouse_engine::{DecisionInput, GateKind, NewRun, RunStatus};
use serde_json::{json, Value};

use crate::demo::Sim;

/// How many runs this story creates.
pub const COUNT: u32 = 1;

/// The team of the story: three agents on the scripted model.
pub fn coder_tester_deployer() -> Value {
    let agent = |name: &str, role: &str, tools: &[&str]| json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools});
    json!([
        agent("coder", "coder", &["retrieve_memory"]),
        agent("tester", "tester", &["store_memory", "search_memory"]),
        agent("deployer", "deployer", &["retrieve_memory"]),
    ])
}

/// The coder → tester → coder → tester → deployer loop, its deploy approved.
pub fn play(sim: &mut Sim) -> Result<()> {
    let input = json!({"prompt": "Add a logout button to the account page", "team": coder_tester_deployer()});
    let template: NewRun =
        serde_json::from_value(json!({"title": "Logout button (coder, tester, deployer)", "user_id": "maya"}))?;
    let run = sim.orchestrate(input, template)?;
    let deploy = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&deploy, DecisionInput::approve(), "alice")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}
