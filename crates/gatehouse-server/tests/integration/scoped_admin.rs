//! Tokens scoped to runs or agents, beyond reading gates and runs: making
//! and listing them, who may start runs under a scope, allow-rules (which
//! reach an agent's gates in every run), recordings, and the endpoints
//! that cover every run (tokens, retention, audit, imports, metrics),
//! which need an unscoped token.

use crate::common;

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

async fn token(s: &TestServer, name: &str, role: &str, scope: Value) -> String {
    let (status, body) = s.post("/tokens", &s.admin, json!({"name": name, "role": role, "scope": scope})).await;
    assert_eq!(status, 201, "{body}");
    body["secret"].as_str().unwrap().to_owned()
}

async fn start_run(s: &TestServer, token: &str, body: Value) -> String {
    let (status, body) = s.post("/run", token, body).await;
    assert_eq!(status, 201, "{body}");
    body["run_id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_token_is_made_over_the_api_and_listed_with_its_scope() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let scope = json!({"runs": [run], "agents": [" deployer ", "deployer"]});
    let (status, made) = s.post("/tokens", &s.admin, json!({"name": "ci", "role": "reviewer", "scope": scope})).await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["token"]["scope"], json!({"runs": [run], "agents": ["deployer"]}), "tidied: {made}");
    let (_, list) = s.get("/tokens", &s.admin).await;
    let listed = list["tokens"].as_array().unwrap().iter().find(|t| t["name"] == "ci").unwrap().clone();
    assert_eq!(listed["scope"], made["token"]["scope"]);
    let plain = list["tokens"].as_array().unwrap().iter().find(|t| t["name"] == "alice").unwrap().clone();
    assert!(plain.get("scope").is_none(), "an unscoped token has none: {plain}");

    let secret = made["secret"].as_str().unwrap();
    let (_, me) = s.get("/whoami", secret).await;
    assert_eq!(me["scope"], made["token"]["scope"], "{me}");
    let (_, me) = s.get("/whoami", &s.reviewer).await;
    assert!(me.get("scope").is_none(), "{me}");

    let bad = [
        (json!({"runs": [run, "run_nope"]}), "scope.runs[1]"),
        (json!({"agents": ["  "]}), "scope.agents[0]"),
        (json!({"runs": "everything"}), "scope.runs"),
    ];
    for (scope, field) in bad {
        let (status, body) = s.post("/tokens", &s.admin, json!({"name": "x", "role": "agent", "scope": scope})).await;
        assert_eq!(status, 422, "{body}");
        assert!(body["message"].as_str().unwrap().starts_with(field), "{field}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_token_starts_only_runs_inside_its_scope() {
    let s = TestServer::start().await;
    let (mine, theirs) = (s.run().await, start_run(&s, &s.other_agent, json!({"run_input": {}})).await);
    let by_run = token(&s, "deployer", "agent", json!({"runs": [mine]})).await;

    let (status, body) = s.post("/run", &by_run, json!({"run_input": {}})).await;
    assert_eq!(status, 403, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("scoped") && message.contains("parent_run_id") && message.contains(&mine), "{body}");
    let sub = start_run(&s, &by_run, json!({"run_input": {}, "parent_run_id": mine})).await;
    let (status, body) = s.get(&format!("/run/{sub}/status"), &by_run).await;
    assert_eq!(status, 200, "its sub-run is in its scope: {body}");
    let (status, body) = s.post("/run", &by_run, json!({"run_input": {}, "parent_run_id": theirs})).await;
    assert_eq!(status, 422, "a parent outside the scope is as a missing one: {body}");
    assert!(body["message"].as_str().unwrap().starts_with("parent_run_id"), "{body}");

    let by_agent = token(&s, "deployer", "agent", json!({"agents": ["deployer"]})).await;
    start_run(&s, &by_agent, json!({"run_input": {}})).await;
    let lead = token(&s, "lead", "reviewer", json!({"agents": ["intruder"]})).await;
    start_run(&s, &lead, json!({"run_input": {}, "agent": "intruder"})).await;
    let (status, body) = s.post("/run", &lead, json!({"run_input": {}, "agent": "someone"})).await;
    assert_eq!(status, 403, "{body}");
    // An orchestrated run is Gatehouse's own, outside this scope.
    let tool = json!({"run_input": {"tool": "demo:echo", "prompt": "hi"}});
    let (status, body) = s.post("/run", &lead, tool).await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_rules_are_only_for_the_agents_a_scope_names() {
    let s = TestServer::start().await;
    let (deployers, intruders) = (s.run().await, start_run(&s, &s.other_agent, json!({"run_input": {}})).await);
    let rule = |agent: &str| json!({"agent": agent, "action": "deploy", "any_args": true});
    let (status, theirs) = s.post("/allow-rules", &s.reviewer, rule("deployer")).await;
    assert_eq!(status, 201, "{theirs}");
    let lead = token(&s, "lead", "reviewer", json!({"agents": ["intruder"]})).await;

    let (status, mine) = s.post("/allow-rules", &lead, rule("intruder")).await;
    assert_eq!(status, 201, "{mine}");
    let (status, body) = s.post("/allow-rules", &lead, rule("deployer")).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("agent:"), "{body}");
    let (_, listed) = s.get("/allow-rules", &lead).await;
    let agents: Vec<&str> = listed["rules"].as_array().unwrap().iter().map(|r| r["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["intruder"]);
    let (_, all) = s.get("/allow-rules", &s.reviewer).await;
    assert_eq!(all["rules"].as_array().unwrap().len(), 2);

    let id = theirs["id"].as_str().unwrap();
    let (status, body) = s.call(Method::DELETE, &format!("/allow-rules/{id}"), &lead, None).await;
    assert_eq!(status, 404, "{body}");
    let (_, still) = s.get("/allow-rules?status=live", &s.reviewer).await;
    assert_eq!(still["rules"].as_array().unwrap().len(), 2, "the refused revocation changed nothing");
    let mine = mine["id"].as_str().unwrap();
    let (status, body) = s.call(Method::DELETE, &format!("/allow-rules/{mine}"), &lead, None).await;
    assert_eq!((status, body["status"].clone()), (200, json!("revoked")), "{body}");

    // Deciding with an allow-rule: a run-scoped reviewer may decide, but not allow for the agent everywhere.
    let gate = json!({"kind": "approval", "action": "ship", "text": "Ship?"});
    let (_, opened) = s.post(&format!("/runs/{deployers}/gates"), &s.agent, gate.clone()).await;
    let carol = token(&s, "carol", "reviewer", json!({"runs": [deployers]})).await;
    let resolve = format!("/gates/{}/resolve", opened["gate_id"].as_str().unwrap());
    let allow = json!({"action": "approve", "allow_rule": {"for_secs": 60}});
    let (status, body) = s.post(&resolve, &carol, allow.clone()).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("allow_rule:"), "{body}");
    let (status, body) = s.post(&resolve, &carol, json!({"action": "approve"})).await;
    assert_eq!(status, 200, "{body}");
    let (_, opened) = s.post(&format!("/runs/{intruders}/gates"), &s.other_agent, gate).await;
    let resolve = format!("/gates/{}/resolve", opened["gate_id"].as_str().unwrap());
    let (status, body) = s.post(&resolve, &lead, allow).await;
    assert_eq!(status, 200, "its own agent's rule: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recordings_hold_only_runs_inside_the_scope() {
    let s = TestServer::start().await;
    let team = json!({"run_input": {}, "session_id": "team"});
    let (inside, outside) = (start_run(&s, &s.agent, team.clone()).await, start_run(&s, &s.agent, team).await);
    let carol = token(&s, "carol", "reviewer", json!({"runs": [inside]})).await;

    let (status, recording) = s.get(&format!("/runs/{inside}/recording"), &carol).await;
    assert_eq!(status, 200, "{recording}");
    let (status, body) = s.get(&format!("/runs/{outside}/recording"), &carol).await;
    assert_eq!((status, body["message"].clone()), (404, json!(format!("no run with id `{outside}`"))));

    let (status, session) = s.get("/sessions/team/recording", &carol).await;
    assert_eq!(status, 200, "{session}");
    let runs: Vec<&Value> = session["runs"].as_array().unwrap().iter().map(|r| &r["run"]["id"]).collect();
    assert_eq!(runs, [&json!(inside)]);
    assert!(session["events"].as_array().unwrap().iter().all(|e| e["run_id"] == json!(inside)), "{session}");
    let (_, whole) = s.get("/sessions/team/recording", &s.reviewer).await;
    assert_eq!(whole["runs"].as_array().unwrap().len(), 2);
    let lead = token(&s, "lead", "reviewer", json!({"agents": ["intruder"]})).await;
    let (status, body) = s.get("/sessions/team/recording", &lead).await;
    assert_eq!((status, body["message"].clone()), (404, json!("no session with id `team`")), "{body}");

    let (status, body) = s.post("/recordings", &carol, recording).await;
    assert_eq!(status, 403, "{body}");
    assert!(body["message"].as_str().unwrap().contains("unscoped"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_over_every_run_needs_an_unscoped_token() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let admin = token(&s, "deputy", "admin", json!({"runs": [run]})).await;
    let reviewer = token(&s, "carol", "reviewer", json!({"runs": [run]})).await;
    let refused = [
        (Method::GET, "/tokens", None, &admin),
        (Method::POST, "/tokens", Some(json!({"name": "root2", "role": "admin"})), &admin),
        (Method::DELETE, "/tokens/alice", None, &admin),
        (Method::POST, "/retention/purge", Some(json!({"older_than_days": 0})), &admin),
        (Method::GET, "/audit/verify", None, &admin),
        (Method::GET, "/metrics", None, &admin),
        (Method::GET, "/metrics", None, &reviewer),
    ];
    for (method, path, body, token) in refused {
        let (status, answer) = s.call(method, path, token, body).await;
        assert_eq!(status, 403, "{path}: {answer}");
        assert!(answer["message"].as_str().unwrap().contains("unscoped token"), "{answer}");
    }
    let (_, tokens) = s.get("/tokens", &s.admin).await;
    assert!(tokens["tokens"].as_array().unwrap().iter().all(|t| t["name"] != "root2" && t["revoked_at"].is_null()));
    let (status, _) = s.get("/metrics", &s.reviewer).await;
    assert_eq!(status, 200, "unscoped, as before");
}
