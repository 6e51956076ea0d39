//! The scripted provider's team member: a canned agent of an orchestrated
//! team run that answers an agent turn's prompt (as the orchestrator
//! writes it: `You are `NAME`, the team's ROLE.`, the team, the task, the
//! agent's turns so far and what it was handed) with text and native tool
//! calls, in the shape of an OpenAI chat completion. Deterministic: the
//! same prompt always gets the same answer.
//!
//! The story it plays, by role: a coder writes the change and hands to the
//! tester; the tester finds failing tests on its first turn (noting the
//! report in the team's memory) and hands back to the coder, then passes
//! and hands to the deployer; the deployer deploys and answers.
//!
//! With a plan, a planner writes it first (`scripted_teamplan.rs`).
//!
//! The parallel research sweep: a lead hands each researcher of the team
//! one angle of the task at once (`parallel_handoff`), waits at the sync
//! point, and writes the summary of their findings once handed them.

use serde_json::{json, Value};

/// A tool call the scripted model makes: the tool's name and its arguments.
pub type ScriptedToolCall = (String, Value);

/// The scripted team member's answer to `prompt`, or `None` when the
/// prompt is not a team agent's turn.
pub fn team_turn(prompt: &str) -> Option<(String, Vec<ScriptedToolCall>)> {
    let first = prompt.lines().next()?.trim();
    let rest = first.strip_prefix("You are `")?;
    let (name, after) = rest.split_once('`')?;
    let role = after.trim().strip_prefix(", the team's ")?.trim_end_matches('.').to_lowercase();
    let members = members(prompt);
    if let Some(found) = crate::scripted_teamflow::turn(prompt, name, &role, &members) {
        return Some(found);
    }
    if let Some(found) = crate::scripted_teamplan::turn(prompt, name, &role, &members) {
        return Some(found);
    }
    let task = line_value(prompt, "Task:").unwrap_or("the task");
    let turns: u32 = line_value(prompt, "Your turns so far:").and_then(|n| n.parse().ok()).unwrap_or(0);
    let handed = line_value(prompt, "Context:").unwrap_or("");
    let to = |wanted: &str| members.iter().find(|(n, r)| r.contains(wanted) && n != name).map(|(n, _)| n.clone());
    let handoff = |to: String, reason: &str, context: Value| {
        ("handoff".to_owned(), json!({"destination_agent": to, "reason": reason, "context": context}))
    };
    if role.contains("coder") {
        let (text, reason) = if handed.contains("failing_tests") {
            (format!("Fixed the failing tests for: {task}."), "The failing tests are fixed, please test again.")
        } else {
            (format!("Wrote the change for: {task}."), "The change is written, ready for testing.")
        };
        let calls =
            to("tester").map(|t| handoff(t, reason, json!({"files_modified": ["app.rs"]}))).into_iter().collect();
        return Some((text, calls));
    }
    if role.contains("tester") {
        if turns == 0 {
            let report = json!({"failing_tests": ["login_rejects_a_bad_password", "logout_clears_the_session"]});
            let mut calls =
                vec![("store_memory".to_owned(), json!({"key": "test_report", "value": report, "scope": "team"}))];
            calls.extend(crate::scripted_teamplan::blocked_call(prompt, &report));
            calls.extend(to("coder").map(|c| handoff(c, "Two tests fail.", report.clone())));
            return Some(("Ran the tests: 2 of 14 fail.".to_owned(), calls));
        }
        let calls = to("deployer")
            .map(|d| handoff(d, "All tests pass.", json!({"tests": "14 of 14 pass"})))
            .into_iter()
            .collect();
        return Some(("Ran the tests again: all 14 pass.".to_owned(), calls));
    }
    if role.contains("researcher") {
        return Some((format!("Findings on {task}: three sources agree, one disagrees."), Vec::new()));
    }
    if role.contains("lead") {
        return Some(lead_turn(prompt, task, &members, name));
    }
    if role.contains("deployer") {
        return Some((format!("Deployed to production: {task}."), Vec::new()));
    }
    Some((format!("Done: {task}."), Vec::new()))
}

/// The angles a lead hands its researchers, in turn.
const ANGLES: [&str; 3] = ["prior work", "open-source tools", "benchmarks"];

/// The lead of a research sweep: hands out the angles, then sums the findings up.
fn lead_turn(prompt: &str, task: &str, members: &[(String, String)], name: &str) -> (String, Vec<ScriptedToolCall>) {
    if prompt.contains("parallel_handoff (") {
        let found = prompt.lines().filter(|l| l.contains(": completed: ")).count();
        return (
            format!("Summary of the research on {task}: {found} researchers reported; the findings mostly agree."),
            Vec::new(),
        );
    }
    let researchers: Vec<&str> =
        members.iter().filter(|(n, r)| r.contains("researcher") && n != name).map(|(n, _)| n.as_str()).collect();
    if researchers.is_empty() {
        return (format!("Researched {task} alone."), Vec::new());
    }
    let tasks: Vec<String> =
        researchers.iter().enumerate().map(|(i, _)| format!("{} for {task}", ANGLES[i % ANGLES.len()])).collect();
    let call = json!({"agents": researchers, "tasks": tasks, "coordination_strategy": "wait_all"});
    (format!("Handing out {} angles of {task}.", researchers.len()), vec![("parallel_handoff".to_owned(), call)])
}

/// The team's members as `- NAME (ROLE)` lines: names and lowercased roles
/// (the lines between `Team:` and `Task:`, when the prompt has them).
fn members(prompt: &str) -> Vec<(String, String)> {
    let team = prompt.split_once("\nTeam:\n").map_or(prompt, |(_, rest)| rest);
    let team = team.split_once("\nTask:").map_or(team, |(list, _)| list);
    team.lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| {
            let (name, role) = l.split_once(" (")?;
            Some((name.trim().to_owned(), role.trim_end_matches(')').to_lowercase()))
        })
        .collect()
}

/// The rest of the first line starting with `header`, trimmed.
fn line_value<'a>(prompt: &'a str, header: &str) -> Option<&'a str> {
    prompt.lines().find_map(|l| l.trim().strip_prefix(header)).map(str::trim)
}

/// A chat completion carrying `text` and `calls`, as OpenAI's API answers.
pub fn completion(id: &str, model: &str, text: &str, calls: &[ScriptedToolCall]) -> Value {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("{id}-call-{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    let mut message = json!({"role": "assistant", "content": text});
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    json!({"id": id, "object": "chat.completion", "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": finish}]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(name: &str, role: &str, turns: u32, context: &str) -> String {
        format!(
            "You are `{name}`, the team's {role}.\nTeam:\n- c (coder)\n- t (tester)\n- d (deployer)\nTask: ship it\nYour turns so far: {turns}\nContext: {context}"
        )
    }

    #[test]
    fn the_tester_fails_once_then_hands_to_the_deployer() {
        let (_, calls) = team_turn(&prompt("t", "tester", 0, "")).unwrap();
        assert_eq!(calls[0].0, "store_memory");
        assert_eq!(calls[1].1["destination_agent"], "c");
        let (_, calls) = team_turn(&prompt("t", "tester", 1, "")).unwrap();
        assert_eq!(calls[0].1["destination_agent"], "d");
    }

    #[test]
    fn the_coder_fixes_what_it_was_handed_and_the_deployer_answers() {
        let (text, _) = team_turn(&prompt("c", "coder", 1, "{\"failing_tests\": []}")).unwrap();
        assert!(text.starts_with("Fixed the failing tests"), "{text}");
        let (text, calls) = team_turn(&prompt("d", "deployer", 0, "")).unwrap();
        assert_eq!((text.as_str(), calls.len()), ("Deployed to production: ship it.", 0));
        assert!(team_turn("Restate the goal").is_none());
    }

    #[test]
    fn the_lead_hands_out_angles_then_sums_the_findings_up() {
        let team = "You are `lead`, the team's lead.\nTeam:\n- lead (lead)\n- r1 (researcher)\n- r2 (researcher)\nTask: caching\n";
        let (_, calls) = team_turn(team).unwrap();
        assert_eq!(calls[0].0, "parallel_handoff");
        assert_eq!(calls[0].1["agents"], json!(["r1", "r2"]));
        assert_eq!(calls[0].1["tasks"][1], "open-source tools for caching");
        let handed = format!("{team}Notes:\n- parallel_handoff (wait_all): the branches' answers:\n- r1 on `x`: completed: F\n- r2 on `y`: completed: G\n");
        let (text, calls) = team_turn(&handed).unwrap();
        assert!(calls.is_empty() && text.contains("2 researchers reported"), "{text}");
        let (text, _) = team_turn("You are `r1`, the team's researcher.\nTask: benchmarks for caching\n").unwrap();
        assert!(text.starts_with("Findings on benchmarks for caching"), "{text}");
    }

    #[test]
    fn a_completion_carries_its_calls_as_openai_does() {
        let body = completion("x", "m", "hi", &[("handoff".into(), json!({"destination_agent": "t"}))]);
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        let args = body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].as_str().unwrap();
        assert_eq!(serde_json::from_str::<Value>(args).unwrap()["destination_agent"], "t");
    }
}
