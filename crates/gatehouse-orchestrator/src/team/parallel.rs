//! Parallel work in a team run: `parallel_handoff(agents, tasks,
//! coordination_strategy)` gives each named agent its task as a sub-run of
//! the run (`parent_run_id`), a one-agent team run the orchestrator drives
//! side by side with the others; the calling agent waits at a sync point
//! until the strategy is met, then reads every branch's answer in its next
//! turn. A branch's answer is not reviewed on its own: it goes to the
//! coordinating agent, whose team answer a reviewer reviews.
//!
//! Strategies: `wait_all` (the default: every branch has ended) and
//! `first_answer` (the first branch to answer; the others are cancelled).
//! Branches are found again by their key before any is started, so a run
//! driven again after a restart starts no branch twice; pausing or
//! cancelling the run reaches its branches through the engine's sub-runs.

use gatehouse_engine::{NewRun, Run, RunId, RunStatus, Turn};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::driver::{Driver, Halt, Handle, Record, Step};
use crate::spec::RunSpec;

use super::tools::{text_arg, ToolCall};
use super::{Team, TeamAgent};

/// The coordination strategies `parallel_handoff` supports.
pub const STRATEGIES: [&str; 2] = ["wait_all", "first_answer"];
/// The most branches one call starts.
pub const MAX_BRANCHES: usize = 8;
/// How deep branches may start branches of their own (a branch of a branch is depth 2).
pub const MAX_DEPTH: u32 = 2;
/// The longest task.
const MAX_TASK: usize = 4000;

/// What marks a sub-run as a parallel branch (kept in its stored input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Branch {
    /// The run whose agent handed off.
    pub parent: String,
    /// The journal key of the call that started it (`team:3:tool:0`).
    pub key: String,
    /// Its place in the call's list.
    pub index: usize,
    /// The coordinating agent.
    pub lead: String,
    /// How deep it is (a branch of the run is 1).
    pub depth: u32,
}

/// A checked call: the branches to start and how to wait for them.
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    agents: Vec<TeamAgent>,
    tasks: Vec<String>,
    strategy: String,
    /// The team but the caller: a branch's agent leads a team of them, so
    /// it may hand off, or hand off in parallel one level deeper.
    others: Vec<TeamAgent>,
}

/// Reads a call's arguments against the team; the refusal is the agent's answer.
fn plan(args: &Value, team: &Team, caller: &str, depth: u32) -> Result<Plan, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("parallel handoffs nest at most {MAX_DEPTH} deep; this branch is {depth} deep"));
    }
    let strategy = text_arg(args, "coordination_strategy").unwrap_or("wait_all").to_owned();
    if !STRATEGIES.contains(&strategy.as_str()) {
        return Err(format!(
            "`coordination_strategy`: `{strategy}` is not supported; the strategies are {}",
            STRATEGIES.join(", ")
        ));
    }
    let list = |name: &str| -> Result<Vec<String>, String> {
        let items = args.get(name).and_then(Value::as_array).ok_or(format!("`{name}` must be a list of strings"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, v)| match v.as_str().map(str::trim) {
                Some(s) if !s.is_empty() => Ok(s.to_owned()),
                _ => Err(format!("`{name}[{i}]` must be a non-blank string")),
            })
            .collect()
    };
    let (names, tasks) = (list("agents")?, list("tasks")?);
    if names.is_empty() {
        return Err("`agents` must name at least one agent".into());
    }
    if names.len() != tasks.len() {
        return Err(format!("`tasks` has {} entries for {} agents; give one task per agent", tasks.len(), names.len()));
    }
    if names.len() > MAX_BRANCHES {
        return Err(format!("`agents` names {} agents; at most {MAX_BRANCHES} work in parallel", names.len()));
    }
    let mut agents = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        match team.agent(name) {
            Some(a) if a.name == caller => {
                return Err(format!("`agents[{i}]`: you coordinate the branches and wait for them; name others"));
            }
            Some(a) => agents.push(a.clone()),
            None => {
                return Err(format!(
                    "`agents[{i}]`: there is no agent `{name}`; the agents are {}",
                    team.names().join(", ")
                ))
            }
        }
    }
    if let Some(i) = tasks.iter().position(|t| t.chars().count() > MAX_TASK) {
        return Err(format!("`tasks[{i}]` is longer than {MAX_TASK} characters"));
    }
    let others = team.agents.iter().filter(|a| a.name != caller).cloned().collect();
    Ok(Plan { agents, tasks, strategy, others })
}

/// One branch as the sync point saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ParallelBranchState))]
pub struct BranchResult {
    /// The agent.
    pub agent: String,
    /// Its task.
    pub task: String,
    /// Its sub-run.
    pub run_id: String,
    /// How the sub-run ended (`completed`, `cancelled`, `failed`).
    pub status: String,
    /// Its answer, or why it has none.
    pub answer: String,
}

/// What the sync point journals: the strategy and every branch.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Synced {
    answer: String,
    strategy: String,
    branches: Vec<BranchResult>,
}

/// `parallel_handoff`: starts (or finds again) each branch, then waits at
/// the sync point; the answer lists every branch's outcome. Each is a
/// journaled step under `key` (`KEY:branches`, then `KEY`).
pub(crate) async fn handoff(
    d: &mut Driver,
    team: &Team,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
) -> Step<String> {
    let meta = json!({"tool_name": call.name, "args": call.args});
    let spec = stored_spec(d).await?;
    let depth = spec.branch.as_ref().map_or(0, |b| b.depth);
    let checked = plan(&call.args, team, &agent.name, depth);
    let plan = match checked {
        Ok(plan) => plan,
        Err(why) => {
            let answer = format!("parallel_handoff refused: {why}");
            let content = format!("**{}**'s parallel handoff was refused: {why}.", agent.name);
            return d
                .step(key, "tool_call", || async move {
                    Ok(Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name)))
                })
                .await;
        }
    };
    let ids = start_branches(d, &spec, &plan, &agent.name, key, depth).await?;
    let h = d.handle();
    let strategy = plan.strategy.clone();
    let synced: Synced = d
        .step(key, "sync_point", || async move {
            let runs = sync(&h, &ids, &strategy).await?;
            let branches: Vec<BranchResult> = plan
                .agents
                .iter()
                .zip(&plan.tasks)
                .zip(&runs)
                .map(|((a, task), run)| result_of(&a.name, task, run))
                .collect();
            let answer = answer(&strategy, &branches);
            let content = format!("**{}** passed the sync point ({strategy}):\n{}", agent.name, lines(&branches));
            let sync = json!({"key": key, "strategy": strategy, "lead": agent.name, "branches": branches});
            let value = Synced { answer, strategy, branches };
            Ok(Record::new(value, content)
                .with("tool_call", meta)
                .with("team_agent", json!(agent.name))
                .with("parallel_sync", sync))
        })
        .await?;
    Ok(synced.answer)
}

/// The run's stored input.
async fn stored_spec(d: &Driver) -> Step<RunSpec> {
    let id = d.run_id.clone();
    let run = d.engine(move |e| e.run(&id)).await?;
    serde_json::from_value(run.input).map_err(|e| Halt::Fail(format!("the run's stored input cannot be read: {e}")))
}

/// Starts each branch not started yet under `key`, journaled as one step listing them.
async fn start_branches(
    d: &mut Driver,
    spec: &RunSpec,
    plan: &Plan,
    lead: &str,
    key: &str,
    depth: u32,
) -> Step<Vec<RunId>> {
    let h = d.handle();
    let ids: Vec<String> = d
        .step(&format!("{key}:branches"), "parallel_branches", || async move {
            let parent = h.run_id.clone();
            let mut ids = Vec::with_capacity(plan.agents.len());
            for (index, (agent, task)) in plan.agents.iter().zip(&plan.tasks).enumerate() {
                let mark = Branch {
                    parent: parent.to_string(),
                    key: key.to_owned(),
                    index,
                    lead: lead.to_owned(),
                    depth: depth + 1,
                };
                let mut members = vec![agent.clone()];
                members.extend(plan.others.iter().filter(|a| a.name != agent.name).cloned());
                let branch = Team { agents: members };
                ids.push(start_branch(&h, spec, branch, task, mark).await?.to_string());
            }
            let listed: Vec<Value> = plan
                .agents
                .iter()
                .zip(&plan.tasks)
                .zip(&ids)
                .map(|((a, t), id)| json!({"agent": a.name, "task": t, "run_id": id}))
                .collect();
            let content = format!(
                "**{lead}** handed {} task(s) out in parallel ({}); it waits at the sync point.",
                ids.len(),
                plan.strategy
            );
            let meta = json!({"key": key, "lead": lead, "strategy": plan.strategy, "branches": listed});
            Ok(Record::new(ids, content).with("parallel", meta).with("team_agent", json!(lead)))
        })
        .await?;
    for id in &ids {
        d.handle().drive_also(RunId::from_string(id.clone()));
    }
    Ok(ids.into_iter().map(RunId::from_string).collect())
}

/// The branch's sub-run: found again by its mark, else created and started.
/// `team`'s first agent is the branch's.
async fn start_branch(h: &Handle, spec: &RunSpec, team: Team, task: &str, mark: Branch) -> Step<RunId> {
    let agent = team.agents.first().cloned().ok_or_else(|| Halt::Fail("a branch without an agent".into()))?;
    let branch_spec = RunSpec {
        tool: agent.tool.clone(),
        prompt: task.to_owned(),
        system: spec.system.clone(),
        inputs: spec.inputs.clone(),
        collaborate: None,
        assessment: None,
        wait_for_start: false,
        answer_template: None,
        team: Some(team),
        pattern: None,
        consensus: spec.consensus.clone(),
        branch: Some(mark.clone()),
        plan: None,
    };
    let input =
        serde_json::to_value(&branch_spec).map_err(|e| Halt::Fail(format!("a branch cannot be stored: {e}")))?;
    let parent = h.run_id.clone();
    let short: String = task.chars().take(60).collect();
    let title = format!("{} (branch of {}): {short}", agent.name, mark.lead);
    h.engine(move |e| {
        let found = e.child_runs(&parent)?.into_iter().find(|r| is_branch(r, &mark));
        let run = match found {
            Some(run) => run,
            None => {
                let up = e.run(&parent)?;
                let new = NewRun {
                    title,
                    agent: crate::AGENT.to_owned(),
                    user_id: up.user_id.clone(),
                    session_id: up.session_id.clone(),
                    parent_run_id: Some(parent.clone()),
                    hitl_config: up.hitl_config.clone(),
                    step_mode: up.step_mode,
                    breakpoints: up.control.breakpoints.clone(),
                    input,
                    ..NewRun::default()
                };
                e.create_run(new, crate::AGENT)?
            }
        };
        if run.status == RunStatus::Created {
            e.start_run(&run.id, crate::AGENT)?;
        }
        Ok(run.id)
    })
    .await
}

/// Whether `run` is the branch `mark` names.
fn is_branch(run: &Run, mark: &Branch) -> bool {
    let found = run.input.get("branch").cloned().and_then(|b| serde_json::from_value::<Branch>(b).ok());
    found.is_some_and(|b| b.key == mark.key && b.index == mark.index)
}

/// Waits until the branches meet `strategy`; their runs then. With
/// `first_answer`, the branches still going are cancelled.
async fn sync(h: &Handle, ids: &[RunId], strategy: &str) -> Step<Vec<Run>> {
    let first = strategy == "first_answer";
    loop {
        let mut events = h.orchestrator().engine.live_events();
        let (parent, branches) = (h.run_id.clone(), ids.to_vec());
        let runs = h
            .engine(move |e| {
                let up = e.run(&parent)?;
                let runs = branches.iter().map(|id| e.run(id)).collect::<Result<Vec<_>, _>>()?;
                Ok((up, runs))
            })
            .await?;
        let (up, runs) = runs;
        if up.status.is_terminal() {
            return Err(Halt::Ended);
        }
        let all = runs.iter().all(|r| r.status.is_terminal());
        let answered = runs.iter().any(|r| r.status == RunStatus::Completed);
        if all || (first && answered) {
            if !all {
                cancel_others(h, &runs).await?;
                let ids = ids.to_vec();
                return h.engine(move |e| ids.iter().map(|id| e.run(id)).collect::<Result<Vec<_>, _>>()).await;
            }
            return Ok(runs);
        }
        let watched: Vec<RunId> = std::iter::once(h.run_id.clone()).chain(ids.iter().cloned()).collect();
        let heard = async move {
            loop {
                match events.recv().await {
                    Ok(event) if event.body.run_id.as_ref().is_some_and(|r| watched.contains(r)) => return,
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => return,
                    Err(RecvError::Closed) => std::future::pending::<()>().await,
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), heard).await;
    }
}

async fn cancel_others(h: &Handle, runs: &[Run]) -> Step<()> {
    let live: Vec<RunId> = runs.iter().filter(|r| !r.status.is_terminal()).map(|r| r.id.clone()).collect();
    h.engine(move |e| {
        for id in &live {
            // A branch that ended meanwhile (it answered too) is left as it ended.
            if let Err(refused) = e.cancel_run(id, crate::AGENT, Some("another branch answered first (first_answer)")) {
                if !e.run(id)?.status.is_terminal() {
                    return Err(refused);
                }
            }
        }
        Ok(())
    })
    .await
}

fn result_of(agent: &str, task: &str, run: &Run) -> BranchResult {
    let answer = match (&run.result, run.status) {
        (Some(result), RunStatus::Completed) => {
            result.get("text").and_then(Value::as_str).map(str::to_owned).unwrap_or_else(|| result.to_string())
        }
        _ => run.status_reason.clone().unwrap_or_else(|| "no answer".to_owned()),
    };
    BranchResult {
        agent: agent.to_owned(),
        task: task.to_owned(),
        run_id: run.id.to_string(),
        status: run.status.as_str().to_owned(),
        answer,
    }
}

fn lines(branches: &[BranchResult]) -> String {
    let line = |b: &BranchResult| format!("- {} on `{}`: {}: {}", b.agent, b.task, b.status, b.answer.trim());
    branches.iter().map(line).collect::<Vec<_>>().join("\n")
}

fn answer(strategy: &str, branches: &[BranchResult]) -> String {
    format!("parallel_handoff ({strategy}): the branches' answers:\n{}", lines(branches))
}

/// A branch's answer, unreviewed: it goes to the coordinating agent.
pub(crate) fn branch_result(agent: &TeamAgent, text: &str, turns: u32) -> Value {
    json!({"text": text, "edited": false, "agent": agent.name, "tool": agent.tool, "turns": turns, "branch": true})
}

/// One `parallel_handoff` as the team view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ParallelGroupState))]
pub struct ParallelGroup {
    /// The run's turn that started the branches.
    pub turn: u32,
    /// The coordinating agent, waiting at the sync point.
    pub lead: String,
    /// `wait_all` or `first_answer`.
    pub strategy: String,
    /// Whether the sync point was passed.
    pub synced: bool,
    /// The branches, each with its sub-run's status now.
    pub branches: Vec<BranchResult>,
}

/// Every `parallel_handoff` of the run, with each branch's status read from `children`.
pub fn groups(turns: &[Turn], children: &[Run]) -> Vec<ParallelGroup> {
    let synced: Vec<&Value> = turns.iter().filter_map(|t| t.metadata.get("parallel_sync")).collect();
    turns
        .iter()
        .filter(|t| t.actor == crate::AGENT && t.metadata["step"] == "parallel_branches")
        .filter_map(|t| {
            let p = t.metadata.get("parallel")?;
            let key = p.get("key")?.as_str()?;
            let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            let branches = p
                .get("branches")?
                .as_array()?
                .iter()
                .map(|b| {
                    let id = text(b, "run_id");
                    let run = children.iter().find(|r| r.id.as_str() == id);
                    let answer = run
                        .and_then(|r| r.result.as_ref())
                        .and_then(|r| r.get("text"))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let status = run.map_or("unknown", |r| r.status.as_str()).to_owned();
                    BranchResult { agent: text(b, "agent"), task: text(b, "task"), run_id: id, status, answer }
                })
                .collect();
            Some(ParallelGroup {
                turn: t.index,
                lead: text(p, "lead"),
                strategy: text(p, "strategy"),
                synced: synced.iter().any(|s| s["key"] == key),
                branches,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_providers::ProviderRegistry;

    fn team() -> Team {
        let registry = ProviderRegistry::from_lookup(|_| None).unwrap();
        let member = |n: &str| json!({"name": n, "role": "researcher", "provider": "scripted", "model": "chat"});
        super::super::parse(&json!([member("lead"), member("a"), member("b")]), &registry).unwrap()
    }

    fn refused(args: Value, depth: u32) -> String {
        plan(&args, &team(), "lead", depth).unwrap_err()
    }

    #[test]
    fn a_call_is_checked_against_the_team_and_its_lists() {
        let ok = plan(&json!({"agents": ["a", "b"], "tasks": ["x", "y"]}), &team(), "lead", 0).unwrap();
        assert_eq!((ok.agents.len(), ok.strategy.as_str()), (2, "wait_all"));
        let unknown = refused(json!({"agents": ["a", "zed"], "tasks": ["x", "y"]}), 0);
        assert!(unknown.contains("`agents[1]`: there is no agent `zed`; the agents are lead, a, b"), "{unknown}");
        let mismatch = refused(json!({"agents": ["a", "b"], "tasks": ["x"]}), 0);
        assert!(mismatch.contains("`tasks` has 1 entries for 2 agents"), "{mismatch}");
        let strategy = refused(json!({"agents": ["a"], "tasks": ["x"], "coordination_strategy": "vote"}), 0);
        assert!(strategy.contains("the strategies are wait_all, first_answer"), "{strategy}");
        let nested = refused(json!({"agents": ["a"], "tasks": ["x"]}), MAX_DEPTH);
        assert!(nested.contains("nest at most 2 deep"), "{nested}");
        assert!(refused(json!({"agents": ["lead"], "tasks": ["x"]}), 0).contains("you coordinate"));
        assert!(refused(json!({"agents": [], "tasks": []}), 0).contains("at least one"));
        assert!(refused(json!({"agents": "a", "tasks": ["x"]}), 0).contains("`agents` must be a list"));
    }
}
