//! What alerts and SLAs cost the engine over a store of 10,000 gates: the
//! alert figures the server's sweep reads every five seconds (the oldest
//! pending sync gate, the pending count, gates opened and auto-passed over
//! the window), and SLA compliance per priority, read with each metrics request. The store is a
//! real SQLite file under `target/bench-data/`, filled without fsync through
//! the engine and read as the app opens it.
//!
//! Run with `cargo bench -p gatehouse-engine --bench alerts`.

#[path = "datasets/mod.rs"]
#[allow(dead_code)]
mod datasets;

use std::hint::black_box;

use chrono::Duration;
use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::{BlockingMode, DecisionInput, Engine, NewGate, NewRun, Priority, SlaTargets, StoreOptions};

use datasets::{approval_gate, fresh_engine};

/// Gates in the store.
const GATES: u64 = 10_000;
/// Of them, one in ten is left pending; one in five passes by a policy.
const PENDING_EVERY: u64 = 10;

/// 10,000 gates over 100 runs: every priority, a fifth auto-passed, a tenth
/// pending (sync and async), the rest decided by a person.
fn store() -> (Engine, tempfile::TempDir) {
    let (engine, dir) = fresh_engine(StoreOptions { synchronous_full: false, ..StoreOptions::default() });
    let priorities = [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent];
    for r in 0..100u64 {
        let auto = r % 5 == 0;
        let policy = if auto { RunPolicy::Auto } else { RunPolicy::RequireHuman };
        let hitl_config = HitlConfig { run_policy: policy, ..HitlConfig::default() };
        let agent = format!("agent-{}", r % 7);
        let new = NewRun { agent: agent.clone(), hitl_config, ..NewRun::default() };
        let run = engine.create_run(new, &agent).expect("run").id;
        for n in 0..GATES / 100 {
            let mut gate: NewGate = approval_gate(n);
            gate.priority = priorities[(n % 4) as usize];
            gate.mode = if n % 2 == 0 { BlockingMode::Async } else { BlockingMode::Sync };
            let opened = engine.open_gate(&run, gate, &agent).expect("gate");
            if !auto && n % PENDING_EVERY != 0 {
                engine.resolve_gate(&opened.id, DecisionInput::approve(), "alice").expect("decide");
            }
        }
    }
    (engine, dir)
}

fn alert_sweep(c: &mut Criterion) {
    let (engine, _dir) = store();
    let targets = SlaTargets::default();
    let since = engine.now() - Duration::minutes(60);
    let mut group = c.benchmark_group("alerts_10k_gates");
    group.bench_function("alert_figures", |b| b.iter(|| black_box(engine.alert_figures(since).expect("figures"))));
    group.bench_function("sla_compliance", |b| b.iter(|| black_box(engine.sla_compliance(&targets).expect("sla"))));
    group.finish();
}

criterion_group!(benches, alert_sweep);
criterion_main!(benches);
