//! Restarting a task and parallel work over HTTP: a reviewer, never the
//! run's agent, sends a team agent back to redo its turn with
//! `POST /runs/{id}/restart-task` (422 naming the field for an agent not on
//! the team, 409 once the run has ended or while it waits at a gate); the
//! team view shows the parallel branches with their sync point.

use crate::common;

use common::{member, until, TestServer};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_reviewer_restarts_a_task_on_a_live_team_run() {
    let s = TestServer::start().await;
    let story = json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]), member("tester", "tester", &[]), member("deployer", "deployer", &[]),
    ]});
    let start = json!({"run_input": story, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let (status, body) = s.post("/run", &s.agent, start).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "paused").await;
    let path = format!("/runs/{run}/restart-task");

    let (status, body) = s.post(&path, &s.agent, json!({"agent": "coder"})).await;
    assert_eq!(status, 403, "the run's own agent never restarts its work: {body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"agent": "nobody"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("the agents are coder, tester, deployer"), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"instruction": 7})).await;
    assert_eq!(status, 422, "{body}");

    let (status, body) =
        s.post(&path, &s.reviewer, json!({"agent": "coder", "instruction": "write the tests first"})).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["agents"].as_array().is_some(), "the team view comes back: {body}");
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    let recorded = state["turns"].to_string();
    assert!(recorded.contains("sent **coder** back to redo its turn: write the tests first"), "{recorded}");

    // Going on, the coder redoes its turn; the answer then waits at its gate, where a restart is a 409.
    let control = json!({"step_mode": "continuous"});
    let (status, body) =
        s.call(reqwest::Method::PUT, &format!("/runs/{run}/control"), &s.reviewer, Some(control)).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await;
    assert_eq!(status, 200, "{body}");
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "awaiting_human").await;
    let (status, body) = s.post(&path, &s.reviewer, json!({})).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("decide it there"), "{body}");
    let team = until(&s, &format!("/runs/{run}/team"), |_| true).await;
    assert_eq!(team["active"], "deployer", "{team}");

    let (status, body) = s.call(reqwest::Method::DELETE, &format!("/run/{run}"), &s.reviewer, None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["message"].as_str().unwrap().contains("is cancelled"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_view_shows_parallel_branches_and_their_sync_point() {
    let s = TestServer::start().await;
    let sweep = json!({"prompt": "Caching", "team": [
        member("lead", "lead", &["parallel_handoff"]),
        member("ana", "researcher", &[]), member("ben", "researcher", &[]), member("cy", "researcher", &[]),
    ]});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": sweep})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let team = until(&s, &format!("/runs/{run}/team"), |b| b["parallel"][0]["synced"] == true).await;
    let group = &team["parallel"][0];
    assert_eq!((group["lead"].as_str(), group["strategy"].as_str()), (Some("lead"), Some("wait_all")));
    let branches = group["branches"].as_array().unwrap();
    assert_eq!(branches.len(), 3);
    assert!(branches.iter().all(|b| b["status"] == "completed"), "{group}");
    assert_eq!(branches[1]["task"], "open-source tools for Caching");
}
