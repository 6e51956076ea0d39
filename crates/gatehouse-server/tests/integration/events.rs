//! `GET /events` over real HTTP: Server-Sent Events in log order with ids,
//! resuming with `Last-Event-ID` with nothing missed and nothing repeated
//! while a writer keeps going, filters, catching up after falling behind
//! the live broadcast, and who may read which run's events.

use crate::common;

use std::time::Duration;

use common::sse::{SlowReader, Sse};
use common::TestServer;
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{BlockingMode, Engine, EngineConfig, NewGate, NewRun, RunId, StoreOptions, TokenRole};
use gatehouse_server::ServerConfig;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

async fn new_run(engine: &Engine, agent: &str, session: Option<&str>) -> RunId {
    let (engine, agent) = (engine.clone(), agent.to_owned());
    let new = NewRun { agent: agent.clone(), session_id: session.map(str::to_owned), ..NewRun::default() };
    blocking(move || engine.create_run(new, &agent).unwrap().id).await
}

/// Opens `n` async gates on `run`, `pause` apart.
async fn open_gates(engine: &Engine, run: &RunId, n: usize, pause: Duration) {
    for i in 0..n {
        let (engine, run) = (engine.clone(), run.clone());
        blocking(move || {
            let mut gate = NewGate::question(format!("question {i}"));
            gate.mode = BlockingMode::Async;
            engine.open_gate(&run, gate, "deployer").unwrap()
        })
        .await;
        tokio::time::sleep(pause).await;
    }
}

fn engine(s: &TestServer) -> Engine {
    s.server.state.engine_handle().clone()
}

async fn log(engine: &Engine, filter: EventFilter) -> Vec<gatehouse_engine::Event> {
    let engine = engine.clone();
    blocking(move || engine.events_after(0, &filter, 100_000).unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_arrive_in_log_order_with_ids_types_and_json() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let run = new_run(&e, "deployer", None).await;
    let gate = s.gate(&run.to_string(), serde_json::json!({"kind": "question", "text": "Which region?"})).await;
    let (status, _) = s
        .post(&format!("/gates/{gate}/resolve"), &s.reviewer, serde_json::json!({"action": "respond", "text": "eu"}))
        .await;
    assert_eq!(status, 200);

    let mut sse = Sse::open(&s.http, s.url("/events?after=0"), &s.reviewer, None).await.unwrap();
    let expected = log(&e, EventFilter::default()).await;
    assert!(expected.len() >= 8, "tokens, run, gate, decision: {}", expected.len());
    for want in &expected {
        let got = sse.next(Duration::from_secs(10)).await.expect("backlog event");
        assert_eq!(got.id, want.seq);
        assert_eq!(got.event, want.body.kind.name());
        assert_eq!(got.data, serde_json::to_value(want).unwrap());
    }
    let kinds: Vec<&str> = expected.iter().map(|e| e.body.kind.name()).collect();
    for kind in ["token_created", "run_created", "gate_opened", "gate_resolved"] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }

    // Then live: a new gate arrives right after the backlog.
    let head = expected.last().unwrap().seq;
    s.gate(&run.to_string(), serde_json::json!({"kind": "question", "text": "And the size?", "mode": "async"})).await;
    let live = sse.next(Duration::from_secs(5)).await.expect("live event");
    assert_eq!(live.id, head + 1);
    assert_eq!(live.event, "gate_opened");
    assert_eq!(live.data["gate"]["text"], "And the size?");
    assert!(sse.next(Duration::from_millis(200)).await.is_none(), "nothing else happened");

    // Without `after`, the stream also starts at the beginning of the log.
    let mut from_start = Sse::open(&s.http, s.url("/events"), &s.reviewer, None).await.unwrap();
    assert_eq!(from_start.next(Duration::from_secs(5)).await.unwrap().id, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnecting_with_last_event_id_misses_and_repeats_nothing_while_a_writer_runs() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let run = new_run(&e, "deployer", None).await;
    let writer = {
        let (e, run) = (e.clone(), run.clone());
        tokio::spawn(async move { open_gates(&e, &run, 150, Duration::from_millis(2)).await })
    };

    let mut seen = Vec::new();
    let mut last = None;
    for _ in 0..4 {
        // A few messages per connection, then drop it mid-stream and resume.
        let url = s.url("/events?after=0");
        let mut sse = Sse::open(&s.http, url, &s.reviewer, last).await.unwrap();
        for _ in 0..25 {
            let msg = sse.next(Duration::from_secs(10)).await.expect("event");
            last = Some(msg.id);
            seen.push(msg.id);
        }
        drop(sse);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    writer.await.unwrap();
    let head = blocking(move || e.head_seq().unwrap()).await;
    let mut sse = Sse::open(&s.http, s.url("/events?after=0"), &s.reviewer, last).await.unwrap();
    while last != Some(head) {
        let msg = sse.next(Duration::from_secs(10)).await.expect("event");
        last = Some(msg.id);
        seen.push(msg.id);
    }
    assert!(sse.next(Duration::from_millis(200)).await.is_none());
    let expected: Vec<u64> = (1..=head).collect();
    assert_eq!(seen, expected, "every event exactly once, in order, across five connections");
    assert!(head > 150);

    // The header wins over `after` (EventSource keeps its first URL on reconnect).
    let mut resumed = Sse::open(&s.http, s.url("/events?after=0"), &s.reviewer, Some(40)).await.unwrap();
    assert_eq!(resumed.next(Duration::from_secs(5)).await.unwrap().id, 41);
    let events =
        |last_id: &str| s.http.get(s.url("/events?after=7")).bearer_auth(&s.reviewer).header("Last-Event-ID", last_id);
    let mut empty = Sse { resp: events("").send().await.unwrap(), buf: String::new() };
    assert_eq!(empty.next(Duration::from_secs(5)).await.unwrap().id, 8, "an empty Last-Event-ID is no id");
    let bad = events("abc").send().await.unwrap();
    assert_eq!(bad.status(), 422);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_select_one_run_or_session() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let a = new_run(&e, "deployer", Some("session-a")).await;
    let b = new_run(&e, "deployer", Some("session-b")).await;
    for _ in 0..3 {
        open_gates(&e, &a, 1, Duration::ZERO).await;
        open_gates(&e, &b, 1, Duration::ZERO).await;
    }
    for (query, filter) in [
        (format!("run_id={a}"), EventFilter { run_id: Some(a.clone()), ..EventFilter::default() }),
        (
            "session_id=session-b".to_owned(),
            EventFilter { session_id: Some("session-b".into()), ..EventFilter::default() },
        ),
    ] {
        let want: Vec<u64> = log(&e, filter).await.iter().map(|e| e.seq).collect();
        assert!(want.len() >= 4, "the run's creation and three gates: {want:?}");
        let mut sse = Sse::open(&s.http, s.url(&format!("/events?{query}")), &s.reviewer, None).await.unwrap();
        let mut got = Vec::new();
        while let Some(msg) = sse.next(Duration::from_millis(500)).await {
            let expected_run = if query.starts_with("run_id") { &a } else { &b };
            assert_eq!(msg.data["run_id"], expected_run.to_string(), "{query}: {:?}", msg);
            got.push(msg.id);
        }
        assert_eq!(got, want, "{query}");
    }
    // Live events are filtered too: starting at the head, one for b, then one for a.
    let head = blocking({
        let e = e.clone();
        move || e.head_seq().unwrap()
    })
    .await;
    let url = s.url(&format!("/events?run_id={a}&after={head}"));
    let mut sse = Sse::open(&s.http, url, &s.reviewer, None).await.unwrap();
    open_gates(&e, &b, 1, Duration::ZERO).await;
    open_gates(&e, &a, 1, Duration::ZERO).await;
    let msg = sse.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(msg.data["run_id"], a.to_string());
    assert!(sse.next(Duration::from_millis(200)).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_read_only_their_own_runs() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let run = new_run(&e, "deployer", None).await;
    open_gates(&e, &run, 1, Duration::ZERO).await;

    let url = s.url(&format!("/events?run_id={run}"));
    let (status, body) = Sse::open(&s.http, url.clone(), &s.other_agent, None).await.err().unwrap();
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "forbidden");
    let (status, body) = Sse::open(&s.http, s.url("/events"), &s.agent, None).await.err().unwrap();
    assert_eq!(status, 403, "an agent must name its run: {body}");
    assert!(body["message"].as_str().unwrap().contains("run_id"), "{body}");
    let missing = s.url("/events?run_id=0190a000-0000-7000-8000-000000000000");
    assert_eq!(Sse::open(&s.http, missing, &s.reviewer, None).await.err().unwrap().0, 404);

    // Its own run is fine, with the token in the header only.
    let mut own = Sse::open(&s.http, url.clone(), &s.agent, None).await.unwrap();
    assert_eq!(own.next(Duration::from_secs(5)).await.unwrap().event, "run_created");
    let resp = s.http.get(format!("{url}&access_token={}", s.agent)).send().await.unwrap();
    assert_eq!(resp.status(), 401, "a token in the URL is refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_behind_the_live_buffer_catches_up_from_the_log() {
    // A tiny live buffer so a burst overflows it.
    let dir = tempfile::tempdir().unwrap();
    let config =
        EngineConfig { store: StoreOptions { event_buffer: 16, ..StoreOptions::default() }, ..Default::default() };
    let e = Engine::open(dir.path().join("g.db"), config).unwrap();
    let reviewer = e.create_token("alice", TokenRole::Reviewer, "test").unwrap().1;
    let server =
        gatehouse_server::start(e.clone(), ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ..Default::default() })
            .await
            .unwrap();
    let http = reqwest::Client::new();
    let mut sse =
        Sse::open(&http, format!("http://{}/api/hitl/events?after=0", server.addr), &reviewer, None).await.unwrap();
    assert_eq!(sse.next(Duration::from_secs(5)).await.unwrap().id, 1);

    // A burst from many threads at once: the writer commits them in groups
    // far larger than the live buffer and publishes each group in one go.
    let run = new_run(&e, "deployer", None).await;
    let writers: Vec<_> = (0..48)
        .map(|i| {
            let (e, run) = (e.clone(), run.clone());
            std::thread::spawn(move || {
                for j in 0..10 {
                    let mut gate = NewGate::question(format!("burst {i}/{j}"));
                    gate.mode = BlockingMode::Async;
                    e.open_gate(&run, gate, "deployer").unwrap();
                }
            })
        })
        .collect();
    blocking(move || writers.into_iter().for_each(|w| w.join().unwrap())).await;
    let head = blocking(move || e.head_seq().unwrap()).await;
    let mut ids = vec![1];
    while ids.last() != Some(&head) {
        ids.push(sse.next(Duration::from_secs(10)).await.expect("event").id);
    }
    assert_eq!(ids, (1..=head).collect::<Vec<_>>());
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_token_ends_its_event_streams_and_no_one_elses() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let run = new_run(&e, "deployer", None).await;
    let mut bob = Sse::open(&s.http, s.url("/events"), &s.reviewer2, None).await.unwrap();
    let mut alice = Sse::open(&s.http, s.url("/events"), &s.reviewer, None).await.unwrap();
    let mut bob_on_run = Sse::open(&s.http, s.url(&format!("/events?run_id={run}")), &s.reviewer2, None).await.unwrap();
    for sse in [&mut bob, &mut alice, &mut bob_on_run] {
        assert!(sse.next(Duration::from_secs(5)).await.is_some(), "the backlog: the run's creation");
        while sse.next(Duration::from_millis(200)).await.is_some() {}
    }

    let (status, body) = s.call(reqwest::Method::DELETE, "/tokens/bob", &s.admin, None).await;
    assert_eq!(status, 200, "{body}");
    // Both of bob's streams end, the one filtered to a run too.
    for sse in [&mut bob, &mut bob_on_run] {
        assert!(sse.ends_within(Duration::from_secs(5)).await, "the revoked token's stream did not end");
    }
    // Alice's carries on, with the revocation in it.
    let msg = alice.next(Duration::from_secs(5)).await.expect("alice's stream carries on");
    assert_eq!(msg.event, "token_revoked", "{msg:?}");
    open_gates(&e, &run, 1, Duration::ZERO).await;
    let mut after = Vec::new();
    while let Some(msg) = alice.next(Duration::from_secs(5)).await {
        after.push(msg.event);
        if after.last().is_some_and(|e| e == "gate_opened") {
            break;
        }
    }
    assert!(after.contains(&"gate_opened".to_owned()), "and gets what follows: {after:?}");
    // Coming back with the revoked token is refused.
    let refused = Sse::open(&s.http, s.url("/events"), &s.reviewer2, None).await.err().expect("refused");
    assert_eq!(refused.0, 401, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_a_token_ends_its_run_stream_even_when_it_lags_behind_the_broadcast() {
    let s = TestServer::start().await;
    let e = engine(&s);
    let (watched, elsewhere) = (new_run(&e, "deployer", None).await, new_run(&e, "deployer", None).await);
    // Bob follows one run and stops reading: its big gates fill the socket,
    // and the server stops taking events off the broadcast for him.
    let path = format!("/api/hitl/events?run_id={watched}");
    let bob = SlowReader::open(s.server.addr, &path, &s.reviewer2).await;
    for i in 0..48 {
        let (e, run) = (e.clone(), watched.clone());
        blocking(move || {
            let mut gate = NewGate::question(format!("big question {i}"));
            gate.mode = BlockingMode::Async;
            gate.payload = Some(serde_json::json!({ "notes": "words of filler ".repeat(16 * 1024) }));
            e.open_gate(&run, gate, "deployer").unwrap()
        })
        .await;
    }

    // His token is revoked; his run goes on, and more than the broadcast
    // holds happens on another run, so the revocation falls out of it.
    let (status, body) = s.call(reqwest::Method::DELETE, "/tokens/bob", &s.admin, None).await;
    assert_eq!(status, 200, "{body}");
    let revoked_at = blocking({
        let e = e.clone();
        move || e.head_seq().unwrap()
    })
    .await;
    let mut broadcast = e.live_events();
    open_gates(&e, &watched, 1, Duration::ZERO).await;
    // The engine's default live buffer, 8,192 events, overflowed by 32 writers.
    let per_writer = 8_192 / 32 + 10;
    let writers: Vec<_> = (0..32)
        .map(|i| {
            let (e, run) = (e.clone(), elsewhere.clone());
            std::thread::spawn(move || {
                for j in 0..per_writer {
                    let mut gate = NewGate::question(format!("elsewhere {i}/{j}"));
                    gate.mode = BlockingMode::Async;
                    e.open_gate(&run, gate, "deployer").unwrap();
                }
            })
        })
        .collect();
    blocking(move || writers.into_iter().for_each(|w| w.join().unwrap())).await;
    let head = blocking(move || e.head_seq().unwrap()).await;
    // Published (on PostgreSQL, after the listener hears of them).
    loop {
        match tokio::time::timeout(Duration::from_secs(30), broadcast.recv()).await.expect("the burst is published") {
            Ok(event) if event.seq >= head => break,
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(closed) => panic!("{closed}"),
        }
    }

    // Read again: the stream ends, with nothing from after the revocation.
    let (ids, ended) = bob.ids_until_end(Duration::from_secs(30)).await;
    assert!(ended, "the revoked token's stream did not end (it delivered {} events)", ids.len());
    assert!(ids.iter().all(|id| *id < revoked_at), "delivered after the revocation at {revoked_at}: {ids:?}");
    assert!(ids.len() < 48, "the stream had stalled part way through the big gates: {}", ids.len());
}
