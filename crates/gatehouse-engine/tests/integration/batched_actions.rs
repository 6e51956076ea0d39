//! Gates proposing several actions (an agent's parallel tool calls): each
//! action decided on its own, some now and some later, the gate resolving
//! once all are decided with each decision in the actions' order.

use crate::common;

use common::Fixture;
use gatehouse_engine::decision::{ActionChoice, DecisionAction};
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{
    DecisionInput, EngineError, EventKind, GateSpec, GateStatus, NewGate, NewRun, ProposedAction, RunStatus,
};
use serde_json::{json, Value};

fn action(id: &str, name: &str, args: Value) -> ProposedAction {
    serde_json::from_value(json!({"id": id, "name": name, "args": args})).unwrap()
}

fn batch(actions: Vec<ProposedAction>) -> NewGate {
    let mut gate = NewGate::new(GateSpec::Approval { action: "tool_calls".into() }, "Run these tool calls?");
    gate.actions = actions;
    gate
}

fn choice(id: &str, action: DecisionAction) -> ActionChoice {
    ActionChoice { id: id.into(), action, name: None, args: None, text: None }
}

fn decide(choices: Vec<ActionChoice>) -> DecisionInput {
    DecisionInput { actions: choices, ..DecisionInput::approve() }
}

#[test]
fn actions_decided_in_two_sittings_resolve_the_gate_with_every_decision_in_order() {
    let f = Fixture::new();
    let run = f.run("coder");
    let gate = f
        .engine
        .open_gate(
            &run.id,
            batch(vec![
                action("call_1", "read_file", json!({"path": "a.txt"})),
                action("call_2", "write_file", json!({"path": "b.txt", "text": "hi"})),
                action("call_3", "shell", json!({"cmd": "rm -rf /"})),
            ]),
            "coder",
        )
        .unwrap();
    assert_eq!(gate.actions.len(), 3);
    assert!(gate.actions.iter().all(|a| a.decision.is_none()));

    // The reviewer decides the third and the first now, in that order.
    let no = ActionChoice { text: Some("never".into()), ..choice("call_3", DecisionAction::Reject) };
    let partly =
        f.engine.resolve_gate(&gate.id, decide(vec![no, choice("call_1", DecisionAction::Approve)]), "alice").unwrap();
    assert_eq!(partly.status, GateStatus::Pending, "one action is still open");
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);
    let stored = f.engine.gate(&gate.id).unwrap();
    let decided: Vec<_> = stored.actions.iter().map(|a| a.decision.as_ref().map(|d| d.action)).collect();
    assert_eq!(decided, vec![Some(DecisionAction::Approve), None, Some(DecisionAction::Reject)]);

    // Deciding one of them again is a conflict naming who decided it.
    let again = f.engine.resolve_gate(&gate.id, decide(vec![choice("call_1", DecisionAction::Reject)]), "bob");
    assert!(
        matches!(&again, Err(EngineError::ActionDecided { action_id, decided_by, .. })
        if action_id == "call_1" && decided_by == "alice"),
        "{again:?}"
    );

    // Later, the last one, edited.
    f.clock.advance(chrono::Duration::seconds(30));
    let edit = ActionChoice {
        args: Some(json!({"path": "b.txt", "text": "hello"})),
        ..choice("call_2", DecisionAction::Edit)
    };
    let done = f.engine.resolve_gate(&gate.id, decide(vec![edit]), "bob").unwrap();
    assert_eq!(done.status, GateStatus::Resolved);
    let decision = done.decision.unwrap();
    assert_eq!(decision.action, DecisionAction::Edit, "mixed decisions went ahead with changes");
    let each: Vec<_> = decision.actions.iter().map(|d| (d.id.as_str(), d.action, d.decided_by.as_str())).collect();
    assert_eq!(
        each,
        vec![
            ("call_1", DecisionAction::Approve, "alice"),
            ("call_2", DecisionAction::Edit, "bob"),
            ("call_3", DecisionAction::Reject, "alice"),
        ]
    );
    assert_eq!(decision.actions[1].args, Some(json!({"path": "b.txt", "text": "hello"})));
    assert_eq!(decision.actions[2].text.as_deref(), Some("never"));
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);

    // The log holds both sittings, each in the actions' order, and the chain verifies.
    let events = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    let sittings: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::ActionsDecided { decisions, .. } => Some(decisions.iter().map(|d| d.id.clone()).collect()),
            _ => None,
        })
        .collect();
    assert_eq!(sittings, vec![vec!["call_1".to_owned(), "call_3".to_owned()], vec!["call_2".to_owned()]]);
    assert!(f.engine.verify_audit().unwrap().is_intact());
}

#[test]
fn a_bare_approve_or_reject_decides_every_open_action() {
    let f = Fixture::new();
    let run = f.run("coder");
    let actions = vec![action("a", "x", json!({})), action("b", "y", json!({})), action("c", "z", json!({}))];
    let gate = f.engine.open_gate(&run.id, batch(actions.clone()), "coder").unwrap();
    f.engine.resolve_gate(&gate.id, decide(vec![choice("b", DecisionAction::Reject)]), "alice").unwrap();
    let done = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let d = done.decision.unwrap();
    let each: Vec<_> = d.actions.iter().map(|a| a.action).collect();
    assert_eq!(each, vec![DecisionAction::Approve, DecisionAction::Reject, DecisionAction::Approve]);

    let gate = f.engine.open_gate(&run.id, batch(actions), "coder").unwrap();
    let done = f.engine.resolve_gate(&gate.id, DecisionInput::reject("not today"), "alice").unwrap();
    let d = done.decision.unwrap();
    assert_eq!(d.action, DecisionAction::Reject);
    assert!(d.actions.iter().all(|a| a.action == DecisionAction::Reject && a.text.as_deref() == Some("not today")));
}

#[test]
fn bad_decisions_name_what_is_wrong_and_change_nothing() {
    let f = Fixture::new();
    let run = f.run("coder");
    let mut only_approve = action("b", "y", json!({}));
    only_approve.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Reject];
    let gate = f.engine.open_gate(&run.id, batch(vec![action("a", "x", json!({})), only_approve]), "coder").unwrap();
    let cases = vec![
        (decide(vec![choice("zz", DecisionAction::Approve)]), "actions[0].id", "no action `zz`"),
        (
            decide(vec![choice("a", DecisionAction::Approve), choice("a", DecisionAction::Reject)]),
            "actions[1].id",
            "twice",
        ),
        (decide(vec![choice("b", DecisionAction::Edit)]), "actions[0].action", "not allowed"),
        (decide(vec![choice("a", DecisionAction::Edit)]), "actions[0].args", "edited arguments"),
        (decide(vec![choice("a", DecisionAction::Respond)]), "actions[0].text", "response needs"),
        (DecisionInput::respond("ok"), "actions", "decide each"),
        // One bad choice among good ones: none of them is taken.
        (
            decide(vec![choice("a", DecisionAction::Approve), choice("b", DecisionAction::Respond)]),
            "actions[1].action",
            "not allowed",
        ),
    ];
    for (input, field, words) in cases {
        match f.engine.resolve_gate(&gate.id, input.clone(), "alice") {
            Err(EngineError::Invalid { field: f, reason }) => {
                assert_eq!(f, field, "{input:?}: {reason}");
                assert!(reason.contains(words), "{input:?}: {reason}");
            }
            other => panic!("{input:?} was taken: {other:?}"),
        }
    }
    let untouched = f.engine.gate(&gate.id).unwrap();
    assert!(untouched.actions.iter().all(|a| a.decision.is_none()), "{:?}", untouched.actions);
    // A gate of one action refuses `actions`.
    let single = f.engine.open_gate(&run.id, NewGate::approval("x", "Do x?", json!({})), "coder").unwrap();
    let refused = f.engine.resolve_gate(&single.id, decide(vec![choice("a", DecisionAction::Approve)]), "alice");
    assert!(matches!(refused, Err(EngineError::Invalid { ref field, .. }) if field == "actions"), "{refused:?}");
}

#[test]
fn opening_checks_the_actions_and_numbers_those_without_an_id() {
    let f = Fixture::new();
    let run = f.run("coder");
    let unnamed = |name: &str| action("", name, json!({}));
    let gate = f
        .engine
        .open_gate(&run.id, batch(vec![unnamed("x"), action("action-1", "y", json!({})), unnamed("z")]), "coder")
        .unwrap();
    let ids: Vec<_> = gate.actions.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, vec!["action-2", "action-1", "action-3"], "given ids are kept, the others numbered around them");

    let mut question = NewGate::question("Which?");
    question.actions = vec![unnamed("x")];
    let dup = batch(vec![action("a", "x", json!({})), action("a", "y", json!({}))]);
    let mut vote = batch(vec![unnamed("x")]);
    vote.quorum = Some(gatehouse_engine::Quorum { required: 2, rejections_to_reject: 1 });
    let mut defer = batch(vec![unnamed("x")]);
    defer.actions[0].allowed_actions = vec![DecisionAction::Defer];
    for (new, field) in [
        (question, "actions"),
        (dup, "actions[1].id"),
        (vote, "actions"),
        (defer, "actions[0].allowed_actions"),
        (batch(vec![unnamed(" ")]), "actions[0].name"),
    ] {
        let refused = f.engine.open_gate(&run.id, new, "coder");
        assert!(matches!(&refused, Err(EngineError::Invalid { field: f, .. }) if f == field), "{field}: {refused:?}");
    }
}

#[test]
fn a_policy_that_passes_the_gate_approves_each_action_and_decisions_survive_a_restart() {
    let f = Fixture::new();
    let hitl = HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() };
    let auto = f.run_with(NewRun { agent: "a".into(), hitl_config: hitl, ..NewRun::default() });
    let passed = f
        .engine
        .open_gate(&auto.id, batch(vec![action("a", "x", json!({})), action("b", "y", json!({}))]), "a")
        .unwrap();
    let d = passed.decision.unwrap();
    assert!(d.actions.iter().all(|a| a.action == DecisionAction::Approve && a.decided_by == "policy"), "{d:?}");

    let run = f.run("coder");
    let gate = f
        .engine
        .open_gate(&run.id, batch(vec![action("a", "x", json!({})), action("b", "y", json!({}))]), "coder")
        .unwrap();
    f.engine.resolve_gate(&gate.id, decide(vec![choice("a", DecisionAction::Approve)]), "alice").unwrap();
    let f = f.reopen();
    let engine = &f.engine;
    let reopened = engine.gate(&gate.id).unwrap();
    assert_eq!(reopened.actions[0].decision.as_ref().map(|d| d.decided_by.as_str()), Some("alice"));
    assert!(reopened.actions[1].decision.is_none());
    let done = engine.resolve_gate(&gate.id, decide(vec![choice("b", DecisionAction::Approve)]), "bob").unwrap();
    assert_eq!(done.decision.unwrap().action, DecisionAction::Approve);
}
