//! Tokens scoped to runs or agents, on the endpoints that read and act on
//! gates and runs: inside its scope a token works as before; outside it a
//! gate or run is answered exactly as a missing one (404), and listings,
//! search and the event stream hold only what is in scope, sub-runs
//! included. Unscoped tokens see everything, as before.

use crate::common;

use std::time::Duration;

use common::TestServer;
use gatehouse_engine::TokenRole;
use serde_json::{json, Value};

/// Runs and gates across two agents: `a` (deployer's) with a sub-run
/// `child` (helper's), `b` (deployer's) and `c` (intruder's), one pending
/// approval gate on each.
struct World {
    s: TestServer,
    helper: String,
    a: String,
    child: String,
    b: String,
    c: String,
    gate_a: String,
    gate_child: String,
    gate_b: String,
    gate_c: String,
}

/// A token made by the admin over the API; returns its secret.
async fn token(s: &TestServer, name: &str, role: TokenRole, scope: Value) -> String {
    let body = json!({"name": name, "role": role, "scope": scope});
    let (status, body) = s.post("/tokens", &s.admin, body).await;
    assert_eq!(status, 201, "{body}");
    body["secret"].as_str().unwrap().to_owned()
}

async fn start_run(s: &TestServer, token: &str, body: Value) -> String {
    let (status, body) = s.post("/run", token, body).await;
    assert_eq!(status, 201, "{body}");
    body["run_id"].as_str().unwrap().to_owned()
}

async fn open(s: &TestServer, token: &str, run: &str, text: &str) -> String {
    let gate = json!({"kind": "approval", "action": "deploy", "text": text, "mode": "async"});
    let (status, body) = s.post(&format!("/runs/{run}/gates"), token, gate).await;
    assert_eq!(status, 201, "{body}");
    body["gate_id"].as_str().unwrap().to_owned()
}

impl World {
    async fn new() -> Self {
        let s = TestServer::start().await;
        let helper = token(&s, "helper", TokenRole::Agent, json!({})).await;
        let a = start_run(&s, &s.agent, json!({"run_input": {}, "title": "alpha", "session_id": "team"})).await;
        let sub_run = json!({"run_input": {}, "title": "alpha child", "agent": "helper", "parent_run_id": a});
        let child = start_run(&s, &s.reviewer, sub_run).await;
        let b = start_run(&s, &s.agent, json!({"run_input": {}, "title": "bravo", "session_id": "team"})).await;
        let c = start_run(&s, &s.other_agent, json!({"run_input": {}, "title": "charlie"})).await;
        let gate_a = open(&s, &s.agent, &a, "release alpha").await;
        let gate_child = open(&s, &helper, &child, "release alpha child").await;
        let gate_b = open(&s, &s.agent, &b, "release bravo").await;
        let gate_c = open(&s, &s.other_agent, &c, "release charlie").await;
        Self { s, helper, a, child, b, c, gate_a, gate_child, gate_b, gate_c }
    }

    /// A reviewer token scoped to run `a` (and so its sub-run).
    async fn reviewer_of_a(&self) -> String {
        token(&self.s, "carol", TokenRole::Reviewer, json!({"runs": [self.a]})).await
    }
}

fn ids(list: &Value, field: &str, key: &str) -> Vec<String> {
    let mut ids: Vec<String> =
        list[field].as_array().unwrap().iter().map(|x| x[key].as_str().unwrap().to_owned()).collect();
    ids.sort();
    ids
}

fn sorted(items: &[&String]) -> Vec<String> {
    let mut items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    items.sort();
    items
}

/// The 404 `path` gets for `id` must be exactly what it gets for an id that does not exist.
async fn as_if_missing(
    s: &TestServer,
    token: &str,
    method: reqwest::Method,
    path: &str,
    id: &str,
    body: Option<Value>,
) {
    let (status, refused) = s.call(method.clone(), path, token, body.clone()).await;
    assert_eq!(status, 404, "{path}: {refused}");
    let (status, missing) = s.call(method, &path.replace(id, "nothing_here"), token, body).await;
    assert_eq!(status, 404, "{missing}");
    let expected = missing["message"].as_str().unwrap().replace("nothing_here", id);
    assert_eq!(refused, json!({"code": "not_found", "message": expected}), "{path}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gates_outside_the_scope_are_not_found_and_gate_listings_hold_only_those_inside() {
    let w = World::new().await;
    let (s, carol) = (&w.s, w.reviewer_of_a().await);
    use reqwest::Method;

    let (status, list) = s.get("/gates", &carol).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(ids(&list, "gates", "id"), sorted(&[&w.gate_a, &w.gate_child]), "the run and its sub-run");
    assert_eq!(list["total"], 2);
    let (_, everything) = s.get("/gates", &s.reviewer).await;
    assert_eq!(everything["total"], 4, "an unscoped reviewer sees every gate");

    // Paging stays exact: two pages of one.
    let (_, first) = s.get("/gates?limit=1", &carol).await;
    let (_, second) = s.get("/gates?limit=1&offset=1", &carol).await;
    assert_eq!((first["total"].clone(), second["total"].clone()), (json!(2), json!(2)));
    let mut paged = [ids(&first, "gates", "id"), ids(&second, "gates", "id")].concat();
    paged.sort();
    assert_eq!(paged, sorted(&[&w.gate_a, &w.gate_child]));
    let (_, other_run) = s.get(&format!("/gates?run_id={}", w.b), &carol).await;
    assert_eq!((other_run["total"].clone(), other_run["gates"].clone()), (json!(0), json!([])));
    let (_, pending) = s.get("/approvals/pending", &carol).await;
    assert_eq!(ids(&pending, "gates", "id"), sorted(&[&w.gate_a, &w.gate_child]));

    for gate in [&w.gate_b, &w.gate_c] {
        as_if_missing(s, &carol, Method::GET, &format!("/gates/{gate}"), gate, None).await;
        as_if_missing(s, &carol, Method::GET, &format!("/gates/{gate}/wait?timeout=0"), gate, None).await;
        // A long poll is refused before it waits (the check is its first read).
        let started = std::time::Instant::now();
        as_if_missing(s, &carol, Method::GET, &format!("/gates/{gate}/wait?timeout=30"), gate, None).await;
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "waited before refusing");
        let approve = Some(json!({"action": "approve"}));
        as_if_missing(s, &carol, Method::POST, &format!("/gates/{gate}/resolve"), gate, approve).await;
        let score = Some(json!({"score": 4}));
        as_if_missing(s, &carol, Method::POST, &format!("/gates/{gate}/score"), gate, score).await;
    }
    let (_, b) = s.get(&format!("/gates/{}", w.gate_b), &s.reviewer).await;
    assert_eq!(b["gate"]["status"], "pending", "the refused decision changed nothing");

    let (status, detail) = s.get(&format!("/gates/{}", w.gate_child), &carol).await;
    assert_eq!(status, 200, "{detail}");
    let (status, decided) = s.post(&format!("/gates/{}/resolve", w.gate_a), &carol, json!({"action": "approve"})).await;
    assert_eq!(status, 200, "{decided}");
    assert_eq!(decided["decision"]["decided_by"], "carol");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_outside_the_scope_are_not_found_and_run_listings_hold_only_those_inside() {
    let w = World::new().await;
    let (s, carol) = (&w.s, w.reviewer_of_a().await);
    use reqwest::Method;

    for path in ["/runs", "/runs/active", "/sessions/team/active"] {
        let (status, list) = s.get(path, &carol).await;
        assert_eq!(status, 200, "{list}");
        let expected = if path.contains("team") { sorted(&[&w.a]) } else { sorted(&[&w.a, &w.child]) };
        assert_eq!(ids(&list, "runs", "id"), expected, "{path}");
    }
    let (_, page) = s.get("/runs?limit=1&offset=1", &carol).await;
    assert_eq!(ids(&page, "runs", "id"), sorted(&[&w.a]), "newest first: the sub-run, then its parent");

    let b = &w.b;
    for path in ["/run/{}/status", "/run/{}/state", "/runs/{}/events", "/runs/{}/plan", "/runs/{}/context"] {
        as_if_missing(s, &carol, Method::GET, &path.replace("{}", b), b, None).await;
    }
    let controls = [
        (Method::POST, "/run/{}/pause", None),
        (Method::POST, "/run/{}/resume", None),
        (Method::DELETE, "/run/{}", None),
        (Method::POST, "/runs/{}/step", None),
        (Method::PUT, "/runs/{}/control", Some(json!({"step_mode": "step"}))),
        (Method::POST, "/runs/{}/instructions", Some(json!({"text": "stop"}))),
        (Method::PUT, "/runs/{}/next-agent", Some(json!({"agent": "x"}))),
        (Method::PUT, "/runs/{}/context/k", Some(json!({"value": 1}))),
        (Method::POST, "/runs/{}/turns", Some(json!({"role": "human", "content": "hello"}))),
        (Method::POST, "/run/{}/approve", Some(json!({"approval_id": w.gate_b, "action": "approve"}))),
    ];
    for (method, path, body) in controls {
        as_if_missing(s, &carol, method, &path.replace("{}", b), b, body).await;
    }
    let (_, run) = s.get(&format!("/run/{b}/status"), &s.reviewer).await;
    assert_eq!(run["status"], "active", "nothing reached run b: {run}");
    let (_, context) = s.get(&format!("/runs/{b}/context"), &s.reviewer).await;
    assert_eq!(context, json!({}));

    for path in ["/run/{}/status", "/run/{}/state", "/runs/{}/events", "/runs/{}/plan", "/runs/{}/context"] {
        let (status, body) = s.get(&path.replace("{}", &w.child), &carol).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (status, paused) = s.post(&format!("/run/{}/pause", w.a), &carol, json!({})).await;
    assert_eq!((status, paused["status"].clone()), (200, json!("paused")), "{paused}");

    // An agent token scoped to one of its runs drives that run only; another agent's run is now 404, not 403.
    let scoped = token(s, "deployer", TokenRole::Agent, json!({"runs": [w.b]})).await;
    let turn = json!({"role": "agent", "content": "working"});
    for run in [&w.a, &w.c] {
        as_if_missing(s, &scoped, Method::POST, &format!("/runs/{run}/turns"), run, Some(turn.clone())).await;
        as_if_missing(s, &scoped, Method::POST, &format!("/runs/{run}/complete"), run, Some(json!({}))).await;
    }
    let (status, body) = s.post(&format!("/runs/{}/turns", w.b), &scoped, turn).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_only_gates_inside_the_scope() {
    let w = World::new().await;
    let (s, carol) = (&w.s, w.reviewer_of_a().await);
    let (status, found) = s.get("/gates/search?q=release", &carol).await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(ids(&found, "hits", "id"), sorted(&[&w.gate_a, &w.gate_child]));
    assert_eq!(found["more"], false);
    let (_, first) = s.get("/gates/search?q=release&limit=1", &carol).await;
    assert_eq!((first["hits"].as_array().unwrap().len(), first["more"].clone()), (1, json!(true)));
    let (_, second) = s.get("/gates/search?q=release&limit=1&offset=1", &carol).await;
    assert_eq!(second["more"], false);
    assert_ne!(first["hits"][0]["id"], second["hits"][0]["id"]);

    let (_, bravo) = s.get("/gates/search?q=bravo", &carol).await;
    assert_eq!(bravo["hits"], json!([]), "another run's gate is not found");
    let (_, bravo) = s.get(&format!("/gates/search?run_id={}", w.b), &carol).await;
    assert_eq!(bravo["hits"], json!([]));
    let (_, all) = s.get("/gates/search?q=release", &s.reviewer).await;
    assert_eq!(all["hits"].as_array().unwrap().len(), 4);

    // A bad search is still refused when the scope holds nothing to search.
    let nobody = token(s, "nobody", TokenRole::Reviewer, json!({"agents": ["no-such-agent"]})).await;
    let (status, body) = s.get("/gates/search?from=2026-03-02&to=2026-03-01", &nobody).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("to"), "{body}");
}

/// Reads SSE messages until one is about `gate`; returns every message's `run_id` and `type`.
async fn read_until(resp: &mut reqwest::Response, gate: &str) -> Vec<(Option<String>, String)> {
    let (mut text, mut seen) = (String::new(), Vec::new());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) else { continue };
            let event: Value = serde_json::from_str(data).unwrap();
            seen.push((event["run_id"].as_str().map(str::to_owned), event["type"].as_str().unwrap_or("").to_owned()));
            if data.contains(gate) {
                return seen;
            }
        }
        let chunk = tokio::time::timeout_at(deadline, resp.chunk()).await.expect("in time").unwrap().unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_carries_only_events_of_runs_inside_the_scope() {
    let w = World::new().await;
    let (s, carol) = (&w.s, w.reviewer_of_a().await);
    let mut stream = s.http.get(s.url("/events?after=0")).bearer_auth(&carol).send().await.unwrap();
    assert_eq!(stream.status(), 200);

    // The backlog first.
    let backlog = read_until(&mut stream, &w.gate_child).await;
    assert!(backlog.iter().any(|(run, kind)| run.as_deref() == Some(w.a.as_str()) && kind == "gate_opened"));
    // Then live: a gate elsewhere, a sub-run started since, and a last gate on `a`.
    open(s, &s.agent, &w.b, "live bravo").await;
    let grandchild =
        start_run(s, &w.helper, json!({"run_input": {}, "title": "later", "parent_run_id": w.child})).await;
    let late = open(s, &w.helper, &grandchild, "from the grandchild").await;
    let last = open(s, &s.agent, &w.a, "last alpha").await;
    let live = read_until(&mut stream, &last).await;
    assert!(live.iter().any(|(run, _)| run.as_deref() == Some(grandchild.as_str())), "{live:?} has {late}");

    let inside = [&w.a, &w.child, &grandchild];
    for (run, kind) in backlog.iter().chain(&live) {
        let run = run.as_ref().unwrap_or_else(|| panic!("a `{kind}` event of no run reached a scoped stream"));
        assert!(inside.contains(&run), "`{kind}` of run {run} is outside the scope");
    }
    let (_, everything) = s.get(&format!("/runs/{}/events", w.b), &s.reviewer).await;
    assert!(!everything["events"].as_array().unwrap().is_empty(), "run b has events to hide");

    // Naming a run outside the scope is as naming a missing one.
    as_if_missing(s, &carol, reqwest::Method::GET, &format!("/events?run_id={}", w.c), &w.c, None).await;
    let (status, body) = s.get(&format!("/runs/{}/events", w.c), &carol).await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_scope_reaches_the_agents_runs_and_their_sub_runs() {
    let w = World::new().await;
    let s = &w.s;
    let dave = token(s, "dave", TokenRole::Reviewer, json!({"agents": ["helper"]})).await;
    let (_, list) = s.get("/gates", &dave).await;
    assert_eq!(ids(&list, "gates", "id"), sorted(&[&w.gate_child]));
    let (_, runs) = s.get("/runs", &dave).await;
    assert_eq!(ids(&runs, "runs", "id"), sorted(&[&w.child]), "not the parent of the helper's run");
    as_if_missing(s, &dave, reqwest::Method::GET, &format!("/gates/{}", w.gate_a), &w.gate_a, None).await;
    for gate in [&w.gate_b, &w.gate_c] {
        let (status, _) = s.get(&format!("/gates/{gate}"), &dave).await;
        assert_eq!(status, 404);
    }
}

/// Opening a gate checks the caller's reach inside the gate's own write:
/// a scoped token opens on its run's sub-run (reached through the parent),
/// a run outside its scope is as missing, another agent's run is 403, and
/// a refused open stores no gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_opens_only_on_runs_the_caller_reaches_and_a_refused_one_stores_nothing() {
    let w = World::new().await;
    let s = &w.s;
    let carol = w.reviewer_of_a().await;
    let gate = json!({"kind": "question", "text": "carol asks", "mode": "async"});
    let (status, body) = s.post(&format!("/runs/{}/gates", w.child), &carol, gate.clone()).await;
    assert_eq!(status, 201, "the sub-run of her run: {body}");
    as_if_missing(s, &carol, reqwest::Method::POST, &format!("/runs/{}/gates", w.b), &w.b, Some(gate.clone())).await;
    let (status, body) = s.post(&format!("/runs/{}/gates", w.c), &w.helper, gate).await;
    assert_eq!(status, 403, "the intruder's run is not the helper's: {body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    for run in [&w.b, &w.c] {
        let (_, list) = s.get(&format!("/gates?run_id={run}"), &s.reviewer).await;
        assert_eq!(list["total"], json!(1), "only the gate the world opened on {run}: {list}");
    }
}
