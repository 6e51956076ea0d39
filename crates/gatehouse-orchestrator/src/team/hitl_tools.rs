//! The human-in-the-loop tool of team agents:
//! `ask_human(question, options?, timeout_secs?, escalation?)` opens a
//! question gate (the engine's `NewGate::ask_human`) under
//! `team:N:tool:I:question` and the agent waits for a person's answer,
//! which comes back as the tool's answer. The timeout is the gate's expiry
//! (`expires_in_secs`; questions otherwise expire after a day) with the
//! engine's `reject` fallback, so a question nobody answered in time is
//! closed by the system and the agent told so, and the run goes on (a
//! plain expiry would fail it). An escalation (`{"after_secs", "to"}`) is
//! the gate's own (`escalate_after_secs`, `escalate_to`): its priority
//! rises and the people named may answer too.
//!
//! Nothing here can weaken a review: a question passes no action, and its
//! timeout never approves anything.

use gatehouse_engine::{DecisionAction, DecisionOrigin, NewGate, TimeoutFallback};
use serde_json::{json, Value};

use crate::driver::{Driver, Record, Step};

use super::tools::{text_arg, ToolCall};
use super::TeamAgent;

/// The longest an agent may give a person to answer: 30 days.
pub const MAX_TIMEOUT_SECS: u64 = 30 * 24 * 60 * 60;
/// The most suggested answers (a reviewer picks one with a key, 1 to 9).
const MAX_OPTIONS: usize = 9;
/// The most people or roles an escalation brings in.
const MAX_ESCALATE_TO: usize = 10;

/// What an `ask_human` call asks, checked.
#[derive(Debug, PartialEq)]
struct Question {
    question: String,
    options: Vec<String>,
    timeout_secs: Option<u64>,
    escalate_after_secs: Option<u64>,
    escalate_to: Vec<String>,
}

/// `ask_human`: the person's answer, or why there is none, for the agent.
pub(crate) async fn ask_human(d: &mut Driver, agent: &TeamAgent, call: &ToolCall, key: &str) -> Step<String> {
    let answer = match read(&call.args) {
        Err(problem) => format!("ask_human: {problem}"),
        Ok(_) if d.journaled(key) => String::new(),
        Ok(q) => {
            let context = format!("Asked by **{}** ({}), an agent of this team run.", agent.name, agent.role);
            let mut gate = NewGate::ask_human(&q.question, Some(&context), &q.options);
            gate.expires_in_secs = q.timeout_secs;
            gate.on_timeout = TimeoutFallback::Reject;
            gate.escalate_after_secs = q.escalate_after_secs;
            gate.escalate_to = q.escalate_to.clone();
            match d.ask_or_expired(&format!("{key}:question"), "ask_human", gate).await? {
                None => format!(
                    "No one answered your question within {} seconds.",
                    q.timeout_secs.map_or("the default time".to_owned(), |s| s.to_string())
                ),
                Some(gate) => match gate.decision.as_ref() {
                    Some(decision) => answered(decision),
                    None => "The question closed without an answer.".to_owned(),
                },
            }
        }
    };
    let meta = json!({"tool_name": call.name, "args": call.args});
    d.step(key, "tool_call", || async move {
        let content = format!("**{}** called `ask_human`: {answer}", agent.name);
        Ok(Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name)))
    })
    .await
}

/// A person's decision on the question, worded for the agent.
fn answered(decision: &gatehouse_engine::Decision) -> String {
    let by = &decision.decided_by;
    if let DecisionOrigin::System { reason } = &decision.origin {
        return format!("No one answered your question in time ({reason}).");
    }
    let text = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let said = text
        .map(str::to_owned)
        .or_else(|| decision.option.clone())
        .or_else(|| decision.response.as_ref().map(Value::to_string));
    match (decision.action, said) {
        (DecisionAction::Reject, Some(why)) => format!("{by} declined to answer: {why}"),
        (DecisionAction::Reject, None) => format!("{by} declined to answer."),
        (_, Some(said)) => format!("{by} answered: {said}"),
        (action, None) => format!("{by} decided `{}` without a word.", json!(action).as_str().unwrap_or("?")),
    }
}

/// Reads and checks the call's arguments (worded for the model).
fn read(args: &Value) -> Result<Question, String> {
    let question = text_arg(args, "question").ok_or("`question` is required: ask something")?.to_owned();
    let options = match args.get("options") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() <= MAX_OPTIONS => items
            .iter()
            .map(|o| o.as_str().map(|s| s.trim().to_owned()).ok_or("`options` must be strings"))
            .collect::<Result<Vec<_>, _>>()?,
        Some(Value::Array(_)) => return Err(format!("`options` holds at most {MAX_OPTIONS} answers")),
        Some(_) => return Err("`options` must be a list of suggested answers".into()),
    };
    let timeout_secs = match args.get("timeout_secs") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(s) if (1..=MAX_TIMEOUT_SECS).contains(&s) => Some(s),
            _ => return Err(format!("`timeout_secs` must be a whole number of seconds, 1 to {MAX_TIMEOUT_SECS}")),
        },
    };
    let (escalate_after_secs, escalate_to) = escalation(args.get("escalation").unwrap_or(&Value::Null), timeout_secs)?;
    Ok(Question { question, options, timeout_secs, escalate_after_secs, escalate_to })
}

/// `escalation`: `{"after_secs": N, "to": ["alice", "role:sre"]}`, or only
/// whom to bring in (a name or a list), halfway to the timeout (or after
/// an hour without one).
fn escalation(value: &Value, timeout: Option<u64>) -> Result<(Option<u64>, Vec<String>), String> {
    let (after, to) = match value {
        Value::Null => return Ok((None, Vec::new())),
        Value::Object(o) => (o.get("after_secs").cloned().unwrap_or(Value::Null), o.get("to").cloned()),
        other => (Value::Null, Some(other.clone())),
    };
    let to: Vec<String> = match to {
        Some(Value::String(one)) => vec![one],
        Some(Value::Array(many)) => many
            .iter()
            .map(|n| n.as_str().map(str::to_owned).ok_or("`escalation.to` must name people or roles"))
            .collect::<Result<_, _>>()?,
        _ => return Err("`escalation.to` must name a person (`alice`) or a role (`role:sre`), or a list".into()),
    };
    let to: Vec<String> = to.iter().map(|n| n.trim().to_owned()).collect();
    if to.is_empty() || to.len() > MAX_ESCALATE_TO {
        return Err(format!("`escalation.to` names 1 to {MAX_ESCALATE_TO} people or roles"));
    }
    if to.iter().any(|n| n.is_empty() || n.len() > 128 || n.strip_prefix("role:").is_some_and(|r| r.trim().is_empty()))
    {
        return Err("`escalation.to`: each is a person (`alice`) or a role (`role:sre`), at most 128 characters".into());
    }
    let after = match after {
        Value::Null => timeout.map_or(3600, |t| (t / 2).max(1)),
        v => v.as_u64().filter(|s| *s >= 1).ok_or("`escalation.after_secs` must be a whole number of seconds")?,
    };
    if timeout.is_some_and(|t| after >= t) {
        return Err("`escalation.after_secs` must come before `timeout_secs`".into());
    }
    Ok((Some(after), to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_reads_its_options_timeout_and_escalation() {
        let q = read(&json!({"question": " Which region? ", "options": ["eu", "us"], "timeout_secs": 600,
            "escalation": {"to": ["role:sre"]}}))
        .unwrap();
        assert_eq!(
            q,
            Question {
                question: "Which region?".into(),
                options: vec!["eu".into(), "us".into()],
                timeout_secs: Some(600),
                escalate_after_secs: Some(300),
                escalate_to: vec!["role:sre".into()],
            }
        );
        let q = read(&json!({"question": "q", "escalation": "alice"})).unwrap();
        assert_eq!((q.escalate_after_secs, q.escalate_to), (Some(3600), vec!["alice".to_owned()]));
    }

    #[test]
    fn bad_arguments_are_answered_naming_the_argument() {
        let err = |v: Value| read(&v).unwrap_err();
        assert!(err(json!({})).contains("`question`"));
        assert!(err(json!({"question": "q", "timeout_secs": 0})).contains("`timeout_secs`"));
        assert!(err(json!({"question": "q", "options": [1]})).contains("`options`"));
        assert!(err(json!({"question": "q", "timeout_secs": 60, "escalation": {"after_secs": 60, "to": "a"}}))
            .contains("before `timeout_secs`"));
        assert!(err(json!({"question": "q", "escalation": {"to": []}})).contains("1 to 10"));
        assert!(err(json!({"question": "q", "escalation": {"to": ["role: "]}})).contains("a role"));
    }
}
