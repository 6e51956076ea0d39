//! Live replay against a real server: a recording or a stored run played
//! into the replay's own stream in order, every frame marked as replay,
//! paused and stepped by hand; nothing reaches the log or the stored runs.
//! The timing itself (gaps divided by the speed, pause, resume) is tested on
//! `replay::Player` with a clock moved by hand.

use crate::common;

use std::time::Duration;

use common::sse::Sse;
use common::TestServer;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);

/// A run with three gates opened and decided, exported as a recording.
async fn recorded_run(s: &TestServer) -> (String, Value) {
    let run = s.run().await;
    for text in ["One?", "Two?"] {
        let gate = s.gate(&run, json!({"kind": "question", "text": text, "mode": "async"})).await;
        let decision = json!({"action": "respond", "response": "yes"});
        assert_eq!(s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, decision).await.0, 200);
    }
    let (status, recording) = s.get(&format!("/runs/{run}/recording"), &s.reviewer).await;
    assert_eq!(status, 200, "{recording}");
    (run, recording)
}

async fn follow(s: &TestServer, id: &str) -> Sse {
    Sse::open(&s.http, s.url(&format!("/replays/{id}/events")), &s.reviewer, None).await.expect("follows")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_replay_sends_one_event_per_step_in_order_marked_as_replay() {
    let s = TestServer::start().await;
    let (_, recording) = recorded_run(&s).await;
    let total = recording["events"].as_array().unwrap().len();
    let engine = s.server.state.engine_handle().clone();
    let head = tokio::task::spawn_blocking(move || engine.head_seq().unwrap()).await.unwrap();

    // Another database's recording: its run is not here, and stays so.
    let foreign = "0190f000-0000-7000-8000-000000000001";
    let original = recording["runs"][0]["run"]["id"].as_str().unwrap().to_owned();
    let text = recording.to_string().replace(&original, foreign);
    let recording: Value = serde_json::from_str(&text).unwrap();
    let (status, started) = s.post("/replays", &s.reviewer, json!({"recording": recording, "paused": true})).await;
    assert_eq!(status, 201, "{started}");
    assert_eq!((started["state"].as_str(), started["total"].as_u64()), (Some("paused"), Some(total as u64)));
    let id = started["id"].as_str().unwrap().to_owned();
    let mut stream = follow(&s, &id).await;

    let mut types = Vec::new();
    for i in 0..3 {
        let (status, after) = s.post(&format!("/replays/{id}/control"), &s.reviewer, json!({"action": "step"})).await;
        assert_eq!(status, 200, "{after}");
        assert_eq!(after["sent"].as_u64(), Some(i + 1));
        let frame = stream.next(WAIT).await.expect("a frame per step");
        assert_eq!((frame.event.as_str(), frame.id), ("replay", i));
        assert_eq!((frame.data["replay"].as_bool(), frame.data["index"].as_u64()), (Some(true), Some(i)));
        assert_eq!(frame.data["event"]["run_id"], foreign);
        types.push(frame.data["event"]["type"].as_str().unwrap().to_owned());
    }
    let expected: Vec<String> =
        recording["events"].as_array().unwrap()[..3].iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(types, expected, "the recording's order");

    let (_, stopped) = s.post(&format!("/replays/{id}/control"), &s.reviewer, json!({"action": "stop"})).await;
    assert_eq!(stopped["state"], "stopped");
    assert_eq!(s.get(&format!("/runs/{foreign}"), &s.reviewer).await.0, 404, "a replay stores no run");
    let engine = s.server.state.engine_handle().clone();
    let after = tokio::task::spawn_blocking(move || engine.head_seq().unwrap()).await.unwrap();
    assert_eq!(after, head, "nothing was appended to the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_replays_every_event_in_order_and_the_stream_ends_with_it() {
    let s = TestServer::start().await;
    let (run, recording) = recorded_run(&s).await;
    let total = recording["events"].as_array().unwrap().len() as u64;
    let (status, started) =
        s.post("/replays", &s.reviewer, json!({"run_id": run, "speed": 1000, "paused": true})).await;
    assert_eq!(status, 201, "{started}");
    assert_eq!(started["run_ids"], json!([run]));
    let id = started["id"].as_str().unwrap().to_owned();
    let mut stream = follow(&s, &id).await;
    assert_eq!(s.post(&format!("/replays/{id}/control"), &s.reviewer, json!({"action": "resume"})).await.0, 200);
    let mut indexes = Vec::new();
    while let Some(frame) = stream.next(WAIT).await {
        indexes.push(frame.data["index"].as_u64().unwrap());
    }
    assert_eq!(indexes, (0..total).collect::<Vec<_>>());
    let (_, status) = s.get(&format!("/replays/{id}"), &s.reviewer).await;
    assert_eq!((status["state"].as_str(), status["sent"].as_u64()), (Some("finished"), Some(total)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_replay_requests_name_the_field() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, body) = s.post("/replays", &s.reviewer, json!({"run_id": run, "speed": 0})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("speed")));
    let (status, body) = s.post("/replays", &s.reviewer, json!({})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("recording")));
    let (status, body) = s.post("/replays", &s.reviewer, json!({"recording": {"format": "other"}})).await;
    assert_eq!((status, body["field"].as_str().map(|f| f.starts_with("recording"))), (422, Some(true)), "{body}");
    assert_eq!(s.post("/replays", &s.agent, json!({"run_id": run})).await.0, 403);
    let (status, body) = s.post("/replays/nope/control", &s.reviewer, json!({"action": "step"})).await;
    assert_eq!((status, body["field"].as_str()), (404, Some("replay_id")));
}
