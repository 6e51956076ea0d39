//! Randomized routine runs and the live trickle (`--keep-going`, or while
//! the demo serves): agents open gates drawn from the catalog and
//! reviewers decide a realistic share.
//! Only runs and gates this demo created are touched, so running the demo
//! against a database with real work never decides a real agent's gate.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use gatehouse_engine::gate::GateSpec;
use gatehouse_engine::plan::{PlanRevision, TaskPriority};
use gatehouse_engine::run::Role;
use gatehouse_engine::{
    DecisionInput, EngineError, ErrorCode, Gate, GateFilter, GateKind, GateStatus, NewRun, Run, RunStatus,
};
use serde_json::{json, Value};

use super::build::*;
use super::{bank, catalog, Sim, REVIEWERS};
use crate::out::outln;
use crate::table::snake;

/// One routine run: a few gates, most decided, the run sometimes completed.
pub fn run(sim: &mut Sim) -> Result<()> {
    let run = new_run(sim)?;
    let count = sim.pick(&[2, 3, 4, 4, 5]);
    let mut opened = Vec::new();
    for _ in 0..count {
        opened.push(open_random(sim, &run)?);
    }
    for gate in &opened {
        if gate.status == GateStatus::Pending && sim.chance(0.5) {
            resolve(sim, gate)?;
        }
    }
    if sim.finished(&run)? && sim.chance(0.6) {
        sim.engine.complete_run(&run.id, &run.agent, Some(json!({"summary": format!("{}: done", run.title)})))?;
    }
    sim.report(&run)
}

/// Keeps opening a gate about once a second and deciding some, until
/// `deadline` passes (if there is one) or `stop` is set.
pub fn keep_going(sim: &mut Sim, deadline: Option<Instant>, stop: &AtomicBool) -> Result<()> {
    let done = |now: Instant| stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d);
    loop {
        let tick = Instant::now();
        if done(tick) {
            return Ok(());
        }
        // A reviewer in the UI may decide or cancel the same things meanwhile; losing that race is normal.
        if let Err(e) = trickle(sim) {
            let conflict =
                e.chain().any(|c| c.downcast_ref::<EngineError>().is_some_and(|e| e.code() == ErrorCode::Conflict));
            if !conflict {
                return Err(e);
            }
            line("skipped", &format!("{e:#}"));
        }
        let next = tick + Duration::from_secs(1);
        let next = deadline.map_or(next, |d| d.min(next));
        // Short naps, so a stop request is noticed promptly.
        while !done(Instant::now()) && Instant::now() < next {
            std::thread::sleep(next.saturating_duration_since(Instant::now()).min(Duration::from_millis(100)));
        }
    }
}

fn trickle(sim: &mut Sim) -> Result<()> {
    let live = sim.live_runs()?;
    let run = if live.is_empty() || sim.chance(0.1) {
        let run = new_run(sim)?;
        line("started", &format!("{} \"{}\"", run.agent, run.title));
        run
    } else {
        sim.pick(&live)
    };
    let gate = open_random(sim, &run)?;
    let passed = if gate.status == GateStatus::Resolved { "  (passed by policy)" } else { "" };
    let what = format!(
        "{:<18} {:<8} {:<6} {:<18} \"{}\"{passed}",
        gate.kind().as_str(),
        gate.mode.as_str(),
        snake(&gate.priority),
        gate.agent,
        gate.preview()
    );
    line("opened", &what);
    if sim.chance(0.6) {
        let pending = sim.pending_gates()?;
        if !pending.is_empty() {
            let gate = sim.pick(&pending);
            if let Some(what) = resolve(sim, &gate)? {
                line("decided", &format!("{what} on {} \"{}\"", gate.kind().as_str(), gate.preview()));
            }
        }
    }
    if sim.chance(0.1) {
        let mut active = Vec::new();
        for run in sim.live_runs()? {
            if sim.finished(&run)? {
                active.push(run);
            }
        }
        if !active.is_empty() {
            let done = sim.pick(&active);
            sim.engine.complete_run(&done.id, &done.agent, None)?;
            line("completed", &format!("{} \"{}\"", done.agent, done.title));
        }
    }
    Ok(())
}

/// One line of the trickle's log, stamped with local time.
fn line(action: &str, what: &str) {
    outln!("  [{}] {action:<9} {what}", chrono::Local::now().format("%H:%M:%S"));
}

fn new_run(sim: &mut Sim) -> Result<Run> {
    let agent = sim.pick(&catalog::AGENTS);
    let hitl_config = match sim.pick(&[0, 1, 1, 2, 3]) {
        0 => auto_policy(),
        1 => human_policy(),
        2 => threshold_policy(None, &["pii", "copyright", "nsfw"], Some(2)),
        _ => threshold_policy(Some(0.8), &["pii", "copyright", "nsfw"], None),
    };
    let title = sim.pick(agent.titles).to_owned();
    let (user, session) = (agent.user, agent.session);
    let run = sim.start(NewRun {
        title,
        agent: agent.name.into(),
        user_id: Some(user.into()),
        session_id: Some(session.into()),
        hitl_config,
        input: json!({"requested_by": user}),
        ..NewRun::default()
    })?;
    sim.say(&run, Role::Human, user, &format!("Please take this on: {}.", run.title))?;
    sim.say(&run, Role::Agent, agent.name, "Starting now; I'll ask when I need a decision.")?;
    Ok(run)
}

/// Opens a gate of a kind the run's agent typically asks.
fn open_random(sim: &mut Sim, run: &Run) -> Result<Gate> {
    let kinds = catalog::AGENTS.iter().find(|a| a.name == run.agent).map_or(&GateKind::ALL[..], |a| a.kinds);
    let mut kind = sim.pick(kinds);
    if kind == GateKind::PlanReview && has_plan_review(sim, run)? {
        // One plan review per run is enough; ask something else instead.
        kind = GateKind::Question;
    }
    let plan = if kind == GateKind::PlanReview { Some(ensure_plan(sim, run)?) } else { None };
    let (gate, answer) = bank::gate(sim, kind, &run.agent, plan.as_ref());
    let mut gate = gate.mode(catalog::mode(sim)).priority(catalog::priority(sim));
    if kind == GateKind::Approval && sim.chance(0.15) {
        gate = gate.quorum(2);
    }
    sim.open_with_answer(run, gate, answer)
}

fn has_plan_review(sim: &Sim, run: &Run) -> Result<bool> {
    let reviews =
        GateFilter { run_id: Some(run.id.clone()), kind: Some(GateKind::PlanReview), ..GateFilter::default() };
    Ok(sim.engine.count_gates(&reviews)? > 0)
}

/// The run's plan, drafting a small one first if it has none.
fn ensure_plan(sim: &mut Sim, run: &Run) -> Result<PlanRevision> {
    if let Some(plan) = sim.engine.plan(&run.id)? {
        return Ok(plan);
    }
    let agent = run.agent.as_str();
    let high = TaskPriority::High;
    sim.plan(run, add_task("task_001", "Reproduce the problem and write it down.", agent, high, &[], "15m"), agent)?;
    let fix = add_task("task_002", "Implement the change behind a flag.", agent, high, &["task_001"], "45m");
    sim.plan(run, fix, agent)?;
    let verify =
        add_task("task_003", "Verify on staging and report.", agent, TaskPriority::Medium, &["task_002"], "20m");
    sim.plan(run, verify, agent)
}

/// A random reviewer decides (or votes on, or scores) a pending gate.
/// Returns what happened, or `None` when there was nothing to do.
pub fn resolve(sim: &mut Sim, gate: &Gate) -> Result<Option<String>> {
    let gate = sim.engine.gate(&gate.id)?;
    if gate.status != GateStatus::Pending {
        return Ok(None);
    }
    let voters: Vec<&str> = gate.votes.iter().map(|v| v.reviewer.as_str()).collect();
    let candidates: Vec<&str> = REVIEWERS.into_iter().filter(|r| !voters.contains(r)).collect();
    if candidates.is_empty() {
        return Ok(None);
    }
    let reviewer = sim.pick(&candidates);
    if let GateSpec::QualityScore { rubric, .. } = &gate.spec {
        let overall = (sim.between(2.4, 5.0) * 10.0).round() / 10.0;
        let mut scores = Vec::new();
        for criterion in rubric {
            let value = ((overall + sim.between(-0.5, 0.5)) * 10.0).round() / 10.0;
            scores.push((criterion.as_str(), value.clamp(1.0, 5.0)));
        }
        let justification = sim.pick(&catalog::JUSTIFICATIONS);
        let (_, verdict) = sim.score(&gate, reviewer, Role::Human, overall, &scores, justification)?;
        return Ok(Some(format!("{reviewer} scored {overall:.1} ({})", snake(&verdict))));
    }
    let Some(input) = choose(sim, &gate) else { return Ok(None) };
    let action = input.action.as_str();
    Ok(Some(match sim.decide_late(&gate, input, reviewer)? {
        Some(after) if after.status == GateStatus::Pending => {
            let required = after.quorum.as_ref().map_or(1, |q| q.required);
            format!("{reviewer} voted {action} ({} of {required} votes)", after.votes.len())
        }
        Some(_) => format!("{reviewer}: {action}"),
        None => format!("{reviewer} was too late"),
    }))
}

/// A plausible decision for the gate's kind, if the gate allows it.
fn choose(sim: &mut Sim, gate: &Gate) -> Option<DecisionInput> {
    let reject = |sim: &mut Sim| DecisionInput::reject(sim.pick(&catalog::REJECTIONS));
    let roll = sim.between(0.0, 1.0);
    let input = if gate.quorum.is_some() {
        if roll < 0.85 {
            DecisionInput::approve()
        } else {
            reject(sim)
        }
    } else {
        match gate.kind() {
            GateKind::Question if roll < 0.85 => DecisionInput::respond(
                sim.answer_for(&gate.id).unwrap_or("Go with your proposal and note it in the summary."),
            ),
            GateKind::Question => defer("Not now; continue with the default and flag it in the summary."),
            GateKind::GoalReview if roll < 0.65 => DecisionInput::approve(),
            GateKind::GoalReview => needs_revision(sim.pick(&catalog::FEEDBACK)),
            GateKind::PlanReview if roll < 0.6 => DecisionInput::approve(),
            GateKind::PlanReview if roll < 0.85 => needs_revision(sim.pick(&catalog::FEEDBACK)),
            GateKind::ResponseReview if roll < 0.55 => DecisionInput::approve(),
            GateKind::ResponseReview if roll < 0.8 => retry(sim.pick(&catalog::RETRIES)),
            _ if roll < 0.6 => DecisionInput::approve(),
            _ => match gate.payload.as_ref().and_then(edited).filter(|_| roll < 0.8) {
                Some(payload) => DecisionInput::edit(payload),
                None => reject(sim),
            },
        }
    };
    gate.allowed_actions.contains(&input.action).then_some(input)
}

/// The payload with its first numeric field dialled down, as reviewers
/// most often do (fewer replicas, smaller batches, a partial refund).
fn edited(payload: &Value) -> Option<Value> {
    let mut edited = payload.clone();
    let fields = edited.as_object_mut()?;
    let (key, value) = fields.iter().find(|(_, v)| v.is_number())?;
    let new = match (value.as_i64(), value.as_f64()) {
        (Some(n), _) => json!((n * 3 / 4).max(1)),
        (None, Some(x)) => json!((x * 0.9 * 100.0).round() / 100.0),
        _ => return None,
    };
    if &new == value {
        return None;
    }
    fields.insert(key.clone(), new);
    Some(edited)
}

impl Sim<'_> {
    /// The demo's runs that can still take gates.
    fn live_runs(&self) -> Result<Vec<Run>> {
        let mut live = Vec::new();
        for id in &self.runs {
            let run = self.engine.run(id)?;
            if !run.status.is_terminal() {
                live.push(run);
            }
        }
        Ok(live)
    }

    /// Whether the run is working with nothing left to ask: only then does its agent complete
    /// it (completing withdraws pending gates, which would empty the reviewer's queue).
    fn finished(&self, run: &Run) -> Result<bool> {
        let pending = GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() };
        Ok(self.engine.run(&run.id)?.status == RunStatus::Active && self.engine.count_gates(&pending)? == 0)
    }

    /// The demo's gates still waiting for a decision.
    fn pending_gates(&self) -> Result<Vec<Gate>> {
        let mut pending = Vec::new();
        for id in &self.gates {
            let gate = self.engine.gate(id)?;
            if gate.status == GateStatus::Pending {
                pending.push(gate);
            }
        }
        Ok(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_dial_the_first_number_down_and_leave_the_rest() {
        let payload = json!({"replicas": 8, "service": "storefront"});
        assert_eq!(edited(&payload), Some(json!({"replicas": 6, "service": "storefront"})));
        assert_eq!(edited(&json!({"amount_eur": 129.0})), Some(json!({"amount_eur": 116.1})));
        assert_eq!(edited(&json!({"replicas": 1})), None);
        assert_eq!(edited(&json!({"domain": "x"})), None);
    }
}
