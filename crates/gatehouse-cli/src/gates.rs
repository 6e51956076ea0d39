//! `gates show` and `gates resolve`: a reviewer's desk at the terminal.
//! Both go through the server: it records the token's identity as the
//! decider and wakes the agent waiting on the gate, which a change made
//! straight to the database could not do.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use clap::{ArgGroup, Args, Subcommand};
use gatehouse_engine::diff::PayloadDiff;
use gatehouse_engine::{DecisionAction, DecisionInput, DecisionOrigin, Gate, GateStatus, RunStatus, Turn};
use serde::Deserialize;
use serde_json::Value;

use crate::client::Api;
use crate::listing::GatesListArgs;
use crate::out::outln;
use crate::table::{age, short, snake};

/// The `gates` subcommands.
#[derive(Debug, Subcommand)]
pub enum GatesCommand {
    /// Pending gates in the reviewer's order (sync first, then priority, then age); others newest first.
    List(GatesListArgs),
    /// One gate for review: its text, payload, payload against the example input, and decision.
    Show {
        /// The gate (`gate_...`, as `gates list` shows it).
        gate_id: String,
    },
    /// Decide a gate (needs a reviewer or admin token); the waiting agent wakes at once.
    Resolve(ResolveArgs),
}

/// Arguments of `gates resolve`: exactly one decision.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("decision").required(true).multiple(false)))]
pub struct ResolveArgs {
    /// The gate.
    gate_id: String,
    /// Go ahead as proposed.
    #[arg(long, group = "decision")]
    approve: bool,
    /// Do not go ahead, for this reason.
    #[arg(long, group = "decision", value_name = "REASON")]
    reject: Option<String>,
    /// Answer a question.
    #[arg(long, group = "decision", value_name = "TEXT")]
    respond: Option<String>,
    /// Go ahead with this edited payload: a JSON file, or `-` for stdin.
    #[arg(long, group = "decision", value_name = "FILE")]
    edit: Option<PathBuf>,
    /// Rework and ask again, with this feedback.
    #[arg(long, group = "decision", value_name = "FEEDBACK")]
    needs_revision: Option<String>,
    /// Try the step again, with this feedback.
    #[arg(long, group = "decision", value_name = "FEEDBACK")]
    retry: Option<String>,
    /// Not now: the agent continues without an answer.
    #[arg(long, group = "decision")]
    defer: bool,
    /// A note recorded with --approve, --edit or --defer.
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["reject", "respond", "needs_revision", "retry"])]
    reason: Option<String>,
}

/// `GET /gates/{id}`.
#[derive(Debug, Deserialize)]
struct GateDetail {
    gate: Gate,
    payload_diff: Option<PayloadDiff>,
    run_title: String,
    run_status: RunStatus,
    recent_turns: Vec<Turn>,
}

/// Runs a `gates` subcommand.
pub fn run(api: &Api, command: &GatesCommand) -> Result<()> {
    match command {
        GatesCommand::List(args) => crate::listing::gates(api, args),
        GatesCommand::Show { gate_id } => show(api, gate_id),
        GatesCommand::Resolve(args) => resolve(api, args),
    }
}

fn show(api: &Api, gate_id: &str) -> Result<()> {
    let detail: GateDetail = api.get(&["gates", gate_id])?;
    let (gate, now) = (&detail.gate, Utc::now());
    outln!("Gate {}", gate.id);
    field("kind", &format!("{} ({}, {} priority)", gate.kind().as_str(), gate.mode.as_str(), snake(&gate.priority)));
    field("status", &status_line(gate));
    field("run", &format!("{} \"{}\" ({})", gate.run_id, short(&detail.run_title, 60), detail.run_status.as_str()));
    field("agent", &gate.agent);
    field("opened", &format!("{} ({} ago)", when(gate.created_at), age(gate.created_at, now)));
    if let Some(at) = gate.expires_at.filter(|_| gate.status == GateStatus::Pending) {
        let left = if at > now { format!("in {}", age(now, at)) } else { "due now".to_owned() };
        field("expires", &format!("{} ({left})", when(at)));
    }
    let actions: Vec<&str> = gate.allowed_actions.iter().map(|a| a.as_str()).collect();
    field("decisions", &actions.join(", "));
    spec_fields(gate);
    if let Some(task) = &gate.context.task_id {
        let about = gate.context.task_description.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
        field("task", &format!("{task}{about}"));
    }
    if let Some(confidence) = gate.confidence {
        field("confidence", &format!("{confidence:.2}"));
    }
    if !gate.safety_flags.is_empty() {
        field("safety", &gate.safety_flags.join(", "));
    }
    if let Some(quorum) = &gate.quorum {
        let votes: Vec<String> = gate.votes.iter().map(|v| format!("{} {}", v.reviewer, v.action.as_str())).collect();
        let so_far = if votes.is_empty() { "no votes yet".to_owned() } else { votes.join(", ") };
        field("quorum", &format!("{} approvals needed ({so_far})", quorum.required));
    }
    section("Text", &gate.text);
    if !gate.actions.is_empty() {
        let lines: Vec<String> = gate
            .actions
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let state = match &a.decision {
                    Some(d) => format!("{} by {}", d.action.as_str(), d.decided_by),
                    None => "open".to_owned(),
                };
                format!("{}. {} [{}] {}: {}", i + 1, a.name, a.id, state, short(&a.args.to_string(), 100))
            })
            .collect();
        section("Actions (decide each through the API or the UI)", &lines.join("\n"));
    }
    if let Some(payload) = &gate.payload {
        section("Payload", &pretty(payload));
    }
    if let Some(diff) = &detail.payload_diff {
        let text = if diff.is_empty() { "(the same as the example input)".to_owned() } else { diff.unified.clone() };
        section("Payload against the example input", &text);
    }
    if let Some(decision) = &gate.decision {
        let origin = match &decision.origin {
            DecisionOrigin::Human => "a person".to_owned(),
            DecisionOrigin::Auto { reason } => format!("policy: {reason}"),
            DecisionOrigin::System { reason } => format!("system: {reason}"),
        };
        let mut text = format!(
            "{} by {} ({origin}) at {}, after {}",
            decision.action.as_str(),
            decision.decided_by,
            when(decision.decided_at),
            seconds(decision.latency_ms)
        );
        if let Some(note) = &decision.text {
            text.push_str(&format!("\n{note}"));
        }
        if let Some(diff) = decision.diff.as_ref().filter(|d| !d.is_empty()) {
            text.push_str(&format!("\n\nThe reviewer's edit:\n{}", diff.unified));
        } else if let Some(payload) = &decision.payload {
            text.push_str(&format!("\n\nPayload decided:\n{}", pretty(payload)));
        }
        section("Decision", &text);
    }
    if !detail.recent_turns.is_empty() {
        let lines: Vec<String> = detail
            .recent_turns
            .iter()
            .map(|t| format!("#{} {} {}: {}", t.index, snake(&t.role), t.actor, short(&t.content, 90)))
            .collect();
        section("Recent turns", &lines.join("\n"));
    }
    Ok(())
}

fn resolve(api: &Api, args: &ResolveArgs) -> Result<()> {
    let input = decision(args)?;
    let gate: Gate = api.post(&["gates", &args.gate_id, "resolve"], &input)?;
    match &gate.decision {
        Some(decision) => {
            outln!("{} {}: {} by {}", gate.kind().as_str(), gate.id, decision.action.as_str(), decision.decided_by);
            if let Some(diff) = decision.diff.as_ref().filter(|d| !d.is_empty()) {
                outln!("{}", diff.unified.trim_end());
            }
        }
        // A quorum gate counts the vote and stays pending until enough reviewers agree.
        None => {
            let needed = gate.quorum.as_ref().map_or(0, |q| q.required);
            let approvals = gate.votes.iter().filter(|v| v.action == DecisionAction::Approve).count();
            outln!(
                "vote recorded on {}: {approvals} of {needed} approvals so far; it stays {}",
                gate.id,
                status_line(&gate)
            );
        }
    }
    Ok(())
}

/// The decision the flags describe.
fn decision(args: &ResolveArgs) -> Result<DecisionInput> {
    let note = |action| DecisionInput { text: args.reason.clone(), ..DecisionInput::new(action) };
    let with_text = |action, text: &String| DecisionInput { text: Some(text.clone()), ..DecisionInput::new(action) };
    Ok(if args.approve {
        note(DecisionAction::Approve)
    } else if args.defer {
        note(DecisionAction::Defer)
    } else if let Some(path) = &args.edit {
        DecisionInput { payload: Some(read_json(path)?), ..note(DecisionAction::Edit) }
    } else if let Some(reason) = &args.reject {
        with_text(DecisionAction::Reject, reason)
    } else if let Some(text) = &args.respond {
        with_text(DecisionAction::Respond, text)
    } else if let Some(feedback) = &args.needs_revision {
        with_text(DecisionAction::NeedsRevision, feedback)
    } else if let Some(feedback) = &args.retry {
        with_text(DecisionAction::Retry, feedback)
    } else {
        anyhow::bail!(
            "say what you decide: --approve, --reject, --respond, --edit, --needs-revision, --retry or --defer"
        )
    })
}

/// Reads a JSON document from a file, or from stdin for `-`.
pub fn read_json(path: &Path) -> Result<Value> {
    let (text, name) = if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("cannot read the JSON from stdin")?;
        (text, "stdin".to_owned())
    } else {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        (text, path.display().to_string())
    };
    serde_json::from_str(&text)
        .with_context(|| format!("{name} is not valid JSON; the payload must be a JSON document"))
}

fn status_line(gate: &Gate) -> String {
    match &gate.status_reason {
        Some(reason) if gate.status.is_terminal() => format!("{} ({reason})", gate.status.as_str()),
        _ => gate.status.as_str().to_owned(),
    }
}

/// The kind's own fields (the action, the rubric, raw and audited output...).
fn spec_fields(gate: &Gate) {
    let Ok(Value::Object(fields)) = serde_json::to_value(&gate.spec) else { return };
    for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "kind") {
        let text = match value {
            Value::Null => continue,
            Value::String(s) if s.is_empty() => continue,
            Value::Array(items) if items.is_empty() => continue,
            Value::String(s) => s.clone(),
            Value::Array(items) if items.iter().all(Value::is_string) => {
                items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", ")
            }
            other => other.to_string(),
        };
        if text.contains('\n') {
            section(&key.replace('_', " "), &text);
        } else {
            field(&key.replace('_', " "), &text);
        }
    }
}

fn field(label: &str, value: &str) {
    outln!("  {label:<14} {value}");
}

/// A titled block with its text indented.
fn section(title: &str, text: &str) {
    outln!();
    outln!("{title}:");
    for line in text.trim_end().lines() {
        if line.is_empty() {
            outln!();
        } else {
            outln!("  {line}");
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn when(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

fn seconds(ms: i64) -> String {
    if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        age(DateTime::<Utc>::UNIX_EPOCH, DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::milliseconds(ms))
    }
}
