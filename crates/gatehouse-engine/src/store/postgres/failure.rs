//! What a PostgreSQL failure means for a caller: the database cannot be
//! reached for now or asks for the write again ([`EngineError::Unavailable`]:
//! a closed or refused connection, a server shutting down, starting up or
//! full, a deadlock between two instances' groups that it broke by failing
//! one; the server answers 503 and the caller may retry) or a statement failed
//! ([`EngineError::Storage`]); and [`Refusal`], how the writer tells each
//! caller of a group that did not commit which of the two it was.

use tokio_postgres::error::SqlState;

use crate::error::EngineError;

/// `e` for people: PostgreSQL's message and code, or the error and its cause.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("PostgreSQL: {} ({})", db.message(), db.code().code()),
        // The error's own text leaves out its cause (a TLS refusal, say).
        None => match std::error::Error::source(e) {
            Some(cause) if !e.to_string().ends_with(&cause.to_string()) => format!("PostgreSQL: {e}: {cause}"),
            _ => format!("PostgreSQL: {e}"),
        },
    }
}

impl From<tokio_postgres::Error> for EngineError {
    fn from(e: tokio_postgres::Error) -> Self {
        if is_unavailable(&e) {
            Self::Unavailable(describe(&e))
        } else if is_unstorable(&e) {
            Self::invalid("input", format!("holds a value PostgreSQL cannot store: {}", describe(&e)))
        } else {
            Self::Storage(describe(&e))
        }
    }
}

/// Whether `e` says the database cannot be reached now rather than that a
/// statement failed: the connection closed or could not be made (a network
/// error, a timeout), the server is shutting down, starting up or full, or
/// it broke a deadlock (two instances' groups each waiting for a run the
/// other locked) by failing this statement, which may simply be sent again.
fn is_unavailable(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(code) = e.code() {
        let unreachable = [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::TOO_MANY_CONNECTIONS,
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::T_R_SERIALIZATION_FAILURE,
        ];
        return code.code().starts_with("08") || unreachable.contains(code);
    }
    // A TLS refusal is `Other`: a setting to fix, not an outage.
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return io.kind() != std::io::ErrorKind::Other;
        }
        source = cause.source();
    }
    false
}

/// Whether `e` says a value sent cannot be stored at all: a character the
/// database's encoding has no place for (U+0000 in text), or a value past
/// one of its limits (an index entry over a page's third). The server
/// refuses U+0000 in every request before it reaches a write; this keeps
/// whatever else gets through a client's mistake (422), not Gatehouse's.
fn is_unstorable(e: &tokio_postgres::Error) -> bool {
    let unstorable =
        [SqlState::CHARACTER_NOT_IN_REPERTOIRE, SqlState::UNTRANSLATABLE_CHARACTER, SqlState::PROGRAM_LIMIT_EXCEEDED];
    e.code().is_some_and(|code| unstorable.contains(code))
}

/// Why a group's writes were not committed, for each of its callers.
#[derive(Debug, Clone)]
pub(super) enum Refusal {
    /// The database could not be reached: the caller may try again shortly.
    Unavailable(String),
    /// The database refused the group.
    Failed(String),
}

impl Refusal {
    /// `what` failed with `error`.
    pub(super) fn of(what: &str, error: &EngineError) -> Self {
        match error {
            EngineError::Unavailable(why) => Self::Unavailable(format!("{what}: {why}")),
            other => Self::Failed(format!("{what}: {other}")),
        }
    }

    pub(super) fn error(self) -> EngineError {
        match self {
            Self::Unavailable(why) => EngineError::Unavailable(why),
            Self::Failed(why) => EngineError::Storage(why),
        }
    }
}
