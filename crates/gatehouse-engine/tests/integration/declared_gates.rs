//! Gates declared with a run: checked when the run is created (each bad
//! field named), opened as declared when the run reaches the node, and
//! never weakened by what the agent sends for that node.

use crate::common;

use common::Fixture;
use gatehouse_engine::engine::NodeReached;
use gatehouse_engine::gate::GateSpec;
use gatehouse_engine::{BlockingMode, DeclaredGate, EngineError, GateKind, NewGate, NewRun, Run};
use serde_json::json;

fn declared(node: &str, kind: GateKind) -> DeclaredGate {
    serde_json::from_value(json!({"workflow_node_id": node, "kind": kind})).unwrap()
}

fn quality(node: &str, score: f64, rubric: &[&str]) -> DeclaredGate {
    DeclaredGate {
        required_score: Some(score),
        rubric: rubric.iter().map(|c| c.to_string()).collect(),
        requires_human: true,
        ..declared(node, GateKind::QualityScore)
    }
}

fn run_declaring(f: &Fixture, gates: Vec<DeclaredGate>) -> Run {
    f.run_with(NewRun { agent: "writer".into(), declared_gates: gates, ..NewRun::default() })
}

#[track_caller]
fn refused_field(f: &Fixture, gates: Vec<DeclaredGate>) -> String {
    let new = NewRun { agent: "writer".into(), declared_gates: gates, ..NewRun::default() };
    match f.engine.create_run(new, "writer").unwrap_err() {
        EngineError::Invalid { field, .. } => field,
        other => panic!("expected a refusal naming the field, got {other:?}"),
    }
}

#[test]
fn reaching_a_node_opens_its_declared_gate_as_declared() {
    let f = Fixture::new();
    let run = run_declaring(
        &f,
        vec![quality("draft-review", 4.0, &["accuracy", "tone"]), declared("ship", GateKind::Approval)],
    );
    assert_eq!(run.declared_gates.len(), 2);
    let reached = NodeReached { payload: Some(json!({"draft": "..."})), ..NodeReached::default() };
    let gate = f.engine.reach_node(&run.id, "draft-review", reached, "writer").unwrap();
    assert_eq!(gate.workflow_node_id.as_deref(), Some("draft-review"));
    assert!(gate.requires_human);
    assert_eq!(gate.mode, BlockingMode::Sync);
    let GateSpec::QualityScore { required_score, rubric, .. } = gate.spec else { panic!("a quality gate") };
    assert_eq!((required_score, rubric), (4.0, vec!["accuracy".to_string(), "tone".to_string()]));

    let err = f.engine.reach_node(&run.id, "nowhere", NodeReached::default(), "writer").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "node_id"), "{err:?}");
}

#[test]
fn an_agent_cannot_lower_the_declared_score_drop_criteria_or_swap_the_kind() {
    let f = Fixture::new();
    let run = run_declaring(&f, vec![quality("draft-review", 4.0, &["accuracy"])]);
    let mut weaker = NewGate::new(
        GateSpec::QualityScore { deliverable_id: "d1".into(), required_score: 1.0, rubric: vec![] },
        "Score my draft",
    );
    weaker.workflow_node_id = Some("draft-review".into());
    weaker.mode = BlockingMode::Advisory;
    let gate = f.engine.open_gate(&run.id, weaker, "writer").unwrap();
    let GateSpec::QualityScore { required_score, rubric, .. } = &gate.spec else { panic!("a quality gate") };
    assert_eq!((*required_score, rubric.clone()), (4.0, vec!["accuracy".to_string()]));
    assert_eq!(gate.mode, BlockingMode::Sync);
    assert!(gate.requires_human);

    let mut blank = NewGate::question("Which node?");
    blank.workflow_node_id = Some(" ".into());
    let err = f.engine.open_gate(&run.id, blank, "writer").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "workflow_node_id"), "{err:?}");

    let mut swapped = NewGate::question("Can we skip the review?");
    swapped.workflow_node_id = Some("draft-review".into());
    let err = f.engine.open_gate(&run.id, swapped, "writer").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "kind"), "{err:?}");
}

#[test]
fn bad_declarations_are_refused_naming_the_field() {
    let f = Fixture::new();
    let twice = vec![declared("a", GateKind::Approval), declared("a", GateKind::Question)];
    assert_eq!(refused_field(&f, twice), "declared_gates[1].workflow_node_id");
    assert_eq!(refused_field(&f, vec![quality("a", 6.0, &[])]), "declared_gates[0].required_score");
    assert_eq!(refused_field(&f, vec![quality("a", 0.5, &[])]), "declared_gates[0].required_score");
    let scored_question = DeclaredGate { required_score: Some(3.0), ..declared("q", GateKind::Question) };
    assert_eq!(refused_field(&f, vec![scored_question]), "declared_gates[0].required_score");
    assert_eq!(refused_field(&f, vec![declared(" ", GateKind::Approval)]), "declared_gates[0].workflow_node_id");
    assert_eq!(refused_field(&f, vec![quality("a", 3.0, &["ok", ""])]), "declared_gates[0].rubric[1]");
    let unknown = serde_json::from_value::<DeclaredGate>(json!({"workflow_node_id": "a", "kind": "vibe_check"}));
    assert!(unknown.unwrap_err().to_string().contains("unknown variant"));
}

#[test]
fn a_declared_run_passes_the_audit() {
    let f = Fixture::new();
    let run = run_declaring(&f, vec![quality("draft-review", 4.0, &["accuracy"])]);
    f.engine.reach_node(&run.id, "draft-review", NodeReached::default(), "writer").unwrap();
    assert!(f.engine.verify_audit().unwrap().is_intact());
}
