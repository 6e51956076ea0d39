//! Gates declared with a run (`declared_gates`), in the engine: the checks
//! a declaration must pass when the run is created (each field named), the
//! declaration applied to a gate an agent opens for its node, and reaching
//! a node (`reach_node`), which opens the declared gate as declared.

use serde::{Deserialize, Serialize};

use crate::engine::tx::not_found_run;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::gate::{DeclaredGate, Gate, GateContext, GateKind, NewGate};
use crate::ids::RunId;
use crate::run::Run;
use crate::store::Store;

/// At most this many gates per run.
const MAX_DECLARED: usize = 100;
/// The longest node id.
const MAX_NODE_ID: usize = 200;

/// What an agent may add when its run reaches a node: the declared gate
/// opens with these beside what the run declared.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeReached {
    /// The text, when the declaration has none.
    #[serde(default)]
    pub text: Option<String>,
    /// The deliverable or proposed payload.
    #[serde(default)]
    pub payload: Option<serde_json::Value>,
    /// Task and step.
    #[serde(default)]
    pub context: Option<GateContext>,
    /// A retry with the same key returns the first gate instead of opening a
    /// second; without one, each arrival at the node opens its gate anew.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

impl<S: Store> Engine<S> {
    /// The run reached `node_id`: opens the gate it declared there, as
    /// declared. A node the run declared nothing for is refused, naming `node_id`.
    pub fn reach_node(&self, run_id: &RunId, node_id: &str, reached: NodeReached, actor: &str) -> Result<Gate> {
        let gate = self.node_gate(run_id, node_id, reached)?;
        self.open_gate(run_id, gate, actor)
    }

    /// The gate `run_id` declared at `node_id`, to open (the server checks
    /// it against the review people set, then opens it as any gate).
    pub fn node_gate(&self, run_id: &RunId, node_id: &str, reached: NodeReached) -> Result<NewGate> {
        let run = self.store().read(|r| r.run(run_id))?.ok_or_else(|| not_found_run(run_id))?;
        let Some(declared) = run.declared_gates.iter().find(|d| d.workflow_node_id == node_id) else {
            return Err(EngineError::invalid("node_id", format!("run {run_id} declares no gate at node `{node_id}`")));
        };
        let mut gate = declared.new_gate();
        if declared.text.is_none() {
            gate.text = reached.text.unwrap_or(gate.text);
        }
        gate.payload = reached.payload;
        gate.context = reached.context.unwrap_or_default();
        gate.idempotency_key = reached.idempotency_key;
        Ok(gate)
    }
}

/// Checks the gates a new run declares: node ids present, short and
/// unique; a score and rubric only on a quality gate, the score from 1 to 5.
pub(crate) fn check_declared(gates: &[DeclaredGate]) -> Result<()> {
    if gates.len() > MAX_DECLARED {
        return Err(EngineError::invalid(
            "declared_gates",
            format!("at most {MAX_DECLARED} gates, got {}", gates.len()),
        ));
    }
    for (i, gate) in gates.iter().enumerate() {
        let field = |name: &str| format!("declared_gates[{i}].{name}");
        let node = gate.workflow_node_id.trim();
        if node.is_empty() || gate.workflow_node_id.len() > MAX_NODE_ID {
            return Err(EngineError::invalid(
                field("workflow_node_id"),
                format!("must be 1 to {MAX_NODE_ID} characters"),
            ));
        }
        if let Some(first) = gates[..i].iter().position(|g| g.workflow_node_id == gate.workflow_node_id) {
            return Err(EngineError::invalid(
                field("workflow_node_id"),
                format!("node `{node}` is declared twice (first at declared_gates[{first}])"),
            ));
        }
        check_quality_fields(gate, &field)?;
    }
    Ok(())
}

fn check_quality_fields(gate: &DeclaredGate, field: &dyn Fn(&str) -> String) -> Result<()> {
    if gate.kind != GateKind::QualityScore {
        if gate.required_score.is_some() {
            return Err(EngineError::invalid(
                field("required_score"),
                "only a quality_score gate has a required score",
            ));
        }
        if !gate.rubric.is_empty() {
            return Err(EngineError::invalid(field("rubric"), "only a quality_score gate has a rubric"));
        }
    }
    if let Some(score) = gate.required_score.filter(|s| !(1.0..=5.0).contains(s)) {
        return Err(EngineError::invalid(field("required_score"), format!("must be from 1 to 5, got {score}")));
    }
    if let Some(k) = gate.rubric.iter().position(|c| c.trim().is_empty()) {
        return Err(EngineError::invalid(field(&format!("rubric[{k}]")), "a criterion needs a name"));
    }
    Ok(())
}

/// An agent's gate for a node its run declared a gate at, with the
/// declaration applied (it may add to it, never take from it); any other
/// gate as sent.
pub(crate) fn apply_declared(run: &Run, mut gate: NewGate) -> Result<NewGate> {
    let Some(node) = gate.workflow_node_id.clone() else { return Ok(gate) };
    let Some(declared) = run.declared_gates.iter().find(|d| d.workflow_node_id == node) else { return Ok(gate) };
    declared.apply_to(&mut gate).map_err(|m| {
        EngineError::invalid(
            "kind",
            format!(
                "the run declares a {} gate at node `{node}`; a {} gate cannot stand in for it",
                m.declared.as_str(),
                m.sent.as_str()
            ),
        )
    })?;
    Ok(gate)
}
