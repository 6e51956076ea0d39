//! The tools a team agent may call and how its calls are read. Built-in
//! tools are intercepted by the orchestrator, never sent to a tool
//! executor: this table is where later kinds (plan, team, consensus,
//! command and MCP tools) join, each with the signature its agents are
//! shown. Calls are read from the model's native tool calls (OpenAI's
//! `choices[0].message.tool_calls`, Anthropic's `tool_use` blocks), and,
//! for a model without native tool calling, from `TOOL_CALL:` lines in its
//! text ([`calls_in_text`]), each checked against the tool's JSON Schema.

use gatehouse_providers::text_tools::{self, ToolSignature};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A built-in tool of team runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuiltinTool {
    /// Pass the turn to another agent of the team.
    Handoff,
    /// Keep a value under a key, in a scope, for a time.
    StoreMemory,
    /// Read a key's value back.
    RetrieveMemory,
    /// Find keys and values holding some text.
    SearchMemory,
    /// Put a decision to the team's vote.
    ProposeDecision,
    /// Vote on a proposal, with reasoning.
    VoteOnProposal,
    /// Close a proposal: decided by the votes, or by people at a quorum gate.
    FinalizeConsensus,
    /// End a workflow step with its outcome (pattern runs).
    ReportOutcome,
    /// Hand tasks to several agents at once, as sub-runs, and wait at a sync point.
    ParallelHandoff,
    /// Add a named sub-team of new agents.
    CreateTeam,
    /// Add agents to, or remove them from, a sub-team an agent created.
    ModifyTeam,
    /// Remove a sub-team an agent created, its agents with it.
    DissolveTeam,
    /// Ask a person a question and wait for the answer (a question gate).
    AskHuman,
    /// Read the run's plan (`plan_tools.rs`).
    PlanRead,
    /// Add a pending task to the plan.
    PlanAddTask,
    /// Set a task's status and metadata.
    PlanUpdateTask,
    /// Assign a task to a member of the team.
    PlanAssignTask,
    /// Record a task's estimated duration.
    PlanEstimateDuration,
    /// Replace a task's dependencies.
    PlanSetDependencies,
}

impl BuiltinTool {
    /// Every built-in tool, in the order agents are shown them.
    pub const ALL: [BuiltinTool; 19] = [
        Self::Handoff,
        Self::StoreMemory,
        Self::RetrieveMemory,
        Self::SearchMemory,
        Self::ProposeDecision,
        Self::VoteOnProposal,
        Self::FinalizeConsensus,
        Self::ReportOutcome,
        Self::ParallelHandoff,
        Self::CreateTeam,
        Self::ModifyTeam,
        Self::DissolveTeam,
        Self::AskHuman,
        Self::PlanRead,
        Self::PlanAddTask,
        Self::PlanUpdateTask,
        Self::PlanAssignTask,
        Self::PlanEstimateDuration,
        Self::PlanSetDependencies,
    ];

    /// The tool called `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Every tool's name.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|t| t.name()).collect()
    }

    /// Its name as agents call it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Handoff => "handoff",
            Self::StoreMemory => "store_memory",
            Self::RetrieveMemory => "retrieve_memory",
            Self::SearchMemory => "search_memory",
            Self::ProposeDecision => "propose_decision",
            Self::VoteOnProposal => "vote_on_proposal",
            Self::FinalizeConsensus => "finalize_consensus",
            Self::ReportOutcome => "report_outcome",
            Self::ParallelHandoff => "parallel_handoff",
            Self::CreateTeam => "create_team",
            Self::ModifyTeam => "modify_team",
            Self::DissolveTeam => "dissolve_team",
            Self::AskHuman => "ask_human",
            Self::PlanRead => "plan_read",
            Self::PlanAddTask => "plan_add_task",
            Self::PlanUpdateTask => "plan_update_task",
            Self::PlanAssignTask => "plan_assign_task",
            Self::PlanEstimateDuration => "plan_estimate_duration",
            Self::PlanSetDependencies => "plan_set_dependencies",
        }
    }

    /// Its signature and purpose, as the agent's prompt lists it.
    pub fn signature(self) -> &'static str {
        match self {
            Self::Handoff => {
                "handoff(destination_agent: str, reason: str, context: dict): pass the turn to another agent"
            }
            Self::StoreMemory => {
                "store_memory(key: str, value: any, scope: run|team|global, ttl: seconds?): remember a value"
            }
            Self::RetrieveMemory => "retrieve_memory(key: str, scope: run|team|global): read a remembered value",
            Self::SearchMemory => {
                "search_memory(query: str, scope: run|team|global): find remembered values holding text"
            }
            Self::ProposeDecision => {
                "propose_decision(decision: str, rationale: str, stakeholders: [agent|human|human:NAME]): put a decision to a vote"
            }
            Self::VoteOnProposal => {
                "vote_on_proposal(proposal_id: str, vote: approve|reject|abstain, reasoning: str): vote on a proposal"
            }
            Self::FinalizeConsensus => {
                "finalize_consensus(proposal_id: str): close a proposal once its voters voted; people may decide it"
            }
            Self::ReportOutcome => {
                "report_outcome(outcome: success|failure|pass|fail, summary: str): end your workflow step"
            }
            Self::ParallelHandoff => {
                "parallel_handoff(agents: list[str], tasks: list[str], coordination_strategy: wait_all|first_answer): \
                 give each agent its task side by side and wait for their answers"
            }
            Self::CreateTeam => {
                "create_team(team_name: str, agents: list[{name, role, provider, model, tools}], purpose: str): \
                 add a sub-team of new agents"
            }
            Self::ModifyTeam => {
                "modify_team(team_name: str, add_agents: list[{name, role, provider, model, tools}], \
                 remove_agents: list[str]): change a sub-team an agent created"
            }
            Self::DissolveTeam => "dissolve_team(team_name: str, reason: str): remove a sub-team an agent created",
            Self::AskHuman => {
                "ask_human(question: str, options: List[str]?, timeout_secs: int?, escalation: {after_secs: int, to: List[str]}?): ask a person and wait for the answer"
            }
            Self::PlanRead => "plan_read(): the run's plan, its tasks with their status and assigned agent",
            Self::PlanAddTask => {
                "plan_add_task(description: str, priority: low|medium|high|critical?, dependencies: List[str]?, \
                 assigned_agent: str?): add a pending task to the plan"
            }
            Self::PlanUpdateTask => {
                "plan_update_task(task_id: str, status: pending|completed|failed|blocked|skipped?, metadata: dict?): \
                 update a task"
            }
            Self::PlanAssignTask => "plan_assign_task(task_id: str, agent_name: str): assign a task to a team member",
            Self::PlanEstimateDuration => {
                "plan_estimate_duration(task_id: str, duration: str): set a task's estimated duration"
            }
            Self::PlanSetDependencies => {
                "plan_set_dependencies(task_id: str, dependencies: List[str]): set the tasks a task waits for"
            }
        }
    }
}

impl BuiltinTool {
    /// The JSON Schema of its arguments, which a call in the text protocol is checked against.
    pub fn schema(self) -> Value {
        match self {
            Self::Handoff => json!({"type": "object", "required": ["destination_agent"], "properties": {
                "destination_agent": {"type": "string"}, "reason": {"type": "string"}, "context": {}}}),
            Self::StoreMemory => json!({"type": "object", "required": ["key", "value"], "properties": {
                "key": {"type": "string"}, "value": {}, "scope": {"type": "string"}, "ttl": {"type": ["integer", "null"]}}}),
            Self::RetrieveMemory => json!({"type": "object", "required": ["key"], "properties": {
                "key": {"type": "string"}, "scope": {"type": "string"}}}),
            Self::SearchMemory => json!({"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"}, "scope": {"type": "string"}}}),
            Self::ProposeDecision => json!({"type": "object", "required": ["decision"], "properties": {
                "decision": {"type": "string"}, "rationale": {"type": "string"},
                "stakeholders": {"type": "array", "items": {"type": "string"}}}}),
            Self::VoteOnProposal => json!({"type": "object", "required": ["proposal_id", "vote"], "properties": {
                "proposal_id": {"type": "string"}, "vote": {"type": "string"}, "reasoning": {"type": "string"}}}),
            Self::FinalizeConsensus => json!({"type": "object", "required": ["proposal_id"], "properties": {
                "proposal_id": {"type": "string"}}}),
            Self::ReportOutcome => json!({"type": "object", "required": ["outcome"], "properties": {
                "outcome": {"type": "string"}, "summary": {"type": "string"}}}),
            Self::ParallelHandoff => json!({"type": "object", "required": ["agents", "tasks"], "properties": {
                "agents": {"type": "array", "items": {"type": "string"}},
                "tasks": {"type": "array", "items": {"type": "string"}},
                "coordination_strategy": {"type": "string"}}}),
            Self::CreateTeam => json!({"type": "object", "required": ["team_name", "agents"], "properties": {
                "team_name": {"type": "string"}, "agents": {"type": "array", "items": {"type": "object"}},
                "purpose": {"type": "string"}}}),
            Self::ModifyTeam => json!({"type": "object", "required": ["team_name"], "properties": {
                "team_name": {"type": "string"}, "add_agents": {"type": "array", "items": {"type": "object"}},
                "remove_agents": {"type": "array", "items": {"type": "string"}}}}),
            Self::DissolveTeam => json!({"type": "object", "required": ["team_name"], "properties": {
                "team_name": {"type": "string"}, "reason": {"type": "string"}}}),
            Self::AskHuman => json!({"type": "object", "required": ["question"], "properties": {
                "question": {"type": "string"}, "options": {"type": "array", "items": {"type": "string"}},
                "timeout_secs": {"type": "integer", "minimum": 1}, "escalation": {}}}),
            Self::PlanRead => json!({"type": "object", "properties": {}}),
            Self::PlanAddTask => json!({"type": "object", "required": ["description"], "properties": {
                "description": {"type": "string"}, "priority": {"type": "string"},
                "dependencies": {"type": "array", "items": {"type": "string"}}, "assigned_agent": {"type": "string"}}}),
            Self::PlanUpdateTask => json!({"type": "object", "required": ["task_id"], "properties": {
                "task_id": {"type": "string"}, "status": {"type": "string"}, "metadata": {"type": "object"}}}),
            Self::PlanAssignTask => json!({"type": "object", "required": ["task_id", "agent_name"], "properties": {
                "task_id": {"type": "string"}, "agent_name": {"type": "string"}}}),
            Self::PlanEstimateDuration => json!({"type": "object", "required": ["task_id", "duration"], "properties": {
                "task_id": {"type": "string"}, "duration": {"type": "string"}}}),
            Self::PlanSetDependencies => {
                json!({"type": "object", "required": ["task_id", "dependencies"], "properties": {
                "task_id": {"type": "string"}, "dependencies": {"type": "array", "items": {"type": "string"}}}})
            }
        }
    }
}

/// What a reply in the text protocol holds: its calls, its text without
/// them, and what to tell the model about calls that did not hold together.
pub(crate) struct TextCalls {
    pub calls: Vec<ToolCall>,
    pub text: String,
    pub feedback: Option<String>,
}

/// The `TOOL_CALL:` lines of `text`, checked against `tools`; `None` when it has none.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn calls_in_text(text: &str, tools: &[BuiltinTool]) -> Option<TextCalls> {
    calls_in_text_also(text, tools, &[])
}

/// [`calls_in_text`], with `more` tools (the operator's) checked too.
pub(crate) fn calls_in_text_also(text: &str, tools: &[BuiltinTool], more: &[ToolSignature]) -> Option<TextCalls> {
    if !text.contains(text_tools::MARKER) {
        return None;
    }
    let mut signatures: Vec<ToolSignature> =
        tools.iter().map(|t| ToolSignature::new(t.name(), t.signature(), t.schema())).collect();
    signatures.extend(more.iter().cloned());
    let parsed = text_tools::parse_reply(text, &signatures);
    let feedback = parsed.feedback();
    let calls = parsed.calls.into_iter().map(|c| ToolCall { name: c.tool, args: c.args }).collect();
    Some(TextCalls { calls, text: parsed.text, feedback })
}

/// The tools an agent with `granted` tools is offered: `handoff` always.
pub(crate) fn offered(granted: &[String]) -> Vec<BuiltinTool> {
    BuiltinTool::ALL
        .into_iter()
        .filter(|t| *t == BuiltinTool::Handoff || granted.iter().any(|g| g == t.name()))
        .collect()
}

/// One tool call a model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments (an object; a model's unreadable arguments are kept as their text).
    pub args: Value,
}

/// The tool calls in a provider's raw answer, in order.
pub(crate) fn calls_in(raw: &Value) -> Vec<ToolCall> {
    let openai = raw.pointer("/choices/0/message/tool_calls").and_then(Value::as_array);
    if let Some(calls) = openai {
        return calls
            .iter()
            .filter_map(|c| {
                let f = c.get("function")?;
                let name = f.get("name")?.as_str()?.to_owned();
                let args = match f.get("arguments") {
                    Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::String(text.clone())),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                Some(ToolCall { name, args })
            })
            .collect();
    }
    let blocks = raw.get("content").and_then(Value::as_array).into_iter().flatten();
    blocks
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| {
            let name = b.get("name")?.as_str()?.to_owned();
            Some(ToolCall { name, args: b.get("input").cloned().unwrap_or(Value::Null) })
        })
        .collect()
}

/// A string argument, trimmed, or `None` when absent, blank or not a string.
pub(crate) fn text_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_are_read_from_openai_and_anthropic_answers() {
        let openai = json!({"choices": [{"message": {"tool_calls": [
            {"function": {"name": "handoff", "arguments": "{\"destination_agent\": \"t\"}"}},
            {"function": {"name": "store_memory", "arguments": "not json"}}
        ]}}]});
        let calls = calls_in(&openai);
        assert_eq!(calls[0], ToolCall { name: "handoff".into(), args: json!({"destination_agent": "t"}) });
        assert_eq!(calls[1].args, json!("not json"));
        let anthropic = json!({"content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "name": "handoff", "input": {"destination_agent": "c"}}]});
        assert_eq!(calls_in(&anthropic)[0].args["destination_agent"], "c");
        assert!(calls_in(&json!({"output": "text"})).is_empty());
    }

    #[test]
    fn calls_in_the_text_protocol_are_checked_against_the_offered_tools() {
        let tools = offered(&["store_memory".into()]);
        let reply =
            "Tests fail.\nTOOL_CALL: {\"tool_name\": \"handoff\", \"args\": {\"destination_agent\": \"coder\"}}\n\
                     TOOL_CALL: {\"tool_name\": \"search_memory\", \"args\": {\"query\": \"x\"}}";
        let read = calls_in_text(reply, &tools).expect("markers");
        assert_eq!(read.calls, [ToolCall { name: "handoff".into(), args: json!({"destination_agent": "coder"}) }]);
        assert_eq!(read.text, "Tests fail.");
        let feedback = read.feedback.expect("the ungranted tool is answered");
        assert!(
            feedback.contains("no tool called `search_memory`") && feedback.contains("handoff, store_memory"),
            "{feedback}"
        );
        let broken =
            calls_in_text("TOOL_CALL: {\"tool_name\": \"store_memory\", \"args\": {\"key\": 1}}", &tools).unwrap();
        assert!(broken.calls.is_empty());
        assert!(broken.feedback.unwrap().contains("`key`"));
        assert!(calls_in_text("plain answer", &tools).is_none());
    }

    #[test]
    fn every_agent_is_offered_handoff_and_only_its_granted_tools() {
        assert_eq!(offered(&[]), [BuiltinTool::Handoff]);
        assert_eq!(offered(&["search_memory".into()]), [BuiltinTool::Handoff, BuiltinTool::SearchMemory]);
    }
}
