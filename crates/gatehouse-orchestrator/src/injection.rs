//! Answer injection: a blocker's answer goes into the model's next prompt.
//! Before each payload-to-response attempt, and before each task of an
//! approved plan, the driver waits while the run has a blocker open that
//! blocks it (a sync question gate: someone asked a person something the
//! task depends on), then appends every answered blocker (for a plan task,
//! only those whose `context.task_id` is that task: an answer does not
//! spill into other tasks) to the prompt through a visible template, `run_input.answer_template`,
//! or [`DEFAULT_TEMPLATE`]. What was injected is journaled as one turn, so
//! the reviewer sees it on the timeline and a restarted driver injects the
//! same text again. A released blocker (async now) is not waited for; its
//! answer is injected once it comes. Rejected or withdrawn blockers inject nothing.

use gatehouse_engine::{DecisionAction, Gate, GateFilter, GateKind, GateStatus};
use gatehouse_providers::RunInput;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{Driver, Record, Step};

/// The text each answered blocker adds to the prompt, unless the run input
/// gives its own `answer_template`: `{question}`, `{answer}` and
/// `{answered_by}` are filled in.
pub const DEFAULT_TEMPLATE: &str =
    "Previous blocker question: {question}\nUser answer: {answer}\nContinue task execution with this answer.";

/// The longest template accepted.
pub const MAX_TEMPLATE: usize = 4_000;

/// One answer put into the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Injected {
    /// The blocker it answers.
    pub gate_id: String,
    /// The text added to the prompt.
    pub text: String,
}

/// Checks a run input's `answer_template`: a string, at most
/// [`MAX_TEMPLATE`] characters, with `{answer}` in it; the message when not.
pub fn check_template(template: &Value) -> Result<Option<String>, String> {
    match template {
        Value::Null => Ok(None),
        Value::String(t) if t.chars().count() > MAX_TEMPLATE => {
            Err(format!("is longer than {MAX_TEMPLATE} characters"))
        }
        Value::String(t) if !t.contains("{answer}") => {
            Err("must contain {answer}; it may also use {question} and {answered_by}".to_owned())
        }
        Value::String(t) => Ok(Some(t.clone())),
        _ => Err("must be a string".to_owned()),
    }
}

/// Fills `template` with a blocker's question, answer and who answered.
pub fn render(template: &str, question: &str, answer: &str, answered_by: &str) -> String {
    // One pass, so an answer holding `{question}` stays as typed.
    let mut out = String::with_capacity(template.len() + question.len() + answer.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (value, len) = [("{question}", question), ("{answer}", answer), ("{answered_by}", answered_by)]
            .into_iter()
            .find(|(name, _)| tail.starts_with(name))
            .map_or(("{", 1), |(name, value)| (value, name.len()));
        out.push_str(value);
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// Where answers go: the journal key of the injection, the key of the step
/// that follows it (once that is journaled, the point has passed), and the
/// plan task it is for, if any (then only that task's blockers count: an
/// answer for one task does not reach another's prompt).
pub(crate) struct At<'a> {
    pub key: String,
    pub next: String,
    pub task: Option<&'a str>,
}

/// Before a model request: waits for the run's open sync blockers, then
/// appends each answered blocker the prompt does not hold yet; journaled
/// under `at.key` when there was something to inject.
pub(crate) async fn inject(d: &mut Driver, template: Option<&str>, input: &mut RunInput, at: At<'_>) -> Step<()> {
    let key = at.key;
    // Past this point already (a restart): the request's prompt is what was journaled.
    if !d.journaled(&key) && d.journaled(&at.next) {
        return Ok(());
    }
    let run_id = d.run_id.clone();
    let blockers = GateFilter { run_id: Some(run_id), kind: Some(GateKind::Question), ..GateFilter::default() };
    let answered = {
        let filter = blockers.clone();
        d.wait_for(move |e| {
            let gates = e.gates(&filter)?;
            let waiting = gates.iter().any(|g| g.status == GateStatus::Pending && g.released.is_none() && is_sync(g));
            Ok((!waiting).then_some(gates))
        })
        .await?
    };
    let template = template.unwrap_or(DEFAULT_TEMPLATE).to_owned();
    let task = at.task.map(str::to_owned);
    let fresh: Vec<Injected> = answered
        .iter()
        .filter(|g| task.is_none() || g.context.task_id == task)
        .filter_map(|g| answer_of(g).map(|(answer, by)| (g, answer, by)))
        .map(|(g, answer, by)| Injected { gate_id: g.id.to_string(), text: render(&template, &g.text, &answer, &by) })
        .filter(|i| !input.prompt.contains(&i.text))
        .collect();
    if fresh.is_empty() && !d.journaled(&key) {
        return Ok(());
    }
    let injected = d
        .step(&key, "answer_injection", || async move {
            let shown = fresh.iter().map(|i| format!("> {}", i.text.replace('\n', "\n> "))).collect::<Vec<_>>();
            let content = format!("Injected into the prompt (answers to blockers):\n\n{}", shown.join("\n\n"));
            let gates: Vec<&str> = fresh.iter().map(|i| i.gate_id.as_str()).collect();
            Ok(Record::new(fresh.clone(), content).with("injected", json!({"gates": gates})))
        })
        .await?;
    for i in injected {
        if !input.prompt.contains(&i.text) {
            input.prompt = format!("{}\n\n{}", input.prompt, i.text);
        }
    }
    Ok(())
}

fn is_sync(gate: &Gate) -> bool {
    gate.mode == gatehouse_engine::BlockingMode::Sync
}

/// A resolved blocker's answer and who gave it; none for anything but an answer.
fn answer_of(gate: &Gate) -> Option<(String, String)> {
    let decision = gate.decision.as_ref().filter(|d| d.action == DecisionAction::Respond)?;
    let text = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned);
    let answer = text.or_else(|| decision.response.as_ref().map(Value::to_string))?;
    Some((answer, decision.decided_by.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_filled_once_and_an_answer_is_kept_as_typed() {
        let text = render(DEFAULT_TEMPLATE, "Which audience?", "Developers {question}", "alice");
        assert_eq!(
            text,
            "Previous blocker question: Which audience?\nUser answer: Developers {question}\nContinue task execution with this answer."
        );
        assert_eq!(render("{answered_by} said {answer} {x}", "q", "a", "bob"), "bob said a {x}");
    }

    #[test]
    fn a_template_must_carry_the_answer() {
        assert_eq!(
            check_template(&json!("Q: {question}")).unwrap_err(),
            "must contain {answer}; it may also use {question} and {answered_by}"
        );
        assert_eq!(check_template(&json!(3)).unwrap_err(), "must be a string");
        assert_eq!(check_template(&json!("A: {answer}")).unwrap(), Some("A: {answer}".to_owned()));
        assert_eq!(check_template(&Value::Null).unwrap(), None);
    }
}
