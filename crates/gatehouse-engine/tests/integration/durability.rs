//! Concurrency and durability against a real SQLite file: fifty reviewers
//! racing for one gate, and a writer killed with SIGKILL mid-stream.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};

use common::Fixture;
use gatehouse_engine::{DecisionInput, Engine, EngineConfig, EngineError, EventKind, GateId, NewGate, NewRun};

#[test]
fn fifty_reviewers_racing_for_one_gate_yield_one_winner_and_forty_nine_logged_conflicts() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Deploy now?"), "agent").unwrap();
    let barrier = Arc::new(Barrier::new(50));
    let handles: Vec<_> = (0..50)
        .map(|i| {
            let (engine, gate_id, barrier) = (f.engine.clone(), gate.id.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                engine.resolve_gate(&gate_id, DecisionInput::respond(format!("answer {i}")), &format!("reviewer-{i}"))
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("thread")).collect();
    let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1);
    let winner = winners[0].decision.as_ref().unwrap().decided_by.clone();
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        match r {
            EngineError::GateClosed { resolved_by, .. } => assert_eq!(resolved_by.as_deref(), Some(winner.as_str())),
            other => panic!("expected a conflict, got {other:?}"),
        }
    }
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 49);

    let events = f.engine.events_after(0, &Default::default(), 1000).unwrap();
    let resolved = events.iter().filter(|e| matches!(e.body.kind, EventKind::GateResolved { .. })).count();
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.body.kind {
            EventKind::ResolutionRefused { attempted_by, .. } => Some(attempted_by.clone()),
            _ => None,
        })
        .collect();
    assert_eq!((resolved, refused.len()), (1, 49));
    assert!(!refused.contains(&winner));
    assert!(f.engine.verify_audit().unwrap().is_intact());
}

const CHILD_ENV: &str = "GATEHOUSE_CRASH_CHILD_DB";

/// Not a test on its own: when re-executed with `CHILD_ENV` set, this
/// becomes the child process that writes and acknowledges resolutions
/// until it is killed.
#[test]
fn crash_child_writer() {
    let Ok(path) = std::env::var(CHILD_ENV) else { return };
    let engine = Engine::open(&path, EngineConfig::default()).expect("child opens db");
    let run = engine.create_run(NewRun { agent: "crash-writer".into(), ..NewRun::default() }, "crash-writer").unwrap();
    let stdout = std::io::stdout();
    for i in 0.. {
        let gate = engine.open_gate(&run.id, NewGate::question(format!("Question {i}")), "crash-writer").unwrap();
        engine.resolve_gate(&gate.id, DecisionInput::respond(format!("answer {i}")), "reviewer").unwrap();
        // Acknowledge only after resolve_gate returned, i.e. after commit.
        let mut out = stdout.lock();
        writeln!(out, "ack {}", gate.id).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn every_resolution_acknowledged_before_sigkill_survives_and_the_database_is_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "durability::crash_child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child writer");
    let mut acked = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while acked.len() < 300 {
        let line = lines.next().expect("child ended early").unwrap();
        if let Some(id) = line.strip_prefix("ack ") {
            acked.push(GateId::from(id));
        }
    }
    child.kill().expect("SIGKILL the child"); // Child::kill sends SIGKILL on Unix.
    child.wait().unwrap();

    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let engine = Engine::open(&db, EngineConfig::default()).unwrap();
    for id in &acked {
        let gate = engine.gate(id).expect("acknowledged gate is stored");
        assert_eq!(gate.decision.expect("its decision survived").decided_by, "reviewer");
    }
    assert!(engine.verify_audit().unwrap().is_intact());
}

#[test]
fn an_older_gatehouse_refuses_a_database_from_a_newer_one_and_leaves_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("future.db");
    drop(Engine::open(&db, EngineConfig::default()).unwrap());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Engine::open(&db, EngineConfig::default()).err().expect("refused");
    assert!(matches!(err, EngineError::NewerDatabase { found: 99, .. }), "{err:?}");
    assert!(err.to_string().contains("upgrade Gatehouse"));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 99);
}

#[test]
fn a_subscriber_that_overflows_the_live_buffer_catches_up_from_disk_without_gaps() {
    use gatehouse_engine::StoreOptions;
    let dir = tempfile::tempdir().unwrap();
    let config =
        EngineConfig { store: StoreOptions { event_buffer: 16, ..StoreOptions::default() }, ..EngineConfig::default() };
    let engine = Engine::open(dir.path().join("small-buffer.db"), config).unwrap();
    let mut sub = engine.subscribe(0, Default::default());
    let run = engine.create_run(NewRun { agent: "a".into(), ..NewRun::default() }, "a").unwrap();
    for i in 0..100 {
        engine.open_gate(&run.id, NewGate::question(format!("q{i}")), "a").unwrap();
    }
    let head = engine.head_seq().unwrap();
    let mut seqs = Vec::new();
    while let Some(e) = sub.next_timeout(std::time::Duration::from_millis(100)).unwrap() {
        seqs.push(e.seq);
    }
    assert_eq!(seqs, (1..=head).collect::<Vec<_>>());
}

#[test]
fn two_processes_sharing_a_file_continue_one_chain_and_see_each_others_events() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let server = Engine::open(&db, EngineConfig::default()).unwrap();
    let cli = Engine::open(&db, EngineConfig::default()).unwrap();
    let run = server.create_run(NewRun { agent: "a".into(), ..NewRun::default() }, "a").unwrap();
    let gate = server.open_gate(&run.id, NewGate::question("Deploy?"), "a").unwrap();
    let mut live = server.live_events();

    cli.resolve_gate(&gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    server.pick_up_external_events().unwrap();
    let seen = live.try_recv().expect("the other process's event is published here");
    assert!(matches!(seen.body.kind, EventKind::GateResolved { .. }), "{:?}", seen.body.kind);

    // Both keep appending to the same gap-free chain.
    server.open_gate(&run.id, NewGate::question("Again?"), "a").unwrap();
    cli.open_gate(&run.id, NewGate::question("And again?"), "a").unwrap();
    let report = server.verify_audit().unwrap();
    assert!(report.is_intact(), "{:?}", report.problems);
}

#[test]
fn a_failed_write_in_a_group_undoes_only_its_own_work() {
    // Writes queued together commit as one group; a write that fails after
    // storing rows and appending events must leave nothing, and its
    // neighbours everything, on either backend and through either instance.
    let f = Fixture::new();
    let run = f.run("agent");
    let instances = [f.engine.clone(), f.open_again()];
    let results = write_together(&instances, &run.id, 48, |tx, run_id, i| {
        store_key_logged(tx, run_id, i)?;
        if i % 3 == 0 {
            return Err(EngineError::invalid("write", format!("writer {i} gives up")));
        }
        Ok(())
    });
    for (i, result) in results.into_iter().enumerate() {
        assert_eq!(result.is_err(), i % 3 == 0, "writer {i}: {result:?}");
    }

    let kept: Vec<u32> = (0..48).filter(|i| i % 3 != 0).collect();
    for engine in &instances {
        assert_only_kept(engine, &run.id, 48, &kept);
    }
}

#[test]
fn a_write_the_database_refuses_fails_its_own_job_only() {
    // On PostgreSQL the writer sends a job's writes without waiting for each
    // reply; one the database refuses (here the same plan revision twice,
    // its primary key) must still fail the job that sent it, with the
    // database's reason, undo that job's rows and events (and the rows
    // written after the refused one), and leave its neighbours in the group
    // committed. SQLite refuses it at once.
    let f = Fixture::new();
    let run = f.run("agent");
    let results = write_together(std::slice::from_ref(&f.engine), &run.id, 24, |tx, run_id, i| {
        tx.put_context(run_id, &format!("key-{i}"), Some(&serde_json::json!(i)))?;
        if i % 4 == 0 {
            insert_revision_twice(tx, run_id)?;
        }
        log_key(tx, run_id, i)
    });
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Err(EngineError::Storage(why)) if i % 4 == 0 => {
                assert!(
                    why.to_lowercase().contains("unique") || why.contains("duplicate"),
                    "writer {i}: the database's reason: {why}"
                )
            }
            other => assert_eq!(other.is_ok(), i % 4 != 0, "writer {i}: {other:?}"),
        }
    }
    let kept: Vec<u32> = (0..24).filter(|i| i % 4 != 0).collect();
    assert_only_kept(&f.engine, &run.id, 24, &kept);
}

#[test]
fn a_lone_write_the_database_refuses_after_logging_fails_with_its_reason_and_leaves_nothing() {
    // Alone in its group, the write is the last job, whose replies come
    // back with the chain lock's request on PostgreSQL: the refusal must
    // still fail it with the database's reason, keep none of its rows or
    // events, and leave the writer able to commit the next write.
    use gatehouse_engine::Store;
    let f = Fixture::new();
    let run = f.run("agent");
    let head = f.engine.head_seq().unwrap();
    let run_id = run.id.clone();
    let refused = f.engine.store().write(move |tx| {
        store_key_logged(tx, &run_id, 1)?;
        insert_revision_twice(tx, &run_id)
    });
    match refused {
        Err(EngineError::Storage(why)) => {
            assert!(why.to_lowercase().contains("unique") || why.contains("duplicate"), "the database's reason: {why}")
        }
        other => panic!("the duplicate revision is refused: {other:?}"),
    }
    assert_eq!(f.engine.head_seq().unwrap(), head, "no event of the refused write is logged");
    assert_eq!(f.engine.context(&run.id).unwrap().get("key-1"), None);
    let run_id = run.id.clone();
    f.engine.store().write(move |tx| store_key_logged(tx, &run_id, 2)).unwrap();
    assert_only_kept(&f.engine, &run.id, 3, &[2]);
}

#[test]
fn a_change_to_a_run_by_a_write_that_failed_is_never_seen_by_the_writes_after_it() {
    // On PostgreSQL a write group keeps the runs whose rows it holds (and
    // what it wrote to them) to spare later jobs a read; a job that fails
    // rolls its changes back, and the jobs after it, in the same group or
    // not, must read the run as stored.
    let f = Fixture::new();
    let run = f.run("agent");
    let results = write_together(std::slice::from_ref(&f.engine), &run.id, 24, |tx, run_id, i| {
        let seen = retitle(tx, run_id, i)?;
        if i % 2 == 0 {
            return Err(EngineError::invalid("write", format!("writer {i} gives up")));
        }
        Ok(seen)
    });
    let kept = |title: &str| {
        title == "agent's run"
            || title.strip_prefix("writer ").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n % 2 == 1)
    };
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(seen) => assert!(kept(&seen), "writer {i} saw a failed write's title: {seen}"),
            Err(e) => assert_eq!(i % 2, 0, "writer {i}: {e}"),
        }
    }
    let title = f.engine.run(&run.id).unwrap().title;
    assert!(title != "agent's run" && kept(&title), "the stored title is a successful writer's: {title}");
}

#[test]
fn a_write_reading_the_log_sees_its_own_events_and_a_failure_after_that_read_keeps_its_neighbours() {
    // On PostgreSQL a group's events are stored together as it ends, or
    // first when a job in it reads the log. A write reading the log sees
    // what it appended, as on SQLite; and a job failing after such a read
    // (which stored the earlier jobs' events inside the failing job's
    // savepoint) must not take its neighbours' events with it.
    use gatehouse_engine::store::EventFilter;
    let f = Fixture::new();
    let run = f.run("agent");
    let results = write_together(std::slice::from_ref(&f.engine), &run.id, 36, |tx, run_id, i| {
        store_key_logged(tx, run_id, i)?;
        let mut seen = None;
        if i % 2 == 0 {
            let head = tx.head_seq()?;
            let filter = EventFilter { run_id: Some(run_id.clone()), ..EventFilter::default() };
            let newest = tx.events_after(head.saturating_sub(1), &filter, 1)?;
            seen = newest.first().map(|e| e.body.actor.clone());
        }
        if i % 3 == 0 {
            return Err(EngineError::invalid("write", format!("writer {i} gives up")));
        }
        Ok(seen)
    });
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(seen) if i % 2 == 0 => assert_eq!(seen, Some(format!("writer-{i}")), "writer {i} read its own event"),
            Ok(seen) => assert_eq!(seen, None),
            Err(e) => assert_eq!(i % 3, 0, "writer {i}: {e}"),
        }
    }
    let kept: Vec<u32> = (0..36).filter(|i| i % 3 != 0).collect();
    assert_only_kept(&f.engine, &run.id, 36, &kept);
}

#[test]
fn a_write_refused_after_it_ended_is_never_seen_by_the_write_after_it_that_holds_the_same_run() {
    // On PostgreSQL a job that ends well leaves its writes' replies to the
    // next job's first read; a refusal found there rolls back to the
    // refused job's savepoint and sends the next job's requests again. The
    // next job must not have used what the group kept of the run as the
    // refused job left it (its title, here), and only the refused job fails.
    let f = Fixture::new();
    let run = f.run("agent");
    let results = write_together(std::slice::from_ref(&f.engine), &run.id, 36, |tx, run_id, i| {
        let seen = retitle(tx, run_id, i)?;
        store_key_logged(tx, run_id, i)?;
        if i % 3 == 0 {
            insert_revision_twice(tx, run_id)?;
        }
        Ok(seen)
    });
    let refused =
        |title: &str| title.strip_prefix("writer ").and_then(|n| n.parse::<u32>().ok()).is_some_and(|n| n % 3 == 0);
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(seen) => assert!(i % 3 != 0 && !refused(&seen), "writer {i} saw a refused write's title: {seen}"),
            Err(EngineError::Storage(why)) => assert!(i % 3 == 0 && is_duplicate(&why), "writer {i}: {why}"),
            Err(e) => panic!("writer {i}: {e}"),
        }
    }
    let title = f.engine.run(&run.id).unwrap().title;
    assert!(title.starts_with("writer ") && !refused(&title), "the stored title is a kept writer's: {title}");
    // The titles are changed without an event, so the audit is not asked.
    let kept: Vec<u32> = (0..36).filter(|i| i % 3 != 0).collect();
    assert_rows_kept(&f.engine, &run.id, 36, &kept);
}

#[test]
fn a_write_refused_after_it_ended_is_not_linked_by_the_write_after_it_that_reads_the_log() {
    // The job after a refused one takes the chain lock to read the log: the
    // refused job's events must be forgotten before it links anything.
    use gatehouse_engine::store::EventFilter;
    let f = Fixture::new();
    let run = f.run("agent");
    let results = write_together(std::slice::from_ref(&f.engine), &run.id, 36, |tx, run_id, i| {
        store_key_logged(tx, run_id, i)?;
        if i % 3 == 0 {
            insert_revision_twice(tx, run_id)?;
        }
        let mut seen = None;
        if i % 3 == 1 {
            let filter = EventFilter { run_id: Some(run_id.clone()), ..EventFilter::default() };
            let events = tx.events_after(0, &filter, 1000)?;
            seen = Some(events.iter().map(|e| e.body.actor.clone()).collect::<Vec<_>>());
        }
        Ok(seen)
    });
    for (i, result) in results.into_iter().enumerate() {
        match result {
            Ok(Some(actors)) => {
                assert_eq!(actors.last(), Some(&format!("writer-{i}")), "writer {i} read its own event last");
                let refused =
                    actors.iter().filter_map(|a| a.strip_prefix("writer-")?.parse::<u32>().ok()).find(|n| n % 3 == 0);
                assert_eq!(refused, None, "writer {i} read a refused write's event: {actors:?}");
            }
            Ok(None) => assert_ne!(i % 3, 0, "writer {i} was refused"),
            Err(EngineError::Storage(why)) => assert!(i % 3 == 0 && is_duplicate(&why), "writer {i}: {why}"),
            Err(e) => panic!("writer {i}: {e}"),
        }
    }
    let kept: Vec<u32> = (0..36).filter(|i| i % 3 != 0).collect();
    assert_only_kept(&f.engine, &run.id, 36, &kept);
}

#[test]
fn opens_with_one_idempotency_key_at_once_return_one_gate_whichever_group_they_share() {
    // Opens queued together share a group on PostgreSQL, each job reading
    // the key's gate with the replies of the one before still due: every
    // open returns the first gate, and only one is stored.
    use gatehouse_engine::GateFilter;
    let f = Fixture::new();
    let run = f.run("agent");
    let barrier = Arc::new(Barrier::new(24));
    let handles: Vec<_> = (0..24)
        .map(|_| {
            let (engine, run, barrier) = (f.engine.clone(), run.id.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let mut new = NewGate::question("Ship it?");
                new.idempotency_key = Some("ship-1".into());
                barrier.wait();
                engine.open_gate(&run, new, "agent").map(|gate| gate.id)
            })
        })
        .collect();
    let ids: Vec<GateId> = handles.into_iter().map(|h| h.join().expect("thread").expect("open")).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "one gate for one key: {ids:?}");
    let filter = GateFilter { run_id: Some(run.id.clone()), status: None, ..GateFilter::default() };
    assert_eq!(f.engine.count_gates(&filter).unwrap(), 1);
}

#[test]
fn purging_a_run_blanks_the_events_the_same_write_appended() {
    use gatehouse_engine::store::EventFilter;
    use gatehouse_engine::Store;
    let f = Fixture::new();
    let run = f.run("agent");
    let run_id = run.id.clone();
    f.engine
        .store()
        .write(move |tx| {
            log_key(tx, &run_id, 1)?;
            tx.purge_run(&run_id)
        })
        .unwrap();
    let filter = EventFilter { run_id: Some(run.id.clone()), ..EventFilter::default() };
    assert_eq!(f.engine.events_after(0, &filter, 100).unwrap(), vec![], "no body of the run's events is left");
    assert!(f.engine.head_seq().unwrap() >= 2, "the run's creation and the write's event are both logged");
}

/// `n` writers at once, writer `i` through `engines[i % engines.len()]`,
/// each running `op(tx, run, i)` as one write: their results in order.
fn write_together<T: Send + 'static>(
    engines: &[Engine],
    run: &gatehouse_engine::RunId,
    n: u32,
    op: fn(&mut dyn gatehouse_engine::store::WriteTx, &gatehouse_engine::RunId, u32) -> Result<T, EngineError>,
) -> Vec<Result<T, EngineError>> {
    use gatehouse_engine::Store;
    let barrier = Arc::new(Barrier::new(n as usize));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (engine, run, barrier) =
                (engines[i as usize % engines.len()].clone(), run.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                engine.store().write(move |tx| op(tx, &run, i))
            })
        })
        .collect();
    handles.into_iter().map(|handle| handle.join().expect("thread")).collect()
}

/// Stores the same plan revision twice: the database refuses the second
/// (its primary key), SQLite at once, PostgreSQL when the job's deferred
/// writes are answered.
fn insert_revision_twice(
    tx: &mut dyn gatehouse_engine::store::WriteTx,
    run_id: &gatehouse_engine::RunId,
) -> Result<(), EngineError> {
    use gatehouse_engine::plan::{Plan, PlanRevision};
    let revision = PlanRevision {
        revision: 1,
        plan: Plan::default(),
        change_log: vec![],
        actor: "a".into(),
        at: chrono::Utc::now(),
    };
    tx.insert_plan_revision(run_id, &revision)?;
    tx.insert_plan_revision(run_id, &revision)
}

/// Writer `i`'s context key and the event that logs it.
fn store_key_logged(
    tx: &mut dyn gatehouse_engine::store::WriteTx,
    run_id: &gatehouse_engine::RunId,
    i: u32,
) -> Result<(), EngineError> {
    tx.put_context(run_id, &format!("key-{i}"), Some(&serde_json::json!(i)))?;
    log_key(tx, run_id, i)
}

/// The event logging writer `i`'s context key.
fn log_key(
    tx: &mut dyn gatehouse_engine::store::WriteTx,
    run_id: &gatehouse_engine::RunId,
    i: u32,
) -> Result<(), EngineError> {
    tx.append_event(gatehouse_engine::EventBody {
        at: chrono::Utc::now(),
        run_id: Some(run_id.clone()),
        session_id: None,
        user_id: None,
        actor: format!("writer-{i}"),
        kind: EventKind::ContextSet { key: format!("key-{i}"), old: None, new: serde_json::json!(i) },
    })?;
    Ok(())
}

/// Of writers `0..total`, exactly `kept` left their context key and their
/// event; the log is gap-free.
fn assert_rows_kept(engine: &Engine, run: &gatehouse_engine::RunId, total: u32, kept: &[u32]) {
    let context = engine.context(run).unwrap();
    let keys: Vec<u32> = (0..total).filter(|i| context.contains_key(&format!("key-{i}"))).collect();
    assert_eq!(keys, kept, "only the successful writers' context keys are stored");
    let events = engine.events_after(0, &Default::default(), 1000).unwrap();
    let mut writers: Vec<u32> =
        events.iter().filter_map(|e| e.body.actor.strip_prefix("writer-")?.parse().ok()).collect();
    writers.sort();
    assert_eq!(writers, kept, "only the successful writers' events are logged");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>(), "gap-free");
}

/// As [`assert_rows_kept`], and the audit verifies.
fn assert_only_kept(engine: &Engine, run: &gatehouse_engine::RunId, total: u32, kept: &[u32]) {
    assert_rows_kept(engine, run, total, kept);
    let report = engine.verify_audit().unwrap();
    assert!(report.is_intact(), "{report:?}");
}

#[test]
fn a_value_the_database_cannot_store_fails_its_own_write_as_the_callers_mistake() {
    // The server refuses U+0000 in every request; a write that brings one
    // all the same (a library caller) is refused by PostgreSQL, whose text
    // cannot hold it, from among the job's writes sent without waiting. It
    // is the caller's mistake, named as input (422), not a storage failure
    // (500), and leaves nothing. SQLite stores it.
    let f = Fixture::new();
    let run = f.run("agent");
    let head = f.engine.head_seq().unwrap();
    let opened = f.engine.open_gate(&run.id, NewGate::question("Ship\0it?"), "agent");
    if f.is_postgres() {
        match opened {
            Err(EngineError::Invalid { field, reason }) => {
                assert_eq!(field, "input");
                assert!(reason.contains("cannot store"), "{reason}");
            }
            other => panic!("PostgreSQL refuses U+0000 as input: {other:?}"),
        }
        assert_eq!(f.engine.head_seq().unwrap(), head, "nothing of the refused write is logged");
    } else {
        assert_eq!(opened.expect("SQLite stores U+0000").text, "Ship\0it?");
    }
    f.engine.open_gate(&run.id, NewGate::question("Ship it?"), "agent").expect("the next write commits");
}

/// Whether `why` is the database's refusal of a duplicate key (either backend's words).
fn is_duplicate(why: &str) -> bool {
    why.to_lowercase().contains("unique") || why.contains("duplicate")
}

/// Renames the run `writer {i}` (an update without an event); the title it had.
fn retitle(
    tx: &mut dyn gatehouse_engine::store::WriteTx,
    run_id: &gatehouse_engine::RunId,
    i: u32,
) -> Result<String, EngineError> {
    let mut run = tx.run(run_id)?.expect("the run");
    let seen = std::mem::replace(&mut run.title, format!("writer {i}"));
    tx.update_run(&run)?;
    Ok(seen)
}
