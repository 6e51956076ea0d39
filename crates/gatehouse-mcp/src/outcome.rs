//! What the tools answer. A gate becomes a result that says in its first
//! line what the reviewer decided and what to do next, followed by the same
//! facts as JSON (also the result's `structuredContent`). A rejection is an
//! answer, not a failure; only a call Gatehouse could not carry out is an
//! error result (`isError`). A permission prompt answers in its own
//! contract's shape.

use gatehouse_engine::redact::Redactor;
use gatehouse_engine::{DecisionAction, DecisionOrigin, Gate, GateStatus};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::{json, Value};

use crate::backend::{BackendError, Failure};

/// What became of a gate, for the agent that asked.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// What happened, in one sentence, with what to do next.
    pub summary: String,
    /// The gate, for `check_gate`.
    pub gate_id: String,
    /// The run it belongs to (pass it as `run_id` to keep asking in this run).
    pub run_id: String,
    /// `pending`, `resolved`, `expired` or `cancelled`.
    pub status: GateStatus,
    /// The decision: `approve`, `edit`, `reject`, `respond`, `needs_revision`, `defer` or `retry`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<DecisionAction>,
    /// Whether you may go ahead (approved, edited, answered or deferred).
    pub proceed: bool,
    /// Who decided: a reviewer's name, or `policy` when the run's policy passed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The reviewer's answer, feedback or reason, or why the gate expired or was withdrawn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// For an edit: the reviewer's version of what you proposed; use it instead of yours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
}

impl Outcome {
    /// The outcome of `gate` as it is now.
    pub fn of(gate: &Gate) -> Self {
        let decision = gate.decision.as_ref();
        let by = decision.map(|d| d.decided_by.clone());
        let who = by.clone().unwrap_or_else(|| "the reviewer".into());
        let text = decision.and_then(|d| d.text.clone()).filter(|t| !t.trim().is_empty());
        let edited = decision.filter(|d| d.action == DecisionAction::Edit).and_then(|d| d.payload.clone());
        let with_text = |lead: String| match &text {
            Some(t) => format!("{lead}: {t}"),
            None => format!("{lead}."),
        };
        let summary = match (gate.status, decision) {
            (GateStatus::Pending, _) => format!(
                "Gate {} is waiting for a reviewer. Call check_gate with this gate_id to get the decision \
                 (set wait_seconds to block until then).",
                gate.id
            ),
            (GateStatus::Expired, _) => {
                "No reviewer decided before the request expired. Do not proceed; ask again if it still matters."
                    .to_owned()
            }
            (GateStatus::Cancelled, _) => format!(
                "The request was withdrawn ({}). Do not proceed.",
                gate.status_reason.as_deref().unwrap_or("no reason given")
            ),
            (GateStatus::Resolved, None) => "The request was resolved without a recorded decision.".to_owned(),
            (GateStatus::Resolved, Some(d)) => match d.action {
                DecisionAction::Approve => match &d.origin {
                    DecisionOrigin::Auto { reason } => format!("Approved by the run's policy ({reason}). Go ahead."),
                    _ => with_text(format!("Approved by {who}. Go ahead")),
                },
                DecisionAction::Edit => format!(
                    "Approved by {who} with changes: go ahead using `payload` (the reviewer's edited version) \
                     instead of what you proposed{}",
                    text.as_deref().map(|t| format!(". Note: {t}")).unwrap_or_else(|| ".".into())
                ),
                DecisionAction::Reject => match &text {
                    Some(t) => format!("Rejected by {who}. Do not proceed with this. Reason: {t}"),
                    None => format!("Rejected by {who}. Do not proceed with this."),
                },
                DecisionAction::Respond => match &text {
                    Some(t) => format!("{who} answered: {t}"),
                    None => format!("{who} answered without text."),
                },
                DecisionAction::NeedsRevision => with_text(format!("{who} asks for a revision; revise and ask again")),
                DecisionAction::Defer => format!("{who} deferred this: carry on without an answer."),
                DecisionAction::Retry => with_text(format!("{who} asks you to try again")),
            },
        };
        let message = text.or_else(|| gate.status_reason.clone());
        Self {
            summary,
            gate_id: gate.id.to_string(),
            run_id: gate.run_id.to_string(),
            status: gate.status,
            decision: decision.map(|d| d.action),
            proceed: gate.status == GateStatus::Resolved && decision.is_some_and(|d| d.action.lets_agent_proceed()),
            decided_by: by,
            message,
            payload: edited,
        }
    }

    /// This outcome with `extra` fields added to its JSON.
    pub fn into_result(self, extra: Value) -> CallToolResult {
        let mut value = serde_json::to_value(&self).unwrap_or(Value::Null);
        if let (Value::Object(map), Value::Object(more)) = (&mut value, extra) {
            map.extend(more);
        }
        answer(&self.summary, value)
    }
}

/// A result whose first block is `summary` and whose structured content is `value`.
pub fn answer(summary: &str, value: Value) -> CallToolResult {
    let mut result = CallToolResult::structured(value);
    result.content.insert(0, ContentBlock::text(summary));
    result
}

/// An error result: Gatehouse could not carry the call out. Its message may
/// quote the arguments (a refused task id, say), so secrets in it are
/// redacted with the built-in patterns, as the engine redacts what it keeps.
pub fn failure(error: &BackendError) -> CallToolResult {
    static REDACTOR: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
    let message = REDACTOR.get_or_init(Redactor::default).redact_str(&error.message).into_owned();
    let error = &BackendError { message, ..error.clone() };
    let hint = match error.failure {
        Failure::Unauthorized => {
            " Give this MCP server a live Gatehouse token (`gatehouse token create --role agent --name NAME`)."
        }
        // Only `gatehouse mcp` (stdio) talks to a server it may not reach, hence its flag.
        Failure::Unreachable => {
            " Start Gatehouse (the desktop app or `gatehouse serve`), or point `gatehouse mcp --url` (GATEHOUSE_URL) \
             at a running one, and try again."
        }
        _ => "",
    };
    let summary = format!("Gatehouse could not do this: {}.{hint}", error.message.trim_end_matches('.'));
    let mut result = CallToolResult::structured_error(
        json!({ "error": error.failure, "message": error.message, "summary": summary }),
    );
    result.content.insert(0, ContentBlock::text(summary));
    result
}

/// A bad argument, named by its path, as an error result the assistant can correct.
pub fn bad_arguments(tool: &str, message: &str) -> CallToolResult {
    failure(&BackendError::new(Failure::Invalid, format!("`{tool}` arguments: {message}")))
}

/// The permission-prompt contract's answer for `gate`: allow with the
/// (possibly edited) input, or deny with a message.
pub fn permission_answer(gate: &Gate, asked: &Value) -> Value {
    let decision = gate.decision.as_ref();
    let text = decision.and_then(|d| d.text.clone()).filter(|t| !t.trim().is_empty());
    match (gate.status, decision.map(|d| d.action)) {
        (GateStatus::Resolved, Some(DecisionAction::Edit)) => {
            let edited = decision.and_then(|d| d.payload.clone()).filter(Value::is_object);
            json!({ "behavior": "allow", "updatedInput": edited.unwrap_or_else(|| asked.clone()) })
        }
        (GateStatus::Resolved, Some(action)) if action.lets_agent_proceed() => {
            json!({ "behavior": "allow", "updatedInput": asked })
        }
        (GateStatus::Resolved, _) => {
            let by = decision.map(|d| d.decided_by.as_str()).unwrap_or("the reviewer");
            let message = match text {
                Some(t) => format!("Denied by {by} in Gatehouse: {t}"),
                None => format!("Denied by {by} in Gatehouse."),
            };
            json!({ "behavior": "deny", "message": message })
        }
        (GateStatus::Expired, _) => {
            json!({ "behavior": "deny", "message": "No reviewer decided in Gatehouse before the request expired." })
        }
        (GateStatus::Cancelled, _) => json!({
            "behavior": "deny",
            "message": format!("The request was withdrawn in Gatehouse ({}).", gate.status_reason.as_deref().unwrap_or("no reason given")),
        }),
        (GateStatus::Pending, _) => {
            json!({ "behavior": "deny", "message": "The permission request was abandoned before a reviewer decided." })
        }
    }
}

/// The permission answer as the contract's tool result: one text block
/// holding the JSON (and the same JSON as structured content).
pub fn permission_result(answer: Value) -> CallToolResult {
    CallToolResult::structured(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_engine::{Decision, GateSpec};

    fn gate(status: GateStatus, action: Option<DecisionAction>, text: Option<&str>, payload: Option<Value>) -> Gate {
        let mut gate: Gate = serde_json::from_value(json!({
            "id": "gate_1", "run_id": "run_1", "spec": {"kind": "approval", "action": "Bash"}, "mode": "sync",
            "priority": "normal", "agent": "a", "text": "Allow?", "context": {}, "payload": {"command": "ls"},
            "example_input": null, "allowed_actions": ["approve", "edit", "reject"], "requires_human": false,
            "quorum": null, "votes": [], "status": "pending", "decision": null, "status_reason": null,
            "idempotency_key": null, "created_at": "2026-01-01T00:00:00Z", "expires_at": null, "closed_at": null
        }))
        .unwrap();
        assert!(matches!(gate.spec, GateSpec::Approval { .. }));
        gate.status = status;
        gate.decision = action.map(|action| {
            serde_json::from_value::<Decision>(json!({
                "id": "dec_1", "gate_id": "gate_1", "run_id": "run_1", "action": action, "decided_by": "alice",
                "origin": {"by": "human"}, "text": text, "payload": payload, "diff": null, "score": null,
                "decided_at": "2026-01-01T00:00:01Z", "latency_ms": 1000
            }))
            .unwrap()
        });
        gate
    }

    #[test]
    fn an_edit_allows_the_reviewers_input_and_an_approval_the_original() {
        let asked = json!({"command": "rm -rf build"});
        let edited = gate(GateStatus::Resolved, Some(DecisionAction::Edit), None, Some(json!({"command": "ls"})));
        assert_eq!(permission_answer(&edited, &asked), json!({"behavior": "allow", "updatedInput": {"command": "ls"}}));
        let approved = gate(GateStatus::Resolved, Some(DecisionAction::Approve), None, None);
        assert_eq!(permission_answer(&approved, &asked), json!({"behavior": "allow", "updatedInput": asked}));
    }

    #[test]
    fn a_rejection_or_expiry_denies_with_a_message_naming_why() {
        let asked = json!({});
        let rejected = gate(GateStatus::Resolved, Some(DecisionAction::Reject), Some("not on prod"), None);
        let answer = permission_answer(&rejected, &asked);
        assert_eq!(answer["behavior"], "deny");
        assert_eq!(answer["message"], "Denied by alice in Gatehouse: not on prod");
        let expired = permission_answer(&gate(GateStatus::Expired, None, None, None), &asked);
        assert_eq!(expired["behavior"], "deny");
        assert!(expired["message"].as_str().unwrap().contains("expired"));
    }

    #[test]
    fn outcomes_say_whether_to_proceed_and_carry_the_edit() {
        let rejected = Outcome::of(&gate(GateStatus::Resolved, Some(DecisionAction::Reject), Some("too risky"), None));
        assert!(!rejected.proceed);
        assert_eq!(rejected.summary, "Rejected by alice. Do not proceed with this. Reason: too risky");
        let edited = Outcome::of(&gate(GateStatus::Resolved, Some(DecisionAction::Edit), None, Some(json!({"n": 2}))));
        assert!(edited.proceed);
        assert_eq!(edited.payload, Some(json!({"n": 2})));
        let pending = Outcome::of(&gate(GateStatus::Pending, None, None, None));
        assert!(!pending.proceed && pending.summary.contains("check_gate"));
    }
}
