//! The gates the agent tools open, built once: one constructor per tool
//! (`request_approval`, `escalate_to_human`, `ask_human`,
//! `request_feedback`, `request_review`, `request_permission`,
//! `plan_propose`), each with the one text a reviewer reads for it. The HTTP
//! tools, the MCP tools and the orchestrator call these; they add only what
//! the call itself sets (urgency, timeout, mode, idempotency key).
//!
//! Callers check that the required text is there (each names the field its
//! own way); the constructors trim what they are given.

use serde_json::{json, Map, Value};

use crate::decision::DecisionAction;
use crate::gate::{BlockingMode, GateSpec, NewGate};
use crate::plan::Plan;

/// Markdown for a list of strings, one numbered line each.
fn numbered(items: &[String]) -> String {
    items.iter().enumerate().map(|(i, item)| format!("{}. {item}\n", i + 1)).collect()
}

/// The non-empty items, trimmed.
fn trimmed(items: &[String]) -> Vec<String> {
    items.iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// Some trimmed text, unless there is none.
fn given(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

impl NewGate {
    /// `request_approval`: approve `action` before the agent takes it. The
    /// text names the action, with the agent's `reason` below it; `context`
    /// is the payload the reviewer may edit. Sync.
    pub fn request_approval(action: &str, reason: Option<&str>, context: Option<Value>) -> Self {
        let action = action.trim();
        let mut text = format!("Approve: **{action}**");
        if let Some(reason) = given(reason) {
            text.push_str(&format!("\n\n{reason}"));
        }
        let mut gate = Self::new(GateSpec::Approval { action: action.to_owned() }, text);
        gate.payload = context;
        gate
    }

    /// `escalate_to_human`: an issue the agent cannot resolve, naming the
    /// expertise it needs; a question the human answers in free text. Sync.
    pub fn escalate_to_human(issue: &str, required_expertise: &[String], context: Option<Value>) -> Self {
        let expertise = trimmed(required_expertise);
        let mut text = format!("**Escalated:** {}", issue.trim());
        if !expertise.is_empty() {
            text.push_str(&format!("\n\n**Required expertise:** {}", expertise.join(", ")));
        }
        let mut gate = Self::question(text);
        gate.payload = Some(json!({ "required_expertise": expertise, "context": context }));
        gate
    }

    /// `ask_human`: a question the agent is blocked on, with its context and
    /// suggested answers (the payload's `options`, when there are any). Sync.
    pub fn ask_human(question: &str, context: Option<&str>, options: &[String]) -> Self {
        let options = trimmed(options);
        let mut text = question.trim().to_owned();
        if let Some(context) = given(context) {
            text.push_str(&format!("\n\n{context}"));
        }
        if !options.is_empty() {
            text.push_str(&format!("\n\n**Suggested answers:**\n{}", numbered(&options)));
        }
        let mut gate = Self::question(text);
        if !options.is_empty() {
            gate.payload = Some(json!({ "options": options }));
        }
        gate
    }

    /// `request_feedback`: feedback on an artifact, the questions listed
    /// above it. Async: the agent carries on unless its call asks to wait.
    pub fn request_feedback(artifact: &str, questions: &[String]) -> Self {
        let artifact = artifact.trim();
        let questions = trimmed(questions);
        let asked = if questions.is_empty() {
            "What should change in this artifact?\n".to_owned()
        } else {
            numbered(&questions)
        };
        let mut gate = Self::question(format!("**Feedback requested**\n\n{asked}\n---\n\n{artifact}"));
        gate.payload = Some(json!({ "artifact": artifact, "questions": questions }));
        gate.mode = BlockingMode::Async;
        gate
    }

    /// `request_review`: output to review before it is delivered. `output`
    /// is what would be delivered (the payload's `audited`, which an edit
    /// replaces), `original` the text it came from when it was cleaned,
    /// `indicators` what the reviewer should look at, `summary` the text
    /// (by default, asking for the review). Sync.
    pub fn request_review(output: &str, original: Option<&str>, indicators: &[String], summary: Option<&str>) -> Self {
        let text = given(summary).unwrap_or("Review this output before it is delivered.");
        let spec = GateSpec::ResponseReview {
            raw: original.unwrap_or(output).to_owned(),
            audited: output.to_owned(),
            indicators: trimmed(indicators),
        };
        let mut gate = Self::new(spec, text);
        gate.payload = Some(json!({ "audited": output }));
        gate
    }

    /// `request_permission`: a coding assistant's permission prompt, `client`
    /// asking to use `tool` with `input` (the payload, which the reviewer may
    /// edit). Approve, edit or reject only. Sync.
    pub fn request_permission(client: &str, tool: &str, input: &Map<String, Value>) -> Self {
        let mut text = format!("**{client}** asks permission to use `{tool}`.");
        // The input's telling fields, so the reviewer need not open the payload.
        for key in ["command", "file_path", "path", "url", "description"] {
            if let Some(value) = input.get(key).and_then(Value::as_str).filter(|v| !v.trim().is_empty()) {
                let value: String = value.chars().take(500).collect();
                text.push_str(&format!("\n\n**{key}:**\n\n```\n{value}\n```"));
            }
        }
        let mut gate = Self::new(GateSpec::Approval { action: tool.to_owned() }, text);
        gate.payload = Some(Value::Object(input.clone()));
        gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Edit, DecisionAction::Reject];
        gate
    }

    /// `plan_propose`: review `plan` (the run's plan at `revision`, in review
    /// round `round`). The text lists its tasks and their order, with the
    /// proposer's `note` above them; the payload is the plan, which an edit
    /// replaces. Sync.
    pub fn plan_propose(plan: &Plan, revision: Option<u32>, round: u32, note: Option<&str>) -> Self {
        let mut text = match revision {
            Some(revision) => format!("**Review the plan** (revision {revision}, round {round})\n\n"),
            None => format!("**Review the plan** (round {round})\n\n"),
        };
        if let Some(note) = given(note) {
            text.push_str(&format!("{note}\n\n"));
        }
        for task in &plan.tasks {
            let after = if task.dependencies.is_empty() {
                String::new()
            } else {
                format!(" (after {})", task.dependencies.join(", "))
            };
            text.push_str(&format!("- `{}` {}{after}\n", task.task_id, task.description));
        }
        let mut gate = Self::new(GateSpec::PlanReview { plan_revision: revision, round }, text);
        gate.payload = serde_json::to_value(plan).ok();
        gate
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plan::PlanTask;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn an_approval_names_the_trimmed_action_above_the_reason() {
        let gate = NewGate::request_approval(" deploy 42 ", Some(" prod is quiet "), Some(json!({"build": 42})));
        assert_eq!(gate.spec, GateSpec::Approval { action: "deploy 42".into() });
        assert_eq!(gate.text, "Approve: **deploy 42**\n\nprod is quiet");
        assert_eq!(gate.payload, Some(json!({"build": 42})));
        assert_eq!(gate.mode, BlockingMode::Sync);
        assert_eq!(NewGate::request_approval("deploy", Some("  "), None).text, "Approve: **deploy**");
    }

    #[test]
    fn an_escalation_lists_the_expertise_given() {
        let gate = NewGate::escalate_to_human(" replica lags ", &strings(&["postgres", " ", "replication "]), None);
        assert_eq!(gate.text, "**Escalated:** replica lags\n\n**Required expertise:** postgres, replication");
        assert_eq!(gate.payload, Some(json!({"required_expertise": ["postgres", "replication"], "context": null})));
        assert_eq!(NewGate::escalate_to_human("stuck", &[], None).text, "**Escalated:** stuck");
    }

    #[test]
    fn a_question_suggests_its_answers_only_when_there_are_some() {
        let gate = NewGate::ask_human("Which region?", Some("EU customers only"), &strings(&["eu-west-1", ""]));
        assert_eq!(gate.text, "Which region?\n\nEU customers only\n\n**Suggested answers:**\n1. eu-west-1\n");
        assert_eq!(gate.payload, Some(json!({"options": ["eu-west-1"]})));
        assert_eq!(NewGate::ask_human("Which region?", None, &[]).payload, None);
    }

    #[test]
    fn feedback_is_async_and_asks_a_default_question_when_none_is_given() {
        let gate = NewGate::request_feedback("\n## Notes\n", &[]);
        assert_eq!(gate.mode, BlockingMode::Async);
        assert_eq!(gate.text, "**Feedback requested**\n\nWhat should change in this artifact?\n\n---\n\n## Notes");
        assert_eq!(gate.payload, Some(json!({"artifact": "## Notes", "questions": []})));
        let asked = NewGate::request_feedback("draft", &strings(&["Tone?", "Missing?"]));
        assert!(asked.text.contains("1. Tone?\n2. Missing?\n"), "{}", asked.text);
    }

    #[test]
    fn an_output_review_keeps_the_original_and_defaults_its_text() {
        let gate = NewGate::request_review("clean", Some("raw"), &strings(&["12 words"]), None);
        assert_eq!(
            gate.spec,
            GateSpec::ResponseReview { raw: "raw".into(), audited: "clean".into(), indicators: strings(&["12 words"]) }
        );
        assert_eq!(gate.text, "Review this output before it is delivered.");
        assert_eq!(gate.payload, Some(json!({"audited": "clean"})));
        let summarised = NewGate::request_review("out", None, &[], Some("Check the tone"));
        assert_eq!(summarised.text, "Check the tone");
        assert!(matches!(summarised.spec, GateSpec::ResponseReview { raw, .. } if raw == "out"));
    }

    #[test]
    fn a_permission_prompt_shows_the_telling_fields_and_allows_three_answers() {
        let input = json!({"command": "rm -rf build", "timeout": 5}).as_object().cloned().unwrap();
        let gate = NewGate::request_permission("Claude Code", "Bash", &input);
        assert_eq!(
            gate.text,
            "**Claude Code** asks permission to use `Bash`.\n\n**command:**\n\n```\nrm -rf build\n```"
        );
        assert_eq!(gate.allowed_actions, [DecisionAction::Approve, DecisionAction::Edit, DecisionAction::Reject]);
        assert_eq!(gate.payload, Some(Value::Object(input)));
    }

    #[test]
    fn a_plan_proposal_lists_the_tasks_in_order_under_the_note() {
        let task = |id: &str, after: &[&str]| -> PlanTask {
            serde_json::from_value(json!({"task_id": id, "description": format!("do {id}"), "dependencies": after}))
                .unwrap()
        };
        let plan = Plan { tasks: vec![task("a", &[]), task("b", &["a"])], ..Plan::default() };
        let gate = NewGate::plan_propose(&plan, Some(3), 2, Some("Shorter now."));
        assert_eq!(
            gate.text,
            "**Review the plan** (revision 3, round 2)\n\nShorter now.\n\n- `a` do a\n- `b` do b (after a)\n"
        );
        assert_eq!(gate.spec, GateSpec::PlanReview { plan_revision: Some(3), round: 2 });
        assert_eq!(gate.payload, serde_json::to_value(&plan).ok());
        assert!(NewGate::plan_propose(&plan, None, 1, None).text.starts_with("**Review the plan** (round 1)\n\n- `a`"));
    }
}
