//! The summary printed after the demo: what the whole database now holds
//! (runs, gates, decisions, agents' ratings, the audit log), so a person
//! can see at a glance what the reviewer UI will show.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use gatehouse_engine::store::RunFilter;
use gatehouse_engine::{BlockingMode, Engine, GateFilter, GateKind, GateStatus, RunStatus};

use crate::out::outln;
use crate::table::{percent, score, snake, Table};

/// Prints the summary.
pub fn print(engine: &Engine, path: &Path, seed: u64, runs: u32, took: Duration) -> Result<()> {
    outln!("\nWorkload ready in {:.1} s (seed {seed}, {runs} runs simulated).", took.as_secs_f64());
    outln!("\nThe database now holds:");

    let mut by_status = Table::new(&["status", ">runs"]);
    for status in RunStatus::ALL {
        let filter = RunFilter { statuses: vec![status], ..RunFilter::default() };
        let n = engine.runs(&filter).context("cannot count runs")?.len();
        if n > 0 {
            by_status.row(vec![status.as_str().into(), n.to_string()]);
        }
    }
    outln!("\nRuns by status");
    by_status.print("  ");

    outln!("\nGates by status");
    let mut parts = Vec::new();
    for status in GateStatus::ALL {
        parts.push(format!(
            "{} {}",
            status.as_str(),
            count(engine, GateFilter { status: Some(status), ..GateFilter::default() })?
        ));
    }
    outln!("  {}", parts.join(", "));

    outln!("\nGates by kind");
    let mut by_kind = Table::new(&["kind", ">total", ">pending", ">resolved", ">expired", ">cancelled"]);
    for kind in GateKind::ALL {
        let mut row = vec![kind.as_str().to_owned()];
        row.push(count(engine, GateFilter { kind: Some(kind), ..GateFilter::default() })?.to_string());
        for status in GateStatus::ALL {
            row.push(
                count(engine, GateFilter { kind: Some(kind), status: Some(status), ..GateFilter::default() })?
                    .to_string(),
            );
        }
        by_kind.row(row);
    }
    by_kind.print("  ");

    let sync =
        GateFilter { status: Some(GateStatus::Pending), mode: Some(BlockingMode::Sync), ..GateFilter::default() };
    outln!("\nPending sync gates (an agent is blocked on each): {}", count(engine, sync)?);

    outln!("\nDecisions by type");
    let resolved = engine.gates(&GateFilter { status: Some(GateStatus::Resolved), ..GateFilter::default() })?;
    let mut types: BTreeMap<String, u64> = BTreeMap::new();
    let mut actions: BTreeMap<&str, u64> = BTreeMap::new();
    for decision in resolved.iter().filter_map(|g| g.decision.as_ref()) {
        *types.entry(snake(&decision.decision_type())).or_default() += 1;
        *actions.entry(decision.action.as_str()).or_default() += 1;
    }
    let mut table = Table::new(&["type", ">decisions"]);
    for (kind, n) in &types {
        table.row(vec![kind.clone(), n.to_string()]);
    }
    table.print("  ");
    let actions: Vec<String> = actions.iter().map(|(a, n)| format!("{a} {n}")).collect();
    outln!("  by action: {}", actions.join(", "));

    outln!("\nAgent capability ratings (approval rate maps to 1-5 and blends with scores)");
    let mut ratings = Table::new(&["agent", ">decisions", ">approval", ">scores", ">avg score", ">rating"]);
    for r in engine.ratings().context("cannot read agent ratings")? {
        ratings.row(vec![
            r.agent.clone(),
            r.decisions.to_string(),
            percent(r.approval_rate()),
            r.scores.to_string(),
            score(r.average_score()),
            score(r.effective_rating()),
        ]);
    }
    if ratings.is_empty() {
        outln!("  (no human decisions or scores yet)");
    } else {
        ratings.print("  ");
    }

    let audit = engine.verify_audit().context("cannot verify the event log")?;
    outln!("\nEvent log");
    outln!("  events:     {}", audit.events);
    outln!(
        "  audit:      {}",
        if audit.is_intact() { "intact".to_owned() } else { format!("{} problems", audit.problems.len()) }
    );
    outln!("  head hash:  {}", audit.head_hash);
    outln!("\nDatabase: {}", path.display());
    outln!("Next: `gatehouse gates list --status pending` shows what waits for a reviewer.");
    Ok(())
}

fn count(engine: &Engine, filter: GateFilter) -> Result<u64> {
    engine.count_gates(&filter).context("cannot count gates")
}
