//! `runs list` and `gates list`: compact, read-only tables for people at a
//! terminal. Deciding gates from the command line arrives with the server,
//! which owns reviewer identities; until then these only look.

use anyhow::{Context, Result};
use gatehouse_engine::{Engine, GateFilter, GateStatus, RunFilter};

use crate::out::outln;
use crate::table::{age, short, snake, Table};
use crate::{GatesListArgs, RunsListArgs};

/// Prints runs, newest first.
pub fn runs(engine: &Engine, args: &RunsListArgs) -> Result<()> {
    let filter =
        RunFilter { statuses: args.status.into_iter().collect(), limit: Some(args.limit), ..RunFilter::default() };
    let runs = engine.runs(&filter).context("cannot list runs")?;
    if runs.is_empty() {
        outln!("{}", nothing_found(engine, "runs")?);
        return Ok(());
    }
    let now = engine.now();
    let mut table = Table::new(&["id", "status", "agent", "session", ">turns", ">pending", ">age", "title"]);
    for run in &runs {
        let pending = GateFilter { run_id: Some(run.id.clone()), ..GateFilter::pending() };
        let pending =
            engine.count_gates(&pending).with_context(|| format!("cannot count the gates of run {}", run.id))?;
        table.row(vec![
            run.id.to_string(),
            run.status.as_str().to_owned(),
            run.agent.clone(),
            run.session_id.clone().unwrap_or_else(|| "-".into()),
            run.turn_count.to_string(),
            pending.to_string(),
            age(run.created_at, now),
            short(&run.title, 48),
        ]);
    }
    table.print("");
    if runs.len() as u32 == args.limit {
        outln!("(showing the newest {}; raise --limit for more)", args.limit);
    }
    Ok(())
}

/// Prints gates: pending ones in the reviewer's order, others newest first.
pub fn gates(engine: &Engine, args: &GatesListArgs) -> Result<()> {
    let filter = GateFilter { status: args.status, kind: args.kind, limit: Some(args.limit), ..GateFilter::default() };
    let gates = engine.gates(&filter).context("cannot list gates")?;
    if gates.is_empty() {
        outln!("{}", nothing_found(engine, "gates")?);
        return Ok(());
    }
    let now = engine.now();
    // The status column only says something when the list mixes statuses.
    let with_status = args.status.is_none();
    let mut headers = vec!["id"];
    if with_status {
        headers.push("status");
    }
    headers.extend(["kind", "mode", "priority", "agent", ">age", "preview"]);
    let mut table = Table::new(&headers);
    for gate in &gates {
        let mut row = vec![gate.id.to_string()];
        if with_status {
            row.push(gate.status.as_str().to_owned());
        }
        row.extend([
            gate.kind().as_str().to_owned(),
            gate.mode.as_str().to_owned(),
            snake(&gate.priority),
            gate.agent.clone(),
            age(gate.created_at, now),
            gate.preview(),
        ]);
        table.row(row);
    }
    table.print("");
    let total = engine.count_gates(&GateFilter { limit: None, ..filter }).context("cannot count gates")?;
    if total > gates.len() as u64 {
        outln!("({} of {total} shown; raise --limit for more)", gates.len());
    } else if args.status == Some(GateStatus::Pending) {
        outln!("({total} pending)");
    }
    Ok(())
}

/// What to say when a listing is empty: an empty database gets a hint.
fn nothing_found(engine: &Engine, what: &str) -> Result<String> {
    let empty = engine.head_seq().context("cannot read the event log")? == 0;
    Ok(if empty {
        format!("no {what}: the database is empty (try `gatehouse demo` to fill it with an example workload)")
    } else {
        format!("no {what} match")
    })
}
