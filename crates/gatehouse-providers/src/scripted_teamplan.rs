//! The scripted team member's plan story, read from an agent turn's prompt
//! like [`crate::scripted_team`] reads its own: a planner (offered
//! `plan_add_task`) writes the team's plan on its first turn, one task per
//! member (the coder writes the change, the tester tests it, the deployer
//! deploys it to production, each depending on the one before), and hands
//! to the coder; the coder, tester and deployer then play the team story,
//! their tasks following their turns. A tester offered `plan_update_task`
//! marks its task `blocked` when tests fail (see [`blocked_call`]), so the
//! task is taken up again on its next turn rather than completed.

use serde_json::{json, Value};

use crate::scripted_team::ScriptedToolCall;

/// The tasks the planner adds, by the role that does each.
pub const PLANNED: [(&str, &str); 3] =
    [("coder", "Write the change"), ("tester", "Test the change"), ("deployer", "Deploy the change to production")];

/// Whether the prompt offers `tool` in its tools section.
fn offered(prompt: &str, tool: &str) -> bool {
    prompt.lines().any(|l| l.trim().starts_with(&format!("- {tool}(")))
}

/// The planner's answer, or `None` when the agent is not a planner offered the plan tools.
pub fn turn(
    prompt: &str,
    name: &str,
    role: &str,
    members: &[(String, String)],
) -> Option<(String, Vec<ScriptedToolCall>)> {
    if !role.contains("planner") || !offered(prompt, "plan_add_task") {
        return None;
    }
    let of = |wanted: &str| members.iter().find(|(n, r)| r.contains(wanted) && n != name).map(|(n, _)| n.clone());
    let mut calls: Vec<ScriptedToolCall> = Vec::new();
    let mut previous: Option<String> = None;
    for (i, (role, description)) in PLANNED.iter().enumerate() {
        let Some(agent) = of(role) else { continue };
        let dependencies: Vec<String> = previous.iter().cloned().collect();
        let args = json!({"description": description, "priority": "high", "dependencies": dependencies,
                          "assigned_agent": agent});
        calls.push(("plan_add_task".to_owned(), args));
        previous = Some(format!("task_{:03}", i + 1));
    }
    let first = of("coder").or_else(|| members.iter().find(|(n, _)| n != name).map(|(n, _)| n.clone()));
    if let Some(to) = first {
        let args =
            json!({"destination_agent": to, "reason": "The plan is written.", "context": {"tasks": calls.len()}});
        calls.push(("handoff".to_owned(), args));
    }
    Some((format!("Planned {} task(s).", calls.len().saturating_sub(1)), calls))
}

/// The task the prompt says the agent holds (`Your task: ID: ...`).
pub fn task_of(prompt: &str) -> Option<&str> {
    let rest = prompt.split_once("Your task: ")?.1;
    rest.split(':').next().map(str::trim).filter(|id| !id.is_empty())
}

/// A tester's call marking its task `blocked` by the failing tests, when
/// it holds a task and is offered `plan_update_task`.
pub fn blocked_call(prompt: &str, report: &Value) -> Option<ScriptedToolCall> {
    let task = task_of(prompt).filter(|_| offered(prompt, "plan_update_task"))?;
    Some(("plan_update_task".to_owned(), json!({"task_id": task, "status": "blocked", "metadata": report})))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members() -> Vec<(String, String)> {
        ["planner", "coder", "tester", "deployer"].iter().map(|r| (format!("{r}-1"), r.to_string())).collect()
    }

    #[test]
    fn the_planner_adds_one_task_per_member_then_hands_to_the_coder() {
        let prompt = "You are `planner-1`.\n- plan_add_task(description: str): add";
        let (_, calls) = turn(prompt, "planner-1", "planner", &members()).unwrap();
        assert_eq!(calls.len(), 4);
        assert_eq!(calls[2].1["dependencies"], json!(["task_002"]));
        assert_eq!(calls[2].1["assigned_agent"], "deployer-1");
        assert_eq!(calls[3].1["destination_agent"], "coder-1");
        assert!(turn("no tools", "planner-1", "planner", &members()).is_none());
    }

    #[test]
    fn a_tester_holding_a_task_marks_it_blocked() {
        let prompt = "Notes:\n- Your task: task_002: Test the change\n- plan_update_task(task_id: str): x";
        assert_eq!(task_of(prompt), Some("task_002"));
        let (_, args) = blocked_call(prompt, &json!({"failing_tests": ["a"]})).unwrap();
        assert_eq!(args["status"], "blocked");
        assert!(blocked_call("Your task: task_002: x", &json!({})).is_none(), "not offered the tool");
    }
}
