//! Writes on different runs through different instances do not wait for
//! each other on PostgreSQL: nothing but the append to the log, at the end
//! of each write group, is serialised across instances, and writes on one
//! run take turns on its row. A deadlock between two instances' groups is
//! broken by the database and answered as "try again". On PostgreSQL only
//! (`GATEHOUSE_TEST_BACKEND=postgres`): SQLite has one writer per file.

use crate::common;

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use common::Fixture;
use gatehouse_engine::store::{EventFilter, WriteTx};
use gatehouse_engine::{Engine, EngineError, EventBody, EventKind, NewGate, RunId, Store};
use serde_json::json;

/// Long enough for any write on a loaded machine; reaching it means a
/// write waited for another it should not have.
const PATIENCE: Duration = Duration::from_secs(60);

/// Sets `key` on `run` and logs it, inside a write.
fn set_logged(tx: &mut dyn WriteTx, run: &RunId, key: &str, actor: &str) -> Result<(), EngineError> {
    tx.put_context(run, key, Some(&json!(actor)))?;
    tx.append_event(EventBody {
        at: chrono::Utc::now(),
        run_id: Some(run.clone()),
        session_id: None,
        user_id: None,
        actor: actor.to_owned(),
        kind: EventKind::ContextSet { key: key.to_owned(), old: None, new: json!(actor) },
    })
}

/// Starts a write through `engine` that takes `run`'s row, sets and logs
/// the context key `first` as `holder`, and stays open until the returned
/// sender is used; returns once its writes are in the database.
fn hold_open(engine: Engine, run: RunId) -> (JoinHandle<Result<(), EngineError>>, mpsc::Sender<()>) {
    let (entered_tx, entered) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        engine.store().write(move |tx| {
            tx.run(&run)?.expect("the held run");
            set_logged(tx, &run, "first", "holder")?;
            // Waits for its writes, so they are in the database while it is held.
            assert_eq!(tx.context_value(&run, "first")?, Some(json!("holder")));
            entered_tx.send(()).unwrap();
            released.recv_timeout(PATIENCE).expect("released");
            Ok(())
        })
    });
    entered.recv_timeout(PATIENCE).expect("the held write began");
    (holder, release)
}

#[test]
fn a_write_on_another_run_through_another_instance_commits_while_one_is_held_open() {
    let f = Fixture::new();
    if !f.is_postgres() {
        return;
    }
    let (a, b) = (f.engine.clone(), f.open_again());
    let (held, other) = (f.run("held"), f.run("other"));

    // Instance A's write takes its run's row, writes, and stays open.
    let (holder, release) = hold_open(a, held.id.clone());

    // Instance B opens and decides a gate on another run, and writes that
    // run's context, while A's transaction is open.
    let (done_tx, done) = mpsc::channel();
    let (b2, other_id) = (b.clone(), other.id.clone());
    std::thread::spawn(move || {
        let result = (|| {
            let gate = b2.open_gate(&other_id, NewGate::question("Meanwhile?"), "other")?;
            b2.resolve_gate(&gate.id, gatehouse_engine::DecisionInput::respond("yes"), "alice")?;
            b2.store().write({
                let other_id = other_id.clone();
                move |tx| set_logged(tx, &other_id, "meanwhile", "other")
            })
        })();
        let _ = done_tx.send(result);
    });
    let meanwhile = done.recv_timeout(PATIENCE);
    release.send(()).unwrap();
    let held_result = holder.join().expect("the holder");
    meanwhile
        .expect("instance B's writes on another run waited for instance A's open write: writes are serialised")
        .expect("instance B's writes");
    held_result.expect("instance A's write");

    // B's events were logged first though A's write began first: each group
    // takes its place in the log as it ends.
    let log = b.events_after(0, &EventFilter::default(), 1000).unwrap();
    let seq_of = |actor: &str| log.iter().find(|e| e.body.actor == actor).map(|e| e.seq).expect(actor);
    assert!(seq_of("other") < seq_of("holder"), "B's last write is logged before A's");
    let seqs: Vec<u64> = log.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "gap-free and in order");
    for engine in [&f.engine, &b] {
        let report = engine.verify_audit().unwrap();
        assert!(report.is_intact(), "{:?}", report.problems);
    }
}

#[test]
fn a_write_on_a_run_another_instance_holds_sees_that_write_once_it_commits() {
    let f = Fixture::new();
    if !f.is_postgres() {
        return;
    }
    let (a, b) = (f.engine.clone(), f.open_again());
    let run = f.run("shared");

    let (holder, release) = hold_open(a, run.id.clone());

    // B's write on the same run reads it after A's write is let go: it
    // waits for A's commit at the run's row and then sees what A wrote.
    let id = run.id.clone();
    let follower = std::thread::spawn(move || {
        b.store().write(move |tx| {
            tx.run(&id)?.expect("the run");
            let seen = tx.context_value(&id, "first")?;
            set_logged(tx, &id, "second", "follower")?;
            Ok(seen)
        })
    });
    release.send(()).unwrap();
    holder.join().expect("the holder").expect("instance A's write");
    let seen = follower.join().expect("the follower").expect("instance B's write");
    assert_eq!(seen, Some(json!("holder")), "B's write on the run saw A's committed write");
    let log = f.engine.events_after(0, &EventFilter::default(), 100).unwrap();
    let actors: Vec<&str> = log.iter().map(|e| e.body.actor.as_str()).filter(|a| a.ends_with("er")).collect();
    assert_eq!(actors, ["holder", "follower"]);
    assert!(f.engine.verify_audit().unwrap().is_intact());
}

#[test]
fn a_deadlock_between_two_instances_fails_one_write_as_unavailable_and_commits_the_other() {
    let f = Fixture::new();
    if !f.is_postgres() {
        return;
    }
    let (a, b) = (f.engine.clone(), f.open_again());
    let (one, two) = (f.run("one"), f.run("two"));
    // Each write takes one run, waits until the other has taken the other
    // run, then asks for it: each waits for the other, and PostgreSQL fails
    // one of them.
    let (a_holds, a_held) = mpsc::channel();
    let (b_holds, b_held) = mpsc::channel();
    let crossing = |engine: Engine,
                    mine: RunId,
                    theirs: RunId,
                    holds: mpsc::Sender<()>,
                    held: mpsc::Receiver<()>,
                    actor: &'static str| {
        std::thread::spawn(move || {
            engine.store().write(move |tx| {
                tx.run(&mine)?.expect("my run");
                set_logged(tx, &mine, actor, actor)?;
                holds.send(()).unwrap();
                held.recv_timeout(PATIENCE).expect("the other write holds its run");
                tx.run(&theirs)?.expect("their run");
                set_logged(tx, &theirs, actor, actor)
            })
        })
    };
    let first = crossing(a, one.id.clone(), two.id.clone(), a_holds, b_held, "crossing-a");
    let second = crossing(b, two.id.clone(), one.id.clone(), b_holds, a_held, "crossing-b");
    let results = [first.join().expect("a"), second.join().expect("b")];
    let failed: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "exactly one write fails: {results:?}");
    assert!(
        matches!(failed[0], EngineError::Unavailable(why) if why.contains("deadlock")),
        "the failed write is answered as one to try again, naming the deadlock: {:?}",
        failed[0]
    );
    // The winner's writes are on both runs; the loser left nothing.
    let winner = if results[0].is_ok() { "crossing-a" } else { "crossing-b" };
    let loser = if results[0].is_ok() { "crossing-b" } else { "crossing-a" };
    for run in [&one.id, &two.id] {
        let context = f.engine.context(run).unwrap();
        assert_eq!(context.get(winner), Some(&json!(winner)));
        assert_eq!(context.get(loser), None);
    }
    let log = f.engine.events_after(0, &EventFilter::default(), 100).unwrap();
    assert_eq!(log.iter().filter(|e| e.body.actor == winner).count(), 2);
    assert_eq!(log.iter().filter(|e| e.body.actor == loser).count(), 0);
    assert!(f.engine.verify_audit().unwrap().is_intact());
}
