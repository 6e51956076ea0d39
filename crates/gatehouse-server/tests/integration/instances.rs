//! A team server: two Gatehouse instances on one PostgreSQL database (a
//! schema of the test cluster each test makes for itself). A decision taken
//! through one instance wakes the agent long-polling on the other, and
//! either instance's event stream carries every event, whoever wrote it.

use crate::common;

use std::time::{Duration, Instant};

use common::sse::Sse;
use common::TestServer;
use serde_json::{json, Value};

fn approval(text: &str) -> Value {
    json!({"kind": "approval", "action": "deploy", "text": text, "payload": {"build": 7}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_decision_on_one_instance_wakes_the_agent_waiting_on_the_other() {
    let a = TestServer::start_postgres().await;
    let b = a.another_instance().await;
    let run = a.run().await;
    let gate = a.gate(&run, approval("Deploy build 7?")).await;

    let waiting = {
        let (http, url, agent) = (a.http.clone(), a.url(&format!("/gates/{gate}/wait?timeout=30")), a.agent.clone());
        tokio::spawn(async move {
            let resp = http.get(url).bearer_auth(agent).send().await.expect("wait");
            (resp.status().as_u16(), resp.json::<Value>().await.expect("JSON"), Instant::now())
        })
    };
    // B knows the gate A opened, and the agent's wait is under way on A.
    let (status, listed) = b.get(&format!("/gates/{gate}"), &b.reviewer).await;
    assert_eq!(status, 200, "{listed}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the wait returned before anyone decided");

    let (status, decided) =
        b.post(&format!("/gates/{gate}/resolve"), &b.reviewer, json!({"action": "approve", "text": "ship it"})).await;
    assert_eq!(status, 200, "{decided}");
    let answered = Instant::now();
    let (status, body, woke) = tokio::time::timeout(Duration::from_secs(20), waiting).await.expect("woken").unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "resolved", "{body}");
    assert_eq!(body["decision"]["decided_by"], "alice", "{body}");
    eprintln!("woken {:?} after the decision on the other instance", woke.saturating_duration_since(answered));
}

/// The gate an event is about (`gate_opened` carries the whole gate).
fn gate_of(event: &Value) -> String {
    event["gate_id"].as_str().or(event["gate"]["id"].as_str()).unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_instance_streams_every_event_whoever_wrote_it() {
    let a = TestServer::start_postgres().await;
    let b = a.another_instance().await;
    let run = a.run().await;
    let mut on_a = Sse::open(&a.http, a.url("/events"), &a.reviewer, None).await.expect("stream on A");
    let mut on_b = Sse::open(&b.http, b.url("/events"), &b.reviewer, None).await.expect("stream on B");

    // Written through A, through B, and through A again.
    let first = a.gate(&run, approval("First?")).await;
    let (status, _) = b.post(&format!("/gates/{first}/resolve"), &b.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 200);
    let second = b.gate(&run, approval("Second?")).await;
    let (status, _) = a.post(&format!("/gates/{second}/resolve"), &a.reviewer2, json!({"action": "reject"})).await;
    assert_eq!(status, 200);

    let mut seen = Vec::new();
    for stream in [&mut on_a, &mut on_b] {
        let mut events = Vec::new();
        while events.len() < 4 {
            let msg = stream.next(Duration::from_secs(20)).await.expect("the other instance's events arrive");
            if msg.event.starts_with("gate_") {
                events.push((msg.id, msg.event, gate_of(&msg.data)));
            }
        }
        seen.push(events);
    }
    assert_eq!(seen[0], seen[1], "both streams carry the same events, with the same ids, in the same order");
    let kinds: Vec<_> = seen[0].iter().map(|(_, kind, gate)| (kind.as_str(), gate.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("gate_opened", first.as_str()),
            ("gate_resolved", first.as_str()),
            ("gate_opened", second.as_str()),
            ("gate_resolved", second.as_str())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revoking_a_token_on_one_instance_ends_its_streams_on_the_other() {
    let a = TestServer::start_postgres().await;
    let b = a.another_instance().await;
    let mut bob = Sse::open(&b.http, b.url("/events"), &b.reviewer2, None).await.unwrap();
    while bob.next(Duration::from_millis(200)).await.is_some() {}

    let (status, body) = a.call(reqwest::Method::DELETE, "/tokens/bob", &a.admin, None).await;
    assert_eq!(status, 200, "{body}");
    assert!(bob.ends_within(Duration::from_secs(5)).await, "bob's stream on the other instance did not end");
    // B had bob's token in its cache of good tokens; the revocation cleared it.
    let (status, body) = b.get("/whoami", &b.reviewer2).await;
    assert_eq!(status, 401, "the other instance still takes the revoked token: {body}");
}
