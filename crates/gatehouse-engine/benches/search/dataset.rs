//! The search benchmark's store: 1,000,000 gates written straight into a
//! database the engine created (its schema, so its FTS5 index and the
//! triggers that fill it), in one transaction of bulk inserts. Going around
//! the engine's write path lets gates carry a year of times (the engine
//! stamps its own clock) and takes a few minutes; the index is the real
//! one, filled by the same triggers as in the app. The event log stays
//! empty: search never reads it.
//!
//! The mix is meant to look like a year of work: 2,000 runs of 20 agents;
//! approvals of tool calls with JSON arguments, questions, payload,
//! response, information, quality, goal and plan reviews; free text drawn
//! from a Zipf-distributed vocabulary (a few words in most gates, a long
//! tail of rare ones); 1 % pending, 88 % resolved by 25 reviewers (some by
//! a policy), 7 % expired, 4 % cancelled, opened evenly over 365 days.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::{DateTime, Duration, TimeZone, Utc};
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::gate::{Gate, GateSpec};
use gatehouse_engine::ids::DecisionId;
use gatehouse_engine::{
    BlockingMode, Engine, EngineConfig, GateId, GateSearch, GateStatus, NewRun, Priority, RunId, StoreOptions,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// Gates in the store.
pub const GATES: u64 = 1_000_000;
/// Runs they belong to.
const RUNS: u64 = 2_000;
/// Pending gates: every 100th.
pub const PENDING_EVERY: u64 = 100;

/// `target/bench-data/`, on the project disk.
pub fn bench_data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("bench-data");
    fs::create_dir_all(&dir).expect("create target/bench-data");
    dir.canonicalize().unwrap_or(dir)
}

/// The common words, most frequent first; the vocabulary's tail is made up.
const WORDS: &[&str] = &[
    "the",
    "to",
    "customer",
    "before",
    "with",
    "for",
    "and",
    "release",
    "please",
    "check",
    "data",
    "new",
    "update",
    "production",
    "staging",
    "user",
    "account",
    "service",
    "request",
    "report",
    "team",
    "order",
    "invoice",
    "build",
    "config",
    "database",
    "migration",
    "review",
    "access",
    "payment",
    "refund",
    "email",
    "pipeline",
    "backup",
    "cluster",
    "schema",
    "latency",
    "error",
    "rollback",
    "feature",
    "branch",
    "ticket",
    "budget",
    "vendor",
    "contract",
    "region",
    "quota",
    "token",
    "secret",
    "policy",
    "export",
    "import",
    "summary",
    "draft",
    "campaign",
    "ledger",
    "audit",
    "billing",
    "onboarding",
    "churn",
    "forecast",
    "dashboard",
    "alert",
    "incident",
    "outage",
    "patch",
    "upgrade",
    "dependency",
    "library",
    "license",
    "compliance",
    "privacy",
    "consent",
    "retention",
    "archive",
    "translation",
    "localization",
    "pricing",
    "discount",
    "subscription",
    "renewal",
    "trial",
    "webhook",
    "endpoint",
    "certificate",
    "domain",
    "firewall",
    "throttle",
    "cache",
    "index",
    "replica",
    "shard",
    "snapshot",
    "restore",
    "monitoring",
    "metrics",
    "threshold",
    "anomaly",
    "fraud",
    "chargeback",
    "dispute",
    "shipment",
    "warehouse",
    "inventory",
    "supplier",
    "procurement",
    "payroll",
    "headcount",
    "contractor",
    "timesheet",
    "expense",
    "travel",
];

const AGENTS: &[&str] = &[
    "builder-bot",
    "claude-code",
    "support-triage",
    "billing-agent",
    "release-captain",
    "data-pipeline",
    "sre-oncall",
    "marketing-writer",
    "legal-reviewer",
    "sales-assistant",
    "finance-close",
    "hr-helper",
    "docs-writer",
    "qa-runner",
    "security-scanner",
    "infra-planner",
    "growth-analyst",
    "crm-sync",
    "ops-scheduler",
    "research-agent",
];

const REVIEWERS: &[&str] = &[
    "alice", "bob", "carol", "dana", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj", "olivia",
    "peggy", "rupert", "sybil", "trent", "victor", "walter", "yvonne", "zoe", "amir", "bea", "chen", "dmitri",
];

const TOOLS: &[&str] = &[
    "deploy_service",
    "send_email",
    "run_sql",
    "create_invoice",
    "delete_branch",
    "restart_pod",
    "charge_card",
    "post_slack_message",
    "write_file",
    "open_pull_request",
    "issue_refund",
    "update_crm_record",
    "rotate_secret",
    "scale_deployment",
    "publish_post",
    "transfer_funds",
    "create_user",
    "revoke_access",
    "merge_branch",
    "book_travel",
];

const SERVICES: &[&str] =
    &["billing-api", "checkout", "search-indexer", "auth-gateway", "ledger-core", "notifications", "reporting-etl"];
const ENVS: &[&str] = &["production", "staging", "eu-west-1", "us-east-2", "ap-south-1"];

/// The word of this frequency rank (1 is the most frequent) in the
/// store's vocabulary.
pub fn word_at_rank(rank: usize) -> String {
    Vocabulary::new(&mut StdRng::seed_from_u64(SEED)).words[rank - 1].clone()
}

/// The generator's seed: the same store on every machine.
const SEED: u64 = 7;

/// A deterministic Zipf vocabulary: the words above, then made-up ones.
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
}

impl Vocabulary {
    const SIZE: usize = 30_000;

    fn new(rng: &mut StdRng) -> Self {
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "ren", "tor", "vex", "bal", "quin", "dra", "sol", "fen", "gar", "hul", "jor", "nim",
            "pel", "ras", "tam", "ul", "wen", "zor", "bri", "cos", "dun",
        ];
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        while words.len() < Self::SIZE {
            let n = rng.gen_range(2..=4);
            let word: String = (0..n).map(|_| SYLLABLES[rng.gen_range(0..SYLLABLES.len())]).collect();
            if seen.insert(word.clone()) {
                words.push(word);
            }
        }
        let mut total = 0.0;
        let cumulative = (1..=words.len())
            .map(|rank| {
                total += 1.0 / (rank as f64).powf(1.05);
                total
            })
            .collect();
        Self { words, cumulative }
    }

    fn word(&self, rng: &mut StdRng) -> &str {
        let total = *self.cumulative.last().expect("words");
        let x = rng.gen_range(0.0..total);
        let i = self.cumulative.partition_point(|c| *c < x);
        &self.words[i.min(self.words.len() - 1)]
    }

    fn phrase(&self, rng: &mut StdRng, min: usize, max: usize) -> String {
        let n = rng.gen_range(min..=max);
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }
}

fn pick<'a>(rng: &mut StdRng, items: &'a [&'a str]) -> &'a str {
    items[rng.gen_range(0..items.len())]
}

/// A reviewer, the first ones far more often than the last.
fn reviewer(rng: &mut StdRng) -> &'static str {
    let i = (rng.gen_range(0.0f64..1.0).powi(3) * REVIEWERS.len() as f64) as usize;
    REVIEWERS[i.min(REVIEWERS.len() - 1)]
}

/// Where the store lives.
pub fn store_path() -> PathBuf {
    bench_data_dir().join("search-1m.db")
}

/// Opens `target/bench-data/search-1m.db`, building it first if it is
/// missing or incomplete, with its runs oldest first.
pub fn search_store() -> (Engine, Vec<RunId>) {
    let path = store_path();
    if path.exists() {
        let engine = Engine::open(&path, EngineConfig::default()).expect("open search-1m.db");
        let runs = run_ids(&engine);
        let total = engine.count_gates(&Default::default()).expect("count");
        if total == GATES && runs.len() as u64 == RUNS {
            return (engine, runs);
        }
        eprintln!("search-1m.db holds {total} gates; rebuilding");
        drop(engine);
        for suffix in ["", "-wal", "-shm"] {
            let _ = fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
    build(&path);
    let engine = Engine::open(&path, EngineConfig::default()).expect("reopen search-1m.db");
    let runs = run_ids(&engine);
    (engine, runs)
}

fn run_ids(engine: &Engine) -> Vec<RunId> {
    let mut runs: Vec<_> = engine.runs(&Default::default()).expect("runs");
    runs.sort_by_key(|r| r.created_at);
    runs.into_iter().map(|r| r.id).collect()
}

fn build(path: &Path) {
    eprintln!("building {} ({GATES} gates in one transaction; a few minutes)", path.display());
    let started = Instant::now();
    let mut rng = StdRng::seed_from_u64(SEED);
    let vocabulary = Vocabulary::new(&mut rng);
    // The schema, and the runs, through the engine.
    let runs: Vec<(RunId, String)> = {
        let config = EngineConfig {
            store: StoreOptions { synchronous_full: false, ..StoreOptions::default() },
            ..EngineConfig::default()
        };
        let engine = Engine::open(path, config).expect("create search-1m.db");
        (0..RUNS)
            .map(|r| {
                let agent = AGENTS[(r as usize * 7) % AGENTS.len()];
                let title = format!(
                    "{} {} for {}",
                    ["Release", "Migrate", "Audit", "Onboard", "Reconcile", "Investigate", "Plan", "Refresh"]
                        [(r % 8) as usize],
                    vocabulary.phrase(&mut rng, 1, 2),
                    pick(&mut rng, SERVICES)
                );
                let new = NewRun { agent: agent.into(), title, ..NewRun::default() };
                (engine.create_run(new, agent).expect("create run").id, agent.to_owned())
            })
            .collect()
    };
    let mut conn = rusqlite::Connection::open(path).expect("open for bulk insert");
    conn.pragma_update(None, "journal_mode", "WAL").expect("wal");
    conn.pragma_update(None, "synchronous", "OFF").expect("no sync");
    conn.pragma_update(None, "cache_size", -512_000).expect("cache");
    let tx = conn.transaction().expect("begin");
    {
        let mut insert_gate = tx
            .prepare(
                "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at, expires_at,
                                    idempotency_key, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
            )
            .expect("prepare gates");
        let mut insert_decision = tx
            .prepare(
                "INSERT INTO decisions (id, gate_id, run_id, action, decided_by, decided_at, latency_ms, data)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .expect("prepare decisions");
        let year_start = Utc.with_ymd_and_hms(2025, 11, 1, 0, 0, 0).unwrap();
        let step = Duration::days(365).num_microseconds().expect("micros") / GATES as i64;
        for n in 0..GATES {
            let (run_id, agent) = &runs[(n * RUNS / GATES) as usize];
            let created_at = year_start + Duration::microseconds(step * n as i64 + rng.gen_range(0..step));
            let gate = gate(&mut rng, &vocabulary, n, run_id, agent, created_at);
            let micros = |t: DateTime<Utc>| t.timestamp_micros();
            insert_gate
                .execute(rusqlite::params![
                    gate.id.as_str(),
                    gate.run_id.as_str(),
                    gate.kind().as_str(),
                    gate.mode.rank(),
                    gate.priority.rank(),
                    gate.status.as_str(),
                    gate.agent,
                    micros(gate.created_at),
                    gate.expires_at.map(micros),
                    serde_json::to_string(&gate).expect("gate json"),
                ])
                .expect("insert gate");
            if let Some(d) = &gate.decision {
                insert_decision
                    .execute(rusqlite::params![
                        d.id.as_str(),
                        d.gate_id.as_str(),
                        d.run_id.as_str(),
                        d.action.as_str(),
                        d.decided_by,
                        micros(d.decided_at),
                        d.latency_ms,
                        serde_json::to_string(d).expect("decision json"),
                    ])
                    .expect("insert decision");
            }
            if (n + 1) % 100_000 == 0 {
                eprintln!("  {} gates, {:.0} s", n + 1, started.elapsed().as_secs_f64());
            }
        }
    }
    tx.commit().expect("commit");
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;").expect("checkpoint");
    drop(conn);
    let size = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    eprintln!("built search-1m.db in {:.0} s ({} MB)", started.elapsed().as_secs_f64(), size / 1_000_000);
}

/// Gate `n`: its kind, text, payload and fate drawn from `rng`.
fn gate(rng: &mut StdRng, v: &Vocabulary, n: u64, run_id: &RunId, agent: &str, created_at: DateTime<Utc>) -> Gate {
    let tool = pick(rng, TOOLS);
    let roll = rng.gen_range(0..100);
    let (spec, text, payload) = match roll {
        0..=54 => (
            GateSpec::Approval { action: tool.into() },
            format!("Run `{tool}` on {} {}? {}", pick(rng, SERVICES), pick(rng, ENVS), v.phrase(rng, 6, 24)),
            Some(arguments(rng, v, tool)),
        ),
        55..=74 => (
            GateSpec::Question {},
            format!("Which {} should I use for the {}? {}", v.word(rng), v.word(rng), v.phrase(rng, 6, 30)),
            None,
        ),
        75..=82 => (
            GateSpec::PayloadReview {
                validation: vec![format!("{} is required", v.word(rng))],
                suggestions: vec![format!("map {} to {}", v.word(rng), v.word(rng))],
                required_fields: vec!["prompt".into(), v.word(rng).to_owned()],
            },
            format!("Review the payload for `{tool}` before it is sent. {}", v.phrase(rng, 4, 16)),
            Some(arguments(rng, v, tool)),
        ),
        83..=87 => (
            GateSpec::ResponseReview {
                raw: v.phrase(rng, 20, 60),
                audited: v.phrase(rng, 20, 60),
                indicators: vec!["tone".into()],
            },
            format!("Check the model's answer about {}.", v.phrase(rng, 2, 6)),
            None,
        ),
        88..=91 => (
            GateSpec::InformationReview {
                confidence: Some(rng.gen_range(0.2..0.99)),
                reasons: vec![v.phrase(rng, 4, 10)],
                safety_flags: vec![],
                recommended_settings: json!({ "model": "large", "temperature": 0.2 }),
            },
            format!("Proceed with what the research step found on {}?", v.phrase(rng, 2, 5)),
            None,
        ),
        92..=94 => (
            GateSpec::QualityScore {
                deliverable_id: format!("doc-{n}"),
                required_score: 3.5,
                rubric: vec!["accuracy".into(), "tone".into()],
            },
            format!("Score the draft {}.", v.phrase(rng, 3, 10)),
            None,
        ),
        95..=97 => (
            GateSpec::PlanReview { plan_revision: Some(1), round: 1 },
            format!("Approve the plan: {}", v.phrase(rng, 10, 30)),
            None,
        ),
        _ => (
            GateSpec::GoalReview { goal: json!({ "goal": v.phrase(rng, 5, 12) }), round: 1 },
            format!("Is this the goal? {}", v.phrase(rng, 5, 15)),
            None,
        ),
    };
    let kind = spec.kind();
    let id = GateId::new();
    let allowed_actions = kind.default_actions();
    let status = match (n % PENDING_EVERY, rng.gen_range(0..100)) {
        (50, _) => GateStatus::Pending,
        (_, 0..=6) => GateStatus::Expired,
        (_, 7..=10) => GateStatus::Cancelled,
        _ => GateStatus::Resolved,
    };
    let closed_at = (status != GateStatus::Pending).then(|| created_at + Duration::seconds(rng.gen_range(5..7_200)));
    let decision = match (status, closed_at) {
        (GateStatus::Resolved, Some(at)) => {
            let action = allowed_actions[rng.gen_range(0..allowed_actions.len())];
            let by_policy = kind.policy_may_auto_pass() && rng.gen_range(0..100) < 15;
            let text = match action {
                DecisionAction::Approve | DecisionAction::Edit => None,
                _ => Some(v.phrase(rng, 3, 14)),
            };
            let (action, decided_by, origin, text) = if by_policy {
                let origin = json!({ "by": "auto", "reason": "confidence above the run's threshold" });
                (DecisionAction::Approve, "policy", origin, None)
            } else {
                (action, reviewer(rng), json!({ "by": "human" }), text)
            };
            Some(json!({
                "id": DecisionId::new(), "gate_id": id, "run_id": run_id, "action": action,
                "decided_by": decided_by, "origin": origin, "text": text, "payload": null, "diff": null,
                "score": null, "decided_at": at, "latency_ms": (at - created_at).num_milliseconds(),
            }))
        }
        _ => None,
    };
    let status_reason = match status {
        GateStatus::Expired => Some("nobody answered in time".to_owned()),
        GateStatus::Cancelled => Some(format!("superseded: {}", v.phrase(rng, 2, 6))),
        _ => None,
    };
    let mode = [BlockingMode::Sync, BlockingMode::Async, BlockingMode::Advisory][(n % 3) as usize];
    let priority =
        [Priority::Low, Priority::Normal, Priority::Normal, Priority::High, Priority::Urgent][(n % 5) as usize];
    // Built as JSON, as a recording holds it: fields the gate gains later take their defaults.
    let gate = json!({
        "id": id, "run_id": run_id, "spec": spec,
        "mode": mode, "priority": priority,
        "agent": agent, "text": text,
        "context": { "task_id": format!("task-{}", n % 997), "step": format!("step {}", n % 12) },
        "payload": payload, "example_input": null, "allowed_actions": allowed_actions, "requires_human": false,
        "quorum": null, "votes": [], "status": status, "decision": decision, "status_reason": status_reason,
        "idempotency_key": null, "created_at": created_at, "expires_at": null, "closed_at": closed_at,
    });
    serde_json::from_value(gate).expect("a gate")
}

/// A tool call's arguments, shaped by the tool.
fn arguments(rng: &mut StdRng, v: &Vocabulary, tool: &str) -> Value {
    match tool {
        "send_email" | "post_slack_message" | "publish_post" => json!({
            "to": format!("{}@example.com", pick(rng, REVIEWERS)),
            "subject": v.phrase(rng, 3, 8),
            "body": v.phrase(rng, 15, 50),
        }),
        "run_sql" => json!({
            "query": format!("SELECT * FROM {} WHERE {} = {} LIMIT 100", v.word(rng), v.word(rng), rng.gen_range(1..100_000)),
            "database": pick(rng, SERVICES),
        }),
        "charge_card" | "issue_refund" | "transfer_funds" | "create_invoice" => json!({
            "customer_id": format!("cus_{:08x}", rng.gen::<u32>()),
            "amount_cents": rng.gen_range(100..500_000),
            "currency": pick(rng, &["usd", "eur", "gbp", "chf"]),
            "memo": v.phrase(rng, 2, 10),
        }),
        _ => json!({
            "service": pick(rng, SERVICES),
            "env": pick(rng, ENVS),
            "replicas": rng.gen_range(1..12),
            "ticket": format!("OPS-{}", rng.gen_range(1000..99_999)),
            "notes": v.phrase(rng, 3, 12),
        }),
    }
}

/// How the store's pages are spent: (gate rows and their indexes, the
/// search index), in bytes, from SQLite's `dbstat`.
pub fn sizes(path: &Path) -> (u64, u64) {
    let conn = rusqlite::Connection::open(path).expect("open");
    let size = |pattern: &str| -> u64 {
        conn.query_row("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?", [pattern], |r| {
            r.get::<_, i64>(0)
        })
        .expect("dbstat") as u64
    };
    (size("gates%") + size("sqlite_autoindex_gates%"), size("gate_search%"))
}

/// A search of the newest 50, changed by `change`.
pub fn page(change: impl FnOnce(&mut GateSearch)) -> GateSearch {
    let mut search = GateSearch::text("", 50);
    change(&mut search);
    search
}
