//! Quality gates scored: a person's score decides the gate (approve at or
//! above the required score, else needs revision); an agent's or the
//! system's decides it only under the run's auto-approve threshold, else it
//! is recorded and the gate stays pending.

use chrono::{DateTime, Utc};

use crate::decision::{DecisionAction, DecisionInput, DecisionOrigin};
use crate::engine::close::not_found_gate;
use crate::engine::gates::decision::{decide_gate, refuse, Attempt};
use crate::engine::gates::validate::check_decider;
use crate::engine::tx::{load_run, record_score};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::gate::{Decider, Gate, GateSpec};
use crate::ids::GateId;
use crate::run::Role;
use crate::scoring::{evaluate, QualityScore, ScoreVerdict};
use crate::store::Store;

impl<S: Store> Engine<S> {
    /// Quality-gate evaluation (`evaluate_at_gate`): scores the deliverable of a quality
    /// gate. A human's score decides the gate (approve at or above
    /// `required_score`, otherwise needs revision). An agent's or the
    /// system's score decides it only when the run's handoff protocol has an
    /// auto-approve threshold the score meets and the gate does not require
    /// a human; otherwise the score is recorded and the gate stays pending.
    pub fn evaluate_quality_gate(&self, id: &GateId, score: QualityScore, role: Role) -> Result<(Gate, ScoreVerdict)> {
        self.evaluate_quality_gate_by(id, score, role, None)
    }

    /// A person's score on a quality gate, as [`Engine::evaluate_quality_gate`]
    /// with [`Role::Human`], for `who`: one of the gate's deciders, and not
    /// the token that opened it unless the server allows self-review (the
    /// decision is then `self_decided`).
    pub fn score_quality_gate_as(
        &self,
        id: &GateId,
        score: QualityScore,
        who: &Decider,
    ) -> Result<(Gate, ScoreVerdict)> {
        self.evaluate_quality_gate_by(id, score, Role::Human, Some(who.clone()))
    }

    fn evaluate_quality_gate_by(
        &self,
        id: &GateId,
        score: QualityScore,
        role: Role,
        who: Option<Decider>,
    ) -> Result<(Gate, ScoreVerdict)> {
        let score = self.redacted(score)?;
        score.validate()?;
        let (id, now) = (id.clone(), self.now());
        self.store().write(move |tx| {
            let gate = tx.gate(&id)?.ok_or_else(|| not_found_gate(&id))?;
            let GateSpec::QualityScore { required_score, .. } = gate.spec else {
                return Err(EngineError::invalid("gate_id", format!("gate {id} is not a quality_score gate")));
            };
            let verdict = evaluate(score.score, required_score);
            let action = match verdict {
                ScoreVerdict::Passes => DecisionAction::Approve,
                ScoreVerdict::NeedsRevision => DecisionAction::NeedsRevision,
            };
            let scorer = score.scorer.clone();
            let mut input = DecisionInput {
                text: Some(score.justification.clone()),
                score: Some(score),
                ..DecisionInput::new(action)
            };
            if gate.status.is_terminal() {
                return match refuse(tx, gate, input, &scorer, now)? {
                    Attempt::Refused(e) => Err(e),
                    Attempt::Done(g) => Ok((*g, verdict)),
                };
            }
            if let Some(who) = &who {
                check_decider(&gate, who)?;
                input.self_decided = who.opened(&gate);
            }
            if !gate.allowed_actions.contains(&action) {
                return Err(EngineError::ActionNotAllowed {
                    gate_id: gate.id.clone(),
                    action,
                    allowed: gate.allowed_actions,
                });
            }
            let run = load_run(tx, &gate.run_id)?;
            let origin = match role {
                Role::Human => Some(DecisionOrigin::Human),
                Role::Agent | Role::System => match run.protocol.auto_approve_threshold {
                    Some(t) if !gate.requires_human && verdict == ScoreVerdict::Passes && score_at_least(&input, t) => {
                        Some(DecisionOrigin::Auto { reason: format!("score meets the auto-approve threshold {t}") })
                    }
                    _ => None,
                },
            };
            match origin {
                Some(origin) => Ok((decide_gate(tx, gate, input, &scorer, origin, now)?, verdict)),
                None => {
                    let qs = input.score.unwrap_or_else(|| unreachable_score(&scorer, now));
                    record_score(tx, &run, &gate.agent, Some(gate.id.clone()), qs, &scorer, now)?;
                    Ok((gate, verdict))
                }
            }
        })
    }
}

fn score_at_least(input: &DecisionInput, threshold: f64) -> bool {
    input.score.as_ref().is_some_and(|s| s.score + 1e-9 >= threshold)
}

fn unreachable_score(scorer: &str, now: DateTime<Utc>) -> QualityScore {
    // evaluate_quality_gate always builds its input with a score.
    QualityScore::new("", scorer, 1.0, now).unwrap_or_else(|_| unreachable!("1.0 is in range"))
}
