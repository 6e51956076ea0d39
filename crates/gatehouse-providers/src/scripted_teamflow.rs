//! The scripted team member's consensus and workflow stories, read from an
//! agent turn's prompt like [`crate::scripted_team`] reads its own.
//!
//! - **Workflow** (a `Workflow step:` line): a work or check step's agent
//!   reports its outcome with `report_outcome` (a coder's success says
//!   whether it reworked the change after a rejected review); a review
//!   step's agent answers with its review, which people then decide.
//! - **Consensus** (the agent is offered `vote_on_proposal` or
//!   `propose_decision`): an architect proposes keeping the audit log in
//!   PostgreSQL (stakeholders: the other agents and the people `human:alice`
//!   and `human:bob`) and hands to the first voter; each voter votes with
//!   its role's reasoning and hands to the next voter, or back to the
//!   proposer; the proposer finalises once everyone voted, and answers once
//!   the proposal is decided.

use serde_json::{json, Value};

use crate::scripted_team::ScriptedToolCall;

/// The decision the scripted architect proposes.
pub const DECISION: &str = "Keep the audit log in PostgreSQL";

/// The answer for a workflow or consensus turn, or `None` when the prompt is neither.
pub fn turn(
    prompt: &str,
    name: &str,
    role: &str,
    members: &[(String, String)],
) -> Option<(String, Vec<ScriptedToolCall>)> {
    let task = line(prompt, "Task:").unwrap_or("the task");
    if let Some(step) = line(prompt, "Workflow step:") {
        return Some(workflow_turn(prompt, step, role, task));
    }
    let offered = |tool: &str| prompt.lines().any(|l| l.trim().starts_with(&format!("- {tool}(")));
    if offered("vote_on_proposal") || offered("propose_decision") {
        return consensus_turn(prompt, name, role, members);
    }
    None
}

fn workflow_turn(prompt: &str, step: &str, role: &str, task: &str) -> (String, Vec<ScriptedToolCall>) {
    let report = |outcome: &str, summary: String| {
        (summary.clone(), vec![("report_outcome".to_owned(), json!({"outcome": outcome, "summary": summary}))])
    };
    if step.contains("(review)") {
        return (format!("Reviewed the change for: {task}. It reads well; the tests cover it."), Vec::new());
    }
    let check = step.contains("(check)");
    if role.contains("deploy") {
        return report("success", format!("Deployed to production: {task}."));
    }
    if role.contains("coder") {
        let reworked = line(prompt, "Previous step:").is_some_and(|p| p.contains("ended in reject"));
        let summary = if reworked {
            format!("Reworked the change after the review: {task}.")
        } else {
            format!("Wrote the change for: {task}.")
        };
        return report(if check { "pass" } else { "success" }, summary);
    }
    report(if check { "pass" } else { "success" }, format!("Done: {task}."))
}

/// A proposal as the prompt lists it: `* p1 [open] by architect: DECISION | voters: a, b | votes: a approve`.
struct Listed {
    id: String,
    status: String,
    proposer: String,
    voters: Vec<String>,
    voted: Vec<String>,
}

fn proposals(prompt: &str) -> Vec<Listed> {
    prompt
        .lines()
        .filter_map(|l| l.trim().strip_prefix("* "))
        .filter_map(|l| {
            let (id, rest) = l.split_once(" [")?;
            let (status, rest) = rest.split_once("] by ")?;
            let (proposer, rest) = rest.split_once(": ")?;
            let mut parts = rest.split(" | ");
            let _decision = parts.next()?;
            let list = |part: Option<&str>, head: &str| -> Vec<String> {
                part.and_then(|p| p.strip_prefix(head))
                    .map(|p| {
                        p.split(", ")
                            .filter(|s| !s.is_empty())
                            .map(|s| s.split(' ').next().unwrap_or(s).to_owned())
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let voters = list(parts.next(), "voters: ");
            let voted = list(parts.next(), "votes: ");
            Some(Listed { id: id.to_owned(), status: status.to_owned(), proposer: proposer.to_owned(), voters, voted })
        })
        .collect()
}

fn handoff(to: &str, reason: &str, context: Value) -> ScriptedToolCall {
    ("handoff".to_owned(), json!({"destination_agent": to, "reason": reason, "context": context}))
}

fn consensus_turn(
    prompt: &str,
    name: &str,
    role: &str,
    members: &[(String, String)],
) -> Option<(String, Vec<ScriptedToolCall>)> {
    let listed = proposals(prompt);
    // A voter with an open proposal waiting for its vote votes, then hands on.
    if let Some(p) = listed
        .iter()
        .find(|p| p.status == "open" && p.voters.iter().any(|v| v == name) && !p.voted.iter().any(|v| v == name))
    {
        let (vote, reasoning) = reasoning(role);
        let next = p.voters.iter().find(|v| *v != name && !p.voted.contains(v)).unwrap_or(&p.proposer);
        let calls = vec![
            ("vote_on_proposal".to_owned(), json!({"proposal_id": p.id, "vote": vote, "reasoning": reasoning})),
            handoff(next, &format!("Your turn on {}.", p.id), json!({"proposal_id": p.id})),
        ];
        return Some((format!("Voted {vote} on {}: {reasoning}", p.id), calls));
    }
    if !role.contains("architect") {
        return None;
    }
    let Some(p) = listed.iter().find(|p| p.proposer == name) else {
        let voters: Vec<&String> = members.iter().map(|(n, _)| n).filter(|n| *n != name).collect();
        let mut stakeholders: Vec<Value> = voters.iter().map(|v| json!(v)).collect();
        stakeholders.extend([json!("human:alice"), json!("human:bob")]);
        let mut calls = vec![(
            "propose_decision".to_owned(),
            json!({"decision": DECISION, "rationale": "One database to back up, with the hash chain's integrity checks.",
                   "stakeholders": stakeholders}),
        )];
        calls.extend(voters.first().map(|v| handoff(v, "Please vote on my proposal.", json!({"proposal": DECISION}))));
        return Some((format!("Proposed: {DECISION}."), calls));
    };
    match p.status.as_str() {
        "open" if p.voters.iter().all(|v| p.voted.contains(v)) => Some((
            format!("Everyone voted on {}; finalising.", p.id),
            vec![("finalize_consensus".to_owned(), json!({"proposal_id": p.id}))],
        )),
        "agreed" => Some((format!("Agreed: {DECISION}. The team moves the audit log to PostgreSQL."), Vec::new())),
        "rejected" => Some((format!("Not agreed: {DECISION}. The audit log stays where it is."), Vec::new())),
        _ => Some((format!("Waiting on {}.", p.id), Vec::new())),
    }
}

/// A voter's vote and reasoning by its role.
fn reasoning(role: &str) -> (&'static str, &'static str) {
    if role.contains("security") {
        ("approve", "Row-level access and encrypted backups are already in place there.")
    } else if role.contains("operat") {
        ("abstain", "Either store is fine to run; no preference.")
    } else {
        ("approve", "It is the database we already run, so there is nothing new to operate.")
    }
}

/// The rest of the first line starting with `header`, trimmed.
fn line<'a>(prompt: &'a str, header: &str) -> Option<&'a str> {
    prompt.lines().find_map(|l| l.trim().strip_prefix(header)).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members() -> Vec<(String, String)> {
        ["architect", "backend", "security"].iter().map(|n| (n.to_string(), n.to_string())).collect()
    }

    const TOOLS: &str = "Tools:\n- handoff(...)\n- propose_decision(...)\n- vote_on_proposal(...)\n";

    #[test]
    fn the_architect_proposes_then_finalises_once_everyone_voted() {
        let (_, calls) = turn(TOOLS, "architect", "architect", &members()).unwrap();
        assert_eq!(calls[0].0, "propose_decision");
        assert_eq!(calls[0].1["stakeholders"], json!(["backend", "security", "human:alice", "human:bob"]));
        assert_eq!(calls[1].1["destination_agent"], "backend");
        let voted = format!("Proposals:\n* p1 [open] by architect: {DECISION} | voters: backend, security | votes: backend approve, security approve\n{TOOLS}");
        let (_, calls) = turn(&voted, "architect", "architect", &members()).unwrap();
        assert_eq!(calls[0], ("finalize_consensus".to_owned(), json!({"proposal_id": "p1"})));
        let agreed = voted.replace("[open]", "[agreed]");
        assert!(turn(&agreed, "architect", "architect", &members()).unwrap().1.is_empty());
    }

    #[test]
    fn a_voter_votes_with_its_reasoning_and_hands_to_the_next_voter_or_back() {
        let open =
            format!("Proposals:\n* p1 [open] by architect: {DECISION} | voters: backend, security | votes: \n{TOOLS}");
        let (_, calls) = turn(&open, "backend", "backend developer", &members()).unwrap();
        assert_eq!(calls[0].1["vote"], "approve");
        assert_eq!(calls[1].1["destination_agent"], "security");
        let one = open.replace("votes: ", "votes: backend approve");
        let (_, calls) = turn(&one, "security", "security reviewer", &members()).unwrap();
        assert_eq!(calls[1].1["destination_agent"], "architect");
    }

    #[test]
    fn a_workflow_step_reports_its_outcome_and_a_review_step_only_answers() {
        let p = "Task: ship\nWorkflow step: code (work): end it\nPrevious step: `review` (reviewer) ended in reject: rejected by alice";
        let (_, calls) = turn(p, "coder", "coder", &[]).unwrap();
        assert_eq!(calls[0].1, json!({"outcome": "success", "summary": "Reworked the change after the review: ship."}));
        let (_, calls) = turn("Workflow step: review (review): give", "reviewer", "reviewer", &[]).unwrap();
        assert!(calls.is_empty());
        assert!(turn("Task: x\nTools:\n- handoff(...)\n", "a", "coder", &[]).is_none());
    }
}
