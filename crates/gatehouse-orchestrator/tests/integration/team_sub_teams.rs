//! A reviewer's sub-team changes on a live team run: created and changed
//! while the run is paused, recorded as the reviewer's turns, applied in
//! order at the team's next turn, and shown by the team view.

use crate::common::{member, steps, Harness};
use gatehouse_engine::{DecisionInput, GateKind, RunStatus, StepMode};
use gatehouse_orchestrator::team::change;
use gatehouse_orchestrator::team::sub_team_change::{sub_teams, SubTeamChange};
use gatehouse_orchestrator::team::view::{team_of, team_view};
use serde_json::{json, Value};

fn story() -> Value {
    json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]),
        member("tester", "tester", &[]),
        member("deployer", "deployer", &[]),
    ]})
}

fn agent(name: &str) -> Value {
    json!({"name": name, "role": "auditor", "provider": "scripted", "model": "chat"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_creates_and_changes_a_sub_team_applied_at_the_next_turn() {
    let h = Harness::new();
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(story(), config).await;
    h.status(&run.id, RunStatus::Paused).await;

    // While paused after the coder's turn: a sub-team of two auditors, then one of them leaves it.
    let start = team_of(&h.engine.run(&run.id).unwrap()).unwrap();
    let registry = h.orch.registry();
    let ask = |request: Value| {
        let turns = h.engine.turns(&run.id).unwrap();
        let team = change::current(&start, &turns);
        let change = SubTeamChange::check(&request, &team, &sub_teams(&turns), registry, None, "alice").unwrap();
        h.engine.add_turn(&run.id, change.turn("alice"), "alice").unwrap();
    };
    ask(
        json!({"action": "create_team", "team_name": "audit", "agents": [agent("ann"), agent("bob")], "purpose": "audit"}),
    );
    ask(json!({"action": "modify_team", "team_name": "audit", "remove_agents": ["ann"]}));
    // A sub-team change checked against the recorded ones: `ann` is no longer in it.
    let turns = h.engine.turns(&run.id).unwrap();
    let again = json!({"action": "modify_team", "team_name": "audit", "remove_agents": ["ann"]});
    let err =
        SubTeamChange::check(&again, &change::current(&start, &turns), &sub_teams(&turns), registry, None, "alice");
    assert_eq!(err.unwrap_err().field, "remove_agents[0]");

    h.engine.set_next_agent(&run.id, Some("deployer"), "alice").unwrap();
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();
    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    h.decide(&gate, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;

    let turns = h.turns(&run.id);
    let prompts: Vec<String> = h.scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert!(prompts[1].contains("- bob (auditor)"), "the deployer saw the new team: {}", prompts[1]);
    assert!(!prompts[1].contains("- ann (auditor)"), "ann left before the deployer's turn: {}", prompts[1]);
    assert!(!prompts[0].contains("bob"));
    assert_eq!(steps(&turns, "team_change").len(), 1, "both changes taken at one turn");

    let run = h.engine.run(&run.id).unwrap();
    let view = team_view(&run, &turns, &Default::default(), &[]).unwrap();
    let names: Vec<&str> = view.agents.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["coder", "tester", "deployer", "bob"]);
    assert_eq!(view.sub_teams.len(), 1);
    assert_eq!((view.sub_teams[0].name.as_str(), view.sub_teams[0].by.as_str()), ("audit", "alice"));
    assert_eq!(view.sub_teams[0].members, ["bob"]);
    let kinds: Vec<(&str, Option<&str>)> =
        view.changes.iter().map(|c| (c.by_kind.as_str(), c.team_name.as_deref())).collect();
    assert_eq!(kinds, [("reviewer", Some("audit")); 3]);
}
