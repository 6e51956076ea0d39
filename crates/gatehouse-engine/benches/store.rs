//! Store benchmarks for the storage issue's three targets, measured through
//! the public [`Engine`] API against real SQLite files on the project disk
//! (under `target/bench-data/`, never a tmpfs `/tmp` where fsync is free).
//!
//! 1. `lifecycle/*`: durable gate lifecycles (`open_gate` then
//!    `resolve_gate`, `synchronous=FULL`) per second. One sequential caller
//!    pays two fsync'd commits per lifecycle; concurrent callers (8, 32, 64
//!    threads) share commits through the writer's group commit. Target:
//!    at least 2,000 lifecycles/s. `raw_commit` is the floor (one fsync'd
//!    WAL commit of one row, no engine) and `no_fsync/64` the writer's CPU
//!    ceiling (64 callers with `synchronous=NORMAL`), to explain the rest;
//!    `run_with_gates/*` shows how a lifecycle slows down as its run grows.
//! 2. `pending_queue/*`: the reviewer's queue over 1,000,000 stored gates of
//!    which 10,000 are pending: a 100-gate panel page, the pending count,
//!    and all 10,000 pending gates. Target: under 5 ms.
//! 3. `recording/*`: one completed run of 100,000 events: `export`, the
//!    recording serialised to JSON, both together, `verify_audit` over the
//!    whole log, and a subscriber catching up from sequence 0. Target:
//!    export under 1 s. `subscriber/live_delay` is the time from a write's
//!    acknowledgement to a waiting subscriber holding its event.
//! 4. `audit_chain/*`: what keying the audit chain costs, apart from
//!    everything else. `link/plain` and `link/keyed` are one link of the
//!    chain (SHA-256, or HMAC-SHA256 with the server's audit key);
//!    `lifecycle/plain` and `lifecycle/keyed` are whole gate lifecycles by
//!    one caller without fsync (so the disk's noise does not hide the CPU
//!    the key adds), on two engines that differ only in the key.
//!
//! Setup runs lazily, only for benchmarks the filter selects. The datasets
//! of 2 and 3 are built once through the engine (see `datasets/mod.rs`) and
//! cached in `target/bench-data/`; delete a file there to rebuild it. Run with
//! `cargo bench -p gatehouse-engine --bench store -- <filter>`.

mod datasets;

use std::cell::OnceCell;
use std::hint::black_box;
use std::sync::{mpsc, Barrier};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput};
use gatehouse_engine::event::{link, AuditKey};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{
    BlockingMode, DecisionInput, Engine, EngineConfig, GateFilter, Recording, RecordingScope, RunId, StoreOptions,
};

use datasets::{approval_gate, bench_data_dir, fresh_engine, new_run, MILLION_PENDING, RECORDING_EVENTS};

/// One gate lifecycle: the agent opens an approval gate, a reviewer approves it.
fn gate_lifecycle(engine: &Engine, run: &RunId, agent: &str, n: u64) {
    let gate = engine.open_gate(run, approval_gate(n), agent).expect("open gate");
    black_box(engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").expect("resolve gate"));
}

/// Gates an agent asks on one run before it moves on to a fresh run. The
/// engine's cost per lifecycle grows with the gates already on the run
/// (`lifecycle/run_with_gates` shows it), so the throughput figures use runs
/// of a fixed size rather than one run growing with criterion's iterations.
const GATES_PER_RUN: u64 = 50;

/// Times `iters` lifecycles split across `callers` threads, each an agent
/// working through its own runs of [`GATES_PER_RUN`] gates. The runs are
/// created before the common start; only the lifecycles are timed.
fn timed_lifecycles(engine: &Engine, callers: u64, iters: u64) -> Duration {
    let start = Barrier::new(callers as usize + 1);
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..callers)
            .map(|i| {
                let share = iters / callers + u64::from(i < iters % callers);
                let start = &start;
                s.spawn(move || {
                    let agent = format!("agent-{i}");
                    let runs: Vec<RunId> =
                        (0..share.div_ceil(GATES_PER_RUN)).map(|_| new_run(engine, &agent)).collect();
                    start.wait();
                    for n in 0..share {
                        gate_lifecycle(engine, &runs[(n / GATES_PER_RUN) as usize], &agent, n);
                    }
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        for thread in threads {
            thread.join().expect("caller thread panicked");
        }
        began.elapsed()
    })
}

/// A durable store whose runs already hold 0, 1,000 and 10,000 decided
/// gates (async ones, filled without fsync, so filling is quick).
struct RunsWithGates {
    engine: Engine,
    runs: Vec<(u64, RunId)>,
    _dir: tempfile::TempDir,
}

const RUN_SIZES: [u64; 3] = [0, 1_000, 10_000];

impl RunsWithGates {
    fn new() -> Self {
        let (filler, dir) = fresh_engine(StoreOptions { synchronous_full: false, ..StoreOptions::default() });
        let runs: Vec<(u64, RunId)> = RUN_SIZES.iter().map(|&size| (size, new_run(&filler, "agent-0"))).collect();
        std::thread::scope(|s| {
            for t in 0..16 {
                let (filler, runs) = (&filler, &runs);
                s.spawn(move || {
                    for (size, run) in runs {
                        for n in (t..*size).step_by(16) {
                            let mut gate = approval_gate(n);
                            gate.mode = BlockingMode::Async;
                            let gate = filler.open_gate(run, gate, "agent-0").expect("open gate");
                            filler.resolve_gate(&gate.id, DecisionInput::approve(), "alice").expect("resolve gate");
                        }
                    }
                });
            }
        });
        let path = filler.store().path().expect("the benchmark store is a SQLite file").to_owned();
        drop(filler);
        let engine = Engine::open(path, EngineConfig::default()).expect("reopen");
        Self { engine, runs, _dir: dir }
    }
}

fn lifecycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("lifecycle");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(1));

    let raw = OnceCell::new();
    group.bench_function("raw_commit", |b| {
        let (conn, _dir) = raw.get_or_init(|| {
            let dir = tempfile::Builder::new().prefix("raw-").tempdir_in(bench_data_dir()).expect("temp dir");
            let conn = rusqlite::Connection::open(dir.path().join("raw.db")).expect("open");
            conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
            conn.pragma_update(None, "synchronous", "FULL").expect("full");
            conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)").expect("table");
            (conn, dir)
        });
        let mut insert = conn.prepare_cached("INSERT INTO t (v) VALUES (?)").expect("prepare");
        b.iter(|| insert.execute(["one row"]).expect("insert"));
    });

    let durable = OnceCell::new();
    let durable = || &durable.get_or_init(|| fresh_engine(StoreOptions::default())).0;
    group.bench_function("sequential", |b| {
        let engine = durable();
        b.iter_custom(|iters| timed_lifecycles(engine, 1, iters))
    });
    for callers in [8, 32, 64] {
        group.bench_function(BenchmarkId::new("concurrent", callers), |b| {
            let engine = durable();
            b.iter_custom(|iters| timed_lifecycles(engine, callers, iters))
        });
    }

    let no_fsync = OnceCell::new();
    group.bench_function(BenchmarkId::new("no_fsync", 64), |b| {
        let options = StoreOptions { synchronous_full: false, ..StoreOptions::default() };
        let (engine, _dir) = no_fsync.get_or_init(|| fresh_engine(options));
        b.iter_custom(|iters| timed_lifecycles(engine, 64, iters))
    });

    // Shorter: each lifecycle adds a gate, so the run grows while it is measured.
    group.measurement_time(Duration::from_secs(3));
    let sized = OnceCell::new();
    for (i, size) in RUN_SIZES.into_iter().enumerate() {
        group.bench_function(BenchmarkId::new("run_with_gates", size), |b| {
            let RunsWithGates { engine, runs, .. } = sized.get_or_init(RunsWithGates::new);
            let run = &runs[i].1;
            let mut n = 0;
            b.iter(|| {
                n += 1;
                gate_lifecycle(engine, run, "agent-0", n);
            })
        });
    }
    group.finish();
}

fn pending_queue(c: &mut Criterion) {
    let store = OnceCell::new();
    let engine = || {
        store.get_or_init(|| {
            let engine = datasets::million_gate_store();
            let page = GateFilter { limit: Some(100), ..GateFilter::pending() };
            assert_eq!(engine.gates(&page).expect("page").len(), 100);
            assert_eq!(engine.gates(&GateFilter::pending()).expect("all").len() as u64, MILLION_PENDING);
            engine
        })
    };
    let page = GateFilter { limit: Some(100), ..GateFilter::pending() };

    let mut group = c.benchmark_group("pending_queue");
    group.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    group.bench_function("panel_page_100", |b| {
        let engine = engine();
        b.iter(|| black_box(engine.gates(&page).expect("page")))
    });
    group.bench_function("count", |b| {
        let engine = engine();
        b.iter(|| black_box(engine.count_gates(&GateFilter::pending()).expect("count")))
    });
    group.sample_size(10);
    group.bench_function("all_10000", |b| {
        let engine = engine();
        b.iter(|| black_box(engine.gates(&GateFilter::pending()).expect("all")))
    });
    group.finish();
}

/// The 100,000-event run, exported once to check it and to serialise.
struct RecordedRun {
    engine: Engine,
    scope: RecordingScope,
    recording: Recording,
}

impl RecordedRun {
    fn load() -> Self {
        let (engine, run_id) = datasets::recording_store();
        let scope = RecordingScope::Run { run_id };
        let recording = engine.export(scope.clone()).expect("export");
        let json_bytes = serde_json::to_vec(&recording).expect("to json").len() as u64;
        let audit = engine.verify_audit().expect("verify");
        assert!(audit.is_intact(), "{:?}", audit.problems);
        assert_eq!(audit.events, RECORDING_EVENTS);
        eprintln!(
            "recording: {} events exported ({} gates, {} turns), {:.1} MB of JSON",
            recording.events.len(),
            recording.runs[0].gates.len(),
            recording.runs[0].turns.len(),
            json_bytes as f64 / 1e6
        );
        Self { engine, scope, recording }
    }
}

fn recording(c: &mut Criterion) {
    let store = OnceCell::new();
    let recorded = || store.get_or_init(RecordedRun::load);

    let mut group = c.benchmark_group("recording");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(RECORDING_EVENTS));
    group.bench_function("export", |b| {
        let RecordedRun { engine, scope, .. } = recorded();
        b.iter_with_large_drop(|| engine.export(scope.clone()).expect("export"))
    });
    group.bench_function("to_json", |b| {
        let RecordedRun { recording, .. } = recorded();
        b.iter_with_large_drop(|| serde_json::to_vec(recording).expect("to json"))
    });
    group.bench_function("export_to_json", |b| {
        let RecordedRun { engine, scope, .. } = recorded();
        b.iter(|| black_box(serde_json::to_vec(&engine.export(scope.clone()).expect("export")).expect("to json")))
    });
    group.bench_function("verify_audit", |b| {
        let RecordedRun { engine, .. } = recorded();
        b.iter(|| black_box(engine.verify_audit().expect("verify")))
    });
    group.bench_function("subscriber_catch_up", |b| {
        let RecordedRun { engine, .. } = recorded();
        b.iter(|| {
            let mut subscription = engine.subscribe(0, EventFilter::default());
            let mut received = 0u64;
            while subscription.next_ready().expect("next").is_some() {
                received += 1;
            }
            assert_eq!(received, RECORDING_EVENTS);
        })
    });
    group.finish();
}

/// The time from a durable write's acknowledgement to a subscriber waiting
/// in `next_timeout` holding the event (zero when it already had it).
fn subscriber(c: &mut Criterion) {
    let mut group = c.benchmark_group("subscriber");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    let setup = OnceCell::new();
    group.bench_function("live_delay", |b| {
        let (engine, run, _dir) = setup.get_or_init(|| {
            let (engine, dir) = fresh_engine(StoreOptions::default());
            let run = new_run(&engine, "agent-0");
            (engine, run, dir)
        });
        b.iter_custom(|iters| live_delay(engine, run, "agent-0", iters));
    });
    group.finish();
}

fn audit_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("audit_chain");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(1));
    let key = AuditKey::from_text(&AuditKey::generate()).expect("a generated key is valid");
    let (prev, body) = ([7u8; 32], [9u8; 32]);
    group.bench_function(BenchmarkId::new("link", "plain"), |b| {
        b.iter(|| link(None, black_box(&prev), black_box(42), black_box(&body)))
    });
    group.bench_function(BenchmarkId::new("link", "keyed"), |b| {
        b.iter(|| link(Some(&key), black_box(&prev), black_box(42), black_box(&body)))
    });

    let no_fsync = StoreOptions { synchronous_full: false, ..StoreOptions::default() };
    for (name, audit_key) in [("plain", None), ("keyed", Some(key.clone()))] {
        let engine = OnceCell::new();
        group.bench_function(BenchmarkId::new("lifecycle", name), |b| {
            let (engine, _dir) = engine.get_or_init(|| {
                let dir = tempfile::Builder::new().prefix("chain-").tempdir_in(bench_data_dir()).expect("temp dir");
                let config =
                    EngineConfig { store: no_fsync.clone(), audit_key: audit_key.clone(), ..EngineConfig::default() };
                (Engine::open(dir.path().join("gatehouse.db"), config).expect("open engine"), dir)
            });
            b.iter_custom(|iters| timed_lifecycles(engine, 1, iters))
        });
    }
    group.finish();
}

/// Sums, over `iters` context changes, the delay between the write call
/// returning and a subscriber thread blocked in `next_timeout` receiving it.
fn live_delay(engine: &Engine, run: &RunId, agent: &str, iters: u64) -> Duration {
    let (received_tx, received_rx) = mpsc::channel::<Instant>();
    let mut subscription = engine.subscribe(engine.head_seq().expect("head"), EventFilter::default());
    std::thread::scope(|s| {
        s.spawn(move || {
            for _ in 0..iters {
                let event = subscription.next_timeout(Duration::from_secs(10)).expect("next");
                event.expect("an event within 10 s");
                received_tx.send(Instant::now()).expect("send");
            }
        });
        let mut total = Duration::ZERO;
        for n in 0..iters {
            engine.context_set(run, "progress", serde_json::json!({ "n": n }), agent).expect("context");
            let acknowledged = Instant::now();
            let received = received_rx.recv().expect("receive");
            total += received.saturating_duration_since(acknowledged);
        }
        total
    })
}

criterion_group!(benches, lifecycle, pending_queue, recording, subscriber, audit_chain);
criterion_main!(benches);
