//! One orchestrated run as durable steps over the engine. Every step's
//! outcome is journaled as a turn of the run (its metadata holds the step's
//! key and output), and every question is a gate opened under an
//! idempotency key made from the step. Driving a run again after a restart
//! therefore replays what was done, reopens nothing, and continues where
//! it stopped: a run waiting at a gate is still waiting on the same gate;
//! a provider call that never reached the journal is made again.
//!
//! Before each step the driver honours the run's control: a paused run
//! waits (step mode and breakpoints pause it after an agent turn), an ended
//! run stops the driver, and a run cancelled during a provider call drops
//! the call.

use std::collections::HashMap;
use std::future::Future;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use gatehouse_engine::policy::DecisionType;
use gatehouse_engine::{
    Decision, Directive, Engine, EngineError, Gate, GateStatus, NewGate, NewTurn, Role, Run, RunId, RunStatus,
};
use gatehouse_providers::{AuditedResponse, Payload, ProviderError, ProviderResponse, RunInput, Tool};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio::sync::broadcast::error::RecvError;

use crate::Orchestrator;
use crate::AGENT;

/// Why a driver stops before finishing its run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Halt {
    /// The run ended without the driver (a reviewer cancelled it...): nothing to do.
    Ended,
    /// A reviewer said no: the driver cancels the run with this reason.
    Cancel(String),
    /// Something broke that no reviewer can fix: the driver fails the run.
    Fail(String),
}

pub(crate) type Step<T> = Result<T, Halt>;

/// What a step records on the run's timeline.
pub(crate) struct Record<T> {
    /// The step's result, journaled.
    pub value: T,
    /// What the timeline shows (markdown).
    pub content: String,
    /// Further turn metadata (`tool_call`, `error`) for breakpoints.
    pub extra: Map<String, Value>,
}

impl<T> Record<T> {
    pub fn new(value: T, content: impl Into<String>) -> Self {
        Self { value, content: content.into(), extra: Map::new() }
    }

    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }
}

/// How long a wait sleeps without hearing an event before it looks again.
const RECHECK: Duration = Duration::from_secs(2);

/// What a step needs of its run besides the journal: the engine, the
/// providers, the run's control. Cheap to clone into a step's work.
#[derive(Clone)]
pub(crate) struct Handle {
    orch: Arc<Orchestrator>,
    /// The run.
    pub run_id: RunId,
}

/// A run being driven: its handle, its journal and how many times a
/// reviewer retried it.
pub(crate) struct Driver {
    h: Handle,
    journal: HashMap<String, Value>,
    retries: u32,
}

impl Deref for Driver {
    type Target = Handle;
    fn deref(&self) -> &Handle {
        &self.h
    }
}

impl Driver {
    /// The driver of `run_id`, with the journal of what was already done.
    pub async fn load(orch: Arc<Orchestrator>, run_id: RunId) -> Step<(Self, Run)> {
        let id = run_id.clone();
        let (run, turns) = call(&orch.engine, move |e| Ok((e.run(&id)?, e.turns(&id)?))).await?;
        let mut journal = HashMap::new();
        for turn in turns.iter().filter(|t| t.actor == AGENT) {
            if let Some(entry) = turn.metadata.get("orchestrator") {
                if let (Some(key), Some(output)) = (entry.get("key").and_then(Value::as_str), entry.get("output")) {
                    journal.insert(key.to_owned(), output.clone());
                }
            }
        }
        Ok((Self { h: Handle { orch, run_id }, journal, retries: run.retries }, run))
    }

    /// Whether the step or note under `key` was already done.
    pub fn journaled(&self, key: &str) -> bool {
        self.journal.contains_key(key)
    }

    /// What the step or note under `key` journaled, if it was done.
    pub fn output(&self, key: &str) -> Option<&Value> {
        self.journal.get(key)
    }

    /// A handle for a step's work.
    pub fn handle(&self) -> Handle {
        self.h.clone()
    }

    /// A journaled step: done once, recorded as one agent turn (which may
    /// pause the run in step mode or at a breakpoint), replayed from the
    /// journal when the run is driven again.
    pub async fn step<T, F, Fut>(&mut self, key: &str, step: &str, work: F) -> Step<T>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Step<Record<T>>>,
    {
        if let Some(done) = self.journal.get(key) {
            return serde_json::from_value(done.clone())
                .map_err(|e| Halt::Fail(format!("the journal entry of step `{key}` cannot be read: {e}")));
        }
        self.checkpoint().await?;
        let record = work().await?;
        let output = serde_json::to_value(&record.value)
            .map_err(|e| Halt::Fail(format!("step `{key}` produced an unrecordable result: {e}")))?;
        let mut metadata = record.extra;
        metadata.insert("step".into(), Value::from(step));
        metadata.insert("orchestrator".into(), json!({"key": key, "output": output}));
        let turn = NewTurn {
            role: Role::Agent,
            actor: Some(AGENT.to_owned()),
            content: record.content,
            score: None,
            metadata: Value::Object(metadata),
        };
        let directive = loop {
            let (id, t) = (self.run_id.clone(), turn.clone());
            match call(&self.orch.engine, move |e| e.agent_turn(&id, t, AGENT)).await {
                Ok((recorded, directive)) => break (recorded.index, directive),
                // Paused between the checkpoint and the turn: wait, then record it.
                Err(Halt::Fail(_)) if self.is_paused().await => self.checkpoint().await?,
                Err(Halt::Fail(reason)) if self.has_ended().await => {
                    tracing::debug!(run = %self.run_id, %reason, "run ended during a step");
                    return Err(Halt::Ended);
                }
                Err(other) => return Err(other),
            }
        };
        self.journal.insert(key.to_owned(), output);
        self.keep_delivered(key, directive.0, directive.1).await?;
        Ok(record.value)
    }

    /// Journals what a reviewer's directive delivered with the turn under
    /// `key` (instructions, a next-agent choice), so a flow that acts on
    /// them finds them at the same step when the run is driven again; `at`
    /// is the index of the step's turn, which orders deliveries.
    async fn keep_delivered(&mut self, key: &str, at: u32, directive: Directive) -> Step<()> {
        if directive.instructions.is_empty() && directive.next_agent.is_none() {
            return Ok(());
        }
        let texts: Vec<&str> = directive.instructions.iter().map(|i| i.text.as_str()).collect();
        let output = json!({"next_agent": directive.next_agent, "instructions": texts, "at": at});
        let content = match &directive.next_agent {
            Some(agent) => format!("Delivered the reviewer's choice of the next agent, `{agent}`."),
            None => format!("Delivered {} reviewer instruction(s).", texts.len()),
        };
        self.note_with(&format!("{key}:delivered"), content, json!({"delivered": output}), output.clone()).await
    }

    /// What reviewers' directives delivered with any step keyed `scope` or
    /// under it (`scope:...`), with the step's key, in the order they were
    /// delivered (those journaled before the order was kept, without `at`,
    /// first): every step delivers what is held, whichever step it is.
    pub fn delivered_within(&self, scope: &str) -> Vec<(&str, &Value)> {
        let under = format!("{scope}:");
        let mut found: Vec<(&str, &Value)> = self
            .journal
            .iter()
            .filter_map(|(k, v)| Some((k.strip_suffix(":delivered")?, v)))
            .filter(|(step, _)| *step == scope || step.starts_with(&under))
            .collect();
        found.sort_by_key(|(step, v)| (v.get("at").and_then(Value::as_u64).unwrap_or(0), *step));
        found
    }

    /// A system note on the timeline, once per key (the audit trail's record of a decision).
    pub async fn note(&mut self, key: &str, content: String, metadata: Value) -> Step<()> {
        self.note_with(key, content, metadata, Value::Bool(true)).await
    }

    /// A system note journaling `output` under `key`.
    pub(crate) async fn note_with(&mut self, key: &str, content: String, metadata: Value, output: Value) -> Step<()> {
        if self.journal.contains_key(key) {
            return Ok(());
        }
        let mut metadata = match metadata {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        metadata.insert("orchestrator".into(), json!({"key": key, "output": output}));
        let turn = NewTurn {
            role: Role::System,
            actor: Some(AGENT.to_owned()),
            content,
            score: None,
            metadata: Value::Object(metadata),
        };
        let id = self.run_id.clone();
        self.engine(move |e| e.add_turn(&id, turn, AGENT)).await?;
        self.journal.insert(key.to_owned(), output);
        Ok(())
    }

    /// Asks a reviewer: opens the gate under `key` (or finds it again) and
    /// waits until it closes, then notes on the timeline how it was decided
    /// (decision type and latency, the audit trail of decisions). A
    /// gate withdrawn because the run ended stops the driver.
    pub async fn ask(&mut self, key: &str, step: &str, gate: NewGate) -> Step<Gate> {
        match self.ask_or_expired(key, step, gate).await? {
            Some(gate) => Ok(gate),
            None => Err(Halt::Fail(format!("the {step} gate expired unanswered"))),
        }
    }

    /// [`Driver::ask`], where a gate that expired unanswered is `None`
    /// rather than the end of the run (an agent's question may time out).
    pub async fn ask_or_expired(&mut self, key: &str, step: &str, mut gate: NewGate) -> Step<Option<Gate>> {
        self.checkpoint().await?;
        gate.agent = Some(AGENT.to_owned());
        // After a retry, a gate found closed undecided (withdrawn when the
        // run ended) is passed over: the step asks again under the next
        // retry's key, so decided steps are found and undecided ones asked anew.
        let mut attempt = 0;
        let opened = loop {
            let mut g = gate.clone();
            g.idempotency_key = Some(if attempt == 0 { key.to_owned() } else { format!("{key}#retry{attempt}") });
            let id = self.run_id.clone();
            let opened = self.engine(move |e| e.open_gate(&id, g, AGENT)).await?;
            if opened.status != GateStatus::Pending && opened.decision.is_none() && attempt < self.retries {
                attempt += 1;
                continue;
            }
            break opened;
        };
        let gate_id = opened.id.clone();
        let closed = if opened.status == GateStatus::Pending {
            self.wait_for(move |e| Ok(Some(e.gate(&gate_id)?).filter(|g| g.status != GateStatus::Pending))).await?
        } else {
            opened
        };
        let Some(decision) = closed.decision.clone() else {
            return match closed.status {
                GateStatus::Expired => Ok(None),
                _ => Err(Halt::Ended),
            };
        };
        let kind = decision.decision_type();
        let content = format!(
            "{}: {} by {} after {}{}",
            title(step),
            decision_type_name(kind),
            decision.decided_by,
            seconds(decision.latency_ms),
            decision.text.as_deref().filter(|t| !t.trim().is_empty()).map(|t| format!(": {t}")).unwrap_or_default()
        );
        let metadata = json!({
            "step": step,
            "gate_id": closed.id,
            "decision_type": kind,
            "action": decision.action,
            "latency_ms": decision.latency_ms,
            "decided_by": decision.decided_by,
        });
        self.note(&format!("{key}:decided"), content, metadata).await?;
        Ok(Some(closed))
    }
}

impl Handle {
    pub fn orchestrator(&self) -> &Orchestrator {
        &self.orch
    }

    /// Drives another run too (a parallel branch) unless it is driven already.
    pub fn drive_also(&self, run: RunId) {
        self.orch.drive(run);
    }

    /// Runs `f` on the engine off the async runtime.
    pub async fn engine<T, F>(&self, f: F) -> Step<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    {
        match call(&self.orch.engine, f).await {
            Err(Halt::Fail(reason)) if self.has_ended().await => {
                tracing::debug!(run = %self.run_id, %reason, "run ended under the driver");
                Err(Halt::Ended)
            }
            other => other,
        }
    }

    async fn has_ended(&self) -> bool {
        let id = self.run_id.clone();
        match call(&self.orch.engine, move |e| e.run(&id)).await {
            Ok(run) => run.status.is_terminal(),
            Err(halt) => halt == Halt::Ended,
        }
    }

    /// Waits until `check` finds something, looking again whenever the
    /// run logs an event (and every few seconds regardless).
    pub async fn wait_for<T, F>(&self, check: F) -> Step<T>
    where
        T: Send + 'static,
        F: Fn(&Engine) -> Result<Option<T>, EngineError> + Send + Sync + 'static,
    {
        let check = Arc::new(check);
        loop {
            let mut events = self.orch.engine.live_events();
            let c = Arc::clone(&check);
            if let Some(found) = self.engine(move |e| c(e)).await? {
                return Ok(found);
            }
            let run_id = self.run_id.clone();
            let heard = async move {
                loop {
                    match events.recv().await {
                        Ok(event) if event.body.run_id.as_ref() == Some(&run_id) => return,
                        Ok(_) => {}
                        Err(RecvError::Lagged(_)) => return,
                        Err(RecvError::Closed) => std::future::pending::<()>().await,
                    }
                }
            };
            let _ = tokio::time::timeout(RECHECK, heard).await;
        }
    }

    /// Returns once the run may take its next step: at once while it is
    /// live and not paused; after a reviewer resumes or steps a paused run.
    pub async fn checkpoint(&self) -> Step<()> {
        let id = self.run_id.clone();
        let status = self.wait_for(move |e| Ok(Some(e.run(&id)?.status).filter(|s| *s != RunStatus::Paused))).await?;
        if status.is_terminal() {
            return Err(Halt::Ended);
        }
        Ok(())
    }

    /// Resolves once the run has ended (to race a provider call against a cancellation).
    async fn ended(&self) -> Halt {
        let id = self.run_id.clone();
        match self.wait_for(move |e| Ok(e.run(&id)?.status.is_terminal().then_some(()))).await {
            Ok(()) | Err(Halt::Ended) => Halt::Ended,
            Err(other) => other,
        }
    }

    async fn is_paused(&self) -> bool {
        let id = self.run_id.clone();
        matches!(call(&self.orch.engine, move |e| e.run(&id)).await, Ok(run) if run.status == RunStatus::Paused)
    }

    /// Calls the provider for `tool`, dropping the call if the run ends meanwhile.
    pub async fn call_provider(&self, tool: &Tool, payload: &Payload) -> Step<Result<ProviderResponse, ProviderError>> {
        let found = self
            .orch
            .registry
            .resolve(&tool.name)
            .map_err(|e| Halt::Fail(format!("the tool went away while the run was driven: {e}")))?;
        let provider = Arc::clone(found.provider);
        tokio::select! {
            result = provider.call(tool, payload) => Ok(result),
            halt = self.ended() => Err(halt),
        }
    }

    /// The tool named `name` and a clone of it.
    pub fn tool(&self, name: &str) -> Step<Tool> {
        self.orch
            .registry
            .resolve(name)
            .map(|found| found.tool.clone())
            .map_err(|e| Halt::Fail(format!("{e} (was its provider's configuration removed?)")))
    }

    /// Prepares the payload for `input` with the tool's provider.
    pub fn prepare(&self, input: &RunInput) -> Result<Payload, ProviderError> {
        let found = self.orch.registry.resolve(&input.tool)?;
        found.provider.prepare(found.tool, input)
    }

    /// Validates `payload` for `tool`.
    pub fn validate(&self, tool: &Tool, payload: &Payload) -> gatehouse_providers::ValidationReport {
        match self.orch.registry.resolve(&tool.name) {
            Ok(found) => found.provider.validate(found.tool, payload),
            Err(_) => gatehouse_providers::validate::check(tool, payload),
        }
    }

    /// Audits a response with the tool's provider.
    pub fn audit(&self, tool: &Tool, response: &ProviderResponse) -> AuditedResponse {
        match self.orch.registry.resolve(&tool.name) {
            Ok(found) => found.provider.audit(response),
            Err(_) => gatehouse_providers::audit::audit(response),
        }
    }
}

/// Runs `f` on the blocking pool; engine errors become [`Halt::Fail`].
async fn call<T, F>(engine: &Engine, f: F) -> Step<T>
where
    T: Send + 'static,
    F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
{
    let engine = engine.clone();
    match tokio::task::spawn_blocking(move || f(&engine)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(EngineError::RunEnded { .. } | EngineError::NotFound { what: "run", .. })) => Err(Halt::Ended),
        Ok(Err(e)) => Err(Halt::Fail(e.to_string())),
        Err(e) => Err(Halt::Fail(format!("an engine call failed: {e}"))),
    }
}

/// The decision a gate closed with, for callers that checked it has one.
pub(crate) fn decision_of(gate: &Gate) -> &Decision {
    gate.decision.as_ref().expect("Driver::ask returns decided gates only")
}

fn decision_type_name(kind: DecisionType) -> &'static str {
    match kind {
        DecisionType::AutoApproved => "auto_approved",
        DecisionType::HumanApproved => "human_approved",
        DecisionType::HumanEdited => "human_edited",
        DecisionType::HumanRejected => "human_rejected",
        DecisionType::HumanResponded => "human_responded",
        DecisionType::SystemDecided => "system_decided",
    }
}

fn title(step: &str) -> String {
    let spaced = step.replace('_', " ");
    let mut chars = spaced.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

fn seconds(ms: i64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}
