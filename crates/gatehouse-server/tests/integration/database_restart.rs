//! PostgreSQL restarting under a team server of two instances, on a
//! cluster of the test's own (the shared one keeps serving the other
//! tests). Every request gets an answer: success, or 503 with `Retry-After`
//! and the `unavailable` code, never a 500 and never a hang; each instance
//! reconnects on its own (writer, read pool, listener); nothing
//! acknowledged is lost; an agent long-polling through one instance is
//! woken by a decision taken through the other after the restart; the
//! audit log verifies. In the `pg` group of the test command
//! (`GATEHOUSE_TEST_BACKEND=postgres`).

use crate::common;

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::cluster::Private;
use common::TestServer;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Longer than any answer may take (the writer tries to reconnect for 3 s
/// per group): a request still unanswered then is a hang.
const HANG: Duration = Duration::from_secs(60);

fn in_pg_group() -> bool {
    std::env::var("GATEHOUSE_TEST_BACKEND").as_deref() == Ok("postgres")
}

/// One answer, with what a refusal must carry.
#[derive(Debug)]
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: Value,
}

impl Answer {
    fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// Success, or the database's 503; anything else fails the test.
    fn check(&self, what: &str) {
        if self.ok() {
            return;
        }
        assert_eq!(self.status, 503, "{what}: {self:?}");
        assert_eq!(self.body["code"], "unavailable", "{what}: {self:?}");
        assert_eq!(self.retry_after.as_deref(), Some("2"), "{what}: {self:?}");
        let message = self.body["message"].as_str().unwrap_or_default();
        assert!(message.contains("retry in 2 s"), "{what}: {self:?}");
    }
}

async fn send(request: reqwest::RequestBuilder, what: &str) -> Answer {
    let sent = tokio::time::timeout(HANG, async {
        let response = request.send().await.unwrap_or_else(|e| panic!("{what}: {e}"));
        let status = response.status().as_u16();
        let retry_after =
            response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let text = response.text().await.unwrap_or_default();
        Answer { status, retry_after, body: serde_json::from_str(&text).unwrap_or(Value::String(text)) }
    });
    sent.await.unwrap_or_else(|_| panic!("{what}: no answer within {HANG:?}"))
}

async fn open_gate(s: &TestServer, run: &str, text: &str) -> Answer {
    let body = json!({"kind": "question", "text": text, "mode": "async"});
    let request = s.http.post(s.url(&format!("/runs/{run}/gates"))).bearer_auth(&s.agent).json(&body);
    send(request, text).await
}

async fn read_gate(s: &TestServer, gate: &str) -> Answer {
    send(s.http.get(s.url(&format!("/gates/{gate}"))).bearer_auth(&s.reviewer), gate).await
}

/// The phases of the burst, as each request sees them when it is sent.
const BEFORE: u8 = 0;
const RESTARTING: u8 = 1;
const AFTER: u8 = 2;

/// What one agent of the burst sent: its acknowledged gates, and per
/// instance whether its last write after the restart succeeded.
struct Played {
    acknowledged: Vec<String>,
    /// Requests answered 503, by the phase they were sent in.
    refused: [usize; 3],
    last_after: [Option<bool>; 2],
}

/// One agent: opens gates through each instance in turn and reads each
/// back through the other, until `AFTER_ROUNDS` rounds after the restart.
async fn agent(servers: Arc<[TestServer; 2]>, run: String, phase: Arc<AtomicU8>, acks: mpsc::Sender<()>) -> Played {
    const AFTER_ROUNDS: usize = 10;
    let mut played = Played { acknowledged: Vec::new(), refused: [0; 3], last_after: [None, None] };
    let mut after = 0;
    for round in 0.. {
        let seen = phase.load(Ordering::SeqCst);
        let (on, other) = (round % 2, (round + 1) % 2);
        let opened = open_gate(&servers[on], &run, &format!("{run} #{round}")).await;
        opened.check("opening a gate");
        played.refused[seen as usize] += usize::from(!opened.ok());
        if seen == AFTER {
            played.last_after[on] = Some(opened.ok());
        }
        if opened.ok() {
            let gate = opened.body["gate_id"].as_str().expect("gate_id").to_owned();
            let read = read_gate(&servers[other], &gate).await;
            read.check("reading a gate");
            played.refused[seen as usize] += usize::from(!read.ok());
            played.acknowledged.push(gate);
            let _ = acks.try_send(());
        }
        if seen == AFTER {
            after += 1;
            if after == AFTER_ROUNDS {
                break;
            }
        }
    }
    played
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restart_mid_burst_loses_nothing_acknowledged_and_waiting_agents_still_wake() {
    if !in_pg_group() {
        return;
    }
    let cluster = Private::start("restart");
    let a = TestServer::start_postgres_at(cluster.url()).await;
    let b = a.another_instance().await;

    // An agent long-polls through B on a gate opened through A.
    let run = a.run().await;
    let awaited = a.gate(&run, json!({"kind": "question", "text": "Which region, after the restart?"})).await;
    let waiting = {
        let request = b.http.get(b.url(&format!("/gates/{awaited}/wait?timeout=60"))).bearer_auth(&b.agent);
        tokio::spawn(async move { send(request, "the long poll").await })
    };

    // Eight agents write through both instances; PostgreSQL restarts once
    // forty of their gates are acknowledged.
    let servers = Arc::new([a, b]);
    let phase = Arc::new(AtomicU8::new(BEFORE));
    let (acks, mut acked) = mpsc::channel(10_000);
    let mut agents = Vec::new();
    for _ in 0..8 {
        let run = servers[0].run().await;
        agents.push(tokio::spawn(agent(Arc::clone(&servers), run, Arc::clone(&phase), acks.clone())));
    }
    for _ in 0..40 {
        acked.recv().await.expect("an agent acknowledged a gate before the restart");
    }
    phase.store(RESTARTING, Ordering::SeqCst);
    let restart = tokio::task::spawn_blocking(move || {
        cluster.restart();
        cluster
    });
    let cluster = restart.await.expect("restart");
    phase.store(AFTER, Ordering::SeqCst);
    let (mut acknowledged, mut refused) = (Vec::new(), [0; 3]);
    for played in agents {
        let played = played.await.expect("an agent");
        for (instance, last) in ["A", "B"].iter().zip(played.last_after) {
            assert_eq!(last, Some(true), "the last write through {instance} after the restart was refused");
        }
        acknowledged.extend(played.acknowledged);
        refused.iter_mut().zip(played.refused).for_each(|(sum, n)| *sum += n);
    }
    eprintln!(
        "{} gates acknowledged; refused with 503: {} before, {} during, {} after the restart",
        acknowledged.len(),
        refused[0],
        refused[1],
        refused[2]
    );
    let [a, b] = Arc::into_inner(servers).expect("the agents are done");

    // Nothing acknowledged is lost, whichever instance is asked.
    assert!(acknowledged.len() >= 40 + 8 * 2, "{} gates acknowledged", acknowledged.len());
    for gate in &acknowledged {
        for s in [&a, &b] {
            let read = read_gate(s, gate).await;
            assert_eq!(read.status, 200, "acknowledged gate {gate}: {read:?}");
        }
    }

    // A decision through A after the restart wakes the agent waiting on B.
    let (status, decided) = a
        .post(&format!("/gates/{awaited}/resolve"), &a.reviewer, json!({"action": "respond", "text": "eu-west-1"}))
        .await;
    assert_eq!(status, 200, "{decided}");
    let woken = waiting.await.expect("the long poll");
    assert_eq!(woken.status, 200, "{woken:?}");
    assert_eq!(woken.body["status"], "resolved", "{woken:?}");

    for s in [&a, &b] {
        let (status, audit) = s.get("/audit/verify", &s.admin).await;
        assert_eq!(status, 200, "{audit}");
        assert_eq!(audit["problems"], json!([]), "{audit}");
    }
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn while_the_database_is_down_every_request_is_503_with_retry_after_and_then_it_serves_again() {
    if !in_pg_group() {
        return;
    }
    let cluster = Private::start("outage");
    let a = TestServer::start_postgres_at(cluster.url()).await;
    let b = a.another_instance().await;
    let run = a.run().await;
    let gate = a.gate(&run, json!({"kind": "question", "text": "Before the outage?", "mode": "async"})).await;

    let cluster = tokio::task::spawn_blocking(move || {
        cluster.down();
        cluster
    })
    .await
    .expect("down");
    for (name, s) in [("A", &a), ("B", &b)] {
        let read = read_gate(s, &gate).await;
        assert_eq!(read.status, 503, "a read through {name} while the database is down: {read:?}");
        read.check("a read while down");
        let opened = open_gate(s, &run, "During the outage?").await;
        assert_eq!(opened.status, 503, "a write through {name} while the database is down: {opened:?}");
        opened.check("a write while down");
    }
    let ready = send(a.http.get(format!("http://{}/readyz", a.server.addr)), "readiness").await;
    assert_eq!(ready.status, 503, "readiness while the database is down: {ready:?}");

    let cluster = tokio::task::spawn_blocking(move || {
        cluster.up();
        cluster
    })
    .await
    .expect("up");
    for (name, s) in [("A", &a), ("B", &b)] {
        let opened = open_gate(s, &run, &format!("After the outage, through {name}?")).await;
        assert_eq!(opened.status, 201, "a write through {name} once the database is back: {opened:?}");
        let read = read_gate(s, &gate).await;
        assert_eq!(read.status, 200, "a read through {name} once the database is back: {read:?}");
    }
    let (status, audit) = b.get("/audit/verify", &b.admin).await;
    assert_eq!((status, &audit["problems"]), (200, &json!([])), "{audit}");
    drop(cluster);
}
