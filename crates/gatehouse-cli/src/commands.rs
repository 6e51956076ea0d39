//! The maintenance commands: recordings (export, import, replay), the
//! expiry sweep and retention (audit verification is in `audit.rs`). Each
//! is a thin wrapper over one engine call that explains its result in
//! plain words.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use gatehouse_engine::event::{EventBody, EventKind};
use gatehouse_engine::{
    private_files, Engine, Gate, GateId, Recording, RecordingScope, Replay, RunFilter, RunId, RunStatus,
};

use crate::out::outln;
use crate::table::{short, snake, Table};

/// Who the audit log names for changes made from the command line.
pub const CLI_ACTOR: &str = "cli";

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Write to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// Exactly one of the three scopes.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct ScopeArgs {
    /// One run (the same as --run).
    #[arg(value_name = "RUN_ID")]
    run_id: Option<String>,
    /// One run.
    #[arg(long, value_name = "RUN_ID")]
    run: Option<String>,
    /// Every run of a session.
    #[arg(long, value_name = "SESSION_ID")]
    session: Option<String>,
    /// The whole database.
    #[arg(long)]
    all: bool,
}

/// `export`: a recording as pretty JSON to a file or stdout.
pub fn export(engine: &Engine, args: &ExportArgs) -> Result<()> {
    let run = args.scope.run.as_ref().or(args.scope.run_id.as_ref());
    let (scope, what) = match (run, &args.scope.session) {
        (Some(run), _) => (RecordingScope::Run { run_id: RunId::from_string(run.as_str()) }, format!("run {run}")),
        (None, Some(session)) => {
            (RecordingScope::Session { session_id: session.clone() }, format!("session {session}"))
        }
        (None, None) => (RecordingScope::All, "the database".to_owned()),
    };
    let recording = engine
        .export(scope)
        .with_context(|| format!("cannot export {what} (`gatehouse runs list` shows the runs and their sessions)"))?;
    match &args.output {
        Some(path) => {
            // A recording holds every payload and decision: readable only by its owner.
            let file = private_files::create_private_file(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            write_json(BufWriter::new(file), &recording).with_context(|| format!("cannot write {}", path.display()))?;
            let gates: usize = recording.runs.iter().map(|r| r.gates.len()).sum();
            outln!(
                "exported {} runs, {gates} gates and {} events to {}",
                recording.runs.len(),
                recording.events.len(),
                path.display()
            );
        }
        None => write_json(std::io::stdout().lock(), &recording).context("cannot write the recording to stdout")?,
    }
    Ok(())
}

fn write_json(mut out: impl Write, recording: &Recording) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, recording)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Reads and parses a recording file.
fn read_recording(path: &Path) -> Result<Recording> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!("{} is not a Gatehouse recording; expected the JSON written by `gatehouse export`", path.display())
    })
}

/// `import`: brings a recording's runs into this database.
pub fn import(engine: &Engine, path: &Path) -> Result<()> {
    let recording = read_recording(path)?;
    let summary = engine.import(recording, CLI_ACTOR).with_context(|| {
        format!("cannot import {}; nothing was imported (an import is all or nothing)", path.display())
    })?;
    outln!("imported {}", path.display());
    outln!("runs:    {}", summary.runs.len());
    outln!("gates:   {}", summary.gates);
    outln!("events:  {}", summary.events);
    for run in &summary.runs {
        outln!("  {run}");
    }
    Ok(())
}

/// `replay`: one line per event, then the state the events lead to.
pub fn replay(path: &Path) -> Result<()> {
    let recording = read_recording(path)?;
    let gates: HashMap<&GateId, &Gate> = recording.runs.iter().flat_map(|r| &r.gates).map(|g| (&g.id, g)).collect();
    let mut replay = Replay::new(&recording);
    while let Some(event) = replay.step() {
        let at = event.at.format("%Y-%m-%d %H:%M:%S%.3f");
        outln!("{at}  {:<20} {:<20} {}", short(&event.actor, 20), event.kind.name(), detail(event, &gates));
    }
    let state = replay.state();
    outln!();
    outln!("replayed {} events of {} runs", replay.position(), recording.runs.len());
    let count = |names: Vec<String>| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for name in names {
            *counts.entry(name).or_default() += 1;
        }
        counts.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    };
    outln!("runs:       {}", count(state.runs.values().map(|s| s.as_str().to_owned()).collect()));
    outln!("gates:      {}", count(state.gates.values().map(|s| s.as_str().to_owned()).collect()));
    outln!("turns:      {}", state.turns);
    outln!("decisions:  {}", state.decisions);
    Ok(())
}

/// `replay --live`: plays the recording on the running server, where the
/// Runs view (and any follower of the replay's stream) watches it unfold.
pub fn replay_live(api: &crate::client::Api, path: &Path, speed: f64) -> Result<()> {
    let recording = read_recording(path)?;
    let body = serde_json::json!({"recording": recording, "speed": speed});
    let started: serde_json::Value = api.post(&["replays"], &body)?;
    let id = started["id"].as_str().unwrap_or_default();
    outln!("replaying {} events at {speed}x on {} as replay {id}", started["total"], api.server());
    outln!("watch it in the Runs view, or follow {}/api/hitl/replays/{id}/events", api.server().trim_end_matches('/'));
    Ok(())
}

/// A short description of an event for the replay listing.
fn detail(event: &EventBody, gates: &HashMap<&GateId, &Gate>) -> String {
    let about = |id: &GateId| match gates.get(id) {
        Some(g) => format!("{} \"{}\"", g.kind().as_str(), short(&g.text, 50)),
        None => id.to_string(),
    };
    match &event.kind {
        EventKind::RunCreated { run } => format!("{} \"{}\"", run.agent, short(&run.title, 60)),
        EventKind::RunStatusChanged { from, to, reason } => {
            let why = reason.as_deref().map(|r| format!(" ({})", short(r, 60))).unwrap_or_default();
            format!("{} -> {}{why}", from.as_str(), to.as_str())
        }
        EventKind::TurnAdded { turn } => format!("{} {}: {}", snake(&turn.role), turn.actor, short(&turn.content, 60)),
        EventKind::GateOpened { gate } => {
            format!("{} {} {}", gate.mode.as_str(), snake(&gate.priority), about(&gate.id))
        }
        EventKind::GateAutoPassed { gate, decision } => {
            let reason = match &decision.origin {
                gatehouse_engine::DecisionOrigin::Auto { reason } => reason.as_str(),
                _ => "",
            };
            format!("{} passed: {}", about(&gate.id), short(reason, 60))
        }
        EventKind::GateResolved { gate_id, decision } => {
            let text = decision.text.as_deref().map(|t| format!(": {}", short(t, 50))).unwrap_or_default();
            format!("{} {} by {}{text}", about(gate_id), decision.action.as_str(), decision.decided_by)
        }
        EventKind::ActionsDecided { gate_id, decisions } => {
            let each = decisions.iter().map(|d| format!("{} {}", d.id, d.action.as_str())).collect::<Vec<_>>();
            format!("{} {} by {}", about(gate_id), each.join(", "), decisions.first().map_or("", |d| &d.decided_by))
        }
        EventKind::VoteRecorded { gate_id, vote } => {
            format!("{} {} votes {}", about(gate_id), vote.reviewer, vote.action.as_str())
        }
        EventKind::ResolutionRefused { gate_id, attempted_by, resolved_by, status, .. } => {
            let by = resolved_by.as_deref().map(|b| format!(" by {b}")).unwrap_or_default();
            format!("{} {attempted_by} was too late: already {}{by}", about(gate_id), status.as_str())
        }
        EventKind::GateEscalated { gate_id, reason, .. } => {
            format!("{} escalated: {}", about(gate_id), short(reason, 60))
        }
        EventKind::GateReleased { gate_id, .. } => format!("{} released, still open", about(gate_id)),
        EventKind::GateExpired { gate_id, reason } | EventKind::GateCancelled { gate_id, reason } => {
            format!("{} {}", about(gate_id), short(reason, 60))
        }
        EventKind::ContextSet { key, new, .. } => format!("{key} = {}", short(&new.to_string(), 60)),
        EventKind::ContextDeleted { key, .. } => format!("{key} deleted"),
        EventKind::GlobalMemorySet { key, new, .. } => format!("global {key} = {}", short(&new.to_string(), 60)),
        EventKind::GlobalMemoryDeleted { key, .. } => format!("global {key} deleted"),
        EventKind::PlanRevised { revision } => {
            format!("revision {}: {}", revision.revision, short(&revision.change_log.join("; "), 80))
        }
        EventKind::ScoreRecorded { agent, score, .. } => {
            format!("{agent} scored {:.2} by {}", score.score, score.scorer)
        }
        EventKind::RunControlChanged { step_mode, breakpoints } => {
            format!("{} mode, {} breakpoints", snake(step_mode), breakpoints.len())
        }
        EventKind::InstructionInjected { instruction } => {
            format!("{} instructs: {}", instruction.by, short(&instruction.text, 60))
        }
        EventKind::NextAgentSet { agent } => match agent {
            Some(agent) => format!("next agent: {agent}"),
            None => "next-agent choice withdrawn".to_owned(),
        },
        EventKind::DirectiveDelivered { instructions, next_agent } => {
            let next = next_agent.as_deref().map(|a| format!(", next agent {a}")).unwrap_or_default();
            format!("{} instructions delivered{next}", instructions.len())
        }
        EventKind::AllowRuleCreated { rule } => {
            let until = rule.expires_at.map(|at| at.format("until %Y-%m-%d %H:%M").to_string());
            format!("always allow {} for {}, {}", rule.action, rule.agent, until.as_deref().unwrap_or("until revoked"))
        }
        EventKind::AllowRuleRevoked { rule } => format!("{} ({} for {})", rule.id, rule.action, rule.agent),
        EventKind::RecordingImported { runs, events } => format!("{} runs, {events} events", runs.len()),
        EventKind::TokenCreated { token } => format!("{} ({})", token.name, token.role.as_str()),
        EventKind::TokenRevoked { token_id } => token_id.clone(),
        EventKind::RetentionPurged { runs, older_than } => {
            format!("{} runs older than {}", runs.len(), older_than.format("%Y-%m-%d"))
        }
        EventKind::AlertRaised { alert } | EventKind::AlertCleared { alert } => alert.message.clone(),
    }
}

/// `sweep`: expires stale gates and names them.
pub fn sweep(engine: &Engine) -> Result<()> {
    let expired = engine.sweep_expired().context("cannot run the expiry sweep")?;
    if expired.is_empty() {
        outln!("nothing to expire: no pending gate is past its deadline");
        return Ok(());
    }
    outln!("expired {} gates:", expired.len());
    let mut table = Table::new(&["id", "kind", "mode", "agent", "preview"]);
    for id in &expired {
        let gate = engine.gate(id).with_context(|| format!("cannot read expired gate {id}"))?;
        table.row(vec![
            id.to_string(),
            gate.kind().as_str().into(),
            gate.mode.as_str().into(),
            gate.agent.clone(),
            gate.preview(),
        ]);
    }
    table.print("  ");
    Ok(())
}

/// `retention purge`: removes old finished runs and names them.
pub fn purge(engine: &Engine, days: u32) -> Result<()> {
    // Read the titles first: after the purge only the ids remain.
    let finished = RunFilter {
        statuses: vec![RunStatus::Completed, RunStatus::Failed, RunStatus::Cancelled],
        ..RunFilter::default()
    };
    let known: HashMap<RunId, (String, String, String)> = engine
        .runs(&finished)
        .context("cannot list finished runs")?
        .into_iter()
        .map(|r| (r.id, (r.status.as_str().to_owned(), r.agent, r.title)))
        .collect();
    let report = engine.purge_terminal_runs(days).context("cannot purge old runs")?;
    let cutoff = report.older_than.format("%Y-%m-%d %H:%M:%S UTC");
    if report.runs.is_empty() {
        outln!("nothing to purge: no finished run was last changed before {cutoff}");
        return Ok(());
    }
    outln!("purged {} runs last changed before {cutoff}:", report.runs.len());
    let mut table = Table::new(&["id", "status", "agent", "title"]);
    for id in &report.runs {
        let (status, agent, title) = known.get(id).cloned().unwrap_or_default();
        table.row(vec![id.to_string(), status, agent, short(&title, 60)]);
    }
    table.print("  ");
    outln!("their events keep their hashes, so `gatehouse audit verify` still checks the whole chain");
    Ok(())
}
