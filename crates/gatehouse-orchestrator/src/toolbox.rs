//! The operator's toolbox for team runs: the tools beyond the built-in ones
//! that a team's roles may be granted, read from one configuration file
//! (`serve --team-tools FILE`, YAML or JSON):
//!
//! ```yaml
//! workspaces: /srv/gatehouse/workspaces   # each run gets a directory here (default: beside the database)
//! web_search: https://search.example.com/search
//! mcp_servers:
//!   - {name: files, command: mcp-files, args: [--root, /srv/docs]}
//!   - {name: tickets, url: https://tickets.example.com/mcp, token_env: TICKETS_TOKEN}
//! commands:
//!   - {name: run_tests, description: Run the tests, command: [pytest, -q, -k, "{filter}"], timeout_secs: 600}
//! ```
//!
//! The workspace tools (`create_artifact`, `read_artifact`, `code_search`)
//! are always there; `web_search` when an endpoint is set; each MCP
//! server's tools as `SERVER.TOOL`; each command under its name. A command
//! never runs without a person's approval: [`Toolbox::prepare`] says so and
//! the team loop opens the gate. Everything here is the operator's: a run's
//! input can grant these tools to its roles but never add one.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use gatehouse_providers::text_tools::ToolSignature;

use crate::command_tools::{CommandOutcome, CommandTool};
use crate::mcp_tools::{McpServerConfig, McpTools, McpToolsError};
use crate::web_search::{self, WebSearch};
use crate::workspace::Workspace;

/// The toolbox file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolboxConfig {
    /// Where run workspaces go.
    #[serde(default)]
    pub workspaces: Option<PathBuf>,
    /// A SearXNG-compatible search endpoint.
    #[serde(default)]
    pub web_search: Option<String>,
    /// MCP servers whose tools are offered.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerConfig>,
    /// Command tools.
    #[serde(default)]
    pub commands: Vec<CommandTool>,
}

impl ToolboxConfig {
    /// Reads a toolbox file.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_norway::from_str(&text).map_err(|e| format!("{} is not a toolbox file: {e}", path.display()))
    }
}

/// What a tool call needs before it can run.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// It can run now.
    Ready,
    /// A person must approve this command first (shown as the gate's payload).
    NeedsApproval {
        /// The exact program and arguments that will run.
        argv: Vec<String>,
    },
}

/// The operator's tools, ready to call.
#[derive(Debug)]
pub struct Toolbox {
    workspaces: PathBuf,
    search: Option<WebSearch>,
    mcp: McpTools,
    commands: Vec<CommandTool>,
    /// Why the operator's file was left out ([`Toolbox::not_loaded`]).
    not_loaded: Option<String>,
}

const WORKSPACE_TOOLS: [&str; 3] = ["create_artifact", "read_artifact", "code_search"];

impl Toolbox {
    /// The toolbox `config` describes, its MCP servers connected; run
    /// workspaces under `default_workspaces` unless the file says where.
    pub async fn load(config: ToolboxConfig, default_workspaces: PathBuf) -> Result<Self, String> {
        let search =
            config.web_search.as_deref().map(WebSearch::new).transpose().map_err(|e| format!("web_search: {e}"))?;
        let mut names: Vec<String> = WORKSPACE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
        names.extend(search.as_ref().map(|_| "web_search".to_owned()));
        for command in &config.commands {
            command.check()?;
            if names.contains(&command.name) {
                return Err(format!("command tool `{}` has the name of another tool", command.name));
            }
            names.push(command.name.clone());
        }
        let mcp = McpTools::connect(&config.mcp_servers).await.map_err(|e: McpToolsError| e.to_string())?;
        let workspaces = config.workspaces.unwrap_or(default_workspaces);
        Ok(Self { workspaces, search, mcp, commands: config.commands, not_loaded: None })
    }

    /// A toolbox offering no tool at all, standing for an operator's file
    /// that could not be loaded (the desktop app starts without it and
    /// shows `why` in its window); team runs naming its tools are refused.
    pub fn not_loaded(why: String) -> Self {
        let (workspaces, search, mcp, commands) = (PathBuf::new(), None, McpTools::none(), Vec::new());
        Self { workspaces, search, mcp, commands, not_loaded: Some(why) }
    }

    /// Why the operator's file was left out, if it was.
    pub fn problem(&self) -> Option<&str> {
        self.not_loaded.as_deref()
    }

    /// Every tool it offers, as models are shown them.
    pub fn signatures(&self) -> Vec<ToolSignature> {
        if self.not_loaded.is_some() {
            return Vec::new();
        }
        let mut out = vec![
            ToolSignature::new(
                "create_artifact",
                "Create or overwrite a text file in the run's workspace",
                json!({"type": "object", "required": ["path", "content"], "properties": {
                    "path": {"type": "string"}, "content": {"type": "string"}}}),
            ),
            ToolSignature::new(
                "read_artifact",
                "Read a text file of the run's workspace",
                json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
            ),
            ToolSignature::new(
                "code_search",
                "Find lines holding some text in the workspace's files",
                json!({"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string"}, "path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}}),
            ),
        ];
        if self.search.is_some() {
            out.push(ToolSignature::new(
                "web_search",
                "Search the web for information",
                json!({"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}),
            ));
        }
        out.extend(self.mcp.signatures().iter().cloned());
        out.extend(self.commands.iter().map(CommandTool::signature));
        out
    }

    /// Whether it offers `name`.
    pub fn offers(&self, name: &str) -> bool {
        self.not_loaded.is_none() && self.offers_loaded(name)
    }

    fn offers_loaded(&self, name: &str) -> bool {
        WORKSPACE_TOOLS.contains(&name)
            || (name == "web_search" && self.search.is_some())
            || self.mcp.offers(name)
            || self.commands.iter().any(|c| c.name == name)
    }

    /// Whether `name` acts outside the run (an MCP server's tool), so a
    /// restart must never call it a second time.
    pub fn acts_outside(&self, name: &str) -> bool {
        self.mcp.offers(name)
    }

    /// The run's workspace.
    pub fn workspace(&self, run: &str) -> Result<Workspace, String> {
        Workspace::open(self.workspaces.join(run)).map_err(|e| format!("the run's workspace could not be made: {e}"))
    }

    /// Whether a call can run now or needs a person's approval first; a
    /// command's arguments are checked here.
    pub fn prepare(&self, name: &str, args: &Value) -> Result<Prepared, String> {
        match self.commands.iter().find(|c| c.name == name) {
            Some(command) => Ok(Prepared::NeedsApproval { argv: command.argv(args)? }),
            None if self.offers(name) => Ok(Prepared::Ready),
            None => Err(format!("there is no tool `{name}`")),
        }
    }

    /// Runs a call for run `run`: the answer for the model, or the error to
    /// tell it. A command runs only with `approved_argv`, the argv a person
    /// approved (see [`Toolbox::prepare`]).
    pub async fn call(
        &self,
        run: &str,
        name: &str,
        args: &Value,
        approved_argv: Option<&[String]>,
    ) -> Result<String, String> {
        if let Some(why) = &self.not_loaded {
            return Err(format!("there is no tool `{name}`: the team tools were not loaded ({why})"));
        }
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default();
        match name {
            "create_artifact" => {
                let bytes = self.workspace(run)?.create_artifact(text("path"), text("content"))?;
                Ok(format!("Wrote {bytes} bytes to `{}`.", text("path").trim()))
            }
            "read_artifact" => self.workspace(run)?.read_artifact(text("path")),
            "code_search" => {
                let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(50) as usize;
                let path = Some(text("path")).filter(|p| !p.is_empty());
                let hits = self.workspace(run)?.code_search(text("query"), path, limit)?;
                if hits.is_empty() {
                    return Ok(format!("Nothing in the workspace holds `{}`.", text("query").trim()));
                }
                Ok(hits.iter().map(|h| format!("{}:{}: {}", h.path, h.line, h.text)).collect::<Vec<_>>().join("\n"))
            }
            "web_search" => {
                let search = self.search.as_ref().ok_or("web_search is not set up on this server")?;
                let results = search.search(text("query")).await?;
                Ok(web_search::for_model(text("query").trim(), &results))
            }
            _ if self.mcp.offers(name) => self.mcp.call(name, args).await,
            _ => Ok(self.run_command(run, name, args, approved_argv).await?.for_model()),
        }
    }

    /// Runs command tool `name` for run `run`, only as a person approved
    /// it (`approved_argv` equal to the argv `args` make): what it did.
    pub async fn run_command(
        &self,
        run: &str,
        name: &str,
        args: &Value,
        approved_argv: Option<&[String]>,
    ) -> Result<CommandOutcome, String> {
        let command =
            self.commands.iter().find(|c| c.name == name).ok_or_else(|| format!("there is no tool `{name}`"))?;
        let argv = approved_argv.ok_or_else(|| format!("`{name}` runs only once a person approves it"))?;
        if argv != command.argv(args)? {
            return Err(format!("`{name}` runs only as approved"));
        }
        let workspace = self.workspace(run)?;
        command.run(argv, workspace.root()).await
    }

    /// Ends the MCP sessions.
    pub async fn close(self) {
        self.mcp.close().await;
    }

    /// Ends the MCP sessions of a toolbox still shared (a server shutting
    /// down): their stdio programs are stopped; later calls are answered
    /// with an error.
    pub fn shutdown(&self) {
        self.mcp.cancel_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn toolbox(dir: &Path, yaml: &str) -> Result<Toolbox, String> {
        let config: ToolboxConfig = serde_norway::from_str(yaml).map_err(|e| e.to_string())?;
        Toolbox::load(config, dir.to_owned()).await
    }

    #[tokio::test]
    async fn workspace_tools_work_in_the_runs_own_directory() {
        let dir = tempfile::tempdir().unwrap();
        let tb = toolbox(dir.path(), "{}").await.unwrap();
        let names: Vec<String> = tb.signatures().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["create_artifact", "read_artifact", "code_search"], "no web_search without an endpoint");
        let args = json!({"path": "notes/plan.md", "content": "ship friday\n"});
        assert_eq!(tb.prepare("create_artifact", &args), Ok(Prepared::Ready));
        assert_eq!(
            tb.call("run-a", "create_artifact", &args, None).await.unwrap(),
            "Wrote 12 bytes to `notes/plan.md`."
        );
        assert!(dir.path().join("run-a/notes/plan.md").is_file());
        assert_eq!(
            tb.call("run-a", "code_search", &json!({"query": "FRIDAY"}), None).await.unwrap(),
            "notes/plan.md:1: ship friday"
        );
        assert!(
            tb.call("run-b", "read_artifact", &json!({"path": "notes/plan.md"}), None).await.is_err(),
            "another run's workspace"
        );
        assert_eq!(
            tb.call("run-a", "web_search", &json!({"query": "x"}), None).await.unwrap_err(),
            "web_search is not set up on this server"
        );
        assert_eq!(tb.prepare("web_search", &json!({})).unwrap_err(), "there is no tool `web_search`");
    }

    #[tokio::test]
    async fn a_command_runs_only_as_a_person_approved_it() {
        let dir = tempfile::tempdir().unwrap();
        let tb = toolbox(dir.path(), "commands:\n  - {name: say, description: Say it, command: [echo, \"{word}\"]}\n")
            .await
            .unwrap();
        assert!(tb.offers("say"));
        let args = json!({"word": "hello"});
        let Prepared::NeedsApproval { argv } = tb.prepare("say", &args).unwrap() else {
            panic!("commands need approval")
        };
        assert_eq!(argv, ["echo", "hello"]);
        assert_eq!(tb.call("r", "say", &args, None).await.unwrap_err(), "`say` runs only once a person approves it");
        let other = vec!["echo".to_owned(), "bye".to_owned()];
        assert_eq!(tb.call("r", "say", &args, Some(&other)).await.unwrap_err(), "`say` runs only as approved");
        let out = tb.call("r", "say", &args, Some(&argv)).await.unwrap();
        assert!(out.contains("exited with code 0") && out.contains("hello"), "{out}");
    }

    #[tokio::test]
    async fn a_bad_toolbox_is_refused_naming_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let clash = "commands:\n  - {name: read_artifact, command: [cat]}\n";
        assert_eq!(
            toolbox(dir.path(), clash).await.unwrap_err(),
            "command tool `read_artifact` has the name of another tool"
        );
        assert!(toolbox(dir.path(), "web_search: not a url").await.unwrap_err().contains("is not a URL"));
        assert!(toolbox(dir.path(), "surprise: 1").await.unwrap_err().contains("unknown field `surprise`"));
        let ghost = "mcp_servers:\n  - {name: ghost, command: /nonexistent/server}\n";
        assert!(toolbox(dir.path(), ghost).await.unwrap_err().starts_with("MCP server `ghost`"));
    }

    #[tokio::test]
    async fn a_toolbox_not_loaded_offers_no_tool_and_says_why() {
        let tb = Toolbox::not_loaded("tools.yaml: line 2: unknown field `surprise`".into());
        assert_eq!(tb.problem(), Some("tools.yaml: line 2: unknown field `surprise`"));
        assert!(tb.signatures().is_empty());
        assert!(!tb.offers("create_artifact"));
        assert_eq!(tb.prepare("create_artifact", &json!({})).unwrap_err(), "there is no tool `create_artifact`");
        let refused = tb.call("r", "read_artifact", &json!({"path": "a"}), None).await.unwrap_err();
        assert!(refused.contains("the team tools were not loaded (tools.yaml: line 2"), "{refused}");
    }
}
