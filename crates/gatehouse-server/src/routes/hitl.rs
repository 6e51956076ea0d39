//! (being written)

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
}
