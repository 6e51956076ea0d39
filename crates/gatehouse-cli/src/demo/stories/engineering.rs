//! Engineering stories: a Stripe checkout integration driven by the
//! example analyst/coder/tester plan, a payments refactor whose plan is modified
//! in review and whose pull requests are scored, and a nightly job whose
//! blocking question expires unanswered.

use anyhow::{Context, Result};
use gatehouse_engine::plan::{Plan, PlanOperation, TaskPriority, TaskStatus};
use gatehouse_engine::run::{HandoffProtocol, Role};
use gatehouse_engine::{BlockingMode::*, DecisionInput, EngineError, NewRun, Priority};
use serde_json::{json, Map, Value};

use super::team;
use crate::demo::build::*;
use crate::demo::Sim;
use crate::out::outln;

const STRIPE_QUESTION: &str = "Which Stripe API key should I use for the staging checkout flow?

I found two candidates in the vault:

- `stripe/staging/restricted`: restricted key, **write** on `checkout_sessions` and `payment_intents` only
- `stripe/shared/test-secret`: full test-mode secret, shared with the mobile team

The restricted key is safer but lacks `webhook_endpoints:write`, which I need to register the endpoint. \
Use the shared secret, or should I request a new restricted key with that scope?";

/// The example `plan.json`, as the agent first proposes it: nothing started yet.
fn seed_plan() -> Result<Plan> {
    let plan = json!({
        "tasks": [
            {"task_id": "task_001", "description": "Analyze the project requirements and create a file structure.",
             "assigned_agent": "analyst", "priority": "high", "estimated_duration": "15m"},
            {"task_id": "task_002", "description": "Write the main application logic in app.py.",
             "assigned_agent": "coder", "priority": "high", "dependencies": ["task_001"], "estimated_duration": "30m"},
            {"task_id": "task_003", "description": "Create unit tests for app.py.",
             "assigned_agent": "tester", "priority": "medium", "dependencies": ["task_002"], "estimated_duration": "20m"}
        ],
        "execution_mode": "autonomous",
        "human_intervention_points": ["before_deployment", "on_error"],
        "success_criteria": ["all_tests_pass", "code_coverage_80_percent"]
    });
    serde_json::from_value(plan).context("demo: the seed plan does not parse")
}

/// Task metadata from a JSON object literal.
fn meta(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn update(task: &str, status: TaskStatus, metadata: Value) -> PlanOperation {
    PlanOperation::UpdateTask { task_id: task.into(), status: Some(status), metadata: meta(metadata) }
}

/// A backend agent integrates Stripe Checkout; it is left blocked on a question.
pub fn checkout(sim: &mut Sim) -> Result<()> {
    let agent = "BackendWorker-7f3a";
    let run = sim.start(NewRun {
        title: "Checkout flow: Stripe integration for the staging store".into(),
        agent: agent.into(),
        user_id: Some("dana".into()),
        session_id: Some("checkout-revamp".into()),
        participants: team(&[
            ("analyst", Role::Agent),
            ("coder", Role::Agent),
            ("tester", Role::Agent),
            ("alice", Role::Human),
            ("bob", Role::Human),
        ]),
        hitl_config: human_policy(),
        protocol: HandoffProtocol { max_consecutive_agent_turns: Some(4), auto_approve_threshold: None },
        input: json!({"repo": "acme/storefront", "branch": "feature/stripe-checkout", "ticket": "SHOP-1182"}),
        ..NewRun::default()
    })?;
    sim.say(
        &run,
        Role::Human,
        "dana",
        "Wire Stripe Checkout into the staging store: cards and SEPA, EUR and USD. \
        Tests must pass before anything touches staging.",
    )?;
    sim.say(
        &run,
        Role::Agent,
        agent,
        "On it. I'll split this into analysis, implementation and tests, \
        and ask before deploying.",
    )?;

    sim.plan(&run, PlanOperation::Replace { plan: seed_plan()? }, agent)?;
    let done = json!({"completed_at": "2025-10-27T10:00:00Z", "artifacts_created": ["project_structure.md"]});
    sim.plan(&run, update("task_001", TaskStatus::Completed, done), "analyst")?;
    let started = json!({"started_at": "2025-10-27T10:05:00Z", "progress_percentage": 60});
    sim.plan(&run, update("task_002", TaskStatus::InProgress, started), "coder")?;
    let deploy = "Deploy the checkout service to staging.";
    sim.plan(&run, add_task("task_004", deploy, agent, TaskPriority::High, &["task_002", "task_003"], "10m"), agent)?;
    let estimate = PlanOperation::EstimateDuration { task_id: "task_003".into(), duration: "25m".into() };
    sim.plan(&run, estimate, "tester")?;

    sim.set(&run, "stripe.mode", json!("test"), agent)?;
    sim.set(&run, "checkout.currencies", json!(["EUR", "USD"]), "analyst")?;
    sim.set(&run, "checkout.payment_methods", json!(["card", "sepa_debit"]), "analyst")?;
    sim.set(&run, "draft.webhook_notes", json!("register after the key question is settled"), "coder")?;
    sim.unset(&run, "draft.webhook_notes", "coder")?;

    let coding = "Write the main application logic in app.py.";
    let ask =
        question(STRIPE_QUESTION).mode(Sync).priority(Priority::Urgent).task("task_002", coding).key("stripe-key");
    let first = sim.open(&run, ask.clone())?;
    // The agent's HTTP call timed out and it retried: same key, same gate, no duplicate for the reviewer.
    let retried = sim.open(&run, ask)?;
    anyhow::ensure!(first.id == retried.id, "demo: an idempotent retry opened a second gate");

    let webhook = json!({
        "url": "https://staging.acme-shop.test/api/stripe/webhook",
        "enabled_events": ["checkout.session.completed", "charge.succeeded", "payment_intent.succeeded"],
        "api_version": "2024-06-20",
        "description": "staging checkout"
    });
    let review = payload_review(
        "Review the webhook endpoint I am about to register with Stripe",
        webhook.clone(),
        &["url is reachable (200 in 84 ms)", "charge.succeeded is a legacy event for Checkout"],
        &["subscribe to payment_intent.payment_failed to surface declined cards"],
        &["url", "enabled_events"],
    )
    .mode(Async)
    .task("task_002", coding);
    let review = sim.open(&run, review)?;
    let mut edited = webhook;
    edited["enabled_events"] =
        json!(["checkout.session.completed", "payment_intent.succeeded", "payment_intent.payment_failed"]);
    sim.decide(&review, DecisionInput::edit(edited), "alice")?;

    let migration = approval(
        "db_migrate",
        "Run migration `0042_add_payment_intents` on the **staging** database",
        json!({"database": "storefront_staging", "migration": "0042_add_payment_intents", "online": true,
               "estimated_lock_ms": 120}),
    )
    .mode(Async)
    .priority(Priority::High);
    let migration = sim.open(&run, migration)?;
    sim.decide(&migration, DecisionInput::approve(), "bob")?;
    sim.say(
        &run,
        Role::Agent,
        agent,
        "Webhook registered with alice's event list; migration 0042 applied on \
        staging. Waiting on the key question before I continue with app.py.",
    )?;
    sim.report(&run)
}

/// A code-review agent's refactor: plan modified then approved, scored PRs, a merge vote.
pub fn payments_refactor(sim: &mut Sim) -> Result<()> {
    let agent = "code-reviewer";
    let run = sim.start(NewRun {
        title: "Payments service: idempotency keys for every payment-intent write".into(),
        agent: agent.into(),
        user_id: Some("dana".into()),
        session_id: Some("checkout-revamp".into()),
        participants: team(&[("coder", Role::Agent), ("tester", Role::Agent), ("alice", Role::Human)]),
        hitl_config: human_policy(),
        protocol: HandoffProtocol { max_consecutive_agent_turns: Some(3), auto_approve_threshold: Some(4.0) },
        input: json!({"repo": "acme/payments-svc", "incident": "INC-2291 duplicate captures"}),
        ..NewRun::default()
    })?;
    sim.say(
        &run,
        Role::Human,
        "dana",
        "INC-2291 again: a client retry captured a payment twice. \
        Make every payment-intent write idempotent.",
    )?;
    let plan: Plan = serde_json::from_value(json!({
        "tasks": [
            {"task_id": "task_001", "description": "Map every payment-intent write path in payments-svc.",
             "assigned_agent": "code-reviewer", "priority": "high", "estimated_duration": "20m"},
            {"task_id": "task_002", "description": "Add idempotency keys to the create, confirm and capture handlers.",
             "assigned_agent": "coder", "priority": "critical", "dependencies": ["task_001"], "estimated_duration": "45m"},
            {"task_id": "task_003", "description": "Backfill keys for in-flight intents with a one-off migration.",
             "assigned_agent": "coder", "priority": "high", "dependencies": ["task_002"], "estimated_duration": "30m"},
            {"task_id": "task_004", "description": "Roll out behind the payments.idempotency flag.",
             "assigned_agent": "BackendWorker-7f3a", "priority": "high", "dependencies": ["task_003"],
             "estimated_duration": "15m"}
        ],
        "execution_mode": "supervised",
        "human_intervention_points": ["before_rollout"],
        "success_criteria": ["no duplicate charges in replayed traffic", "p99 latency within 5% of baseline"]
    }))
    .context("demo: the refactor plan does not parse")?;
    let proposed = sim.plan(&run, PlanOperation::Replace { plan }, agent)?;
    let round1 = plan_review(
        "Review my plan for the payments idempotency refactor",
        proposed.revision,
        1,
        serde_json::to_value(&proposed.plan)?,
    )
    .priority(Priority::High);
    let round1 = sim.open(&run, round1)?;
    let feedback = "Modify: split the backfill into expand and contract steps, and load-test at 2x peak before \
        the rollout. Keep the flag off by default.";
    sim.decide(&round1, needs_revision(feedback), "alice")?;

    let load_test = "Load-test the idempotent handlers at 2x Black Friday peak.";
    sim.plan(&run, add_task("task_005", load_test, "tester", TaskPriority::High, &["task_003"], "40m"), agent)?;
    let deps = PlanOperation::SetDependencies {
        task_id: "task_004".into(),
        dependencies: vec!["task_003".into(), "task_005".into()],
    };
    sim.plan(&run, deps, agent)?;
    let contract = "Contract step: drop the legacy dedupe table after 7 clean days.";
    sim.plan(&run, add_task("task_006", contract, "coder", TaskPriority::Medium, &["task_004"], "15m"), agent)?;
    let reassign = PlanOperation::AssignTask { task_id: "task_003".into(), agent_name: "BackendWorker-7f3a".into() };
    let revised = sim.plan(&run, reassign, agent)?;
    let round2 = plan_review(
        "Revised plan: load test added, backfill split into expand and contract",
        revised.revision,
        2,
        serde_json::to_value(&revised.plan)?,
    )
    .priority(Priority::High);
    let round2 = sim.open(&run, round2)?;
    sim.decide(&round2, DecisionInput::approve(), "alice")?;
    sim.plan(&run, update("task_001", TaskStatus::InProgress, json!({"started_by": agent})), agent)?;

    let rubric = ["correctness", "test_coverage", "readability"];
    let pr = quality("Score PR #4821: idempotency keys for the payment-intent handlers", "pr-4821", 3.5, &rubric)
        .mode(Async)
        .priority(Priority::High);
    let pr = sim.open(&run, pr)?;
    let scores = [("correctness", 4.5), ("test_coverage", 3.8), ("readability", 4.3)];
    sim.score(
        &pr,
        "bob",
        Role::Human,
        4.2,
        &scores,
        "Keys derive from the client request id and the replay \
        test catches double captures. Capture-path coverage is thin.",
    )?;

    let retry = quality("Self-review: retry middleware for the Stripe client", "pr-4822", 3.5, &rubric).mode(Async);
    let retry = sim.open(&run, retry)?;
    let scores = [("correctness", 4.8), ("test_coverage", 4.5), ("readability", 4.5)];
    sim.score(&retry, agent, Role::Agent, 4.6, &scores, "Exponential backoff with jitter; 100% branch coverage.")?;

    let export = quality("Self-review: nightly ledger export job", "pr-4825", 3.5, &rubric).mode(Async);
    let export = sim.open(&run, export)?;
    let scores = [("correctness", 3.5), ("test_coverage", 2.6), ("readability", 3.5)];
    sim.score(&export, agent, Role::Agent, 3.2, &scores, "Works, but the CSV edge cases are untested.")?;

    let docs_rubric = ["accuracy", "completeness", "examples"];
    let docs = quality("Score the API reference for `/v2/payment_intents`", "docs-v2-intents", 3.5, &docs_rubric)
        .mode(Advisory)
        .priority(Priority::Low);
    let docs = sim.open(&run, docs)?;
    let scores = [("accuracy", 3.4), ("completeness", 2.2), ("examples", 2.2)];
    sim.score(
        &docs,
        "carol",
        Role::Human,
        2.6,
        &scores,
        "Accurate, but the Idempotency-Key header is not \
        documented and no example shows a retried request.",
    )?;

    let description = response_review(
        "Review the PR description I generated for #4821 before it is posted",
        "Fixes INC-2291. Tested against prod replica db-payments-03.internal.acme with Jana's customer account.",
        "Fixes INC-2291. Tested against a production replica with a synthetic customer account.",
        &["removed internal hostname", "removed personal data", "tone: neutral"],
    )
    .mode(Async)
    .payload(json!({"title": "Add idempotency keys", "labels": ["payments"]}));
    let description = sim.open(&run, description)?;
    let edited = json!({"title": "payments: idempotency keys for create/confirm/capture (INC-2291)",
                        "labels": ["payments", "incident"]});
    sim.decide(&description, DecisionInput::edit(edited), "carol")?;

    let merge = approval(
        "merge_pr",
        "Merge PR #4821 into `main`",
        json!({"pr": 4821, "base": "main",
        "merge_method": "squash", "checks": "passing"}),
    )
    .mode(Async)
    .priority(Priority::High)
    .quorum(2);
    let merge = sim.open(&run, merge)?;
    sim.decide(&merge, DecisionInput::approve(), "alice")?;

    sim.say_scored(&run, Role::Agent, agent, "PR #4821 is up with the replay test.", Some(4.0))?;
    sim.say(&run, Role::Agent, agent, "Started mapping write paths: 7 handlers, 2 background jobs.")?;
    sim.say(&run, Role::Agent, agent, "Found a third write path in the refund worker.")?;
    // The handoff protocol allows three agent turns in a row; the fourth must wait for a person.
    match sim.engine.add_turn(&run.id, gatehouse_engine::NewTurn::new(Role::Agent, "Continuing..."), agent) {
        Err(e @ EngineError::HandoffRequired { .. }) => outln!("    handoff: {e}"),
        other => anyhow::bail!("demo: expected the handoff protocol to stop a fourth agent turn, got {other:?}"),
    }
    sim.say(&run, Role::Human, "dana", "Good catch on the refund worker; include it in task_002.")?;
    sim.report(&run)
}

/// A nightly reconciliation whose blocking question nobody answers in time.
pub fn nightly_ledger(sim: &mut Sim) -> Result<()> {
    let agent = "BackendWorker-7f3a";
    let run = sim.start(NewRun {
        title: "Nightly ledger reconciliation".into(),
        agent: agent.into(),
        user_id: Some("ops-oncall".into()),
        session_id: Some("ops-nightly".into()),
        hitl_config: auto_policy(),
        input: json!({"date": "yesterday", "merchants": 412}),
        ..NewRun::default()
    })?;
    let high = TaskPriority::High;
    sim.plan(&run, add_task("task_001", "Pull yesterday's Stripe payouts.", agent, high, &[], "5m"), agent)?;
    let matching = "Match payouts to ledger entries.";
    sim.plan(&run, add_task("task_002", matching, agent, high, &["task_001"], "10m"), agent)?;
    let report = "Post the reconciliation report to #finance-ops.";
    sim.plan(&run, add_task("task_003", report, agent, TaskPriority::Medium, &["task_002"], "2m"), agent)?;
    sim.plan(&run, update("task_001", TaskStatus::Completed, json!({"payouts": 412})), agent)?;
    sim.plan(&run, update("task_002", TaskStatus::InProgress, json!({})), agent)?;

    // The run policy is `auto`: routine approvals pass without anyone looking.
    let archive = approval("archive_rows", "Archive 1,204 reconciled ledger rows from 2025-Q3",
        json!({"table": "ledger_entries", "rows": 1204, "quarter": "2025-Q3", "destination": "s3://acme-archive/ledger/"}))
    .mode(Async);
    sim.open(&run, archive)?;

    // Questions always wait for a person; this one gives up after a second (the demo's stand-in for 15 minutes).
    let mismatch = question(
        "Ledger mismatch for merchant `m_8812`: payouts total **€4,812.40** but the ledger \
        says **€4,800.00**.\n\nWrite off the €12.40 difference, or escalate to finance and hold the report?",
    )
    .mode(Sync)
    .priority(Priority::Urgent)
    .task("task_002", matching)
    .expires_in(1);
    sim.open(&run, mismatch)?;
    sim.report(&run)
}
