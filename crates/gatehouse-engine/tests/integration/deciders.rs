//! Who may answer, and escalation after a wait: a gate restricted to named
//! reviewers or roles refuses everyone else (and nothing is recorded for
//! them); after its wait a pending gate escalates once, its priority rises,
//! the reviewers and roles it escalates to may decide it, and its timeline
//! says whom it brought in.

use crate::common;

use common::Fixture;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{Decider, DecisionInput, EngineError, ErrorCode, EventKind, GateStatus, NewGate, Priority};
use serde_json::json;

fn restricted(deciders: &[&str]) -> NewGate {
    let mut new = NewGate::approval("rotate_keys", "Rotate the production signing keys?", json!({"env": "prod"}));
    new.deciders = deciders.iter().map(|d| (*d).to_owned()).collect();
    new
}

#[test]
fn only_named_reviewers_or_roles_may_decide_and_others_are_refused() {
    let f = Fixture::new();
    let run = f.run("ops-bot");
    let gate = f.engine.open_gate(&run.id, restricted(&[" alice ", "role:security", "alice"]), "ops-bot").unwrap();
    assert_eq!(gate.deciders, ["alice", "role:security"], "trimmed, each once");

    let bob = Decider::new("bob", ["reviewer"]);
    let err = f.engine.resolve_gate_as(&gate.id, DecisionInput::approve(), &bob).unwrap_err();
    assert!(matches!(&err, EngineError::NotADecider { who, .. } if who == "bob"), "{err:?}");
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(
        err.to_string(),
        format!("gate {} may be decided only by alice, role:security; bob may read it but not decide it", gate.id)
    );
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending, "nothing was decided");

    // A member of the security team may.
    let carol = Decider::new("carol", ["reviewer", "security"]);
    let decided = f.engine.resolve_gate_as(&gate.id, DecisionInput::approve(), &carol).unwrap();
    assert_eq!(decided.decision.unwrap().decided_by, "carol");

    // Named: alice needs no role.
    let second = f.engine.open_gate(&run.id, restricted(&["alice"]), "ops-bot").unwrap();
    f.engine.resolve_gate(&second.id, DecisionInput::reject("not today"), "alice").unwrap();
    // Unrestricted gates are anyone's.
    let open = f.engine.open_gate(&run.id, NewGate::question("Which region?"), "ops-bot").unwrap();
    assert!(open.deciders.is_empty());
    f.engine.resolve_gate_as(&open.id, DecisionInput::respond("eu"), &bob).unwrap();
}

#[test]
fn bad_decider_lists_are_refused_naming_the_entry() {
    let f = Fixture::new();
    let run = f.run("ops-bot");
    let err = |new: NewGate| f.engine.open_gate(&run.id, new, "ops-bot").unwrap_err().to_string();
    assert!(err(restricted(&["alice", "  "])).starts_with("deciders[1]:"));
    assert!(err(restricted(&["role:"])).starts_with("deciders[0]:"));
    let mut many = restricted(&[]);
    many.deciders = (0..51).map(|i| format!("r{i}")).collect();
    assert!(err(many).starts_with("deciders: at most 50"));
    let mut orphan = NewGate::question("Q?");
    orphan.escalate_to = vec!["bob".into()];
    assert!(err(orphan).starts_with("escalate_to: give escalate_after_secs"));
    let mut late = NewGate::question("Q?");
    late.escalate_after_secs = Some(600);
    late.expires_in_secs = Some(300);
    assert_eq!(err(late), "escalate_after_secs: must come before the gate expires (expires_in_secs is 300)");
}

#[test]
fn a_gate_escalates_once_after_its_wait_bringing_in_and_notifying_others() {
    let f = Fixture::new();
    let run = f.run("ops-bot");
    let mut new = restricted(&["alice"]);
    new.escalate_after_secs = Some(1800);
    new.escalate_to = vec!["role:oncall".into(), "dave".into()];
    let gate = f.engine.open_gate(&run.id, new, "ops-bot").unwrap();
    let escalation = gate.escalation.clone().unwrap();
    assert_eq!((escalation.after_secs, escalation.escalated_at), (1800, None));

    f.clock.advance(chrono::Duration::minutes(29));
    assert!(f.engine.sweep_escalations().unwrap().is_empty(), "not yet");
    let oncall = Decider::new("erin", ["reviewer", "oncall"]);
    assert!(matches!(
        f.engine.resolve_gate_as(&gate.id, DecisionInput::approve(), &oncall),
        Err(EngineError::NotADecider { .. })
    ));

    f.clock.advance(chrono::Duration::minutes(2));
    assert_eq!(f.engine.sweep_escalations().unwrap(), vec![gate.id.clone()]);
    assert!(f.engine.sweep_escalations().unwrap().is_empty(), "once");
    let now = f.engine.gate(&gate.id).unwrap();
    assert_eq!(now.priority, Priority::High);
    assert_eq!(now.deciders, ["alice", "role:oncall", "dave"]);
    assert!(now.escalation.unwrap().escalated_at.is_some());
    let events = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    let (reason, notify) = events
        .iter()
        .find_map(|e| match &e.body.kind {
            EventKind::GateEscalated { reason, notify, expires_at: None, .. } => Some((reason.clone(), notify.clone())),
            _ => None,
        })
        .expect("a gate_escalated event");
    assert_eq!(reason, "no answer within 31m: escalated to high and to role:oncall, dave");
    assert_eq!(notify, ["role:oncall", "dave"]);
    // Now on call may decide.
    f.engine.resolve_gate_as(&gate.id, DecisionInput::approve(), &oncall).unwrap();
}

#[test]
fn an_urgent_gate_stays_urgent_and_a_decided_gate_never_escalates() {
    let f = Fixture::new();
    let run = f.run("ops-bot");
    let mut urgent = NewGate::question("Now?");
    urgent.priority = Priority::Urgent;
    urgent.escalate_after_secs = Some(60);
    let urgent = f.engine.open_gate(&run.id, urgent, "ops-bot").unwrap();
    let mut decided = NewGate::question("Later?");
    decided.escalate_after_secs = Some(60);
    let decided = f.engine.open_gate(&run.id, decided, "ops-bot").unwrap();
    f.engine.resolve_gate(&decided.id, DecisionInput::respond("fine"), "alice").unwrap();
    f.clock.advance(chrono::Duration::seconds(61));
    assert_eq!(f.engine.sweep_escalations().unwrap(), vec![urgent.id.clone()]);
    assert_eq!(f.engine.gate(&urgent.id).unwrap().priority, Priority::Urgent);
    assert!(f.engine.gate(&decided.id).unwrap().escalation.unwrap().escalated_at.is_none());
}
