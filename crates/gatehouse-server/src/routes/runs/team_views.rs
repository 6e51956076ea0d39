//! A team run's consensus proposals and custom-pattern workflow as the
//! HTTP API shows them (`GET /runs/{run_id}/team`, beside [`super::team`]'s
//! team, handoffs and memory): each agent's vote and reasoning, the
//! people's votes once a quorum gate decided, and the workflow's steps,
//! exits, current step and moves. Mirrors the orchestrator's view types
//! for the OpenAPI document.

use gatehouse_orchestrator::consensus::{ProposalStatus, Vote};
use gatehouse_orchestrator::pattern::StepKind;
use gatehouse_orchestrator::team::consensus_tools::ProposalView;
use gatehouse_orchestrator::team::pattern_steps::WorkflowView;
use serde::Serialize;
use utoipa::ToSchema;

/// How an agent voted on a proposal.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamVote {
    /// For it.
    Approve,
    /// Against it.
    Reject,
    /// Neither.
    Abstain,
}

/// Where a team's proposal stands.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamProposalStatus {
    /// Taking the agents' votes.
    Open,
    /// Waiting for people's decision at a quorum gate.
    WithPeople,
    /// Agreed.
    Agreed,
    /// Not agreed.
    Rejected,
}

/// One agent's vote on a proposal, with its reasoning.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamBallot {
    /// The agent.
    pub agent: String,
    /// How it voted.
    pub vote: TeamVote,
    /// Why, in its words.
    pub reasoning: String,
}

/// One person's vote at a proposal's quorum gate.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamPeopleVote {
    /// Who voted.
    pub reviewer: String,
    /// For (true) or against.
    pub approve: bool,
    /// Why, if they said.
    pub reason: Option<String>,
}

/// A decision an agent put to the team (`propose_decision`).
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamProposal {
    /// Its id in the run (`p1`).
    pub id: String,
    /// What is proposed.
    pub decision: String,
    /// Why.
    pub rationale: String,
    /// The agent that proposed it.
    pub proposer: String,
    /// The agents who vote on it.
    pub agents: Vec<String>,
    /// The people it names (`human`, `human:alice`), who decide it at a quorum gate.
    pub people: Vec<String>,
    /// The agents' votes, in order.
    pub ballots: Vec<TeamBallot>,
    /// Where it stands.
    pub status: TeamProposalStatus,
    /// The people's votes, once they decided it.
    pub people_votes: Vec<TeamPeopleVote>,
}

impl From<ProposalView> for TeamProposal {
    fn from(v: ProposalView) -> Self {
        let p = v.proposal;
        let ballots = p
            .ballots
            .into_iter()
            .map(|b| TeamBallot {
                agent: b.agent,
                vote: match b.vote {
                    Vote::Approve => TeamVote::Approve,
                    Vote::Reject => TeamVote::Reject,
                    Vote::Abstain => TeamVote::Abstain,
                },
                reasoning: b.reasoning,
            })
            .collect();
        let status = match p.status {
            ProposalStatus::Open => TeamProposalStatus::Open,
            ProposalStatus::WithPeople => TeamProposalStatus::WithPeople,
            ProposalStatus::Agreed => TeamProposalStatus::Agreed,
            ProposalStatus::Rejected => TeamProposalStatus::Rejected,
        };
        let people_votes = v
            .people_votes
            .into_iter()
            .map(|pv| TeamPeopleVote { reviewer: pv.reviewer, approve: pv.approve, reason: pv.reason })
            .collect();
        Self {
            id: p.id,
            decision: p.decision,
            rationale: p.rationale,
            proposer: p.proposer,
            agents: p.agents,
            people: p.people,
            ballots,
            status,
            people_votes,
        }
    }
}

/// What a workflow step ends in.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamStepKind {
    /// Success or failure, reported by its agent.
    Work,
    /// Approval or rejection, decided by people at a review gate.
    Review,
    /// A pass or a fail, reported by its agent.
    Check,
}

/// How a workflow step ended.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamStepOutcome {
    /// A work step succeeded.
    Success,
    /// A work step failed.
    Failure,
    /// People approved a review step.
    Approve,
    /// People rejected a review step.
    Reject,
    /// A check passed.
    Pass,
    /// A check failed.
    Fail,
}

impl TeamStepOutcome {
    fn read(word: &str) -> Option<Self> {
        Some(match word {
            "success" => Self::Success,
            "failure" => Self::Failure,
            "approve" => Self::Approve,
            "reject" => Self::Reject,
            "pass" => Self::Pass,
            "fail" => Self::Fail,
            _ => return None,
        })
    }
}

/// Whether a workflow is under way or ended.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TeamWorkflowState {
    /// A step holds the turn.
    Running,
    /// It ended on a good outcome.
    Finished,
    /// It ended on a bad outcome with no way on.
    Failed,
}

/// Where one outcome of a workflow step leads.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamWorkflowExit {
    /// The outcome.
    pub outcome: TeamStepOutcome,
    /// The next step; absent when this outcome ends the workflow.
    pub to: Option<String>,
}

/// One step of a workflow.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamWorkflowStep {
    /// Its name.
    pub step: String,
    /// The agent that takes it.
    pub agent: String,
    /// What it ends in.
    pub kind: TeamStepKind,
    /// Its two outcomes, the good one first, and where each leads.
    pub exits: Vec<TeamWorkflowExit>,
}

/// One move of a workflow: a step ended and the next began (or the workflow ended).
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamWorkflowMove {
    /// The run's turn recording it.
    pub turn: u32,
    /// The step that ended.
    pub from: String,
    /// How it ended.
    pub outcome: TeamStepOutcome,
    /// The next step; absent when the workflow ended.
    pub to: Option<String>,
    /// What the step's agent, or the people deciding a review, said of it.
    pub summary: String,
}

/// The custom collaboration pattern a team run follows, and where it stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamWorkflow {
    /// Its name.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<TeamWorkflowStep>,
    /// The step holding the turn; absent once the workflow ended.
    pub current: Option<String>,
    /// Under way, finished or failed.
    pub state: TeamWorkflowState,
    /// Every move, oldest first.
    pub moves: Vec<TeamWorkflowMove>,
}

impl From<WorkflowView> for TeamWorkflow {
    fn from(w: WorkflowView) -> Self {
        let steps = w
            .steps
            .into_iter()
            .map(|s| TeamWorkflowStep {
                step: s.step,
                agent: s.agent,
                kind: match s.kind {
                    StepKind::Work => TeamStepKind::Work,
                    StepKind::Review => TeamStepKind::Review,
                    StepKind::Check => TeamStepKind::Check,
                },
                exits: s
                    .exits
                    .into_iter()
                    .filter_map(|e| Some(TeamWorkflowExit { outcome: TeamStepOutcome::read(e.outcome)?, to: e.to }))
                    .collect(),
            })
            .collect();
        let moves = w
            .moves
            .into_iter()
            .filter_map(|m| {
                let outcome = TeamStepOutcome::read(&m.outcome)?;
                Some(TeamWorkflowMove { turn: m.turn, from: m.from, outcome, to: m.to, summary: m.summary })
            })
            .collect();
        let state = match w.state {
            "finished" => TeamWorkflowState::Finished,
            "failed" => TeamWorkflowState::Failed,
            _ => TeamWorkflowState::Running,
        };
        Self { name: w.name, steps, current: w.current, state, moves }
    }
}
