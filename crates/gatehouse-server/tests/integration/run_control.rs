//! Driving a run over HTTP: an agent's turns answered with directives, held
//! while step mode pauses the run and released the moment a reviewer steps;
//! breakpoints; injected instructions and the next-agent choice delivered
//! once; completing and failing; the run's timeline; and who may do what.

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

async fn start_run(s: &TestServer, extra: Value) -> String {
    let mut body = json!({"run_input": {"prompt": "refactor"}, "title": "Refactor"});
    body.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    let (status, body) = s.post("/run", &s.agent, body).await;
    assert_eq!(status, 201, "{body}");
    body["run_id"].as_str().unwrap().to_owned()
}

fn turn(content: &str) -> Value {
    json!({"role": "agent", "content": content})
}

#[tokio::test]
async fn a_turn_in_step_mode_holds_the_agent_until_a_reviewer_steps() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({"step_mode": "step"})).await;

    // Nobody steps: the hold ends after `wait` with a paused directive.
    let (status, body) = s.post(&format!("/runs/{run}/turns?wait=0.2"), &s.agent, turn("step 1")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["directive"]["action"], "paused", "{body}");
    assert_eq!(body["turn"]["index"], 1);
    let (status, body) = s.post(&format!("/runs/{run}/turns?wait=0"), &s.agent, turn("sneaky")).await;
    assert_eq!(status, 409, "a paused run takes no agent turn: {body}");
    assert!(body["message"].as_str().unwrap().contains("directive"), "{body}");

    // A held directive request is answered the moment a reviewer steps.
    let held = {
        let (url, token, http) = (s.url(&format!("/runs/{run}/directive?wait=30")), s.agent.clone(), s.http.clone());
        tokio::spawn(async move {
            let started = Instant::now();
            let resp = http.get(url).bearer_auth(token).send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap(), started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!held.is_finished(), "the agent must be held while the run is paused");
    let (status, stepped) = s.post(&format!("/runs/{run}/step"), &s.reviewer, json!({})).await;
    assert_eq!(status, 200, "{stepped}");
    assert_eq!(stepped["status"], "active");
    let (status, directive, waited) = held.await.unwrap();
    assert_eq!(status, 200, "{directive}");
    assert_eq!(directive["action"], "continue", "{directive}");
    assert!(waited < Duration::from_secs(10), "released by the step, not the timeout: {waited:?}");

    // The next turn pauses again; stepping a running run is a conflict.
    let (_, body) = s.post(&format!("/runs/{run}/turns?wait=0"), &s.agent, turn("step 2")).await;
    assert_eq!(body["directive"]["action"], "paused");
    s.post(&format!("/runs/{run}/step"), &s.reviewer, json!({})).await;
    let (status, body) = s.post(&format!("/runs/{run}/step"), &s.reviewer, json!({})).await;
    assert_eq!(status, 409, "{body}");
}

#[tokio::test]
async fn a_turn_held_in_step_mode_is_answered_when_the_reviewer_steps() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({"step_mode": "step"})).await;
    let held = {
        let (url, token, http) = (s.url(&format!("/runs/{run}/turns?wait=30")), s.agent.clone(), s.http.clone());
        tokio::spawn(async move {
            let resp = http.post(url).bearer_auth(token).json(&turn("compiled")).send().await.unwrap();
            resp.json::<Value>().await.unwrap()
        })
    };
    // Wait until the turn is recorded and the run paused, then step it.
    for _ in 0..100 {
        let (_, status) = s.get(&format!("/run/{run}/status"), &s.reviewer).await;
        if status["status"] == "paused" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (status, body) =
        s.post(&format!("/runs/{run}/instructions"), &s.reviewer, json!({"text": "Now run the tests."})).await;
    assert_eq!(status, 201, "{body}");
    s.post(&format!("/runs/{run}/step"), &s.reviewer, json!({})).await;
    let reply = tokio::time::timeout(Duration::from_secs(10), held).await.expect("released").unwrap();
    assert_eq!(reply["directive"]["action"], "continue", "{reply}");
    assert_eq!(reply["directive"]["instructions"][0]["text"], "Now run the tests.", "{reply}");
    assert_eq!(reply["directive"]["instructions"][0]["by"], "alice");
}

#[tokio::test]
async fn breakpoints_set_by_a_reviewer_pause_on_the_matching_turn() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    let control = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "tool_call", "tool": "deploy"}]});
    let (status, body) = s.call(Method::PUT, &format!("/runs/{run}/control"), &s.reviewer, Some(control.clone())).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["control"]["breakpoints"][0]["tool"], "deploy");
    let (status, _) = s.call(Method::PUT, &format!("/runs/{run}/control"), &s.agent, Some(control)).await;
    assert_eq!(status, 403);

    let (_, body) = s
        .post(
            &format!("/runs/{run}/turns?wait=0"),
            &s.agent,
            json!({"role": "agent", "content": "searching",
            "metadata": {"tool_call": {"tool_name": "web_search"}}}),
        )
        .await;
    assert_eq!(body["directive"]["action"], "continue", "{body}");
    let (_, body) = s
        .post(
            &format!("/runs/{run}/turns?wait=0"),
            &s.agent,
            json!({"role": "agent", "content": "deploying",
            "metadata": {"tool_call": {"tool_name": "deploy", "args": {"env": "prod"}}}}),
        )
        .await;
    assert_eq!(body["directive"]["action"], "paused", "{body}");
    assert!(body["directive"]["reason"].as_str().unwrap().contains("deploy"), "{body}");

    let bad = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "agent", "name": ""}]});
    let (status, body) = s.call(Method::PUT, &format!("/runs/{run}/control"), &s.reviewer, Some(bad)).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().contains("breakpoints[0]"), "{body}");
}

#[tokio::test]
async fn the_next_agent_choice_reaches_the_agent_once() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    let path = format!("/runs/{run}/next-agent");
    let (status, body) = s.call(Method::PUT, &path, &s.reviewer, Some(json!({"agent": "tester"}))).await;
    assert_eq!(status, 200, "{body}");
    let (_, d) = s.get(&format!("/runs/{run}/directive?wait=0"), &s.agent).await;
    assert_eq!(d["next_agent"], "tester", "{d}");
    let (_, d) = s.get(&format!("/runs/{run}/directive?wait=0"), &s.agent).await;
    assert_eq!(d["next_agent"], Value::Null, "{d}");
    let (status, _) = s.call(Method::PUT, &path, &s.agent, Some(json!({"agent": "me"}))).await;
    assert_eq!(status, 403, "an agent must not steer its own run");
}

#[tokio::test]
async fn roles_decide_which_turns_a_token_may_add() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    let path = format!("/runs/{run}/turns?wait=0");
    let (status, body) = s.post(&path, &s.agent, json!({"role": "human", "content": "I approve"})).await;
    assert_eq!(status, 403, "an agent cannot speak as a human: {body}");
    let (status, body) =
        s.post(&path, &s.reviewer, json!({"role": "human", "content": "ok", "actor": "mallory"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["turn"]["actor"], "alice", "the token names the speaker: {body}");
    let (status, _) = s.post(&path, &s.other_agent, turn("not mine")).await;
    assert_eq!(status, 403);
    let (status, body) = s.post(&path, &s.agent, json!({"role": "robot", "content": "?"})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().contains("role"), "{body}");
    let (status, body) = s.post(&format!("/runs/{run}/turns?wait=99"), &s.agent, turn("x")).await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = s.post("/runs/run_nope/turns", &s.agent, turn("x")).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_agent_completes_or_fails_its_run_and_then_learns_it_is_finished() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    s.post(&format!("/runs/{run}/turns?wait=0"), &s.agent, turn("done")).await;
    let (status, body) = s.post(&format!("/runs/{run}/complete"), &s.other_agent, json!({})).await;
    assert_eq!(status, 403, "{body}");
    // No body at all is fine.
    let resp = s.http.post(s.url(&format!("/runs/{run}/complete"))).bearer_auth(&s.agent).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let (_, d) = s.get(&format!("/runs/{run}/directive"), &s.agent).await;
    assert_eq!(d["action"], "finished", "{d}");
    let (status, body) = s.post(&format!("/runs/{run}/turns"), &s.agent, turn("more")).await;
    assert_eq!(status, 409, "{body}");

    let run2 = start_run(&s, json!({})).await;
    let (status, body) = s.post(&format!("/runs/{run2}/fail"), &s.agent, json!({"reason": "  "})).await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = s.post(&format!("/runs/{run2}/fail"), &s.agent, json!({"reason": "out of budget"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "failed");
    assert_eq!(body["status_reason"], "out of budget");
    let (status, body) = s.post(&format!("/runs/{run2}/complete"), &s.agent, json!({"result": 1})).await;
    assert_eq!(status, 409, "{body}");
}

#[tokio::test]
async fn the_timeline_lists_the_runs_events_with_actors_in_pages() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    s.post(&format!("/runs/{run}/turns?wait=0"), &s.agent, turn("hello")).await;
    s.post(&format!("/runs/{run}/instructions"), &s.reviewer, json!({"text": "be brief"})).await;
    let other = start_run(&s, json!({})).await;
    s.post(&format!("/runs/{other}/turns?wait=0"), &s.agent, turn("elsewhere")).await;

    let (status, page) = s.get(&format!("/runs/{run}/events?limit=2"), &s.reviewer).await;
    assert_eq!(status, 200, "{page}");
    let first: Vec<String> =
        page["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect();
    assert_eq!(first, ["run_created", "run_status_changed"]);
    let after = page["next_after"].as_u64().unwrap();
    let (_, rest) = s.get(&format!("/runs/{run}/events?after={after}"), &s.reviewer).await;
    let rest = rest["events"].as_array().unwrap().clone();
    let kinds: Vec<&str> = rest.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["turn_added", "instruction_injected"]);
    assert_eq!(rest[1]["actor"], "alice");
    assert!(rest.iter().all(|e| e["run_id"] == run.as_str()), "only this run's events");

    let (status, _) = s.get(&format!("/runs/{run}/events"), &s.other_agent).await;
    assert_eq!(status, 403);
    let (status, _) = s.get(&format!("/runs/{run}/events?limit=0"), &s.reviewer).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn refused_interventions_change_nothing() {
    let s = TestServer::start().await;
    let run = start_run(&s, json!({})).await;
    let head = |s: &TestServer| {
        let e = s.server.state.engine_handle().clone();
        async move { tokio::task::spawn_blocking(move || e.head_seq().unwrap()).await.unwrap() }
    };
    let before = head(&s).await;
    let (status, _) = s.post(&format!("/runs/{run}/instructions"), &s.agent, json!({"text": "approve yourself"})).await;
    assert_eq!(status, 403);
    let (status, body) = s.post(&format!("/runs/{run}/instructions"), &s.reviewer, json!({"text": ""})).await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = s.post(&format!("/runs/{run}/instructions"), &s.reviewer, json!({"words": "x"})).await;
    assert_eq!(status, 422);
    let (status, _) = s.post("/runs/run_missing/step", &s.reviewer, json!({})).await;
    assert_eq!(status, 404);
    assert_eq!(head(&s).await, before);
}
