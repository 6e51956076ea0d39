//! What both backends share: the hash chain's state as a write transaction
//! carries it. Each backend loads the head its own way (`sqlite/queries.rs`,
//! `postgres/queries.rs`); neither imports from the other.

use std::sync::Arc;

use crate::event::{self, Event};

/// The end of the hash chain, kept in memory by the single writer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChainHead {
    pub seq: u64,
    pub hash: [u8; 32],
}

/// What a write transaction accumulates besides rows.
pub(crate) struct WriteState {
    pub head: ChainHead,
    /// Keys the chain when the store has an audit key.
    pub key: Option<event::AuditKey>,
    pub events: Vec<Arc<Event>>,
}
