//! Opening a gate: the agent's request is redacted and checked, then one
//! transaction loads the run, honours the idempotency key, builds the gate
//! and either passes it at once (the run's policy, else a reviewer's
//! allow-rule: it is stored resolved and never pending) or stores it
//! pending and, for a sync gate, sets the run waiting for a human.

use chrono::{DateTime, Utc};

use crate::decision::{Decision, DecisionAction, DecisionOrigin};
use crate::diff::count_changes;
use crate::engine::declared::apply_declared;
use crate::engine::gates::actions::proposed_actions;
use crate::engine::gates::decision::{action_decisions, settle_open_actions};
use crate::engine::gates::validate::{check_fallback, check_options, names, validate_new_gate};
use crate::engine::rules::{self, RuleMatch};
use crate::engine::runs::run_chain_in;
use crate::engine::tx::{agent_chain, emit, ensure_live, load_run, not_found_run, set_status};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{BlockingMode, Escalation, Gate, GateSpec, GateStatus, NewGate};
use crate::ids::{DecisionId, GateId, RunId};
use crate::policy::{decide, GateSignals, PolicyOutcome};
use crate::run::{Run, RunStatus, RunTransition};
use crate::store::{Store, WriteTx};

impl<S: Store> Engine<S> {
    /// Opens a gate on `run_id`. A retry carrying the same idempotency key
    /// returns the first gate unchanged. Under the run's policy the gate may
    /// pass at once, recorded as `auto_approved` with the reason.
    pub fn open_gate(&self, run_id: &RunId, new: NewGate, actor: &str) -> Result<Gate> {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let anyone = |_: &RunAccess<'_>| Ok::<(), EngineError>(());
        self.open_gate_then(run_id, new, actor, anyone, move |gate| {
            let _ = reply.send(gate);
        });
        answer.recv().map_err(|_| EngineError::Storage("the store is closed".into()))?
    }

    /// [`Engine::open_gate`] for a caller who may not use every run, and
    /// who need not wait for the write. `access` sees the run inside the
    /// gate's own transaction, before anything is written, and may refuse
    /// it (its error is `done`'s answer, and nothing is stored). `done` gets
    /// the gate once it is committed, on whichever thread committed it
    /// ([`Store::write_then`]): this thread, before this returns, if the
    /// store was idle, else the store's writer. The request is redacted
    /// and checked here, on the calling thread.
    pub fn open_gate_then<E, A, D>(&self, run_id: &RunId, new: NewGate, actor: &str, access: A, done: D)
    where
        E: From<EngineError> + Send + 'static,
        A: FnOnce(&RunAccess<'_>) -> std::result::Result<(), E> + Send + 'static,
        D: FnOnce(std::result::Result<Gate, E>) + Send + 'static,
    {
        let new = match self.checked_request(new) {
            Ok(new) => new,
            Err(e) => return done(Err(e.into())),
        };
        let now = self.now();
        // Everything below comes from the redacted request.
        let (run_id, actor) = (run_id.clone(), actor.to_owned());
        let op = move |tx: &mut dyn WriteTx| -> Result<std::result::Result<Gate, E>> {
            // The rules that could pass the gate, and the gate a retry with
            // the same key opened, are read with its run: one round trip on
            // a database server. Only the opener's own rules can pass it
            // (`rules::matching`).
            let actions = rules::actions_asked(&new);
            let names: Vec<&str> = actions.iter().map(String::as_str).collect();
            let read = tx.reads_before_open(&run_id, &actor, &names, new.idempotency_key.as_deref(), now)?;
            let live = rules::LiveRules::read(&actor, &actions, read.rules);
            let seen = RunAccess::of(read.run.ok_or_else(|| not_found_run(&run_id))?, &*tx);
            if let Err(refused) = access(&seen) {
                return Ok(Err(refused));
            }
            let run = seen.into_run()?;
            open_in(tx, run, new, &actor, now, live, read.existing).map(Ok)
        };
        self.store().write_then(op, move |result| done(result.map_err(E::from).and_then(|gate| gate)));
    }

    /// The request redacted and checked, its idempotency key digested.
    fn checked_request(&self, mut new: NewGate) -> Result<NewGate> {
        // The key is kept apart: two secret keys redact alike but must not match.
        // The opening token is not part of the request's body, so it is kept apart too.
        let (key, opened_by) = (new.idempotency_key.take(), new.opened_by.take());
        let mut new = NewGate { idempotency_key: key, opened_by, ..self.redacted(new)? };
        validate_new_gate(&new)?;
        new.idempotency_key = new.idempotency_key.as_deref().map(crate::redact::idempotency_digest);
        Ok(new)
    }
}

/// The run a gate is about to open on (or be decided on), as an access
/// check sees it: read in the gate's own write transaction, so the check
/// and the write see one state; read only if the check asks for it.
pub struct RunAccess<'a> {
    id: RunId,
    run: std::cell::OnceCell<Run>,
    tx: &'a dyn WriteTx,
}

impl<'a> RunAccess<'a> {
    /// `run`, already read in `tx`.
    pub(super) fn of(run: Run, tx: &'a dyn WriteTx) -> Self {
        Self { id: run.id.clone(), run: std::cell::OnceCell::from(run), tx }
    }

    /// The run `id`, read from `tx` when first asked for.
    pub(super) fn lazy(id: &RunId, tx: &'a dyn WriteTx) -> Self {
        Self { id: id.clone(), run: std::cell::OnceCell::new(), tx }
    }

    /// The run, owned.
    pub(super) fn into_run(self) -> Result<Run> {
        match self.run.into_inner() {
            Some(run) => Ok(run),
            None => load_run(self.tx, &self.id),
        }
    }

    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.id
    }

    /// The run.
    pub fn run(&self) -> Result<&Run> {
        if let Some(run) = self.run.get() {
            return Ok(run);
        }
        let run = load_run(self.tx, &self.id)?;
        Ok(self.run.get_or_init(|| run))
    }

    /// The run and the runs above it, outermost first (as [`Engine::run_chain`]).
    pub fn chain(&self) -> Result<Vec<Run>> {
        run_chain_in(self.tx, &self.id)
    }
}

/// Opens the checked request `new` on `run`, in `tx`, unless `existing`
/// (the gate opened with the request's idempotency key, read with the run)
/// answers it.
fn open_in(
    tx: &mut dyn WriteTx,
    mut run: Run,
    new: NewGate,
    actor: &str,
    now: DateTime<Utc>,
    live: rules::LiveRules,
    existing: Option<Gate>,
) -> Result<Gate> {
    ensure_live(&run, "gates")?;
    if let Some(existing) = existing {
        return Ok(existing);
    }
    let new = apply_declared(&run, new)?;
    let gate = build_gate(tx, &run, new, now)?;
    if run.status == RunStatus::Created {
        set_status(tx, &mut run, RunTransition::Start, actor, None, now)?;
    }
    // The run's policy may pass it; else a reviewer's allow-rule may.
    let passed = match policy_outcome(&run, &gate) {
        PolicyOutcome::AutoPass { reason } => Some(Pass { by: "policy".to_owned(), reason, rules: None }),
        PolicyOutcome::Wait { .. } => rules::matching(tx, &gate, actor, now, live)?.map(|m| Pass {
            by: m.decided_by(),
            reason: m.reason(),
            rules: Some(m),
        }),
    };
    match passed {
        Some(pass) => pass_at_once(tx, &run, gate, pass, actor, now),
        None => insert_pending(tx, &mut run, gate, actor, now),
    }
}

/// Why a gate passes as it opens, and who passed it.
struct Pass {
    /// `policy`, or `rule:<id>`.
    by: String,
    reason: String,
    /// The allow-rules that passed it, if rules did.
    rules: Option<RuleMatch>,
}

/// The gate a checked request describes on `run`, pending, as of `now`.
fn build_gate(tx: &mut dyn WriteTx, run: &Run, mut new: NewGate, now: DateTime<Utc>) -> Result<Gate> {
    let kind = new.spec.kind();
    let expires_at = new.expiry(now);
    let mut allowed_actions =
        if new.allowed_actions.is_empty() { kind.default_actions() } else { new.allowed_actions.clone() };
    if new.response_schema.is_some()
        && new.allowed_actions.is_empty()
        && !allowed_actions.contains(&DecisionAction::Respond)
    {
        // A form asks for an answer: answering it is always offered.
        allowed_actions.insert(0, DecisionAction::Respond);
    }
    let payload_problems = match (&new.payload_schema, &new.payload) {
        (Some(schema), Some(payload)) => crate::form::payload_problems(schema, payload),
        _ => Vec::new(),
    };
    let mut options = std::mem::take(&mut new.options);
    if !payload_problems.is_empty() {
        // Shown as sent, but approving a payload that does not fit is not safe.
        allowed_actions.retain(|a| *a != DecisionAction::Approve);
        options.retain(|o| allowed_actions.contains(&o.action));
    }
    check_options(&options, &allowed_actions)?;
    check_fallback(&new, run, now)?;
    Ok(Gate {
        id: GateId::new(),
        run_id: run.id.clone(),
        mode: new.mode,
        priority: new.priority,
        agent: new.agent.clone().unwrap_or_else(|| run.agent.clone()),
        text: new.text,
        context: new.context,
        payload: new.payload,
        example_input: new.example_input,
        allowed_actions,
        requires_human: new.requires_human,
        confidence: new.confidence,
        safety_flags: new.safety_flags,
        quorum: new.quorum,
        votes: Vec::new(),
        actions: proposed_actions(&new.actions),
        response_schema: new.response_schema,
        agent_state: new.agent_state,
        options,
        on_timeout: new.on_timeout,
        payload_schema: new.payload_schema,
        payload_problems,
        deciders: names(&new.deciders),
        agent_chain: if run.parent_run_id.is_some() { agent_chain(tx, run)? } else { Vec::new() },
        escalation: new.escalate_after_secs.map(|after| Escalation {
            after_secs: after,
            to: names(&new.escalate_to),
            due_at: now + chrono::Duration::seconds(i64::try_from(after).unwrap_or(i64::MAX / 1_000_000)),
            escalated_at: None,
        }),
        status: GateStatus::Pending,
        decision: None,
        status_reason: None,
        idempotency_key: new.idempotency_key,
        opened_by: new.opened_by,
        created_at: now,
        expires_at,
        closed_at: None,
        imported: None,
        workflow_node_id: new.workflow_node_id,
        released: None,
        spec: new.spec,
    })
}

/// Stores a gate passed as it opens: resolved, approved by the policy or
/// the allow-rules, with `GateAutoPassed`. It never waits, so no one races it.
fn pass_at_once(
    tx: &mut dyn WriteTx,
    run: &Run,
    mut gate: Gate,
    pass: Pass,
    actor: &str,
    now: DateTime<Utc>,
) -> Result<Gate> {
    settle_open_actions(&mut gate, DecisionAction::Approve, None, &pass.by, now);
    if let Some(rules) = &pass.rules {
        rules.name_action_deciders(&mut gate);
        rules.record_uses(tx, now)?;
    }
    let decision = Decision {
        id: DecisionId::new(),
        gate_id: gate.id.clone(),
        run_id: run.id.clone(),
        action: DecisionAction::Approve,
        decided_by: pass.by,
        origin: DecisionOrigin::Auto { reason: pass.reason },
        text: None,
        payload: None,
        diff: None,
        score: None,
        actions: action_decisions(&gate),
        response: None,
        option: None,
        decided_at: now,
        latency_ms: 0,
        self_decided: false,
    };
    gate.status = GateStatus::Resolved;
    gate.closed_at = Some(now);
    gate.decision = Some(decision.clone());
    tx.insert_gate(&gate)?;
    tx.insert_decision(&decision)?;
    let kind = EventKind::GateAutoPassed { gate: Box::new(gate.clone()), decision: Box::new(decision) };
    emit(tx, run, actor, now, kind)?;
    Ok(gate)
}

/// Stores a gate pending with `GateOpened`; a sync gate sets its run
/// waiting for a human. A concurrent retry with the same idempotency key
/// that stored its gate first gets that gate back instead.
fn insert_pending(tx: &mut dyn WriteTx, run: &mut Run, gate: Gate, actor: &str, now: DateTime<Utc>) -> Result<Gate> {
    if !tx.insert_gate(&gate)? {
        let key = gate.idempotency_key.as_deref().unwrap_or_default();
        return tx
            .gate_by_idempotency_key(&run.id, key)?
            .ok_or_else(|| EngineError::Storage("idempotency key conflict without a gate".into()));
    }
    emit(tx, run, actor, now, EventKind::GateOpened { gate: Box::new(gate.clone()) })?;
    if gate.mode == BlockingMode::Sync && run.status == RunStatus::Active {
        set_status(tx, run, RunTransition::AwaitHuman, actor, None, now)?;
    }
    Ok(gate)
}

/// What the run's policy says about a freshly built gate.
fn policy_outcome(run: &Run, gate: &Gate) -> PolicyOutcome {
    if !gate.kind().policy_may_auto_pass() || gate.quorum.is_some() {
        return PolicyOutcome::Wait { reason: format!("{} gates always wait for a human", gate.kind().as_str()) };
    }
    if !gate.payload_problems.is_empty() {
        return PolicyOutcome::Wait { reason: "its payload does not match its declared schema".to_owned() };
    }
    // The agent's own signals; an information review's findings count too.
    let (mut confidence, mut safety_flags) = (gate.confidence, gate.safety_flags.clone());
    if let GateSpec::InformationReview { confidence: c, safety_flags: flags, .. } = &gate.spec {
        confidence = confidence.or(*c);
        safety_flags.extend(flags.iter().cloned());
    }
    let payload_changes = match (&gate.example_input, &gate.payload) {
        (Some(example), Some(payload)) => Some(count_changes(example, payload)),
        _ => None,
    };
    let signals = GateSignals {
        kind: gate.kind().as_str().to_owned(),
        requires_human: gate.requires_human,
        confidence,
        safety_flags,
        payload_changes,
    };
    decide(&run.hitl_config, &signals)
}
