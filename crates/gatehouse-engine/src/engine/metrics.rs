//! Review metrics (metrics and monitoring of reviews) in the engine: the
//! store's grouped counts read from one snapshot and turned into the
//! figures of [`crate::metrics`].
//!
//! Everything is aggregated in SQL (`GROUP BY` over the gates and decisions
//! tables, `json_each` over edit diffs), so the cost grows with the number
//! of agents and kinds, not with gates held in memory.

use crate::engine::Engine;
use crate::error::Result;
use crate::store::Store;

pub use crate::metrics::{
    AgentMetrics, Correction, DecisionRates, ExpiryMetrics, GateRates, GateTally, KindMetrics, Metrics, ModelMetrics,
    ReviewerMetrics, TOP_CORRECTIONS,
};

impl<S: Store> Engine<S> {
    /// Computes the review metrics from one consistent snapshot.
    pub fn metrics(&self) -> Result<Metrics> {
        let computed_at = self.now();
        let (tallies, common_corrections, ratings) =
            self.store().read(|r| Ok((r.gate_tallies()?, r.top_corrections(TOP_CORRECTIONS)?, r.ratings()?)))?;
        Metrics::from_tallies(computed_at, &tallies, common_corrections, &ratings)
    }
}
