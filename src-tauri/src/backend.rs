//! This computer's server: the engine and the HTTP server inside the
//! desktop process, hosted as `gatehouse serve` hosts them
//! (`gatehouse_server::host`): the database (the CLI's default place unless
//! `--db`/`GATEHOUSE_DB` names one), the server on a free loopback port on
//! a runtime of its own, the operator's team tools (`--team-tools FILE`,
//! loaded as `gatehouse serve` loads them, except that a bad file leaves
//! them out and the window says why), and the reviewer token the
//! window signs in with, revoked when the app exits or switches to a team server.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use gatehouse_engine::event::AuditKey;
use gatehouse_engine::{Database, Engine, EngineConfig, TokenRole};
use gatehouse_server::host::Host;
use gatehouse_server::team_tools::TeamTools;
use gatehouse_server::{ProviderRegistry, ServerConfig};

use crate::connection::server::Server;

/// Who creates and revokes the window's token, as the audit log shows it.
const ACTOR: &str = "gatehouse desktop";

/// The running engine and server.
pub struct Backend {
    /// The engine the server runs on.
    pub engine: Engine,
    /// Where the server listens (loopback, a port picked at start).
    pub addr: SocketAddr,
    /// The database file.
    pub db: PathBuf,
    host: Host,
    team_tools: Option<TeamTools>,
    token_id: String,
    secret: String,
    reviewer: String,
}

/// How this computer's server starts, beside its database and UI.
#[derive(Debug, Default)]
pub struct Options {
    /// On first start (no database yet), start the welcome runs.
    pub welcome: bool,
    /// The keychain's audit key: the event log's chain is keyed with it.
    pub audit_key: Option<AuditKey>,
    /// Ended runs older than this many days are purged daily.
    pub retention_days: Option<u32>,
    /// The thresholds the server raises alerts at (from `connection.json`).
    pub alerts: gatehouse_server::alerts::AlertConfig,
    /// The operator's toolbox file for team runs.
    pub team_tools: Option<PathBuf>,
}

impl Backend {
    /// Loads the team tools (a bad file leaves them out: the app starts
    /// without them and the window's banner names the file and what is
    /// wrong, since a person who starts the app from a menu never sees
    /// stderr; team runs naming one of them are refused), opens the
    /// database and starts the server on `127.0.0.1` with a free port,
    /// serving the UI from `ui_dir` (or where the server finds it), then
    /// creates the window's reviewer token. On first start (no database
    /// yet) and with `welcome`, starts the welcome runs.
    pub fn start(db: PathBuf, ui_dir: Option<PathBuf>, options: Options) -> Result<Self> {
        let Options { welcome, audit_key, retention_days, alerts, team_tools } = options;
        let team_tools = TeamTools::load_or_leave_out(team_tools.as_deref(), &db);
        let first_start = !db.exists();
        let providers = ProviderRegistry::from_env()
            .context("the model provider configuration (GATEHOUSE_*_ environment variables)")?;
        let config = ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            ui_dir,
            providers,
            retention_days,
            alerts,
            team_tools: team_tools.as_ref().map(|t| std::sync::Arc::clone(&t.toolbox)),
            ..ServerConfig::default()
        };
        // The store makes the database's directory readable only by this user.
        let engine = EngineConfig { audit_key, ..EngineConfig::default() };
        let host = Host::open(&Database::Sqlite(db.clone()), engine, config, Some(2))?;
        let engine = host.engine.clone();
        let reviewer = reviewer_name();
        let (token, secret) = engine
            .create_token(&reviewer, TokenRole::Reviewer, ACTOR)
            .context("cannot create the window's reviewer token")?;
        if first_start && welcome {
            // A new database: orchestrated runs with the scripted provider,
            // waiting for a first review, show what Gatehouse does.
            let orchestrator = std::sync::Arc::clone(&host.server.state.orchestrator);
            host.runtime().spawn(async move {
                if let Err(e) = orchestrator.start_welcome(ACTOR).await {
                    tracing::warn!(error = %e, "cannot start the welcome runs");
                }
            });
        }
        Ok(Self { engine, addr: host.server.addr, db, host, team_tools, token_id: token.id, secret, reviewer })
    }

    /// The server as the window, the tray and notifications reach it:
    /// its loopback origin and the window's reviewer token.
    pub fn server(&self) -> Server {
        Server::this_computer(format!("http://{}", self.addr), self.secret.clone(), self.reviewer.clone())
    }

    /// Revokes the window's token and stops the server; long polls still
    /// in flight end here (their agents retry).
    pub fn stop(self) {
        match self.engine.revoke_token(&self.token_id, ACTOR) {
            Ok(_) | Err(gatehouse_engine::EngineError::NotFound { .. }) => {}
            Err(e) => tracing::warn!(error = %e, "cannot revoke the window's token"),
        }
        self.host.stop(Duration::from_secs(2));
        if let Some(tools) = self.team_tools {
            tools.close();
        }
    }
}

/// `--db`, else `GATEHOUSE_DB`, else `gatehouse/gatehouse.db` in the user's
/// data directory: the same rule as the `gatehouse` command (both ask
/// `gatehouse_server::host`), so the CLI and the app share one database by default.
pub fn db_path(flag: Option<PathBuf>) -> Result<PathBuf> {
    Ok(gatehouse_server::host::database_path(flag)?)
}

/// The name decisions made in the window are recorded under: the login
/// name, so the audit log says which person decided.
fn reviewer_name() -> String {
    ["USER", "USERNAME", "LOGNAME"]
        .into_iter()
        .filter_map(|var| std::env::var(var).ok())
        .map(|name| name.trim().to_owned())
        .find(|name| !name.is_empty() && name.len() <= 100)
        .unwrap_or_else(|| "desktop reviewer".to_owned())
}

/// The UI build bundled with an installed app (`ui/` in its resources),
/// when it holds an `index.html`; otherwise the server's own search.
pub fn bundled_ui(resource_dir: Option<&Path>) -> Option<PathBuf> {
    if std::env::var_os(gatehouse_server::ui::UI_DIR_ENV).is_some() {
        return None;
    }
    resource_dir.map(|dir| dir.join("ui")).filter(|dir| dir.join("index.html").is_file())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use gatehouse_engine::{GateFilter, RunFilter};

    use super::{Backend, Options};

    fn welcome() -> Options {
        Options { welcome: true, ..Options::default() }
    }

    fn welcome_runs(backend: &Backend, want: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let runs = backend.engine.runs(&RunFilter::default()).unwrap();
            let gates = backend.engine.gates(&GateFilter::pending()).unwrap();
            // Each welcome run waits at its first review once its driver got there.
            if (runs.len() >= want && gates.len() >= want) || Instant::now() > deadline {
                assert!(runs.iter().all(|r| r.agent == "gatehouse" && r.title.starts_with("Welcome: ")), "{runs:?}");
                return runs.len();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_first_start_brings_two_welcome_runs_and_a_later_start_none() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("new.db");
        let first = Backend::start(db.clone(), None, welcome()).unwrap();
        assert_eq!(welcome_runs(&first, 2), 2);
        let kinds: Vec<String> =
            first.engine.gates(&GateFilter::pending()).unwrap().iter().map(|g| g.kind().as_str().to_owned()).collect();
        assert!(kinds.contains(&"payload_review".to_owned()) && kinds.contains(&"goal_review".to_owned()), "{kinds:?}");
        first.stop();
        let again = Backend::start(db, None, welcome()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(again.engine.runs(&RunFilter::default()).unwrap().len(), 2, "no second welcome");
        again.stop();

        let quiet = Backend::start(dir.path().join("quiet.db"), None, Options::default()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(quiet.engine.runs(&RunFilter::default()).unwrap().is_empty());
        quiet.stop();
    }

    #[test]
    fn the_team_tools_file_is_loaded_as_serve_loads_it_and_a_bad_one_is_left_out_saying_why() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad-tools.yaml");
        std::fs::write(&bad, "commands:\n  - {name: lint, command: [true], shell: bash}\n").unwrap();
        let options = Options { team_tools: Some(bad.clone()), ..Options::default() };
        let backend = Backend::start(dir.path().join("bad.db"), None, options).expect("the app starts without them");
        let toolbox = backend.host.server.state.orchestrator.toolbox().expect("a toolbox standing for the file");
        assert!(toolbox.signatures().is_empty(), "no tool of a bad file is offered");
        let problem = toolbox.problem().expect("why they were left out");
        assert!(problem.starts_with(&format!("{} is not a toolbox file", bad.display())), "{problem}");
        assert!(problem.contains("unknown field `shell`"), "{problem}");
        backend.stop();

        let file = dir.path().join("tools.yaml");
        std::fs::write(&file, "commands:\n  - {name: lint, description: Lint the code, command: [true]}\n").unwrap();
        let options = Options { team_tools: Some(file), ..Options::default() };
        let backend = Backend::start(dir.path().join("tools.db"), None, options).unwrap();
        let toolbox = backend.host.server.state.orchestrator.toolbox().expect("the toolbox is the server's");
        assert_eq!(toolbox.problem(), None);
        let names: Vec<String> = toolbox.signatures().into_iter().map(|s| s.name).collect();
        assert!(names.contains(&"lint".to_owned()) && names.contains(&"create_artifact".to_owned()), "{names:?}");
        backend.stop();
    }
}
