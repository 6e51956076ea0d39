//! Operations endpoints beside the API, for load balancers and Prometheus
//! rather than agents and reviewers: `GET /healthz` (the process answers),
//! `GET /readyz` (the database answers, at this binary's schema) and
//! `GET /metrics` (the Prometheus text format, version 0.0.4). None is in
//! the OpenAPI document; the first two take no token, `/metrics` takes any
//! valid token unless the server was started with `--metrics-public`.
//!
//! [`track`] counts and times every request under its route template
//! (`/api/hitl/gates/{gate_id}`, never the raw path, so no id becomes a
//! label); [`remember_route`] hands the template out from inside the router.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use gatehouse_engine::engine::PendingByMode;
use gatehouse_engine::store::StatsSnapshot;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use serde_json::json;

use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The content type of the Prometheus text exposition format.
pub const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// Seconds a load balancer should wait before asking `/readyz` again.
const RETRY_AFTER_SECONDS: &str = "5";
/// The readiness read's longest wait: a database that does not answer by
/// then is not ready (a load balancer's probe must not hang).
const READY_WITHIN: Duration = Duration::from_secs(2);
/// The route label of requests no route matched: the reviewer UI's pages,
/// unknown paths, and requests refused before routing (the Host guard).
const UNMATCHED: &str = "unmatched";
/// Latency buckets, seconds: sub-millisecond round trips up to long polls.
const LATENCY_BUCKETS: [f64; 16] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModeLabels {
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WaitLabels {
    on: &'static str,
}

type LatencyFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// The route template a request matched, handed from inside the router
/// (where axum knows it) to [`track`] outside it.
#[derive(Clone)]
struct RouteTemplate(String);

/// The server's operational metrics. One per application; cheap to share.
pub struct Operations {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    pending: Family<ModeLabels, Gauge>,
    waiting: Family<WaitLabels, Gauge>,
    store: Arc<StoreCounters>,
    /// One scrape at a time: the gauges set for it are the ones encoded.
    scrape: tokio::sync::Mutex<()>,
}

impl Default for Operations {
    fn default() -> Self {
        Self::new()
    }
}

impl Operations {
    /// Empty metrics, registered under the `gatehouse_` prefix.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("gatehouse");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency: LatencyFamily = Family::new_with_constructor(|| Histogram::new(LATENCY_BUCKETS));
        let pending = Family::<ModeLabels, Gauge>::default();
        let waiting = Family::<WaitLabels, Gauge>::default();
        let store = Arc::new(StoreCounters::default());
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status class",
            requests.clone(),
        );
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request (to its response's head), by method and route template",
            latency.clone(),
        );
        registry.register("gates_pending", "Gates waiting for a decision, by blocking mode", pending.clone());
        registry.register(
            "agents_waiting",
            "Agents in a long poll here: on a gate's decision, or held on a paused run",
            waiting.clone(),
        );
        registry.register_collector(Box::new(Arc::clone(&store)));
        Self { registry, requests, latency, pending, waiting, store, scrape: tokio::sync::Mutex::new(()) }
    }

    /// Counts one answered request.
    fn observe(&self, method: &str, route: String, status: StatusCode, elapsed: Duration) {
        let labels = RouteLabels { method: method.to_owned(), route };
        self.latency.get_or_create(&labels).observe(elapsed.as_secs_f64());
        let RouteLabels { method, route } = labels;
        self.requests.get_or_create(&RequestLabels { method, route, status: status_class(status) }).inc();
    }

    /// The text exposition of everything, with the gauges read for this scrape.
    async fn render(&self, scrape: Scrape) -> Result<String, std::fmt::Error> {
        let _one = self.scrape.lock().await;
        let gauge = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let PendingByMode { sync, r#async, advisory } = scrape.pending;
        for (mode, n) in [("sync", sync), ("async", r#async), ("advisory", advisory)] {
            self.pending.get_or_create(&ModeLabels { mode }).set(gauge(n));
        }
        self.waiting.get_or_create(&WaitLabels { on: "gate" }).set(gauge(scrape.waiting.0 as u64));
        self.waiting.get_or_create(&WaitLabels { on: "run" }).set(gauge(scrape.waiting.1 as u64));
        *self.store.last.lock().unwrap_or_else(|p| p.into_inner()) = scrape.store;
        let mut out = String::with_capacity(8 * 1024);
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// `2xx`, `4xx` and so on: few enough values to label by.
fn status_class(status: StatusCode) -> &'static str {
    match status.as_u16() / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}

/// What one scrape reads outside the registry.
struct Scrape {
    pending: PendingByMode,
    /// Agents waiting on gates, and held on paused runs.
    waiting: (usize, usize),
    store: Option<StatsSnapshot>,
}

/// The store's own counters, as they were read for the scrape under way.
#[derive(Debug, Default)]
struct StoreCounters {
    last: Mutex<Option<StatsSnapshot>>,
}

impl Collector for StoreCounters {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(stats) = *self.last.lock().unwrap_or_else(|p| p.into_inner()) else {
            // A store without counters: nothing to say rather than zeros.
            return Ok(());
        };
        let in_flight = ConstGauge::new(i64::try_from(stats.writes_in_flight).unwrap_or(i64::MAX));
        let help = "Write operations queued for the store's writer or in the group it is committing";
        in_flight.encode(encoder.encode_descriptor(
            "store_writes_in_flight",
            help,
            None,
            in_flight.metric_type(),
        )?)?;
        let counters = [
            ("store_writes", "Write operations the store answered", stats.writes),
            ("store_write_transactions", "Group transactions the store's writer committed", stats.write_groups),
            ("store_read_transactions", "Read transactions (one snapshot each) the store began", stats.reads),
            (
                "store_round_trips",
                "Waits for the database server's reply (PostgreSQL; none on SQLite, which runs in the process)",
                stats.round_trips,
            ),
        ];
        for (name, help, value) in counters {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(name, help, None, counter.metric_type())?)?;
        }
        Ok(())
    }
}

/// `/healthz`, `/readyz` and `/metrics`, to merge at the root beside `/api/hitl`.
pub fn router(operations: Arc<Operations>) -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .layer(Extension(operations))
}

/// The process is up and serving: no token, no database.
async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// The database answers one small read, and holds the schema this binary
/// migrates to; otherwise 503 with `Retry-After`, naming what is not ready
/// (never the database's address, path or error text: those go to the log).
async fn readyz(State(state): State<AppState>) -> Response {
    let probe = tokio::time::timeout(READY_WITHIN, state.engine(|e| e.schema_probe())).await;
    match probe {
        Ok(Ok(schema)) if schema.is_current() => Json(json!({ "status": "ready" })).into_response(),
        Ok(Ok(schema)) => not_ready(
            "migrations",
            format!(
                "the database's schema is at version {}; this server needs version {}",
                schema.found, schema.current
            ),
        ),
        // The engine's error, with its details, is already in the server's log.
        Ok(Err(_)) => not_ready("database", "the database did not answer its readiness read".to_owned()),
        Err(_) => not_ready("database", format!("the database did not answer within {} s", READY_WITHIN.as_secs())),
    }
}

fn not_ready(what: &'static str, message: String) -> Response {
    let body = Json(json!({ "status": "not_ready", "not_ready": [what], "message": message }));
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, body).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
    response
}

/// The Prometheus text format. Any valid token (any role) unless the
/// server was started with `--metrics-public`.
async fn metrics(
    State(state): State<AppState>,
    Extension(operations): Extension<Arc<Operations>>,
    req: Request,
) -> ApiResult<Response> {
    if !state.config.metrics_public {
        let secret = auth::presented_secret(&state, &req)?;
        auth::caller_for(&state, &secret).await?;
    }
    let (pending, store) = state.engine(|e| Ok((e.pending_by_mode()?, e.store_stats()))).await?;
    let scrape = Scrape { pending, waiting: state.waiters.waiting(), store };
    let body = operations.render(scrape).await.map_err(|_| ApiError::internal("cannot encode the metrics"))?;
    Ok(([(header::CONTENT_TYPE, METRICS_CONTENT_TYPE)], body).into_response())
}

/// Inside the router (as a route layer): notes the route template the
/// request matched on its response, for [`track`].
pub async fn remember_route(req: Request, next: Next) -> Response {
    let route = req.extensions().get::<MatchedPath>().map(|p| RouteTemplate(p.as_str().to_owned()));
    let mut response = next.run(req).await;
    if let Some(route) = route {
        response.extensions_mut().insert(route);
    }
    response
}

/// Around the router: counts and times every request by method, route
/// template and status class.
pub async fn track(State(operations): State<Arc<Operations>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let response = next.run(req).await;
    let route = response.extensions().get::<RouteTemplate>().map(|r| r.0.clone());
    let route = route.unwrap_or_else(|| UNMATCHED.to_owned());
    operations.observe(method.as_str(), route, response.status(), started.elapsed());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_labelled_by_class() {
        assert_eq!(status_class(StatusCode::OK), "2xx");
        assert_eq!(status_class(StatusCode::NOT_FOUND), "4xx");
        assert_eq!(status_class(StatusCode::SERVICE_UNAVAILABLE), "5xx");
    }

    #[tokio::test]
    async fn an_observed_request_shows_under_its_template_with_a_total_suffix() {
        let ops = Operations::new();
        ops.observe("GET", "/api/hitl/gates/{gate_id}".into(), StatusCode::OK, Duration::from_millis(2));
        let scrape = Scrape { pending: PendingByMode::default(), waiting: (0, 0), store: None };
        let text = ops.render(scrape).await.expect("encodes");
        let line = r#"gatehouse_http_requests_total{method="GET",route="/api/hitl/gates/{gate_id}",status="2xx"} 1"#;
        assert!(text.contains(line), "{text}");
        assert!(text.contains("# TYPE gatehouse_http_request_duration_seconds histogram"), "{text}");
        assert!(!text.contains("store_writes"), "a store without counters shows none: {text}");
    }
}
