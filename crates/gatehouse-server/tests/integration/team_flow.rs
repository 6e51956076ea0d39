//! Consensus and collaboration patterns over HTTP: a bad `pattern` or
//! `consensus` in the run input is a 422 naming the field; `GET
//! /runs/{id}/team` shows the team's proposals with each vote and its
//! reasoning, and a pattern run's workflow with the step holding the turn.

use crate::common;

use common::{member, until, TestServer};
use serde_json::{json, Value};

fn pattern_story() -> Value {
    json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]), member("reviewer", "reviewer", &[]), member("deployer", "deployer", &[]),
    ], "pattern": {"name": "code_review_deploy", "workflow": [
        {"step": "code", "agent": "coder", "next_on_success": "review"},
        {"step": "review", "agent": "reviewer", "next_on_approve": "deploy", "next_on_reject": "coder"},
        {"step": "deploy", "agent": "deployer"}
    ]}})
}

fn consensus_story() -> Value {
    let tools = ["propose_decision", "vote_on_proposal", "finalize_consensus"];
    json!({"prompt": "Choose the audit log's store", "team": [
        member("architect", "architect", &tools), member("backend", "backend developer", &tools),
        member("security", "security reviewer", &tools),
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_patterns_and_consensus_settings_are_422s_naming_the_field() {
    let s = TestServer::start().await;
    let mut unknown_agent = pattern_story();
    unknown_agent["pattern"]["workflow"][1]["agent"] = json!("qa");
    let mut unreached = pattern_story();
    unreached["pattern"]["workflow"][1]["next_on_approve"] = Value::Null;
    let mut quorum = consensus_story();
    quorum["consensus"] = json!({"people_decide": true, "quorum": 99});
    for (input, field) in [
        (unknown_agent, "run_input.pattern.workflow[1].agent"),
        (unreached, "run_input.pattern.workflow[2]"),
        (quorum, "run_input.consensus.quorum"),
    ] {
        let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["field"], field, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_view_shows_a_workflows_current_step_and_the_proposals_with_every_vote() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": pattern_story()})).await;
    assert_eq!(status, 201, "{body}");
    let path = format!("/runs/{}/team", body["run_id"].as_str().unwrap());
    let team = until(&s, &path, |b| b["workflow"]["current"] == "review").await;
    let flow = &team["workflow"];
    assert_eq!((flow["name"].as_str(), flow["state"].as_str()), (Some("code_review_deploy"), Some("running")));
    assert_eq!(flow["steps"][1]["kind"], "review");
    assert_eq!(
        flow["moves"][0],
        json!({"turn": flow["moves"][0]["turn"], "from": "code", "outcome": "success",
        "to": "review", "summary": "Wrote the change for: Add a logout button."})
    );
    assert_eq!(team["proposals"], json!([]));

    let (_, body) = s.post("/run", &s.agent, json!({"run_input": consensus_story()})).await;
    let path = format!("/runs/{}/team", body["run_id"].as_str().unwrap());
    let team = until(&s, &path, |b| b["proposals"][0]["status"] == "with_people").await;
    let p = &team["proposals"][0];
    assert_eq!((p["id"].as_str(), p["proposer"].as_str()), (Some("p1"), Some("architect")));
    assert_eq!(p["people"], json!(["human:alice", "human:bob"]));
    let ballots: Vec<(&str, &str)> = p["ballots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["agent"].as_str().unwrap(), b["vote"].as_str().unwrap()))
        .collect();
    assert_eq!(ballots, [("backend", "approve"), ("security", "approve")]);
    assert!(p["ballots"][0]["reasoning"].as_str().unwrap().contains("already run"), "{p}");
    assert!(team["workflow"].is_null(), "no pattern: {team}");
}
