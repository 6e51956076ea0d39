//! Response forms: a gate carrying a JSON Schema of the answer it wants;
//! the engine refuses a bad schema when the gate opens and a bad answer
//! when the reviewer responds, naming the field, and records a good one.

use crate::common;

use common::Fixture;
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::{DecisionInput, EngineError, GateStatus, NewGate};
use serde_json::{json, Value};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "enum": ["eu-west-1", "us-east-1"], "default": "eu-west-1"},
            "percent": {"type": "number", "minimum": 1, "maximum": 50},
            "notify": {"type": "boolean", "default": true}
        },
        "required": ["region", "percent"]
    })
}

fn respond(response: Value) -> DecisionInput {
    DecisionInput { response: Some(response), ..DecisionInput::new(DecisionAction::Respond) }
}

fn refused_field(r: Result<gatehouse_engine::Gate, EngineError>) -> String {
    match r {
        Err(EngineError::Invalid { field, .. }) => field,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_form_answer_is_checked_against_the_schema_and_recorded() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut new = NewGate::question("Where should the canary go?");
    new.response_schema = Some(schema());
    let gate = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    assert_eq!(gate.response_schema, Some(schema()));

    let id = &gate.id;
    assert_eq!(refused_field(f.engine.resolve_gate(id, DecisionInput::respond("eu please"), "alice")), "response");
    assert_eq!(
        refused_field(f.engine.resolve_gate(id, respond(json!({"region": "mars", "percent": 5})), "alice")),
        "response.region"
    );
    assert_eq!(
        refused_field(f.engine.resolve_gate(id, respond(json!({"region": "eu-west-1", "percent": 80})), "alice")),
        "response.percent"
    );
    let with_defer = DecisionInput { response: Some(json!({})), ..DecisionInput::new(DecisionAction::Defer) };
    assert_eq!(refused_field(f.engine.resolve_gate(id, with_defer, "alice")), "response");
    assert_eq!(f.engine.gate(id).unwrap().status, GateStatus::Pending, "refusals change nothing");

    let answer = json!({"region": "us-east-1", "percent": 5, "notify": false});
    let done = f.engine.resolve_gate(id, respond(answer.clone()), "alice").unwrap();
    let decision = done.decision.unwrap();
    assert_eq!(decision.action, DecisionAction::Respond);
    assert_eq!(decision.response, Some(answer));
}

#[test]
fn a_form_on_an_approval_gate_offers_respond_and_bad_schemas_are_refused() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut approval = NewGate::approval("deploy", "Deploy?", json!({"build": 42}));
    approval.response_schema = Some(schema());
    let gate = f.engine.open_gate(&run.id, approval, "deployer").unwrap();
    assert!(gate.allowed_actions.contains(&DecisionAction::Respond), "{:?}", gate.allowed_actions);
    assert!(gate.allowed_actions.contains(&DecisionAction::Approve), "{:?}", gate.allowed_actions);

    for bad in [json!({"type": "string"}), json!({"type": "object", "properties": {"a": {"type": "nonsense"}}})] {
        let mut new = NewGate::question("?");
        new.response_schema = Some(bad.clone());
        assert_eq!(refused_field(f.engine.open_gate(&run.id, new, "deployer")), "response_schema", "{bad}");
    }
}

#[test]
fn an_agents_opaque_state_comes_back_with_the_decision_and_survives_a_restart() {
    let f = Fixture::new();
    let run = f.run("stateless-bot");
    let state =
        json!({"cursor": 41, "step": "deploy", "retries": [1, 2], "api_key": "sk-live-0123456789abcdef0123456789"});
    let mut new = NewGate::approval("deploy", "Deploy?", json!({}));
    new.agent_state = Some(state.clone());
    let gate = f.engine.open_gate(&run.id, new, "stateless-bot").unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();

    let f = f.reopen();
    let back = f.engine.gate(&gate.id).unwrap();
    assert_eq!(back.decision.map(|d| d.action), Some(DecisionAction::Approve));
    let back = back.agent_state.expect("the state came back");
    assert_eq!(back["cursor"], 41);
    assert_eq!(back["retries"], json!([1, 2]));
    assert_ne!(back["api_key"], state["api_key"], "secrets in it are redacted like everything stored: {back}");

    let mut huge = NewGate::question("?");
    huge.agent_state = Some(json!("x".repeat(70_000)));
    assert_eq!(refused_field(f.engine.open_gate(&run.id, huge, "stateless-bot")), "agent_state");
}

fn presets() -> Vec<gatehouse_engine::PresetOption> {
    serde_json::from_value(json!([
        {"name": "eu", "title": "Use eu-west-1", "text": "Go with eu-west-1."},
        {"name": "later", "title": "Not now", "action": "defer"},
        {"name": "unsafe", "title": "Too risky", "description": "Refuse on safety grounds", "action": "reject"}
    ]))
    .unwrap()
}

#[test]
fn a_preset_option_decides_with_its_own_decision_and_text_and_is_recorded() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut new = NewGate::question("Which region?");
    new.options = presets()[..2].to_vec();
    let gate = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    assert_eq!(gate.options.len(), 2);

    let pick =
        |action: DecisionAction, name: &str| DecisionInput { option: Some(name.into()), ..DecisionInput::new(action) };
    assert_eq!(
        refused_field(f.engine.resolve_gate(&gate.id, pick(DecisionAction::Respond, "mars"), "alice")),
        "option"
    );
    assert_eq!(
        refused_field(f.engine.resolve_gate(&gate.id, pick(DecisionAction::Respond, "later"), "alice")),
        "action"
    );
    let done = f.engine.resolve_gate(&gate.id, pick(DecisionAction::Respond, "eu"), "alice").unwrap();
    let d = done.decision.unwrap();
    assert_eq!(
        (d.action, d.text.as_deref(), d.option.as_deref()),
        (DecisionAction::Respond, Some("Go with eu-west-1."), Some("eu"))
    );

    // The reviewer's own words win over the option's; the title stands in for a missing text.
    let mut new = NewGate::question("Which region?");
    new.options = presets()[..2].to_vec();
    let gate = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    let typed = DecisionInput { text: Some("eu, but after 18:00".into()), ..pick(DecisionAction::Respond, "eu") };
    let d = f.engine.resolve_gate(&gate.id, typed, "alice").unwrap().decision.unwrap();
    assert_eq!(d.text.as_deref(), Some("eu, but after 18:00"));
    let mut new = NewGate::question("Which region?");
    new.options = presets()[..2].to_vec();
    let gate = f.engine.open_gate(&run.id, new, "deployer").unwrap();
    let d = f.engine.resolve_gate(&gate.id, pick(DecisionAction::Defer, "later"), "alice").unwrap().decision.unwrap();
    assert_eq!((d.action, d.text.as_deref()), (DecisionAction::Defer, Some("Not now")));
}

#[test]
fn options_must_be_named_once_and_take_a_decision_the_gate_allows() {
    let f = Fixture::new();
    let run = f.run("deployer");
    let mut question = NewGate::question("?");
    question.options = presets(); // a question cannot be rejected
    assert_eq!(refused_field(f.engine.open_gate(&run.id, question, "deployer")), "options[2].action");
    let mut twice = NewGate::approval("x", "Do x?", json!({}));
    twice.options = vec![presets()[2].clone(), presets()[2].clone()];
    assert_eq!(refused_field(f.engine.open_gate(&run.id, twice, "deployer")), "options[1].name");
    let mut many = NewGate::approval("x", "Do x?", json!({}));
    many.options = (0..10)
        .map(|i| serde_json::from_value(json!({"name": format!("o{i}"), "title": "t", "action": "approve"})).unwrap())
        .collect();
    assert_eq!(refused_field(f.engine.open_gate(&run.id, many, "deployer")), "options");
}
