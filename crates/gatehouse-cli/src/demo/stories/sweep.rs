//! A parallel research sweep: a lead hands three researchers their topics
//! at once (`parallel_handoff`), each a sub-run of the lead's run, waits at
//! the sync point until all three have answered, and writes the summary a
//! reviewer approves before the run completes.

use anyhow::Result;
use gatehouse_engine::{DecisionInput, GateKind, NewRun, RunStatus};
use serde_json::{json, Value};

use crate::demo::Sim;

/// How many runs this story creates: the lead's and its three branches.
pub const COUNT: u32 = 4;

/// The sweep's team: a lead who may hand off in parallel and three researchers.
pub fn lead_and_researchers() -> Value {
    let agent = |name: &str, role: &str, tools: &[&str]| json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools});
    json!([
        agent("lead", "lead", &["parallel_handoff"]),
        agent("ana", "researcher", &[]),
        agent("ben", "researcher", &[]),
        agent("cy", "researcher", &[]),
    ])
}

/// The sweep, its summary approved.
pub fn play(sim: &mut Sim) -> Result<()> {
    let input = json!({"prompt": "Caching options for the search API", "team": lead_and_researchers()});
    let template: NewRun = serde_json::from_value(
        json!({"title": "Caching research sweep (lead, three researchers)", "user_id": "maya"}),
    )?;
    let run = sim.orchestrate(input, template)?;
    let summary = sim.await_gate(&run, GateKind::ResponseReview)?;
    sim.decide(&summary, DecisionInput::approve(), "alice")?;
    sim.await_status(&run, RunStatus::Completed)?;
    sim.report(&run)
}
