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
    round_trips: AtomicU64,
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
    /// Waits for a database server's reply (PostgreSQL; SQLite, in the
    /// process, has none): a request and its reply, whatever it carried.
    pub round_trips: u64,
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

    /// A connection waited for the database server's reply.
    pub fn round_trip(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            writes_in_flight: self.writes_in_flight.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            write_groups: self.write_groups.load(Ordering::Relaxed),
            reads: self.reads.load(Ordering::Relaxed),
            round_trips: self.round_trips.load(Ordering::Relaxed),
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
        let snapshot = |in_flight, groups, round_trips| StatsSnapshot {
            writes_in_flight: in_flight,
            writes: 1,
            write_groups: groups,
            reads: 1,
            round_trips,
        };
        assert_eq!(stats.snapshot(), snapshot(1, 0, 0));
        drop(guard);
        stats.group_committed();
        stats.round_trip();
        assert_eq!(stats.snapshot(), snapshot(0, 1, 1));
    }

    #[test]
    fn only_the_same_version_is_current() {
        assert!(SchemaProbe { found: 7, current: 7 }.is_current());
        assert!(!SchemaProbe { found: 8, current: 7 }.is_current());
        assert!(!SchemaProbe { found: 6, current: 7 }.is_current());
    }
}
