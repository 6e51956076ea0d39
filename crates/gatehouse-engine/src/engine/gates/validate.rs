//! The checks on a gate before it opens (its text, limits, deciders,
//! escalation, options, timeout fallback, proposed actions, schemas) and
//! on a decision before it is taken (allowed by the gate, complete, within
//! its forms, by one of its deciders). Nothing here touches the store.

use chrono::{DateTime, Utc};

use crate::decision::{DecisionAction, DecisionInput};
use crate::error::{EngineError, Result};
use crate::gate::{Decider, Gate, GateKind, GateSpec, NewGate, PresetOption, ProposedAction, MAX_WAIT_SECS};
use crate::run::Run;
use crate::scoring::{evaluate, ScoreVerdict};

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
pub(super) fn names(list: &[String]) -> Vec<String> {
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
pub(super) fn check_decider(gate: &Gate, who: &Decider) -> Result<()> {
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

pub(super) fn validate_new_gate(new: &NewGate) -> Result<()> {
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
    if new.workflow_node_id.as_ref().is_some_and(|n| n.trim().is_empty() || n.len() > 200) {
        return Err(EngineError::invalid("workflow_node_id", "must be 1 to 200 characters"));
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

/// Checks a decision against what the gate offers.
pub(super) fn check_decision(gate: &Gate, input: &DecisionInput) -> Result<()> {
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

/// Checks a gate's timeout fallback: it needs an expiry, and approving
/// unanswered is never allowed for a gate or run that requires a human.
pub(super) fn check_fallback(new: &NewGate, run: &Run, now: DateTime<Utc>) -> Result<()> {
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
pub(super) fn check_options(options: &[PresetOption], allowed: &[DecisionAction]) -> Result<()> {
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
pub(super) fn with_option(gate: &Gate, input: DecisionInput) -> Result<DecisionInput> {
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
