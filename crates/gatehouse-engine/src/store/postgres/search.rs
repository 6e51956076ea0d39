//! Gate search on PostgreSQL.

use crate::error::{EngineError, Result};
use crate::search::{GateSearch, SearchResults};

use super::Conn;

/// Gates matching `search`, newest first.
pub(super) fn search_gates(_conn: &Conn, _search: &GateSearch) -> Result<SearchResults> {
    Err(EngineError::Storage("search on PostgreSQL is being written".into()))
}
