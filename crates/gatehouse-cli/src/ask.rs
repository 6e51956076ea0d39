//! `gatehouse ask`: a person's decision from inside a shell script. It
//! starts a run, opens one gate on it (under an idempotency key, so a
//! retried request never opens a second gate) and long-polls the server
//! until a reviewer decides or the deadline passes. The exit code says what
//! happened, and the decision is printed as JSON for the script to read:
//!
//! 0 approved (approve or edit; for a question any answer), 1 rejected
//! (also needs_revision or retry), 2 timed out, expired or cancelled, 3 error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Result};
use clap::builder::PossibleValuesParser;
use clap::Args;
use gatehouse_engine::{BlockingMode, Gate, GateSpec, GateStatus, NewGate, Priority};
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use crate::client::{is_transport, Api, ClientArgs};
use crate::duration;
use crate::out::outln;
use crate::table::short;

/// Longest single long poll the server accepts, in seconds.
const MAX_POLL_SECS: u64 = 60;
/// How long past the deadline to keep listening: the server's expiry sweep
/// runs every 5 s, and a decision made just in time must still count.
const EXPIRY_GRACE: Duration = Duration::from_secs(7);
/// How long the server may stay unreachable mid-wait before giving up.
const OUTAGE_LIMIT: Duration = Duration::from_secs(30);

const PRIORITIES: [Priority; 4] = [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent];

fn priority_name(p: Priority) -> &'static str {
    match p {
        Priority::Low => "low",
        Priority::Normal => "normal",
        Priority::High => "high",
        Priority::Urgent => "urgent",
    }
}

/// Arguments of `ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// What the reviewer should decide or answer (markdown).
    pub question: String,
    /// approval: the reviewer approves, edits the payload or rejects; question: the reviewer answers in words.
    #[arg(long, default_value = "approval", value_parser = PossibleValuesParser::new(["approval", "question"]))]
    pub kind: String,
    /// The proposed payload, a JSON file (`-` reads stdin); a reviewer may edit it.
    #[arg(long, value_name = "FILE")]
    pub payload: Option<PathBuf>,
    /// sync: wait for the decision; async: print the gate's and run's ids and return at once.
    #[arg(long, default_value = "sync", value_parser = PossibleValuesParser::new(["sync", "async"]))]
    pub mode: String,
    /// How long the gate stays open: 90s, 10m, 2h, 1d.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = duration::parse)]
    pub timeout: Duration,
    /// The agent asking, as reviewers see it. [default: the token's name]
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// How urgent it is; the reviewer's queue puts urgent first.
    #[arg(long, default_value = "normal", value_parser = crate::enum_parser(PRIORITIES, priority_name))]
    pub priority: Priority,
    #[command(flatten)]
    pub client: ClientArgs,
}

#[derive(Debug, Deserialize)]
struct StartedRun {
    run_id: String,
}

#[derive(Debug, Deserialize)]
struct OpenedGate {
    gate: Gate,
}

/// `ask`: see the module documentation for the exit codes.
pub fn ask(api: &Api, args: &AskArgs) -> Result<ExitCode> {
    let question = args.question.trim();
    ensure!(!question.is_empty(), "the question is empty; say what the reviewer should decide");
    let payload = args.payload.as_deref().map(crate::gates::read_json).transpose()?;
    let is_async = args.mode == "async";

    let mut input = json!({"question": question});
    if let Some(payload) = &payload {
        input["payload"] = payload.clone();
    }
    let start = json!({"title": short(question, 80), "agent": args.agent, "run_input": input});
    let run: StartedRun = api.post(&["run"], &start)?;

    let spec =
        if args.kind == "question" { GateSpec::Question {} } else { GateSpec::Approval { action: String::new() } };
    let mut new = NewGate::new(spec, question);
    new.mode = if is_async { BlockingMode::Async } else { BlockingMode::Sync };
    new.priority = args.priority;
    new.payload = payload;
    new.requires_human = true;
    new.expires_in_secs = Some(args.timeout.as_secs().max(1));
    let key = format!("gatehouse-ask-{:032x}", rand::random::<u128>());
    let opened: OpenedGate = with_retries(|| {
        api.send(api.request(Method::POST, &["runs", &run.run_id, "gates"]).header("Idempotency-Key", &key).json(&new))
    })?;
    let gate = opened.gate;

    if is_async {
        outln!("{}", pretty(&json!({"gate_id": gate.id, "run_id": run.run_id})));
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "waiting up to {} for a reviewer to decide gate {} (`gatehouse gates show {}`)…",
        duration::format(args.timeout),
        gate.id,
        gate.id
    );
    let gate = if gate.status.is_terminal() { gate } else { wait(api, &gate, Instant::now() + args.timeout)? };
    let code = outcome(&gate, args.timeout)?;
    if let (GateStatus::Resolved, Some(decision)) = (gate.status, &gate.decision) {
        // The question is answered: the run `ask` started is done.
        let result = json!({"result": {"gate_id": gate.id, "action": decision.action}});
        if let Err(e) = api.post::<serde_json::Value>(&["runs", &run.run_id, "complete"], &result) {
            eprintln!("note: could not mark run {} completed: {e:#}", run.run_id);
        }
    }
    Ok(code)
}

/// Long-polls until the gate leaves pending or the deadline (plus the grace) passes.
fn wait(api: &Api, gate: &Gate, deadline: Instant) -> Result<Gate> {
    let id = gate.id.as_str();
    let give_up = deadline + EXPIRY_GRACE;
    let mut outage: Option<Instant> = None;
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        let poll = left.min(Duration::from_secs(MAX_POLL_SECS));
        let request = api
            .request(Method::GET, &["gates", id, "wait"])
            .query(&[("timeout", format!("{:.1}", poll.as_secs_f64()))])
            .timeout(poll + Duration::from_secs(15));
        match api.send::<Gate>(request) {
            Ok(gate) if gate.status.is_terminal() || Instant::now() >= give_up => return Ok(gate),
            Ok(_) => outage = None,
            Err(e) if is_transport(&e) => {
                let since = *outage.get_or_insert_with(Instant::now);
                if since.elapsed() >= OUTAGE_LIMIT || Instant::now() >= give_up {
                    return Err(e.context(format!(
                        "lost the server while waiting; gate {id} stays open there (`gatehouse gates show {id}`)"
                    )));
                }
                if since.elapsed() < Duration::from_secs(1) {
                    eprintln!("the server stopped answering; retrying for up to {} s…", OUTAGE_LIMIT.as_secs());
                }
                std::thread::sleep(Duration::from_secs(1));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Prints what became of the gate and picks the exit code.
fn outcome(gate: &Gate, timeout: Duration) -> Result<ExitCode> {
    match gate.status {
        GateStatus::Resolved => {
            let Some(decision) = &gate.decision else {
                bail!(
                    "gate {} is resolved but the server sent no decision; see `gatehouse gates show {}`",
                    gate.id,
                    gate.id
                )
            };
            let mut answer = json!({
                "action": decision.action,
                "decided_by": decision.decided_by,
                "text": decision.text,
                "payload": decision.payload,
                "gate_id": gate.id,
                "run_id": gate.run_id,
            });
            if decision.self_decided {
                // The same token asked and decided (a server that allows self-review): say so.
                answer["self_decided"] = json!(true);
            }
            outln!("{}", pretty(&answer));
            Ok(ExitCode::from(if decision.action.lets_agent_proceed() { 0 } else { 1 }))
        }
        GateStatus::Expired => {
            eprintln!("timed out: nobody decided within {}; gate {} expired", duration::format(timeout), gate.id);
            Ok(ExitCode::from(2))
        }
        GateStatus::Cancelled => {
            let why = gate.status_reason.as_deref().unwrap_or("no reason given");
            eprintln!("gate {} was cancelled: {why}", gate.id);
            Ok(ExitCode::from(2))
        }
        GateStatus::Pending => {
            eprintln!(
                "timed out: nobody decided within {}; gate {} is still open on the server",
                duration::format(timeout),
                gate.id
            );
            Ok(ExitCode::from(2))
        }
    }
}

/// Retries a request that failed in transit, a few times with a growing pause.
fn with_retries<T>(mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
    let mut pause = Duration::from_millis(250);
    for _ in 0..3 {
        match attempt() {
            Err(e) if is_transport(&e) => {
                tracing::warn!(error = %format!("{e:#}"), "retrying");
                std::thread::sleep(pause);
                pause *= 2;
            }
            done => return done,
        }
    }
    attempt()
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
