//! `gates list` and `runs list`: compact tables of what a running server
//! holds, for people at a terminal. They go through the server (like every
//! reviewer command) so what they show is what the reviewer UI shows.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::builder::PossibleValuesParser;
use clap::Args;
use gatehouse_engine::{BlockingMode, GateKind, GateStatus, Priority, RunStatus};
use serde::Deserialize;

use crate::client::Api;
use crate::out::outln;
use crate::table::{age, short, snake, Table};

/// Filters for `gates list`.
#[derive(Debug, Args)]
pub struct GatesListArgs {
    /// Only gates in this status; `all` lists every gate, newest first.
    #[arg(long, default_value = "pending",
        value_parser = PossibleValuesParser::new(["pending", "resolved", "expired", "cancelled", "all"]))]
    pub status: String,
    /// Only gates of this kind.
    #[arg(long, value_parser = crate::enum_parser(GateKind::ALL, GateKind::as_str))]
    pub kind: Option<GateKind>,
    /// Only gates of this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

/// Filters for `runs list`.
#[derive(Debug, Args)]
pub struct RunsListArgs {
    /// Only runs in this status.
    #[arg(long, value_parser = crate::enum_parser(RunStatus::ALL, RunStatus::as_str))]
    pub status: Option<RunStatus>,
    /// At most this many (the server gives at most 500).
    #[arg(long, default_value_t = 50)]
    pub limit: u32,
}

/// One gate of `GET /gates`.
#[derive(Debug, Deserialize)]
struct GateRow {
    id: String,
    kind: GateKind,
    mode: BlockingMode,
    priority: Priority,
    agent: String,
    preview: String,
    status: GateStatus,
    created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
struct GateList {
    gates: Vec<GateRow>,
    total: u64,
}

/// One run of `GET /runs`.
#[derive(Debug, Deserialize)]
struct RunRow {
    id: String,
    title: String,
    agent: String,
    status: RunStatus,
    session_id: Option<String>,
    progress: Progress,
    pending_gates: u64,
    created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
struct Progress {
    total: u32,
    completed: u32,
}

#[derive(Debug, Deserialize)]
struct RunList {
    runs: Vec<RunRow>,
}

/// Prints gates: pending ones in the reviewer's order (sync first, then priority, then age), others newest first.
pub fn gates(api: &Api, args: &GatesListArgs) -> Result<()> {
    let limit = args.limit.to_string();
    let mut query = vec![("status", args.status.as_str()), ("limit", limit.as_str())];
    if let Some(kind) = args.kind {
        query.push(("kind", kind.as_str()));
    }
    if let Some(run) = &args.run {
        query.push(("run_id", run.as_str()));
    }
    let list: GateList = api.send(api.request(reqwest::Method::GET, &["gates"]).query(&query))?;
    if list.gates.is_empty() {
        outln!("{}", nothing_found(api, "gates")?);
        return Ok(());
    }
    let now = Utc::now();
    // The status column only says something when the list mixes statuses.
    let with_status = args.status == "all";
    let mut headers = vec!["id"];
    if with_status {
        headers.push("status");
    }
    headers.extend(["kind", "mode", "priority", "agent", ">age", "preview"]);
    let mut table = Table::new(&headers);
    for gate in &list.gates {
        let mut row = vec![gate.id.clone()];
        if with_status {
            row.push(gate.status.as_str().to_owned());
        }
        row.extend([
            gate.kind.as_str().to_owned(),
            gate.mode.as_str().to_owned(),
            snake(&gate.priority),
            gate.agent.clone(),
            age(gate.created_at, now),
            gate.preview.clone(),
        ]);
        table.row(row);
    }
    table.print("");
    if list.total > list.gates.len() as u64 {
        outln!("({} of {} shown; raise --limit for more)", list.gates.len(), list.total);
    } else if args.status == "pending" {
        outln!("({} pending)", list.total);
    }
    Ok(())
}

/// Prints runs, newest first.
pub fn runs(api: &Api, args: &RunsListArgs) -> Result<()> {
    let limit = args.limit.to_string();
    let mut query = vec![("limit", limit.as_str())];
    if let Some(status) = args.status {
        query.push(("status", status.as_str()));
    }
    let list: RunList = api.send(api.request(reqwest::Method::GET, &["runs"]).query(&query))?;
    if list.runs.is_empty() {
        outln!("{}", nothing_found(api, "runs")?);
        return Ok(());
    }
    let now = Utc::now();
    let mut table = Table::new(&["id", "status", "agent", "session", ">progress", ">pending", ">age", "title"]);
    for run in &list.runs {
        table.row(vec![
            run.id.clone(),
            run.status.as_str().to_owned(),
            run.agent.clone(),
            run.session_id.clone().unwrap_or_else(|| "-".into()),
            format!("{}/{}", run.progress.completed, run.progress.total),
            run.pending_gates.to_string(),
            age(run.created_at, now),
            short(&run.title, 48),
        ]);
    }
    table.print("");
    if list.runs.len() as u32 == args.limit {
        outln!("(showing the newest {}; raise --limit for more)", args.limit);
    }
    Ok(())
}

/// What to say when a listing is empty: a server with no runs at all gets a hint.
fn nothing_found(api: &Api, what: &str) -> Result<String> {
    let any: RunList = api.send(api.request(reqwest::Method::GET, &["runs"]).query(&[("limit", "1")]))?;
    Ok(if any.runs.is_empty() {
        format!(
            "no {what}: the server has no runs yet (try `gatehouse demo` for an example workload, \
             or `gatehouse ask \"...\"` to open a gate)"
        )
    } else {
        format!("no {what} match")
    })
}
