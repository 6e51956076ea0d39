//! Scoped tokens: a token may be limited to some runs and agents. The scope
//! is kept in the token's snapshot, names only existing runs, and covers
//! the runs named, the runs the agents named drive or take part in, and the
//! sub-runs of all of those.

use crate::common;

use common::Fixture;
use gatehouse_engine::run::{Participant, Role};
use gatehouse_engine::token::{NewToken, TokenScope};
use gatehouse_engine::{NewRun, Run, TokenRole};

fn child(f: &Fixture, parent: &Run, agent: &str) -> Run {
    f.run_with(NewRun { agent: agent.into(), parent_run_id: Some(parent.id.clone()), ..NewRun::default() })
}

fn covers(f: &Fixture, scope: &TokenScope, run: &Run) -> bool {
    scope.covers(&f.engine.run_chain(&run.id).unwrap())
}

#[test]
fn a_scope_covers_its_runs_its_agents_runs_and_their_sub_runs_only() {
    let f = Fixture::new();
    let (planner, other) = (f.run("planner"), f.run("stranger"));
    let coder = child(&f, &planner, "coder");
    let tester = child(&f, &coder, "tester");
    let joined = f.run_with(NewRun {
        agent: "lead".into(),
        participants: vec![Participant { name: "coder".into(), role: Role::Agent }],
        ..NewRun::default()
    });

    assert!(covers(&f, &TokenScope::default(), &other), "no scope covers everything");
    let by_run = TokenScope { runs: vec![coder.id.clone()], agents: vec![] };
    assert!(covers(&f, &by_run, &coder) && covers(&f, &by_run, &tester), "the run and its sub-runs");
    assert!(!covers(&f, &by_run, &planner), "not its parent");
    assert!(!covers(&f, &by_run, &other));

    let by_agent = TokenScope { runs: vec![], agents: vec!["coder".into()] };
    assert!(covers(&f, &by_agent, &coder) && covers(&f, &by_agent, &tester));
    assert!(covers(&f, &by_agent, &joined), "a run the agent takes part in");
    assert!(!covers(&f, &by_agent, &planner) && !covers(&f, &by_agent, &other));
}

#[test]
fn a_scoped_token_keeps_its_scope_and_names_only_existing_runs() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let scope = TokenScope { runs: vec![run.id.clone()], agents: vec![" deployer ".into()] };
    let new = NewToken { scope, ..NewToken::new("ci", TokenRole::Reviewer) };
    let (token, secret) = f.engine.issue_token(new, "test").unwrap();
    assert_eq!(token.scope, TokenScope { runs: vec![run.id.clone()], agents: vec!["deployer".into()] });
    assert_eq!(f.engine.authenticate(&secret).unwrap().unwrap().scope, token.scope, "stored with the token");
    assert_eq!(f.engine.tokens().unwrap().iter().find(|t| t.id == token.id).unwrap().scope, token.scope);

    let (plain, _) = f.engine.create_token("alice", TokenRole::Reviewer, "test").unwrap();
    assert!(plain.scope.is_empty());
    assert!(!serde_json::to_string(&plain).unwrap().contains("scope"), "an unscoped token's record is as before");

    let missing = TokenScope { runs: vec![run.id.clone(), "run_nope".into()], agents: vec![] };
    let err = f.engine.issue_token(NewToken { scope: missing, ..NewToken::new("x", TokenRole::Agent) }, "t");
    let err = err.unwrap_err().to_string();
    assert!(err.contains("scope.runs[1]") && err.contains("run_nope"), "{err}");
    assert_eq!(f.engine.tokens().unwrap().len(), 2, "a refused token is not stored");
}
