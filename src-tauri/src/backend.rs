//! The engine and the HTTP server inside the desktop process: the database
//! (the CLI's default place unless `--db`/`GATEHOUSE_DB` names one), the
//! server on a free loopback port on a runtime of its own, and the
//! reviewer token the window signs in with, revoked when the app exits.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use gatehouse_engine::{Engine, EngineConfig, TokenRole};
use gatehouse_server::{RunningServer, ServerConfig};

/// Who creates and revokes the window's token, as the audit log shows it.
const ACTOR: &str = "gatehouse desktop";

/// The running engine and server.
pub struct Backend {
    /// The engine the server and the tray share.
    pub engine: Engine,
    /// Where the server listens (loopback, a port picked at start).
    pub addr: SocketAddr,
    /// The database file.
    pub db: PathBuf,
    runtime: tokio::runtime::Runtime,
    server: RunningServer,
    token_id: String,
    secret: String,
}

impl Backend {
    /// Opens the database and starts the server on `127.0.0.1` with a free
    /// port, serving the UI from `ui_dir` (or where the server finds it),
    /// then creates the window's reviewer token.
    pub fn start(db: PathBuf, ui_dir: Option<PathBuf>) -> Result<Self> {
        if let Some(parent) = db.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).with_context(|| {
                format!("cannot create {}; check its permissions or pass --db PATH", parent.display())
            })?;
        }
        let engine = Engine::open(&db, EngineConfig::default()).with_context(|| {
            format!(
                "cannot open the database at {}; check the path and its permissions, or pass --db PATH",
                db.display()
            )
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .worker_threads(2)
            .thread_name("gatehouse-server")
            .build()
            .context("cannot start the server's async runtime")?;
        let config = ServerConfig { bind: SocketAddr::from(([127, 0, 0, 1], 0)), ui_dir, ..ServerConfig::default() };
        let server = runtime
            .block_on(gatehouse_server::start(engine.clone(), config))
            .context("cannot listen on a loopback port")?;
        let (token, secret) = engine
            .create_token(&reviewer_name(), TokenRole::Reviewer, ACTOR)
            .context("cannot create the window's reviewer token")?;
        Ok(Self { engine, addr: server.addr, db, runtime, server, token_id: token.id, secret })
    }

    /// The address the window opens: the UI, signed in by the fragment
    /// (which never reaches the server and which the page removes at once).
    pub fn window_url(&self) -> String {
        format!("http://{}/#token={}", self.addr, self.secret)
    }

    /// Runs `task` on the server's runtime.
    pub fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        self.runtime.spawn(task);
    }

    /// What revokes the window's token, callable from any thread, any
    /// number of times (after the first it has nothing left to do).
    pub fn revoker(&self) -> impl Fn() + Send + Sync + 'static {
        let (engine, token_id) = (self.engine.clone(), self.token_id.clone());
        move || match engine.revoke_token(&token_id, ACTOR) {
            Ok(_) | Err(gatehouse_engine::EngineError::NotFound { .. }) => {}
            Err(e) => tracing::warn!(error = %e, "cannot revoke the window's token"),
        }
    }

    /// Revokes the window's token and stops the server; long polls still
    /// in flight end here (their agents retry).
    pub fn stop(self) {
        self.revoker()();
        self.server.abort();
        self.runtime.shutdown_timeout(Duration::from_secs(2));
    }
}

/// `--db`, else `GATEHOUSE_DB`, else `gatehouse/gatehouse.db` in the user's
/// data directory: the same rule as the `gatehouse` command, so the CLI and
/// the app share one database by default.
pub fn db_path(flag: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = flag {
        anyhow::ensure!(!path.as_os_str().is_empty(), "--db (or GATEHOUSE_DB) is empty; give a database file path");
        return Ok(path);
    }
    Ok(match dirs::data_dir() {
        Some(dir) => dir.join("gatehouse").join("gatehouse.db"),
        None => PathBuf::from("gatehouse.db"),
    })
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
