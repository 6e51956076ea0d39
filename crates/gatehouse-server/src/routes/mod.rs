//! The API's routes, one module per audience. Each module's `routes()`
//! registers its handlers with their OpenAPI annotations, so the document
//! and the router cannot drift apart.

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub mod agents;
pub mod audit;
pub mod collab;
pub mod events;
pub mod gates;
pub mod hitl;
pub mod metrics;
pub mod recordings;
pub mod retention;
pub mod rules;
pub mod runs;
pub mod search;
pub mod tokens;

/// Every route under `/api/hitl`.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(gates::routes())
        .merge(search::routes())
        .merge(rules::routes())
        .merge(hitl::routes())
        .merge(agents::routes())
        .merge(runs::routes())
        .merge(collab::routes())
        .merge(events::routes())
        .merge(recordings::routes())
        .merge(tokens::routes())
        .merge(retention::routes())
        .merge(audit::routes())
        .merge(metrics::routes())
}
