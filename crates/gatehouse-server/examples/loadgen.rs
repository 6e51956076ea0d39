//! Gatehouse's HTTP load generator (issue 3). Bounded, loopback only, and
//! it stops by itself. It re-runs its own binary as a child process that
//! serves a fresh database under `target/loadgen/` on `127.0.0.1:0`, so the
//! server's memory is measured on its own and each process needs only half
//! of the ~20,000 sockets phase (b) opens. Then it measures:
//!
//! (a) one gate's round trip: the agent opens a gate, then long-polls it
//!     while a reviewer resolves it; open start to the wait returning.
//! (b) 10,000 agents long-polling at once: from each resolve call returning
//!     to its waiter receiving the decision, and the server's RSS.
//! (c) 100 SSE subscribers each receiving every event of a burst.
//!
//! `ulimit -n 20000; cargo run --release -p gatehouse-server --example loadgen`
//! Options: `--roundtrips N --waiters N --subscribers N --burst N`, and two
//! diagnostics: `--blocking-threads N` (bound the server's blocking pool)
//! and `--no-fsync` (commit with `synchronous=NORMAL`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use futures_util::{stream, StreamExt, TryStreamExt};
use gatehouse_engine::{Engine, EngineConfig, NewRun, StoreOptions, TokenRole};
use gatehouse_server::ServerConfig;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Round trips run before measuring (connections, caches, page cache).
const WARMUP: usize = 200;
/// Runs the gates of (a) and (b) are spread over, round robin: agents work
/// on many runs, and a run's gates cost more the more it holds.
const RUNS: usize = 100;
/// Waiters connected per step; each step registers before the next starts.
const RAMP_STEP: usize = 500;

fn main() -> Result<()> {
    let opts = Opts::parse(&std::env::args().skip(1).collect::<Vec<_>>())?;
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    if let Some(dir) = opts.serve.clone() {
        // The server's runtime: tokio's defaults unless `--blocking-threads` says otherwise.
        if opts.blocking_threads > 0 {
            runtime.max_blocking_threads(opts.blocking_threads);
        }
        return runtime.enable_all().build()?.block_on(serve(dir, !opts.no_fsync));
    }
    runtime.enable_all().build()?.block_on(drive(opts))
}

struct Opts {
    roundtrips: usize,
    waiters: usize,
    subscribers: usize,
    burst: usize,
    /// The server runtime's blocking-pool bound (0: tokio's default, 512).
    blocking_threads: usize,
    /// Commit with `synchronous=NORMAL` instead of `FULL` (a diagnostic, not the product).
    no_fsync: bool,
    /// Set in the server child: the directory to serve from.
    serve: Option<PathBuf>,
}

impl Opts {
    fn parse(args: &[String]) -> Result<Self> {
        let (roundtrips, waiters, subscribers, burst) = (2_000, 10_000, 100, 1_000);
        let mut o = Opts { roundtrips, waiters, subscribers, burst, blocking_threads: 0, no_fsync: false, serve: None };
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            if flag == "--no-fsync" {
                o.no_fsync = true;
                continue;
            }
            let value = args.next().with_context(|| format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--serve" => o.serve = Some(value.into()),
                "--roundtrips" => o.roundtrips = value.parse()?,
                "--waiters" => o.waiters = value.parse()?,
                "--subscribers" => o.subscribers = value.parse()?,
                "--burst" => o.burst = value.parse()?,
                "--blocking-threads" => o.blocking_threads = value.parse()?,
                other => bail!("unknown option {other}"),
            }
        }
        Ok(o)
    }
}

/// The child: serves a fresh database and answers `waiters` on stdin with
/// how many gates are being long-polled. It exits when stdin closes.
async fn serve(dir: PathBuf, fsync: bool) -> Result<()> {
    let store = StoreOptions { synchronous_full: fsync, ..StoreOptions::default() };
    let engine = Engine::open(dir.join("gatehouse.db"), EngineConfig { store, ..EngineConfig::default() })?;
    let agent = engine.create_token("deployer", TokenRole::Agent, "loadgen")?.1;
    let reviewer = engine.create_token("alice", TokenRole::Reviewer, "loadgen")?.1;
    // Runs: [sse, then RUNS for round trips and waiters].
    let mut runs = Vec::new();
    for i in 0..1 + RUNS {
        let new = NewRun { agent: "deployer".into(), title: format!("loadgen {i}"), ..NewRun::default() };
        runs.push(engine.create_run(new, "deployer")?.id.to_string());
    }
    let config = ServerConfig { bind: "127.0.0.1:0".parse()?, ..ServerConfig::default() };
    let server = gatehouse_server::start(engine, config).await?;
    println!("{}", json!({"addr": server.addr.to_string(), "agent": agent, "reviewer": reviewer, "runs": runs}));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        match line.trim() {
            "waiters" => println!("{}", server.state.waiters.len()),
            other => println!("unknown command {other}"),
        }
    }
    Ok(())
}

/// Where the API is and who calls it.
#[derive(Clone)]
struct Api {
    base: String,
    agent: String,
    reviewer: String,
    runs: Vec<String>,
}

impl Api {
    async fn open_gate(&self, http: &reqwest::Client, run: &str, mode: &str, i: usize) -> Result<String> {
        let body = json!({"kind": "approval", "action": "deploy", "text": format!("Deploy build {i}?"), "mode": mode});
        let url = format!("{}/runs/{run}/gates", self.base);
        let opened: Value =
            http.post(url).bearer_auth(&self.agent).json(&body).send().await?.error_for_status()?.json().await?;
        Ok(opened["gate_id"].as_str().context("gate_id")?.to_owned())
    }

    async fn resolve(&self, http: &reqwest::Client, gate: &str) -> Result<()> {
        let url = format!("{}/gates/{gate}/resolve", self.base);
        let body = json!({"action": "approve"});
        http.post(url).bearer_auth(&self.reviewer).json(&body).send().await?.error_for_status()?;
        Ok(())
    }

    /// Long-polls `gate`: when the answer arrived, and whether it was a decision.
    async fn wait(&self, http: &reqwest::Client, gate: &str) -> Result<(Instant, bool)> {
        let url = format!("{}/gates/{gate}/wait?timeout=60", self.base);
        let gate: Value = http.get(url).bearer_auth(&self.agent).send().await?.error_for_status()?.json().await?;
        Ok((Instant::now(), gate["status"] == "resolved"))
    }
}

/// The server child as the driver sees it.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    api: Api,
}

impl Server {
    async fn start(dir: &Path, opts: &Opts) -> Result<Self> {
        let mut command = Command::new(std::env::current_exe()?);
        command.arg("--serve").arg(dir).args(["--blocking-threads", &opts.blocking_threads.to_string()]);
        if opts.no_fsync {
            command.arg("--no-fsync");
        }
        let piped = std::process::Stdio::piped;
        let mut child = command.stdin(piped()).stdout(piped()).kill_on_drop(true).spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let ready: Value = serde_json::from_str(&stdout.next_line().await?.context("server exited")?)?;
        let field = |k: &str| ready[k].as_str().map(str::to_owned).context("ready line");
        let runs = ready["runs"].as_array().context("runs")?.iter().filter_map(|r| r.as_str().map(str::to_owned));
        let base = format!("http://{}/api/hitl", field("addr")?);
        let api = Api { base, agent: field("agent")?, reviewer: field("reviewer")?, runs: runs.collect() };
        Ok(Self { child, stdin, stdout, api })
    }

    async fn waiters(&mut self) -> Result<usize> {
        self.stdin.write_all(b"waiters\n").await?;
        Ok(self.stdout.next_line().await?.context("server exited")?.trim().parse()?)
    }

    /// (VmRSS, VmHWM) of the server process, MiB.
    fn memory(&self) -> (f64, f64) {
        self.child.id().map(|pid| memory(&format!("/proc/{pid}/status"))).unwrap_or_default()
    }
}

/// (VmRSS, VmHWM) in MiB from a `/proc/<pid>/status` file.
fn memory(status_path: &str) -> (f64, f64) {
    let mib = |key| proc_field(status_path, key, 1).unwrap_or(0.0) / 1024.0;
    (mib("VmRSS:"), mib("VmHWM:"))
}

/// The `nth` word of the first line of `path` that starts with `prefix`.
fn proc_field(path: &str, prefix: &str, nth: usize) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find(|l| l.starts_with(prefix))?.split_whitespace().nth(nth)?.parse().ok()
}

async fn drive(mut opts: Opts) -> Result<()> {
    let fd_limit = proc_field("/proc/self/limits", "Max open files", 3).unwrap_or(1024.0) as usize;
    if opts.waiters + 500 > fd_limit {
        let fitted = fd_limit.saturating_sub(500);
        println!("! ulimit -n is {fd_limit}: running {fitted} waiters, not {}", opts.waiters);
        opts.waiters = fitted;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")));
    std::fs::create_dir_all(target.join("loadgen"))?;
    let dir = tempfile::Builder::new().prefix("run-").tempdir_in(target.join("loadgen"))?;
    let mut server = Server::start(dir.path(), &opts).await?;
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let pool = match opts.blocking_threads {
        0 => "tokio's default (512)".to_owned(),
        n => n.to_string(),
    };
    let sync = if opts.no_fsync { "NORMAL (no fsync per commit)" } else { "FULL" };
    println!("server pid {:?} at {}; {cpus} CPUs", server.child.id(), server.api.base);
    println!("server blocking pool {pool}; synchronous={sync}");

    // Idle connections kept under the server's 10 s deadline for the next request's headers.
    let http =
        reqwest::Client::builder().pool_max_idle_per_host(64).pool_idle_timeout(Duration::from_secs(5)).build()?;
    let times = round_trips(&server.api, &http, opts.roundtrips).await?;
    let (p50, p99) = (pct(&times, 0.50), pct(&times, 0.99));
    println!("(a) gate round trip, {} round trips after {WARMUP} warm-up:", times.len());
    let (pass50, pass99) = (verdict(p50 <= Duration::from_micros(1500)), verdict(p99 <= Duration::from_millis(5)));
    println!("    median {} ms [{pass50}], p99 {} ms [{pass99}], max {} ms", ms(p50), ms(p99), ms(pct(&times, 1.0)));

    waiters(&mut server, opts.waiters).await?;
    sse(&server.api, &http, opts.subscribers, opts.burst).await?;
    let (rss, peak) = server.memory();
    println!("server RSS at the end {rss:.0} MiB, peak {peak:.0} MiB [{}]", verdict(peak < 300.0));
    drop(server.stdin); // the child exits when its stdin closes
    server.child.wait().await?;
    Ok(())
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn verdict(pass: bool) -> &'static str {
    ["FAIL", "pass"][usize::from(pass)]
}

/// The `p` quantile (0..=1) of unsorted samples, nearest rank.
fn pct(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or_default()
}

/// (a): round trips one after another, over `RUNS` runs in turn.
async fn round_trips(api: &Api, http: &reqwest::Client, n: usize) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(n);
    for i in 0..n + WARMUP {
        let started = Instant::now();
        let gate = api.open_gate(http, &api.runs[1 + i % RUNS], "sync", i).await?;
        let (waited, resolved) = tokio::join!(api.wait(http, &gate), api.resolve(http, &gate));
        resolved?;
        let (returned, decided) = waited?;
        ensure!(decided, "gate {gate} came back undecided");
        if i >= WARMUP {
            times.push(returned - started);
        }
    }
    Ok(times)
}

/// (b): `n` pending gates, each long-polled on its own connection, then all resolved.
async fn waiters(server: &mut Server, n: usize) -> Result<()> {
    let (api, rss_idle) = (server.api.clone(), server.memory().0);
    let opener = reqwest::Client::new();
    let ids: Vec<String> = stream::iter(0..n)
        .map(|i| api.open_gate(&opener, &api.runs[1 + i % RUNS], "sync", i))
        .buffered(64)
        .try_collect()
        .await?;
    let rss_opened = server.memory().0;
    // A client of its own that keeps no idle connections, so these do not
    // linger into the next phase.
    let pollers = reqwest::Client::builder().pool_max_idle_per_host(0).build()?;
    let received: Arc<Vec<OnceLock<Instant>>> = Arc::new((0..n).map(|_| OnceLock::new()).collect());
    let ramp = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for (i, id) in ids.iter().enumerate() {
        let (api, pollers, received, id) = (api.clone(), pollers.clone(), Arc::clone(&received), id.clone());
        tasks.push(tokio::spawn(async move {
            let (at, decided) = api.wait(&pollers, &id).await?;
            let _ = received[i].set(at);
            anyhow::Ok(decided)
        }));
        // Connect in steps, each registered before the next (the accept backlog is finite).
        if (i + 1) % RAMP_STEP == 0 || i + 1 == n {
            let deadline = Instant::now() + Duration::from_secs(30);
            while server.waiters().await? < i + 1 {
                ensure!(Instant::now() < deadline, "only {} of {} waiters registered", server.waiters().await?, i + 1);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
    let rss_waiting = server.memory().0;
    println!("(b) {n} waiters connected and registered in {:.2} s", ramp.elapsed().as_secs_f64());
    let (pass, driver) = (verdict(rss_waiting < 300.0), memory("/proc/self/status").0);
    println!(
        "    server RSS {rss_idle:.0} MiB idle, {rss_opened:.0} MiB after opening {n} gates, \
         {rss_waiting:.0} MiB with {n} long-polls [{pass}]; load generator {driver:.0} MiB (separate process)"
    );

    let (reviewer, started) = (reqwest::Client::new(), Instant::now());
    let resolved: Vec<(usize, Instant, Instant)> = stream::iter(ids.iter().enumerate())
        .map(|(i, id)| {
            let (api, reviewer) = (&api, &reviewer);
            async move {
                let start = Instant::now();
                api.resolve(reviewer, id).await?;
                anyhow::Ok((i, start, Instant::now()))
            }
        })
        .buffer_unordered(32)
        .try_collect()
        .await?;
    let resolve_all = started.elapsed();
    let mut decided = 0;
    for task in tasks {
        decided += usize::from(task.await??);
    }
    ensure!(decided == n, "only {decided} of {n} waiters saw their decision");
    let (mut after_return, mut after_start, mut early) = (Vec::new(), Vec::new(), 0);
    for (i, start, returned) in resolved {
        let got = *received[i].get().context("a waiter never answered")?;
        early += usize::from(got < returned);
        after_return.push(got.saturating_duration_since(returned));
        after_start.push(got - start);
    }
    let p99 = pct(&after_return, 0.99);
    println!(
        "    resolved all {n} in {:.2} s, 32 reviewer calls at a time; every waiter got its decision",
        resolve_all.as_secs_f64()
    );
    let (median, max, pass) =
        (pct(&after_return, 0.5), pct(&after_return, 1.0), verdict(p99 <= Duration::from_millis(50)));
    println!(
        "    resolve returned -> waiter received: median {} ms, p99 {} ms [{pass}], max {} ms \
         ({early} waiters had it first; counted as 0)",
        ms(median),
        ms(p99),
        ms(max)
    );
    println!(
        "    resolve sent -> waiter received: median {} ms, p99 {} ms",
        ms(pct(&after_start, 0.5)),
        ms(pct(&after_start, 0.99))
    );
    Ok(())
}

/// (c): `subscribers` SSE streams on one run, then a burst of `burst` gates on it.
async fn sse(api: &Api, http: &reqwest::Client, subscribers: usize, burst: usize) -> Result<()> {
    let url = format!("{}/events?run_id={}&after=0", api.base, api.runs[0]);
    let ready = Arc::new(tokio::sync::Barrier::new(subscribers + 1));
    let mut tasks = Vec::new();
    for _ in 0..subscribers {
        let (http, url, token, ready) = (http.clone(), url.clone(), api.reviewer.clone(), Arc::clone(&ready));
        tasks.push(tokio::spawn(subscribe(http, url, token, ready, burst)));
    }
    ready.wait().await;
    let started = Instant::now();
    let open = |i| api.open_gate(http, &api.runs[0], "async", i);
    stream::iter(0..burst).map(open).buffer_unordered(32).try_collect::<Vec<_>>().await?;
    let written = started.elapsed();
    let (mut last, mut lags) = (started, Vec::new());
    for task in tasks {
        let (done, got, lag) = task.await??;
        ensure!(got == burst, "a subscriber got {got} of {burst} gate_opened events");
        last = last.max(done);
        lags.extend(lag);
    }
    let all = last - started;
    println!("(c) {subscribers} SSE subscribers x {burst} events: each got all {burst}, in order, none twice");
    let rate = (subscribers * burst) as f64 / all.as_secs_f64();
    println!(
        "    burst written in {} ms; all delivered {} ms after it began ({rate:.0} messages/s); \
         event time -> receipt median {} ms, p99 {} ms",
        ms(written),
        ms(all),
        ms(pct(&lags, 0.5)),
        ms(pct(&lags, 0.99))
    );
    Ok(())
}

/// One SSE subscriber: when it finished, how many gate openings it saw, and
/// each one's age (from the event's timestamp) on arrival.
async fn subscribe(
    http: reqwest::Client,
    url: String,
    token: String,
    ready: Arc<tokio::sync::Barrier>,
    burst: usize,
) -> Result<(Instant, usize, Vec<Duration>)> {
    let mut resp = http.get(url).bearer_auth(token).send().await?.error_for_status()?;
    let (mut buf, mut last_id, mut got, mut lags, mut joined) = (String::new(), 0u64, 0, Vec::new(), false);
    while got < burst {
        let chunk = tokio::time::timeout(Duration::from_secs(30), resp.chunk()).await??;
        buf.push_str(std::str::from_utf8(&chunk.context("the stream ended")?)?);
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let (mut id, mut event, mut data) = (0u64, "", "");
            for line in block.lines() {
                match line.split_once(": ") {
                    Some(("id", v)) => id = v.parse()?,
                    Some(("event", v)) => event = v,
                    Some(("data", v)) => data = v,
                    _ => {}
                }
            }
            if id == 0 {
                continue; // a keep-alive comment
            }
            ensure!(id > last_id, "event {id} after {last_id}: repeated or out of order");
            last_id = id;
            if !joined {
                joined = true; // the backlog's first event: this subscriber is live
                ready.wait().await;
            }
            if event == "gate_opened" {
                got += 1;
                let at = serde_json::from_str::<Value>(data)?["at"].as_str().context("at")?.to_owned();
                let at: chrono::DateTime<chrono::Utc> = at.parse()?;
                lags.push((chrono::Utc::now() - at).to_std().unwrap_or_default());
            }
        }
    }
    Ok((Instant::now(), got, lags))
}
