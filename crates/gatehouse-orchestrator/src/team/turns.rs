//! A team run's loop: the active agent takes a turn (its model called
//! with the team, the task, what it was handed and the answers to its
//! last tool calls), its tool calls are intercepted (a handoff switches the
//! active agent; memory tools answer it), and an answer without a tool call
//! is the team's answer, which a reviewer reviews before the run completes.
//!
//! Every step is journaled (see [`crate::driver`]), so after a restart the
//! loop replays to the same active agent and position and carries on: a
//! handoff is never made twice, a model never called again for a turn it
//! answered.

use std::collections::HashMap;

use gatehouse_engine::DecisionAction;
use gatehouse_providers::text_tools::ToolSignature;
use gatehouse_providers::RunInput;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{decision_of, Driver, Halt, Record, Step};
use crate::flow::{call_until_answered, edited_text, rejected, response_gate};
use crate::spec::RunSpec;

use super::change::{self, TeamChange};
use super::consensus_tools;
use super::dynamic::{self, Reshaped, SubTeams};
use super::memory;
use super::parallel;
use super::pattern_steps::{self, FlowAt, Moved};
use super::restart;
use super::tools::{calls_in, calls_in_text_also, offered, text_arg, BuiltinTool, ToolCall};
use super::{hitl_tools, plan_progress, plan_tools, toolbox_tools};
use super::{Team, TeamAgent};

/// The most agent turns a team run takes before it fails as looping.
pub const MAX_TEAM_TURNS: u32 = 200;

/// What an agent said in a turn, journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AgentTurn {
    agent: String,
    text: String,
    calls: Vec<ToolCall>,
    /// What to tell the agent about text-protocol calls that did not hold together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    feedback: Option<String>,
}

/// What a handoff did, journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Handed {
    Switched { from: String, to: String, reason: String, context: Value },
    Refused { answer: String },
}

/// Where the team is: who holds the turn and what it is told next.
struct Position {
    active: String,
    turn: u32,
    turns_by: HashMap<String, u32>,
    handed: Option<(String, String, Value)>,
    notes: Vec<String>,
    handoffs: Vec<Value>,
    /// The team's proposals (consensus tools), as the journal rebuilds them.
    consensus: crate::consensus::Consensus,
    /// Where a pattern run stands in its workflow.
    flow: Option<FlowAt>,
    /// The last reviewer's restart request taken (its turn index).
    restarts: u32,
    /// The sub-teams agents created.
    sub_teams: SubTeams,
    /// A reviewer's choice of the next agent that came with a restart taken
    /// after an agent's turn: it takes the turn after the redone one.
    chosen_after_redo: Option<String>,
}

/// Drives a team run to its reviewed answer.
pub(crate) async fn run(d: &mut Driver, spec: &RunSpec, team: &Team) -> Step<Value> {
    let mut team = team.clone();
    let first = team.agents.first().ok_or_else(|| Halt::Fail("the run's team has no agents".into()))?;
    let mut applied = 0;
    let mut at = Position {
        active: first.name.clone(),
        turn: 0,
        turns_by: HashMap::new(),
        handed: None,
        notes: Vec::new(),
        handoffs: Vec::new(),
        consensus: Default::default(),
        flow: spec.pattern.clone().map(FlowAt::new),
        restarts: 0,
        sub_teams: SubTeams::new(),
        chosen_after_redo: None,
    };
    loop {
        at.turn += 1;
        if at.turn > MAX_TEAM_TURNS {
            return Err(Halt::Fail(format!("the team took {MAX_TEAM_TURNS} turns without an answer")));
        }
        apply_changes(d, &mut team, &mut applied, at.turn).await?;
        if let Some(flow) = &at.flow {
            at.active = flow.agent().to_owned();
            pattern_steps::grant(&mut team);
        }
        let agent = match team.agent(&at.active) {
            Some(agent) => agent.clone(),
            None => team.agents[0].clone(),
        };
        at.active = agent.name.clone();
        let (here, next) = (format!("team:{}:restart", at.turn), format!("team:{}:call", at.turn));
        let agent = match restart_at(d, &team, &mut at, &here, &[next]).await? {
            true => team.agent(&at.active).cloned().unwrap_or(agent),
            false => agent,
        };
        if let Some(task) = plan_progress::start(d, &agent, at.turn).await? {
            at.notes.push(task);
        }
        let said = agent_turn(d, spec, &team, &agent, &at).await?;
        *at.turns_by.entry(agent.name.clone()).or_default() += 1;
        at.notes.clear();
        at.handed = None;
        let mut restarted = false;
        if said.calls.is_empty() {
            match &said.feedback {
                // Broken tool calls are no answer: the agent is told why and goes again.
                Some(feedback) => at.notes.push(feedback.clone()),
                // A parallel branch's answer goes to its coordinating agent, reviewed with its answer.
                None if spec.branch.is_some() => return Ok(parallel::branch_result(&agent, &said.text, at.turn)),
                // In a workflow the step's outcome ends a turn (below), never a bare answer.
                None if at.flow.is_some() => {}
                None => {
                    let (here, next) =
                        (format!("team:{}:answer:restart", at.turn), format!("team:{}:answer:decided", at.turn));
                    restarted = restart_at(d, &team, &mut at, &here, &[next]).await?;
                    if !restarted {
                        match review_answer(d, &agent, &said, &at).await? {
                            Ok(result) => return plan_progress::answered(d, &agent, at.turn).await.map(|_| result),
                            Err(feedback) => at.notes.push(feedback),
                        }
                    }
                }
            }
        }
        for (i, call) in said.calls.iter().enumerate() {
            let key = format!("team:{}:tool:{i}", at.turn);
            if restart_at(d, &team, &mut at, &format!("{key}:restart"), &[key.clone(), format!("{key}:branches")])
                .await?
            {
                restarted = true;
                break;
            }
            match intercept(d, &team, &agent, call, &key, &mut at, spec).await? {
                Intercepted::Answer(answer) => at.notes.push(answer),
                Intercepted::Reshaped(reshaped) => {
                    at.notes.push(reshaped.answer.clone());
                    reshaped.apply(&mut team, &mut at.sub_teams);
                }
                Intercepted::Handoff { to, reason, context } => {
                    at.handoffs.push(json!({"turn": at.turn, "from": agent.name, "to": to, "reason": reason}));
                    at.handed = Some((agent.name.clone(), reason, context));
                    at.active = to;
                    break;
                }
            }
        }
        if let Some((_, reason, _)) = at.handed.clone() {
            if let Some(back) = plan_progress::handed(d, &agent, at.turn, &reason).await? {
                (at.active, at.handed) = (back.agent, None);
                at.notes.push(back.note);
            }
        }
        if let Some(feedback) =
            said.feedback.as_ref().filter(|_| !said.calls.is_empty() && at.handed.is_none() && !restarted)
        {
            at.notes.push(feedback.clone());
        }
        if let Some(result) = flow_turn(d, &agent, &said, &mut at).await? {
            return Ok(result);
        }
        let before = at.active.clone();
        follow_directives(d, &team, &mut at, restarted).await?;
        if let Some(flow) = at.flow.as_mut() {
            flow.follow(&before, &at.active);
        }
    }
}

/// Takes a reviewer's restart at the boundary `here` ([`restart::taken`]):
/// the agent it names holds the turn, told why. True when one was taken.
async fn restart_at(d: &mut Driver, team: &Team, at: &mut Position, here: &str, next: &[String]) -> Step<bool> {
    let current = at.active.clone();
    let Some(took) = restart::taken(d, team, here, next, &mut at.restarts, &current).await? else {
        return Ok(false);
    };
    at.active = took.agent;
    at.notes.push(took.note);
    Ok(true)
}

/// Applies a reviewer's team changes recorded since the last ones applied,
/// at the start of turn `turn`. Journaled, so a run driven again applies
/// the same changes at the same turn (and none where none were applied).
/// `applied` moves on to the last turn read, so each look reads only the
/// turns recorded since the last.
async fn apply_changes(d: &mut Driver, team: &mut Team, applied: &mut u32, turn: u32) -> Step<()> {
    let key = format!("team:{turn}:team");
    if !d.journaled(&key) && d.journaled(&format!("team:{turn}:call")) {
        return Ok(());
    }
    let (id, after) = (d.run_id.clone(), *applied);
    let changes = if d.journaled(&key) {
        None
    } else {
        let turns = d.engine(move |e| e.turns_after(&id, after)).await?;
        // A change whose agent runs on no tool of the registry (a turn written
        // around the checked endpoint) is passed over rather than failing the run.
        let registry = d.orchestrator().registry();
        let runs_here = |c: &TeamChange| match c {
            TeamChange::Add { agent } | TeamChange::Update { agent } => registry.resolve(&agent.tool).is_ok(),
            TeamChange::Remove { .. } => true,
        };
        let new: Vec<(u32, TeamChange)> = change::recorded(&turns).into_iter().filter(|(_, c)| runs_here(c)).collect();
        if new.is_empty() {
            // Nothing to apply up to the last turn read: the next look reads
            // only what comes after it (turn indices only grow).
            *applied = turns.last().map_or(after, |t| t.index.max(after));
            return Ok(());
        }
        Some(new)
    };
    let changes: Vec<(u32, TeamChange)> = d
        .step(&key, "team_change", || async move {
            let changes = changes.unwrap_or_default();
            let content = format!("The team takes {} change(s) by a reviewer.", changes.len());
            Ok(Record::new(changes, content))
        })
        .await?;
    for (index, change) in changes {
        change.apply(team);
        *applied = (*applied).max(index);
    }
    Ok(())
}

/// Honours what reviewers' directives delivered with the turn's steps
/// (`directives.rs`): instructions go to the next agent; a chosen next agent
/// takes the turn (over a handoff) when it is on the team, after the redone
/// turn when a restart sent an agent back after its turn (`redo`).
async fn follow_directives(d: &mut Driver, team: &Team, at: &mut Position, redo: bool) -> Step<()> {
    let delivered = super::directives::delivered_in_turn(d, at.turn);
    for found in &delivered {
        let texts = found["instructions"].as_array().into_iter().flatten().filter_map(Value::as_str);
        at.notes.extend(texts.map(|t| format!("A reviewer says: {t}")));
    }
    let newest = delivered.iter().rev().find_map(|f| f["next_agent"].as_str().map(str::to_owned));
    let Some(chosen) = newest.or_else(|| at.chosen_after_redo.take()) else {
        return Ok(());
    };
    if redo {
        at.chosen_after_redo = Some(chosen);
        return Ok(());
    }
    let key = format!("team:{}:override", at.turn);
    let on_team = team.agent(&chosen).is_some();
    let stepless = at.flow.as_ref().filter(|f| on_team && !f.has_step_for(&chosen));
    let known = on_team && stepless.is_none();
    let content = if known {
        format!("**{chosen}** takes the next turn, as a reviewer chose.")
    } else if let Some(flow) = stepless {
        format!(
            "A reviewer chose `{chosen}` to act next, who takes no step of the workflow; **{}** goes on with it.",
            flow.agent()
        )
    } else {
        format!("A reviewer chose `{chosen}` to act next, who is not on the team ({}).", team.names().join(", "))
    };
    let meta = json!({"team_override": chosen, "applied": known});
    d.note(&key, content, meta).await?;
    if known {
        at.active = chosen;
    }
    Ok(())
}

/// The agent's turn: its model called, what it said journaled as one turn.
async fn agent_turn(d: &mut Driver, spec: &RunSpec, team: &Team, agent: &TeamAgent, at: &Position) -> Step<AgentTurn> {
    let key = format!("team:{}", at.turn);
    let more = toolbox_tools::granted(d.orchestrator().toolbox(), agent);
    let input = RunInput {
        tool: agent.tool.clone(),
        prompt: prompt(spec, team, agent, at, &more),
        system: Some(system(spec, agent)),
        inputs: spec.inputs.clone(),
    };
    let tool = d.tool(&agent.tool)?;
    let payload =
        d.prepare(&input).map_err(|e| Halt::Fail(format!("{}'s payload cannot be prepared: {e}", agent.name)))?;
    let (response, _) = call_until_answered(d, &tool, payload, &format!("{key}:call"), "call").await?;
    let mut said = AgentTurn {
        agent: agent.name.clone(),
        text: response.text.clone(),
        calls: calls_in(&response.raw),
        feedback: None,
    };
    if said.calls.is_empty() {
        // A model without native tool calling writes its calls as `TOOL_CALL:` lines.
        if let Some(read) = calls_in_text_also(&response.text, &offered(&agent.tools), &more) {
            (said.calls, said.text, said.feedback) = (read.calls, read.text, read.feedback);
        }
    }
    let content = turn_summary(&said);
    let calls: Vec<Value> = said.calls.iter().map(|c| json!({"tool_name": c.name, "args": c.args})).collect();
    d.step(&key, "agent_turn", || async move {
        Ok(Record::new(said, content).with("team_agent", json!(agent.name)).with("team_calls", Value::Array(calls)))
    })
    .await
}

fn turn_summary(said: &AgentTurn) -> String {
    let mut out = format!("**{}**: {}", said.agent, said.text.trim());
    if !said.calls.is_empty() {
        let names: Vec<&str> = said.calls.iter().map(|c| c.name.as_str()).collect();
        out.push_str(&format!("\n\nCalls: {}", names.join(", ")));
    }
    out
}

/// The agent's instructions: its role, and the run's own instructions.
fn system(spec: &RunSpec, agent: &TeamAgent) -> String {
    let mut out = format!("You are {}, a member of a team of agents. Your role: {}.", agent.name, agent.role);
    if let Some(theirs) = &spec.system {
        out.push_str("\n\n");
        out.push_str(theirs);
    }
    out
}

/// The turn's request, in sections one a line (a model without tool
/// calling, and the scripted one, read them too).
fn prompt(spec: &RunSpec, team: &Team, agent: &TeamAgent, at: &Position, more: &[ToolSignature]) -> String {
    let mut out = format!("You are `{}`, the team's {}.\nTeam:\n", agent.name, agent.role);
    for a in &team.agents {
        out.push_str(&format!("- {} ({})\n", a.name, a.role));
    }
    out.push_str(&format!("Task: {}\n", spec.prompt.trim()));
    out.push_str(&format!("Your turns so far: {}\n", at.turns_by.get(&agent.name).copied().unwrap_or(0)));
    if let Some((from, reason, context)) = &at.handed {
        out.push_str(&format!("Handed from: {from}\nReason: {reason}\nContext: {context}\n"));
    }
    if !at.notes.is_empty() {
        out.push_str("Notes:\n");
        for note in &at.notes {
            out.push_str(&format!("- {note}\n"));
        }
    }
    if let Some(flow) = &at.flow {
        out.push_str(&flow.prompt_lines());
    }
    if offered(&agent.tools).into_iter().any(consensus_tools::is_consensus) {
        out.push_str(&consensus_tools::prompt_lines(&at.consensus));
    }
    // The tools in the model family's template, with the text protocol for models without native tool calling.
    out.push_str(&toolbox_tools::tools_section(agent, &offered(&agent.tools), more));
    out.push('\n');
    out.push_str(match &at.flow {
        Some(_) => "End your workflow step as it says: the workflow, not `handoff`, picks the next agent.",
        None => "Call `handoff` to pass the turn; answer without a tool call when the team's work is done.",
    });
    out
}

enum Intercepted {
    Answer(String),
    Reshaped(Reshaped),
    Handoff { to: String, reason: String, context: Value },
}

/// One tool call, intercepted and journaled as a turn of its own.
async fn intercept(
    d: &mut Driver,
    team: &Team,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
    at: &mut Position,
    spec: &RunSpec,
) -> Step<Intercepted> {
    if toolbox_tools::is_toolbox_call(agent, call) {
        return toolbox_tools::intercept(d, agent, call, key).await.map(Intercepted::Answer);
    }
    let tools = offered(&agent.tools);
    let Some(tool) = BuiltinTool::named(&call.name).filter(|t| tools.contains(t)) else {
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        names.extend(agent.tools.iter().map(String::as_str).filter(|t| BuiltinTool::named(t).is_none()));
        let answer = format!("`{}` is not one of your tools; they are {}", call.name, names.join(", "));
        return tool_answer(d, agent, call, key, async move { Ok(answer) }).await.map(Intercepted::Answer);
    };
    if let (BuiltinTool::Handoff, Some(flow)) = (tool, &at.flow) {
        return pattern_steps::refuse_handoff(d, flow, agent, call, key).await.map(Intercepted::Answer);
    }
    if tool == BuiltinTool::Handoff {
        return handoff(d, team, agent, call, key).await;
    }
    if consensus_tools::is_consensus(tool) {
        let (state, settings) = (&mut at.consensus, spec.consensus.as_ref());
        let answer = consensus_tools::call(d, tool, team, agent, call, key, state, settings).await?;
        return Ok(Intercepted::Answer(answer));
    }
    match tool {
        BuiltinTool::ReportOutcome => {
            return pattern_steps::report(d, at.flow.as_mut(), agent, call, key).await.map(Intercepted::Answer)
        }
        BuiltinTool::ParallelHandoff => {
            return parallel::handoff(d, team, agent, call, key).await.map(Intercepted::Answer)
        }
        BuiltinTool::CreateTeam | BuiltinTool::ModifyTeam | BuiltinTool::DissolveTeam => {
            let subs = super::sub_team_change::for_call(d, key, &at.sub_teams).await?;
            return dynamic::call(d, tool, team, &subs, agent, call, key).await.map(Intercepted::Reshaped);
        }
        BuiltinTool::AskHuman => return hitl_tools::ask_human(d, agent, call, key).await.map(Intercepted::Answer),
        _ if plan_tools::is_plan_tool(tool) => {
            return plan_tools::call(d, tool, team, agent, call, key).await.map(Intercepted::Answer)
        }
        _ => {}
    }
    let (h, name, args) = (d.handle(), agent.name.clone(), call.args.clone());
    let work = async move {
        match tool {
            BuiltinTool::StoreMemory => memory::store(&h, &name, &args).await,
            BuiltinTool::RetrieveMemory => memory::retrieve(&h, &args).await,
            BuiltinTool::SearchMemory => memory::search(&h, &args).await,
            BuiltinTool::Handoff
            | BuiltinTool::ProposeDecision
            | BuiltinTool::VoteOnProposal
            | BuiltinTool::FinalizeConsensus
            | BuiltinTool::ReportOutcome
            | BuiltinTool::ParallelHandoff
            | BuiltinTool::CreateTeam
            | BuiltinTool::ModifyTeam
            | BuiltinTool::DissolveTeam
            | BuiltinTool::AskHuman
            | BuiltinTool::PlanRead
            | BuiltinTool::PlanAddTask
            | BuiltinTool::PlanUpdateTask
            | BuiltinTool::PlanAssignTask
            | BuiltinTool::PlanEstimateDuration
            | BuiltinTool::PlanSetDependencies => unreachable!("handled above"),
        }
    };
    tool_answer(d, agent, call, key, work).await.map(Intercepted::Answer)
}

/// Journals a tool's answer to the agent as a turn (a breakpoint on the tool call stops there).
async fn tool_answer(
    d: &mut Driver,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
    work: impl std::future::Future<Output = Step<String>>,
) -> Step<String> {
    let meta = json!({"tool_name": call.name, "args": call.args});
    d.step(key, "tool_call", || async move {
        let answer = work.await?;
        let content = format!("**{}** called `{}`: {answer}", agent.name, call.name);
        Ok(Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name)))
    })
    .await
}

/// `handoff(destination_agent, reason, context)`: checked against the team;
/// the context written to the run's memory; the turn passes.
async fn handoff(d: &mut Driver, team: &Team, agent: &TeamAgent, call: &ToolCall, key: &str) -> Step<Intercepted> {
    let to = text_arg(&call.args, "destination_agent").map(str::to_owned);
    let reason = text_arg(&call.args, "reason").unwrap_or("no reason given").to_owned();
    let context = call.args.get("context").cloned().unwrap_or(Value::Null);
    let known = to.as_deref().and_then(|t| team.agent(t)).filter(|t| t.name != agent.name);
    let h = d.handle();
    let from = agent.name.clone();
    let turn = key.split(':').nth(1).unwrap_or("0").to_owned();
    let names = team.names().join(", ");
    let handed = d
        .step(key, "handoff", || async move {
            let Some(dest) = known else {
                let why = match &to {
                    Some(t) if *t == from => "you already hold the turn".to_owned(),
                    Some(t) => format!("there is no agent `{t}`"),
                    None => "`destination_agent` is required".to_owned(),
                };
                let answer = format!("handoff refused: {why}; the agents are {names}");
                let content = format!("**{from}**'s handoff was refused: {why}.");
                let meta = json!({"tool_name": "handoff", "args": {"destination_agent": to}});
                return Ok(Record::new(Handed::Refused { answer }, content).with("tool_call", meta));
            };
            let entry = memory::handoff_entry(&from, &dest.name, &reason, &context);
            memory::put(&h, memory::Scope::Run, &format!("handoff:{turn}"), entry).await?;
            let content = format!("**{from}** handed off to **{}**: {reason}", dest.name);
            let meta = json!({"destination_agent": dest.name, "from": from, "reason": reason});
            let to = dest.name.clone();
            Ok(Record::new(Handed::Switched { from: from.clone(), to, reason, context }, content)
                .with("handoff", meta)
                .with("team_agent", json!(from)))
        })
        .await?;
    Ok(match handed {
        Handed::Switched { to, reason, context, .. } => Intercepted::Handoff { to, reason, context },
        Handed::Refused { answer } => Intercepted::Answer(answer),
    })
}

/// The team's answer under review: the result once accepted (or edited),
/// the reviewer's requested changes for the same agent on a retry.
async fn review_answer(
    d: &mut Driver,
    agent: &TeamAgent,
    said: &AgentTurn,
    at: &Position,
) -> Step<Result<Value, String>> {
    let tool = d.tool(&agent.tool)?;
    let key = format!("team:{}:answer", at.turn);
    let response = gatehouse_providers::ProviderResponse {
        provider: agent.provider.clone(),
        id: None,
        model: Some(agent.model.clone()),
        text: said.text.clone(),
        finish: gatehouse_providers::FinishReason::Stop,
        usage: None,
        raw: Value::Null,
        attempts: 1,
        latency_ms: 0,
    };
    let audited = d.audit(&tool, &response);
    let payload =
        gatehouse_providers::Payload::from_value(json!({"agent": agent.name, "role": agent.role})).unwrap_or_default();
    let mut gate = response_gate(&tool, &audited, &payload, 0.5);
    gate.text = format!(
        "Review the team's answer from **{}** ({}, on `{}`): accept it, edit the text, or retry with changes.",
        agent.name, agent.role, agent.tool
    );
    let gate = d.ask(&key, "response_review", gate).await?;
    let decision = decision_of(&gate);
    let result = |text: String, edited: bool| {
        json!({"text": text, "edited": edited, "agent": agent.name, "tool": agent.tool,
               "turns": at.turn, "handoffs": at.handoffs})
    };
    match decision.action {
        DecisionAction::Approve => Ok(Ok(result(audited.cleaned.clone(), false))),
        DecisionAction::Edit => {
            let text = edited_text(decision.payload.as_ref()).unwrap_or_else(|| audited.cleaned.clone());
            let edited = text != audited.cleaned;
            Ok(Ok(result(text, edited)))
        }
        DecisionAction::Retry => {
            let changes = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or("try again");
            Ok(Err(format!("The reviewer asked for changes to your answer: {changes}")))
        }
        _ => Err(Halt::Cancel(rejected("team's answer", decision.decided_by.as_str(), decision.text.as_deref()))),
    }
}

/// A pattern run's step after its agent's turn (see [`pattern_steps`]): a
/// review step's gate, the workflow moved on by the step's outcome; the
/// run's result once the workflow finishes (its last work reviewed like any
/// team answer, unless a person's review step ended it).
async fn flow_turn(d: &mut Driver, agent: &TeamAgent, said: &AgentTurn, at: &mut Position) -> Step<Option<Value>> {
    let Some(flow) = at.flow.as_mut() else {
        return Ok(None);
    };
    if said.calls.is_empty() && said.feedback.is_some() {
        // Broken tool calls: the agent is told why and takes the step again.
        return Ok(None);
    }
    let moved = pattern_steps::after_turn(d, flow, agent, &said.text, at.turn).await?;
    let workflow = flow.summary();
    let result = |text: String| {
        json!({"text": text, "edited": false, "agent": agent.name, "tool": agent.tool,
               "turns": at.turn, "handoffs": at.handoffs, "workflow": workflow})
    };
    match moved {
        Moved::Stayed(note) | Moved::On(note) => {
            at.notes.push(note);
            Ok(None)
        }
        Moved::Failed(reason) => Err(Halt::Fail(reason)),
        Moved::Finished { text, reviewed: true } => Ok(Some(result(text))),
        Moved::Finished { text, reviewed: false } => {
            let said = AgentTurn { agent: agent.name.clone(), text, calls: Vec::new(), feedback: None };
            match review_answer(d, agent, &said, at).await? {
                Ok(mut answer) => {
                    answer["workflow"] = workflow;
                    Ok(Some(answer))
                }
                Err(feedback) => {
                    at.notes.push(feedback);
                    Ok(None)
                }
            }
        }
    }
}
