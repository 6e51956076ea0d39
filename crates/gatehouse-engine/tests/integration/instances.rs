//! Several engines on the same data, as a team's server instances on one
//! PostgreSQL database (or the CLI beside a server on one SQLite file):
//! sweeps apply each expiry once, the first resolver wins whichever
//! instance it came through, the hash chain stays one chain, and every
//! instance's subscribers see what the others commit.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::Duration as Span;
use common::Fixture;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{BlockingMode, DecisionInput, EngineError, EventKind, GateStatus, NewGate, TimeoutFallback};

#[test]
fn sweeps_on_several_instances_apply_each_timeout_once() {
    let f = Fixture::new();
    let (a, b) = (f.engine.clone(), f.open_again());
    let run = f.run("agent");
    let mut opened = BTreeSet::new();
    for i in 0..60 {
        let mut new = NewGate::question(format!("Still needed? #{i}"));
        // Async: an expiring sync gate would fail the run and withdraw the others.
        new.mode = BlockingMode::Async;
        new.expires_in_secs = Some(60);
        new.on_timeout = if i % 2 == 0 { TimeoutFallback::Reject } else { TimeoutFallback::Expire };
        opened.insert(a.open_gate(&run.id, new, "agent").unwrap().id.to_string());
    }
    f.clock.advance(Span::minutes(2));

    let sweeps: Vec<_> = [a.clone(), b.clone(), a.clone(), b.clone()]
        .into_iter()
        .map(|engine| std::thread::spawn(move || engine.sweep_expired().unwrap()))
        .collect();
    let mut swept = Vec::new();
    for sweep in sweeps {
        swept.extend(sweep.join().unwrap().into_iter().map(|id| id.to_string()));
    }
    assert_eq!(swept.len(), opened.len(), "every gate swept exactly once across the instances");
    assert_eq!(swept.iter().cloned().collect::<BTreeSet<_>>(), opened);

    let log = b.events_after(0, &EventFilter::default(), 10_000).unwrap();
    let timeouts = log
        .iter()
        .filter(|e| matches!(e.body.kind, EventKind::GateExpired { .. } | EventKind::GateResolved { .. }))
        .count();
    assert_eq!(timeouts, 60, "one expiry or fallback decision per gate in the log");
    for id in &opened {
        let gate = a.gate(&gatehouse_engine::GateId::from_string(id.clone())).unwrap();
        assert_ne!(gate.status, GateStatus::Pending, "{id} was left pending");
    }
    assert!(a.verify_audit().unwrap().is_intact());
}

#[test]
fn the_first_resolver_wins_whichever_instance_it_came_through() {
    let f = Fixture::new();
    let (a, b) = (f.engine.clone(), f.open_again());
    let run = f.run("agent");
    for round in 0..10 {
        let gate = a.open_gate(&run.id, NewGate::question(format!("Round {round}?")), "agent").unwrap();
        let racers: Vec<_> = [(a.clone(), "alice"), (b.clone(), "bob")]
            .into_iter()
            .map(|(engine, who)| {
                let id = gate.id.clone();
                std::thread::spawn(move || engine.resolve_gate(&id, DecisionInput::respond(who), who))
            })
            .collect();
        let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let loser = results.iter().find_map(|r| r.as_ref().err()).expect("one refused");
        assert!(matches!(loser, EngineError::GateClosed { .. }), "round {round}: {loser:?}");
        let stored = b.gate(&gate.id).unwrap().decision.expect("decided");
        assert_eq!(Some(stored.decided_by.as_str()), winners[0].decision.as_ref().map(|d| d.decided_by.as_str()));
    }
}

#[test]
fn the_chain_stays_one_chain_when_instances_write_at_once() {
    let f = Fixture::new();
    let engines = [f.engine.clone(), f.open_again(), f.open_again()];
    let run = f.run("agent");
    let writers: Vec<_> = engines
        .iter()
        .enumerate()
        .map(|(i, engine)| {
            let (engine, run) = (engine.clone(), run.id.clone());
            std::thread::spawn(move || {
                for n in 0..40 {
                    let gate = engine.open_gate(&run, NewGate::question(format!("{i}/{n}")), "agent").unwrap();
                    engine.resolve_gate(&gate.id, DecisionInput::respond("ok"), "alice").unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let log = engines[1].events_after(0, &EventFilter::default(), 100_000).unwrap();
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "gap-free and in order");
    // run created + 120 × (opened, resolved), plus the run's status moves.
    assert!(seqs.len() > 240, "{}", seqs.len());
    for engine in &engines {
        let report = engine.verify_audit().unwrap();
        assert!(report.is_intact(), "{:?}", report.problems);
    }
}

#[test]
fn subscribers_of_one_instance_see_what_another_commits() {
    let f = Fixture::new();
    let (a, b) = (f.engine.clone(), f.open_again());
    let run = f.run("agent");
    let mut watching = a.subscribe(a.head_seq().unwrap(), EventFilter::default());
    let gate = b.open_gate(&run.id, NewGate::question("Seen over there?"), "agent").unwrap();
    b.resolve_gate(&gate.id, DecisionInput::respond("yes"), "bob").unwrap();
    if !f.is_postgres() {
        // SQLite has no notifications: the server picks up other processes'
        // commits every half second, as this does.
        a.pick_up_external_events().unwrap();
    }
    let mut kinds = Vec::new();
    while kinds.len() < 2 {
        let event =
            watching.next_timeout(Duration::from_secs(10)).unwrap().expect("the other instance's events arrive");
        if event.body.run_id.as_ref() == Some(&run.id) && event.body.kind.name().starts_with("gate_") {
            kinds.push(event.body.kind.name().to_owned());
        }
    }
    assert_eq!(kinds, ["gate_opened", "gate_resolved"]);
}

#[test]
fn an_agents_rating_counts_every_decision_made_at_once_through_several_instances() {
    // Decisions on different runs of one agent, through two instances at
    // once: none waits for another at the agent's rating, and none is lost
    // (its name quoted as a client may send it).
    const AGENT: &str = r"rated o'brien \ x";
    let f = Fixture::new();
    let engines = [f.engine.clone(), f.open_again()];
    let runs: Vec<_> = (0..6).map(|_| f.run(AGENT)).collect();
    let deciders: Vec<_> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let (engine, run) = (engines[i % 2].clone(), run.id.clone());
            std::thread::spawn(move || {
                for n in 0..10 {
                    let new = NewGate::approval("deploy", format!("{i}/{n}"), serde_json::json!({"n": n}));
                    let gate = engine.open_gate(&run, new, AGENT).unwrap();
                    let input = if n % 2 == 0 { DecisionInput::approve() } else { DecisionInput::reject("no") };
                    engine.resolve_gate(&gate.id, input, "alice").unwrap();
                }
            })
        })
        .collect();
    for d in deciders {
        d.join().unwrap();
    }
    for engine in &engines {
        let rating = engine.rating(AGENT).unwrap();
        assert_eq!((rating.decisions, rating.approvals), (60, 30), "{rating:?}");
        assert!(engine.verify_audit().unwrap().is_intact());
    }
}
