//! A decision taken on a pending gate: made from a reviewer's (or the
//! system's) input, closed with through `close_pending`, then recorded (the
//! decision row, `GateResolved`, the plan, ratings, scores and the run's
//! status). Every path that decides a gate ends here: `decide.rs`,
//! `votes.rs`, `actions.rs`, `quality.rs` and the timeout fallbacks. Also
//! the refusal logged for an attempt on a gate already closed.

use chrono::{DateTime, Utc};

use crate::decision::{Decision, DecisionAction, DecisionInput, DecisionOrigin};
use crate::diff::diff_values;
use crate::engine::close::{close_pending, closed_error, Closing};
use crate::engine::collab::apply_plan_op;
use crate::engine::tx::{after_gate_closed, emit, load_run, record_score};
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{ActionDecision, Gate, GateKind};
use crate::ids::DecisionId;
use crate::plan::{Plan, PlanOperation};
use crate::scoring::RatingChange;
use crate::store::WriteTx;

/// What became of a resolution attempt inside the transaction.
pub(super) enum Attempt {
    /// The gate is decided (or, for a quorum gate, the vote is counted).
    Done(Box<Gate>),
    /// The gate had already closed; the attempt was logged.
    Refused(EngineError),
}

/// Logs an attempt on a closed gate and returns the conflict for the caller.
pub(super) fn refuse(
    tx: &mut dyn WriteTx,
    gate: Gate,
    input: DecisionInput,
    by: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    let run = load_run(tx, &gate.run_id)?;
    let error = closed_error(&gate);
    let kind = EventKind::ResolutionRefused {
        gate_id: gate.id.clone(),
        attempted_by: by.to_owned(),
        attempted: Box::new(input),
        status: gate.status,
        resolved_by: gate.decision.as_ref().map(|d| d.decided_by.clone()),
    };
    emit(tx, &run, by, now, kind)?;
    Ok(Attempt::Refused(error))
}

/// Resolves a pending gate with a decision: closes it (`close_pending`),
/// then records what follows from the decision.
pub(crate) fn decide_gate(
    tx: &mut dyn WriteTx,
    gate: Gate,
    input: DecisionInput,
    by: &str,
    origin: DecisionOrigin,
    now: DateTime<Utc>,
) -> Result<Gate> {
    let (gate, decision) = close_decided(tx, gate, &input, by, origin, now)?;
    record_decision(tx, gate, decision, now)
}

/// The first half of [`decide_gate`]: settles the actions still open,
/// makes the decision and closes the gate with it. A path with an event to
/// log between the two halves (a vote, actions decided) logs it after this
/// one, so a loser of the race has written nothing.
pub(super) fn close_decided(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: &DecisionInput,
    by: &str,
    origin: DecisionOrigin,
    now: DateTime<Utc>,
) -> Result<(Gate, Decision)> {
    settle_open_actions(&mut gate, input.action, input.text.as_deref(), by, now);
    let decision = decision_on(&gate, input, by, origin, now);
    close_pending(tx, &mut gate, Closing::Resolved(Box::new(decision.clone())), now)?;
    Ok((gate, decision))
}

/// The second half of [`decide_gate`]: the decision row, `GateResolved`, a
/// plan review's edited plan, the agent's rating, the score and the run's
/// status.
pub(super) fn record_decision(
    tx: &mut dyn WriteTx,
    gate: Gate,
    decision: Decision,
    now: DateTime<Utc>,
) -> Result<Gate> {
    tx.insert_decision(&decision)?;
    let by = decision.decided_by.clone();
    let (action, origin, score) = (decision.action, decision.origin.clone(), decision.score.clone());
    let mut run = load_run(tx, &gate.run_id)?;
    let edited_plan = match (gate.kind(), action) {
        (GateKind::PlanReview, DecisionAction::Edit) => decision.payload.clone(),
        _ => None,
    };
    emit(tx, &run, &by, now, EventKind::GateResolved { gate_id: gate.id.clone(), decision: Box::new(decision) })?;
    if let Some(edited) = edited_plan {
        // Modifying a plan under review makes the edited plan the run's plan.
        let plan: Plan = serde_json::from_value(edited)
            .map_err(|e| EngineError::invalid("payload", format!("a plan review's edit must be a whole plan: {e}")))?;
        apply_plan_op(tx, &run, &PlanOperation::Replace { plan }, &by, now)?;
    }
    // A person's decision ends the agents' run of turns; the run is stored
    // once, by the status change below if the decision brings one.
    let human = origin == DecisionOrigin::Human;
    if human {
        if action.judges_the_agent() {
            tx.rate_agent(&gate.agent, RatingChange::Decision { approved: action.counts_as_approval() })?;
        }
        run.consecutive_agent_turns = 0;
        run.updated_at = now;
    }
    if let Some(score) = score {
        record_score(tx, &run, &gate.agent, Some(gate.id.clone()), score, &by, now)?;
    }
    let stored = after_gate_closed(tx, &mut run, gate.mode, &by, now)?;
    if human && !stored {
        tx.update_run(&run)?;
    }
    Ok(gate)
}

/// The decision `input` makes on `gate`, as recorded: an edit's diff
/// against the agent's payload, each action's decision, the latency.
fn decision_on(gate: &Gate, input: &DecisionInput, by: &str, origin: DecisionOrigin, now: DateTime<Utc>) -> Decision {
    let diff = match (input.action, &input.payload) {
        (DecisionAction::Edit, Some(edited)) => {
            Some(diff_values(gate.payload.as_ref().unwrap_or(&serde_json::Value::Null), edited))
        }
        _ => None,
    };
    Decision {
        id: DecisionId::new(),
        gate_id: gate.id.clone(),
        run_id: gate.run_id.clone(),
        action: input.action,
        decided_by: by.to_owned(),
        origin,
        text: input.text.clone(),
        payload: input.payload.clone(),
        diff,
        score: input.score.clone(),
        actions: action_decisions(gate),
        response: input.response.clone(),
        option: input.option.clone(),
        decided_at: now,
        latency_ms: (now - gate.created_at).num_milliseconds().max(0),
        self_decided: input.self_decided,
    }
}

/// Every action's decision, in the gate's order (empty until all are decided).
pub(super) fn action_decisions(gate: &Gate) -> Vec<ActionDecision> {
    gate.actions.iter().filter_map(|a| a.decision.clone()).collect()
}

/// Decides every action still open as the whole gate was decided: approve
/// approves them, reject rejects them with the reason; any other decision
/// on the whole gate leaves them as they are.
pub(super) fn settle_open_actions(
    gate: &mut Gate,
    action: DecisionAction,
    text: Option<&str>,
    by: &str,
    now: DateTime<Utc>,
) {
    if !matches!(action, DecisionAction::Approve | DecisionAction::Reject) {
        return;
    }
    for proposed in gate.actions.iter_mut().filter(|a| a.decision.is_none()) {
        proposed.decision = Some(ActionDecision {
            id: proposed.id.clone(),
            action,
            name: None,
            args: None,
            text: text.map(str::to_owned),
            decided_by: by.to_owned(),
            decided_at: now,
        });
    }
}
