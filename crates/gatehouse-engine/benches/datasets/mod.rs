//! The benchmark datasets: where they live, how they are built through the
//! engine API, and how a cached copy is recognised as complete.
//!
//! Both datasets are filled with `synchronous=NORMAL` (durability is not
//! what they measure) and reopened with the default options before any
//! timing, so the benchmarks see the store exactly as the app opens it.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gatehouse_engine::{
    BlockingMode, DecisionInput, Engine, EngineConfig, GateFilter, NewGate, NewRun, NewTurn, Priority, Role, RunFilter,
    RunId, StoreOptions,
};
use serde_json::json;

/// Runs in the million-gate store.
pub const MILLION_RUNS: u64 = 1_000;
/// Gates opened on each of those runs.
pub const GATES_PER_RUN: u64 = 1_000;
/// Every this-many-th gate of a run is left pending (10 per run).
pub const PENDING_EVERY: u64 = 100;
/// Gates in the million-gate store.
pub const MILLION_GATES: u64 = MILLION_RUNS * GATES_PER_RUN;
/// Pending gates in the million-gate store.
pub const MILLION_PENDING: u64 = MILLION_GATES / PENDING_EVERY;
/// Events in the recording run's database (all of them the run's).
pub const RECORDING_EVENTS: u64 = 100_000;

/// `target/bench-data/`, on the project disk: never `/tmp`, which may be a
/// tmpfs where an fsync costs nothing.
pub fn bench_data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("bench-data");
    fs::create_dir_all(&dir).expect("create target/bench-data");
    dir.canonicalize().unwrap_or(dir)
}

/// A fresh durable (`synchronous=FULL`) engine in its own directory under
/// `target/bench-data/`, removed when the guard drops.
pub fn fresh_engine(options: StoreOptions) -> (Engine, tempfile::TempDir) {
    let dir = tempfile::Builder::new().prefix("bench-").tempdir_in(bench_data_dir()).expect("temp dir");
    let engine =
        Engine::open(dir.path().join("gatehouse.db"), EngineConfig { store: options, ..EngineConfig::default() })
            .expect("open engine");
    (engine, dir)
}

/// Options for filling a dataset: no fsync per commit.
fn filling() -> EngineConfig {
    EngineConfig {
        store: StoreOptions { synchronous_full: false, ..StoreOptions::default() },
        ..EngineConfig::default()
    }
}

fn remove_database(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("cannot remove {}: {e}", Path::new(&file).display()),
        }
    }
}

/// A run for `agent`, created by it.
pub fn new_run(engine: &Engine, agent: &str) -> RunId {
    let new = NewRun { agent: agent.into(), title: format!("{agent}'s benchmark run"), ..NewRun::default() };
    engine.create_run(new, agent).expect("create run").id
}

/// An approval gate with a small, realistic payload.
pub fn approval_gate(n: u64) -> NewGate {
    NewGate::approval(
        "deploy",
        format!("Deploy build {n} of `billing-api` to staging?"),
        json!({ "service": "billing-api", "build": n, "env": "staging", "replicas": 3 }),
    )
}

/// Prints a progress line every few seconds while `done` counts towards `total`.
fn report_progress(what: &str, done: &AtomicU64, total: u64, finished: &AtomicBool) {
    let started = Instant::now();
    let mut last_print = Instant::now();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
        if last_print.elapsed() < Duration::from_secs(5) {
            continue;
        }
        last_print = Instant::now();
        let n = done.load(Ordering::Relaxed);
        let secs = started.elapsed().as_secs_f64();
        let rate = n as f64 / secs.max(1e-9);
        let eta = total.saturating_sub(n) as f64 / rate.max(1e-9);
        eprintln!("  {what}: {n} / {total} ({:.0}/s, {secs:.0} s elapsed, about {eta:.0} s left)", rate);
    }
}

/// The million-gate store: 1,000 runs of 1,000 gates each, every 100th
/// gate left pending (10,000 pending), the rest resolved. Built once (a few
/// minutes) and reused while its counts are right.
pub fn million_gate_store() -> Engine {
    let path = bench_data_dir().join("million.db");
    if path.exists() {
        let engine = Engine::open(&path, EngineConfig::default()).expect("open million.db");
        let total = engine.count_gates(&GateFilter::default()).expect("count gates");
        let pending = engine.count_gates(&GateFilter::pending()).expect("count pending gates");
        if (total, pending) == (MILLION_GATES, MILLION_PENDING) {
            return engine;
        }
        eprintln!("million.db holds {total} gates ({pending} pending); rebuilding");
    }
    remove_database(&path);
    eprintln!("building {} (one-time setup, {MILLION_GATES} gates through the engine)", path.display());
    let started = Instant::now();
    {
        let engine = Engine::open(&path, filling()).expect("create million.db");
        let next_run = AtomicU64::new(0);
        let gates_done = AtomicU64::new(0);
        let finished = AtomicBool::new(false);
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..16)
                .map(|_| {
                    s.spawn(|| loop {
                        let r = next_run.fetch_add(1, Ordering::Relaxed);
                        if r >= MILLION_RUNS {
                            return;
                        }
                        fill_million_run(&engine, r, &gates_done);
                    })
                })
                .collect();
            s.spawn(|| report_progress("million.db gates", &gates_done, MILLION_GATES, &finished));
            for worker in workers {
                worker.join().expect("filling thread panicked");
            }
            finished.store(true, Ordering::Relaxed);
        });
    }
    let engine = Engine::open(&path, EngineConfig::default()).expect("reopen million.db");
    assert_eq!(engine.count_gates(&GateFilter::default()).expect("count"), MILLION_GATES);
    assert_eq!(engine.count_gates(&GateFilter::pending()).expect("count"), MILLION_PENDING);
    let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    eprintln!("built million.db in {:.0} s ({} MB)", started.elapsed().as_secs_f64(), size / 1_000_000);
    engine
}

/// Run `r` of the million-gate store: modes and priorities vary so the
/// panel order has real work to do.
fn fill_million_run(engine: &Engine, r: u64, gates_done: &AtomicU64) {
    let agent = format!("agent-{}", r % 50);
    let run = new_run(engine, &agent);
    for g in 0..GATES_PER_RUN {
        let mut gate = if g.is_multiple_of(5) {
            NewGate::question(format!("Which region should run {r} use for step {g}?"))
        } else {
            approval_gate(r * GATES_PER_RUN + g)
        };
        gate.mode = [BlockingMode::Sync, BlockingMode::Async, BlockingMode::Advisory][(g % 3) as usize];
        gate.priority = [Priority::Low, Priority::Normal, Priority::High, Priority::Urgent][((g + r) % 4) as usize];
        let opened = engine.open_gate(&run, gate, &agent).expect("open gate");
        if g % PENDING_EVERY != PENDING_EVERY / 2 {
            let decision =
                if g.is_multiple_of(5) { DecisionInput::respond("eu-west-1") } else { DecisionInput::approve() };
            engine.resolve_gate(&opened.id, decision, "alice").expect("resolve gate");
        }
        gates_done.fetch_add(1, Ordering::Relaxed);
    }
}

/// One completed run whose database holds exactly 100,000 events, all of
/// them the run's: turns, gates opened and decided (approved, edited,
/// rejected; sync and async), shared-context changes, and status changes.
pub fn recording_store() -> (Engine, RunId) {
    let path = bench_data_dir().join("recording-100k.db");
    if path.exists() {
        let engine = Engine::open(&path, EngineConfig::default()).expect("open recording-100k.db");
        let runs = engine.runs(&RunFilter::default()).expect("runs");
        let head = engine.head_seq().expect("head");
        if let ([run], RECORDING_EVENTS) = (runs.as_slice(), head) {
            let id = run.id.clone();
            return (engine, id);
        }
        eprintln!("recording-100k.db holds {} runs and {head} events; rebuilding", runs.len());
    }
    remove_database(&path);
    eprintln!("building {} (one-time setup, {RECORDING_EVENTS} events through the engine)", path.display());
    let started = Instant::now();
    let run_id = {
        let engine = Engine::open(&path, filling()).expect("create recording-100k.db");
        let run = new_run(&engine, "recorder");
        let step = AtomicUsize::new(0);
        let events = AtomicU64::new(0);
        let finished = AtomicBool::new(false);
        // Stop the concurrent phase a little short; top up one event at a time.
        let stop_at = RECORDING_EVENTS - 1_000;
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| loop {
                        let head = engine.head_seq().expect("head");
                        events.store(head, Ordering::Relaxed);
                        if head >= stop_at {
                            return;
                        }
                        record_one_step(&engine, &run, step.fetch_add(1, Ordering::Relaxed) as u64);
                    })
                })
                .collect();
            s.spawn(|| report_progress("recording-100k.db events", &events, RECORDING_EVENTS, &finished));
            for worker in workers {
                worker.join().expect("filling thread panicked");
            }
            finished.store(true, Ordering::Relaxed);
        });
        // Exactly RECORDING_EVENTS: context changes up to one short, then completing the run.
        let mut n = 0;
        while engine.head_seq().expect("head") < RECORDING_EVENTS - 1 {
            engine.context_set(&run, &format!("note-{}", n % 20), json!({ "n": n }), "recorder").expect("context");
            n += 1;
        }
        engine.complete_run(&run, "recorder", Some(json!({ "status": "shipped" }))).expect("complete run");
        assert_eq!(engine.head_seq().expect("head"), RECORDING_EVENTS);
        run
    };
    let engine = Engine::open(&path, EngineConfig::default()).expect("reopen recording-100k.db");
    eprintln!("built recording-100k.db in {:.0} s", started.elapsed().as_secs_f64());
    (engine, run_id)
}

/// One step of the recorded session: the agent speaks, asks, is answered,
/// and notes the outcome in the shared context (5 to 6 events).
fn record_one_step(engine: &Engine, run: &RunId, n: u64) {
    let mut turn = NewTurn::new(Role::Agent, format!("Step {n}: prepared the change set for `billing-api`."));
    turn.metadata = json!({ "tool": "git_diff", "files": 3 + n % 7 });
    engine.add_turn(run, turn, "recorder").expect("turn");
    let mut gate = approval_gate(n);
    gate.mode = if n.is_multiple_of(2) { BlockingMode::Sync } else { BlockingMode::Async };
    let opened = engine.open_gate(run, gate, "recorder").expect("open gate");
    let decision = match n % 4 {
        0 | 1 => DecisionInput::approve(),
        2 => DecisionInput::edit(json!({ "service": "billing-api", "build": n, "env": "staging", "replicas": 2 })),
        _ => DecisionInput::reject("Not during the freeze."),
    };
    engine.resolve_gate(&opened.id, decision, "alice").expect("resolve gate");
    engine.context_set(run, &format!("step-{}", n % 50), json!({ "last_build": n }), "recorder").expect("context");
}
