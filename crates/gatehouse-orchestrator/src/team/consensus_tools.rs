//! Consensus in a team run's loop: the built-in `propose_decision`,
//! `vote_on_proposal` and `finalize_consensus` calls, intercepted and
//! answered over [`crate::consensus`]'s state, which is journaled with each
//! call (the whole state after it, so a run driven again after a restart
//! rebuilds it from the journal and repeats nothing).
//!
//! When a proposal names people among its stakeholders (`human`,
//! `human:NAME`), or the run input asks for it (`consensus: {"people_decide":
//! true}`), finalising opens a **quorum gate** for people: the proposal, each
//! vote and its reasoning are its text and payload; named people are its
//! deciders; it needs `consensus.quorum` approvals (default: every person
//! named, or one) and any rejection rejects it. The people's decision is the
//! outcome, and the agent that finalised is told it, with each person's vote.

use gatehouse_engine::{DecisionAction, GateSpec, NewGate, Quorum, Turn};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::consensus::{Consensus, Finalized, Proposal, ProposalStatus, Vote};
use crate::driver::{decision_of, Driver, Record, Step};
use crate::spec::SpecError;

use super::tools::{BuiltinTool, ToolCall};
use super::{Team, TeamAgent};

/// The most approvals a people's quorum may need.
pub const MAX_QUORUM: u32 = 20;
/// The longest person's name a proposal may give (what a gate's decider may be).
const MAX_PERSON: usize = 128;

/// The run input's `consensus`: how the team's proposals are finalised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsensusSettings {
    /// Every finalised proposal goes to people, whoever its stakeholders are.
    #[serde(default)]
    pub people_decide: bool,
    /// Approvals the people's quorum gate needs (default: every person the
    /// proposal names, or one when it names only `human`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quorum: Option<u32>,
}

fn bad(field: &str, message: impl Into<String>) -> SpecError {
    SpecError { field: field.to_owned(), message: message.into() }
}

/// Reads the run input's `consensus` (absent: agents' votes decide unless people are named).
pub fn parse_settings(value: Option<&Value>, has_team: bool) -> Result<Option<ConsensusSettings>, SpecError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    if !has_team {
        return Err(bad("consensus", "applies to a team run: give the run a `team`"));
    }
    let Some(obj) = value.as_object() else {
        return Err(bad("consensus", "must be an object: {\"people_decide\": true|false, \"quorum\": N}"));
    };
    if let Some(key) = obj.keys().find(|k| !matches!(k.as_str(), "people_decide" | "quorum")) {
        return Err(bad(&format!("consensus.{key}"), "is not a consensus setting; they are people_decide and quorum"));
    }
    let people_decide = match obj.get("people_decide") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("consensus.people_decide", "must be true or false")),
    };
    let quorum = match obj.get("quorum") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().filter(|n| (1..=u64::from(MAX_QUORUM)).contains(n)) {
            Some(n) => Some(n as u32),
            None => return Err(bad("consensus.quorum", format!("must be a whole number from 1 to {MAX_QUORUM}"))),
        },
    };
    Ok(Some(ConsensusSettings { people_decide, quorum }))
}

/// Whether `tool` is one of the consensus tools this file answers.
pub(crate) fn is_consensus(tool: BuiltinTool) -> bool {
    matches!(tool, BuiltinTool::ProposeDecision | BuiltinTool::VoteOnProposal | BuiltinTool::FinalizeConsensus)
}

/// A consensus call as journaled: the answer and the proposals after it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Called {
    answer: String,
    proposals: Consensus,
    /// A proposal handed to people, with the quorum gate's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    to_people: Option<(String, String)>,
}

/// One person's vote at a proposal's quorum gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamPeopleVote))]
pub struct PeopleVote {
    /// Who voted.
    pub reviewer: String,
    /// For (`true`) or against.
    pub approve: bool,
    /// Why, if they said.
    pub reason: Option<String>,
}

/// One consensus call by `agent`, answered and journaled under `key`; a
/// proposal handed to people waits for their quorum gate here.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call(
    d: &mut Driver,
    tool: BuiltinTool,
    team: &Team,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
    state: &mut Consensus,
    settings: Option<&ConsensusSettings>,
) -> Step<String> {
    let called = answer(tool, team, agent, &call.args, state, settings);
    let content = format!("**{}** called `{}`: {}", agent.name, call.name, called.answer);
    let meta = json!({"tool_name": call.name, "args": call.args});
    let called: Called = d
        .step(key, "tool_call", || async move {
            let proposals = json!(called.proposals.proposals);
            Ok(Record::new(called, content)
                .with("tool_call", meta)
                .with("team_agent", json!(agent.name))
                .with("consensus", proposals))
        })
        .await?;
    *state = called.proposals;
    let Some((id, text)) = called.to_people else {
        return Ok(called.answer);
    };
    let decided = people_decide(d, key, &id, text, state, settings).await?;
    Ok(format!("{}\n{decided}", called.answer))
}

/// The call's answer and the state after it (unchanged when refused).
fn answer(
    tool: BuiltinTool,
    team: &Team,
    agent: &TeamAgent,
    args: &Value,
    state: &Consensus,
    settings: Option<&ConsensusSettings>,
) -> Called {
    let mut next = state.clone();
    let names = team.names();
    let people_decide = settings.is_some_and(|s| s.people_decide);
    let done: Result<(String, Option<(String, String)>), String> = match tool {
        BuiltinTool::ProposeDecision => check_people(args)
            .and_then(|()| next.propose(&agent.name, args, &names))
            .map(|id| (proposed(&next, &id), None)),
        BuiltinTool::VoteOnProposal => next.vote(&agent.name, args).map(|()| (voted(&next, &agent.name), None)),
        BuiltinTool::FinalizeConsensus => next.finalize(args, people_decide, &names).map(|f| finalized(&next, args, f)),
        _ => Err(format!("`{}` is not a consensus tool", tool.name())),
    };
    match done {
        Ok((answer, to_people)) => Called { answer: format!("{}: {answer}", tool.name()), proposals: next, to_people },
        Err(e) => Called { answer: format!("{}: {e}", tool.name()), proposals: state.clone(), to_people: None },
    }
}

/// People named as stakeholders must be names a gate can take as its deciders.
fn check_people(args: &Value) -> Result<(), String> {
    let names = args.get("stakeholders").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for name in names.map(str::trim) {
        if let Some(who) = name.strip_prefix("human:") {
            if who.trim().chars().count() > MAX_PERSON {
                return Err(format!("a person's name is at most {MAX_PERSON} characters"));
            }
        }
    }
    Ok(())
}

fn proposal<'c>(state: &'c Consensus, id: &str) -> Option<&'c Proposal> {
    state.proposals.iter().find(|p| p.id == id)
}

fn proposed(state: &Consensus, id: &str) -> String {
    let Some(p) = proposal(state, id) else { return format!("proposal {id} is open") };
    let mut out = format!("proposal {id} is open: \"{}\"", p.decision);
    if !p.agents.is_empty() {
        out.push_str(&format!("; its voters are {}", p.agents.join(", ")));
    }
    if !p.people.is_empty() {
        out.push_str(&format!("; people decide it once finalised ({})", p.people.join(", ")));
    }
    out
}

fn voted(state: &Consensus, agent: &str) -> String {
    let Some(p) = state.proposals.iter().rev().find(|p| p.ballots.iter().any(|b| b.agent == agent)) else {
        return "your vote is counted".to_owned();
    };
    let waiting: Vec<&str> =
        p.agents.iter().filter(|a| !p.ballots.iter().any(|b| &b.agent == *a)).map(String::as_str).collect();
    if waiting.is_empty() {
        format!("your vote on {} is counted; every voter has voted: finalize_consensus closes it", p.id)
    } else {
        format!("your vote on {} is counted; still to vote: {}", p.id, waiting.join(", "))
    }
}

fn finalized(state: &Consensus, args: &Value, f: Finalized) -> (String, Option<(String, String)>) {
    let id = args.get("proposal_id").and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    match f {
        Finalized::Decided { agreed, tally: (yes, no, abstain) } => {
            let verdict = if agreed { "agreed" } else { "not agreed" };
            (format!("{id} is {verdict} ({yes} for, {no} against, {abstain} abstaining)"), None)
        }
        Finalized::ToPeople { text } => {
            let who = proposal(state, &id).map(|p| p.people.join(", ")).filter(|p| !p.is_empty());
            let answer = format!("{id} goes to people ({}) at a quorum gate", who.as_deref().unwrap_or("human"));
            (answer, Some((id, text)))
        }
    }
}

/// The quorum gate for a proposal handed to people: asked under `KEY:people`,
/// its decision noted with the proposals after it; the agent's answer.
async fn people_decide(
    d: &mut Driver,
    key: &str,
    id: &str,
    text: String,
    state: &mut Consensus,
    settings: Option<&ConsensusSettings>,
) -> Step<String> {
    let Some(p) = proposal(state, id).cloned() else {
        return Ok(format!("{id} is gone"));
    };
    let gate = d.ask(&format!("{key}:people"), "consensus", quorum_gate(&p, text, settings)).await?;
    let decision = decision_of(&gate);
    let agreed = decision.action == DecisionAction::Approve;
    let votes: Vec<PeopleVote> = gate
        .votes
        .iter()
        .map(|v| PeopleVote {
            reviewer: v.reviewer.clone(),
            approve: v.action == DecisionAction::Approve,
            reason: v.reason.clone().filter(|r| !r.trim().is_empty()),
        })
        .collect();
    state.decided_by_people(id, agreed);
    let listed: Vec<String> = votes
        .iter()
        .map(|v| {
            let how = if v.approve { "approves" } else { "rejects" };
            let why = v.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
            format!("{} {how}{why}", v.reviewer)
        })
        .collect();
    let verdict = if agreed { "agreed to" } else { "rejected" };
    let answer = format!("people {verdict} {id} ({})", listed.join("; "));
    let meta = json!({
        "consensus": state.proposals,
        "consensus_people": {"proposal": id, "agreed": agreed, "votes": votes, "gate_id": gate.id},
    });
    d.note(&format!("{key}:people:outcome"), format!("The people {verdict} {id}: {}", p.decision), meta).await?;
    Ok(answer)
}

/// The people's quorum gate: an approval of the proposal, never passed by a policy.
fn quorum_gate(p: &Proposal, text: String, settings: Option<&ConsensusSettings>) -> NewGate {
    let named: Vec<String> =
        p.people.iter().filter_map(|who| who.strip_prefix("human:")).map(|w| w.trim().to_owned()).collect();
    let wanted = settings.and_then(|s| s.quorum);
    let required = match (named.len() as u32, wanted) {
        (0, want) => want.unwrap_or(1),
        (n, want) => want.unwrap_or(n).min(n),
    };
    let mut gate = NewGate::new(GateSpec::Approval { action: format!("consensus {}", p.id) }, text);
    gate.requires_human = true;
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Reject];
    gate.quorum = Some(Quorum { required, rejections_to_reject: 1 });
    gate.deciders = named;
    gate.payload = Some(json!({"proposal": p}));
    gate.context.step = Some("consensus".to_owned());
    gate
}

/// A proposal as a reviewer sees it: the agents' ballots and, once people
/// decided it, their votes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamProposal))]
pub struct ProposalView {
    /// The proposal, its ballots and status.
    #[serde(flatten)]
    pub proposal: Proposal,
    /// The people's votes at its quorum gate, once decided.
    pub people_votes: Vec<PeopleVote>,
}

/// Every proposal of a team run, as its latest journaled state has it.
pub fn proposals_in(turns: &[Turn]) -> Vec<ProposalView> {
    let ours = turns.iter().filter(|t| t.actor == crate::AGENT);
    let mut latest: Vec<Proposal> = Vec::new();
    let mut people: Vec<(String, Vec<PeopleVote>)> = Vec::new();
    for t in ours {
        if let Some(found) = t.metadata.get("consensus") {
            if let Ok(list) = serde_json::from_value::<Vec<Proposal>>(found.clone()) {
                latest = list;
            }
        }
        if let Some(decided) = t.metadata.get("consensus_people") {
            let id = decided["proposal"].as_str().unwrap_or_default().to_owned();
            let votes = serde_json::from_value(decided["votes"].clone()).unwrap_or_default();
            people.push((id, votes));
        }
    }
    latest
        .into_iter()
        .map(|proposal| {
            let people_votes = people.iter().rev().find(|(id, _)| *id == proposal.id).map(|(_, v)| v.clone());
            ProposalView { proposal, people_votes: people_votes.unwrap_or_default() }
        })
        .collect()
}

/// The prompt's lines on the team's proposals (`* p1 [open] ...`), for an
/// agent offered a consensus tool; empty when there are none.
pub(crate) fn prompt_lines(state: &Consensus) -> String {
    if state.proposals.is_empty() {
        return String::new();
    }
    let mut out = "Proposals:\n".to_owned();
    for p in &state.proposals {
        let status = match p.status {
            ProposalStatus::Open => "open",
            ProposalStatus::WithPeople => "with people",
            ProposalStatus::Agreed => "agreed",
            ProposalStatus::Rejected => "rejected",
        };
        let votes: Vec<String> = p
            .ballots
            .iter()
            .map(|b| {
                let v = match b.vote {
                    Vote::Approve => "approve",
                    Vote::Reject => "reject",
                    Vote::Abstain => "abstain",
                };
                format!("{} {v}", b.agent)
            })
            .collect();
        out.push_str(&format!(
            "* {} [{status}] by {}: {} | voters: {} | votes: {}\n",
            p.id,
            p.proposer,
            p.decision,
            p.agents.join(", "),
            votes.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_checked_naming_the_field() {
        let err = |v: Value, team: bool| parse_settings(Some(&v), team).unwrap_err().field;
        assert_eq!(err(json!({"people_decide": true}), false), "consensus");
        assert_eq!(err(json!([]), true), "consensus");
        assert_eq!(err(json!({"people_decide": "yes"}), true), "consensus.people_decide");
        assert_eq!(err(json!({"quorum": 0}), true), "consensus.quorum");
        assert_eq!(err(json!({"quorum": 21}), true), "consensus.quorum");
        assert_eq!(err(json!({"peoples_decide": true}), true), "consensus.peoples_decide");
        let read = parse_settings(Some(&json!({"people_decide": true, "quorum": 2})), true).unwrap();
        assert_eq!(read, Some(ConsensusSettings { people_decide: true, quorum: Some(2) }));
        assert_eq!(parse_settings(None, false).unwrap(), None);
    }

    fn with_people(people: &[&str]) -> Proposal {
        Proposal {
            id: "p1".into(),
            decision: "d".into(),
            rationale: String::new(),
            proposer: "a".into(),
            agents: vec![],
            people: people.iter().map(|p| p.to_string()).collect(),
            ballots: vec![],
            status: ProposalStatus::WithPeople,
        }
    }

    #[test]
    fn the_quorum_is_every_named_person_or_the_runs_setting_within_them() {
        let q = |people: &[&str], quorum: Option<u32>| {
            let settings = ConsensusSettings { people_decide: false, quorum };
            let gate = quorum_gate(&with_people(people), "t".into(), Some(&settings));
            (gate.quorum.unwrap().required, gate.deciders, gate.requires_human)
        };
        assert_eq!(q(&["human:alice", "human:bob"], None), (2, vec!["alice".into(), "bob".into()], true));
        assert_eq!(q(&["human:alice", "human:bob"], Some(5)), (2, vec!["alice".into(), "bob".into()], true));
        assert_eq!(q(&["human"], None), (1, vec![], true));
        assert_eq!(q(&["human"], Some(3)), (3, vec![], true));
    }
}
