//! The operator's tools for team runs (`--team-tools FILE`, or
//! `GATEHOUSE_TEAM_TOOLS`), loaded once for `gatehouse serve` and the
//! desktop app alike: the file read and checked, its MCP servers connected
//! on a runtime of its own (the server's starts later; these sessions
//! outlive it), and closed when the server stops. A bad file is an error
//! naming the file and what is wrong, before anything is served; the
//! desktop app, which a person may start from a menu with no terminal to
//! read, starts without the tools instead and its window says why
//! ([`TeamTools::load_or_leave_out`], read back through `GET /providers`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use gatehouse_engine::redact::{RedactionConfig, Redactor};
use gatehouse_orchestrator::toolbox::{Toolbox, ToolboxConfig};

/// Why the team tools could not be loaded; each message names the file or
/// the setting, in the words `gatehouse serve` and the desktop app both print.
#[derive(Debug, thiserror::Error)]
pub enum TeamToolsError {
    /// The file is missing, unreadable, or not a toolbox file.
    #[error("--team-tools: {0}")]
    Read(String),
    /// A tool is wrong, or an MCP server would not connect.
    #[error("--team-tools {}: {message}", file.display())]
    Load {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No runtime for the MCP sessions.
    #[error("cannot start the team tools' runtime")]
    Runtime(#[source] std::io::Error),
}

impl TeamToolsError {
    /// What is wrong, for a person: the file and the line or field at
    /// fault, with anything that looks like a secret redacted (a parse
    /// error may quote a value of the file).
    pub fn problem(&self) -> String {
        let text = match self {
            Self::Read(message) => message.clone(),
            Self::Load { file, message } => format!("{}: {message}", file.display()),
            Self::Runtime(e) => format!("cannot start the team tools' runtime: {e}"),
        };
        match Redactor::new(&RedactionConfig::default()) {
            Ok(redactor) => redactor.redact_str(&text).into_owned(),
            Err(_) => text,
        }
    }
}

/// The loaded toolbox and the runtime its MCP sessions live on.
pub struct TeamTools {
    /// The toolbox, for [`crate::ServerConfig::team_tools`].
    pub toolbox: Arc<Toolbox>,
    /// None for tools left out: no MCP session to keep.
    runtime: Option<tokio::runtime::Runtime>,
}

impl TeamTools {
    /// Reads and checks `file` and connects its MCP servers; each run's
    /// workspace goes under `workspaces` beside the database `db` unless the
    /// file says where.
    pub fn load(file: &Path, db: &Path) -> Result<Self, TeamToolsError> {
        let config = ToolboxConfig::read(file).map_err(TeamToolsError::Read)?;
        let workspaces = db.parent().unwrap_or(Path::new(".")).join("workspaces");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("gatehouse-team-tools")
            .enable_all()
            .build()
            .map_err(TeamToolsError::Runtime)?;
        let toolbox = runtime
            .block_on(Toolbox::load(config, workspaces))
            .map_err(|message| TeamToolsError::Load { file: file.to_owned(), message })?;
        let names: Vec<String> = toolbox.signatures().into_iter().map(|s| s.name).collect();
        tracing::info!(file = %file.display(), tools = %names.join(", "), "team tools loaded");
        Ok(Self { toolbox: Arc::new(toolbox), runtime: Some(runtime) })
    }

    /// Loads `file` when one is given.
    pub fn load_if(file: Option<&Path>, db: &Path) -> Result<Option<Self>, TeamToolsError> {
        file.map(|f| Self::load(f, db)).transpose()
    }

    /// As [`TeamTools::load_if`], but a bad file does not stop the start:
    /// its tools are left out (a toolbox offering none, which keeps the
    /// problem for `GET /providers` to show) and team runs naming one of
    /// them are refused when they start, saying why.
    pub fn load_or_leave_out(file: Option<&Path>, db: &Path) -> Option<Self> {
        let file = file?;
        Some(Self::load(file, db).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the team tools are left out");
            Self { toolbox: Arc::new(Toolbox::not_loaded(e.problem())), runtime: None }
        }))
    }

    /// Ends the MCP sessions (their stdio programs stop) and the runtime.
    pub fn close(self) {
        self.toolbox.shutdown();
        if let Some(runtime) = self.runtime {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl std::fmt::Debug for TeamTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamTools").field("toolbox", &self.toolbox).finish_non_exhaustive()
    }
}
