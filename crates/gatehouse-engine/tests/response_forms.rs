//! Response forms: a gate carrying a JSON Schema of the answer it wants;
//! the engine refuses a bad schema when the gate opens and a bad answer
//! when the reviewer responds, naming the field, and records a good one.

mod common;

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

    let path = f.db_path();
    drop(f.engine);
    let engine = gatehouse_engine::Engine::open(&path, gatehouse_engine::EngineConfig::default()).unwrap();
    let back = engine.gate(&gate.id).unwrap();
    assert_eq!(back.decision.map(|d| d.action), Some(DecisionAction::Approve));
    let back = back.agent_state.expect("the state came back");
    assert_eq!(back["cursor"], 41);
    assert_eq!(back["retries"], json!([1, 2]));
    assert_ne!(back["api_key"], state["api_key"], "secrets in it are redacted like everything stored: {back}");

    let mut huge = NewGate::question("?");
    huge.agent_state = Some(json!("x".repeat(70_000)));
    assert_eq!(refused_field(engine.open_gate(&run.id, huge, "stateless-bot")), "agent_state");
}
