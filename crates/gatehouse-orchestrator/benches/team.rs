//! The orchestrator's own cost in a team run: the time Gatehouse spends per
//! agent turn and per handoff with the scripted provider (which answers at
//! once, so what is measured is the journal, the engine writes and the
//! loop, not a model). Each iteration drives a whole run on a fresh SQLite
//! file, and, when `GATEHOUSE_TEST_POSTGRES` names a PostgreSQL cluster, in
//! a fresh schema of it too, under the `auto` policy (its final review
//! passes at once):
//!
//! - `sqlite/handoffs/100_agents`: 100 agents, each handing to the next (100 turns, 99 handoffs);
//! - `sqlite/turns/1_agent`: one agent taking 100 turns, each storing a value in memory (no handoff);
//! - `postgres/handoffs/100_agents`, `postgres/turns/1_agent`: the same on PostgreSQL.
//!
//! `cargo bench -p gatehouse-orchestrator --bench team`, with PostgreSQL:
//! `eval "$(scripts/postgres.sh start /tmp/teampg)"` first (`scripts/postgres.sh stop /tmp/teampg` after).

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse_engine::{Database, Engine, EngineConfig, NewRun, PgOptions, RunStatus, SystemClock};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{PayloadShape, ProviderRegistry, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

const TURNS: usize = 100;

/// The script of one model all agents share, and the team.
fn handoff_story() -> (Vec<Step>, Value) {
    let mut steps: Vec<Step> = (1..TURNS)
        .map(|i| {
            Step::Calls(
                format!("Over to a{i}."),
                vec![("handoff".into(), json!({"destination_agent": format!("a{i}"), "reason": "next"}))],
            )
        })
        .collect();
    steps.push(Step::Reply("Done.".into()));
    let team: Vec<Value> = (0..TURNS)
        .map(|i| json!({"name": format!("a{i}"), "role": "worker", "provider": "bench", "model": "agent"}))
        .collect();
    (steps, Value::Array(team))
}

fn memory_story() -> (Vec<Step>, Value) {
    let mut steps: Vec<Step> = (1..TURNS)
        .map(|i| {
            Step::Calls(
                format!("Note {i}."),
                vec![("store_memory".into(), json!({"key": format!("k{i}"), "value": i, "scope": "run"}))],
            )
        })
        .collect();
    steps.push(Step::Reply("Done.".into()));
    let team =
        json!([{"name": "a0", "role": "worker", "provider": "bench", "model": "agent", "tools": ["store_memory"]}]);
    (steps, team)
}

/// Where a run's engine keeps its data: a SQLite file, or PostgreSQL at this URL.
#[derive(Clone)]
enum Backend {
    Sqlite,
    Postgres(String),
}

/// A fresh engine: a new SQLite file in `dir`, or a new schema in the cluster.
fn open(backend: &Backend, dir: &Path) -> Engine {
    static SCHEMAS: AtomicU32 = AtomicU32::new(0);
    match backend {
        Backend::Sqlite => Engine::open(dir.join("g.db"), EngineConfig::default()).expect("engine"),
        Backend::Postgres(url) => {
            let schema = format!("bench_team_{}_{}", std::process::id(), SCHEMAS.fetch_add(1, Ordering::Relaxed));
            let config = EngineConfig {
                postgres: PgOptions { schema: Some(schema), ..PgOptions::default() },
                ..EngineConfig::default()
            };
            Engine::open_database(&Database::Postgres(url.clone()), config, Arc::new(SystemClock)).expect("engine")
        }
    }
}

/// Drives one run of `story` to completion; returns the time it took.
fn drive(rt: &tokio::runtime::Runtime, backend: &Backend, story: fn() -> (Vec<Step>, Value)) -> Duration {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = open(backend, dir.path());
    let (steps, team) = story();
    let tool = Tool::new("bench:agent", "agent", gatehouse_providers::openai::chat_schema());
    let provider = ScriptedProvider::new("bench").with_tool(tool, PayloadShape::Chat, steps);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider)).expect("registers");
    let orch = Orchestrator::new(engine.clone(), registry);
    let template: NewRun = serde_json::from_value(json!({"hitl_config": {"run_policy": "auto"}})).expect("template");
    let input = json!({"prompt": "Pass it on", "team": team});
    let mut events = engine.live_events();
    let started = Instant::now();
    let run = rt.block_on(orch.start(&input, template, "bench")).expect("starts");
    loop {
        let status = engine.run(&run.id).expect("run").status;
        if status == RunStatus::Completed {
            break;
        }
        assert!(!status.is_terminal(), "the run ended {status:?}");
        // Wake on the next event rather than spin.
        let _ = rt.block_on(async { tokio::time::timeout(Duration::from_millis(50), events.recv()).await });
    }
    started.elapsed()
}

fn team(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let mut backends = vec![("sqlite", Backend::Sqlite)];
    match std::env::var("GATEHOUSE_TEST_POSTGRES").ok().filter(|u| !u.is_empty()) {
        Some(url) => backends.push(("postgres", Backend::Postgres(url))),
        None => eprintln!("GATEHOUSE_TEST_POSTGRES is not set: SQLite only"),
    }
    let mut group = c.benchmark_group("team");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, backend) in &backends {
        group.bench_function(format!("{name}/handoffs/100_agents"), |b| {
            b.iter_custom(|n| (0..n).map(|_| drive(&rt, backend, handoff_story)).sum())
        });
        group.bench_function(format!("{name}/turns/1_agent"), |b| {
            b.iter_custom(|n| (0..n).map(|_| drive(&rt, backend, memory_story)).sum())
        });
    }
    group.finish();
}

criterion_group!(benches, team);
criterion_main!(benches);
