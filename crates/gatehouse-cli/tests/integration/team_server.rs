//! A team server as people run it: two `gatehouse serve --database
//! postgres://...` processes on one schema of the test cluster. One is
//! killed (SIGKILL) while an agent writes and a reviewer follows the event
//! stream; the agent carries on through the other, the stream resumes there
//! with `Last-Event-ID`, and nothing either instance acknowledged is lost.

use crate::common;

use std::io::{BufRead, BufReader};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{bare, Server, WAIT};
use serde_json::{json, Value};

/// One message of an SSE stream: its id, type and the gate it is about.
#[derive(Debug, Clone, PartialEq)]
struct Msg {
    id: u64,
    event: String,
    gate: String,
}

/// Follows `GET /events` on a thread; messages arrive on the receiver until the stream ends.
fn follow(base: &str, token: &str, last_id: Option<u64>) -> Receiver<Msg> {
    let mut req = reqwest::blocking::Client::builder()
        .timeout(None)
        .build()
        .expect("client")
        .get(format!("{base}/api/hitl/events"))
        .bearer_auth(token);
    if let Some(id) = last_id {
        req = req.header("Last-Event-ID", id.to_string());
    }
    let resp = req.send().expect("the stream opens");
    assert_eq!(resp.status(), 200);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut id, mut event, mut data) = (None, String::new(), String::new());
        for line in BufReader::new(resp).lines() {
            let Ok(line) = line else { return };
            if line.is_empty() {
                if let Some(id) = id.take() {
                    let body: Value = serde_json::from_str(&data).expect("JSON data");
                    let gate = body["gate_id"].as_str().or(body["gate"]["id"].as_str()).unwrap_or_default().to_owned();
                    if tx.send(Msg { id, event: std::mem::take(&mut event), gate }).is_err() {
                        return;
                    }
                }
                data.clear();
            } else if let Some(v) = line.strip_prefix("id: ") {
                id = Some(v.parse().expect("numeric id"));
            } else if let Some(v) = line.strip_prefix("event: ") {
                event = v.to_owned();
            } else if let Some(v) = line.strip_prefix("data: ") {
                data.push_str(v);
            }
        }
    });
    rx
}

fn post(base: &str, token: &str, path: &str, body: Value) -> reqwest::Result<(u16, Value)> {
    let resp = reqwest::blocking::Client::new()
        .post(format!("{base}/api/hitl{path}"))
        .bearer_auth(token)
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()?;
    let status = resp.status().as_u16();
    Ok((status, resp.json().unwrap_or(Value::Null)))
}

fn token(server: &Server, name: &str, role: &str) -> String {
    let (status, body) =
        post(&server.url, &server.admin, "/tokens", json!({"name": name, "role": role})).expect("token request");
    assert_eq!(status, 201, "{body}");
    body["secret"].as_str().expect("secret").to_owned()
}

#[test]
fn an_instance_killed_mid_stream_loses_nothing_acknowledged() {
    let home = tempfile::tempdir().expect("temp dir");
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("time").as_nanos();
    let schema = format!("cli_{}_{nanos}", std::process::id());
    let mut a = Server::start_postgres(home.path(), &schema, "a");
    let b = Server::start_postgres(home.path(), &schema, "b");
    assert_eq!(a.admin, b.admin, "the second instance found the first one's admin token");
    let (agent, reviewer) = (token(&a, "deployer", "agent"), token(&a, "alice", "reviewer"));
    let (status, run) =
        post(&b.url, &agent, "/run", json!({"run_input": {"prompt": "deploy"}})).expect("a run through B");
    assert_eq!(status, 201, "{run}");
    let run = run["run_id"].as_str().expect("run_id").to_owned();

    // The agent opens gates through A, and through B once A is gone.
    let writer = {
        let (a_url, b_url, agent, run) = (a.url.clone(), b.url.clone(), agent.clone(), run.clone());
        std::thread::spawn(move || {
            let mut acknowledged = Vec::new();
            let mut through = a_url;
            for i in 0..60 {
                let body = json!({"kind": "question", "text": format!("Gate {i}?"), "mode": "async"});
                let answer = loop {
                    match post(&through, &agent, &format!("/runs/{run}/gates"), body.clone()) {
                        Ok(answer) => break answer,
                        // A is gone: the agent's client retries against the other instance.
                        Err(_) => through = b_url.clone(),
                    }
                };
                assert_eq!(answer.0, 201, "{}", answer.1);
                acknowledged.push(answer.1["gate_id"].as_str().expect("gate_id").to_owned());
                std::thread::sleep(Duration::from_millis(15));
            }
            acknowledged
        })
    };

    // The reviewer follows A's stream until a dozen gates have opened, then A dies.
    let on_a = follow(&a.url, &reviewer, None);
    let mut received = Vec::new();
    let deadline = Instant::now() + WAIT;
    while received.iter().filter(|m: &&Msg| m.event == "gate_opened").count() < 12 {
        let left = deadline.saturating_duration_since(Instant::now());
        received.push(on_a.recv_timeout(left).expect("A streams the gates"));
    }
    a.kill();
    // Whatever A had sent before dying may still be in the pipe.
    while let Ok(msg) = on_a.recv_timeout(Duration::from_millis(200)) {
        received.push(msg);
    }
    let killed_at = received.last().expect("something received").id;

    let acknowledged = writer.join().expect("the writer carried on through B");
    let on_b = follow(&b.url, &reviewer, Some(killed_at));
    let deadline = Instant::now() + WAIT;
    loop {
        let opened: Vec<&str> = received.iter().filter(|m| m.event == "gate_opened").map(|m| m.gate.as_str()).collect();
        if acknowledged.iter().all(|g| opened.contains(&g.as_str())) {
            break;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = on_b.recv_timeout(left).unwrap_or_else(|_| {
            panic!("B's stream stopped short: {} of {} gates seen", opened.len(), acknowledged.len())
        });
        received.push(msg);
    }

    let ids: Vec<u64> = received.iter().map(|m| m.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "one gap-free stream across the two instances");
    for gate in &acknowledged {
        let resp = reqwest::blocking::Client::new()
            .get(format!("{}/api/hitl/gates/{gate}", b.url))
            .bearer_auth(&reviewer)
            .send()
            .expect("gate detail");
        assert_eq!(resp.status(), 200, "acknowledged gate {gate} is stored");
    }
    // And the log the two wrote is one intact chain.
    let verify = common::bare()
        .args(["--database", &common::postgres_url(), "--database-schema", &schema, "audit", "verify"])
        .output()
        .expect("audit verify runs");
    common::assert_success(&verify);
}

#[test]
fn serve_opens_as_many_writer_connections_as_asked_and_says_so() {
    let home = tempfile::tempdir().expect("temp dir");
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("time").as_nanos();
    let schema = format!("cli_writers_{}_{nanos}", std::process::id());
    let server = Server::start_postgres_with(home.path(), &schema, "writers", &["--database-writers", "3"]);
    let agent = token(&server, "deployer", "agent");
    let (status, run) = post(&server.url, &agent, "/run", json!({"run_input": {}})).expect("a run");
    assert_eq!(status, 201, "{run}");
    let log = server.log_text();
    assert!(log.contains(&format!("schema {schema}, 3 writer connections")), "{log}");
}

#[test]
fn a_writer_count_that_cannot_serve_is_refused_naming_the_flag() {
    let zero =
        bare().args(["--database", "postgres://nobody@127.0.0.1:1/none", "--database-writers", "0", "serve"]).output();
    let zero = zero.expect("gatehouse runs");
    assert_eq!(zero.status.code(), Some(2), "{}", String::from_utf8_lossy(&zero.stderr));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--database-writers"), "{zero:?}");
    let sqlite = bare().args(["--database-writers", "2", "serve"]).output().expect("gatehouse runs");
    assert_eq!(sqlite.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&sqlite.stderr).contains("--database <URL>"), "{sqlite:?}");
}
