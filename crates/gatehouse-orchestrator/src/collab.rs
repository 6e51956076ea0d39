//! Goal and plan collaboration inside an orchestrated run: the model evaluates
//! the goal and the reviewer refines it round after round until accepting
//! it; the model writes a plan, which the reviewer modifies (with feedback
//! or by editing it), approves, or rejects (ending the run cleanly); then
//! the approved plan runs task by task (`execution.rs`), asking where its
//! execution mode and intervention points say. The plan lives in
//! Gatehouse, so each round is a plan revision with its change log.

use gatehouse_engine::plan::{Plan, PlanOperation, PlanTask, TaskPriority, TaskStatus};
use gatehouse_engine::{DecisionAction, GateSpec, NewGate};
use gatehouse_providers::{Payload, ProviderError, RunInput, Tool};
use serde_json::{json, Map, Value};

use crate::driver::{decision_of, Driver, Halt, Step};
use crate::flow::{call_until_answered, recover_payload, rejected};
use crate::spec::{Collaboration, RunSpec};
use crate::AGENT;

/// The most tasks taken from a model's plan.
const MAX_TASKS: usize = 50;

/// Goal, then plan, then execution.
pub(crate) async fn collaborate(d: &mut Driver, spec: &RunSpec, phases: Collaboration) -> Step<Value> {
    let tool = d.tool(&spec.tool)?;
    let goal = if phases.goal { agree_goal(d, spec, &tool).await? } else { spec.prompt.clone() };
    if !phases.plan {
        let output =
            generate(d, &tool, "execute", "task", request(spec, TASK_SYSTEM, task_request(&goal, None, &goal, &[])))
                .await?;
        return Ok(json!({"goal": goal, "outputs": [{"task_id": null, "description": goal, "output": output}]}));
    }
    agree_plan(d, spec, &tool, &goal, &phases).await?;
    crate::execution::execute(d, spec, &tool, &goal).await
}

const GOAL_SYSTEM: &str = "You help a person pin down a goal before any work starts. Restate the goal as one \
    clear, checkable paragraph. Keep what was accepted; change what the feedback criticises. Answer with the goal only.";
const PLAN_SYSTEM: &str = "You plan the work for an agreed goal. Write the plan as a numbered list, one task per \
    line, 3 to 8 tasks, each an imperative sentence. No other text.";
pub(crate) const TASK_SYSTEM: &str = "You carry out one task of an approved plan toward a goal. Answer with the \
    task's result only. If the task cannot be done, answer `TASK FAILED: ` and why. To revise the tasks still to do, \
    answer a JSON object instead: {\"output\": \"the result\", \"replan\": [\"the next task\", \"the one after\"]}.";

pub(crate) fn request(spec: &RunSpec, system: &str, prompt: String) -> RunInput {
    RunInput { tool: spec.tool.clone(), prompt, system: Some(system.to_owned()), inputs: spec.inputs.clone() }
}

fn sections(parts: &[(&str, Option<&str>)]) -> String {
    parts
        .iter()
        .filter_map(|(name, body)| body.filter(|b| !b.trim().is_empty()).map(|b| format!("{name}:\n{}", b.trim())))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Evaluate, present, refine with feedback, until accepted.
async fn agree_goal(d: &mut Driver, spec: &RunSpec, tool: &Tool) -> Step<String> {
    let mut current: Option<String> = None;
    let mut feedback: Option<String> = None;
    for round in 1u32.. {
        let prompt = format!(
            "Restate the goal clearly.\n\n{}",
            sections(&[
                ("Goal", Some(current.as_deref().unwrap_or(&spec.prompt))),
                ("Feedback", feedback.as_deref()),
                ("Request", current.is_some().then_some(spec.prompt.as_str())),
            ])
        );
        let key = format!("goal:{round}");
        let goal = generate(d, tool, &key, "goal", request(spec, GOAL_SYSTEM, prompt)).await?;
        let goal = if goal.trim().is_empty() { current.clone().unwrap_or_else(|| spec.prompt.clone()) } else { goal };
        let text = match round {
            1 => format!("**Goal, round 1.** Accept it, or refine it with feedback:\n\n{goal}"),
            n => format!("**Goal, round {n}**, refined with your feedback. Accept it, or refine it again:\n\n{goal}"),
        };
        let mut gate = NewGate::new(GateSpec::GoalReview { goal: Value::String(goal.clone()), round }, text);
        gate.context.step = Some("goal_review".into());
        gate.context.task_description = Some(spec.prompt.chars().take(500).collect());
        let gate = d.ask(&format!("{key}:review"), "goal_review", gate).await?;
        let decision = decision_of(&gate);
        match decision.action {
            DecisionAction::NeedsRevision => {
                feedback = decision.text.clone();
                current = Some(goal);
            }
            DecisionAction::Reject => {
                return Err(Halt::Cancel(rejected("goal", decision.decided_by.as_str(), decision.text.as_deref())))
            }
            _ => return Ok(goal),
        }
    }
    unreachable!("the rounds end by accepting or rejecting")
}

/// Generate, present, modify, until approved; a rejection ends the run.
async fn agree_plan(d: &mut Driver, spec: &RunSpec, tool: &Tool, goal: &str, phases: &Collaboration) -> Step<()> {
    let mut feedback: Option<String> = None;
    for round in 1u32.. {
        let current = current_plan(d).await?;
        let listed = current.as_ref().map(numbered);
        let prompt = format!(
            "Write the plan as a numbered list.\n\n{}",
            sections(&[("Goal", Some(goal)), ("Current plan", listed.as_deref()), ("Feedback", feedback.as_deref())])
        );
        let key = format!("plan:{round}");
        let text = generate(d, tool, &key, "plan", request(spec, PLAN_SYSTEM, prompt)).await?;
        let revise_key = format!("{key}:revision");
        if !d.journaled(&revise_key) {
            let mut plan = parse_plan(&text, goal);
            plan.execution_mode = phases.execution_mode;
            plan.human_intervention_points = phases.human_intervention_points.clone();
            let id = d.run_id.clone();
            let revision = d.engine(move |e| e.plan_apply(&id, PlanOperation::Replace { plan }, AGENT)).await?;
            let changes = if revision.change_log.is_empty() {
                "no changes".to_owned()
            } else {
                revision.change_log.iter().map(|c| format!("- {c}")).collect::<Vec<_>>().join("\n")
            };
            let content =
                format!("Plan revision {} ({} tasks):\n{changes}", revision.revision, revision.plan.tasks.len());
            d.note(&revise_key, content, json!({"step": "plan", "plan_revision": revision.revision})).await?;
        }
        let plan = current_plan(d).await?.unwrap_or_default();
        let id = d.run_id.clone();
        let revision = d.engine(move |e| e.plan(&id)).await?.map(|r| r.revision);
        let note = "Approve it, modify it (edit it, or ask for changes), or reject it to end the run.";
        let mut gate = NewGate::plan_propose(&plan, revision, round, Some(note));
        gate.context.step = Some("plan_review".into());
        gate.context.task_description = Some(goal.chars().take(500).collect());
        let gate = d.ask(&format!("{key}:review"), "plan_review", gate).await?;
        let decision = decision_of(&gate);
        match decision.action {
            // An edit is a modified plan, approved: the engine made it the run's plan.
            DecisionAction::Approve | DecisionAction::Edit => return Ok(()),
            DecisionAction::NeedsRevision => feedback = decision.text.clone(),
            _ => return Err(Halt::Cancel(rejected("plan", decision.decided_by.as_str(), decision.text.as_deref()))),
        }
    }
    unreachable!("the rounds end by approving or rejecting")
}

pub(crate) async fn current_plan(d: &Driver) -> Step<Option<Plan>> {
    let id = d.run_id.clone();
    Ok(d.engine(move |e| e.plan(&id)).await?.map(|r| r.plan))
}

fn numbered(plan: &Plan) -> String {
    plan.tasks.iter().enumerate().map(|(i, t)| format!("{}. {}", i + 1, t.description)).collect::<Vec<_>>().join("\n")
}

pub(crate) fn task_request(goal: &str, plan: Option<&Plan>, task: &str, done: &[(String, String)]) -> String {
    let listed = plan.map(numbered);
    let done: Vec<String> =
        done.iter().map(|(t, out)| format!("- {t}: {}", out.chars().take(400).collect::<String>())).collect();
    let done = (!done.is_empty()).then(|| done.join("\n"));
    format!(
        "Carry out one task of the approved plan.\n\n{}",
        sections(&[("Goal", Some(goal)), ("Plan", listed.as_deref()), ("Done", done.as_deref()), ("Task", Some(task))])
    )
}

/// One model request: prepare, validate (an invalid payload is the
/// error/retry gate), call until answered, audit; the cleaned text.
pub(crate) async fn generate(d: &mut Driver, tool: &Tool, key: &str, step: &str, input: RunInput) -> Step<String> {
    let payload = match d.prepare(&input) {
        Ok(payload) => payload,
        Err(error) => {
            let example = Payload::from(tool.example_input.clone());
            recover_payload(d, tool, &error, example, &format!("{key}:prepare")).await?
        }
    };
    let report = d.validate(tool, &payload);
    let payload = if report.valid {
        payload
    } else {
        let error = ProviderError::InvalidPayload { tool: tool.name.clone(), report };
        recover_payload(d, tool, &error, payload, &format!("{key}:invalid")).await?
    };
    let (response, _) = call_until_answered(d, tool, payload, key, step).await?;
    Ok(d.audit(tool, &response).cleaned)
}

/// A model's plan as tasks: its numbered or bulleted lines (else its
/// non-empty lines, else the goal), each depending on the one before.
pub(crate) fn parse_plan(text: &str, goal: &str) -> Plan {
    let marked: Vec<String> = text.lines().filter_map(strip_marker).collect();
    let mut items = if marked.is_empty() {
        text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
    } else {
        marked
    };
    if items.is_empty() {
        items.push(goal.to_owned());
    }
    items.truncate(MAX_TASKS);
    let tasks = items
        .into_iter()
        .enumerate()
        .map(|(i, description)| PlanTask {
            task_id: format!("task_{:03}", i + 1),
            description: description.chars().take(500).collect(),
            status: TaskStatus::Pending,
            assigned_agent: Some(AGENT.to_owned()),
            priority: TaskPriority::default(),
            dependencies: if i == 0 { Vec::new() } else { vec![format!("task_{i:03}")] },
            estimated_duration: None,
            metadata: Map::new(),
        })
        .collect();
    Plan { tasks, success_criteria: vec![goal.chars().take(500).collect()], ..Plan::default() }
}

/// A list item's text without its marker (`1.`, `2)`, `-`, `*`, `•`).
fn strip_marker(line: &str) -> Option<String> {
    let line = line.trim();
    let rest = if let Some(rest) = line.strip_prefix(['-', '*', '•']) {
        rest
    } else {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        let after = &line[digits..];
        if digits == 0 || !(after.starts_with('.') || after.starts_with(')')) {
            return None;
        }
        &after[1..]
    };
    let rest = rest.trim();
    (!rest.is_empty()).then(|| rest.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_and_bulleted_plans_become_chained_tasks() {
        let plan = parse_plan("Here is the plan:\n1. Gather notes\n2) Draft the post\n- Publish it\n\nThanks", "Ship");
        let described: Vec<&str> = plan.tasks.iter().map(|t| t.description.as_str()).collect();
        assert_eq!(described, ["Gather notes", "Draft the post", "Publish it"]);
        assert_eq!(plan.tasks[2].dependencies, ["task_002"]);
        assert!(plan.tasks[0].dependencies.is_empty());
        assert_eq!(plan.validate(), Ok(()));
    }

    #[test]
    fn a_plan_without_markers_uses_its_lines_or_the_goal() {
        let plan = parse_plan("Gather notes\nDraft the post", "Ship");
        assert_eq!(plan.tasks.len(), 2);
        let plan = parse_plan("  \n", "Ship the beta");
        assert_eq!(plan.tasks[0].description, "Ship the beta");
        assert_eq!(strip_marker("2024 was a year"), None);
        assert_eq!(strip_marker("3. A step").as_deref(), Some("A step"));
    }
}
