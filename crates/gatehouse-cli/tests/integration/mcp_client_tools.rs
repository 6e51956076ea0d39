//! Gatehouse as an MCP client: a team's tools from external MCP servers,
//! here `gatehouse mcp` itself over stdio and a `gatehouse serve`'s `/mcp`
//! over HTTP, discovered when connecting and called through the
//! orchestrator's `McpTools`.

use crate::common;

use std::collections::HashMap;

use gatehouse_orchestrator::mcp_tools::{McpServerConfig, McpTools};
use serde_json::json;

use common::{assert_success, stdout, Server};

fn agent_token(server: &Server, name: &str) -> String {
    let out = server.run(&["token", "create", "--role", "agent", "--name", name]);
    assert_success(&out);
    stdout(&out).trim().to_owned()
}

#[test]
fn tools_of_a_stdio_and_an_http_mcp_server_are_listed_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("g.db"));
    let token = agent_token(&server, "mcp-tools");
    // The variable is this test's own: nothing else reads it.
    std::env::set_var("GATEHOUSE_TEST_MCP_TOOLS_TOKEN", &token);
    let configs = vec![
        McpServerConfig::Stdio {
            name: "gh".into(),
            command: env!("CARGO_BIN_EXE_gatehouse").into(),
            args: vec!["mcp".into(), "--url".into(), server.url.clone(), "--token".into(), token.clone()],
            env: HashMap::new(),
        },
        McpServerConfig::Http {
            name: "web".into(),
            url: format!("{}/mcp", server.url),
            token_env: Some("GATEHOUSE_TEST_MCP_TOOLS_TOKEN".into()),
        },
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let tools = McpTools::connect(&configs).await.expect("both servers connect");
        let names: Vec<&str> = tools.signatures().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 26, "13 tools from each server: {names:?}");
        assert!(tools.offers("gh.plan_add_task") && tools.offers("web.plan_read"));
        let add = tools.signatures().iter().find(|s| s.name == "gh.plan_add_task").unwrap();
        assert!(add.parameters["properties"]["description"].is_object(), "the tool's own schema: {}", add.parameters);

        tools.call("gh.plan_add_task", &json!({"description": "Write the tests"})).await.expect("the task is added");
        let read = tools.call("gh.plan_read", &json!({})).await.unwrap();
        assert!(read.contains("has 1 tasks"), "the stdio session's run has the task: {read}");
        let other = tools.call("web.plan_read", &json!({})).await.unwrap();
        assert!(other.contains("no plan yet"), "the HTTP session is a run of its own: {other}");

        let refused =
            tools.call("gh.plan_update_task", &json!({"task_id": "no-such-task", "status": "completed"})).await;
        assert!(
            refused.as_ref().is_err_and(|e| e.starts_with("`gh.plan_update_task` answered with an error")),
            "{refused:?}"
        );
        let unknown = tools.call("gh.rm_rf", &json!({})).await.unwrap_err();
        assert!(unknown.starts_with("there is no MCP tool `gh.rm_rf`; the MCP tools are gh.ask_human"), "{unknown}");
        tools.close().await;
    });
}
