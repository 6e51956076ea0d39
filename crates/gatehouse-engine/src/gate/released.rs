//! A released gate: a reviewer let its run go on without waiting for it.
//! The gate was sync; from its release it is async and stays open for a
//! decision. A release is never a decision: an agent waiting on the gate
//! is told it was released, and nothing it proposed was approved.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::BlockingMode;

/// Who released a gate, when, and how it blocked before.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Released {
    /// The reviewer who released it.
    pub by: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Its blocking mode before (always `sync` today).
    pub from_mode: BlockingMode,
}
