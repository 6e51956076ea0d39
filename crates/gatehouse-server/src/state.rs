//! Shared server state: the engine, the configuration, gate waiters and
//! the token cache. Engine calls are synchronous, so handlers run them on
//! the blocking pool through [`AppState::engine`] and never stall the runtime.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gatehouse_engine::{Engine, EngineError, Token};
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::ProviderRegistry;

use crate::admission::Admission;
use crate::connections::ConnectionLimits;
use crate::error::{ApiError, ApiResult};
use crate::tls::TlsConfig;
use crate::waiters::Waiters;
use crate::webhook::Webhooks;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where it listens.
    pub bind: SocketAddr,
    /// Largest accepted request body, bytes (default 1 MiB).
    pub body_limit: usize,
    /// Default webhook for new sync gates (`GATEHOUSE_WEBHOOK_URL`).
    pub webhook_url: Option<String>,
    /// Extra host names accepted in `Host` (besides loopback, the bound
    /// address and the public URL's host).
    pub allowed_hosts: Vec<String>,
    /// The base URL links point at; defaults to `http://{bind}` (`https://`
    /// with TLS). Its host is accepted in `Host`, and browsers may call
    /// from its origin.
    pub public_url: Option<String>,
    /// Browser origins accepted besides the server's own and the public
    /// URL's (`https://ui.example.com`).
    pub allowed_origins: Vec<String>,
    /// Serve HTTPS only, with this certificate; `None` serves plain HTTP.
    pub tls: Option<TlsConfig>,
    /// The reviewer UI's build; `None` looks in the usual places ([`crate::ui::find_ui_dir`]).
    pub ui_dir: Option<std::path::PathBuf>,
    /// The model providers orchestrated runs use; by default only the
    /// scripted demo provider (`ProviderRegistry::from_env` adds the configured ones).
    pub providers: ProviderRegistry,
    /// How many connections are served at once and how long slow or idle
    /// clients are waited for.
    pub connections: ConnectionLimits,
    /// The review people set for agents (`serve --oversight FILE`): the
    /// least review an agent's runs and gates get; agents may ask for more.
    pub oversight: gatehouse_engine::Oversight,
    /// Let a token decide the gates it opened (the single-user desktop
    /// app, `serve --allow-self-review`); such decisions are marked
    /// `self_decided`. Off: a gate is decided by someone other than who asked.
    pub allow_self_review: bool,
    /// Also accept the token as `?access_token=` on `GET /events`, for
    /// plain `EventSource` clients, which cannot send headers (off: a token
    /// in a URL ends up in proxy and access logs).
    pub allow_query_token: bool,
    /// Purge ended runs older than this many days, at start and then daily
    /// (`serve --retention-days N`); `None` keeps everything.
    pub retention_days: Option<u32>,
    /// Serve `GET /metrics` without a token (`serve --metrics-public`), for
    /// a scraper on a trusted network; off, any valid token may read it.
    pub metrics_public: bool,
    /// Alert thresholds and SLA targets (`serve --alert-*`, `--sla-*`); no alert by default.
    pub alerts: crate::alerts::AlertConfig,
    /// The operator's tools team runs may grant their agents (`serve --team-tools FILE`), loaded.
    pub team_tools: Option<Arc<gatehouse_orchestrator::toolbox::Toolbox>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 7777)),
            body_limit: 1024 * 1024,
            webhook_url: None,
            allowed_hosts: Vec::new(),
            public_url: None,
            allowed_origins: Vec::new(),
            tls: None,
            ui_dir: None,
            providers: ProviderRegistry::from_lookup(|_| None).unwrap_or_default(),
            connections: ConnectionLimits::default(),
            oversight: gatehouse_engine::Oversight::default(),
            allow_self_review: false,
            allow_query_token: false,
            retention_days: None,
            metrics_public: false,
            alerts: crate::alerts::AlertConfig::default(),
            team_tools: None,
        }
    }
}

/// Everything handlers share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    engine: Engine,
    /// The configuration, with `bind` set to the address actually bound.
    pub config: Arc<ServerConfig>,
    /// Agents long-polling for gates.
    pub waiters: Arc<Waiters>,
    /// Webhook delivery.
    pub webhooks: Arc<Webhooks>,
    /// The hosts and origins the guard accepts, from the config.
    pub admission: Arc<Admission>,
    /// Which alerts are up (evaluations take turns under this lock).
    pub alerts: Arc<tokio::sync::Mutex<crate::alerts::AlertBook>>,
    /// Recordings being replayed into their event streams.
    pub replays: Arc<crate::replay::Replays>,
    /// Drives orchestrated runs (provider runs, goal and plan collaboration).
    pub orchestrator: Arc<Orchestrator>,
    tokens: Arc<Mutex<HashMap<String, (Token, Instant)>>>,
    /// Bounds engine calls in flight: thousands of waiting requests then
    /// queue here instead of each holding a blocking thread and a reader.
    engine_slots: Arc<tokio::sync::Semaphore>,
}

/// Engine calls run at once on the blocking pool; more wait their turn.
/// SQLite serialises writes anyway, and reads gain nothing past a few per core.
pub const ENGINE_CONCURRENCY: usize = 16;

/// How long an authenticated token is trusted before it is looked up again
/// (revocations through this server take effect at once; through another
/// process within this time).
const TOKEN_CACHE_TTL: Duration = Duration::from_secs(5);

impl AppState {
    /// State over `engine`.
    pub fn new(engine: Engine, config: ServerConfig) -> Self {
        let orchestrator =
            Orchestrator::with_toolbox(engine.clone(), config.providers.clone(), config.team_tools.clone());
        let config = Arc::new(config);
        Self {
            orchestrator,
            waiters: Arc::new(Waiters::default()),
            webhooks: Arc::new(Webhooks::new(config.webhook_url.clone())),
            admission: Arc::new(Admission::new(
                config.bind.ip(),
                config.public_url.as_deref(),
                &config.allowed_hosts,
                &config.allowed_origins,
            )),
            engine,
            config,
            alerts: Arc::default(),
            replays: Arc::default(),
            tokens: Arc::default(),
            engine_slots: Arc::new(tokio::sync::Semaphore::new(ENGINE_CONCURRENCY)),
        }
    }

    /// Runs a synchronous engine call on the blocking pool.
    pub async fn engine<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine) -> Result<T, EngineError> + Send + 'static,
    {
        let engine = self.engine.clone();
        let slot = Arc::clone(&self.engine_slots)
            .acquire_owned()
            .await
            .map_err(|_| ApiError::internal("the engine is shutting down"))?;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            f(&engine)
        })
        .await
        .map_err(|e| ApiError::internal(format!("engine task failed: {e}")))?
        .map_err(ApiError::from)
    }

    /// Like [`AppState::engine`], for work that may refuse the caller (an
    /// [`ApiError`] such as a run outside its scope) as well as fail.
    pub async fn engine_checked<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine) -> ApiResult<T> + Send + 'static,
    {
        self.engine(move |e| Ok(f(e))).await?
    }

    /// Hands `submit` the engine and a sender for its answer, for an engine
    /// call that answers through a callback (`Engine::open_gate_then`,
    /// `Engine::resolve_gate_then`). `submit` runs here: it checks the
    /// request and queues its write, and the store's writer answers this
    /// task directly, with no blocking-pool thread parked in between; on
    /// SQLite, a write that finds the store idle is committed here instead,
    /// holding this worker for that one commit, and answered at once.
    pub async fn engine_then<T, F>(&self, submit: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Engine, tokio::sync::oneshot::Sender<T>) + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        submit(&self.engine, answer);
        answered.await.map_err(|_| ApiError::internal("the engine dropped its answer"))
    }

    /// The engine itself, for callers already on a blocking thread.
    pub fn engine_handle(&self) -> &Engine {
        &self.engine
    }

    /// The base URL for links (webhooks, event streams), without a trailing `/`.
    pub fn public_url(&self) -> String {
        let scheme = if self.config.tls.is_some() { "https" } else { "http" };
        match &self.config.public_url {
            Some(url) => url.trim().trim_end_matches('/').to_owned(),
            None => format!("{scheme}://{}", self.config.bind),
        }
    }

    /// The live token for a secret, from the cache or the store.
    pub async fn authenticate(&self, secret: &str) -> ApiResult<Option<Token>> {
        if let Ok(cache) = self.tokens.lock() {
            if let Some((token, at)) = cache.get(secret) {
                if at.elapsed() < TOKEN_CACHE_TTL {
                    return Ok(Some(token.clone()));
                }
            }
        }
        let owned = secret.to_owned();
        let token = self.engine(move |e| e.authenticate(&owned)).await?;
        if let (Some(token), Ok(mut cache)) = (&token, self.tokens.lock()) {
            if cache.len() > 10_000 {
                cache.clear();
            }
            cache.insert(secret.to_owned(), (token.clone(), Instant::now()));
        }
        Ok(token)
    }

    /// Forgets cached tokens (after a revocation).
    pub fn forget_tokens(&self) {
        if let Ok(mut cache) = self.tokens.lock() {
            cache.clear();
        }
    }
}
