//! The Gatehouse HTTP API: one axum server for agents, the reviewer UI and
//! tests. REST under `/api/hitl`, live events as Server-Sent Events,
//! long-poll waits, webhooks, bearer tokens with roles and scopes, an
//! OpenAPI document generated from the handlers themselves, and the MCP
//! tools at `/mcp`; over HTTPS when given a certificate.

use std::net::SocketAddr;

use axum::extract::DefaultBodyLimit;
use axum::Router;
use gatehouse_engine::Engine;
use tokio::net::TcpListener;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

pub mod abandoned;
pub mod admission;
pub mod alerts;
pub mod auth;
pub mod connections;
pub mod error;
pub mod host;
pub mod json;
pub mod markdown;
pub mod mcp;
pub mod operations;
pub mod params;
pub mod replay;
pub mod retention;
pub mod routes;
pub mod state;
pub mod team_tools;
pub mod tls;
pub mod ui;
pub mod waiters;
pub mod webhook;

pub use connections::ConnectionLimits;
pub use error::{ApiError, ApiErrorCode};
pub use gatehouse_providers::ProviderRegistry;
pub use state::{AppState, ServerConfig};
pub use tls::{TlsConfig, TlsError};

#[derive(OpenApi)]
#[openapi(
    info(title = "Gatehouse API", description = "Human-in-the-loop gates for AI agents: agents ask, reviewers decide."),
    components(schemas(error::ApiErrorBody)),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        openapi.security = Some(vec![SecurityRequirement::new("bearer", Vec::<String>::new())]);
    }
}

/// The OpenAPI document, generated from the handlers' annotations.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, api) = api_router().split_for_parts();
    with_parameter_errors(with_unauthorized(api))
}

/// Every operation sits behind the bearer token, so each may answer 401
/// (no token, or an unknown or revoked one) with the JSON error body.
fn with_unauthorized(mut api: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    let unauthorized = ResponseBuilder::new()
        .description("No bearer token, or one that is unknown or revoked")
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ApiErrorBody"))).build())
        .build();
    for item in api.paths.paths.values_mut() {
        let operations = [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch];
        for operation in operations.into_iter().flatten() {
            operation.responses.responses.entry("401".to_owned()).or_insert_with(|| unauthorized.clone().into());
        }
    }
    api
}

/// Every operation taking query or path parameters answers a bad one with
/// 422 naming it in `field` ([`params::ApiQuery`], [`params::ApiPath`]).
fn with_parameter_errors(mut api: utoipa::openapi::OpenApi) -> utoipa::openapi::OpenApi {
    use utoipa::openapi::path::ParameterIn;
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    let invalid = ResponseBuilder::new()
        .description("A parameter is malformed or out of range; `field` names it")
        .content("application/json", ContentBuilder::new().schema(Some(Ref::from_schema_name("ApiErrorBody"))).build())
        .build();
    for item in api.paths.paths.values_mut() {
        let operations = [&mut item.get, &mut item.post, &mut item.put, &mut item.delete, &mut item.patch];
        for operation in operations.into_iter().flatten() {
            let mut parameters = operation.parameters.iter().flatten();
            if parameters.any(|p| matches!(p.parameter_in, ParameterIn::Query | ParameterIn::Path)) {
                operation.responses.responses.entry("422".to_owned()).or_insert_with(|| invalid.clone().into());
            }
        }
    }
    api
}

fn api_router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .nest("/api/hitl", routes::router())
        .nest("/api/teams", routes::legacy::routes())
}

/// The whole application: the API behind its guards, the OpenAPI
/// document, and the reviewer UI for every other path.
pub fn app(state: AppState) -> Router {
    let (api, doc) = api_router().split_for_parts();
    let doc = with_parameter_errors(with_unauthorized(doc));
    let api = api.layer(axum::middleware::from_fn_with_state(state.clone(), auth::require_token));
    // MCP's streamable HTTP, behind the same tokens, refusing in JSON-RPC.
    let mcp = mcp::router(&state);
    // Shared by every response without copying.
    let doc_json = axum::body::Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
    let ui_dir = state.config.ui_dir.clone().or_else(ui::find_ui_dir).unwrap_or_else(ui::in_tree_dir);
    let ops = std::sync::Arc::new(operations::Operations::new());
    Router::new()
        .merge(api)
        .merge(mcp)
        .merge(routes::signin::router())
        .route(
            "/api/hitl/openapi.json",
            axum::routing::get(
                move || async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], doc_json) },
            ),
        )
        // `/healthz`, `/readyz`, `/metrics`: for load balancers and Prometheus, outside the OpenAPI document.
        .merge(operations::router(std::sync::Arc::clone(&ops)))
        .route_layer(axum::middleware::from_fn(operations::remember_route))
        .merge(ui::ui_router(ui_dir))
        .layer(DefaultBodyLimit::max(state.config.body_limit))
        .layer(axum::middleware::from_fn_with_state(state.clone(), auth::same_origin_only))
        .layer(axum::middleware::from_fn_with_state(ops, operations::track))
        // Outermost: every error a client sees, whoever made it, is the JSON error body.
        .layer(axum::middleware::from_fn(params::json_errors))
        .with_state(state)
}

/// A running server.
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its state (engine, waiters, webhook counters).
    pub state: AppState,
    handle: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// Where it listens: `https://ADDR` with TLS, else `http://ADDR`.
    pub fn url(&self) -> String {
        let scheme = if self.state.config.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }
    /// Waits until the server stops.
    pub async fn wait(self) -> std::io::Result<()> {
        self.handle.await.map_err(std::io::Error::other)?
    }
    /// Stops the server.
    pub fn abort(&self) {
        self.handle.abort();
    }
}

/// Binds `config.bind` (port 0 picks a free port) and serves `engine`
/// (HTTPS only when `config.tls` is set), with the expiry sweep, gate
/// waiters and webhooks running beside it, and takes up the orchestrated
/// runs a previous process left unfinished.
pub async fn start(engine: Engine, mut config: ServerConfig) -> std::io::Result<RunningServer> {
    // A connection per client: take every file descriptor the system allows, and stay within them.
    config.connections = config.connections.within(connections::raise_open_file_limit());
    let listener = TcpListener::bind(config.bind).await?;
    let addr = listener.local_addr()?;
    config.bind = addr;
    let state = AppState::new(engine.clone(), config);
    tokio::spawn(std::sync::Arc::clone(&state.waiters).dispatch(engine.clone()));
    tokio::spawn(std::sync::Arc::clone(&state.webhooks).dispatch(engine.clone(), state.public_url()));
    tokio::spawn(forget_revoked_tokens(state.clone()));
    if let Some(days) = state.config.retention_days {
        tokio::spawn(retention::purge_daily(engine.clone(), days));
    }
    if let Err(e) = alerts::take_up(&state).await {
        tracing::error!(error = %e, "cannot read which alerts are up; those still over their thresholds are raised again");
    }
    tokio::spawn(sweep_forever(engine, state.clone()));
    let orchestrator = std::sync::Arc::clone(&state.orchestrator);
    tokio::spawn(async move {
        if let Err(e) = orchestrator.resume_all().await {
            tracing::error!(error = %e, "could not take up the unfinished orchestrated runs");
        }
    });
    let app = app(state.clone());
    // One shared router for every connection (`app` already holds its state).
    let tls = state.config.tls.as_ref().map(TlsConfig::acceptor);
    let handle = tokio::spawn(connections::serve(listener, app, tls, state.config.connections));
    Ok(RunningServer { addr, state, handle })
}

/// Forgets the cached good tokens whenever a token is revoked, here, by
/// another process on the same file or on another instance: the revoked
/// token is refused from its next request, not when the cache expires.
async fn forget_revoked_tokens(state: AppState) {
    let mut live = state.engine_handle().live_events();
    loop {
        match live.recv().await {
            Ok(event) if matches!(event.body.kind, gatehouse_engine::EventKind::TokenRevoked { .. }) => {
                state.forget_tokens()
            }
            Ok(_) => {}
            // Missed events may have held a revocation.
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => state.forget_tokens(),
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Housekeeping beside the server: every half second, publish events other
/// processes (the CLI) appended to the database, so waiters and streams see
/// them; every five seconds, expire stale gates (a stale-blocker cron, but prompt)
/// and escalate gates whose wait is over, and check the alert thresholds
/// (`alerts.rs`); every thirty, cancel runs past their expiry.
async fn sweep_forever(engine: Engine, state: AppState) {
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(500));
    let mut ticks: u64 = 0;
    loop {
        tick.tick().await;
        ticks += 1;
        let e = engine.clone();
        let sweep = ticks.is_multiple_of(10);
        // Runs expire on a coarser clock: finding them reads every live run.
        let runs = ticks.is_multiple_of(60);
        let result = tokio::task::spawn_blocking(move || -> gatehouse_engine::Result<_> {
            e.pick_up_external_events()?;
            let gates = if sweep { (e.sweep_expired()?, e.sweep_escalations()?) } else { (Vec::new(), Vec::new()) };
            let expired_runs = if runs { e.sweep_expired_runs()? } else { Vec::new() };
            Ok((gates, expired_runs))
        })
        .await;
        match result {
            Ok(Ok(((expired, escalated), expired_runs))) => {
                if !expired.is_empty() {
                    tracing::info!(count = expired.len(), "expired stale gates");
                }
                if !escalated.is_empty() {
                    tracing::info!(count = escalated.len(), "escalated waiting gates");
                }
                if !expired_runs.is_empty() {
                    tracing::info!(count = expired_runs.len(), "cancelled expired runs");
                }
            }
            Ok(Err(err)) => tracing::error!(error = %err, "housekeeping failed"),
            Err(err) => tracing::error!(error = %err, "housekeeping task failed"),
        }
        if sweep {
            match alerts::sweep_once(&state).await {
                Ok(changes) => {
                    for change in changes {
                        tracing::warn!(raised = change.raised, "alert: {}", change.alert.message);
                    }
                }
                Err(err) => tracing::error!(error = %err, "the alert sweep failed"),
            }
        }
    }
}
