//! Custom collaboration patterns: a team's workflow written as steps, each
//! run by one agent, with where to go next on each outcome:
//!
//! - a **work** step ends in success or failure (`next_on_success`, `next_on_failure`);
//! - a **review** step is a review gate a person decides (`next_on_approve`, `next_on_reject`);
//! - a **check** step passes or fails (`next_on_pass`, `next_on_fail`).
//!
//! A next step is named by its `step`, or by an agent of the team, meaning
//! that agent's first step. An outcome with no next step ends the workflow
//! (finished on success, approve and pass; failed otherwise).
//!
//! A pattern is checked when the run starts, every mistake naming its field
//! (`pattern.workflow[1].next_on_reject`): an unknown agent, a next step
//! that is neither a step nor an agent with one, a step mixing two kinds of
//! outcome, a duplicate step, a step no path from the first one reaches,
//! and a loop with no way out (steps from which no outcome ever ends the
//! workflow).

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::SpecError;

/// The most steps a workflow may have.
pub const MAX_STEPS: usize = 200;

/// A team's workflow, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workflow {
    /// Its name (`code_review_cycle`).
    pub name: String,
    /// Its steps; the first runs first.
    pub steps: Vec<Step>,
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Its name, unique in the workflow (`code_review`).
    pub step: String,
    /// The agent that runs it.
    pub agent: String,
    /// Which outcomes it has.
    pub kind: StepKind,
    /// Where each outcome leads: the index of the next step, or the end.
    pub next: [Option<usize>; 2],
}

/// What a step ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamStepKind))]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Success or failure.
    Work,
    /// A person's approval or rejection (a review gate).
    Review,
    /// A check that passes or fails.
    Check,
}

impl StepKind {
    /// The fields of its two outcomes, the good one first.
    pub fn fields(self) -> [&'static str; 2] {
        match self {
            Self::Work => ["next_on_success", "next_on_failure"],
            Self::Review => ["next_on_approve", "next_on_reject"],
            Self::Check => ["next_on_pass", "next_on_fail"],
        }
    }
}

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Success, approval or a pass.
    Good,
    /// Failure, rejection or a fail.
    Bad,
}

/// Where a workflow goes after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// On to this step.
    Step(usize),
    /// The workflow ends, finished (`true`) or failed.
    End { finished: bool },
}

impl Workflow {
    /// Where the workflow goes after step `at` ended in `outcome`.
    pub fn next(&self, at: usize, outcome: Outcome) -> Next {
        let slot = match outcome {
            Outcome::Good => 0,
            Outcome::Bad => 1,
        };
        match self.steps.get(at).and_then(|s| s.next[slot]) {
            Some(step) => Next::Step(step),
            None => Next::End { finished: outcome == Outcome::Good },
        }
    }

    /// The step called `name`.
    pub fn step(&self, name: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.step == name)
    }
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

const ALL_NEXT: [&str; 6] =
    ["next_on_success", "next_on_failure", "next_on_approve", "next_on_reject", "next_on_pass", "next_on_fail"];

/// Reads and checks a pattern (`{"name", "type": "custom", "workflow": [...]}`)
/// at `field` for a team whose agents are `agents`.
pub fn parse(value: &Value, field: &str, agents: &[&str]) -> Result<Workflow, SpecError> {
    let Some(obj) = value.as_object() else {
        return Err(bad(field, "must be an object: {\"name\", \"type\": \"custom\", \"workflow\": [steps]}"));
    };
    if let Some(kind) = obj.get("type").filter(|t| !t.is_null()) {
        if kind.as_str() != Some("custom") {
            return Err(bad(format!("{field}.type"), "must be \"custom\" (the only kind of pattern a workflow is)"));
        }
    }
    let name = match obj.get("name") {
        None | Some(Value::Null) => "custom".to_owned(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
        Some(_) => return Err(bad(format!("{field}.name"), "must be a non-blank string")),
    };
    let Some(list) = obj.get("workflow").and_then(Value::as_array).filter(|l| !l.is_empty()) else {
        return Err(bad(format!("{field}.workflow"), "is required: a non-empty list of steps"));
    };
    if list.len() > MAX_STEPS {
        return Err(bad(format!("{field}.workflow"), format!("has {} steps; at most {MAX_STEPS}", list.len())));
    }
    let raw = list
        .iter()
        .enumerate()
        .map(|(i, entry)| raw_step(entry, &format!("{field}.workflow[{i}]"), agents))
        .collect::<Result<Vec<_>, _>>()?;
    let steps = link(&raw, field)?;
    let workflow = Workflow { name, steps };
    reachable(&workflow, field)?;
    escapable(&workflow, field)?;
    Ok(workflow)
}

/// A step as written: its targets not yet resolved.
struct RawStep {
    step: String,
    agent: String,
    kind: StepKind,
    targets: [Option<String>; 2],
}

fn raw_step(entry: &Value, field: &str, agents: &[&str]) -> Result<RawStep, SpecError> {
    let Some(obj) = entry.as_object() else {
        return Err(bad(field, "must be an object: {\"step\", \"agent\", \"next_on_...\"}"));
    };
    if let Some(unknown) =
        obj.keys().find(|k| !matches!(k.as_str(), "step" | "agent") && !ALL_NEXT.contains(&k.as_str()))
    {
        return Err(bad(
            format!("{field}.{unknown}"),
            format!("is not a step's field; a step has step, agent and {}", ALL_NEXT.join(", ")),
        ));
    }
    let text = |key: &str| match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        _ => Err(bad(format!("{field}.{key}"), "is required: a non-blank string")),
    };
    let step = text("step")?;
    let agent = text("agent")?;
    if !agents.contains(&agent.as_str()) {
        return Err(bad(
            format!("{field}.agent"),
            format!("no agent `{agent}` in the team; it has {}", agents.join(", ")),
        ));
    }
    let used: Vec<StepKind> = [StepKind::Work, StepKind::Review, StepKind::Check]
        .into_iter()
        .filter(|kind| kind.fields().iter().any(|f| obj.get(*f).is_some_and(|v| !v.is_null())))
        .collect();
    let kind = match used.as_slice() {
        [] => StepKind::Work,
        [one] => *one,
        [a, b, ..] => {
            return Err(bad(
                field,
                format!(
                "mixes {} with {}: a step is work (success/failure), a review (approve/reject) or a check (pass/fail)",
                a.fields().join("/"),
                b.fields().join("/")
            ),
            ))
        }
    };
    let mut targets = [None, None];
    for (slot, key) in kind.fields().into_iter().enumerate() {
        targets[slot] = match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(_) => return Err(bad(format!("{field}.{key}"), "must name a step or an agent")),
        };
    }
    Ok(RawStep { step, agent, kind, targets })
}

/// Resolves every target to a step: a step by name, or an agent's first step.
fn link(raw: &[RawStep], field: &str) -> Result<Vec<Step>, SpecError> {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, s) in raw.iter().enumerate() {
        if let Some(first) = by_name.insert(&s.step, i) {
            return Err(bad(
                format!("{field}.workflow[{i}].step"),
                format!("`{}` is already the name of workflow[{first}]", s.step),
            ));
        }
    }
    let first_of_agent = |agent: &str| raw.iter().position(|s| s.agent == agent);
    raw.iter()
        .enumerate()
        .map(|(i, s)| {
            let mut next = [None, None];
            for (slot, target) in s.targets.iter().enumerate() {
                let Some(target) = target else { continue };
                let found = by_name.get(target.as_str()).copied().or_else(|| first_of_agent(target));
                next[slot] = Some(found.ok_or_else(|| {
                    bad(
                        format!("{field}.workflow[{i}].{}", s.kind.fields()[slot]),
                        format!(
                            "`{target}` is neither a step nor an agent with a step; the steps are {}",
                            raw.iter().map(|r| r.step.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?);
            }
            Ok(Step { step: s.step.clone(), agent: s.agent.clone(), kind: s.kind, next })
        })
        .collect()
}

/// Every step can be reached from the first.
fn reachable(workflow: &Workflow, field: &str) -> Result<(), SpecError> {
    let mut seen = vec![false; workflow.steps.len()];
    let mut queue = VecDeque::from([0]);
    seen[0] = true;
    while let Some(at) = queue.pop_front() {
        for next in workflow.steps[at].next.into_iter().flatten() {
            if !seen[next] {
                seen[next] = true;
                queue.push_back(next);
            }
        }
    }
    match seen.iter().position(|s| !s) {
        Some(i) => Err(bad(
            format!("{field}.workflow[{i}]"),
            format!(
                "no path from the first step (`{}`) reaches step `{}`",
                workflow.steps[0].step, workflow.steps[i].step
            ),
        )),
        None => Ok(()),
    }
}

/// From every step some path ends the workflow: no loop without a way out.
fn escapable(workflow: &Workflow, field: &str) -> Result<(), SpecError> {
    let n = workflow.steps.len();
    // Steps with an outcome that ends the workflow, then backwards to whatever leads to them.
    let mut exits: Vec<bool> = workflow.steps.iter().map(|s| s.next.iter().any(Option::is_none)).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..n {
            if !exits[i] && workflow.steps[i].next.iter().flatten().any(|&j| exits[j]) {
                exits[i] = true;
                changed = true;
            }
        }
    }
    match exits.iter().position(|e| !e) {
        Some(i) => {
            let caught: Vec<&str> = (0..n).filter(|&j| !exits[j]).map(|j| workflow.steps[j].step.as_str()).collect();
            Err(bad(
                format!("{field}.workflow[{i}]"),
                format!(
                    "steps {} loop with no way out: give one of them an outcome that ends the workflow",
                    caught.join(", ")
                ),
            ))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TEAM: [&str; 4] = ["coder", "reviewer", "tester", "deployer"];

    fn review_cycle() -> Value {
        json!({
            "name": "code_review_cycle",
            "type": "custom",
            "workflow": [
                {"step": "code_generation", "agent": "coder", "next_on_success": "code_review"},
                {"step": "code_review", "agent": "reviewer", "next_on_approve": "testing", "next_on_reject": "coder"},
                {"step": "testing", "agent": "tester", "next_on_pass": "deployment", "next_on_fail": "coder"},
                {"step": "deployment", "agent": "deployer"}
            ]
        })
    }

    fn err(pattern: Value) -> SpecError {
        parse(&pattern, "pattern", &TEAM).unwrap_err()
    }

    #[test]
    fn the_design_documents_review_cycle_is_read_and_walks_as_written() {
        let w = parse(&review_cycle(), "pattern", &TEAM).unwrap();
        assert_eq!(w.name, "code_review_cycle");
        let kinds: Vec<StepKind> = w.steps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [StepKind::Work, StepKind::Review, StepKind::Check, StepKind::Work]);
        assert_eq!(w.next(0, Outcome::Good), Next::Step(1));
        assert_eq!(w.next(0, Outcome::Bad), Next::End { finished: false });
        // `coder` names an agent: its first step.
        assert_eq!(w.next(1, Outcome::Bad), Next::Step(0));
        assert_eq!(w.next(2, Outcome::Good), Next::Step(3));
        assert_eq!(w.next(2, Outcome::Bad), Next::Step(0));
        assert_eq!(w.next(3, Outcome::Good), Next::End { finished: true });
        assert_eq!(w.step("testing"), Some(2));
    }

    #[test]
    fn an_unknown_agent_or_target_names_its_field_and_what_there_is() {
        let mut p = review_cycle();
        p["workflow"][2]["agent"] = json!("qa");
        let e = err(p);
        assert_eq!(e.field, "pattern.workflow[2].agent");
        assert!(e.message.contains("coder, reviewer, tester, deployer"), "{}", e.message);
        let mut p = review_cycle();
        p["workflow"][0]["next_on_failure"] = json!("error_handler");
        let e = err(p);
        assert_eq!(e.field, "pattern.workflow[0].next_on_failure");
        assert!(e.message.contains("`error_handler` is neither a step nor an agent"), "{}", e.message);
    }

    #[test]
    fn a_step_mixing_kinds_a_duplicate_and_a_typo_are_refused() {
        let mut p = review_cycle();
        p["workflow"][1]["next_on_success"] = json!("testing");
        let e = err(p);
        assert_eq!(e.field, "pattern.workflow[1]");
        assert!(e.message.starts_with("mixes next_on_success/next_on_failure with next_on_approve/next_on_reject"));
        let mut p = review_cycle();
        p["workflow"][3]["step"] = json!("testing");
        assert_eq!(err(p).field, "pattern.workflow[3].step");
        let mut p = review_cycle();
        p["workflow"][0]["next_on_sucess"] = json!("code_review");
        assert_eq!(err(p).field, "pattern.workflow[0].next_on_sucess");
        assert_eq!(err(json!({"type": "parallel", "workflow": []})).field, "pattern.type");
        assert_eq!(err(json!({"workflow": []})).field, "pattern.workflow");
    }

    #[test]
    fn a_step_no_path_reaches_is_refused() {
        let mut p = review_cycle();
        p["workflow"][2]["next_on_pass"] = Value::Null;
        let e = err(p);
        assert_eq!(e.field, "pattern.workflow[3]");
        assert_eq!(e.message, "no path from the first step (`code_generation`) reaches step `deployment`");
    }

    #[test]
    fn a_loop_with_no_way_out_is_refused_and_one_with_an_exit_is_not() {
        let closed = json!({"workflow": [
            {"step": "write", "agent": "coder", "next_on_success": "check", "next_on_failure": "write"},
            {"step": "check", "agent": "tester", "next_on_pass": "write", "next_on_fail": "write"}
        ]});
        let e = err(closed);
        assert_eq!(e.field, "pattern.workflow[0]");
        assert!(e.message.starts_with("steps write, check loop with no way out"), "{}", e.message);
        let open = json!({"workflow": [
            {"step": "write", "agent": "coder", "next_on_success": "check", "next_on_failure": "write"},
            {"step": "check", "agent": "tester", "next_on_fail": "write"}
        ]});
        let w = parse(&open, "pattern", &TEAM).unwrap();
        assert_eq!(w.next(1, Outcome::Good), Next::End { finished: true });
    }
}
