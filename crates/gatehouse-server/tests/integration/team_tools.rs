//! An operator's team-tools file that could not be loaded, as the desktop
//! app loads it (`TeamTools::load_or_leave_out`): the server runs without
//! its tools, `GET /providers` tells people why (the file and the line at
//! fault, secrets redacted) and never tells an agent, and a team run
//! naming one of its tools is refused at start naming the tool and why.

use gatehouse_server::team_tools::TeamTools;
use gatehouse_server::ServerConfig;
use serde_json::json;

use crate::common::{member, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_team_tools_file_is_left_out_and_shown_to_people_and_its_tools_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tools.yaml");
    let key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    std::fs::write(&file, format!("web_search: https://search.example\ncommands: {key}\n")).unwrap();
    let tools = TeamTools::load_or_leave_out(Some(&file), &dir.path().join("gatehouse.db")).expect("given a file");
    let config = ServerConfig { team_tools: Some(std::sync::Arc::clone(&tools.toolbox)), ..ServerConfig::default() };
    let s = TestServer::start_with(config).await;

    let (status, body) = s.get("/providers", &s.reviewer).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["team_tools"]["tools"], json!([]), "no tool of the file is offered: {body}");
    let problem = body["team_tools"]["not_loaded"].as_str().expect("why, for a person");
    assert!(problem.starts_with(&format!("{} is not a toolbox file: ", file.display())), "{problem}");
    assert!(problem.contains("commands") && problem.contains("line 2"), "names the field and the line: {problem}");
    assert!(!problem.contains(key), "a secret the error quotes is redacted: {problem}");

    let (_, body) = s.get("/providers", &s.agent).await;
    assert_eq!(body["team_tools"]["not_loaded"], json!(null), "an agent is not told: {body}");

    let input = json!({"prompt": "Search the web", "team": [member("scout", "researcher", &["web_search"])]});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
    assert_eq!(status, 422, "{body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("no tool named `web_search`"), "{body}");
    assert!(message.contains("the team tools were not loaded"), "{body}");
    assert_eq!(body["field"], "run_input.team[0].tools[0]", "{body}");
    tools.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_team_tools_lists_none() {
    let s = TestServer::start().await;
    let (status, body) = s.get("/providers", &s.reviewer).await;
    assert_eq!((status, &body["team_tools"]), (200, &json!(null)), "{body}");
}
