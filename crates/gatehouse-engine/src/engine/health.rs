//! What a load balancer and a metrics scraper ask of the engine: whether the
//! store answers at this binary's schema (one small read), how many gates
//! wait by blocking mode, and the store's transaction counters.

use crate::engine::Engine;
use crate::error::Result;
use crate::gate::{BlockingMode, GateStatus};
use crate::store::{GateFilter, SchemaProbe, StatsSnapshot, Store};

/// Pending gates by blocking mode, counted in one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PendingByMode {
    /// The agent waits for the answer.
    pub sync: u64,
    /// The agent goes on and collects the answer later.
    pub r#async: u64,
    /// Informational gates: input welcome, not required.
    pub advisory: u64,
}

impl<S: Store> Engine<S> {
    /// The readiness read: the store answers, and says which schema
    /// version it holds beside the one this binary writes.
    pub fn schema_probe(&self) -> Result<SchemaProbe> {
        self.store().read(|r| r.schema_probe())
    }

    /// Pending gates by blocking mode (each count served by the pending-queue index).
    pub fn pending_by_mode(&self) -> Result<PendingByMode> {
        self.store().read(|r| {
            let count = |mode| {
                r.count_gates(&GateFilter { status: Some(GateStatus::Pending), mode: Some(mode), ..Default::default() })
            };
            Ok(PendingByMode {
                sync: count(BlockingMode::Sync)?,
                r#async: count(BlockingMode::Async)?,
                advisory: count(BlockingMode::Advisory)?,
            })
        })
    }

    /// The store's transaction counters, when it keeps them.
    pub fn store_stats(&self) -> Option<StatsSnapshot> {
        self.store().stats()
    }
}
