//! Identifiers and time. Ids are newtypes over time-ordered UUIDv7 strings so
//! that a gate id can never be passed where a run id is expected, and the
//! clock is injectable so expiry and retention are testable without sleeping.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A new, time-ordered id.
            pub fn new() -> Self {
                Self(format!("{}{}", $prefix, uuid::Uuid::now_v7().simple()))
            }
            /// Wraps an id received from outside (an API path, a recording).
            pub fn from_string(s: impl Into<String>) -> Self {
                Self(s.into())
            }
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }
    };
}

id_type!(
    /// Identifies a run (what others call a session, a thread or a task).
    RunId,
    "run_"
);
id_type!(
    /// Identifies a gate: one question to a human.
    GateId,
    "gate_"
);
id_type!(
    /// Identifies one recorded decision.
    DecisionId,
    "dec_"
);
id_type!(
    /// Identifies one turn of a run.
    TurnId,
    "turn_"
);
id_type!(
    /// Identifies an allow-rule (gates it passes are decided by `rule:<id>`).
    AllowRuleId,
    "allow_"
);

/// Where the engine reads the time from. Production uses the system clock;
/// tests inject a [`ManualClock`] to cross expiry deadlines instantly.
pub trait Clock: Send + Sync + 'static {
    /// The current time in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to. Cloning shares the same time.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Arc::new(AtomicI64::new(start.timestamp_micros())))
    }
    /// Moves the clock forward.
    pub fn advance(&self, by: chrono::Duration) {
        let micros = by.num_microseconds().unwrap_or(i64::MAX);
        self.0.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        from_micros(self.0.load(Ordering::SeqCst))
    }
}

/// Converts stored microseconds back into a timestamp.
pub fn from_micros(micros: i64) -> DateTime<Utc> {
    Utc.timestamp_micros(micros).single().unwrap_or(DateTime::<Utc>::MIN_UTC)
}
