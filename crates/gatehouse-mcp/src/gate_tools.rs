//! The tools that ask a human: approval, a blocker question, feedback, an
//! output review, a coding assistant's permission prompt, and `check_gate`
//! for answers to calls made in async mode. Each opens one gate, built by
//! the engine's constructor for its tool (`NewGate::request_approval`...),
//! and answers with the decision ([`Outcome`]).

use std::time::Duration;

use gatehouse_engine::{GateId, NewGate};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde_json::{json, Value};

use crate::args::{
    AskHumanArgs, CheckGateArgs, GateOptions, RequestApprovalArgs, RequestFeedbackArgs, RequestPermissionArgs,
    RequestReviewArgs,
};
use crate::backend::Backend;
use crate::outcome::{bad_arguments, permission_answer, permission_result, Outcome};
use crate::server::{input_schema, parse, settle, GatehouseMcp};

/// Returns early with the error result when arguments do not parse.
macro_rules! arguments {
    ($tool:literal, $args:expr) => {
        match parse($tool, $args) {
            Ok(args) => args,
            Err(result) => return *result,
        }
    };
}

#[tool_router(router = gate_tools, vis = "pub(crate)")]
impl<B: Backend> GatehouseMcp<B> {
    /// Ask a human reviewer to approve an action before you take it (deployments, deletions, payments,
    /// messages to people, anything hard to undo). Blocks until they decide. Approved: go ahead.
    /// Edited: go ahead with the returned `payload` instead of your `context`. Rejected: do not proceed.
    #[tool(input_schema = input_schema::<RequestApprovalArgs>())]
    async fn request_approval(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: RequestApprovalArgs = arguments!("request_approval", arguments);
        if args.action.trim().is_empty() {
            return bad_arguments("request_approval", "action: say what you want to do");
        }
        let gate = NewGate::request_approval(&args.action, args.reason.as_deref(), args.context.map(Value::Object));
        settle(self.ask(&request, gate, &args.options).await.map(|g| Outcome::of(&g).into_result(json!({}))))
    }

    /// Ask a human a question you are blocked on and cannot answer yourself (a missing credential, an
    /// ambiguous requirement, a choice only the owner can make). Blocks until they answer; the answer
    /// is in `message`.
    #[tool(input_schema = input_schema::<AskHumanArgs>())]
    async fn ask_human(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: AskHumanArgs = arguments!("ask_human", arguments);
        if args.question.trim().is_empty() {
            return bad_arguments("ask_human", "question: ask something");
        }
        let gate = NewGate::ask_human(&args.question, args.context.as_deref(), &args.options);
        settle(self.ask(&request, gate, &args.gate).await.map(|g| Outcome::of(&g).into_result(json!({}))))
    }

    /// Ask a human for feedback on your work (a draft, a design, a diff) and wait for it. The feedback
    /// is in `message`.
    #[tool(input_schema = input_schema::<RequestFeedbackArgs>())]
    async fn request_feedback(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: RequestFeedbackArgs = arguments!("request_feedback", arguments);
        if args.artifact.trim().is_empty() {
            return bad_arguments("request_feedback", "artifact: give the work to look at");
        }
        // The call's mode (sync unless it says async) replaces the gate's own.
        let gate = NewGate::request_feedback(&args.artifact, &args.questions);
        settle(self.ask(&request, gate, &args.options).await.map(|g| Outcome::of(&g).into_result(json!({}))))
    }

    /// Ask a human to review output before you deliver it (a reply to a customer, a report, generated
    /// content). Blocks until they decide. Approved: deliver `output`. Edited: deliver the returned
    /// `output` (the reviewer's version). Retry or needs_revision: redo it using `message`. Rejected:
    /// do not deliver.
    #[tool(input_schema = input_schema::<RequestReviewArgs>())]
    async fn request_review(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: RequestReviewArgs = arguments!("request_review", arguments);
        if args.output.trim().is_empty() {
            return bad_arguments("request_review", "output: give the output to review");
        }
        let gate =
            NewGate::request_review(&args.output, args.original.as_deref(), &args.indicators, args.summary.as_deref());
        let result = self.ask(&request, gate, &args.options).await.map(|g| {
            let outcome = Outcome::of(&g);
            let edited = outcome.payload.as_ref().and_then(|p| p.get("audited")).and_then(Value::as_str);
            let output = outcome.proceed.then(|| edited.unwrap_or(&args.output).to_owned());
            outcome.into_result(json!({ "output": output }))
        });
        settle(result)
    }

    /// Permission-prompt tool for coding assistants: every permission prompt becomes an approval in
    /// Gatehouse whose payload is the tool input, which the reviewer may edit. Blocks until they decide
    /// and answers `{"behavior":"allow","updatedInput":{...}}` or `{"behavior":"deny","message":"..."}`.
    #[tool(input_schema = input_schema::<RequestPermissionArgs>())]
    async fn request_permission(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: RequestPermissionArgs = arguments!("request_permission", arguments);
        let asked = Value::Object(args.input.clone());
        let client = request.client_info().map(|c| c.name).unwrap_or_else(|| "The assistant".into());
        let mut gate = NewGate::request_permission(&client, &args.tool_name, &args.input);
        gate.idempotency_key = args
            .tool_use_id
            .as_deref()
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(|id| format!("permission:{}", id.chars().take(200).collect::<String>()));
        match self.ask(&request, gate, &GateOptions::default()).await {
            Ok(gate) => permission_result(permission_answer(&gate, &asked)),
            // The contract has no error answer; refusing is the safe one.
            Err(e) => permission_result(json!({
                "behavior": "deny",
                "message": format!("Gatehouse could not ask a reviewer: {}", e.message),
            })),
        }
    }

    /// Get the state and decision of a gate opened earlier (in async mode, or by a call that was
    /// interrupted). Answers at once unless `wait_seconds` is given.
    #[tool(input_schema = input_schema::<CheckGateArgs>(), annotations(read_only_hint = true))]
    async fn check_gate(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: CheckGateArgs = arguments!("check_gate", arguments);
        let id = GateId::from_string(args.gate_id.trim().to_owned());
        let wait = Duration::from_secs(args.wait_seconds.unwrap_or(0));
        let result = async {
            let caller = self.backend.caller(&request)?;
            let gate = self.gate_now(&caller, &id).await?;
            let gate = if wait.is_zero() || gate.status.is_terminal() {
                gate
            } else {
                self.await_decision(&caller, &request, gate, Some(wait)).await?
            };
            Ok(Outcome::of(&gate).into_result(json!({ "kind": gate.kind() })))
        };
        settle(result.await)
    }
}
