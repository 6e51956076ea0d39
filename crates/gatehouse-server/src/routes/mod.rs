//! The API's routes, one module per resource: a run's lifecycle, turns,
//! control, listings and events under [`runs`]; gates opened, read, decided
//! and searched under [`gates`]; then a run's plan and shared context, the
//! team agents' global memory and a run's memory snapshots ([`memory`]),
//! allow-rules, the event stream, recordings, tokens, retention, the audit
//! log, metrics, alerts, live replays and providers. The older run endpoint, `POST /api/teams/run`,
//! is in [`legacy`], nested beside them. Each module registers its handlers with
//! their OpenAPI annotations, so the document and the router cannot drift
//! apart.

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub mod alerts;
pub mod audit;
pub mod collab;
pub mod events;
pub mod gates;
pub mod legacy;
pub mod memory;
pub mod metrics;
pub mod providers;
pub mod recordings;
pub mod replays;
pub mod retention;
pub mod rules;
pub mod runs;
pub mod signin;
pub mod tokens;

/// Every route under `/api/hitl`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(runs::routes())
        .merge(gates::routes())
        .merge(collab::routes())
        .merge(memory::routes())
        .merge(rules::routes())
        .merge(events::routes())
        .merge(recordings::routes())
        .merge(tokens::routes())
        .merge(signin::routes())
        .merge(retention::routes())
        .merge(audit::routes())
        .merge(metrics::routes())
        .merge(alerts::routes())
        .merge(replays::routes())
        .merge(providers::routes())
}
