//! The review checkpoints' flow: `RunInput → information review? → payload review →
//! call → response review? → result`, with an error/retry gate wherever a
//! provider step fails. The run's policy decides which gates wait for a
//! human (the engine applies it when each gate opens); each gate's
//! decision type and latency are noted on the run's timeline.

use gatehouse_engine::gate::GateContext;
use gatehouse_engine::{DecisionAction, DecisionOrigin, GateSpec, NewGate, PresetOption};
use gatehouse_providers::{AuditedResponse, Payload, ProviderError, ProviderResponse, Remedy, RunInput, Tool};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{decision_of, Driver, Halt, Record, Step};
use crate::information::{assess, Assessment};
use crate::injection::{inject, At};
use crate::spec::{known_tool, RunSpec};

/// The answer a run ends with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    /// The accepted text (the reviewer's, when edited).
    pub text: String,
    /// Whether a reviewer edited it.
    pub edited: bool,
    /// The tool that produced it.
    pub tool: String,
    /// The provider's answer it came from.
    pub response: ProviderResponse,
    /// Payload-to-response rounds it took.
    pub attempts: u32,
}

/// A call's outcome as journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Called {
    Answered { response: ProviderResponse },
    Failed { error: ProviderError },
}

/// The whole single-call flow.
pub(crate) async fn single(d: &mut Driver, spec: &RunSpec) -> Step<Value> {
    let mut input = spec.run_input();
    let confidence = information_review(d, spec, &mut input).await?;
    let mut attempt = 1;
    loop {
        let at = At { key: format!("inject:{attempt}"), next: format!("payload:{attempt}"), task: None };
        inject(d, spec.answer_template.as_deref(), &mut input, at).await?;
        let tool = d.tool(&input.tool)?;
        let payload = review_payload(d, &tool, &input, attempt, confidence).await?;
        let (response, payload) = call_until_answered(d, &tool, payload, &format!("call:{attempt}"), "call").await?;
        let audited = d.audit(&tool, &response);
        let key = format!("response:{attempt}");
        let gate = d.ask(&key, "response_review", response_gate(&tool, &audited, &payload, confidence)).await?;
        let decision = decision_of(&gate);
        let answer = |text: String, edited: bool| Answer {
            text,
            edited,
            tool: tool.name.clone(),
            response: response.clone(),
            attempts: attempt,
        };
        match decision.action {
            DecisionAction::Approve => return to_value(answer(audited.cleaned.clone(), false)),
            DecisionAction::Edit => {
                let text = edited_text(decision.payload.as_ref()).unwrap_or_else(|| audited.cleaned.clone());
                let edited = text != audited.cleaned;
                return to_value(answer(text, edited));
            }
            DecisionAction::Retry => {
                if let Some(changes) = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                    input.prompt = format!("{}\n\nChanges asked by the reviewer: {changes}", spec.prompt);
                }
                attempt += 1;
            }
            _ => {
                return Err(Halt::Cancel(rejected("response", decision.decided_by.as_str(), decision.text.as_deref())))
            }
        }
    }
}

fn to_value<T: Serialize>(value: T) -> Step<Value> {
    serde_json::to_value(value).map_err(|e| Halt::Fail(format!("the run's result cannot be recorded: {e}")))
}

/// Why a reviewer's no ended the run.
pub(crate) fn rejected(what: &str, by: &str, reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("the {what} was rejected by {by}: {reason}"),
        None => format!("the {what} was rejected by {by}"),
    }
}

/// The information step, and its review when it found concerns. The
/// reviewer proceeds, modifies the prompt, changes the model (tool), or
/// rejects the run. Returns the confidence the later gates carry for the
/// run's policy: the step's, or full once a person has vouched for the
/// request.
async fn information_review(d: &mut Driver, spec: &RunSpec, input: &mut RunInput) -> Step<f64> {
    let mut round = 1;
    let mut problem: Option<String> = None;
    loop {
        let key = format!("information:{round}");
        let snapshot = input.clone();
        let prepared = d.prepare(&snapshot);
        let tool = d.tool(&snapshot.tool)?;
        let report = prepared.as_ref().ok().map(|p| d.validate(&tool, p));
        let extra = problem.take();
        let assessment = d
            .step(&key, "information", || async move {
                let mut found = match (&prepared, &report) {
                    (Ok(payload), Some(report)) => assess(&snapshot, Ok((payload, report))),
                    (Err(e), _) => assess(&snapshot, Err(e)),
                    (Ok(_), None) => unreachable!("a prepared payload is always validated"),
                };
                if let Some(theirs) = &spec.assessment {
                    found = found.merged(theirs);
                }
                if let Some(extra) = extra {
                    found.reasons.insert(0, extra);
                }
                let content = information_summary(&found);
                Ok(Record::new(found, content))
            })
            .await?;
        if !assessment.has_concerns() {
            return Ok(assessment.confidence);
        }
        let gate = d.ask(&format!("{key}:review"), "information_review", information_gate(input, &assessment)).await?;
        let decision = decision_of(&gate);
        let vouched = if decision.origin == DecisionOrigin::Human { 1.0 } else { assessment.confidence };
        match decision.action {
            DecisionAction::Approve => return Ok(vouched),
            DecisionAction::Edit => {
                let edited = decision.payload.clone().unwrap_or(Value::Null);
                if let Some(prompt) = edited.get("prompt").and_then(Value::as_str).filter(|p| !p.trim().is_empty()) {
                    input.prompt = prompt.to_owned();
                }
                let model = edited.get("model").and_then(Value::as_str).map(str::trim).filter(|m| !m.is_empty());
                match model.map(|m| known_tool(&d.orchestrator().registry, m, "model")) {
                    Some(Ok(tool)) => input.tool = tool,
                    Some(Err(e)) => {
                        // Ask again, saying why the change did not take.
                        problem = Some(format!("The model was not changed: {}.", e.message));
                        round += 1;
                        continue;
                    }
                    None => {}
                }
                return Ok(vouched);
            }
            _ => return Err(Halt::Cancel(rejected("request", decision.decided_by.as_str(), decision.text.as_deref()))),
        }
    }
}

fn information_summary(a: &Assessment) -> String {
    let mut out = format!("Information check: confidence {:.0}%", a.confidence * 100.0);
    if a.reasons.is_empty() {
        out.push_str(", nothing to review.");
    } else {
        out.push('.');
        for reason in &a.reasons {
            out.push_str("\n- ");
            out.push_str(reason);
        }
    }
    out
}

fn information_gate(input: &RunInput, a: &Assessment) -> NewGate {
    let text = format!(
        "**Before running `{}`**, the information check found {}:\n\n{}\n\nProceed, modify the prompt, change the model, or reject.",
        input.tool,
        match a.reasons.len() {
            1 => "one concern".to_owned(),
            n => format!("{n} concerns"),
        },
        a.reasons.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
    );
    let mut gate = NewGate::new(
        GateSpec::InformationReview {
            confidence: Some(a.confidence),
            reasons: a.reasons.clone(),
            safety_flags: a.safety_flags.clone(),
            recommended_settings: Value::Object(a.recommended_settings.clone()),
        },
        text,
    );
    gate.payload = Some(json!({"prompt": input.prompt, "model": input.tool}));
    gate.confidence = Some(a.confidence);
    gate.safety_flags = a.safety_flags.clone();
    gate.context = context(input, "information_review");
    gate
}

fn context(input: &RunInput, step: &str) -> GateContext {
    let description: String = input.prompt.chars().take(500).collect();
    GateContext { task_id: None, task_description: Some(description), step: Some(step.to_owned()) }
}

/// Prepares the payload and has it reviewed (the payload review):
/// validation results, suggested fixes, the diff from the tool's example.
/// A payload failing validation becomes the error/retry gate: a human must
/// fix it, apply the suggestions, override validation, or cancel.
async fn review_payload(d: &mut Driver, tool: &Tool, input: &RunInput, attempt: u32, confidence: f64) -> Step<Payload> {
    let prepared = match d.prepare(input) {
        Ok(payload) => payload,
        // Nothing to show yet: the reviewer writes the payload from the example.
        Err(error) => {
            let example = Payload::from(tool.example_input.clone());
            recover_payload(d, tool, &error, example, &format!("payload:{attempt}:prepare")).await?
        }
    };
    let key = format!("payload:{attempt}");
    let shown = prepared.clone();
    let report = d.validate(tool, &prepared);
    let tool_name = tool.name.clone();
    let mut payload = d
        .step(&key, "payload", || async move {
            let content = format!("Prepared the payload for `{tool_name}`: {}.", report.summary());
            let call = json!({"tool_name": tool_name, "args": shown.to_value()});
            Ok(Record::new(shown, content).with("tool_call", call))
        })
        .await?;
    let mut round = 1;
    loop {
        let report = d.validate(tool, &payload);
        let gate_key = format!("{key}:review:{round}");
        let mut new = payload_gate(tool, input, &payload, &report);
        new.confidence = Some(confidence);
        let gate = d.ask(&gate_key, "payload_review", new).await?;
        let decision = decision_of(&gate);
        match (decision.action, decision.option.as_deref()) {
            (DecisionAction::Approve, Some("apply_suggestions")) => {
                for suggestion in &report.suggestions {
                    suggestion.apply(&mut payload);
                }
            }
            (DecisionAction::Approve, _) => return Ok(payload),
            (DecisionAction::Edit, _) => {
                let edited = decision.payload.clone().and_then(Payload::from_value);
                let Some(edited) = edited else {
                    return Err(Halt::Fail("an edited payload must be a JSON object".into()));
                };
                payload = edited;
                if d.validate(tool, &payload).valid {
                    return Ok(payload);
                }
            }
            _ => return Err(Halt::Cancel(rejected("payload", decision.decided_by.as_str(), decision.text.as_deref()))),
        }
        round += 1;
    }
}

fn payload_gate(
    tool: &Tool,
    input: &RunInput,
    payload: &Payload,
    report: &gatehouse_providers::ValidationReport,
) -> NewGate {
    let validation: Vec<String> = report.issues.iter().map(|i| format!("{}: {}", i.field, i.message)).collect();
    let suggestions: Vec<String> = report.suggestions.iter().map(|s| s.message.clone()).collect();
    let required_fields = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let text = if report.valid {
        format!("Send this payload to `{}`?", tool.name)
    } else {
        format!(
            "**The payload for `{}` fails validation**: {}.\n\nFix it, apply the suggested fixes, send it anyway, or cancel.",
            tool.name,
            report.summary()
        )
    };
    let mut gate = NewGate::new(GateSpec::PayloadReview { validation, suggestions, required_fields }, text);
    gate.payload = Some(payload.to_value());
    gate.payload_schema = Some(edits_are_objects());
    gate.example_input = Some(Value::Object(tool.example_input.clone()));
    gate.context = context(input, "payload_review");
    if !report.suggestions.is_empty() {
        gate.options.push(option("apply_suggestions", "Apply the suggested fixes", DecisionAction::Approve));
    }
    if !report.valid {
        gate.requires_human = true;
        gate.options.push(option("override_validation", "Send it anyway", DecisionAction::Approve));
        gate.options.push(option("cancel", "Cancel the run", DecisionAction::Reject));
    }
    gate
}

/// The payload schema of the orchestrator's payload gates: any object. The
/// tool's own schema is checked by its validation (which a reviewer may
/// override); this only makes the engine refuse, with a 422 to the
/// reviewer, an edit that is not a payload at all.
fn edits_are_objects() -> Value {
    json!({"type": "object"})
}

fn option(name: &str, title: &str, action: DecisionAction) -> PresetOption {
    PresetOption { name: name.into(), title: title.into(), description: None, action, text: None }
}

/// Calls until the provider answers: each failure is an error/retry gate
/// (fix the payload, retry, or cancel). Returns the answer and the payload
/// that got it. The call is recorded as `step`; a step that was not
/// proposed as a tool call beforehand (the payload step) reports it as one.
pub(crate) async fn call_until_answered(
    d: &mut Driver,
    tool: &Tool,
    mut payload: Payload,
    key: &str,
    step: &str,
) -> Step<(ProviderResponse, Payload)> {
    let proposed = step == "call";
    for failure in 1.. {
        let call_key = if failure == 1 { key.to_owned() } else { format!("{key}:retry:{}", failure - 1) };
        let (h, t, p) = (d.handle(), tool.clone(), payload.clone());
        let called = d
            .step(&call_key, step, || async move {
                let called = match h.call_provider(&t, &p).await? {
                    Ok(response) => Called::Answered { response },
                    Err(error) => Called::Failed { error },
                };
                let record = match &called {
                    Called::Answered { response } => Record::new(
                        called.clone(),
                        format!(
                            "`{}` answered in {} ({} request{}).",
                            t.name,
                            ms(response.latency_ms),
                            response.attempts,
                            if response.attempts == 1 { "" } else { "s" }
                        ),
                    ),
                    Called::Failed { error } => Record::new(called.clone(), format!("`{}` failed: {error}", t.name))
                        .with("error", json!({"code": error_code(error), "message": error.to_string()})),
                };
                Ok(if proposed { record } else { record.with("tool_call", json!({"tool_name": t.name})) })
            })
            .await?;
        match called {
            Called::Answered { response } => return Ok((response, payload)),
            Called::Failed { error } => {
                payload = recover_payload(d, tool, &error, payload, &format!("{call_key}:error")).await?;
            }
        }
    }
    unreachable!("the loop returns or halts")
}

fn ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn error_code(error: &ProviderError) -> String {
    serde_json::to_value(error)
        .ok()
        .and_then(|v| v.get("code").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "provider_error".into())
}

/// The error/retry gate: the failure and what can be done about it
/// (its remedies). Returns the payload to try next: edited (fix payload) or
/// unchanged (retry, override validation); cancelling ends the run.
pub(crate) async fn recover_payload(
    d: &mut Driver,
    tool: &Tool,
    error: &ProviderError,
    payload: Payload,
    key: &str,
) -> Step<Payload> {
    let remedies = error.remedies();
    let report = match error {
        ProviderError::InvalidPayload { report, .. } => Some(report),
        _ => None,
    };
    let mut gate = NewGate::new(
        GateSpec::PayloadReview {
            validation: vec![error.to_string()],
            suggestions: report.map(|r| r.suggestions.iter().map(|s| s.message.clone()).collect()).unwrap_or_default(),
            required_fields: Vec::new(),
        },
        format!(
            "**`{}` failed**: {error}\n\n{}",
            tool.name,
            remedies.iter().map(|r| remedy_text(*r)).collect::<Vec<_>>().join(" ")
        ),
    );
    gate.payload = Some(payload.to_value());
    gate.payload_schema = Some(edits_are_objects());
    gate.example_input = Some(Value::Object(tool.example_input.clone()));
    gate.requires_human = true;
    gate.context = GateContext { task_id: None, task_description: None, step: Some("error".into()) };
    let mut allowed = Vec::new();
    for remedy in remedies {
        let (action, name, title) = match remedy {
            Remedy::FixPayload => (DecisionAction::Edit, None, ""),
            Remedy::OverrideValidation => (DecisionAction::Approve, Some("override_validation"), "Send it anyway"),
            Remedy::Retry => (DecisionAction::Approve, Some("retry"), "Retry the call"),
            Remedy::Cancel => (DecisionAction::Reject, Some("cancel"), "Cancel the run"),
        };
        if !allowed.contains(&action) {
            allowed.push(action);
        }
        if let Some(name) = name {
            gate.options.push(option(name, title, action));
        }
    }
    gate.allowed_actions = allowed;
    let gate = d.ask(key, "error", gate).await?;
    let decision = decision_of(&gate);
    match decision.action {
        DecisionAction::Edit => decision
            .payload
            .clone()
            .and_then(Payload::from_value)
            .ok_or_else(|| Halt::Fail("an edited payload must be a JSON object".into())),
        DecisionAction::Approve
            if !remedies.contains(&Remedy::Retry) && !remedies.contains(&Remedy::OverrideValidation) =>
        {
            Err(Halt::Fail(format!("`{}` cannot go on after: {error}", tool.name)))
        }
        DecisionAction::Approve => Ok(payload),
        _ => Err(Halt::Cancel(format!(
            "cancelled by {} after `{}` failed{}",
            decision.decided_by,
            tool.name,
            decision.text.as_deref().map(|t| format!(": {t}")).unwrap_or_default()
        ))),
    }
}

fn remedy_text(remedy: Remedy) -> &'static str {
    match remedy {
        Remedy::FixPayload => "Fix the payload and approve it to call again.",
        Remedy::OverrideValidation => "Send it anyway to skip validation.",
        Remedy::Retry => "Retry to call again unchanged.",
        Remedy::Cancel => "Cancel to end the run.",
    }
}

pub(crate) fn response_gate(tool: &Tool, audited: &AuditedResponse, payload: &Payload, confidence: f64) -> NewGate {
    let q = &audited.quality;
    let mut indicators = Vec::new();
    if q.empty {
        indicators.push("empty answer".to_owned());
    }
    if q.truncated {
        indicators.push("cut short by the token limit".to_owned());
    }
    if q.refusal {
        indicators.push("the model declined".to_owned());
    }
    if q.reasoning_removed {
        indicators.push("reasoning removed".to_owned());
    }
    indicators.push(format!("{} words", q.words));
    indicators.extend(audited.safety_flags.iter().map(|f| format!("{}: {}", f.flag.as_str(), f.detail)));
    let mut flags: Vec<String> = Vec::new();
    for f in &audited.safety_flags {
        if !flags.iter().any(|x| x == f.flag.as_str()) {
            flags.push(f.flag.as_str().to_owned());
        }
    }
    let summary = format!("Review the answer from `{}`: accept it, edit the text, or retry with changes.", tool.name);
    let mut gate = NewGate::request_review(&audited.cleaned, Some(&audited.raw), &indicators, Some(&summary));
    gate.safety_flags = flags;
    gate.confidence = Some(confidence);
    gate.context = GateContext {
        task_id: None,
        task_description: payload.get(&tool.prompt_field).and_then(Value::as_str).map(str::to_owned),
        step: Some("response_review".into()),
    };
    gate
}

pub(crate) fn edited_text(payload: Option<&Value>) -> Option<String> {
    match payload? {
        Value::String(s) => Some(s.clone()),
        other => other.get("audited").and_then(Value::as_str).map(str::to_owned),
    }
}
