//! Which server the window reviews: this computer's (the engine and server
//! inside the app) or a team server (`gatehouse serve` elsewhere, reached
//! by its address, with a reviewer token kept in the OS keychain). One
//! [`Server`] says where the window, the tray's count and the
//! notifications go; switching replaces it and everything follows.
//!
//! This computer's server runs only while it is the one reviewed: a team
//! server is used instead of it, and the app starts it again to switch
//! back, or when the team server cannot be reached at start (with a notice
//! saying why, never a blank window).

pub mod check;
pub mod config;
pub mod keychain;
pub mod page;
pub mod server;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde::Serialize;
use tauri::async_runtime::JoinHandle;
use tauri::{AppHandle, Manager, Runtime};

use crate::backend::{Backend, Options};
use crate::{alerts, window};
use check::{CheckCode, CheckError, TeamUrl};
use config::{Choice, ConfigFile, Settings};
use keychain::Keychain;
use server::{Place, Server, NOTICE_TEAM_UNAVAILABLE};

/// What starting this computer's server needs.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The database file.
    pub db: PathBuf,
    /// The UI build to serve, when the app carries one.
    pub ui_dir: Option<PathBuf>,
    /// Start the welcome runs in a new database.
    pub welcome: bool,
    /// The operator's toolbox file for team runs (`--team-tools`, `GATEHOUSE_TEAM_TOOLS`).
    pub team_tools: Option<PathBuf>,
}

/// The connection, managed by the app: the server reviewed now, and what
/// switching needs.
pub struct Connection {
    launch: Launch,
    config: ConfigFile,
    keychain: Keychain,
    http: reqwest::Client,
    /// The server reviewed now, read by anyone at any time.
    current: RwLock<Option<Server>>,
    /// Why the app is not on the team server its settings name, if so.
    notice: RwLock<Option<String>>,
    /// Held for a whole switch, so two never interleave.
    live: tokio::sync::Mutex<Live>,
}

/// What runs for the current server.
#[derive(Default)]
struct Live {
    embedded: Option<Backend>,
    follower: Option<JoinHandle<()>>,
}

/// What the connection page shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// Where the window's server is.
    pub place: Place,
    /// "This computer" or "Team: host".
    pub label: String,
    /// The window's server's origin.
    pub origin: String,
    /// Who decisions are recorded as.
    pub reviewer: String,
    /// The team server last connected to, offered again.
    pub team_url: Option<String>,
    /// Whether the keychain holds a token for `team_url`.
    pub saved_token: bool,
    /// Why the app is on this computer although its settings name a team server.
    pub notice: Option<String>,
}

impl Connection {
    /// The connection for an app whose settings live in `config_dir` and
    /// whose keychain entries are named by `identifier`.
    pub fn new(launch: Launch, config_dir: &std::path::Path, identifier: &str) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(check::CHECK_TIMEOUT)
            .pool_idle_timeout(gatehouse_client::POOL_IDLE_TIMEOUT)
            .build()
            .map_err(|e| anyhow::anyhow!("cannot make an HTTP client: {e}"))?;
        Ok(Self {
            launch,
            config: ConfigFile::in_dir(config_dir),
            keychain: Keychain::new(identifier),
            http,
            current: RwLock::new(None),
            notice: RwLock::new(None),
            live: tokio::sync::Mutex::new(Live::default()),
        })
    }

    /// The server reviewed now.
    pub fn current(&self) -> Option<Server> {
        self.current.read().ok()?.clone()
    }

    /// At start: the team server the settings name, checked with the
    /// keychain's token; else, or when that fails, this computer's server
    /// (with the reason kept for the connection page). Returns the
    /// server and the notice for the page.
    pub async fn start<R: Runtime>(&self, app: &AppHandle<R>) -> anyhow::Result<(Server, Option<&'static str>)> {
        let failure = match self.config.load() {
            Ok(Settings { server: Choice::Team, team_url, .. }) => match self.saved_team(team_url.as_deref()).await {
                Ok(server) => {
                    self.follow(app, server.clone(), &mut *self.live.lock().await);
                    announce(&server);
                    return Ok((server, None));
                }
                Err(why) => Some(why),
            },
            Ok(_) => None,
            Err(why) => Some(why),
        };
        if let Some(why) = &failure {
            tracing::warn!(reason = %why, "reviewing this computer's server instead");
            *self.notice.write().map_err(|_| anyhow::anyhow!("the connection state is poisoned"))? = Some(why.clone());
        }
        let mut live = self.live.lock().await;
        let server = self.start_embedded(&mut live).await.map_err(|e| anyhow::anyhow!(e.message))?;
        self.follow(app, server.clone(), &mut live);
        Ok((server, failure.map(|_| NOTICE_TEAM_UNAVAILABLE)))
    }

    /// The team server in the settings, with its token from the keychain, checked.
    async fn saved_team(&self, team_url: Option<&str>) -> Result<Server, String> {
        let url = TeamUrl::parse(team_url.unwrap_or_default())
            .map_err(|e| format!("The settings name no usable team server ({})", e.message))?;
        let keychain = self.keychain.clone();
        let lookup = url.clone();
        let token = tauri::async_runtime::spawn_blocking(move || keychain.token(&lookup))
            .await
            .map_err(|e| format!("The keychain lookup failed: {e}"))?
            .map_err(|e| format!("Cannot read the token for {url} from the keychain: {e}"))?
            .ok_or_else(|| {
                format!("The keychain holds no token for {url} any more; connect again with a reviewer token")
            })?;
        let reviewer = check::check(&self.http, &url, &token)
            .await
            .map_err(|e| format!("Could not connect to the team server: {}", e.message))?;
        Ok(Server::team(&url, token, &reviewer))
    }

    /// Checks the team server at `url` with `token` (or the keychain's,
    /// when `token` is blank), keeps the token in the keychain and the
    /// address in the settings, and switches the window to it.
    pub async fn connect_team<R: Runtime>(
        &self,
        app: &AppHandle<R>,
        url: &str,
        token: &str,
    ) -> Result<Status, CheckError> {
        let url = TeamUrl::parse(url)?;
        let token = match token.trim() {
            "" => self
                .keychain_call(url.clone(), |k, u| k.token(&u))
                .await?
                .ok_or_else(|| CheckError::new(CheckCode::NoToken, format!("Enter a reviewer token for {url}.")))?,
            given => given.to_owned(),
        };
        let reviewer = check::check(&self.http, &url, &token).await?;
        let saved = token.clone();
        self.keychain_call(url.clone(), move |k, u| k.save(&u, &saved)).await?;
        self.save(Choice::Team, Some(url.origin()))?;
        let server = Server::team(&url, token, &reviewer);
        let mut live = self.live.lock().await;
        // Unfollowed first, so the stream's end is no failure to report.
        if let Some(previous) = live.follower.take() {
            previous.abort();
        }
        if let Some(embedded) = live.embedded.take() {
            // Its window token is revoked as it stops.
            let _ = tauri::async_runtime::spawn_blocking(move || embedded.stop()).await;
        }
        self.clear_notice();
        self.follow(app, server.clone(), &mut live);
        drop(live);
        announce(&server);
        self.show(app, &server);
        Ok(self.status().await)
    }

    /// Switches the window back to this computer's server, starting it,
    /// and remembers that choice (the team's address and token are kept).
    pub async fn use_this_computer<R: Runtime>(&self, app: &AppHandle<R>) -> Result<Status, CheckError> {
        let team_url = self.config.load().ok().and_then(|s| s.team_url);
        self.save(Choice::ThisComputer, team_url)?;
        self.clear_notice();
        let mut live = self.live.lock().await;
        let server = match (&live.embedded, self.current()) {
            (Some(_), Some(current)) if current.place == Place::ThisComputer => current,
            _ => self.start_embedded(&mut live).await?,
        };
        self.follow(app, server.clone(), &mut live);
        drop(live);
        self.show(app, &server);
        Ok(self.status().await)
    }

    /// Forgets the team server: its token leaves the keychain and its
    /// address the settings; the window moves to this computer's server.
    pub async fn forget_team<R: Runtime>(&self, app: &AppHandle<R>) -> Result<Status, CheckError> {
        if let Some(url) = self.config.load().ok().and_then(|s| s.team_url).and_then(|u| TeamUrl::parse(&u).ok()) {
            self.keychain_call(url, |k, u| k.forget(&u)).await?;
        }
        self.save(Choice::ThisComputer, None)?;
        self.use_this_computer(app).await
    }

    /// What the connection page shows.
    pub async fn status(&self) -> Status {
        let current = self.current();
        let team_url = self.config.load().ok().and_then(|s| s.team_url);
        let saved_token = match team_url.as_deref().map(TeamUrl::parse) {
            Some(Ok(url)) => self.keychain_call(url, |k, u| k.token(&u)).await.is_ok_and(|t| t.is_some()),
            _ => false,
        };
        Status {
            place: current.as_ref().map_or(Place::ThisComputer, |s| s.place),
            label: current.as_ref().map_or_else(|| "Not connected".to_owned(), Server::label),
            origin: current.as_ref().map(|s| s.origin.clone()).unwrap_or_default(),
            reviewer: current.as_ref().map(|s| s.reviewer.clone()).unwrap_or_default(),
            team_url,
            saved_token,
            notice: self.notice.read().ok().and_then(|n| n.clone()),
        }
    }

    /// Shows the current server's UI in the window (leaving the connection page).
    pub fn show_reviews<R: Runtime>(&self, app: &AppHandle<R>) {
        if let Some(server) = self.current() {
            self.show(app, &server);
        }
    }

    /// Stops this computer's server, if it runs (revoking the window's
    /// token), and the follower. For the app's exit, from a thread that may block.
    pub fn stop(&self) {
        let mut live = self.live.blocking_lock();
        if let Some(follower) = live.follower.take() {
            follower.abort();
        }
        if let Some(embedded) = live.embedded.take() {
            embedded.stop();
        }
    }

    async fn start_embedded(&self, live: &mut Live) -> Result<Server, CheckError> {
        if let Some(embedded) = &live.embedded {
            return Ok(embedded.server());
        }
        let (launch, keychain) = (self.launch.clone(), self.keychain.clone());
        let settings = self.config.load().unwrap_or_default();
        let (retention_days, alerts) = (settings.retention_days, settings.alerts.unwrap_or_default());
        let started = tauri::async_runtime::spawn_blocking(move || {
            let key = keychain.audit_key(&launch.db).and_then(|k| gatehouse_engine::event::AuditKey::from_text(&k));
            let key = key
                .inspect_err(
                    |e| tracing::warn!(error = %e, "the audit log is not keyed: no audit key from the keychain"),
                )
                .ok();
            let options = Options {
                welcome: launch.welcome,
                audit_key: key,
                retention_days,
                alerts,
                team_tools: launch.team_tools,
            };
            Backend::start(launch.db, launch.ui_dir, options)
        })
        .await
        .map_err(|e| CheckError::new(CheckCode::ThisComputer, format!("This computer's server failed: {e}")))?
        .map_err(|e| {
            CheckError::new(CheckCode::ThisComputer, format!("This computer's server did not start: {e:#}"))
        })?;
        // Scripts and tests read this line to find the server.
        println!("Gatehouse listening on http://{} (database {})", started.addr, started.db.display());
        let _ = std::io::stdout().flush();
        let server = started.server();
        live.embedded = Some(started);
        Ok(server)
    }

    /// Makes `server` the current one and follows its events (the tray's
    /// count, notifications) instead of the previous one's.
    fn follow<R: Runtime>(&self, app: &AppHandle<R>, server: Server, live: &mut Live) {
        if let Some(previous) = live.follower.take() {
            previous.abort();
        }
        live.follower = Some(alerts::follow(app.clone(), self.http.clone(), server.clone()));
        if let Ok(mut current) = self.current.write() {
            *current = Some(server);
        }
    }

    fn show<R: Runtime>(&self, app: &AppHandle<R>, server: &Server) {
        window::show(app, &server.window_url(None), &server.label());
    }

    fn save(&self, server: Choice, team_url: Option<String>) -> Result<(), CheckError> {
        self.config.save_choice(server, team_url).map_err(|e| CheckError::new(CheckCode::Settings, e))
    }

    fn clear_notice(&self) {
        if let Ok(mut notice) = self.notice.write() {
            *notice = None;
        }
    }

    /// Runs a keychain call on a blocking thread (the platform's store may block).
    async fn keychain_call<T: Send + 'static>(
        &self,
        url: TeamUrl,
        call: impl FnOnce(&Keychain, TeamUrl) -> Result<T, String> + Send + 'static,
    ) -> Result<T, CheckError> {
        let keychain = self.keychain.clone();
        tauri::async_runtime::spawn_blocking(move || call(&keychain, url))
            .await
            .map_err(|e| CheckError::new(CheckCode::Keychain, format!("The keychain call failed: {e}")))?
            .map_err(|e| CheckError::new(CheckCode::Keychain, format!("Cannot use the keychain: {e}")))
    }
}

/// Scripts and tests read this line to know the team server is in use.
fn announce(server: &Server) {
    println!("Gatehouse reviewing the team server {} as {}", server.origin, server.reviewer);
    let _ = std::io::stdout().flush();
}

/// The connection from the app's state.
pub fn of<R: Runtime>(app: &AppHandle<R>) -> Option<Arc<Connection>> {
    app.try_state::<Arc<Connection>>().map(|c| Arc::clone(&c))
}
