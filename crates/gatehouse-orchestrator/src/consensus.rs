//! Consensus among a team's agents: `propose_decision(decision, rationale,
//! stakeholders)`, `vote_on_proposal(proposal_id, vote, reasoning)` and
//! `finalize_consensus(proposal_id)`.
//!
//! A proposal names its stakeholders: agents of the team, who vote, and
//! people (`human`, or `human:NAME`), who cannot vote through a model.
//! Finalising needs every agent stakeholder's vote; the proposal is agreed
//! when more approve than reject (abstentions count for neither). When
//! people are among the stakeholders, or the run asks for it, finalising
//! does not decide: it hands the proposal, its votes and their reasoning to
//! people as a quorum gate, and their decision is the outcome.
//!
//! The state is plain data ([`Consensus`]) the team loop journals with the
//! run; every refusal is worded for the model that made the call.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How an agent votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamVote))]
#[serde(rename_all = "snake_case")]
pub enum Vote {
    /// For the proposal.
    Approve,
    /// Against it.
    Reject,
    /// Neither.
    Abstain,
}

impl Vote {
    fn read(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "approve" | "yes" | "for" => Ok(Self::Approve),
            "reject" | "no" | "against" => Ok(Self::Reject),
            "abstain" => Ok(Self::Abstain),
            other => Err(format!("`{other}` is not a vote: vote approve, reject or abstain")),
        }
    }
}

/// One agent's vote and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamBallot))]
pub struct Ballot {
    /// Who voted.
    pub agent: String,
    /// How.
    pub vote: Vote,
    /// Why, in its words.
    pub reasoning: String,
}

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamProposalStatus))]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Taking votes.
    Open,
    /// Waiting for people's decision at a quorum gate.
    WithPeople,
    /// Agreed.
    Agreed,
    /// Not agreed.
    Rejected,
}

/// A decision put to the team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamProposalBody))]
pub struct Proposal {
    /// Its id in the run (`p1`, `p2`...).
    pub id: String,
    /// What is proposed.
    pub decision: String,
    /// Why.
    pub rationale: String,
    /// The agent that proposed it.
    pub proposer: String,
    /// The agents who vote on it.
    pub agents: Vec<String>,
    /// The people it concerns (`human`, `human:alice`).
    pub people: Vec<String>,
    /// The votes so far, in order.
    pub ballots: Vec<Ballot>,
    /// Where it stands.
    pub status: ProposalStatus,
}

/// What finalising a proposal came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Finalized {
    /// The agents' votes decided it.
    Decided {
        /// Whether it was agreed.
        agreed: bool,
        /// Votes for, against and abstaining.
        tally: (usize, usize, usize),
    },
    /// People decide: open a quorum gate with this text.
    ToPeople {
        /// The gate's text: the proposal, the votes and their reasoning.
        text: String,
    },
}

/// Every proposal of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Consensus {
    /// The proposals, oldest first.
    pub proposals: Vec<Proposal>,
}

fn text<'v>(args: &'v Value, key: &str) -> Result<&'v str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("`{key}` is required: a non-blank string"))
}

/// Whether `name` names a person rather than an agent.
fn is_person(name: &str) -> bool {
    name == "human" || name.strip_prefix("human:").is_some_and(|who| !who.trim().is_empty())
}

impl Consensus {
    /// `propose_decision` by `proposer`, in a team of `team`: the new proposal's id.
    pub fn propose(&mut self, proposer: &str, args: &Value, team: &[&str]) -> Result<String, String> {
        let decision = text(args, "decision")?;
        let rationale = args.get("rationale").and_then(Value::as_str).unwrap_or_default().trim();
        let names: Vec<&str> = match args.get("stakeholders") {
            Some(Value::Array(list)) => list
                .iter()
                .map(|v| v.as_str().map(str::trim).ok_or("`stakeholders` must be a list of names"))
                .collect::<Result<_, _>>()?,
            None | Some(Value::Null) => team.to_vec(),
            Some(_) => return Err("`stakeholders` must be a list of names".to_owned()),
        };
        let (mut agents, mut people) = (Vec::new(), Vec::new());
        for name in names {
            if is_person(name) {
                if !people.iter().any(|p| p == name) {
                    people.push(name.to_owned());
                }
            } else if team.contains(&name) {
                if !agents.iter().any(|a| a == name) {
                    agents.push(name.to_owned());
                }
            } else {
                return Err(format!(
                    "`{name}` is not in the team; stakeholders are agents ({}) or people (`human`, `human:NAME`)",
                    team.join(", ")
                ));
            }
        }
        if agents.is_empty() && people.is_empty() {
            return Err("`stakeholders` names nobody".to_owned());
        }
        let id = format!("p{}", self.proposals.len() + 1);
        self.proposals.push(Proposal {
            id: id.clone(),
            decision: decision.to_owned(),
            rationale: rationale.to_owned(),
            proposer: proposer.to_owned(),
            agents,
            people,
            ballots: Vec::new(),
            status: ProposalStatus::Open,
        });
        Ok(id)
    }

    /// `vote_on_proposal` by `agent`.
    pub fn vote(&mut self, agent: &str, args: &Value) -> Result<(), String> {
        let proposal = self.open_mut(text(args, "proposal_id")?)?;
        let vote = Vote::read(text(args, "vote")?)?;
        if !proposal.agents.iter().any(|a| a == agent) {
            return Err(format!(
                "you are not a stakeholder of {}; its voters are {}",
                proposal.id,
                proposal.agents.join(", ")
            ));
        }
        if proposal.ballots.iter().any(|b| b.agent == agent) {
            return Err(format!("you have already voted on {}", proposal.id));
        }
        let reasoning = args.get("reasoning").and_then(Value::as_str).unwrap_or_default().trim().to_owned();
        proposal.ballots.push(Ballot { agent: agent.to_owned(), vote, reasoning });
        Ok(())
    }

    /// `finalize_consensus`: decided by the votes, or handed to people when
    /// people are stakeholders or `people_decide` (the run's setting) is on.
    /// A stakeholder no longer on `team` (a reviewer removed it) is not
    /// waited for.
    pub fn finalize(&mut self, args: &Value, people_decide: bool, team: &[&str]) -> Result<Finalized, String> {
        let proposal = self.open_mut(text(args, "proposal_id")?)?;
        let missing: Vec<&str> = proposal
            .agents
            .iter()
            .filter(|a| team.contains(&a.as_str()) && !proposal.ballots.iter().any(|b| &b.agent == *a))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(format!("{} still waits for the votes of {}", proposal.id, missing.join(", ")));
        }
        let count = |v: Vote| proposal.ballots.iter().filter(|b| b.vote == v).count();
        let tally = (count(Vote::Approve), count(Vote::Reject), count(Vote::Abstain));
        if people_decide || !proposal.people.is_empty() {
            proposal.status = ProposalStatus::WithPeople;
            return Ok(Finalized::ToPeople { text: gate_text(proposal, tally) });
        }
        let agreed = tally.0 > tally.1;
        proposal.status = if agreed { ProposalStatus::Agreed } else { ProposalStatus::Rejected };
        Ok(Finalized::Decided { agreed, tally })
    }

    /// Records people's decision on a proposal handed to them.
    pub fn decided_by_people(&mut self, id: &str, agreed: bool) {
        if let Some(p) = self.proposals.iter_mut().find(|p| p.id == id && p.status == ProposalStatus::WithPeople) {
            p.status = if agreed { ProposalStatus::Agreed } else { ProposalStatus::Rejected };
        }
    }

    fn open_mut(&mut self, id: &str) -> Result<&mut Proposal, String> {
        let ids: Vec<String> = self.proposals.iter().map(|p| p.id.clone()).collect();
        let proposal = self
            .proposals
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| format!("there is no proposal `{id}`; the proposals are {}", listed(&ids)))?;
        if proposal.status != ProposalStatus::Open {
            return Err(format!("{} is no longer open", proposal.id));
        }
        Ok(proposal)
    }
}

fn listed(ids: &[String]) -> String {
    if ids.is_empty() {
        "none yet".to_owned()
    } else {
        ids.join(", ")
    }
}

/// The quorum gate's text: what is proposed, by whom and why, and each vote with its reasoning.
fn gate_text(p: &Proposal, (approve, reject, abstain): (usize, usize, usize)) -> String {
    let mut text = format!("**The team proposes:** {}\n\n", p.decision);
    if !p.rationale.is_empty() {
        text.push_str(&format!("*Why ({}):* {}\n\n", p.proposer, p.rationale));
    }
    text.push_str(&format!("**Votes:** {approve} for, {reject} against, {abstain} abstaining\n\n"));
    for b in &p.ballots {
        let vote = match b.vote {
            Vote::Approve => "for",
            Vote::Reject => "against",
            Vote::Abstain => "abstains",
        };
        let why = if b.reasoning.is_empty() { String::new() } else { format!(": {}", b.reasoning) };
        text.push_str(&format!("- {} {vote}{why}\n", b.agent));
    }
    if !p.people.is_empty() {
        text.push_str(&format!("\nFor: {}", p.people.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TEAM: [&str; 3] = ["architect", "coder", "tester"];

    #[test]
    fn agents_vote_and_the_majority_of_votes_cast_decides() {
        let mut c = Consensus::default();
        let id = c
            .propose(
                "architect",
                &json!({"decision": "Use SQLite", "rationale": "one file", "stakeholders": ["coder", "tester"]}),
                &TEAM,
            )
            .unwrap();
        assert_eq!(id, "p1");
        c.vote("coder", &json!({"proposal_id": "p1", "vote": "approve", "reasoning": "simple"})).unwrap();
        assert_eq!(
            c.finalize(&json!({"proposal_id": "p1"}), false, &TEAM).unwrap_err(),
            "p1 still waits for the votes of tester"
        );
        c.vote("tester", &json!({"proposal_id": "p1", "vote": "abstain"})).unwrap();
        assert_eq!(
            c.finalize(&json!({"proposal_id": "p1"}), false, &TEAM).unwrap(),
            Finalized::Decided { agreed: true, tally: (1, 0, 1) }
        );
        assert_eq!(c.proposals[0].status, ProposalStatus::Agreed);
        assert_eq!(
            c.vote("coder", &json!({"proposal_id": "p1", "vote": "reject"})).unwrap_err(),
            "p1 is no longer open"
        );
    }

    #[test]
    fn a_stakeholder_a_reviewer_removed_is_not_waited_for() {
        let mut c = Consensus::default();
        let args = json!({"decision": "Use SQLite", "stakeholders": ["coder", "tester"]});
        c.propose("architect", &args, &TEAM).unwrap();
        c.vote("coder", &json!({"proposal_id": "p1", "vote": "reject", "reasoning": "too small"})).unwrap();
        let finalize = json!({"proposal_id": "p1"});
        assert_eq!(c.finalize(&finalize, false, &TEAM).unwrap_err(), "p1 still waits for the votes of tester");
        let without_tester = ["architect", "coder"];
        assert_eq!(
            c.finalize(&finalize, false, &without_tester).unwrap(),
            Finalized::Decided { agreed: false, tally: (0, 1, 0) }
        );
    }

    #[test]
    fn a_tie_is_not_agreement() {
        let mut c = Consensus::default();
        c.propose("architect", &json!({"decision": "Rewrite it", "stakeholders": ["coder", "tester"]}), &TEAM).unwrap();
        c.vote("coder", &json!({"proposal_id": "p1", "vote": "yes"})).unwrap();
        c.vote("tester", &json!({"proposal_id": "p1", "vote": "no", "reasoning": "too risky"})).unwrap();
        assert_eq!(
            c.finalize(&json!({"proposal_id": "p1"}), false, &TEAM).unwrap(),
            Finalized::Decided { agreed: false, tally: (1, 1, 0) }
        );
    }

    #[test]
    fn people_among_the_stakeholders_get_a_quorum_gate_with_every_vote_and_its_reasoning() {
        let mut c = Consensus::default();
        c.propose(
            "architect",
            &json!({"decision": "Ship on Friday", "rationale": "tests are green", "stakeholders": ["coder", "human:alice"]}),
            &TEAM,
        )
        .unwrap();
        assert_eq!(
            c.vote("tester", &json!({"proposal_id": "p1", "vote": "approve"})).unwrap_err(),
            "you are not a stakeholder of p1; its voters are coder"
        );
        c.vote("coder", &json!({"proposal_id": "p1", "vote": "approve", "reasoning": "all merged"})).unwrap();
        let Finalized::ToPeople { text } = c.finalize(&json!({"proposal_id": "p1"}), false, &TEAM).unwrap() else {
            panic!("people decide");
        };
        assert!(text.contains("**The team proposes:** Ship on Friday"), "{text}");
        assert!(text.contains("*Why (architect):* tests are green"), "{text}");
        assert!(text.contains("- coder for: all merged"), "{text}");
        assert!(text.ends_with("For: human:alice"), "{text}");
        assert_eq!(c.proposals[0].status, ProposalStatus::WithPeople);
        c.decided_by_people("p1", false);
        assert_eq!(c.proposals[0].status, ProposalStatus::Rejected);
    }

    #[test]
    fn the_runs_setting_hands_every_finalised_proposal_to_people() {
        let mut c = Consensus::default();
        c.propose("coder", &json!({"decision": "Add a cache", "stakeholders": ["tester"]}), &TEAM).unwrap();
        c.vote("tester", &json!({"proposal_id": "p1", "vote": "approve"})).unwrap();
        assert!(matches!(c.finalize(&json!({"proposal_id": "p1"}), true, &TEAM).unwrap(), Finalized::ToPeople { .. }));
    }

    #[test]
    fn mistakes_are_answered_so_the_model_can_fix_them() {
        let mut c = Consensus::default();
        assert_eq!(
            c.propose("coder", &json!({"decision": "x", "stakeholders": ["qa"]}), &TEAM).unwrap_err(),
            "`qa` is not in the team; stakeholders are agents (architect, coder, tester) or people (`human`, `human:NAME`)"
        );
        assert_eq!(c.propose("coder", &json!({}), &TEAM).unwrap_err(), "`decision` is required: a non-blank string");
        assert_eq!(
            c.vote("coder", &json!({"proposal_id": "p9", "vote": "approve"})).unwrap_err(),
            "there is no proposal `p9`; the proposals are none yet"
        );
        c.propose("coder", &json!({"decision": "x"}), &TEAM).unwrap();
        assert_eq!(
            c.vote("tester", &json!({"proposal_id": "p1", "vote": "maybe"})).unwrap_err(),
            "`maybe` is not a vote: vote approve, reject or abstain"
        );
        c.vote("tester", &json!({"proposal_id": "p1", "vote": "approve"})).unwrap();
        assert_eq!(
            c.vote("tester", &json!({"proposal_id": "p1", "vote": "approve"})).unwrap_err(),
            "you have already voted on p1"
        );
        // With no stakeholders named, the whole team votes.
        assert_eq!(c.proposals[0].agents, TEAM);
    }
}
