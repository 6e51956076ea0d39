//! Gates a run declares when it is created, each bound to a node of the
//! agent's workflow (`workflow_node_id`): its kind, its text, and for a
//! quality gate the rubric and the required score. Reaching the node opens
//! the declared gate; what the agent sends then may add to it (a higher
//! score, more criteria, stricter blocking) and never take from it.

use serde::{Deserialize, Serialize};

use super::{BlockingMode, GateKind, GateSpec, NewGate};

/// A gate declared with its run, opened when the run reaches its node.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclaredGate {
    /// The workflow node it is bound to (unique in the run).
    pub workflow_node_id: String,
    /// Its kind.
    pub kind: GateKind,
    /// What the reviewer is asked, markdown; a default naming the node when absent.
    #[serde(default)]
    pub text: Option<String>,
    /// Criteria to score (quality gates only).
    #[serde(default)]
    pub rubric: Vec<String>,
    /// Minimum passing score, 1 to 5 (quality gates only; 3 when absent).
    #[serde(default)]
    pub required_score: Option<f64>,
    /// Never passed by a policy or protocol.
    #[serde(default)]
    pub requires_human: bool,
    /// Sync (the default), async or advisory.
    #[serde(default)]
    pub mode: BlockingMode,
}

/// An agent's gate names a different kind than its node declares.
#[derive(Debug, Clone, PartialEq)]
pub struct KindMismatch {
    /// The declared kind.
    pub declared: GateKind,
    /// The kind sent.
    pub sent: GateKind,
}

impl DeclaredGate {
    /// The spec the declaration gives a gate of its kind.
    pub fn spec(&self) -> GateSpec {
        match self.kind {
            GateKind::Approval => GateSpec::Approval { action: self.workflow_node_id.clone() },
            GateKind::PayloadReview => {
                GateSpec::PayloadReview { validation: vec![], suggestions: vec![], required_fields: vec![] }
            }
            GateKind::Question => GateSpec::Question {},
            GateKind::InformationReview => GateSpec::InformationReview {
                confidence: None,
                reasons: vec![],
                safety_flags: vec![],
                recommended_settings: serde_json::Value::Null,
            },
            GateKind::ResponseReview => {
                GateSpec::ResponseReview { raw: String::new(), audited: String::new(), indicators: vec![] }
            }
            GateKind::QualityScore => GateSpec::QualityScore {
                deliverable_id: self.workflow_node_id.clone(),
                required_score: self.required_score(),
                rubric: self.rubric.clone(),
            },
            GateKind::GoalReview => GateSpec::GoalReview { goal: serde_json::Value::Null, round: 1 },
            GateKind::PlanReview => GateSpec::PlanReview { plan_revision: None, round: 1 },
        }
    }

    /// The required score it declares, or the default.
    pub fn required_score(&self) -> f64 {
        self.required_score.unwrap_or(crate::scoring::DEFAULT_REQUIRED_SCORE)
    }

    /// The text it declares, or one naming its node.
    pub fn text(&self) -> String {
        self.text.clone().unwrap_or_else(|| format!("Review at workflow node `{}`", self.workflow_node_id))
    }

    /// The gate to open when the run reaches the node with nothing more said.
    pub fn new_gate(&self) -> NewGate {
        let mut gate = NewGate::new(self.spec(), self.text());
        gate.workflow_node_id = Some(self.workflow_node_id.clone());
        gate.requires_human = self.requires_human;
        gate.mode = self.mode;
        gate
    }

    /// Applies the declaration to an agent's gate for its node: the same
    /// kind or refused; a quality gate's score is the higher of the two and
    /// its rubric the declared criteria and then any the agent added;
    /// `requires_human` if either says so; the more blocking mode.
    pub fn apply_to(&self, gate: &mut NewGate) -> Result<(), KindMismatch> {
        let sent = gate.spec.kind();
        if sent != self.kind {
            return Err(KindMismatch { declared: self.kind, sent });
        }
        if let GateSpec::QualityScore { required_score, rubric, .. } = &mut gate.spec {
            *required_score = required_score.max(self.required_score());
            let extra: Vec<String> = rubric.drain(..).filter(|c| !self.rubric.contains(c)).collect();
            *rubric = self.rubric.iter().cloned().chain(extra).collect();
        }
        gate.requires_human |= self.requires_human;
        if self.mode.rank() < gate.mode.rank() {
            gate.mode = self.mode;
        }
        if gate.text.trim().is_empty() {
            gate.text = self.text();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quality(score: f64, rubric: &[&str]) -> DeclaredGate {
        DeclaredGate {
            workflow_node_id: "review".into(),
            kind: GateKind::QualityScore,
            text: None,
            rubric: rubric.iter().map(|s| s.to_string()).collect(),
            required_score: Some(score),
            requires_human: true,
            mode: BlockingMode::Sync,
        }
    }

    #[test]
    fn an_agent_may_raise_the_declared_score_and_never_lower_it() {
        let declared = quality(4.0, &["accuracy"]);
        for (sent, kept) in [(2.0, 4.0), (4.5, 4.5)] {
            let mut gate = NewGate::new(
                GateSpec::QualityScore {
                    deliverable_id: "d".into(),
                    required_score: sent,
                    rubric: vec!["tone".into()],
                },
                "Score it",
            );
            gate.mode = BlockingMode::Advisory;
            declared.apply_to(&mut gate).unwrap();
            let GateSpec::QualityScore { required_score, rubric, .. } = &gate.spec else { panic!("kind kept") };
            assert_eq!(*required_score, kept);
            assert_eq!(rubric, &["accuracy".to_string(), "tone".to_string()]);
            assert!(gate.requires_human);
            assert_eq!(gate.mode, BlockingMode::Sync);
        }
    }

    #[test]
    fn another_kind_at_a_declared_node_is_refused() {
        let mut gate = NewGate::question("Skip the review?");
        let err = quality(4.0, &[]).apply_to(&mut gate).unwrap_err();
        assert_eq!(err, KindMismatch { declared: GateKind::QualityScore, sent: GateKind::Question });
    }
}
