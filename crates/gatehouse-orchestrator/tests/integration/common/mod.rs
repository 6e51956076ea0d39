//! Test harness: an orchestrator over a real SQLite file, the scripted
//! provider (and, where a test adds one, a provider speaking a wire
//! protocol to a local HTTP server), a reviewer acting through the
//! engine, and the team tests' shared pieces (members, steps, scripted calls).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_engine::{
    DecisionInput, Engine, EngineConfig, Gate, GateFilter, GateKind, NewRun, Run, RunId, RunStatus, Turn,
};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{Provider, ProviderRegistry, ScriptedProvider, Step};
use serde_json::{json, Value};

/// How long a test waits for something before failing.
pub const PATIENCE: Duration = Duration::from_secs(15);

pub struct Harness {
    /// Holds the SQLite file's directory until the harness is dropped.
    _dir: tempfile::TempDir,
    pub engine: Engine,
    pub orch: Arc<Orchestrator>,
    pub scripted: Arc<ScriptedProvider>,
}

/// The demo's scripted provider, and a registry of it plus `extra`.
pub fn registry(extra: Vec<Arc<dyn Provider>>) -> (ProviderRegistry, Arc<ScriptedProvider>) {
    let scripted = Arc::new(ScriptedProvider::demo());
    let mut registry = ProviderRegistry::new();
    registry.register(scripted.clone()).expect("scripted registers");
    for provider in extra {
        registry.register(provider).expect("provider registers");
    }
    (registry, scripted)
}

pub fn open(path: &Path) -> Engine {
    Engine::open(path, EngineConfig::default()).expect("engine opens")
}

impl Harness {
    pub fn new() -> Self {
        Self::with(Vec::new())
    }

    pub fn with(extra: Vec<Arc<dyn Provider>>) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = open(&dir.path().join("gatehouse.db"));
        let (registry, scripted) = registry(extra);
        let orch = Orchestrator::new(engine.clone(), registry);
        Self { _dir: dir, engine, orch, scripted }
    }

    /// Starts an orchestrated run of `input` under `config` (a `NewRun` as JSON, e.g. its `hitl_config`).
    pub async fn start(&self, input: Value, config: Value) -> Run {
        let template: NewRun = serde_json::from_value(config).expect("a NewRun");
        self.orch.start(&input, template, "alice").await.expect("the run starts")
    }

    /// The run's pending gate of `kind`, once it is open.
    pub async fn gate(&self, run: &RunId, kind: GateKind) -> Gate {
        let filter = GateFilter { run_id: Some(run.clone()), kind: Some(kind), ..GateFilter::pending() };
        let found = self.until(|e| Ok(e.gates(&filter)?.into_iter().next())).await;
        found.unwrap_or_else(|| panic!("no pending {kind:?} gate on run {run}: {:#?}", self.history(run)))
    }

    /// Decides a gate as the reviewer `alice`.
    pub fn decide(&self, gate: &Gate, input: DecisionInput) -> Gate {
        self.engine.resolve_gate(&gate.id, input, "alice").expect("the decision is taken")
    }

    /// The run once it has `status`.
    pub async fn status(&self, run: &RunId, status: RunStatus) -> Run {
        let found = self.until(|e| Ok(Some(e.run(run)?).filter(|r| r.status == status))).await;
        found.unwrap_or_else(|| panic!("run {run} never became {status:?}: {:#?}", self.history(run)))
    }

    /// Waits for `check` to find something, up to [`PATIENCE`].
    pub async fn until<T>(&self, check: impl Fn(&Engine) -> gatehouse_engine::Result<Option<T>>) -> Option<T> {
        until(&self.engine, check).await
    }

    /// Every gate of the run, oldest first.
    pub fn gates(&self, run: &RunId) -> Vec<Gate> {
        let mut gates = self.engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
        gates.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        gates
    }

    pub fn turns(&self, run: &RunId) -> Vec<Turn> {
        self.engine.turns(run).unwrap()
    }

    /// The run's turns as "role actor: content" lines, for failure messages.
    pub fn history(&self, run: &RunId) -> Vec<String> {
        history(&self.engine, run)
    }
}

pub async fn until<T>(engine: &Engine, check: impl Fn(&Engine) -> gatehouse_engine::Result<Option<T>>) -> Option<T> {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if let Some(found) = check(engine).expect("engine read") {
            return Some(found);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

pub fn history(engine: &Engine, run: &RunId) -> Vec<String> {
    let mut lines: Vec<String> = engine
        .turns(run)
        .unwrap_or_default()
        .iter()
        .map(|t| format!("{:?} {}: {}", t.role, t.actor, t.content))
        .collect();
    if let Ok(r) = engine.run(run) {
        lines.push(format!("run status {:?} ({:?})", r.status, r.status_reason));
    }
    lines
}

/// The audit notes' decision types, in order: `step decision_type`.
pub fn decision_types(turns: &[Turn]) -> Vec<String> {
    turns
        .iter()
        .filter_map(|t| {
            let step = t.metadata.get("step")?.as_str()?;
            let kind = t.metadata.get("decision_type")?.as_str()?;
            Some(format!("{step} {kind}"))
        })
        .collect()
}

/// A team member on the scripted provider's `chat` model, with these tools.
pub fn member(name: &str, role: &str, tools: &[&str]) -> Value {
    json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools})
}

/// The metadata of the turns recording `step`, in order.
pub fn steps(turns: &[Turn], step: &str) -> Vec<Value> {
    turns.iter().filter(|t| t.metadata["step"] == step).map(|t| t.metadata.clone()).collect()
}

/// Every request the scripted provider was sent, as JSON text.
pub fn prompts(scripted: &ScriptedProvider) -> Vec<String> {
    scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect()
}

/// A scripted step answering with `text` and these tool calls.
pub fn calls(text: &str, list: Vec<(&str, Value)>) -> Step {
    Step::Calls(text.into(), list.into_iter().map(|(n, a)| (n.to_owned(), a)).collect())
}

/// A runtime of its own, for a test that drops it to "kill" the process.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Whether the run is paused.
pub fn paused(engine: &Engine, run: &RunId) -> bool {
    engine.run(run).map(|r| r.status == RunStatus::Paused).unwrap_or(false)
}
