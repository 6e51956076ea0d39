//! Tools from external MCP servers, for a team's agents: Gatehouse connects
//! as an MCP client (rmcp) to each server the operator configured, over
//! stdio (a command it starts) or streamable HTTP (a URL, with a bearer
//! token read from the environment), discovers its tools when connecting,
//! and offers them to the models as `SERVER.TOOL` with each tool's own
//! input schema. A call goes to the server that owns the tool; its text
//! content (or structured content) is the answer, and a tool's error is
//! answered to the model as an error, never raised.
//!
//! Servers come from the operator's configuration, never from a run's
//! input: an agent cannot make Gatehouse start a program or reach a host.

use std::collections::HashMap;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use gatehouse_providers::text_tools::ToolSignature;

/// How long connecting to a server and listing its tools may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one call may take.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);
/// The most characters of an answer given to a model.
pub const MAX_ANSWER: usize = 64 * 1024;

/// One MCP server the operator configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum McpServerConfig {
    /// A program speaking MCP on its standard input and output.
    Stdio {
        /// The name its tools are offered under (`files` → `files.read`).
        name: String,
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment variables set for it.
        #[serde(default)]
        env: HashMap<String, String>,
    },
    /// A server over streamable HTTP.
    Http {
        /// The name its tools are offered under.
        name: String,
        /// Its endpoint (`https://tools.example.com/mcp`).
        url: String,
        /// The environment variable holding its bearer token, if it needs one.
        #[serde(default)]
        token_env: Option<String>,
    },
}

impl McpServerConfig {
    /// The name its tools are offered under.
    pub fn name(&self) -> &str {
        match self {
            Self::Stdio { name, .. } | Self::Http { name, .. } => name,
        }
    }
}

/// A server that could not be reached or listed, naming it.
#[derive(Debug, thiserror::Error)]
#[error("MCP server `{server}`: {message}")]
pub struct McpToolsError {
    /// The server's configured name.
    pub server: String,
    /// What went wrong.
    pub message: String,
}

type Session = RunningService<RoleClient, ()>;

struct Server {
    name: String,
    session: Session,
}

/// The connected servers and the tools they offer.
pub struct McpTools {
    servers: Vec<Server>,
    /// Offered name → (server index, the server's own tool name).
    routes: HashMap<String, (usize, String)>,
    signatures: Vec<ToolSignature>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools").field("tools", &self.routes.keys().collect::<Vec<_>>()).finish()
    }
}

impl McpTools {
    /// No server and no tool.
    pub fn none() -> Self {
        Self { servers: Vec::new(), routes: HashMap::new(), signatures: Vec::new() }
    }

    /// Connects to every server in `configs` and lists its tools.
    pub async fn connect(configs: &[McpServerConfig]) -> Result<Self, McpToolsError> {
        let mut tools = Self::none();
        for config in configs {
            let fail = |message: String| McpToolsError { server: config.name().to_owned(), message };
            if config.name().is_empty() || config.name().contains('.') {
                return Err(fail("its name must be non-empty and hold no `.`".to_owned()));
            }
            if tools.servers.iter().any(|s| s.name == config.name()) {
                return Err(fail("is configured twice".to_owned()));
            }
            let session = tokio::time::timeout(CONNECT_TIMEOUT, open(config))
                .await
                .map_err(|_| fail(format!("did not answer within {} s", CONNECT_TIMEOUT.as_secs())))?
                .map_err(fail)?;
            let listed = tokio::time::timeout(CONNECT_TIMEOUT, session.list_all_tools())
                .await
                .map_err(|_| fail("did not list its tools in time".to_owned()))?
                .map_err(|e| fail(format!("could not list its tools: {e}")))?;
            let index = tools.servers.len();
            for tool in listed {
                let offered = format!("{}.{}", config.name(), tool.name);
                let description = tool.description.as_deref().unwrap_or_default().lines().next().unwrap_or_default();
                tools.signatures.push(ToolSignature::new(
                    offered.clone(),
                    description,
                    Value::Object(tool.input_schema.as_ref().clone()),
                ));
                tools.routes.insert(offered, (index, tool.name.to_string()));
            }
            tools.servers.push(Server { name: config.name().to_owned(), session });
        }
        Ok(tools)
    }

    /// The tools on offer, as the models are shown them.
    pub fn signatures(&self) -> &[ToolSignature] {
        &self.signatures
    }

    /// Whether `name` is one of them.
    pub fn offers(&self, name: &str) -> bool {
        self.routes.contains_key(name)
    }

    /// Calls `name` with `args`: the answer for the model, or the error to tell it.
    pub async fn call(&self, name: &str, args: &Value) -> Result<String, String> {
        let Some((index, tool)) = self.routes.get(name) else {
            let mut known: Vec<&str> = self.routes.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(format!("there is no MCP tool `{name}`; the MCP tools are {}", known.join(", ")));
        };
        let arguments = match args {
            Value::Object(map) => map.clone(),
            Value::Null => Map::new(),
            _ => return Err(format!("the arguments of `{name}` must be an object")),
        };
        let server = &self.servers[*index];
        let request = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
        let result = tokio::time::timeout(CALL_TIMEOUT, server.session.call_tool(request))
            .await
            .map_err(|_| format!("`{name}` did not answer within {} s", CALL_TIMEOUT.as_secs()))?
            .map_err(|e| format!("`{name}` failed: {e}"))?;
        let text = answer_text(&result);
        if result.is_error == Some(true) {
            Err(format!("`{name}` answered with an error: {text}"))
        } else {
            Ok(text)
        }
    }

    /// Cancels every session without waiting for it to end.
    pub fn cancel_all(&self) {
        for server in &self.servers {
            server.session.cancellation_token().cancel();
        }
    }

    /// Ends every session (a stdio server's program is stopped).
    pub async fn close(self) {
        for server in self.servers {
            let _ = server.session.cancel().await;
        }
    }
}

async fn open(config: &McpServerConfig) -> Result<Session, String> {
    match config {
        McpServerConfig::Stdio { command, args, env, .. } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).kill_on_drop(true);
            let transport = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map(|(transport, _stderr)| transport)
                .map_err(|e| format!("could not start `{command}`: {e}"))?;
            ().serve(transport).await.map_err(|e| format!("did not start an MCP session: {e}"))
        }
        McpServerConfig::Http { url, token_env, .. } => {
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            if let Some(var) = token_env {
                let token = std::env::var(var).map_err(|_| format!("its token variable `{var}` is not set"))?;
                transport_config = transport_config.auth_header(token);
            }
            let transport = StreamableHttpClientTransport::from_config(transport_config);
            ().serve(transport).await.map_err(|e| format!("did not start an MCP session at {url}: {e}"))
        }
    }
}

/// What a call answered, as text: its text blocks, else its structured content.
fn answer_text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
    let text = if texts.is_empty() {
        result.structured_content.as_ref().map(Value::to_string).unwrap_or_default()
    } else {
        texts.join("\n")
    };
    match text.char_indices().nth(MAX_ANSWER) {
        Some((cut, _)) => format!("{}… (cut at {MAX_ANSWER} characters)", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_configs_read_as_stdio_or_http() {
        let configs: Vec<McpServerConfig> = serde_json::from_value(serde_json::json!([
            {"name": "files", "command": "mcp-files", "args": ["--root", "/srv"]},
            {"name": "search", "url": "https://tools.example.com/mcp", "token_env": "SEARCH_TOKEN"}
        ]))
        .unwrap();
        assert!(matches!(&configs[0], McpServerConfig::Stdio { args, .. } if args == &["--root", "/srv"]));
        assert!(matches!(&configs[1], McpServerConfig::Http { token_env: Some(v), .. } if v == "SEARCH_TOKEN"));
        assert_eq!(configs[1].name(), "search");
    }

    #[tokio::test]
    async fn a_server_that_cannot_start_or_a_bad_name_is_named_in_the_error() {
        let missing = McpServerConfig::Stdio {
            name: "ghost".into(),
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: HashMap::new(),
        };
        let e = McpTools::connect(&[missing]).await.unwrap_err();
        assert_eq!(e.server, "ghost");
        assert!(e.message.starts_with("could not start `/nonexistent/mcp-server`"), "{e}");
        let dotted =
            McpServerConfig::Http { name: "a.b".into(), url: "http://127.0.0.1:9/mcp".into(), token_env: None };
        assert!(McpTools::connect(&[dotted]).await.unwrap_err().message.contains("no `.`"));
        let tokenless = McpServerConfig::Http {
            name: "s".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            token_env: Some("GATEHOUSE_NO_SUCH_VAR".into()),
        };
        assert_eq!(
            McpTools::connect(&[tokenless]).await.unwrap_err().message,
            "its token variable `GATEHOUSE_NO_SUCH_VAR` is not set"
        );
    }
}
