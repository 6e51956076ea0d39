//! Gates of several proposed actions (a batch of tool calls in one
//! approval gate): numbering them as they open, deciding some or all of
//! them, and the whole gate's decision once every one is decided.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::decision::{ActionChoice, DecisionAction, DecisionInput, DecisionOrigin};
use crate::engine::close::save_pending;
use crate::engine::gates::decision::{close_decided, record_decision, Attempt};
use crate::engine::tx::{emit, load_run};
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{ActionDecision, Gate, ProposedAction};
use crate::store::WriteTx;

/// The gate's actions as stored: redacted, numbered where the agent gave
/// no id (skipping ids it gave), and undecided.
pub(super) fn proposed_actions(actions: &[ProposedAction]) -> Vec<ProposedAction> {
    let taken: HashSet<&str> = actions.iter().map(|a| a.id.as_str()).collect();
    let mut next = 0;
    actions
        .iter()
        .map(|a| {
            let id = if a.id.is_empty() {
                loop {
                    next += 1;
                    let candidate = format!("action-{next}");
                    if !taken.contains(candidate.as_str()) {
                        break candidate;
                    }
                }
            } else {
                a.id.clone()
            };
            ProposedAction {
                id,
                name: a.name.clone(),
                args: a.args.clone(),
                description: a.description.clone(),
                allowed_actions: a.allowed_actions.clone(),
                decision: None,
            }
        })
        .collect()
}

/// Decides some or all of a gate's proposed actions. A bare approve or
/// reject decides all that are still open. The gate resolves once every
/// action is decided: approve when all were approved, reject when all were
/// rejected, edit (went ahead with changes) otherwise. The gate is saved
/// (or closed) before `ActionsDecided` is logged, so an attempt that lost
/// the race writes nothing.
pub(super) fn decide_actions(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: DecisionInput,
    reviewer: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    let mut seen = HashSet::new();
    let mut taken = Vec::new();
    for (i, choice) in choices(&gate, &input)?.into_iter().enumerate() {
        if !seen.insert(choice.id.clone()) {
            return Err(EngineError::invalid(
                format!("actions[{i}].id"),
                format!("action `{}` is decided twice", choice.id),
            ));
        }
        taken.push(take(&mut gate, i, choice, reviewer, now)?);
    }
    if taken.is_empty() {
        return Err(EngineError::invalid("actions", "no decision given"));
    }
    // Report them in the gate's order, whatever order they came in.
    let order = |id: &str| gate.actions.iter().position(|a| a.id == id).unwrap_or(usize::MAX);
    taken.sort_by_key(|d| order(&d.id));
    let decided = EventKind::ActionsDecided { gate_id: gate.id.clone(), decisions: taken };
    if gate.actions.iter().any(|a| a.decision.is_none()) {
        save_pending(tx, &gate)?;
        let run = load_run(tx, &gate.run_id)?;
        emit(tx, &run, reviewer, now, decided)?;
        return Ok(Attempt::Done(Box::new(gate)));
    }
    let text = input.text.filter(|t| !t.trim().is_empty());
    let input = DecisionInput { text, ..DecisionInput::new(overall(&gate)) };
    let (gate, decision) = close_decided(tx, gate, &input, reviewer, DecisionOrigin::Human, now)?;
    let run = load_run(tx, &gate.run_id)?;
    emit(tx, &run, reviewer, now, decided)?;
    Ok(Attempt::Done(Box::new(record_decision(tx, gate, decision, now)?)))
}

/// The choices a decision makes: those it names, or for a bare approve or
/// reject the same decision on every action still open.
fn choices(gate: &Gate, input: &DecisionInput) -> Result<Vec<ActionChoice>> {
    if !input.actions.is_empty() {
        return Ok(input.actions.clone());
    }
    if !matches!(input.action, DecisionAction::Approve | DecisionAction::Reject) {
        return Err(EngineError::invalid(
            "actions",
            "this gate proposes several actions: decide each in `actions`, or approve or reject all that are open",
        ));
    }
    let text = input.text.clone().filter(|t| !t.trim().is_empty());
    Ok(gate
        .actions
        .iter()
        .filter(|a| a.decision.is_none())
        .map(|a| ActionChoice { id: a.id.clone(), action: input.action, name: None, args: None, text: text.clone() })
        .collect())
}

/// Takes choice `i` on its action of `gate`: the action must exist, be
/// open and allow the decision, which must be complete.
fn take(gate: &mut Gate, i: usize, choice: ActionChoice, reviewer: &str, now: DateTime<Utc>) -> Result<ActionDecision> {
    let field = |name: &str| format!("actions[{i}].{name}");
    let gate_id = gate.id.clone();
    let Some(proposed) = gate.actions.iter_mut().find(|a| a.id == choice.id) else {
        let known = gate.actions.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ");
        return Err(EngineError::invalid(field("id"), format!("no action `{}`; this gate's are {known}", choice.id)));
    };
    if let Some(done) = &proposed.decision {
        return Err(EngineError::ActionDecided {
            gate_id,
            action_id: choice.id,
            decided_by: done.decided_by.clone(),
            decided_at: done.decided_at,
        });
    }
    if !proposed.allows(choice.action) {
        let allowed = if proposed.allowed_actions.is_empty() {
            ProposedAction::DEFAULT_ACTIONS.to_vec()
        } else {
            proposed.allowed_actions.clone()
        };
        let names = allowed.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ");
        return Err(EngineError::invalid(
            field("action"),
            format!("`{}` is not allowed on action `{}`; allowed: {names}", choice.action.as_str(), choice.id),
        ));
    }
    let text = choice.text.filter(|t| !t.trim().is_empty());
    match choice.action {
        DecisionAction::Edit if choice.args.is_none() && choice.name.is_none() => {
            return Err(EngineError::invalid(field("args"), "an edit needs the edited arguments (or name)"));
        }
        DecisionAction::Respond if text.is_none() => {
            return Err(EngineError::invalid(field("text"), "a response needs its text"));
        }
        _ => {}
    }
    if choice.name.as_ref().is_some_and(|n| n.trim().is_empty()) {
        return Err(EngineError::invalid(field("name"), "must not be empty"));
    }
    let edit = choice.action == DecisionAction::Edit;
    let decision = ActionDecision {
        id: choice.id,
        action: choice.action,
        name: if edit { choice.name } else { None },
        args: if edit { choice.args } else { None },
        text,
        decided_by: reviewer.to_owned(),
        decided_at: now,
    };
    proposed.decision = Some(decision.clone());
    Ok(decision)
}

/// The whole gate's decision once every action is decided: approve when
/// all were approved, reject when all were rejected, else edit.
fn overall(gate: &Gate) -> DecisionAction {
    let all =
        |action: DecisionAction| gate.actions.iter().all(|a| a.decision.as_ref().is_some_and(|d| d.action == action));
    if all(DecisionAction::Approve) {
        DecisionAction::Approve
    } else if all(DecisionAction::Reject) {
        DecisionAction::Reject
    } else {
        DecisionAction::Edit
    }
}
