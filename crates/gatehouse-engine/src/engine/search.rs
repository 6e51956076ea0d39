//! Searching gates: the bounds a search must keep (page size, text length,
//! a date range that runs forward) checked before the store is asked.

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::search::{
    words, GateSearch, SearchResults, MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET, MAX_SEARCH_TEXT, MAX_SEARCH_WORDS,
};
use crate::store::Store;

impl<S: Store> Engine<S> {
    /// Gates, pending and past, matching `search`, newest first, each with
    /// its run's title and a snippet of where the text matched.
    ///
    /// ```no_run
    /// # use gatehouse_engine::{Engine, EngineConfig, GateSearch, GateStatus};
    /// # let engine = Engine::open("gatehouse.db", EngineConfig::default())?;
    /// let found = engine.search_gates(&GateSearch {
    ///     status: Some(GateStatus::Resolved),
    ///     decided_by: Some("alice".into()),
    ///     ..GateSearch::text("deploy billing", 20)
    /// })?;
    /// for hit in &found.hits {
    ///     println!("{} in {}: {:?}", hit.gate.id, hit.run_title, hit.snippet);
    /// }
    /// # Ok::<(), gatehouse_engine::EngineError>(())
    /// ```
    pub fn search_gates(&self, search: &GateSearch) -> Result<SearchResults> {
        check(search)?;
        // No stored name holds a NUL (PostgreSQL's text cannot), so such a
        // filter matches nothing, on either backend, before the index sees it.
        let filters =
            [search.agent.as_deref(), search.decided_by.as_deref(), search.run_id.as_ref().map(|r| r.as_str())];
        if filters.into_iter().flatten().any(|f| f.contains('\0')) {
            return Ok(SearchResults { hits: Vec::new(), more: false });
        }
        self.store().read(|r| r.search_gates(search))
    }
}

fn check(search: &GateSearch) -> Result<()> {
    if !(1..=MAX_SEARCH_LIMIT).contains(&search.limit) {
        return Err(EngineError::invalid("limit", format!("must be from 1 to {MAX_SEARCH_LIMIT}")));
    }
    if search.offset > MAX_SEARCH_OFFSET {
        return Err(EngineError::invalid("offset", format!("at most {MAX_SEARCH_OFFSET}")));
    }
    if search.text.chars().count() > MAX_SEARCH_TEXT {
        return Err(EngineError::invalid("text", format!("at most {MAX_SEARCH_TEXT} characters")));
    }
    if words(&search.text).count() > MAX_SEARCH_WORDS {
        return Err(EngineError::invalid("text", format!("at most {MAX_SEARCH_WORDS} words")));
    }
    if let (Some(from), Some(to)) = (search.from, search.to) {
        if to <= from {
            return Err(EngineError::invalid("to", "must be later than `from`"));
        }
    }
    Ok(())
}
