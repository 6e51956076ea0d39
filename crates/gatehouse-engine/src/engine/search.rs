//! Searching gates: the bounds a search must keep (page size, text length,
//! a date range that runs forward) checked before the store is asked; over
//! every gate, or over those a token's scope covers in one query.

use crate::engine::visibility::covered_runs;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::ids::RunId;
use crate::search::{
    words, GateSearch, SearchResults, MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET, MAX_SEARCH_TEXT, MAX_SEARCH_WORDS,
};
use crate::store::Store;
use crate::token::TokenScope;

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
        self.search_gates_visible(&TokenScope::default(), search)
    }

    /// [`Engine::search_gates`] over the gates `scope` covers (all of them
    /// without a scope; the search's own `run_id`, if any, narrows them
    /// further), one store query however many runs it covers.
    pub fn search_gates_visible(&self, scope: &TokenScope, search: &GateSearch) -> Result<SearchResults> {
        check(search)?;
        // No stored name holds a NUL (PostgreSQL's text cannot), so such a
        // filter matches nothing, on either backend, before the index sees it.
        let filters =
            [search.agent.as_deref(), search.decided_by.as_deref(), search.run_id.as_ref().map(|r| r.as_str())];
        if filters.into_iter().flatten().any(|f| f.contains('\0')) {
            return Ok(SearchResults { hits: Vec::new(), more: false });
        }
        self.store().read(|r| {
            if scope.is_empty() {
                return r.search_gates(search);
            }
            let runs: Vec<RunId> = covered_runs(r, scope)?.into_iter().map(|run| run.id).collect();
            r.search_gates_of_runs(search, &runs)
        })
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
