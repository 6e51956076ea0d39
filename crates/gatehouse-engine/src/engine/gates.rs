//! The hot path: an agent opens a gate, a policy may pass it at once, a
//! reviewer resolves it, the first resolver wins through one conditional
//! update, and every refused attempt is still written to the audit log.
//!
//! Over 600 lines for now: opening, deciding, voting, batched actions and
//! scoring still share this file. They are to be split into `gates/open.rs`
//! and `gates/decide.rs` around one `close_pending` (the engine
//! restructuring issue).

use chrono::{DateTime, Utc};

use crate::decision::{ActionChoice, Decision, DecisionAction, DecisionInput, DecisionOrigin};
use crate::diff::{count_changes, diff_values};
use crate::engine::collab::apply_plan_op;
use crate::engine::runs::{after_gate_closed, agent_chain, ensure_live, load_run, record_score, set_status};
use crate::engine::{emit, rules, Engine};
use crate::error::{EngineError, Result};
use crate::event::EventKind;
use crate::gate::{
    ActionDecision, BlockingMode, Decider, Escalation, Gate, GateKind, GateSpec, GateStatus, NewGate, PresetOption,
    ProposedAction, Vote, MAX_WAIT_SECS,
};
use crate::ids::{DecisionId, GateId, RunId};
use crate::plan::{Plan, PlanOperation};
use crate::policy::{decide, GateSignals, PolicyOutcome};
use crate::run::{Role, Run, RunStatus, RunTransition};
use crate::scoring::{evaluate, CapabilityRating, QualityScore, ScoreVerdict};
use crate::store::{GateFilter, Store, WriteTx};

/// What became of a resolution attempt inside the transaction.
enum Attempt {
    /// The gate is decided (or, for a quorum gate, the vote is counted).
    Done(Box<Gate>),
    /// The gate had already closed; the attempt was logged.
    Refused(EngineError),
}

impl<S: Store> Engine<S> {
    /// Opens a gate on `run_id`. A retry carrying the same idempotency key
    /// returns the first gate unchanged. Under the run's policy the gate may
    /// pass at once, recorded as `auto_approved` with the reason.
    pub fn open_gate(&self, run_id: &RunId, mut new: NewGate, actor: &str) -> Result<Gate> {
        // The key is kept apart: two secret keys redact alike but must not match.
        // The opening token is not part of the request's body, so it is kept apart too.
        let (key, opened_by) = (new.idempotency_key.take(), new.opened_by.take());
        let mut new = NewGate { idempotency_key: key, opened_by, ..self.redacted(new)? };
        validate_new_gate(&new)?;
        new.idempotency_key = new.idempotency_key.as_deref().map(crate::redact::idempotency_digest);
        let now = self.now();
        // Everything below comes from the redacted request.
        let payload = new.payload.take();
        let example_input = new.example_input.take();
        let text = std::mem::take(&mut new.text);
        let spec = new.spec.clone();
        let actions = proposed_actions(&new.actions);
        let agent_state = new.agent_state.take();
        let (run_id, actor) = (run_id.clone(), actor.to_owned());
        self.store().write(move |tx| {
            let mut run = load_run(tx, &run_id)?;
            ensure_live(&run, "gates")?;
            if let Some(key) = &new.idempotency_key {
                if let Some(existing) = tx.gate_by_idempotency_key(&run.id, key)? {
                    return Ok(existing);
                }
            }
            let kind = spec.kind();
            let mut allowed_actions =
                if new.allowed_actions.is_empty() { kind.default_actions() } else { new.allowed_actions.clone() };
            if new.response_schema.is_some()
                && new.allowed_actions.is_empty()
                && !allowed_actions.contains(&DecisionAction::Respond)
            {
                // A form asks for an answer: answering it is always offered.
                allowed_actions.insert(0, DecisionAction::Respond);
            }
            let payload_problems = match (&new.payload_schema, &payload) {
                (Some(schema), Some(payload)) => crate::form::payload_problems(schema, payload),
                _ => Vec::new(),
            };
            let mut options = new.options.clone();
            if !payload_problems.is_empty() {
                // Shown as sent, but approving a payload that does not fit is not safe.
                allowed_actions.retain(|a| *a != DecisionAction::Approve);
                options.retain(|o| allowed_actions.contains(&o.action));
            }
            check_options(&options, &allowed_actions)?;
            check_fallback(&new, &run, now)?;
            let mut gate = Gate {
                id: GateId::new(),
                run_id: run.id.clone(),
                spec,
                mode: new.mode,
                priority: new.priority,
                agent: new.agent.clone().unwrap_or_else(|| run.agent.clone()),
                text,
                context: new.context.clone(),
                payload,
                example_input,
                allowed_actions,
                requires_human: new.requires_human,
                confidence: new.confidence,
                safety_flags: new.safety_flags.clone(),
                quorum: new.quorum.clone(),
                votes: Vec::new(),
                actions,
                response_schema: new.response_schema.clone(),
                agent_state,
                options,
                on_timeout: new.on_timeout,
                payload_schema: new.payload_schema.clone(),
                payload_problems,
                deciders: names(&new.deciders),
                agent_chain: if run.parent_run_id.is_some() { agent_chain(tx, &run)? } else { Vec::new() },
                escalation: new.escalate_after_secs.map(|after| Escalation {
                    after_secs: after,
                    to: names(&new.escalate_to),
                    due_at: now + chrono::Duration::seconds(i64::try_from(after).unwrap_or(i64::MAX / 1_000_000)),
                    escalated_at: None,
                }),
                status: GateStatus::Pending,
                decision: None,
                status_reason: None,
                idempotency_key: new.idempotency_key.clone(),
                opened_by: new.opened_by.clone(),
                created_at: now,
                expires_at: new.expiry(now),
                closed_at: None,
            };
            if run.status == RunStatus::Created {
                set_status(tx, &mut run, RunTransition::Start, &actor, None, now)?;
            }
            // The run's policy may pass it; else a reviewer's allow-rule may.
            let passed = match policy_outcome(&run, &gate) {
                PolicyOutcome::AutoPass { reason } => Some(("policy".to_owned(), reason, None)),
                PolicyOutcome::Wait { .. } => {
                    rules::matching(tx, &gate, &actor, now)?.map(|m| (m.decided_by(), m.reason(), Some(m)))
                }
            };
            if let Some((by, reason, rules)) = passed {
                settle_open_actions(&mut gate, DecisionAction::Approve, None, &by, now);
                if let Some(rules) = &rules {
                    rules.name_action_deciders(&mut gate);
                    rules.record_uses(tx, now)?;
                }
                let decision = Decision {
                    id: DecisionId::new(),
                    gate_id: gate.id.clone(),
                    run_id: run.id.clone(),
                    action: DecisionAction::Approve,
                    decided_by: by,
                    origin: DecisionOrigin::Auto { reason },
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
                emit(tx, &run, &actor, now, kind)?;
                return Ok(gate);
            }
            if !tx.insert_gate(&gate)? {
                // A concurrent retry with the same key won the insert.
                let key = gate.idempotency_key.as_deref().unwrap_or_default();
                return tx
                    .gate_by_idempotency_key(&run.id, key)?
                    .ok_or_else(|| EngineError::Storage("idempotency key conflict without a gate".into()));
            }
            emit(tx, &run, &actor, now, EventKind::GateOpened { gate: Box::new(gate.clone()) })?;
            if gate.mode == BlockingMode::Sync && run.status == RunStatus::Active {
                set_status(tx, &mut run, RunTransition::AwaitHuman, &actor, None, now)?;
            }
            Ok(gate)
        })
    }

    /// One gate.
    pub fn gate(&self, id: &GateId) -> Result<Gate> {
        self.store().read(|r| r.gate(id))?.ok_or_else(|| not_found_gate(id))
    }

    /// Gates matching `filter`; pending ones in panel order.
    pub fn gates(&self, filter: &GateFilter) -> Result<Vec<Gate>> {
        self.store().read(|r| r.gates(filter))
    }

    /// How many gates match `filter`.
    pub fn count_gates(&self, filter: &GateFilter) -> Result<u64> {
        self.store().read(|r| r.count_gates(filter))
    }

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
        let input = self.redacted(input)?;
        let reviewer = who.name.as_str();
        if let Some(score) = &input.score {
            score.validate()?;
        }
        let now = self.now();
        let input = DecisionInput {
            // The scorer is whoever decides, at the time they decide, whatever the input says.
            score: input.score.map(|s| QualityScore { scorer: reviewer.to_owned(), at: now, ..s }),
            ..input
        };
        let (id, reviewer, who) = (id.clone(), reviewer.to_owned(), who.clone());
        let attempt = self.store().write(move |tx| {
            let gate = tx.gate(&id)?.ok_or_else(|| not_found_gate(&id))?;
            if gate.status.is_terminal() {
                return refuse(tx, gate, input, &reviewer, now);
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
            }
            Ok(attempt)
        })?;
        match attempt {
            Attempt::Done(gate) => Ok(*gate),
            Attempt::Refused(e) => Err(e),
        }
    }

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

    /// Withdraws a pending gate.
    pub fn cancel_gate(&self, id: &GateId, reason: &str, actor: &str) -> Result<Gate> {
        let (id, reason, actor, now) = (id.clone(), self.redacted_text(reason), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut gate = tx.gate(&id)?.ok_or_else(|| not_found_gate(&id))?;
            let closed = closed_error(&gate);
            gate.status = gate.status.transition(GateStatus::Cancelled).map_err(|_| closed)?;
            gate.status_reason = Some(reason.clone());
            gate.closed_at = Some(now);
            if !tx.update_gate_if(&gate, GateStatus::Pending)? {
                return Err(closed_error(&gate));
            }
            let mut run = load_run(tx, &gate.run_id)?;
            emit(tx, &run, &actor, now, EventKind::GateCancelled { gate_id: gate.id.clone(), reason })?;
            after_gate_closed(tx, &mut run, gate.mode, &actor, now)?;
            Ok(gate)
        })
    }
}

/// Decides a pending gate for a reviewer allowed to: each action of a gate
/// of several, a vote on a quorum gate, or the decision itself.
fn decide_pending(
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

fn score_at_least(input: &DecisionInput, threshold: f64) -> bool {
    input.score.as_ref().is_some_and(|s| s.score + 1e-9 >= threshold)
}

fn unreachable_score(scorer: &str, now: DateTime<Utc>) -> QualityScore {
    // evaluate_quality_gate always builds its input with a score.
    QualityScore::new("", scorer, 1.0, now).unwrap_or_else(|_| unreachable!("1.0 is in range"))
}

pub(crate) fn not_found_gate(id: &GateId) -> EngineError {
    EngineError::NotFound { what: "gate", id: id.to_string() }
}

fn closed_error(gate: &Gate) -> EngineError {
    EngineError::GateClosed {
        gate_id: gate.id.clone(),
        status: gate.status,
        resolved_by: gate.decision.as_ref().map(|d| d.decided_by.clone()),
        resolved_at: gate.closed_at,
    }
}

/// The most deciders (or escalation targets) one gate may name.
const MAX_NAMES: usize = 50;
/// The longest wait before an escalation.
const MAX_ESCALATE_AFTER_SECS: u64 = 366 * 24 * 3600;

/// Checks a list of reviewers (`alice`) and roles (`role:sre`).
fn check_names(field: &str, names: &[String]) -> Result<()> {
    if names.len() > MAX_NAMES {
        return Err(EngineError::invalid(field, format!("at most {MAX_NAMES} reviewers or roles")));
    }
    for (i, name) in names.iter().enumerate() {
        let name = name.trim();
        let bare = name.strip_prefix("role:").map(str::trim);
        if name.is_empty() || bare == Some("") || name.len() > 128 {
            return Err(EngineError::invalid(
                format!("{field}[{i}]"),
                "name a reviewer (`alice`) or a role (`role:sre`), at most 128 characters",
            ));
        }
    }
    Ok(())
}

/// The names as given, trimmed, each once.
fn names(list: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in list.iter().map(|n| n.trim().to_owned()) {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Whether `who` may decide `gate`: one of its deciders, and not the token
/// that opened it unless the server allows self-review.
fn check_decider(gate: &Gate, who: &Decider) -> Result<()> {
    if !gate.may_decide(who) {
        return Err(EngineError::NotADecider {
            gate_id: gate.id.clone(),
            who: who.name.clone(),
            deciders: gate.deciders.clone(),
        });
    }
    if who.opened(gate) && !who.self_review {
        return Err(EngineError::SelfDecision { gate_id: gate.id.clone() });
    }
    Ok(())
}

fn validate_new_gate(new: &NewGate) -> Result<()> {
    if new.text.trim().is_empty() {
        return Err(EngineError::invalid("text", "the question or action text must not be empty"));
    }
    if new.confidence.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err(EngineError::invalid("confidence", "must be from 0 to 1"));
    }
    if new.expires_in_secs == Some(0) {
        return Err(EngineError::invalid("expires_in_secs", "must be at least 1 second"));
    }
    for (field, secs) in [("expires_in_secs", new.expires_in_secs), ("escalate_after_secs", new.escalate_after_secs)] {
        if secs.is_some_and(|s| s > MAX_WAIT_SECS) {
            return Err(EngineError::invalid(field, format!("must be at most {MAX_WAIT_SECS} seconds (ten years)")));
        }
    }
    if let Some(q) = &new.quorum {
        if q.required == 0 || q.rejections_to_reject == 0 {
            return Err(EngineError::invalid("quorum", "required and rejections_to_reject must be at least 1"));
        }
    }
    validate_actions(new)?;
    if let Some(schema) = &new.response_schema {
        crate::form::check_schema(schema)?;
    }
    if let Some(schema) = &new.payload_schema {
        crate::form::check_payload_schema(schema)?;
    }
    if let Some(state) = &new.agent_state {
        let bytes = serde_json::to_vec(state).map(|b| b.len()).unwrap_or(usize::MAX);
        if bytes > MAX_AGENT_STATE_BYTES {
            return Err(EngineError::invalid(
                "agent_state",
                format!("must be at most {MAX_AGENT_STATE_BYTES} bytes of JSON, got {bytes}"),
            ));
        }
    }
    check_names("deciders", &new.deciders)?;
    check_names("escalate_to", &new.escalate_to)?;
    match (new.escalate_after_secs, new.expires_in_secs) {
        (None, _) if !new.escalate_to.is_empty() => {
            return Err(EngineError::invalid("escalate_to", "give escalate_after_secs: when to bring them in"));
        }
        (Some(0), _) => return Err(EngineError::invalid("escalate_after_secs", "must be at least 1 second")),
        (Some(after), Some(expires)) if after >= expires => {
            return Err(EngineError::invalid(
                "escalate_after_secs",
                format!("must come before the gate expires (expires_in_secs is {expires})"),
            ));
        }
        (Some(after), _) if after > MAX_ESCALATE_AFTER_SECS => {
            return Err(EngineError::invalid("escalate_after_secs", "must be at most a year"));
        }
        _ => {}
    }
    if new.idempotency_key.as_ref().is_some_and(|k| k.is_empty() || k.len() > 255) {
        return Err(EngineError::invalid("idempotency_key", "must be 1 to 255 characters"));
    }
    match &new.spec {
        GateSpec::QualityScore { required_score, .. } if !(1.0..=5.0).contains(required_score) => {
            Err(EngineError::invalid("required_score", format!("must be from 1 to 5, got {required_score}")))
        }
        GateSpec::InformationReview { confidence: Some(c), .. } if !(0.0..=1.0).contains(c) => {
            Err(EngineError::invalid("confidence", format!("must be from 0 to 1, got {c}")))
        }
        _ => Ok(()),
    }
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

/// Checks a decision against what the gate offers.
fn check_decision(gate: &Gate, input: &DecisionInput) -> Result<()> {
    if !gate.allowed_actions.contains(&input.action) {
        return Err(EngineError::ActionNotAllowed {
            gate_id: gate.id.clone(),
            action: input.action,
            allowed: gate.allowed_actions.clone(),
        });
    }
    let text_empty = input.text.as_deref().is_none_or(|t| t.trim().is_empty());
    match input.action {
        DecisionAction::Edit if input.payload.is_none() => {
            return Err(EngineError::invalid("payload", "an edit needs the edited payload"));
        }
        DecisionAction::Edit => {
            if let (Some(schema), Some(edited)) = (&gate.payload_schema, &input.payload) {
                crate::form::check_payload(schema, edited)?;
            }
        }
        DecisionAction::Respond if gate.response_schema.is_some() && input.response.is_none() => {
            return Err(EngineError::invalid("response", "this gate asks for its answer in a form: send `response`"));
        }
        DecisionAction::Respond if text_empty && input.response.is_none() => {
            return Err(EngineError::invalid("text", "a response needs its text"));
        }
        DecisionAction::NeedsRevision if text_empty && input.payload.is_none() => {
            return Err(EngineError::invalid("text", "asking for a revision needs feedback saying what to change"));
        }
        _ => {}
    }
    if let (GateSpec::QualityScore { required_score, .. }, Some(score)) = (&gate.spec, &input.score) {
        if input.action == DecisionAction::Approve && evaluate(score.score, *required_score) != ScoreVerdict::Passes {
            return Err(EngineError::invalid(
                "score",
                format!(
                    "score {} is below the required {required_score}; choose needs_revision or reject",
                    score.score
                ),
            ));
        }
    }
    if input.response.is_some() && input.action != DecisionAction::Respond {
        return Err(EngineError::invalid("response", "only a respond decision carries a response"));
    }
    if let (Some(schema), Some(response)) = (&gate.response_schema, &input.response) {
        crate::form::check_response(schema, response)?;
    }
    if gate.quorum.is_some() && !matches!(input.action, DecisionAction::Approve | DecisionAction::Reject) {
        return Err(EngineError::invalid("action", "a quorum gate takes approve or reject votes only"));
    }
    Ok(())
}

/// Logs an attempt on a closed gate and returns the conflict for the caller.
fn refuse(tx: &mut dyn WriteTx, gate: Gate, input: DecisionInput, by: &str, now: DateTime<Utc>) -> Result<Attempt> {
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

/// Counts one reviewer's vote; decides the gate when the quorum or the
/// rejection rule is met.
fn vote(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: DecisionInput,
    reviewer: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    if gate.votes.iter().any(|v| v.reviewer == reviewer) {
        return Err(EngineError::AlreadyVoted { gate_id: gate.id.clone(), reviewer: reviewer.to_owned() });
    }
    let quorum = gate.quorum.clone().unwrap_or(crate::gate::Quorum { required: 1, rejections_to_reject: 1 });
    let vote = Vote { reviewer: reviewer.to_owned(), action: input.action, reason: input.text.clone(), at: now };
    gate.votes.push(vote.clone());
    let count = |a: DecisionAction| gate.votes.iter().filter(|v| v.action == a).count() as u32;
    let (approvals, rejections) = (count(DecisionAction::Approve), count(DecisionAction::Reject));
    let voters = || gate.votes.iter().map(|v| v.reviewer.as_str()).collect::<Vec<_>>().join(", ");
    let outcome = if rejections >= quorum.rejections_to_reject {
        Some((DecisionAction::Reject, format!("{rejections} rejection(s) reject the gate (votes: {})", voters())))
    } else if approvals >= quorum.required {
        Some((
            DecisionAction::Approve,
            format!("quorum of {} approvals reached (votes: {})", quorum.required, voters()),
        ))
    } else {
        None
    };
    let run = load_run(tx, &gate.run_id)?;
    emit(tx, &run, reviewer, now, EventKind::VoteRecorded { gate_id: gate.id.clone(), vote })?;
    match outcome {
        Some((action, tally)) => {
            let text = match input.text {
                Some(t) if !t.trim().is_empty() => format!("{t}\n\n{tally}"),
                _ => tally,
            };
            let input = DecisionInput { action, text: Some(text), ..input };
            Ok(Attempt::Done(Box::new(decide_gate(tx, gate, input, reviewer, DecisionOrigin::Human, now)?)))
        }
        None => {
            if !tx.update_gate_if(&gate, GateStatus::Pending)? {
                return Err(closed_error(&gate));
            }
            Ok(Attempt::Done(Box::new(gate)))
        }
    }
}

/// Resolves a pending gate with a decision: the one conditional update,
/// the decision row, the event, the agent's rating and the run's status.
pub(crate) fn decide_gate(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: DecisionInput,
    by: &str,
    origin: DecisionOrigin,
    now: DateTime<Utc>,
) -> Result<Gate> {
    let diff = match (input.action, &input.payload) {
        (DecisionAction::Edit, Some(edited)) => {
            Some(diff_values(gate.payload.as_ref().unwrap_or(&serde_json::Value::Null), edited))
        }
        _ => None,
    };
    settle_open_actions(&mut gate, input.action, input.text.as_deref(), by, now);
    let decision = Decision {
        id: DecisionId::new(),
        gate_id: gate.id.clone(),
        run_id: gate.run_id.clone(),
        action: input.action,
        decided_by: by.to_owned(),
        origin: origin.clone(),
        text: input.text,
        payload: input.payload,
        diff,
        score: input.score.clone(),
        actions: action_decisions(&gate),
        response: input.response,
        option: input.option,
        decided_at: now,
        latency_ms: (now - gate.created_at).num_milliseconds().max(0),
        self_decided: input.self_decided,
    };
    gate.status = gate.status.transition(GateStatus::Resolved)?;
    gate.closed_at = Some(now);
    gate.decision = Some(decision.clone());
    if !tx.update_gate_if(&gate, GateStatus::Pending)? {
        let current = tx.gate(&gate.id)?.ok_or_else(|| not_found_gate(&gate.id))?;
        return Err(closed_error(&current));
    }
    tx.insert_decision(&decision)?;
    let mut run = load_run(tx, &gate.run_id)?;
    let edited_plan = match (gate.kind(), decision.action) {
        (GateKind::PlanReview, DecisionAction::Edit) => decision.payload.clone(),
        _ => None,
    };
    emit(tx, &run, by, now, EventKind::GateResolved { gate_id: gate.id.clone(), decision: Box::new(decision) })?;
    if let Some(edited) = edited_plan {
        // Modifying a plan under review makes the edited plan the run's plan.
        let plan: Plan = serde_json::from_value(edited)
            .map_err(|e| EngineError::invalid("payload", format!("a plan review's edit must be a whole plan: {e}")))?;
        apply_plan_op(tx, &run, &PlanOperation::Replace { plan }, by, now)?;
    }
    if origin == DecisionOrigin::Human {
        if input.action.judges_the_agent() {
            let mut rating = tx.rating(&gate.agent)?.unwrap_or_else(|| CapabilityRating::new(&gate.agent));
            rating.record_decision(input.action.counts_as_approval());
            tx.put_rating(&rating)?;
        }
        run.consecutive_agent_turns = 0;
        run.updated_at = now;
        tx.update_run(&run)?;
    }
    if let Some(score) = input.score {
        record_score(tx, &run, &gate.agent, Some(gate.id.clone()), score, by, now)?;
    }
    after_gate_closed(tx, &mut run, gate.mode, by, now)?;
    Ok(gate)
}

/// Checks a gate's timeout fallback: it needs an expiry, and approving
/// unanswered is never allowed for a gate or run that requires a human.
fn check_fallback(new: &NewGate, run: &Run, now: DateTime<Utc>) -> Result<()> {
    use crate::gate::TimeoutFallback;
    if new.on_timeout == TimeoutFallback::Expire {
        return Ok(());
    }
    if new.expiry(now).is_none() {
        return Err(EngineError::invalid(
            "on_timeout",
            format!("`{}` applies when the gate expires: give it expires_in_secs", new.on_timeout.as_str()),
        ));
    }
    if new.on_timeout == TimeoutFallback::Approve {
        if new.requires_human {
            return Err(EngineError::invalid(
                "on_timeout",
                "a gate that requires a human is never approved unanswered",
            ));
        }
        if run.hitl_config.run_policy == crate::policy::RunPolicy::RequireHuman {
            return Err(EngineError::invalid(
                "on_timeout",
                "this run's policy requires a human: its gates are never approved unanswered",
            ));
        }
    }
    Ok(())
}

/// The most preset options one gate may offer (one key each, 1 to 9).
const MAX_OPTIONS: usize = 9;

/// Checks a gate's preset options: at most nine, each named once, titled,
/// taking a decision the gate allows.
fn check_options(options: &[PresetOption], allowed: &[DecisionAction]) -> Result<()> {
    if options.len() > MAX_OPTIONS {
        return Err(EngineError::invalid("options", format!("at most {MAX_OPTIONS} options, got {}", options.len())));
    }
    let mut names = std::collections::HashSet::new();
    for (i, option) in options.iter().enumerate() {
        if option.name.trim().is_empty() || !names.insert(option.name.as_str()) {
            return Err(EngineError::invalid(format!("options[{i}].name"), "must be given, once per gate"));
        }
        if option.title.trim().is_empty() {
            return Err(EngineError::invalid(format!("options[{i}].title"), "must not be empty"));
        }
        if !allowed.contains(&option.action) {
            let names = allowed.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ");
            return Err(EngineError::invalid(
                format!("options[{i}].action"),
                format!("`{}` is not one of this gate's decisions ({names})", option.action.as_str()),
            ));
        }
    }
    Ok(())
}

/// A decision naming a preset option: the option's decision, and its text
/// when the reviewer typed none.
fn with_option(gate: &Gate, input: DecisionInput) -> Result<DecisionInput> {
    let Some(name) = input.option.as_deref() else { return Ok(input) };
    let Some(option) = gate.options.iter().find(|o| o.name == name) else {
        let known = gate.options.iter().map(|o| o.name.as_str()).collect::<Vec<_>>().join(", ");
        let known = if known.is_empty() { "it offers none".to_owned() } else { format!("it offers {known}") };
        return Err(EngineError::invalid("option", format!("gate {} has no option `{name}`; {known}", gate.id)));
    };
    if option.action != input.action {
        return Err(EngineError::invalid(
            "action",
            format!("option `{name}` takes `{}`, not `{}`", option.action.as_str(), input.action.as_str()),
        ));
    }
    let typed = input.text.as_deref().is_some_and(|t| !t.trim().is_empty());
    let text = if typed { input.text } else { Some(option.text.clone().unwrap_or_else(|| option.title.clone())) };
    Ok(DecisionInput { text, ..input })
}

/// The largest opaque state an agent may attach to a gate, in bytes of JSON.
const MAX_AGENT_STATE_BYTES: usize = 64 * 1024;

/// The most actions one gate may propose.
const MAX_ACTIONS: usize = 100;

/// Checks a gate's proposed actions: approval gates only, not with a
/// quorum, each named, ids unique, decisions each may take known.
fn validate_actions(new: &NewGate) -> Result<()> {
    if new.actions.is_empty() {
        return Ok(());
    }
    if new.spec.kind() != GateKind::Approval {
        return Err(EngineError::invalid("actions", "only approval gates propose several actions"));
    }
    if new.quorum.is_some() {
        return Err(EngineError::invalid("actions", "a gate of several actions cannot also need a quorum"));
    }
    if new.actions.len() > MAX_ACTIONS {
        return Err(EngineError::invalid(
            "actions",
            format!("at most {MAX_ACTIONS} actions, got {}", new.actions.len()),
        ));
    }
    let mut ids = std::collections::HashSet::new();
    for (i, action) in new.actions.iter().enumerate() {
        if action.name.trim().is_empty() {
            return Err(EngineError::invalid(format!("actions[{i}].name"), "must not be empty"));
        }
        if action.id.len() > 255 {
            return Err(EngineError::invalid(format!("actions[{i}].id"), "must be at most 255 characters"));
        }
        if !action.id.is_empty() && !ids.insert(action.id.as_str()) {
            return Err(EngineError::invalid(format!("actions[{i}].id"), format!("`{}` is used twice", action.id)));
        }
        if let Some(bad) = action.allowed_actions.iter().find(|a| !ProposedAction::DEFAULT_ACTIONS.contains(a)) {
            return Err(EngineError::invalid(
                format!("actions[{i}].allowed_actions"),
                format!("`{}` is not a decision on one action; use approve, edit, reject or respond", bad.as_str()),
            ));
        }
    }
    Ok(())
}

/// The gate's actions as stored: redacted, numbered where the agent gave
/// no id (skipping ids it gave), and undecided.
fn proposed_actions(actions: &[ProposedAction]) -> Vec<ProposedAction> {
    let taken: std::collections::HashSet<&str> = actions.iter().map(|a| a.id.as_str()).collect();
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

/// Every action's decision, in the gate's order (empty until all are decided).
fn action_decisions(gate: &Gate) -> Vec<ActionDecision> {
    gate.actions.iter().filter_map(|a| a.decision.clone()).collect()
}

/// Decides every action still open as the whole gate was decided: approve
/// approves them, reject rejects them with the reason; any other decision
/// on the whole gate leaves them as they are.
fn settle_open_actions(gate: &mut Gate, action: DecisionAction, text: Option<&str>, by: &str, now: DateTime<Utc>) {
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

/// Decides some or all of a gate's proposed actions. A bare approve or
/// reject decides all that are still open. The gate resolves once every
/// action is decided: approve when all were approved, reject when all were
/// rejected, edit (went ahead with changes) otherwise.
fn decide_actions(
    tx: &mut dyn WriteTx,
    mut gate: Gate,
    input: DecisionInput,
    reviewer: &str,
    now: DateTime<Utc>,
) -> Result<Attempt> {
    let choices = if input.actions.is_empty() {
        if !matches!(input.action, DecisionAction::Approve | DecisionAction::Reject) {
            return Err(EngineError::invalid(
                "actions",
                "this gate proposes several actions: decide each in `actions`, or approve or reject all that are open",
            ));
        }
        let text = input.text.clone().filter(|t| !t.trim().is_empty());
        gate.actions
            .iter()
            .filter(|a| a.decision.is_none())
            .map(|a| ActionChoice {
                id: a.id.clone(),
                action: input.action,
                name: None,
                args: None,
                text: text.clone(),
            })
            .collect()
    } else {
        input.actions.clone()
    };
    let mut seen = std::collections::HashSet::new();
    let mut taken = Vec::new();
    for (i, choice) in choices.into_iter().enumerate() {
        let field = |name: &str| format!("actions[{i}].{name}");
        if !seen.insert(choice.id.clone()) {
            return Err(EngineError::invalid(field("id"), format!("action `{}` is decided twice", choice.id)));
        }
        let Some(proposed) = gate.actions.iter_mut().find(|a| a.id == choice.id) else {
            let known = gate.actions.iter().map(|a| a.id.as_str()).collect::<Vec<_>>().join(", ");
            return Err(EngineError::invalid(
                field("id"),
                format!("no action `{}`; this gate's are {known}", choice.id),
            ));
        };
        if let Some(done) = &proposed.decision {
            return Err(EngineError::ActionDecided {
                gate_id: gate.id.clone(),
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
        taken.push(decision);
    }
    if taken.is_empty() {
        return Err(EngineError::invalid("actions", "no decision given"));
    }
    // Report them in the gate's order, whatever order they came in.
    let order = |id: &str| gate.actions.iter().position(|a| a.id == id).unwrap_or(usize::MAX);
    taken.sort_by_key(|d| order(&d.id));
    let run = load_run(tx, &gate.run_id)?;
    emit(tx, &run, reviewer, now, EventKind::ActionsDecided { gate_id: gate.id.clone(), decisions: taken })?;
    if gate.actions.iter().any(|a| a.decision.is_none()) {
        if !tx.update_gate_if(&gate, GateStatus::Pending)? {
            return Err(closed_error(&gate));
        }
        return Ok(Attempt::Done(Box::new(gate)));
    }
    let all =
        |action: DecisionAction| gate.actions.iter().all(|a| a.decision.as_ref().is_some_and(|d| d.action == action));
    let overall = if all(DecisionAction::Approve) {
        DecisionAction::Approve
    } else if all(DecisionAction::Reject) {
        DecisionAction::Reject
    } else {
        DecisionAction::Edit
    };
    let text = input.text.filter(|t| !t.trim().is_empty());
    let input = DecisionInput { text, ..DecisionInput::new(overall) };
    Ok(Attempt::Done(Box::new(decide_gate(tx, gate, input, reviewer, DecisionOrigin::Human, now)?)))
}
