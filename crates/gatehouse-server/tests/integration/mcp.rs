//! MCP at `/mcp` over real loopback HTTP: an rmcp client with a bearer
//! token calls the tools while a reviewer decides through the REST API;
//! and `gatehouse mcp`'s HTTP backend driving the same server.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::TestServer;
use gatehouse_mcp::{GatehouseMcp, HttpBackend, McpOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

#[derive(Clone, Default)]
struct Client {
    name: String,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new(self.name.clone(), "2.0.0"))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }
}

type Session = RunningService<RoleClient, Client>;

async fn over_http(server: &TestServer, token: &str, name: &str) -> Session {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("http://{}/mcp", server.server.addr)).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    Client { name: name.to_owned(), ..Client::default() }.serve(transport).await.expect("MCP session over HTTP")
}

/// `gatehouse mcp`'s server (the HTTP backend) on an in-memory pipe.
async fn over_stdio_backend(server: &TestServer, token: &str, name: &str) -> Session {
    let backend = HttpBackend::new(format!("http://{}", server.server.addr).parse().unwrap(), token).unwrap();
    let options = McpOptions { progress_every: Duration::from_millis(100), ..McpOptions::default() };
    let mcp = GatehouseMcp::new(Arc::new(backend), options);
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = mcp.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    Client { name: name.to_owned(), ..Client::default() }.serve(client_end).await.expect("MCP session")
}

async fn call(session: &Session, tool: &str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    session.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)).await.expect("tools/call")
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().expect("structured content")
}

fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// A reviewer who decides the next pending gate over the REST API,
/// answering with when the decision was committed.
fn reviewer(server: &TestServer, decision: Value) -> tokio::task::JoinHandle<(Value, Instant)> {
    let (http, base, token) = (server.http.clone(), server.base.clone(), server.reviewer.clone());
    tokio::spawn(async move {
        loop {
            let list: Value =
                http.get(format!("{base}/gates")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
            if let Some(id) = list["gates"][0]["id"].as_str() {
                tokio::time::sleep(Duration::from_millis(150)).await;
                let gate: Value = http
                    .get(format!("{base}/gates/{id}"))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let resolved = http
                    .post(format!("{base}/gates/{id}/resolve"))
                    .bearer_auth(&token)
                    .json(&decision)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resolved.status().as_u16(), 200);
                return (gate["gate"].clone(), Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

fn initialize(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
}

/// A refusal at `/mcp`: its status, `WWW-Authenticate` and JSON-RPC body.
async fn refusal(response: reqwest::Response) -> (u16, String, Value) {
    let status = response.status().as_u16();
    let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
    let body: Value = response.json().await.expect("a JSON body");
    (status, challenge.unwrap_or_default(), body)
}

#[tokio::test]
async fn a_refused_token_is_a_401_whose_body_is_a_json_rpc_error_saying_why() {
    let server = TestServer::start().await;
    let url = format!("http://{}/mcp", server.server.addr);
    let post = || server.http.post(&url).header("accept", "application/json, text/event-stream");

    let (status, challenge, body) = refusal(post().json(&initialize(json!(1))).send().await.unwrap()).await;
    assert_eq!((status, challenge.as_str()), (401, "Bearer"));
    assert_eq!(body["jsonrpc"], "2.0");
    assert_eq!(body["id"], 1, "the request's own id: {body}");
    assert_eq!(body["error"]["code"], -32001);
    assert!(body["error"]["message"].as_str().unwrap().contains("bearer token is required"), "{body}");

    let sent = post().bearer_auth("not-a-token").json(&initialize(json!("init-7"))).send().await.unwrap();
    let (status, challenge, body) = refusal(sent).await;
    assert_eq!((status, challenge.as_str()), (401, "Bearer"));
    assert_eq!(body["id"], "init-7");
    assert_eq!(body["error"]["code"], -32001);
    assert_eq!(body["error"]["message"], "this token is unknown or revoked");

    let sent = post().bearer_auth("not-a-token").body("{not json").send().await.unwrap();
    let (status, _, body) = refusal(sent).await;
    assert_eq!(status, 401);
    assert_eq!(body["id"], Value::Null, "an unreadable request's id is null: {body}");
    let sent = server.http.delete(&url).send().await.unwrap();
    let (status, challenge, body) = refusal(sent).await;
    assert_eq!((status, challenge.as_str(), &body["id"]), (401, "Bearer", &Value::Null), "{body}");
    assert_eq!(body["error"]["code"], -32001);

    // The API's own routes keep their error body.
    let (status, body) = server.get("/gates", "not-a-token").await;
    assert_eq!(status, 401);
    assert_eq!(body["code"], "unauthorized", "{body}");
    assert!(body.get("jsonrpc").is_none(), "{body}");
}

#[tokio::test]
async fn closing_a_session_is_200_and_closing_it_again_is_404() {
    let server = TestServer::start().await;
    let url = format!("http://{}/mcp", server.server.addr);
    let opened = server
        .http
        .post(&url)
        .bearer_auth(&server.agent)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize(json!(1)))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let close = || {
        server
            .http
            .delete(&url)
            .bearer_auth(&server.agent)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    assert_eq!(close().await.unwrap().status().as_u16(), 200, "a successful termination is 200 OK");
    let again = close().await.unwrap();
    assert_eq!(again.status().as_u16(), 404, "the session has ended");
    let body: Value = again.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains(&session), "{body}");
}

#[tokio::test]
async fn an_agent_asks_over_http_and_the_reviewers_edit_comes_back_with_progress_on_the_way() {
    let server = TestServer::start().await;
    let session = over_http(&server, &server.agent, "claude-code").await;
    let tools = session.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 13, "{:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());
    let decided = reviewer(&server, json!({"action": "edit", "payload": {"replicas": 2}}));
    let result = call(&session, "request_approval", json!({"action": "scale web", "context": {"replicas": 20}})).await;
    let (gate, _) = decided.await.unwrap();
    assert_eq!(gate["payload"], json!({"replicas": 20}));
    assert_eq!(gate["agent"], "deployer", "an agent token's run is its own");
    let outcome = structured(&result);
    assert_eq!(outcome["decision"], "edit", "{}", text(&result));
    assert_eq!(outcome["decided_by"], "alice");
    assert_eq!(outcome["payload"], json!({"replicas": 2}));
    assert!(!session.service().progress.lock().unwrap().is_empty(), "a progress notification while waiting");
    let (status, run) =
        server.get(&format!("/run/{}/status", outcome["run_id"].as_str().unwrap()), &server.agent).await;
    assert_eq!(status, 200, "{run}");
}

#[tokio::test]
async fn a_reviewer_tokens_session_runs_under_the_clients_name_and_another_agent_cannot_see_it() {
    let server = TestServer::start().await;
    let session = over_http(&server, &server.reviewer, "cursor").await;
    let opened = structured(&call(&session, "ask_human", json!({"question": "Which region?", "mode": "async"})).await);
    assert_eq!(opened["status"], "pending");
    let run_id = gatehouse_engine::RunId::from_string(opened["run_id"].as_str().unwrap());
    let run = server.server.state.engine_handle().run(&run_id).unwrap();
    assert_eq!(run.agent, "cursor", "a reviewer token names the run after the client");
    assert!(run.title.contains("cursor 2.0.0"), "{}", run.title);

    let intruder = over_http(&server, &server.other_agent, "intruder").await;
    let peek = call(&intruder, "check_gate", json!({"gate_id": opened["gate_id"]})).await;
    assert_eq!(peek.is_error, Some(true));
    assert_eq!(structured(&peek)["error"], "forbidden", "{}", text(&peek));
}

#[tokio::test]
async fn the_http_backend_delivers_a_decision_within_milliseconds_and_denies_a_permission_with_the_reason() {
    let server = TestServer::start().await;
    let session = over_stdio_backend(&server, &server.agent, "claude-code").await;
    let decided = reviewer(&server, json!({"action": "edit", "payload": {"command": "ls build"}}));
    let asked =
        call(&session, "request_permission", json!({"tool_name": "Bash", "input": {"command": "rm -rf build"}})).await;
    let arrived = Instant::now();
    let (gate, committed) = decided.await.unwrap();
    assert_eq!(gate["payload"], json!({"command": "rm -rf build"}));
    let answer: Value = serde_json::from_str(&text(&asked)).unwrap();
    assert_eq!(answer, json!({"behavior": "allow", "updatedInput": {"command": "ls build"}}));
    let latency = arrived.saturating_duration_since(committed);
    assert!(latency < Duration::from_millis(500), "the decision took {latency:?} to reach the tool");
    assert!(!session.service().progress.lock().unwrap().is_empty());

    let decided = reviewer(&server, json!({"action": "reject", "text": "never on main"}));
    let denied =
        call(&session, "request_permission", json!({"tool_name": "Bash", "input": {"command": "git push -f"}})).await;
    decided.await.unwrap();
    let answer: Value = serde_json::from_str(&text(&denied)).unwrap();
    assert_eq!(answer, json!({"behavior": "deny", "message": "Denied by alice in Gatehouse: never on main"}));
}

#[tokio::test]
async fn the_http_backend_shares_the_plan_with_the_api() {
    let server = TestServer::start().await;
    let session = over_stdio_backend(&server, &server.agent, "planner").await;
    let added = structured(&call(&session, "plan_add_task", json!({"description": "Write the migration"})).await);
    let run = added["run_id"].as_str().unwrap();
    let (status, plan) = server.get(&format!("/runs/{run}/plan"), &server.reviewer).await;
    assert_eq!(status, 200);
    assert_eq!(plan["plan"]["plan"]["tasks"][0]["description"], "Write the migration");
    let read = structured(&call(&session, "plan_read", json!({})).await);
    assert_eq!(read["plan"]["tasks"][0]["task_id"], "task_001");
    let unknown = call(&session, "plan_update_task", json!({"task_id": "task_999", "status": "completed"})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert!(text(&unknown).contains("task_999"), "{}", text(&unknown));
}

/// One sessionless (2026-07-28) `tools/call`, as raw JSON-RPC over HTTP.
async fn sessionless_call(server: &TestServer, token: &str, client: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "ask_human", "arguments": arguments,
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let response = server
        .http
        .post(format!("http://{}/mcp", server.server.addr))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "ask_human")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let text = response.text().await.unwrap();
    // JSON, or an event stream whose last data line is the response.
    let json = text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|l| !l.is_empty());
    let message: Value = serde_json::from_str(json.unwrap_or(&text)).unwrap_or_else(|e| panic!("{e}: {text}"));
    message["result"]["structuredContent"].clone()
}

#[tokio::test]
async fn a_sessionless_client_keeps_one_live_run_per_token_and_client() {
    let server = TestServer::start().await;
    let ask = json!({"question": "Which region?", "mode": "async"});
    let first = sessionless_call(&server, &server.agent, "modern", ask.clone()).await;
    let second = sessionless_call(&server, &server.agent, "modern", ask.clone()).await;
    assert_eq!(first["status"], "pending", "{first}");
    assert_eq!(first["run_id"], second["run_id"]);
    let other_client = sessionless_call(&server, &server.agent, "another", ask.clone()).await;
    assert_ne!(other_client["run_id"], first["run_id"]);
    let run = first["run_id"].as_str().unwrap();
    let (status, body) = server.call(reqwest::Method::DELETE, &format!("/run/{run}"), &server.reviewer, None).await;
    assert_eq!(status, 200, "the reviewer cancels the run: {body}");
    let after = sessionless_call(&server, &server.agent, "modern", ask).await;
    assert_eq!(after["status"], "pending", "{after}");
    assert_ne!(after["run_id"], first["run_id"], "a finished run is not reused");
}

/// An agent token `deployer` with `scope`, made by the admin.
async fn scoped_agent(server: &TestServer, scope: Value) -> String {
    let body = json!({"name": "deployer", "role": "agent", "scope": scope});
    let (status, made) = server.post("/tokens", &server.admin, body).await;
    assert_eq!(status, 201, "{made}");
    made["secret"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_scoped_tokens_session_runs_only_inside_its_scope() {
    let server = TestServer::start().await;
    let run = server.run().await;
    let ask = json!({"question": "Which region?", "mode": "async"});

    // Scoped to one run, its session cannot start a run of its own.
    let by_run = over_http(&server, &scoped_agent(&server, json!({"runs": [run]})).await, "scoped").await;
    let refused = call(&by_run, "ask_human", ask.clone()).await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    assert!(text(&refused).contains("scoped"), "{}", text(&refused));
    let (_, gates) = server.get("/gates", &server.reviewer).await;
    assert_eq!(gates["total"], 0, "nothing was opened");

    // Scoped to its own agent, it can; and it sees the gate it opened.
    let by_agent = over_http(&server, &scoped_agent(&server, json!({"agents": ["deployer"]})).await, "scoped").await;
    let opened = structured(&call(&by_agent, "ask_human", ask).await);
    let peek = call(&by_agent, "check_gate", json!({"gate_id": opened["gate_id"]})).await;
    assert_eq!(peek.is_error, Some(false), "{}", text(&peek));
}
