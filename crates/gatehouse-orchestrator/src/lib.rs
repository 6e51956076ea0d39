//! Orchestrated runs: Gatehouse itself drives a model provider (the provider-agnostic
//! `RunInput → HITLOrchestrator → AIProvider → HITL Checkpoints → Result`),
//! optionally after goal and plan collaboration, so a person can
//! start a supervised model run without writing an agent.
//!
//! The orchestrator is an agent like any other to the engine: it records
//! turns, opens gates and waits for their decisions, so the run's policy,
//! step-through control, pause, resume, cancel, the audit trail and the
//! reviewer UI all apply unchanged. Its own state is the run's journal of
//! turns and gates (see [`driver`]), which is why a run survives a restart:
//! [`Orchestrator::resume_all`] drives every unfinished orchestrated run
//! again from where it stopped.
//!
//! ```no_run
//! # async fn demo(engine: gatehouse_engine::Engine) -> Result<(), Box<dyn std::error::Error>> {
//! use gatehouse_orchestrator::Orchestrator;
//! use gatehouse_providers::ProviderRegistry;
//!
//! let orchestrator = Orchestrator::new(engine, ProviderRegistry::from_env()?);
//! orchestrator.resume_all().await?;
//! let input = serde_json::json!({"tool": "scripted:chat", "prompt": "Draft the release notes"});
//! let run = orchestrator.start(&input, Default::default(), "alice").await?;
//! # let _ = run; Ok(()) }
//! ```

mod collab;
pub mod command_tools;
pub mod consensus;
mod driver;
mod execution;
mod flow;
pub mod import;
pub mod information;
pub mod injection;
pub mod mcp_tools;
pub mod pattern;
pub mod plan_edit;
pub mod plan_restart;
pub mod spec;
mod task_answer;
mod task_gates;
pub mod team;
pub mod toolbox;
pub mod web_search;
pub mod welcome;
pub mod workspace;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_engine::{Engine, EngineError, NewRun, Run, RunFilter, RunId, RunStatus, Store};
use gatehouse_providers::ProviderRegistry;
use serde_json::Value;

pub use information::Assessment;
pub use spec::{is_orchestrated, Collaboration, RunSpec, SpecError};

use crate::driver::{Driver, Halt};

/// The agent name orchestrated runs are driven by, and the actor of
/// everything the orchestrator records.
pub const AGENT: &str = "gatehouse";

/// Why an orchestrated run could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The run input is not one Gatehouse can orchestrate.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The engine refused the run.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Drives orchestrated runs: one task per unfinished run.
pub struct Orchestrator {
    engine: Engine,
    registry: ProviderRegistry,
    toolbox: Option<Arc<toolbox::Toolbox>>,
    /// The runs being driven, each with whether it is to be taken up again
    /// when its drive ends (a reviewer retried it while the drive that the
    /// cancel stopped was still winding down).
    driving: Mutex<HashMap<RunId, bool>>,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator").field("registry", &self.registry).finish_non_exhaustive()
    }
}

impl Orchestrator {
    /// An orchestrator over `engine` running `registry`'s tools.
    pub fn new(engine: Engine, registry: ProviderRegistry) -> Arc<Self> {
        Self::with_toolbox(engine, registry, None)
    }

    /// An orchestrator whose team runs may also be granted the operator's
    /// `toolbox` (`serve --team-tools FILE`).
    pub fn with_toolbox(
        engine: Engine,
        registry: ProviderRegistry,
        toolbox: Option<Arc<toolbox::Toolbox>>,
    ) -> Arc<Self> {
        Arc::new(Self { engine, registry, toolbox, driving: Mutex::default() })
    }

    /// The operator's tools beyond the built-in ones, when configured.
    pub fn toolbox(&self) -> Option<&toolbox::Toolbox> {
        self.toolbox.as_deref()
    }

    /// The providers and their tools.
    pub fn registry(&self) -> &ProviderRegistry {
        &self.registry
    }

    /// Checks an orchestrated run input without starting anything.
    pub fn check(&self, input: &Value) -> Result<RunSpec, SpecError> {
        spec::parse_granting(input, &self.registry, self.toolbox())
    }

    /// Creates an orchestrated run from `input` and starts driving it.
    /// `template` carries the run's policy, title, user, session, step
    /// mode and breakpoints; its agent and input are the orchestrator's.
    /// Must be called within a Tokio runtime.
    pub async fn start(self: &Arc<Self>, input: &Value, template: NewRun, actor: &str) -> Result<Run, StartError> {
        let spec = self.check(input)?;
        if template.protocol.max_consecutive_agent_turns.is_some() {
            return Err(SpecError {
                field: "protocol".into(),
                message: "an orchestrated run is driven by Gatehouse itself: handoff limits do not apply".into(),
            }
            .into());
        }
        let title = if template.title.trim().is_empty() {
            let prompt: String = spec.prompt.split_whitespace().collect::<Vec<_>>().join(" ");
            let short: String = prompt.chars().take(60).collect();
            let ellipsis = if prompt.chars().count() > 60 { "…" } else { "" };
            let by = match &spec.team {
                Some(team) => format!("team {}", team.names().join(", ")),
                None => spec.tool.clone(),
            };
            format!("{by}: {short}{ellipsis}")
        } else {
            template.title.clone()
        };
        let stored = serde_json::to_value(&spec).map_err(|e| EngineError::Storage(e.to_string()))?;
        let new = NewRun { title, agent: AGENT.to_owned(), input: stored, ..template };
        let engine = self.engine.clone();
        let actor = actor.to_owned();
        let run = tokio::task::spawn_blocking(move || engine.create_run(new, &actor))
            .await
            .map_err(|e| EngineError::Storage(format!("creating the run failed: {e}")))??;
        self.drive(run.id.clone());
        Ok(run)
    }

    /// Starts the [`welcome`] runs a new user finds on first start.
    pub async fn start_welcome(self: &Arc<Self>, actor: &str) -> Result<Vec<Run>, StartError> {
        let mut started = Vec::new();
        for (input, template) in welcome::runs() {
            started.push(self.start(&input, template, actor).await?);
        }
        Ok(started)
    }

    /// Drives `run` again when Gatehouse drives it (a reviewer retried it):
    /// from its last good step, its journal replayed. False for an agent's run.
    pub fn take_up(self: &Arc<Self>, run: &Run) -> bool {
        let ours = Self::drives(run);
        if ours {
            self.drive(run.id.clone());
        }
        ours
    }

    /// Whether `run` is one the orchestrator drives.
    pub fn drives(run: &Run) -> bool {
        run.agent == AGENT && is_orchestrated(&run.input)
    }

    /// Drives every unfinished orchestrated run again (after a restart);
    /// returns the runs taken up.
    pub async fn resume_all(self: &Arc<Self>) -> Result<Vec<RunId>, EngineError> {
        let engine = self.engine.clone();
        let runs = tokio::task::spawn_blocking(move || {
            let live = RunFilter { statuses: RunStatus::LIVE.to_vec(), ..RunFilter::default() };
            engine.store().read(|r| r.runs_of_agent(&live, AGENT))
        })
        .await
        .map_err(|e| EngineError::Storage(format!("listing runs failed: {e}")))??;
        let ids: Vec<RunId> = runs.iter().filter(|r| Self::drives(r)).map(|r| r.id.clone()).collect();
        for id in &ids {
            self.drive(id.clone());
        }
        if !ids.is_empty() {
            tracing::info!(runs = ids.len(), "resumed orchestrated runs");
        }
        Ok(ids)
    }

    /// Starts driving a run; one already being driven is driven again once
    /// that drive ends, so a retry never lands on a drive about to stop.
    fn drive(self: &Arc<Self>, run_id: RunId) {
        let mut driving = self.driving.lock().unwrap_or_else(PoisonError::into_inner);
        match driving.get_mut(&run_id) {
            Some(again) => *again = true,
            None => {
                driving.insert(run_id.clone(), false);
                tokio::spawn(Arc::clone(self).drive_to_end(run_id));
            }
        }
    }

    /// Drives the run until it stops, again for as long as it was taken up
    /// meanwhile, then lets it go.
    async fn drive_to_end(self: Arc<Self>, run_id: RunId) {
        loop {
            self.drive_once(&run_id).await;
            let mut driving = self.driving.lock().unwrap_or_else(PoisonError::into_inner);
            if driving.get(&run_id) == Some(&true) {
                // Taken up while this drive ended: drive it again from its journal.
                driving.insert(run_id.clone(), false);
                continue;
            }
            driving.remove(&run_id);
            return;
        }
    }

    async fn drive_once(self: &Arc<Self>, run_id: &RunId) {
        let run_id = run_id.clone();
        let outcome = match Driver::load(Arc::clone(self), run_id.clone()).await {
            Ok((mut driver, run)) => drive(&mut driver, &run).await,
            Err(halt) => Err(halt),
        };
        let engine = self.engine.clone();
        let id = run_id.clone();
        let ended = tokio::task::spawn_blocking(move || match outcome {
            Ok(result) => engine.complete_run(&id, AGENT, Some(result)).map(|_| ()),
            Err(Halt::Ended) => Ok(()),
            Err(Halt::Cancel(reason)) => engine.cancel_run(&id, AGENT, Some(&reason)).map(|_| ()),
            Err(Halt::Fail(reason)) => engine.fail_run(&id, AGENT, &reason).map(|_| ()),
        })
        .await;
        match ended {
            Ok(Ok(())) | Ok(Err(EngineError::RunEnded { .. })) => {}
            Ok(Err(e)) => tracing::warn!(run = %run_id, error = %e, "could not record how the run ended"),
            Err(e) => tracing::warn!(run = %run_id, error = %e, "the run's last engine call failed"),
        }
    }
}

/// The run's flow: collaboration first when asked for, else the review checkpoints.
async fn drive(d: &mut Driver, run: &Run) -> Result<Value, Halt> {
    let spec: RunSpec = serde_json::from_value(run.input.clone())
        .map_err(|e| Halt::Fail(format!("the run's stored input cannot be read: {e}")))?;
    if spec.wait_for_start {
        // Created without starting: nothing happens until someone starts it (or ends it).
        let id = d.run_id.clone();
        let status = d.wait_for(move |e| Ok(Some(e.run(&id)?.status).filter(|s| *s != RunStatus::Created))).await?;
        if status.is_terminal() {
            return Err(Halt::Ended);
        }
    }
    let result = match (&spec.team, &spec.collaborate) {
        (Some(team), _) => {
            team::plan_progress::seed(d, &spec).await?;
            let result = team::turns::run(d, &spec, team).await;
            // The run's memory as it ends, kept with the run (a run that already ended keeps none).
            if !matches!(result, Err(Halt::Ended)) {
                team::memory::snapshot(&d.handle(), "end").await?;
            }
            result?
        }
        (None, Some(phases)) => collab::collaborate(d, &spec, phases.clone()).await?,
        (None, None) => flow::single(d, &spec).await?,
    };
    // A run paused after its last step completes once resumed.
    d.checkpoint().await?;
    Ok(result)
}
