//! The operator's tools for team runs (`--team-tools FILE`, or
//! `GATEHOUSE_TEAM_TOOLS`), loaded once for `gatehouse serve` and the
//! desktop app alike: the file read and checked, its MCP servers connected
//! on a runtime of its own (the server's starts later; these sessions
//! outlive it), and closed when the server stops. A bad file is an error
//! naming the file and what is wrong, before anything is served.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

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

/// The loaded toolbox and the runtime its MCP sessions live on.
pub struct TeamTools {
    /// The toolbox, for [`crate::ServerConfig::team_tools`].
    pub toolbox: Arc<Toolbox>,
    runtime: tokio::runtime::Runtime,
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
        Ok(Self { toolbox: Arc::new(toolbox), runtime })
    }

    /// Loads `file` when one is given.
    pub fn load_if(file: Option<&Path>, db: &Path) -> Result<Option<Self>, TeamToolsError> {
        file.map(|f| Self::load(f, db)).transpose()
    }

    /// Ends the MCP sessions (their stdio programs stop) and the runtime.
    pub fn close(self) {
        self.toolbox.shutdown();
        self.runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

impl std::fmt::Debug for TeamTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TeamTools").field("toolbox", &self.toolbox).finish_non_exhaustive()
    }
}
