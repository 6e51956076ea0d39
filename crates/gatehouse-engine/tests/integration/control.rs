//! Step-through control: step and breakpoint modes pause a
//! run after an agent's turn, a reviewer steps it on, and injected
//! instructions and the next-agent choice reach an agent exactly once with
//! its next directive. All of it is durable and in the audit log.

use crate::common;

use common::Fixture;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{
    Breakpoint, DirectiveAction, EngineError, EventKind, NewGate, NewRun, NewTurn, Role, RunStatus, StepMode,
};
use serde_json::json;

fn agent_turn(content: &str, metadata: serde_json::Value) -> NewTurn {
    NewTurn { metadata, ..NewTurn::new(Role::Agent, content) }
}

#[test]
fn step_mode_pauses_after_every_agent_turn_until_a_reviewer_steps() {
    let f = Fixture::new();
    let run = f.run_with(NewRun { agent: "coder".into(), step_mode: StepMode::Step, ..NewRun::default() });

    let (turn, directive) = f.engine.agent_turn(&run.id, agent_turn("wrote main.rs", json!(null)), "coder").unwrap();
    assert_eq!(turn.index, 1);
    assert_eq!(directive.action, DirectiveAction::Paused);
    assert_eq!(directive.run_status, RunStatus::Paused);
    assert!(directive.reason.as_deref().unwrap_or("").contains("step mode"), "{directive:?}");

    // Asking again changes nothing until a reviewer acts, and a paused run takes no agent turn.
    assert_eq!(f.engine.directive(&run.id, "coder").unwrap().action, DirectiveAction::Paused);
    let err = f.engine.agent_turn(&run.id, agent_turn("sneaky", json!(null)), "coder").unwrap_err();
    assert!(matches!(&err, EngineError::RunPaused { reason, .. } if reason.contains("step mode")), "{err:?}");
    assert_eq!(f.engine.turns(&run.id).unwrap().len(), 1);

    let stepped = f.engine.step_run(&run.id, "alice").unwrap();
    assert_eq!(stepped.status, RunStatus::Active);
    assert_eq!(f.engine.directive(&run.id, "coder").unwrap().action, DirectiveAction::Continue);

    // The next agent turn pauses it again; a human turn does not.
    f.engine.add_turn(&run.id, NewTurn::new(Role::Human, "looks fine"), "alice").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);
    let (_, directive) = f.engine.agent_turn(&run.id, agent_turn("wrote lib.rs", json!(null)), "coder").unwrap();
    assert_eq!(directive.action, DirectiveAction::Paused);
}

#[test]
fn a_steps_reason_lasts_only_as_long_as_the_status_it_came_with() {
    let f = Fixture::new();
    let run = f.run_with(NewRun { agent: "coder".into(), step_mode: StepMode::Step, ..NewRun::default() });
    f.engine.agent_turn(&run.id, agent_turn("wrote main.rs", json!(null)), "coder").unwrap();
    let stepped = f.engine.step_run(&run.id, "alice").unwrap();
    assert_eq!(stepped.status_reason.as_deref(), Some("stepped by alice"));
    // A pause or a cancel without a reason of its own does not inherit the step's.
    let paused = f.engine.pause_run(&run.id, "bob").unwrap();
    assert_eq!((paused.status, paused.status_reason.as_deref()), (RunStatus::Paused, None));
    f.engine.step_run(&run.id, "alice").unwrap();
    let cancelled = f.engine.cancel_run(&run.id, "bob", None).unwrap();
    assert_eq!((cancelled.status, cancelled.status_reason.as_deref()), (RunStatus::Cancelled, None));
}

#[test]
fn only_a_paused_run_can_step() {
    let f = Fixture::new();
    let run = f.run("coder");
    f.engine.start_run(&run.id, "coder").unwrap();
    let err = f.engine.step_run(&run.id, "alice").unwrap_err();
    assert!(matches!(err, EngineError::RunTransition(_)), "{err:?}");
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);
}

#[test]
fn stepping_a_run_with_a_pending_sync_gate_goes_back_to_waiting_for_the_human() {
    let f = Fixture::new();
    let run = f.run_with(NewRun { agent: "coder".into(), step_mode: StepMode::Step, ..NewRun::default() });
    f.engine.open_gate(&run.id, NewGate::question("Which branch?"), "coder").unwrap();
    let (_, directive) = f.engine.agent_turn(&run.id, agent_turn("waiting", json!(null)), "coder").unwrap();
    assert_eq!(directive.action, DirectiveAction::Paused);
    assert_eq!(f.engine.step_run(&run.id, "alice").unwrap().status, RunStatus::AwaitingHuman);
}

#[test]
fn breakpoints_pause_only_on_the_turns_that_meet_them() {
    let f = Fixture::new();
    let breakpoints = vec![
        Breakpoint::ToolCall { tool: Some("deploy".into()) },
        Breakpoint::Handoff { to: None },
        Breakpoint::Error,
        Breakpoint::Agent { name: "intern".into() },
    ];
    let run =
        f.run_with(NewRun { agent: "coder".into(), step_mode: StepMode::Breakpoint, breakpoints, ..NewRun::default() });
    let cases = [
        ("coder", json!({"tool_call": {"tool_name": "web_search", "args": {}}}), None),
        ("coder", json!({"tool_calls": [{"tool_name": "lint"}, {"name": "deploy"}]}), Some("tool call `deploy`")),
        ("coder", json!({"handoff": {"destination_agent": "reviewer"}}), Some("handoff to `reviewer`")),
        ("coder", json!({"tool_call": {"tool_name": "handoff", "args": {"destination_agent": "qa"}}}), Some("`qa`")),
        ("coder", json!({"error": "compile failed"}), Some("error")),
        ("coder", json!({"error": null}), None),
        ("intern", json!(null), Some("a turn by `intern`")),
    ];
    for (i, (who, metadata, expected)) in cases.into_iter().enumerate() {
        let turn = NewTurn { actor: Some(who.into()), ..agent_turn(&format!("turn {i}"), metadata.clone()) };
        let (_, directive) = f.engine.agent_turn(&run.id, turn, "coder").unwrap();
        match expected {
            None => assert_eq!(directive.action, DirectiveAction::Continue, "case {i}: {metadata}"),
            Some(why) => {
                assert_eq!(directive.action, DirectiveAction::Paused, "case {i}: {metadata}");
                let reason = directive.reason.unwrap_or_default();
                assert!(reason.contains(why), "case {i}: {reason:?} should name {why:?}");
                f.engine.resume_run(&run.id, "alice").unwrap();
            }
        }
    }
}

#[test]
fn breakpoints_do_nothing_outside_breakpoint_mode_and_the_mode_can_change_mid_run() {
    let f = Fixture::new();
    let run = f.run("coder");
    let err_turn = || agent_turn("oops", json!({"error": "boom"}));
    let (_, d) = f.engine.agent_turn(&run.id, err_turn(), "coder").unwrap();
    assert_eq!(d.action, DirectiveAction::Continue);

    let changed = f.engine.set_run_control(&run.id, StepMode::Breakpoint, vec![Breakpoint::Error], "alice").unwrap();
    assert_eq!(changed.step_mode, StepMode::Breakpoint);
    assert_eq!(changed.control.breakpoints, vec![Breakpoint::Error]);
    let (_, d) = f.engine.agent_turn(&run.id, err_turn(), "coder").unwrap();
    assert_eq!(d.action, DirectiveAction::Paused);

    let events = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    assert!(events.iter().any(|e| matches!(&e.body.kind,
        EventKind::RunControlChanged { step_mode: StepMode::Breakpoint, breakpoints } if breakpoints.len() == 1)));
}

#[test]
fn injected_instructions_reach_an_agent_once_in_order_and_only_when_it_may_continue() {
    let f = Fixture::new();
    let run = f.run("coder");
    f.engine.start_run(&run.id, "coder").unwrap();
    let first = f.engine.inject_instruction(&run.id, "Use the staging database.", "alice").unwrap();
    let second = f.engine.inject_instruction(&run.id, "  Skip the flaky test.  ", "bob").unwrap();
    assert_eq!(second.text, "Skip the flaky test.");
    assert_eq!(second.by, "bob");

    // A human turn does not take them; a paused run keeps them.
    f.engine.add_turn(&run.id, NewTurn::new(Role::Human, "hi"), "alice").unwrap();
    f.engine.pause_run(&run.id, "alice").unwrap();
    let held = f.engine.directive(&run.id, "coder").unwrap();
    assert_eq!(held.action, DirectiveAction::Paused);
    assert!(held.instructions.is_empty());
    f.engine.resume_run(&run.id, "alice").unwrap();

    let (_, d) = f.engine.agent_turn(&run.id, agent_turn("ran tests", json!(null)), "coder").unwrap();
    assert_eq!(d.action, DirectiveAction::Continue);
    assert_eq!(d.instructions, vec![first, second]);
    let (_, again) = f.engine.agent_turn(&run.id, agent_turn("more", json!(null)), "coder").unwrap();
    assert!(again.instructions.is_empty(), "delivered twice: {again:?}");
    assert!(f.engine.run(&run.id).unwrap().control.pending_instructions.is_empty());

    let events = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    let injected = events.iter().filter(|e| matches!(e.body.kind, EventKind::InstructionInjected { .. })).count();
    let delivered: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::DirectiveDelivered { instructions, .. } => Some((e.body.actor.clone(), instructions.len())),
            _ => None,
        })
        .collect();
    assert_eq!(injected, 2);
    assert_eq!(delivered, vec![("coder".to_owned(), 2)]);
}

#[test]
fn the_next_agent_choice_is_delivered_once_and_can_be_withdrawn() {
    let f = Fixture::new();
    let run = f.run("planner");
    f.engine.set_next_agent(&run.id, Some("tester"), "alice").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().control.next_agent.as_deref(), Some("tester"));
    let d = f.engine.directive(&run.id, "planner").unwrap();
    assert_eq!(d.next_agent.as_deref(), Some("tester"));
    assert_eq!(f.engine.directive(&run.id, "planner").unwrap().next_agent, None);

    f.engine.set_next_agent(&run.id, Some("coder"), "alice").unwrap();
    f.engine.set_next_agent(&run.id, None, "alice").unwrap();
    assert_eq!(f.engine.directive(&run.id, "planner").unwrap().next_agent, None);
}

#[test]
fn bad_interventions_are_refused_naming_the_problem_and_change_nothing() {
    let f = Fixture::new();
    let run = f.run("coder");
    let head = f.engine.head_seq().unwrap();
    let err = f.engine.inject_instruction(&run.id, "   ", "alice").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "text"), "{err:?}");
    let blank = vec![Breakpoint::Error, Breakpoint::Agent { name: " ".into() }];
    let err = f.engine.set_run_control(&run.id, StepMode::Breakpoint, blank, "alice").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "breakpoints[1]"), "{err:?}");
    assert_eq!(f.engine.head_seq().unwrap(), head);

    f.engine.cancel_run(&run.id, "alice", Some("done")).unwrap();
    let err = f.engine.inject_instruction(&run.id, "too late", "alice").unwrap_err();
    assert!(matches!(err, EngineError::RunEnded { .. }), "{err:?}");
    assert_eq!(f.engine.directive(&run.id, "coder").unwrap().action, DirectiveAction::Cancelled);
    let err = f.engine.agent_turn(&run.id, agent_turn("late", json!(null)), "coder").unwrap_err();
    assert!(matches!(err, EngineError::RunEnded { .. }), "{err:?}");
}

#[test]
fn control_state_survives_reopening_the_database() {
    let f = Fixture::new();
    let run = f.run_with(NewRun {
        agent: "coder".into(),
        step_mode: StepMode::Breakpoint,
        breakpoints: vec![Breakpoint::ToolCall { tool: None }],
        ..NewRun::default()
    });
    f.engine.inject_instruction(&run.id, "Prefer small commits.", "alice").unwrap();
    f.engine.set_next_agent(&run.id, Some("reviewer"), "alice").unwrap();
    let f = f.reopen();
    let engine = &f.engine;
    let reopened = engine.run(&run.id).unwrap();
    assert_eq!(reopened.step_mode, StepMode::Breakpoint);
    assert_eq!(reopened.control.breakpoints, vec![Breakpoint::ToolCall { tool: None }]);
    assert_eq!(reopened.control.pending_instructions.len(), 1);
    let d = engine.directive(&run.id, "coder").unwrap();
    assert_eq!(d.instructions[0].text, "Prefer small commits.");
    assert_eq!(d.next_agent.as_deref(), Some("reviewer"));
    assert!(engine.verify_audit().unwrap().is_intact());
}
