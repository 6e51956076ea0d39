//! Operations and research stories: a production release under a
//! thresholds policy with a two-reviewer quorum and a reviewer who loses
//! the race, and a research run whose goal takes three rounds to settle.

use anyhow::Result;
use gatehouse_engine::run::Role;
use gatehouse_engine::{BlockingMode::*, DecisionInput, NewRun, Priority};
use serde_json::{json, Value};

use super::team;
use crate::demo::build::*;
use crate::demo::Sim;

fn deploy_config(version: &str, environment: &str, regions: &[&str], replicas: u32) -> Value {
    json!({
        "service": "api-gateway",
        "version": version,
        "environment": environment,
        "regions": regions,
        "replicas": replicas,
        "strategy": "rolling",
        "max_unavailable": 1,
        "health_check": "/healthz",
        "rollback_on_error_rate": 0.02
    })
}

/// The deployer ships a release: small changes pass on policy, production needs two people.
pub fn release(sim: &mut Sim) -> Result<()> {
    let agent = "deployer";
    let run = sim.start(NewRun {
        title: "Release api-gateway 2.14.0".into(),
        agent: agent.into(),
        user_id: Some("priya".into()),
        session_id: Some("release-2.14".into()),
        participants: team(&[("alice", Role::Human), ("bob", Role::Human), ("carol", Role::Human)]),
        // Up to two changed fields against the known-good config pass without a person.
        hitl_config: threshold_policy(None, &[], Some(2)),
        input: json!({"service": "api-gateway", "from": "2.13.2", "to": "2.14.0", "changelog": "CHANGELOG.md#2140"}),
        ..NewRun::default()
    })?;
    sim.say(&run, Role::Human, "priya", "Ship 2.14.0: staging first, production after the canary.")?;

    let staging = approval(
        "deploy",
        "Deploy api-gateway 2.14.0 to **staging**",
        deploy_config("2.14.0", "staging", &["eu-west-1"], 3),
    )
    .example(deploy_config("2.13.2", "staging", &["eu-west-1"], 3))
    .mode(Sync);
    sim.open(&run, staging)?;

    let migration = payload_review(
        "Review the `orders` migration settings before I run it",
        json!({"database": "orders", "migration": "0043_split_line_items", "lock_timeout_ms": 3000,
               "statement_timeout_ms": 60000, "online": true, "batch_size": 5000}),
        &["online migration: no table rewrite", "batch_size lowered from the default 10000"],
        &[],
        &["database", "migration"],
    )
    .example(json!({"database": "orders", "migration": "0042_add_payment_intents", "lock_timeout_ms": 5000,
                    "statement_timeout_ms": 30000, "online": true, "batch_size": 10000}))
    .mode(Sync);
    let migration = sim.open(&run, migration)?;
    sim.decide(&migration, DecisionInput::approve(), "bob")?;

    let production = approval(
        "deploy",
        "Deploy api-gateway 2.14.0 to **production** (eu-west-1, us-east-1)\n\nCanary at 10% for 30 minutes, \
         then full rollout. Error rate on staging: 0.04% over 2 hours.",
        json!({"service": "api-gateway", "version": "2.14.0", "environment": "production",
               "regions": ["eu-west-1", "us-east-1"], "replicas": 12, "strategy": "canary",
               "canary_percent": 10, "canary_minutes": 30, "rollback_on_error_rate": 0.01}),
    )
    .mode(Sync)
    .priority(Priority::High)
    .human_only()
    .quorum(2);
    let production = sim.open(&run, production)?;
    sim.decide(&production, DecisionInput::approve(), "alice")?;
    let approved = DecisionInput { text: Some("Canary dashboards are green.".into()), ..DecisionInput::approve() };
    sim.decide(&production, approved, "bob")?;
    // carol opened the same gate a moment earlier and clicks approve after bob: first decision wins.
    sim.decide_late(&production, DecisionInput::approve(), "carol")?;

    let scale = approval(
        "scale",
        "Scale `checkout-worker` from 6 to 14 replicas ahead of the spring sale",
        json!({"deployment": "checkout-worker", "replicas": 14, "cpu": "1000m", "memory": "2Gi", "hpa_max": 20}),
    )
    .example(json!({"deployment": "checkout-worker", "replicas": 6, "cpu": "500m", "memory": "1Gi", "hpa_max": 10}))
    .mode(Async);
    let scale = sim.open(&run, scale)?;
    let reason = "Capacity review first: the spring-sale forecast lands Thursday. Resubmit with it attached.";
    sim.decide(&scale, DecisionInput::reject(reason), "carol")?;

    let notes = question("Post the 2.14.0 release notes to #eng-announce now, or after the canary finishes?")
        .mode(Advisory)
        .priority(Priority::Low);
    let notes = sim.open(&run, notes)?;
    let answer = "After the canary: post once the 10% canary has run clean for 30 minutes.";
    sim.decide(&notes, DecisionInput::respond(answer), "alice")?;

    sim.say(&run, Role::Agent, agent, "Canary clean for 30 minutes (error rate 0.004%); full rollout done.")?;
    let result = json!({"released": "2.14.0", "regions": ["eu-west-1", "us-east-1"], "canary_error_rate": 0.00004});
    sim.engine.complete_run(&run.id, agent, Some(result))?;
    sim.report(&run)
}

fn research_goal(scope: &str, extra: Value) -> Value {
    let mut goal = json!({
        "objective": "Size the market for e-bike subscriptions",
        "scope": scope,
        "deliverables": ["market size 2025-2028", "top competitors", "pricing benchmark"],
        "deadline": "two weeks"
    });
    if let (Some(goal), Value::Object(extra)) = (goal.as_object_mut(), extra) {
        goal.extend(extra);
    }
    goal
}

/// A research assistant refines its goal three times, then gathers sources.
pub fn research(sim: &mut Sim) -> Result<()> {
    let agent = "research-assistant";
    let run = sim.start(NewRun {
        title: "Market research: e-bike subscriptions".into(),
        agent: agent.into(),
        user_id: Some("marco".into()),
        session_id: Some("strategy-q3".into()),
        participants: team(&[("alice", Role::Human), ("bob", Role::Human)]),
        // Findings pass on their own only when confident and free of personal or copyrighted data.
        hitl_config: threshold_policy(Some(0.8), &["pii", "copyright"], None),
        input: json!({"brief": "Is an e-bike subscription worth launching next year?"}),
        ..NewRun::default()
    })?;
    sim.say(&run, Role::Human, "marco", "Is an e-bike subscription worth launching next year? I need numbers.")?;

    let round1 = goal_review("Is this the right goal?", research_goal("EU-27", json!({})), 1).mode(Sync);
    let round1 = sim.open(&run, round1)?;
    let narrow = "Too broad for two weeks. Narrow it to the DACH region; we already have France and Benelux data.";
    sim.decide(&round1, needs_revision(narrow), "alice")?;
    sim.set(&run, "research.scope", json!("DACH"), agent)?;

    let dach = research_goal("Germany, Austria, Switzerland", json!({}));
    let round2 = goal_review("Revised goal: scope narrowed to DACH", dach, 2).mode(Sync);
    let round2 = sim.open(&run, round2)?;
    let budget = "Better. Add a ceiling of 40 research hours and benchmark the three competitors sales asked \
        about: Swapfiets, Dance and Buzzbike.";
    sim.decide(&round2, needs_revision(budget), "bob")?;

    let competitors = json!(["Swapfiets", "Dance", "Buzzbike"]);
    let bounded =
        research_goal("Germany, Austria, Switzerland", json!({"budget_hours": 40, "competitors": competitors}));
    let round3 = goal_review("Revised goal: 40-hour budget and named competitors", bounded, 3).mode(Sync);
    let round3 = sim.open(&run, round3)?;
    sim.decide(&round3, DecisionInput::approve(), "alice")?;
    sim.set(&run, "research.competitors", competitors, agent)?;
    sim.set(&run, "research.budget_hours", json!(40), "bob")?;

    let sources = information_review(
        "Sources gathered for market sizing",
        0.91,
        &["37 sources, 29 of them primary", "Statista and Eurostat figures agree within 4%"],
        &[],
        json!({"max_sources": 50}),
    )
    .mode(Async);
    sim.open(&run, sources)?;

    let forum = information_review(
        "A forum scrape about churn reasons contains personal data",
        0.86,
        &["312 posts explain why riders cancelled", "usernames and 14 e-mail addresses appear in quotes"],
        &["pii"],
        json!({"drop_fields": ["username", "email"], "keep": ["post_text", "date", "country"]}),
    )
    .mode(Async)
    .priority(Priority::High);
    sim.open(&run, forum)?;

    // alice holds the run while legal looks at the scrape, then lets it continue.
    sim.engine.pause_run(&run.id, "alice")?;
    sim.engine.resume_run(&run.id, "alice")?;

    let currency = question(
        "Should Swiss prices stay in **CHF**, or be converted to EUR at the quarterly average \
        rate?",
    )
    .mode(Advisory)
    .priority(Priority::Low);
    sim.open(&run, currency)?;

    let summary = response_review(
        "Review the executive summary before it goes to sales",
        "DACH e-bike subscriptions: ~410k subscribers by 2028 (CAGR 31%). Per an internal Slack thread in \
         #sales-dach, Dance is cutting prices; Müller GmbH told us they would switch.",
        "DACH e-bike subscriptions: ~410k subscribers by 2028 (CAGR 31%). Public filings suggest Dance is \
         cutting prices; several fleet customers signal interest in switching.",
        &["removed internal source", "removed customer name", "readability: grade 9"],
    )
    .mode(Async);
    let summary = sim.open(&run, summary)?;
    sim.decide(&summary, DecisionInput::approve(), "bob")?;
    sim.say_scored(
        &run,
        Role::Agent,
        agent,
        "Draft market model attached: three scenarios, sources linked.",
        Some(3.8),
    )?;
    sim.report(&run)
}
