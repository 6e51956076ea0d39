//! Team-server load generator: gate lifecycles per second and round-trip
//! latency over HTTP, on SQLite (one instance) or on PostgreSQL with one or
//! two server instances sharing the database, so the backends can be set
//! side by side on the same machine with the same harness.
//!
//! ```sh
//! cargo run --release -p gatehouse-server --example teamload -- --database sqlite
//! cargo run --release -p gatehouse-server --example teamload -- --database postgres://USER@HOST:PORT/DB --instances 2
//! ```
//!
//! Options: `--instances N` (PostgreSQL only; default 1), `--agents N`
//! concurrent agents in the throughput phase (default 32), `--seconds N`
//! (default 10), `--roundtrips N` (default 1000), `--wakes N` (default 200),
//! `--writers N` (PostgreSQL writer threads per instance, default
//! `PgOptions`'s), `--max-batch N` (the most writes a PostgreSQL group
//! commits together, default `PgOptions`'s).
//!
//! Each instance is a child process (this binary with `--serve`) on
//! `127.0.0.1:0` with its own engine; the parent makes the tokens and runs
//! first, through an engine of its own, then drives the instances over HTTP.
//!
//! - **(a) Round trip.** The agent opens a sync gate on instance 0 and
//!   long-polls it there; the reviewer resolves it on the last instance as
//!   soon as the open returns, so with two instances every decision crosses
//!   from one to the other (through PostgreSQL's NOTIFY). Open to decision
//!   received, one at a time.
//! - **(c) Wake.** The agent long-polls a sync gate on instance 0; 20 ms
//!   later, with the wait surely parked, the reviewer resolves it on the last
//!   instance. Time from sending the decision to the agent's wait returning
//!   (it includes the decision's own commit and HTTP round trip).
//! - **(b) Lifecycles per second.** `--agents` tasks each loop: open an async
//!   gate on one instance, resolve it on the next (round robin), for
//!   `--seconds`. Two durable commits per lifecycle.
//!
//! On PostgreSQL, (a) and (b) also give the database round trips the
//! instances waited for (`gatehouse_store_round_trips_total`, from their
//! `/metrics`), per round trip and per lifecycle; (b) gives the write
//! transactions they committed per lifecycle (`gatehouse_store_write_transactions_total`),
//! on either backend: how many lifecycles a group commit carried.
//!
//! With `GATEHOUSE_AUDIT_KEY` set (32 characters or more), every instance's
//! audit chain is keyed (HMAC-SHA256), as `gatehouse serve` keys it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use gatehouse_engine::{Database, Engine, EngineConfig, NewRun, PgOptions, SystemClock, TokenRole};
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

struct Opts {
    database: String,
    schema: Option<String>,
    instances: usize,
    agents: usize,
    seconds: u64,
    roundtrips: usize,
    wakes: usize,
    /// PostgreSQL writer threads per instance (`PgOptions::writers`).
    writers: usize,
    /// The most writes a PostgreSQL group commits together (`PgOptions::max_batch`).
    max_batch: usize,
    serve: bool,
}

impl Opts {
    fn parse() -> Result<Self> {
        let mut o = Self {
            database: "sqlite".into(),
            schema: None,
            instances: 1,
            agents: 32,
            seconds: 10,
            roundtrips: 1000,
            wakes: 200,
            writers: PgOptions::default().writers,
            max_batch: PgOptions::default().max_batch,
            serve: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            if flag == "--serve" {
                o.serve = true;
                continue;
            }
            let value = args.next().with_context(|| format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--database" => o.database = value,
                "--schema" => o.schema = Some(value),
                "--instances" => o.instances = value.parse()?,
                "--agents" => o.agents = value.parse()?,
                "--seconds" => o.seconds = value.parse()?,
                "--roundtrips" => o.roundtrips = value.parse()?,
                "--wakes" => o.wakes = value.parse()?,
                "--writers" => o.writers = value.parse()?,
                "--max-batch" => o.max_batch = value.parse()?,
                other => bail!("unknown option {other}"),
            }
        }
        if o.instances > 1 && !o.database.starts_with("postgres") {
            bail!("several instances need a shared PostgreSQL database (--database postgres://...)");
        }
        Ok(o)
    }

    fn database(&self) -> Database {
        if self.database == "sqlite" {
            Database::Sqlite(PathBuf::from("target/teamload/gatehouse.db"))
        } else {
            Database::parse(&self.database)
        }
    }

    fn engine(&self) -> Result<Engine> {
        // `GATEHOUSE_AUDIT_KEY` keys the audit chain, as `gatehouse serve` does with its key file.
        let audit_key = match std::env::var("GATEHOUSE_AUDIT_KEY") {
            Ok(text) => Some(gatehouse_engine::event::AuditKey::from_text(&text).map_err(anyhow::Error::msg)?),
            Err(_) => None,
        };
        let config = EngineConfig {
            postgres: PgOptions {
                schema: self.schema.clone(),
                writers: self.writers,
                max_batch: self.max_batch,
                ..PgOptions::default()
            },
            audit_key,
            ..Default::default()
        };
        Ok(Engine::open_database(&self.database(), config, Arc::new(SystemClock))?)
    }
}

fn main() -> Result<()> {
    let mut opts = Opts::parse()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if opts.serve {
        return runtime.block_on(serve(opts));
    }
    if opts.database == "sqlite" {
        let _ = std::fs::remove_dir_all("target/teamload");
    } else if opts.schema.is_none() {
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
        opts.schema = Some(format!("teamload_{stamp}"));
    }
    runtime.block_on(drive(opts))
}

/// A child: serves the database until its stdin closes.
async fn serve(opts: Opts) -> Result<()> {
    let engine = opts.engine()?;
    let config = ServerConfig { bind: "127.0.0.1:0".parse()?, ..ServerConfig::default() };
    let server = gatehouse_server::start(engine, config).await?;
    println!("{}", server.addr);
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    while stdin.next_line().await?.is_some() {}
    Ok(())
}

struct Instance {
    _child: Child,
    base: String,
}

async fn spawn(opts: &Opts) -> Result<Instance> {
    let mut command = Command::new(std::env::current_exe()?);
    let (writers, max_batch) = (opts.writers.to_string(), opts.max_batch.to_string());
    command.args(["--serve", "--database", &opts.database, "--writers", &writers, "--max-batch", &max_batch]);
    if let Some(schema) = &opts.schema {
        command.args(["--schema", schema]);
    }
    let piped = std::process::Stdio::piped;
    let mut child = command.stdin(piped()).stdout(piped()).kill_on_drop(true).spawn()?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
    let addr = stdout.next_line().await?.context("the instance exited")?;
    Ok(Instance { _child: child, base: format!("http://{}/api/hitl", addr.trim()) })
}

#[derive(Clone)]
struct Who {
    agent: String,
    reviewer: String,
    runs: Vec<String>,
}

async fn open(http: &reqwest::Client, base: &str, who: &Who, run: &str, mode: &str) -> Result<String> {
    let body =
        json!({"kind": "approval", "action": "deploy", "text": "Deploy?", "payload": {"build": 1}, "mode": mode});
    let opened: Value = http
        .post(format!("{base}/runs/{run}/gates"))
        .bearer_auth(&who.agent)
        .json(&body)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    Ok(opened["gate_id"].as_str().context("gate_id")?.to_owned())
}

async fn resolve(http: &reqwest::Client, base: &str, who: &Who, gate: &str) -> Result<()> {
    http.post(format!("{base}/gates/{gate}/resolve"))
        .bearer_auth(&who.reviewer)
        .json(&json!({"action": "approve"}))
        .send()
        .await?
        .error_for_status()?;
    Ok(())
}

/// The store's counts summed over every instance so far, from each one's
/// `/metrics`: database round trips waited for
/// (`gatehouse_store_round_trips_total`) and write transactions committed
/// (`gatehouse_store_write_transactions_total`).
#[derive(Clone, Copy, Default)]
struct StoreCounts {
    round_trips: f64,
    transactions: f64,
}

impl std::ops::Sub for StoreCounts {
    type Output = Self;
    fn sub(self, earlier: Self) -> Self {
        Self {
            round_trips: self.round_trips - earlier.round_trips,
            transactions: self.transactions - earlier.transactions,
        }
    }
}

async fn store_counts(http: &reqwest::Client, bases: &[String], who: &Who) -> Result<StoreCounts> {
    let mut total = StoreCounts::default();
    for base in bases {
        let url = format!("{}/metrics", base.trim_end_matches("/api/hitl"));
        let text = http.get(url).bearer_auth(&who.reviewer).send().await?.error_for_status()?.text().await?;
        let value = |name: &str| -> Result<f64> {
            let line = text.lines().find(|l| l.split_whitespace().next() == Some(name));
            let value =
                line.and_then(|l| l.split_whitespace().nth(1)).with_context(|| format!("no {name} in /metrics"))?;
            Ok(value.parse::<f64>()?)
        };
        total.round_trips += value("gatehouse_store_round_trips_total")?;
        total.transactions += value("gatehouse_store_write_transactions_total")?;
    }
    Ok(total)
}

async fn drive(opts: Opts) -> Result<()> {
    let who = {
        let engine = opts.engine()?;
        let agent = engine.create_token("deployer", TokenRole::Agent, "teamload")?.1;
        let reviewer = engine.create_token("alice", TokenRole::Reviewer, "teamload")?.1;
        let mut runs = Vec::new();
        for i in 0..opts.agents.max(1) + 1 {
            let new = NewRun { agent: "deployer".into(), title: format!("teamload {i}"), ..NewRun::default() };
            runs.push(engine.create_run(new, "deployer")?.id.to_string());
        }
        Who { agent, reviewer, runs }
    };
    let mut instances = Vec::new();
    for _ in 0..opts.instances {
        instances.push(spawn(&opts).await?);
    }
    let bases: Vec<String> = instances.iter().map(|i| i.base.clone()).collect();
    // Idle connections kept under the server's 10 s deadline for the next
    // request's headers: one left from (a) is not reused in (b) as the
    // server closes it.
    let http =
        reqwest::Client::builder().pool_max_idle_per_host(256).pool_idle_timeout(Duration::from_secs(5)).build()?;
    println!(
        "database: {} ({} instance{}), schema {}",
        if opts.database == "sqlite" { "SQLite" } else { "PostgreSQL" },
        opts.instances,
        if opts.instances == 1 { "" } else { "s" },
        opts.schema.as_deref().unwrap_or("-")
    );

    // (a) Round trips: open and wait on the first instance, resolve on the last.
    let (first, last) = (&bases[0], &bases[bases.len() - 1]);
    let run = &who.runs[0];
    let mut samples = Vec::with_capacity(opts.roundtrips);
    let mut counts_from = StoreCounts::default();
    for i in 0..opts.roundtrips + 100 {
        if i == 100 {
            counts_from = store_counts(&http, &bases, &who).await?;
        }
        let started = Instant::now();
        let gate = open(&http, first, &who, run, "sync").await?;
        let wait = http.get(format!("{first}/gates/{gate}/wait?timeout=30")).bearer_auth(&who.agent).send();
        let (waited, resolved) = tokio::join!(wait, resolve(&http, last, &who, &gate));
        resolved?;
        let body: Value = waited?.error_for_status()?.json().await?;
        if body["status"] != "resolved" {
            bail!("round trip {i}: the wait returned {body}");
        }
        if i >= 100 {
            samples.push(started.elapsed());
        }
    }
    samples.sort();
    if !samples.is_empty() {
        let pct = |p: f64| samples[((samples.len() as f64 * p) as usize).min(samples.len() - 1)];
        println!(
            "(a) round trip over {} (after 100 warm-up): median {:.2} ms, p99 {:.2} ms",
            samples.len(),
            pct(0.5).as_secs_f64() * 1e3,
            pct(0.99).as_secs_f64() * 1e3
        );
        let counts = store_counts(&http, &bases, &who).await? - counts_from;
        if counts.round_trips > 0.0 {
            println!("    database round trips: {:.1} per round trip", counts.round_trips / samples.len() as f64);
        }
    }

    // (c) Wake: the wait is parked on the first instance before the decision goes to the last.
    let mut wakes = Vec::with_capacity(opts.wakes);
    for i in 0..opts.wakes {
        let gate = open(&http, first, &who, run, "sync").await?;
        let wait = http.get(format!("{first}/gates/{gate}/wait?timeout=30")).bearer_auth(&who.agent).send();
        let decide = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let sent = Instant::now();
            resolve(&http, last, &who, &gate).await.map(|()| sent)
        };
        let (waited, sent) = tokio::join!(async { (wait.await, Instant::now()) }, decide);
        let sent = sent?;
        let (response, woke) = waited;
        let body: Value = response?.error_for_status()?.json().await?;
        if body["status"] != "resolved" {
            bail!("wake {i}: the wait returned {body}");
        }
        wakes.push(woke.saturating_duration_since(sent));
    }
    wakes.sort();
    if !wakes.is_empty() {
        let at = |p: f64| wakes[((wakes.len() as f64 * p) as usize).min(wakes.len() - 1)].as_secs_f64() * 1e3;
        println!(
            "(c) wake over {}: median {:.2} ms, p99 {:.2} ms, max {:.2} ms (decision sent on the last instance to the wait returning on the first)",
            wakes.len(),
            at(0.5),
            at(0.99),
            at(1.0)
        );
    }

    // (b) Lifecycles per second.
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for a in 0..opts.agents {
        let (http, who, bases, done, stop) = (http.clone(), who.clone(), bases.clone(), done.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let run = who.runs[a + 1].clone();
            let mut n = a;
            while !stop.load(Ordering::Relaxed) {
                let gate = open(&http, &bases[n % bases.len()], &who, &run, "async").await?;
                resolve(&http, &bases[(n + 1) % bases.len()], &who, &gate).await?;
                done.fetch_add(1, Ordering::Relaxed);
                n += 1;
            }
            anyhow::Ok(())
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (start_count, started) = (done.load(Ordering::Relaxed), Instant::now());
    let counts_from = store_counts(&http, &bases, &who).await?;
    tokio::time::sleep(Duration::from_secs(opts.seconds)).await;
    let (end_count, elapsed) = (done.load(Ordering::Relaxed), started.elapsed());
    let counts = store_counts(&http, &bases, &who).await? - counts_from;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await??;
    }
    println!(
        "(b) lifecycles: {:.0}/s with {} agents over {:.1} s",
        (end_count - start_count) as f64 / elapsed.as_secs_f64(),
        opts.agents,
        elapsed.as_secs_f64()
    );
    if end_count > start_count {
        // Counted from the first scrape to the last; the lifecycles in about the same span.
        let lifecycles = (end_count - start_count) as f64;
        if counts.round_trips > 0.0 {
            println!("    database round trips: {:.1} per lifecycle", counts.round_trips / lifecycles);
        }
        println!(
            "    write transactions: {:.2} per lifecycle ({:.1} lifecycles each)",
            counts.transactions / lifecycles,
            lifecycles / counts.transactions.max(1.0)
        );
    }
    Ok(())
}
