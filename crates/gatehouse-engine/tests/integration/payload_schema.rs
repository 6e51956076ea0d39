//! A payload that does not match the schema its gate declares is still
//! shown, with its problems, and only the actions that remain safe are
//! offered: never approving it as sent (nor a policy passing it), while an
//! edit that fits, a rejection or an answer still are.

use crate::common;

use common::Fixture;
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::{DecisionAction, DecisionInput, EngineError, GateStatus, NewGate, NewRun, PresetOption};
use serde_json::json;

fn resize(payload: serde_json::Value) -> NewGate {
    let mut new = NewGate::approval("resize", "Resize the hero image?", payload);
    new.payload_schema = Some(json!({
        "type": "object",
        "required": ["input_image"],
        "properties": {"input_image": {"type": "string"}, "width": {"type": "integer", "maximum": 4096}}
    }));
    new
}

#[test]
fn a_payload_off_its_schema_opens_with_its_problems_and_without_approve() {
    let f = Fixture::new();
    // Even under `auto`, which would pass any approval.
    let run = f.run_with(NewRun {
        agent: "designer".into(),
        hitl_config: HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() },
        ..NewRun::default()
    });
    let mut new = resize(json!({"image_file": "hero.png", "width": 9000}));
    new.options = vec![PresetOption {
        name: "ok".into(),
        title: "Looks fine".into(),
        description: None,
        action: DecisionAction::Approve,
        text: None,
    }];
    let gate = f.engine.open_gate(&run.id, new, "designer").unwrap();
    assert_eq!(gate.status, GateStatus::Pending, "never passed on its own");
    assert_eq!(gate.payload, Some(json!({"image_file": "hero.png", "width": 9000})), "shown as sent");
    assert_eq!(gate.payload_problems.len(), 2, "{:?}", gate.payload_problems);
    assert!(gate.payload_problems.iter().any(|p| p.starts_with("payload.width:")));
    assert_eq!(gate.allowed_actions, [DecisionAction::Edit, DecisionAction::Reject]);
    assert!(gate.options.is_empty(), "an option that approves as sent is withdrawn");

    let refused = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap_err();
    assert!(matches!(refused, EngineError::ActionNotAllowed { .. }), "{refused:?}");
    // An edit must fit the schema, naming the field that does not.
    let err = f.engine.resolve_gate(
        &gate.id,
        DecisionInput::edit(json!({"input_image": "hero.png", "width": 5000})),
        "alice",
    );
    assert!(matches!(err, Err(EngineError::Invalid { ref field, .. }) if field == "payload.width"), "{err:?}");
    let fixed = json!({"input_image": "hero.png", "width": 2048});
    let decided = f.engine.resolve_gate(&gate.id, DecisionInput::edit(fixed.clone()), "alice").unwrap();
    assert_eq!(decided.decision.unwrap().payload, Some(fixed));
}

#[test]
fn a_payload_that_fits_is_an_ordinary_gate_and_a_bad_schema_is_refused() {
    let f = Fixture::new();
    let run = f.run("designer");
    let gate = f.engine.open_gate(&run.id, resize(json!({"input_image": "hero.png"})), "designer").unwrap();
    assert!(gate.payload_problems.is_empty());
    assert!(gate.allowed_actions.contains(&DecisionAction::Approve));
    f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();

    let mut bad = resize(json!({}));
    bad.payload_schema = Some(json!({"type": 12}));
    let err = f.engine.open_gate(&run.id, bad, "designer").unwrap_err();
    assert!(err.to_string().starts_with("payload_schema: is not a valid JSON Schema"), "{err}");
}
