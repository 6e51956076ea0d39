//! What operators ask of a store: is it reachable and at this binary's
//! schema ([`SchemaProbe`], one small read), and how busy is it
//! ([`StoreStats`], counters bumped on the way in and out of each
//! transaction, read without locking at scrape time).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The answer of the readiness read: the schema version the database
/// records and the one this binary writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaProbe {
    /// What the database records (`PRAGMA user_version`, `gatehouse_schema`).
    pub found: i64,
    /// What this binary migrates to.
    pub current: i64,
}

impl SchemaProbe {
    /// Whether the migrations are exactly those this binary knows.
    pub fn is_current(&self) -> bool {
        self.found == self.current
    }
}

/// Counters of a store's transactions. Relaxed atomics: each is its own
/// fact, and a scrape needs no consistent cut across them.
#[derive(Debug, Default)]
pub struct StoreStats {
    writes_in_flight: AtomicU64,
    writes: AtomicU64,
    write_groups: AtomicU64,
    reads: AtomicU64,
}

/// One write between being queued and being answered; dropping it counts it out.
pub struct InFlight<'s>(&'s StoreStats);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.writes_in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// [`InFlight`] owning its counters, for a write answered through a callback
/// (on the writer's thread, or the caller's).
pub struct QueuedInFlight(Arc<StoreStats>);

impl Drop for QueuedInFlight {
    fn drop(&mut self) {
        self.0.writes_in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A snapshot of [`StoreStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Write operations queued for the writer or in its current group.
    pub writes_in_flight: u64,
    /// Write operations answered since the store opened.
    pub writes: u64,
    /// Group transactions the writer committed (each holds one or more writes).
    pub write_groups: u64,
    /// Read transactions (one snapshot each) since the store opened.
    pub reads: u64,
}

impl StoreStats {
    /// A write was queued; it counts as in flight until the guard drops.
    pub fn write_started(&self) -> InFlight<'_> {
        self.writes_in_flight.fetch_add(1, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// [`StoreStats::write_started`] for a write answered on another thread:
    /// the guard holds the counters itself.
    pub fn queued_write_started(self: &Arc<Self>) -> QueuedInFlight {
        self.writes_in_flight.fetch_add(1, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        QueuedInFlight(Arc::clone(self))
    }

    /// The writer committed one group transaction.
    pub fn group_committed(&self) {
        self.write_groups.fetch_add(1, Ordering::Relaxed);
    }

    /// A read transaction began.
    pub fn read_started(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            writes_in_flight: self.writes_in_flight.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            write_groups: self.write_groups.load(Ordering::Relaxed),
            reads: self.reads.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_in_flight_until_its_guard_drops() {
        let stats = StoreStats::default();
        let guard = stats.write_started();
        stats.read_started();
        assert_eq!(stats.snapshot(), StatsSnapshot { writes_in_flight: 1, writes: 1, write_groups: 0, reads: 1 });
        drop(guard);
        stats.group_committed();
        assert_eq!(stats.snapshot(), StatsSnapshot { writes_in_flight: 0, writes: 1, write_groups: 1, reads: 1 });
    }

    #[test]
    fn only_the_same_version_is_current() {
        assert!(SchemaProbe { found: 7, current: 7 }.is_current());
        assert!(!SchemaProbe { found: 8, current: 7 }.is_current());
        assert!(!SchemaProbe { found: 6, current: 7 }.is_current());
    }
}
