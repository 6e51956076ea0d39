//! `gatehouse demo`: a simulated fleet of agents at work, so a new user
//! sees the product working at once. It starts the server, fills the
//! database with a realistic workload (scripted stories touch every gate
//! kind, policy, mode and outcome, and six orchestrated runs drive the
//! scripted provider; randomized routine runs add volume)
//! and keeps a live trickle of gates going until Ctrl-C. The fleet works
//! through the server's own engine, so its decisions wake waiting agents.
//! `--no-serve` only fills (plus `--keep-going` seconds of trickle) and exits.
//!
//! Every choice comes from one seeded RNG, so a seed reproduces the same
//! workload (ids and timestamps differ: the engine makes those itself).

mod bank;
mod build;
mod catalog;
mod routine;
mod stories;
mod summary;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::out::outln;
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use clap::Args;
use gatehouse_engine::plan::{PlanOperation, PlanRevision};
use gatehouse_engine::scoring::{QualityScore, ScoreVerdict};
use gatehouse_engine::store::GateFilter;
use gatehouse_engine::{
    DecisionInput, Engine, EngineError, Gate, GateId, GateKind, GateStatus, NewGate, NewRun, NewTurn, Role, Run, RunId,
    RunStatus,
};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_server::ProviderRegistry;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The people who review in the demo.
pub const REVIEWERS: [&str; 3] = ["alice", "bob", "carol"];

/// Arguments of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Runs to simulate in total. The scripted stories always play, twenty-one runs (they cover every gate
    /// kind and orchestrated runs); runs beyond them are randomized routine work.
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub runs: u32,
    /// Seed for every random choice; the same seed gives the same workload. [default: random, printed]
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// With --no-serve: after the workload, keep opening and resolving gates (about one a
    /// second) for this long. (While serving, that goes on until Ctrl-C.)
    #[arg(long, default_value_t = 0, value_name = "SECONDS", requires = "no_serve")]
    pub keep_going: u64,
    /// Only fill the database, print the summary and exit; do not start the server.
    #[arg(long)]
    pub no_serve: bool,
    #[command(flatten)]
    pub serve: crate::serve::ServeArgs,
}

/// Serves with the fleet at work until Ctrl-C, or with `--no-serve` plays
/// the workload, prints what the database now holds and returns.
pub fn run(engine: &Engine, path: &Path, args: &DemoArgs) -> Result<()> {
    if args.no_serve {
        // The orchestrated stories need an orchestrator: one of our own. Runs
        // left waiting are taken up by the next `gatehouse serve`.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("cannot start the demo's async runtime")?;
        let registry = ProviderRegistry::from_lookup(|_| None).context("the scripted provider")?;
        let orchestrated = Orchestrated {
            orchestrator: Orchestrator::new(engine.clone(), registry),
            runtime: runtime.handle().clone(),
        };
        let (mut sim, played) = fill(engine, path, args, orchestrated)?;
        if args.keep_going > 0 {
            outln!("\nKeeping going for {} s (Ctrl-C stops; everything so far is saved):", args.keep_going);
            let deadline = Instant::now() + Duration::from_secs(args.keep_going);
            routine::keep_going(&mut sim, Some(deadline), &AtomicBool::new(false))?;
        }
        return played.summarise(engine, path);
    }
    crate::serve::serve_with(engine, path, &args.serve, |live| {
        let orchestrated = Orchestrated { orchestrator: live.orchestrator.clone(), runtime: live.runtime.clone() };
        let (mut sim, played) = fill(engine, path, args, orchestrated)?;
        played.summarise(engine, path)?;
        outln!("\nGatehouse is serving at {}; the simulated agents keep working (Ctrl-C stops):", live.url);
        routine::keep_going(&mut sim, None, live.stop)
    })
}

/// What [`fill`] played, for the summary.
struct Played {
    seed: u64,
    total: u32,
    started: Instant,
}

impl Played {
    fn summarise(&self, engine: &Engine, path: &Path) -> Result<()> {
        summary::print(engine, path, self.seed, self.total, self.started.elapsed())
    }
}

/// Where orchestrated stories run: the server's orchestrator, or the demo's own.
pub struct Orchestrated {
    /// Drives the runs.
    pub orchestrator: Arc<Orchestrator>,
    /// The runtime it drives them on.
    pub runtime: tokio::runtime::Handle,
}

/// Plays the scripted stories and the routine runs into `engine`.
fn fill<'e>(engine: &'e Engine, path: &Path, args: &DemoArgs, orchestrated: Orchestrated) -> Result<(Sim<'e>, Played)> {
    let started = Instant::now();
    let seed = args.seed.unwrap_or_else(rand::random);
    let total = args.runs.max(stories::COUNT);
    outln!("Simulating {total} runs (seed {seed}) into {}", path.display());
    if args.runs < total {
        outln!("(--runs {} raised to {total}: the scripted stories always play)", args.runs);
    }
    let mut sim = Sim::new(engine, seed, orchestrated);
    outln!("\nScripted stories:");
    stories::play(&mut sim)?;
    if total > stories::COUNT {
        outln!("\nRoutine runs:");
        for _ in stories::COUNT..total {
            routine::run(&mut sim)?;
        }
    }
    sim.sweep_after_deadlines()?;
    Ok((sim, Played { seed, total, started }))
}

/// The simulation: the engine, the seeded RNG and what the scenarios
/// remember between steps.
pub struct Sim<'e> {
    /// The engine everything goes through.
    pub engine: &'e Engine,
    rng: StdRng,
    /// Answers prepared for questions the routine runs opened.
    answers: HashMap<GateId, &'static str>,
    /// Deadlines of gates opened to expire during the demo.
    deadlines: Vec<DateTime<Utc>>,
    /// Every run the demo created, oldest first.
    runs: Vec<RunId>,
    /// Every gate the demo opened, oldest first.
    gates: Vec<GateId>,
    /// Where orchestrated runs are driven.
    orchestrated: Orchestrated,
}

/// How long the demo waits for an orchestrated run to reach its next gate.
const ORCHESTRATED_PATIENCE: Duration = Duration::from_secs(20);

impl<'e> Sim<'e> {
    fn new(engine: &'e Engine, seed: u64, orchestrated: Orchestrated) -> Self {
        Self {
            orchestrated,
            engine,
            rng: StdRng::seed_from_u64(seed),
            answers: HashMap::new(),
            deadlines: Vec::new(),
            runs: Vec::new(),
            gates: Vec::new(),
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p.clamp(0.0, 1.0))
    }

    /// One of `items`, uniformly.
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.gen_range(0..items.len())].clone()
    }

    /// A number from `low` to `high`.
    pub fn between(&mut self, low: f64, high: f64) -> f64 {
        self.rng.gen_range(low..=high)
    }

    /// Creates a run on behalf of its agent.
    pub fn start(&mut self, new: NewRun) -> Result<Run> {
        let (agent, title) = (new.agent.clone(), new.title.clone());
        let run =
            self.engine.create_run(new, &agent).with_context(|| format!("demo: cannot create the run \"{title}\""))?;
        self.runs.push(run.id.clone());
        Ok(run)
    }

    /// Starts a run Gatehouse drives with the scripted provider.
    pub fn orchestrate(&mut self, input: serde_json::Value, template: NewRun) -> Result<Run> {
        let Orchestrated { orchestrator, runtime } = &self.orchestrated;
        let run = runtime
            .block_on(orchestrator.start(&input, template, "maya"))
            .with_context(|| format!("demo: cannot start the orchestrated run {input}"))?;
        self.runs.push(run.id.clone());
        Ok(run)
    }

    /// The run's pending gate of `kind`, once the orchestrator has opened it.
    pub fn await_gate(&mut self, run: &Run, kind: GateKind) -> Result<Gate> {
        let filter = GateFilter { run_id: Some(run.id.clone()), kind: Some(kind), ..GateFilter::pending() };
        let gate =
            self.await_found(&run.title, kind.as_str(), || Ok(self.engine.gates(&filter)?.into_iter().next()))?;
        if !self.gates.contains(&gate.id) {
            self.gates.push(gate.id.clone());
        }
        Ok(gate)
    }

    /// The run once the orchestrator has brought it to `status`.
    pub fn await_status(&self, run: &Run, status: RunStatus) -> Result<Run> {
        self.await_found(&run.title, status.as_str(), || {
            Ok(Some(self.engine.run(&run.id)?).filter(|r| r.status == status))
        })
    }

    fn await_found<T>(&self, title: &str, what: &str, find: impl Fn() -> Result<Option<T>>) -> Result<T> {
        let deadline = Instant::now() + ORCHESTRATED_PATIENCE;
        loop {
            if let Some(found) = find()? {
                return Ok(found);
            }
            if Instant::now() > deadline {
                anyhow::bail!("demo: the orchestrated run \"{title}\" did not reach {what}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Adds a turn spoken by `who`.
    pub fn say(&self, run: &Run, role: Role, who: &str, content: &str) -> Result<()> {
        self.say_scored(run, role, who, content, None)
    }

    /// Adds a turn with a 1..5 score of its deliverable.
    pub fn say_scored(&self, run: &Run, role: Role, who: &str, content: &str, score: Option<f64>) -> Result<()> {
        let turn = NewTurn { actor: Some(who.to_owned()), score, ..NewTurn::new(role, content) };
        self.engine.add_turn(&run.id, turn, who).with_context(|| format!("demo: cannot add {who}'s turn"))?;
        Ok(())
    }

    /// Opens a gate as the run's agent.
    pub fn open(&mut self, run: &Run, gate: NewGate) -> Result<Gate> {
        let preview = crate::table::short(&gate.text, 50);
        let gate = self
            .engine
            .open_gate(&run.id, gate, &run.agent)
            .with_context(|| format!("demo: cannot open the gate \"{preview}\""))?;
        if !self.gates.contains(&gate.id) {
            self.gates.push(gate.id.clone());
        }
        if let Some(at) = gate.expires_at.filter(|at| *at - gate.created_at < chrono::Duration::seconds(10)) {
            self.deadlines.push(at);
        }
        Ok(gate)
    }

    /// Opens a routine question and remembers the answer a reviewer will give.
    pub fn open_with_answer(&mut self, run: &Run, gate: NewGate, answer: Option<&'static str>) -> Result<Gate> {
        let gate = self.open(run, gate)?;
        if let Some(answer) = answer {
            self.answers.insert(gate.id.clone(), answer);
        }
        Ok(gate)
    }

    /// The answer prepared for a question, if any.
    pub fn answer_for(&self, gate: &GateId) -> Option<&'static str> {
        self.answers.get(gate).copied()
    }

    /// A reviewer decides (or votes on) a gate.
    pub fn decide(&self, gate: &Gate, input: DecisionInput, reviewer: &str) -> Result<Gate> {
        let action = input.action.as_str();
        self.engine
            .resolve_gate(&gate.id, input, reviewer)
            .with_context(|| format!("demo: {reviewer} cannot {action} gate \"{}\"", gate.preview()))
    }

    /// A reviewer decides, expecting that someone may have been faster:
    /// the conflict is printed, not raised.
    pub fn decide_late(&self, gate: &Gate, input: DecisionInput, reviewer: &str) -> Result<Option<Gate>> {
        match self.engine.resolve_gate(&gate.id, input, reviewer) {
            Ok(gate) => Ok(Some(gate)),
            Err(e @ EngineError::GateClosed { .. }) => {
                outln!("    {reviewer} was too late: {e}");
                Ok(None)
            }
            Err(e) => Err(e).with_context(|| format!("demo: {reviewer} cannot decide gate {}", gate.id)),
        }
    }

    /// Scores a quality gate's deliverable; a human's score decides it.
    pub fn score(
        &self,
        gate: &Gate,
        scorer: &str,
        role: Role,
        overall: f64,
        rubric: &[(&str, f64)],
        justification: &str,
    ) -> Result<(Gate, ScoreVerdict)> {
        let mut score = QualityScore::new(gate.id.as_str(), scorer, overall, self.engine.now())?;
        for (criterion, value) in rubric {
            score = score.with_rubric(*criterion, *value)?;
        }
        let score = score.with_justification(justification);
        self.engine
            .evaluate_quality_gate(&gate.id, score, role)
            .with_context(|| format!("demo: {scorer} cannot score gate \"{}\"", gate.preview()))
    }

    /// Applies a plan operation.
    pub fn plan(&self, run: &Run, op: PlanOperation, actor: &str) -> Result<PlanRevision> {
        self.engine
            .plan_apply(&run.id, op, actor)
            .with_context(|| format!("demo: cannot revise the plan of {}", run.title))
    }

    /// Sets a shared-context key.
    pub fn set(&self, run: &Run, key: &str, value: serde_json::Value, actor: &str) -> Result<()> {
        self.engine.context_set(&run.id, key, value, actor).with_context(|| format!("demo: cannot set {key}"))?;
        Ok(())
    }

    /// Deletes a shared-context key.
    pub fn unset(&self, run: &Run, key: &str, actor: &str) -> Result<()> {
        self.engine.context_delete(&run.id, key, actor).with_context(|| format!("demo: cannot delete {key}"))?;
        Ok(())
    }

    /// Prints one line about a run once its part of the demo is played.
    pub fn report(&self, run: &Run) -> Result<()> {
        let run = self.engine.run(&run.id)?;
        let all = GateFilter { run_id: Some(run.id.clone()), ..GateFilter::default() };
        let total = self.engine.count_gates(&all)?;
        let pending = self.engine.count_gates(&GateFilter { status: Some(GateStatus::Pending), ..all })?;
        outln!(
            "  {:<15} {:<19} {}  [{total} gates, {pending} pending]",
            run.status.as_str(),
            run.agent,
            crate::table::short(&run.title, 56)
        );
        Ok(())
    }

    /// Waits (once) for the short deadlines set during the demo to pass,
    /// then runs the expiry sweep the server would run on its timer.
    fn sweep_after_deadlines(&mut self) -> Result<()> {
        if let Some(latest) = self.deadlines.iter().max().copied() {
            let wait = (latest - self.engine.now()).to_std().unwrap_or_default() + Duration::from_millis(100);
            outln!("\nWaiting {:.1} s for a question's deadline to pass, then sweeping…", wait.as_secs_f64());
            std::thread::sleep(wait);
            self.deadlines.clear();
        }
        let expired = self.engine.sweep_expired().context("demo: the expiry sweep failed")?;
        for id in &expired {
            let gate = self.engine.gate(id)?;
            outln!(
                "  expired {} \"{}\": {}",
                gate.kind().as_str(),
                gate.preview(),
                gate.status_reason.unwrap_or_default()
            );
        }
        Ok(())
    }
}
