//! Search benchmarks.
//!
//! 1. `search/*`: typical searches over 1,000,000 stored gates (see
//!    `dataset.rs` for the store and how it is built), each a page of 50
//!    hits through `Engine::search_gates`, as the API asks for them. Before
//!    timing, it prints how many gates each search's text matches and how
//!    the database's pages are spent; with `GATEHOUSE_BENCH_BACKFILL=1` it
//!    also times migration 4's backfill of the whole store (rolled back).
//! 2. `index_writes/*`: what keeping the index current costs a gate's
//!    lifecycle (open an approval, reject it with a reason), with the index's
//!    triggers and with them dropped, on fresh stores without fsync so the
//!    CPU cost shows.
//!
//! Run with `cargo bench -p gatehouse-engine --bench search` (the first run
//! builds `target/bench-data/search-1m.db`, a few minutes); one search with
//! `-- search/rare_word`.

mod dataset;

use std::cell::OnceCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::{Duration as Days, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use gatehouse_engine::{
    DecisionInput, Engine, EngineConfig, GateSearch, GateStatus, NewGate, NewRun, RunId, StoreOptions,
};
use serde_json::json;

use dataset::{bench_data_dir, page, search_store, sizes, store_path, word_at_rank, GATES};

/// The searches measured, by name.
fn searches(runs: &[RunId]) -> Vec<(&'static str, GateSearch)> {
    let rare = word_at_rank(25_000);
    let year_start = Utc.with_ymd_and_hms(2025, 11, 1, 0, 0, 0).unwrap();
    vec![
        ("newest", page(|_| {})),
        ("rare_word", page(|s| s.text = rare.clone())),
        ("common_word", page(|s| s.text = "customer ".into())),
        ("two_words", page(|s| s.text = "customer invoice ".into())),
        ("prefix_4", page(|s| s.text = "migr".into())),
        ("prefix_2", page(|s| s.text = "cu".into())),
        ("no_match", page(|s| s.text = "qwertyuiop ".into())),
        (
            "common_word_pending",
            page(|s| {
                s.text = "customer ".into();
                s.status = Some(GateStatus::Pending);
            }),
        ),
        (
            "common_word_agent",
            page(|s| {
                s.text = "customer ".into();
                s.agent = Some("legal-reviewer".into());
            }),
        ),
        (
            "common_word_reviewer",
            page(|s| {
                s.text = "customer ".into();
                s.decided_by = Some("dmitri".into());
            }),
        ),
        (
            "common_word_last_30_days",
            page(|s| {
                s.text = "customer ".into();
                s.from = Some(year_start + Days::days(335));
            }),
        ),
        (
            "common_word_first_30_days",
            page(|s| {
                s.text = "customer ".into();
                s.to = Some(year_start + Days::days(30));
            }),
        ),
        (
            "common_word_to_mid_year",
            page(|s| {
                s.text = "customer ".into();
                s.to = Some(year_start + Days::days(182));
            }),
        ),
        (
            "narrow_last_7_days",
            page(|s| {
                s.text = "customer ".into();
                s.agent = Some("legal-reviewer".into());
                s.status = Some(GateStatus::Cancelled);
                s.from = Some(year_start + Days::days(358));
            }),
        ),
        (
            "common_word_offset_5000",
            page(|s| {
                s.text = "customer ".into();
                s.offset = 5_000;
            }),
        ),
        ("agent_only", page(|s| s.agent = Some("legal-reviewer".into()))),
        ("run_only", page(|s| s.run_id = Some(runs[runs.len() / 2].clone()))),
        ("reviewer_only", page(|s| s.decided_by = Some("dmitri".into()))),
        ("pending_only", page(|s| s.status = Some(GateStatus::Pending))),
    ]
}

/// The FTS5 expression the store makes of `text` (plain words only), to
/// count every gate it matches.
fn fts_expression(text: &str) -> String {
    let typing = !text.ends_with(' ');
    let words: Vec<&str> = text.split_whitespace().collect();
    let last = words.len().saturating_sub(1);
    let quoted = words.iter().enumerate().map(|(i, w)| {
        let prefix = typing && i == last && w.chars().count() >= 2;
        format!("\"{w}\"{}", if prefix { "*" } else { "" })
    });
    quoted.collect::<Vec<_>>().join(" ")
}

/// The store, opened once, with what each search's text matches printed.
fn prepared() -> (Engine, Vec<(&'static str, GateSearch)>) {
    let (engine, runs) = search_store();
    let (gates, index) = sizes(&store_path());
    let file = std::fs::metadata(store_path()).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "search-1m.db: {GATES} gates, {:.0} MB on disk ({:.0} MB of gate rows and indexes, {:.0} MB of search index)",
        file as f64 / 1e6,
        gates as f64 / 1e6,
        index as f64 / 1e6
    );
    if std::env::var_os("GATEHOUSE_BENCH_BACKFILL").is_some() {
        backfill();
    }
    let searches = searches(&runs);
    let conn = rusqlite::Connection::open(store_path()).expect("open");
    for (name, s) in &searches {
        let hits = engine.search_gates(s).expect("search");
        let matching: Option<i64> = (!s.text.trim().is_empty()).then(|| {
            conn.query_row(
                "SELECT count(*) FROM gate_search WHERE gate_search MATCH ?",
                [fts_expression(&s.text)],
                |r| r.get(0),
            )
            .unwrap_or(-1)
        });
        eprintln!(
            "  {name}: {:?} -> {} hits{}, text matches {}",
            s.text,
            hits.hits.len(),
            if hits.more { " (more)" } else { "" },
            matching.map_or("-".into(), |m| m.to_string())
        );
    }
    (engine, searches)
}

/// Times what migration 4 does to a store of a million gates: a new index
/// filled from `gate_search_source`, in one transaction, then rolled back.
fn backfill() {
    let conn = rusqlite::Connection::open(store_path()).expect("open");
    let started = Instant::now();
    conn.execute_batch(
        "BEGIN;
         CREATE VIRTUAL TABLE backfill USING fts5 (
             text, action, payload, details, agent, run, reviewer, decision,
             tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
         INSERT INTO backfill (rowid, text, action, payload, details, agent, run, reviewer, decision)
             SELECT * FROM gate_search_source;",
    )
    .expect("backfill");
    eprintln!("backfilling the index of {GATES} gates: {:.0} s", started.elapsed().as_secs_f64());
    conn.execute_batch("ROLLBACK").expect("roll back");
}

fn search(c: &mut Criterion) {
    let store = OnceCell::new();
    let names: Vec<&'static str> = searches(&[RunId::from("run")]).into_iter().map(|(name, _)| name).collect();
    let mut group = c.benchmark_group("search");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (i, name) in names.into_iter().enumerate() {
        group.bench_function(name, |b| {
            let (engine, searches) = store.get_or_init(prepared);
            let s = &searches[i].1;
            b.iter(|| black_box(engine.search_gates(s).expect("search")))
        });
    }
    group.finish();
}

/// One lifecycle that touches every column of the index: an approval with a
/// payload, rejected with a reason.
fn lifecycle(engine: &Engine, run: &RunId, n: u64) {
    let gate = NewGate::approval(
        "deploy_service",
        format!("Deploy build {n} of the billing service to staging?"),
        json!({ "service": "billing-api", "build": n, "env": "staging", "notes": "canary passed on eu-west-1" }),
    );
    let gate = engine.open_gate(run, gate, "builder-bot").expect("open gate");
    let reason = DecisionInput::reject("Not during the freeze; try again on Monday.");
    black_box(engine.resolve_gate(&gate.id, reason, "alice").expect("resolve gate"));
}

fn index_writes(c: &mut Criterion) {
    let mut group = c.benchmark_group("index_writes");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for (name, indexed) in [("lifecycle_indexed", true), ("lifecycle_unindexed", false)] {
        let setup = OnceCell::new();
        group.bench_function(name, |b| {
            let (engine, run, _dir) = setup.get_or_init(|| {
                let dir = tempfile::Builder::new().prefix("index-").tempdir_in(bench_data_dir()).expect("temp dir");
                let path = dir.path().join("gatehouse.db");
                let store = StoreOptions { synchronous_full: false, ..StoreOptions::default() };
                let engine = Engine::open(&path, EngineConfig { store, ..EngineConfig::default() }).expect("open");
                if !indexed {
                    let conn = rusqlite::Connection::open(&path).expect("open");
                    conn.execute_batch("DROP TRIGGER gate_search_insert; DROP TRIGGER gate_search_update;")
                        .expect("drop the index's triggers");
                }
                let new = NewRun { agent: "builder-bot".into(), title: "Billing".into(), ..NewRun::default() };
                let run = engine.create_run(new, "builder-bot").expect("run").id;
                (engine, run, dir)
            });
            let mut n = 0;
            b.iter(|| {
                n += 1;
                lifecycle(engine, run, n);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, search, index_writes);
criterion_main!(benches);
