//! A reviewer deciding a gate: the decision is checked against the gate and
//! its deciders, then taken on its proposed actions (`actions.rs`), as a
//! vote (`votes.rs`) or on the whole gate (`decision.rs`). An attempt on a
//! gate that has already closed is logged as `ResolutionRefused` and
//! answered with `GateClosed`. Also withdrawing a gate (`cancel_gate`).

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::decision::{DecisionInput, DecisionOrigin};
use crate::engine::close::{close_pending, not_found_gate, Closing};
use crate::engine::gates::actions::decide_actions;
use crate::engine::gates::decision::{decide_gate, refuse, Attempt};
use crate::engine::gates::validate::{check_decider, check_decision, with_option};
use crate::engine::gates::votes::vote;
use crate::engine::gates::RunAccess;
use crate::engine::rules;
use crate::engine::tx::{after_gate_closed, emit, load_run};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{Decider, Gate, GateStatus};
use crate::ids::GateId;
use crate::scoring::QualityScore;
use crate::store::{Store, WriteTx};

impl<S: Store> Engine<S> {
    /// Decides a gate for `reviewer`. The first decision wins; a later one
    /// gets [`EngineError::GateClosed`] naming who decided and when, and its
    /// attempted answer is kept in the audit log. On a quorum gate each call
    /// is one reviewer's vote until the quorum or the rejection rule is met.
    pub fn resolve_gate(&self, id: &GateId, input: DecisionInput, reviewer: &str) -> Result<Gate> {
        self.resolve_gate_as(id, input, &Decider::new(reviewer, [] as [&str; 0]))
    }

    /// Decides a gate as [`Engine::resolve_gate`] does, for a reviewer
    /// whose roles count against a gate's deciders: someone the gate does
    /// not name (by name or role) gets [`EngineError::NotADecider`].
    pub fn resolve_gate_as(&self, id: &GateId, input: DecisionInput, who: &Decider) -> Result<Gate> {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let anyone = |_: &Gate, _: &RunAccess<'_>| Ok::<(), EngineError>(());
        self.resolve_gate_then(id, input, who, anyone, move |gate| {
            let _ = reply.send(gate);
        });
        answer.recv().map_err(|_| EngineError::Storage("the store is closed".into()))?
    }

    /// [`Engine::resolve_gate_as`] for a caller who may not reach every
    /// gate, and who need not wait for the write. `access` sees the gate
    /// and its run inside the decision's own transaction, before anything
    /// is written, and may refuse them (its error is `done`'s answer, and
    /// nothing is stored or logged): the check and the decision see one
    /// state, and the check costs no read of its own. `done` gets the gate
    /// once the decision is committed, on whichever thread committed it
    /// ([`crate::store::Store::write_then`]): this thread, before this
    /// returns, if the store was idle, else the store's writer.
    pub fn resolve_gate_then<E, A, D>(&self, id: &GateId, input: DecisionInput, who: &Decider, access: A, done: D)
    where
        E: From<EngineError> + Send + 'static,
        A: FnOnce(&Gate, &RunAccess<'_>) -> std::result::Result<(), E> + Send + 'static,
        D: FnOnce(std::result::Result<Gate, E>) + Send + 'static,
    {
        let now = self.now();
        let input = match self.checked_decision(input, &who.name, now) {
            Ok(input) => input,
            Err(e) => return done(Err(e.into())),
        };
        let (id, reviewer, who) = (id.clone(), who.name.clone(), who.clone());
        let closed = Arc::clone(self.closed_gates());
        let op = move |tx: &mut dyn WriteTx| -> Result<std::result::Result<Attempt, E>> {
            let gate = tx.gate(&id)?.ok_or_else(|| not_found_gate(&id))?;
            if let Err(refused) = access(&gate, &RunAccess::lazy(&gate.run_id, &*tx)) {
                return Ok(Err(refused));
            }
            if gate.status.is_terminal() {
                return refuse(tx, gate, input, &reviewer, now).map(Ok);
            }
            check_decider(&gate, &who)?;
            let input = DecisionInput { self_decided: who.opened(&gate), ..input };
            // "Always allow": checked before anything is written, made with the decision.
            let allow = match &input.allow_rule {
                Some(request) => rules::plan(&gate, &input, request, now)?,
                None => Vec::new(),
            };
            let attempt = decide_pending(tx, gate, input, &reviewer, now)?;
            if let Attempt::Done(gate) = &attempt {
                if gate.status == GateStatus::Resolved && !allow.is_empty() {
                    rules::create_planned(tx, gate, allow, &reviewer, now)?;
                }
                // For the waiters its event wakes, once (and only if) this write commits.
                if let Some(decision) = &gate.decision {
                    closed.keep(decision, gate);
                }
            }
            Ok(Ok(attempt))
        };
        self.store().write_then(op, move |result| {
            done(match result {
                Err(e) => Err(e.into()),
                Ok(Err(refused)) => Err(refused),
                Ok(Ok(Attempt::Done(gate))) => Ok(*gate),
                Ok(Ok(Attempt::Refused(e))) => Err(e.into()),
            })
        });
    }

    /// The decision redacted and checked; its score, if any, credited to
    /// whoever decides at the time they decide, whatever the input says.
    fn checked_decision(&self, input: DecisionInput, reviewer: &str, now: DateTime<Utc>) -> Result<DecisionInput> {
        let input = self.redacted(input)?;
        if let Some(score) = &input.score {
            score.validate()?;
        }
        Ok(DecisionInput {
            score: input.score.map(|s| QualityScore { scorer: reviewer.to_owned(), at: now, ..s }),
            ..input
        })
    }

    /// Withdraws a pending gate.
    pub fn cancel_gate(&self, id: &GateId, reason: &str, actor: &str) -> Result<Gate> {
        let (id, reason, actor, now) = (id.clone(), self.redacted_text(reason), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut gate = tx.gate(&id)?.ok_or_else(|| not_found_gate(&id))?;
            close_pending(tx, &mut gate, Closing::Cancelled(reason.clone()), now)?;
            let mut run = load_run(tx, &gate.run_id)?;
            emit(tx, &run, &actor, now, EventKind::GateCancelled { gate_id: gate.id.clone(), reason })?;
            after_gate_closed(tx, &mut run, gate.mode, &actor, now)?;
            Ok(gate)
        })
    }
}

/// Decides a pending gate for a reviewer allowed to: each action of a gate
/// of several, a vote on a quorum gate, or the decision itself.
pub(super) fn decide_pending(
    tx: &mut dyn WriteTx,
    gate: Gate,
    input: DecisionInput,
    reviewer: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    if !gate.actions.is_empty() {
        return decide_actions(tx, gate, input, reviewer, now);
    }
    let input = with_option(&gate, input)?;
    if !input.actions.is_empty() {
        return Err(EngineError::invalid("actions", "this gate proposes one action; decide it without `actions`"));
    }
    check_decision(&gate, &input)?;
    if gate.quorum.is_some() {
        return vote(tx, gate, input, reviewer, now);
    }
    let gate = decide_gate(tx, gate, input, reviewer, DecisionOrigin::Human, now)?;
    Ok(Attempt::Done(Box::new(gate)))
}
