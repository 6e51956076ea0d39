//! Quorum gates: each reviewer's approve or reject is one vote, counted on
//! the pending gate (`save_pending`); the vote that meets the quorum, or
//! the rejection rule, decides the gate (`decide_gate`, so `close_pending`).

use chrono::{DateTime, Utc};

use crate::decision::{DecisionAction, DecisionInput, DecisionOrigin};
use crate::engine::close::save_pending;
use crate::engine::gates::decision::{close_decided, record_decision, Attempt};
use crate::engine::tx::{emit, load_run};
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{Gate, Quorum, Vote};
use crate::store::WriteTx;

/// Counts one reviewer's vote; decides the gate when the quorum or the
/// rejection rule is met. The gate is saved (or closed) before
/// `VoteRecorded` is logged, so a vote that lost the race writes nothing.
pub(super) fn vote(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: DecisionInput,
    reviewer: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    if gate.votes.iter().any(|v| v.reviewer == reviewer) {
        return Err(EngineError::AlreadyVoted { gate_id: gate.id.clone(), reviewer: reviewer.to_owned() });
    }
    let vote = Vote { reviewer: reviewer.to_owned(), action: input.action, reason: input.text.clone(), at: now };
    gate.votes.push(vote.clone());
    let recorded = EventKind::VoteRecorded { gate_id: gate.id.clone(), vote };
    let Some((action, tally)) = tally(&gate) else {
        save_pending(tx, &gate)?;
        let run = load_run(tx, &gate.run_id)?;
        emit(tx, &run, reviewer, now, recorded)?;
        return Ok(Attempt::Done(Box::new(gate)));
    };
    let text = match input.text {
        Some(t) if !t.trim().is_empty() => format!("{t}\n\n{tally}"),
        _ => tally,
    };
    let input = DecisionInput { action, text: Some(text), ..input };
    let (gate, decision) = close_decided(tx, gate, &input, reviewer, DecisionOrigin::Human, now)?;
    let run = load_run(tx, &gate.run_id)?;
    emit(tx, &run, reviewer, now, recorded)?;
    Ok(Attempt::Done(Box::new(record_decision(tx, gate, decision, now)?)))
}

/// What the votes so far decide, with the tally as its reason: reject once
/// the rejections reach the rule, approve once the approvals reach the
/// quorum, else nothing yet.
fn tally(gate: &Gate) -> Option<(DecisionAction, String)> {
    let quorum = gate.quorum.clone().unwrap_or(Quorum { required: 1, rejections_to_reject: 1 });
    let count = |a: DecisionAction| gate.votes.iter().filter(|v| v.action == a).count() as u32;
    let (approvals, rejections) = (count(DecisionAction::Approve), count(DecisionAction::Reject));
    let voters = || gate.votes.iter().map(|v| v.reviewer.as_str()).collect::<Vec<_>>().join(", ");
    if rejections >= quorum.rejections_to_reject {
        Some((DecisionAction::Reject, format!("{rejections} rejection(s) reject the gate (votes: {})", voters())))
    } else if approvals >= quorum.required {
        Some((
            DecisionAction::Approve,
            format!("quorum of {} approvals reached (votes: {})", quorum.required, voters()),
        ))
    } else {
        None
    }
}
