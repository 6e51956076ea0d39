//! `gatehouse serve --team-tools FILE`: the operator's toolbox is checked
//! and connected at start (a bad file stops the server, naming the file and
//! what is wrong), a team run may grant its tools by name and nothing else;
//! and a team agent calls an external MCP server's tools (here `gatehouse
//! mcp` itself over stdio), discovered at start and listed to its model;
//! an MCP call cut short by a restart is never made a second time.

use crate::common;

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_engine::{Engine, EngineConfig, RunStatus};
use gatehouse_orchestrator::mcp_tools::McpServerConfig;
use gatehouse_orchestrator::toolbox::{Toolbox, ToolboxConfig};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{PayloadShape, Provider, ProviderRegistry, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

use common::{assert_success, gatehouse, stderr, stdout, wait_output, Server};

fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    let resp = reqwest::blocking::Client::new()
        .post(format!("{}/api/hitl{path}", server.url))
        .bearer_auth(&server.admin)
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()
        .expect("the server answers");
    let status = resp.status().as_u16();
    (status, resp.json().unwrap_or(Value::Null))
}

fn team(tools: &[&str]) -> Value {
    json!({"run_input": {"prompt": "Lint it", "wait_for_start": true, "team": [
        {"name": "a", "role": "coder", "provider": "scripted", "model": "chat", "tools": tools}]}})
}

#[test]
fn serve_grants_the_toolbox_file_tools_to_teams_and_refuses_a_bad_file_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let bad = dir.path().join("bad-tools.yaml");
    std::fs::write(&bad, "commands:\n  - {name: lint, command: [true], shell: bash}\n").unwrap();
    let child = gatehouse(&db)
        .args(["serve", "--bind", "127.0.0.1:0", "--team-tools"])
        .arg(&bad)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(30));
    assert!(!out.status.success(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("bad-tools.yaml") && err.contains("unknown field `shell`"), "{err}");

    let file = dir.path().join("tools.yaml");
    std::fs::write(&file, "commands:\n  - {name: lint, description: Lint the code, command: [true]}\n").unwrap();
    let server = Server::spawn(&db, &["serve", "--bind", "127.0.0.1:0", "--team-tools", file.to_str().unwrap()]);
    let (status, body) = post(&server, "/run", team(&["lint", "create_artifact", "ask_human"]));
    assert_eq!(status, 201, "{body}");
    let (status, body) = post(&server, "/run", team(&["lint", "deploy_now"]));
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["field"], "run_input.team[0].tools[1]");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("lint") && message.contains("read_artifact"), "the tools there are: {message}");
    assert!(server.terminate().success(), "a clean shutdown");
}

fn agent_token(server: &Server) -> String {
    let out = server.run(&["token", "create", "--role", "agent", "--name", "team-mcp"]);
    assert_success(&out);
    stdout(&out).trim().to_owned()
}

#[test]
fn a_team_agent_calls_an_mcp_servers_tools_listed_to_its_model_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("g.db"));
    let token = agent_token(&server);
    let config = ToolboxConfig {
        mcp_servers: vec![McpServerConfig::Stdio {
            name: "gh".into(),
            command: env!("CARGO_BIN_EXE_gatehouse").into(),
            args: vec!["mcp".into(), "--url".into(), server.url.clone(), "--token".into(), token],
            env: HashMap::new(),
        }],
        ..ToolboxConfig::default()
    };
    let calls = |text: &str, name: &str, args: Value| Step::Calls(text.into(), vec![(name.to_owned(), args)]);
    let model = Arc::new(ScriptedProvider::new("mcpish").with_tool(
        Tool::new("mcpish:agent", "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        [
            calls("Planning.", "gh.plan_add_task", json!({"description": "Write the tests"})),
            calls("Checking.", "gh.plan_read", json!({})),
            Step::Reply("Planned.".into()),
        ],
    ));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let engine = Engine::open(dir.path().join("team.db"), EngineConfig::default()).unwrap();
    let toolbox =
        runtime.block_on(Toolbox::load(config, dir.path().join("workspaces"))).expect("gatehouse mcp connects");
    let mut registry = ProviderRegistry::new();
    registry.register(model.clone() as Arc<dyn Provider>).unwrap();
    let orch = Orchestrator::with_toolbox(engine.clone(), registry, Some(Arc::new(toolbox)));
    let input = json!({"prompt": "Plan the work", "team": [
        {"name": "a", "role": "planner", "provider": "mcpish", "model": "agent",
         "tools": ["gh.plan_add_task", "gh.plan_read"]}]});
    let template = serde_json::from_value(json!({"hitl_config": {"run_policy": "auto"}})).unwrap();
    let run = runtime.block_on(orch.start(&input, template, "alice")).expect("the team is accepted").id;
    let deadline = Instant::now() + Duration::from_secs(30);
    while engine.run(&run).unwrap().status != RunStatus::Completed {
        assert!(Instant::now() < deadline, "{:#?}", engine.turns(&run).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }

    let sent: Vec<String> = model.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert!(sent[0].contains("- gh.plan_add_task(description: str"), "listed with its own schema: {}", sent[0]);
    assert!(!sent[0].contains("gh.ask_human"), "only the granted tools are listed: {}", sent[0]);
    assert!(sent[2].contains("has 1 tasks"), "the MCP server's answer reached the agent: {}", sent[2]);
    let turns = engine.turns(&run).unwrap();
    let called: Vec<&str> = turns
        .iter()
        .filter(|t| t.metadata["step"] == "tool_call")
        .filter_map(|t| t.metadata["tool_call"]["tool_name"].as_str())
        .collect();
    assert_eq!(called, ["gh.plan_add_task", "gh.plan_read"]);
    runtime.shutdown_background();
}

/// The gates `server` holds, as an admin lists them.
fn server_gates(server: &Server) -> Vec<Value> {
    let resp = reqwest::blocking::Client::new()
        .get(format!("{}/api/hitl/gates", server.url))
        .bearer_auth(&server.admin)
        .timeout(Duration::from_secs(10))
        .send()
        .expect("the server answers");
    let body: Value = resp.json().expect("a JSON list");
    body["gates"].as_array().cloned().unwrap_or_default()
}

/// One orchestrator on `db`, its toolbox connected to `server` through `gatehouse mcp`.
fn mcp_orchestrator(
    runtime: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    server: &Server,
    token: &str,
    model: Arc<ScriptedProvider>,
) -> (Engine, Arc<Orchestrator>) {
    let config = ToolboxConfig {
        mcp_servers: vec![McpServerConfig::Stdio {
            name: "gh".into(),
            command: env!("CARGO_BIN_EXE_gatehouse").into(),
            args: vec!["mcp".into(), "--url".into(), server.url.clone(), "--token".into(), token.to_owned()],
            env: HashMap::new(),
        }],
        ..ToolboxConfig::default()
    };
    let engine = Engine::open(dir.join("team.db"), EngineConfig::default()).unwrap();
    let toolbox = runtime.block_on(Toolbox::load(config, dir.join("workspaces"))).expect("gatehouse mcp connects");
    let mut registry = ProviderRegistry::new();
    registry.register(model as Arc<dyn Provider>).unwrap();
    let orch = Orchestrator::with_toolbox(engine.clone(), registry, Some(Arc::new(toolbox)));
    (engine, orch)
}

fn mcp_model(steps: Vec<Step>) -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new("mcpish").with_tool(
        Tool::new("mcpish:agent", "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        steps,
    ))
}

#[test]
fn an_mcp_call_cut_short_by_a_restart_is_not_made_again_and_the_agent_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("g.db"));
    let token = agent_token(&server);
    let questions = |server: &Server| {
        server_gates(server)
            .into_iter()
            .filter(|g| g["preview"].as_str().is_some_and(|t| t.contains("Which region")))
            .count()
    };
    let run = {
        // `gh.ask_human` waits on the server for a person: the call is in flight when the runtime dies.
        let ask = Step::Calls(
            "Asking.".into(),
            vec![("gh.ask_human".to_owned(), json!({"question": "Which region first?"}))],
        );
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (_engine, orch) = mcp_orchestrator(&runtime, dir.path(), &server, &token, mcp_model(vec![ask]));
        let input = json!({"prompt": "Roll out", "team": [
            {"name": "a", "role": "operator", "provider": "mcpish", "model": "agent", "tools": ["gh.ask_human"]}]});
        let template = serde_json::from_value(json!({"hitl_config": {"run_policy": "auto"}})).unwrap();
        let run = runtime.block_on(orch.start(&input, template, "alice")).expect("the team is accepted").id;
        let deadline = Instant::now() + Duration::from_secs(30);
        while questions(&server) == 0 {
            assert!(Instant::now() < deadline, "the MCP call never reached the server");
            std::thread::sleep(Duration::from_millis(50));
        }
        runtime.shutdown_background();
        run
    };

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let model = mcp_model(vec![Step::Reply("I will ask in the channel instead.".into())]);
    let (engine, orch) = mcp_orchestrator(&runtime, dir.path(), &server, &token, model.clone());
    assert_eq!(runtime.block_on(orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    let deadline = Instant::now() + Duration::from_secs(30);
    while engine.run(&run).unwrap().status != RunStatus::Completed {
        assert!(Instant::now() < deadline, "{:#?}", engine.turns(&run).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }

    assert_eq!(questions(&server), 1, "the MCP tool was called once");
    let told = model.calls()[0].payload.to_value().to_string();
    assert!(told.contains("`gh.ask_human` was called before Gatehouse restarted and what it did is unknown"), "{told}");
    runtime.shutdown_background();
}
