//! The API's routes, one module per audience. Each module's `routes()`
//! registers its handlers with their OpenAPI annotations, so the document
//! and the router cannot drift apart.

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

pub mod admin;
pub mod agents;
pub mod collab;
pub mod events;
pub mod gates;
pub mod hitl;
pub mod rules;
pub mod runs;
pub mod search;

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
        .merge(admin::routes())
}
