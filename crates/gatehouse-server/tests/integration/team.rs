//! Team runs over HTTP: `POST /run` with a team starts a run whose agents
//! hand off to each other (bad teams are 422s naming the field);
//! `GET /runs/{id}/team` shows the team, who holds the turn, the handoffs
//! and the memory with its history; a reviewer, never an agent, changes
//! the team with `POST /runs/{id}/team`.

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use serde_json::{json, Value};

fn member(name: &str, role: &str, tools: &[&str]) -> Value {
    json!({"name": name, "role": role, "provider": "scripted", "model": "chat", "tools": tools})
}

fn story() -> Value {
    json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]), member("tester", "tester", &["store_memory"]), member("deployer", "deployer", &[]),
    ]})
}

/// Polls `path` until `done` holds for its body.
async fn until(s: &TestServer, path: &str, token: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (status, body) = s.get(path, token).await;
        if status == 200 && done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "gave up waiting on {path}: {status} {body}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_teams_are_422s_naming_the_field() {
    let s = TestServer::start().await;
    for (team, field) in [
        (json!([]), "run_input.team"),
        (json!([member("a", "r", &[]), member("a", "r", &[])]), "run_input.team[1].name"),
        (json!([member("a", "r", &["launch_missiles"])]), "run_input.team[0].tools[0]"),
        (json!([{"name": "a", "role": "r", "provider": "nobody", "model": "m"}]), "run_input.team[0].provider"),
    ] {
        let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": {"prompt": "x", "team": team}})).await;
        assert_eq!(status, 422, "{body}");
        assert_eq!(body["field"], field, "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_run_shows_its_handoffs_and_memory_and_only_a_reviewer_changes_its_team() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/run", &s.agent, json!({"run_input": story()})).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["orchestrated"], true);
    let run = body["run_id"].as_str().unwrap().to_owned();
    let team_path = format!("/runs/{run}/team");

    let team = until(&s, &team_path, &s.reviewer, |b| b["handoffs"].as_array().is_some_and(|h| h.len() == 4)).await;
    assert_eq!(team["active"], "deployer");
    let arrows: Vec<(&str, &str)> = team["handoffs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["from"].as_str().unwrap(), h["to"].as_str().unwrap()))
        .collect();
    assert_eq!(arrows, [("coder", "tester"), ("tester", "coder"), ("coder", "tester"), ("tester", "deployer")]);
    let report =
        team["memory"].as_array().unwrap().iter().find(|m| m["key"] == "test_report").expect("the tester's report");
    assert_eq!((report["scope"].as_str(), report["by"].as_str()), (Some("team"), Some("tester")));
    assert!(team["memory_history"].as_array().unwrap().len() >= 5, "{team}");

    // The run's own agent may read but never change the team.
    let add = json!({"action": "add", "agent": member("auditor", "auditor", &[])});
    let (status, _) = s.post(&team_path, &s.agent, add.clone()).await;
    assert_eq!(status, 403);
    let (status, body) =
        s.post(&team_path, &s.reviewer, json!({"action": "update", "name": "coder", "model": "gpt-9"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent.model")), "{body}");
    let (status, body) = s.post(&team_path, &s.reviewer, json!({"action": "remove", "name": "nobody"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("name")), "{body}");
    let (status, body) = s.post(&team_path, &s.reviewer, add).await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["agents"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["coder", "tester", "deployer", "auditor"]);
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    let recorded = state["turns"].as_array().unwrap().iter().find(|t| t["metadata"]["team_change"]["action"] == "add");
    assert_eq!(recorded.expect("the change is on the timeline")["actor"], "alice", "{state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_without_a_team_has_no_team_to_show() {
    let s = TestServer::start().await;
    let (_, body) = s.post("/run", &s.reviewer, json!({"run_input": {"tool": "scripted:chat", "prompt": "hi"}})).await;
    let run = body["run_id"].as_str().unwrap();
    let (status, body) = s.get(&format!("/runs/{run}/team"), &s.reviewer).await;
    assert_eq!((status, body["code"].as_str()), (409, Some("conflict")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_grants_the_servers_toolbox_tools_in_a_team_change_and_nothing_else() {
    use gatehouse_orchestrator::toolbox::{Toolbox, ToolboxConfig};
    use gatehouse_server::ServerConfig;

    let dir = tempfile::tempdir().unwrap();
    let toolbox = Toolbox::load(ToolboxConfig::default(), dir.path().to_owned()).await.unwrap();
    let config = ServerConfig { team_tools: Some(std::sync::Arc::new(toolbox)), ..ServerConfig::default() };
    let s = TestServer::start_with(config).await;
    let input = json!({"prompt": "Add a logout button", "wait_for_start": true,
        "team": [member("coder", "coder", &["create_artifact"]), member("tester", "tester", &[])]});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
    assert_eq!(status, 201, "{body}");
    let team_path = format!("/runs/{}/team", body["run_id"].as_str().unwrap());
    let grant = json!({"action": "update", "name": "tester", "tools": ["read_artifact", "code_search"]});
    let (status, body) = s.post(&team_path, &s.reviewer, grant).await;
    assert_eq!(status, 200, "{body}");
    let tester = body["agents"].as_array().unwrap().iter().find(|a| a["name"] == "tester").unwrap().clone();
    assert_eq!(tester["tools"], json!(["read_artifact", "code_search"]));
    let unknown = json!({"action": "update", "name": "tester", "tools": ["read_artifact", "format_disk"]});
    let (status, body) = s.post(&team_path, &s.reviewer, unknown).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent.tools[1]")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_creates_changes_and_dissolves_a_sub_team() {
    let s = TestServer::start().await;
    let input = json!({"prompt": "Add a logout button", "wait_for_start": true,
        "team": [member("coder", "coder", &[]), member("tester", "tester", &[])]});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
    assert_eq!(status, 201, "{body}");
    let team_path = format!("/runs/{}/team", body["run_id"].as_str().unwrap());

    let create = json!({"action": "create_team", "team_name": "audit", "purpose": "check the release",
        "agents": [member("ann", "auditor", &[]), member("bob", "auditor", &["store_memory"])]});
    let (status, _) = s.post(&team_path, &s.agent, create.clone()).await;
    assert_eq!(status, 403, "the run's own agent never changes its team from outside");
    let mut unknown = create.clone();
    unknown["agents"][1]["provider"] = json!("nobody");
    let (status, body) = s.post(&team_path, &s.reviewer, unknown).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agents[1].provider")), "{body}");
    let (status, body) = s.post(&team_path, &s.reviewer, create.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["sub_teams"],
        json!([{"name": "audit", "members": ["ann", "bob"], "purpose": "check the release", "by": "alice"}])
    );
    let (status, body) = s.post(&team_path, &s.reviewer, create).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("team_name")), "{body}");

    let modify = json!({"action": "modify_team", "team_name": "audit", "remove_agents": ["coder"]});
    let (status, body) = s.post(&team_path, &s.reviewer, modify).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("remove_agents[0]")), "{body}");
    let modify = json!({"action": "modify_team", "team_name": "audit", "remove_agents": ["ann"]});
    let (status, body) = s.post(&team_path, &s.reviewer, modify).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["sub_teams"][0]["members"], json!(["bob"]));

    let dissolve = json!({"action": "dissolve_team", "team_name": "audit", "reason": "done"});
    let (status, body) = s.post(&team_path, &s.reviewer, dissolve.clone()).await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["agents"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["coder", "tester"]);
    assert_eq!(body["sub_teams"], json!([]));
    let by: Vec<(&str, &str)> = body["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["action"].as_str().unwrap(), c["team_name"].as_str().unwrap()))
        .collect();
    assert_eq!(by, [("add", "audit"), ("add", "audit"), ("remove", "audit"), ("remove", "audit")]);
    let (status, body) = s.post(&team_path, &s.reviewer, dissolve).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("team_name")), "{body}");
}
