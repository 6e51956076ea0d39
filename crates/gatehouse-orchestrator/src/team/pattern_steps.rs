//! A team run that follows a custom collaboration pattern (the run input's
//! `pattern`, a [`Workflow`] checked when the run starts): the current
//! step's agent takes each turn, and the step's outcome moves the workflow
//! on ([`Workflow::next`]) until it ends, finished or failed.
//!
//! How a step ends:
//! - a **work** or **check** step's agent reports its outcome with the
//!   built-in `report_outcome(outcome, summary)` (`success`/`failure`,
//!   `pass`/`fail`); every agent of a pattern run is offered it. An answer
//!   without it keeps the step (the agent is reminded), so an outcome is
//!   always the agent's explicit word;
//! - a **review** step is a review gate a person decides: the step's agent
//!   takes its turn (its answer is its review), then an approval gate that
//!   no policy passes asks people to approve or reject; the agent's
//!   `report_outcome` is refused there.
//!
//! Handoffs inside a pattern are refused with an answer saying so: the
//! workflow picks the next agent. A reviewer's choice of the next agent
//! moves the workflow to that agent's first step. Each move is a note on
//! the run's timeline (`team:N:pattern`), so the position replays after a
//! restart and the Runs view reads it; when the workflow finishes, the last
//! work passes the team's response review like any team answer (unless
//! the last step was a person's review), and when it fails the run fails.

use gatehouse_engine::{DecisionAction, GateSpec, NewGate, Run, Turn};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{decision_of, Driver, Record, Step};
use crate::pattern::{self, Next, Outcome, StepKind, Workflow};
use crate::spec::{RunSpec, SpecError};

use super::tools::ToolCall;
use super::{Team, TeamAgent};

/// Reads the run input's `pattern` for the run's team (errors name `pattern...`).
pub fn parse_pattern(value: Option<&Value>, team: Option<&Team>) -> Result<Option<Workflow>, SpecError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let Some(team) = team else {
        return Err(SpecError {
            field: "pattern".into(),
            message: "a pattern is a team's workflow: give the run a `team`".into(),
        });
    };
    pattern::parse(value, "pattern", &team.names()).map(Some)
}

/// Where a team run stands in its workflow.
#[derive(Debug, Clone)]
pub(crate) struct FlowAt {
    workflow: Workflow,
    step: usize,
    /// The outcome reported in this turn, with its summary.
    reported: Option<(Outcome, String)>,
    /// What the last step came to, told to the next step's agent.
    last: Option<String>,
    /// The steps taken, for the run's result.
    path: Vec<Value>,
}

/// What a turn did to the workflow.
pub(crate) enum Moved {
    /// The step goes on; what to remind its agent of.
    Stayed(String),
    /// On to the next step; what to tell its agent.
    On(String),
    /// The workflow finished; the text to answer with, and whether a person's review ended it.
    Finished { text: String, reviewed: bool },
    /// The workflow failed, and why.
    Failed(String),
}

/// The built-in every agent of a pattern run is offered.
const REPORT: &str = "report_outcome";

impl FlowAt {
    /// At the workflow's first step.
    pub fn new(workflow: Workflow) -> Self {
        Self { workflow, step: 0, reported: None, last: None, path: Vec::new() }
    }

    /// The agent of the current step.
    pub fn agent(&self) -> &str {
        &self.workflow.steps[self.step].agent
    }

    /// Whether `agent` takes any step of the workflow.
    pub fn has_step_for(&self, agent: &str) -> bool {
        self.workflow.steps.iter().any(|s| s.agent == agent)
    }

    /// After a reviewer chose `chosen` to act next (over `before`): the
    /// workflow goes to that agent's first step, when it has one.
    pub fn follow(&mut self, before: &str, chosen: &str) {
        if before != chosen {
            if let Some(first) = self.workflow.steps.iter().position(|s| s.agent == chosen) {
                self.step = first;
            }
        }
    }

    /// The workflow's name and the steps taken, for the run's result.
    pub fn summary(&self) -> Value {
        json!({"name": self.workflow.name, "path": self.path})
    }

    /// The prompt's lines on the workflow, the step and what the last step came to.
    pub fn prompt_lines(&self) -> String {
        let step = &self.workflow.steps[self.step];
        let how = match step.kind {
            StepKind::Work => "end it with report_outcome(outcome: success|failure, summary)".to_owned(),
            StepKind::Check => "end it with report_outcome(outcome: pass|fail, summary)".to_owned(),
            StepKind::Review => "give your review as your answer; a person approves or rejects the step".to_owned(),
        };
        let mut out =
            format!("Workflow: {}\nWorkflow step: {} ({}): {how}\n", self.workflow.name, step.step, kind(step.kind));
        if let Some(last) = &self.last {
            out.push_str(&format!("Previous step: {last}\n"));
        }
        out
    }
}

/// Every agent of a pattern run is offered `report_outcome`.
pub(crate) fn grant(team: &mut Team) {
    for agent in &mut team.agents {
        if !agent.tools.iter().any(|t| t == REPORT) {
            agent.tools.push(REPORT.to_owned());
        }
    }
}

fn kind(kind: StepKind) -> &'static str {
    match kind {
        StepKind::Work => "work",
        StepKind::Review => "review",
        StepKind::Check => "check",
    }
}

/// The word for `outcome` of a step of `kind` (`success`, `reject`, `pass`...).
fn word(kind: StepKind, outcome: Outcome) -> &'static str {
    let [good, bad] = words(kind);
    match outcome {
        Outcome::Good => good,
        Outcome::Bad => bad,
    }
}

fn words(kind: StepKind) -> [&'static str; 2] {
    match kind {
        StepKind::Work => ["success", "failure"],
        StepKind::Review => ["approve", "reject"],
        StepKind::Check => ["pass", "fail"],
    }
}

/// `report_outcome` as journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
enum Reported {
    Accepted { outcome: Outcome, summary: String, answer: String },
    Refused { answer: String },
}

/// `report_outcome(outcome, summary)`: the step's outcome, checked against
/// its kind and journaled under `key`; the answer for the agent.
pub(crate) async fn report(
    d: &mut Driver,
    flow: Option<&mut FlowAt>,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
) -> Step<String> {
    let reported = check_report(flow.as_deref(), &call.args);
    let content = match &reported {
        Reported::Accepted { answer, .. } | Reported::Refused { answer } => format!("**{}**: {answer}", agent.name),
    };
    let step = flow.as_deref().map(|f| f.workflow.steps[f.step].step.clone());
    let meta = json!({"tool_name": call.name, "args": call.args});
    let reported: Reported = d
        .step(key, "tool_call", || async move {
            let mut record =
                Record::new(reported, content).with("tool_call", meta).with("team_agent", json!(agent.name));
            if let (Reported::Accepted { outcome, .. }, Some(step)) = (&record.value, step) {
                let outcome = json!({"step": step, "outcome": outcome});
                record = record.with("pattern_outcome", outcome);
            }
            Ok(record)
        })
        .await?;
    Ok(match reported {
        Reported::Accepted { outcome, summary, answer } => {
            if let Some(flow) = flow {
                flow.reported = Some((outcome, summary));
            }
            answer
        }
        Reported::Refused { answer } => answer,
    })
}

fn check_report(flow: Option<&FlowAt>, args: &Value) -> Reported {
    let refused = |why: String| Reported::Refused { answer: format!("report_outcome refused: {why}") };
    let Some(flow) = flow else {
        return refused("this run follows no workflow; answer without a tool call when the work is done".into());
    };
    let step = &flow.workflow.steps[flow.step];
    if step.kind == StepKind::Review {
        return refused(format!(
            "step `{}` is a review: a person approves or rejects it; give your review as your answer",
            step.step
        ));
    }
    if flow.reported.is_some() {
        return refused(format!("step `{}`'s outcome is already reported", step.step));
    }
    let [good, bad] = words(step.kind);
    let said = args.get("outcome").and_then(Value::as_str).map(|s| s.trim().to_ascii_lowercase());
    let outcome = match said.as_deref() {
        Some(w) if w == good => Outcome::Good,
        Some(w) if w == bad => Outcome::Bad,
        _ => {
            let given = said.map(|s| format!("`{s}`")).unwrap_or_else(|| "no outcome".into());
            return refused(format!(
                "{given} is not an outcome of {} step `{}`: report {good} or {bad}",
                kind(step.kind),
                step.step
            ));
        }
    };
    let summary = args.get("summary").and_then(Value::as_str).map(str::trim).unwrap_or_default().to_owned();
    let answer = format!("report_outcome: step `{}` ends in {}", step.step, word(step.kind, outcome));
    Reported::Accepted { outcome, summary, answer }
}

/// A handoff inside a pattern: refused, journaled under `key`; the answer for the agent.
pub(crate) async fn refuse_handoff(
    d: &mut Driver,
    flow: &FlowAt,
    agent: &TeamAgent,
    call: &ToolCall,
    key: &str,
) -> Step<String> {
    let step = &flow.workflow.steps[flow.step];
    let how = match step.kind {
        StepKind::Review => "give your review as your answer".to_owned(),
        other => format!("end step `{}` with report_outcome ({})", step.step, words(other).join(" or ")),
    };
    let answer = format!(
        "handoff refused: this run follows the workflow `{}`, which picks the next agent; {how}",
        flow.workflow.name
    );
    let content = format!("**{}**'s handoff was refused: the workflow picks the next agent.", agent.name);
    let meta = json!({"tool_name": call.name, "args": call.args});
    d.step(key, "tool_call", || async move {
        Ok(Record::new(answer, content).with("tool_call", meta).with("team_agent", json!(agent.name)))
    })
    .await
}

/// After the step's agent took its turn `turn`: a review step's gate, then
/// the workflow moved on by the step's outcome (noted as `team:TURN:pattern`).
pub(crate) async fn after_turn(
    d: &mut Driver,
    flow: &mut FlowAt,
    agent: &TeamAgent,
    said: &str,
    turn: u32,
) -> Step<Moved> {
    let step = flow.workflow.steps[flow.step].clone();
    if step.kind == StepKind::Review {
        review_gate(d, flow, agent, said, turn).await?;
    }
    let Some((outcome, summary)) = flow.reported.take() else {
        let [good, bad] = words(step.kind);
        return Ok(Moved::Stayed(format!(
            "Step `{}` is still yours: end it with report_outcome(outcome: {good} or {bad}, summary).",
            step.step
        )));
    };
    let said_word = word(step.kind, outcome);
    let next = flow.workflow.next(flow.step, outcome);
    let to = match next {
        Next::Step(i) => Some(flow.workflow.steps[i].step.clone()),
        Next::End { .. } => None,
    };
    let content = match (&to, next) {
        (Some(to), _) => {
            format!("Workflow `{}`: step `{}` ended in {said_word}; next, `{to}`.", flow.workflow.name, step.step)
        }
        (None, Next::End { finished: true }) => {
            format!(
                "Workflow `{}`: step `{}` ended in {said_word}; the workflow is finished.",
                flow.workflow.name, step.step
            )
        }
        (None, _) => format!(
            "Workflow `{}`: step `{}` ended in {said_word}; the workflow failed.",
            flow.workflow.name, step.step
        ),
    };
    let meta = json!({"pattern_move": {"from": step.step, "agent": agent.name, "outcome": said_word, "to": to,
        "summary": summary}});
    d.note(&format!("team:{turn}:pattern"), content, meta).await?;
    let work = flow.last.clone();
    flow.path.push(json!({"step": step.step, "agent": agent.name, "outcome": said_word}));
    let told = format!("`{}` ({}) ended in {said_word}: {summary}", step.step, agent.name);
    flow.last = Some(told.clone());
    Ok(match next {
        Next::Step(i) => {
            flow.step = i;
            Moved::On(format!("Previous step {told}"))
        }
        Next::End { finished: true } if step.kind == StepKind::Review => {
            Moved::Finished { text: work.unwrap_or(summary), reviewed: true }
        }
        Next::End { finished: true } => Moved::Finished { text: summary, reviewed: false },
        Next::End { finished: false } => Moved::Failed(format!(
            "the workflow `{}` failed at step `{}` ({said_word}): {summary}",
            flow.workflow.name, step.step
        )),
    })
}

/// A review step's gate, asked under `team:TURN:review`: people approve or
/// reject; never passed by a policy; the outcome is theirs.
async fn review_gate(d: &mut Driver, flow: &mut FlowAt, agent: &TeamAgent, said: &str, turn: u32) -> Step<()> {
    let step = flow.workflow.steps[flow.step].clone();
    let mut text = format!(
        "**Review step `{}`** of the workflow `{}`: approve to go on, reject to send the work back.\n\n",
        step.step, flow.workflow.name
    );
    if let Some(work) = &flow.last {
        text.push_str(&format!("**The work under review:** {work}\n\n"));
    }
    if !said.trim().is_empty() {
        text.push_str(&format!("**{}** reviewed it: {}", agent.name, said.trim()));
    }
    let mut gate = NewGate::new(GateSpec::Approval { action: format!("workflow step {}", step.step) }, text);
    gate.requires_human = true;
    gate.allowed_actions = vec![DecisionAction::Approve, DecisionAction::Reject];
    gate.context.step = Some(step.step.clone());
    gate.payload = Some(json!({"workflow": flow.workflow.name, "step": step.step, "agent": agent.name,
        "work": flow.last, "review": said.trim()}));
    let closed = d.ask(&format!("team:{turn}:review"), "review_step", gate).await?;
    let decision = decision_of(&closed);
    let approved = decision.action == DecisionAction::Approve;
    let reason = decision.text.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let verb = if approved { "approved" } else { "rejected" };
    let summary = match reason {
        Some(r) => format!("{verb} by {}: {r}", decision.decided_by),
        None => format!("{verb} by {}", decision.decided_by),
    };
    flow.reported = Some((if approved { Outcome::Good } else { Outcome::Bad }, summary));
    Ok(())
}

/// Whether a workflow is under way or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamWorkflowState))]
#[serde(rename_all = "snake_case")]
pub enum WorkflowState {
    /// A step holds the turn.
    Running,
    /// It ended on a good outcome.
    Finished,
    /// It ended on a bad outcome with no way on.
    Failed,
}

/// How a workflow step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamStepOutcome))]
#[serde(rename_all = "snake_case")]
pub enum StepOutcome {
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

impl StepOutcome {
    /// The outcome a step's word names (`success`, `approve`, `fail`...).
    pub fn read(word: &str) -> Option<Self> {
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

/// A team run's workflow as a reviewer sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamWorkflow))]
pub struct WorkflowView {
    /// Its name.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<WorkflowStepView>,
    /// The step that holds the turn (none once the workflow ended).
    pub current: Option<String>,
    /// Under way, finished or failed.
    pub state: WorkflowState,
    /// Every move, oldest first.
    pub moves: Vec<WorkflowMove>,
}

/// One step of a workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamWorkflowStep))]
pub struct WorkflowStepView {
    /// Its name.
    pub step: String,
    /// Its agent.
    pub agent: String,
    /// `work`, `review` or `check`.
    pub kind: StepKind,
    /// Its two outcomes (the good one first) and the step each leads to (none: the end).
    pub exits: Vec<WorkflowExit>,
}

/// Where one outcome of a step leads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamWorkflowExit))]
pub struct WorkflowExit {
    /// The outcome.
    pub outcome: StepOutcome,
    /// The next step, or none when this outcome ends the workflow.
    pub to: Option<String>,
}

/// One move of the workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamWorkflowMove))]
pub struct WorkflowMove {
    /// The run's turn recording it.
    pub turn: u32,
    /// The step that ended.
    pub from: String,
    /// How it ended.
    pub outcome: StepOutcome,
    /// The next step, or none when the workflow ended.
    pub to: Option<String>,
    /// What the step's agent (or the person deciding a review) said of it.
    pub summary: String,
}

/// The workflow of a pattern run and where it stands, read from its turns.
pub fn workflow_in(run: &Run, turns: &[Turn]) -> Option<WorkflowView> {
    let workflow = serde_json::from_value::<RunSpec>(run.input.clone()).ok()?.pattern?;
    let mut current = Some(0usize);
    let mut state = WorkflowState::Running;
    let mut moves = Vec::new();
    for t in turns.iter().filter(|t| t.actor == crate::AGENT) {
        let meta = &t.metadata;
        if let Some(m) = meta.get("pattern_move") {
            let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_owned);
            let to = text("to");
            let outcome = text("outcome").unwrap_or_default();
            current = to.as_deref().and_then(|s| workflow.step(s));
            if current.is_none() {
                let good = workflow.step(&text("from").unwrap_or_default()).map(|i| words(workflow.steps[i].kind)[0]);
                state = if good == Some(outcome.as_str()) { WorkflowState::Finished } else { WorkflowState::Failed };
            }
            // A move journaled with an outcome this version does not know is left out of the view.
            if let Some(outcome) = StepOutcome::read(&outcome) {
                let (from, summary) = (text("from").unwrap_or_default(), text("summary").unwrap_or_default());
                moves.push(WorkflowMove { turn: t.index, from, outcome, to, summary });
            }
        }
        if let (Some(chosen), Some(true), Some(_)) =
            (meta.get("team_override").and_then(Value::as_str), meta.get("applied").and_then(Value::as_bool), current)
        {
            if let Some(first) = workflow.steps.iter().position(|s| s.agent == chosen) {
                current = Some(first);
            }
        }
    }
    let steps = workflow
        .steps
        .iter()
        .map(|s| WorkflowStepView {
            step: s.step.clone(),
            agent: s.agent.clone(),
            kind: s.kind,
            exits: words(s.kind)
                .iter()
                .zip(s.next)
                .filter_map(|(outcome, to)| {
                    Some(WorkflowExit {
                        outcome: StepOutcome::read(outcome)?,
                        to: to.map(|i| workflow.steps[i].step.clone()),
                    })
                })
                .collect(),
        })
        .collect();
    let current = current.map(|i| workflow.steps[i].step.clone());
    Some(WorkflowView { name: workflow.name.clone(), steps, current, state, moves })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow() -> FlowAt {
        let p = json!({"name": "cycle", "workflow": [
            {"step": "code", "agent": "coder", "next_on_success": "review"},
            {"step": "review", "agent": "reviewer", "next_on_approve": "test", "next_on_reject": "coder"},
            {"step": "test", "agent": "tester", "next_on_fail": "code"}
        ]});
        FlowAt::new(pattern::parse(&p, "pattern", &["coder", "reviewer", "tester"]).unwrap())
    }

    fn answer(r: Reported) -> String {
        match r {
            Reported::Accepted { answer, .. } | Reported::Refused { answer } => answer,
        }
    }

    #[test]
    fn an_outcome_must_be_one_of_the_steps_own_words() {
        let mut f = flow();
        assert_eq!(
            answer(check_report(Some(&f), &json!({"outcome": "pass"}))),
            "report_outcome refused: `pass` is not an outcome of work step `code`: report success or failure"
        );
        assert!(matches!(
            check_report(Some(&f), &json!({"outcome": "Success", "summary": "done"})),
            Reported::Accepted { outcome: Outcome::Good, .. }
        ));
        f.step = 1;
        assert!(
            answer(check_report(Some(&f), &json!({"outcome": "approve"}))).contains("a person approves or rejects it")
        );
        f.step = 2;
        assert!(matches!(
            check_report(Some(&f), &json!({"outcome": "fail"})),
            Reported::Accepted { outcome: Outcome::Bad, .. }
        ));
        f.reported = Some((Outcome::Bad, String::new()));
        assert!(answer(check_report(Some(&f), &json!({"outcome": "fail"}))).contains("already reported"));
        assert!(answer(check_report(None, &json!({"outcome": "success"}))).contains("follows no workflow"));
    }

    #[test]
    fn a_reviewers_choice_moves_the_workflow_to_that_agents_first_step() {
        let mut f = flow();
        f.follow("coder", "tester");
        assert_eq!(f.agent(), "tester");
        f.follow("tester", "nobody");
        assert_eq!(f.agent(), "tester");
        assert!(f
            .prompt_lines()
            .contains("Workflow step: test (check): end it with report_outcome(outcome: pass|fail"));
    }
}
