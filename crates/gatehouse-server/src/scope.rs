//! Listings for a scoped token. Its scope is resolved to the runs it
//! covers (the runs named, the runs its agents drive or take part in, and
//! every sub-run below them, all read in one snapshot), and each listing
//! is merged from one store query per run, each already in the store's
//! order, so offsets, limits and totals are exactly those of the same
//! listing over just those runs. Single runs and gates are checked on
//! [`Caller`](crate::auth::Caller).
//!
//! The cost grows with the runs a scope covers; store filters taking
//! several runs at once would make each listing one query.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};

use gatehouse_engine::search::{SearchResults, MAX_SEARCH_LIMIT};
use gatehouse_engine::store::ReadTx;
use gatehouse_engine::token::TokenScope;
use gatehouse_engine::{
    AllowRule, AllowRuleFilter, Engine, Gate, GateFilter, GateSearch, GateStatus, Result, Run, RunFilter, RunId,
};

/// The runs `scope` covers, each once: the named ones that exist, the runs
/// its agents drive or take part in, then every sub-run below them.
pub fn covered_runs(r: &dyn ReadTx, scope: &TokenScope) -> Result<Vec<Run>> {
    let mut seen = HashSet::new();
    let mut runs = Vec::new();
    let mut add = |run: Run, runs: &mut Vec<Run>| {
        let new = seen.insert(run.id.clone());
        if new {
            runs.push(run);
        }
        new
    };
    for id in &scope.runs {
        if let Some(run) = r.run(id)? {
            add(run, &mut runs);
        }
    }
    for agent in &scope.agents {
        for run in r.runs_of_agent(&RunFilter::default(), agent)? {
            add(run, &mut runs);
        }
    }
    let mut below: VecDeque<RunId> = runs.iter().map(|run| run.id.clone()).collect();
    while let Some(parent) = below.pop_front() {
        for child in r.child_runs(&parent)? {
            let id = child.id.clone();
            if add(child, &mut runs) {
                below.push_back(id);
            }
        }
    }
    Ok(runs)
}

/// The runs among `runs` matching `filter` (and, for an agent token, those
/// `agent` drives or takes part in), newest first, paged as `filter` says.
pub fn runs_among(runs: Vec<Run>, filter: &RunFilter, agent: Option<&str>) -> Vec<Run> {
    let mut runs: Vec<Run> = runs
        .into_iter()
        .filter(|run| filter.statuses.is_empty() || filter.statuses.contains(&run.status))
        .filter(|run| filter.user_id.as_ref().is_none_or(|u| run.user_id.as_ref() == Some(u)))
        .filter(|run| filter.session_id.as_ref().is_none_or(|s| run.session_id.as_ref() == Some(s)))
        .filter(|run| agent.is_none_or(|a| run.agent == a || run.participants.iter().any(|p| p.name == a)))
        .collect();
    runs.sort_by_key(|run| Reverse((run.created_at, run.id.clone())));
    let offset = filter.offset.unwrap_or(0) as usize;
    let limit = filter.limit.map_or(usize::MAX, |l| l as usize);
    runs.into_iter().skip(offset).take(limit).collect()
}

/// A page of the gates among `runs` matching `filter` (whose own `run_id`,
/// if any, narrows `runs` further), in the store's order, and how many
/// match in all.
pub fn gates_among(r: &dyn ReadTx, runs: &[RunId], filter: &GateFilter) -> Result<(Vec<Gate>, u64)> {
    let offset = filter.offset as usize;
    let want = filter.limit.map(|limit| offset + limit as usize);
    let per_run = want.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let (mut lists, mut total) = (Vec::new(), 0);
    for run in runs.iter().filter(|run| filter.run_id.as_ref().is_none_or(|only| only == *run)) {
        let all = GateFilter { run_id: Some(run.clone()), limit: None, offset: 0, ..filter.clone() };
        total += r.count_gates(&all)?;
        lists.push(r.gates(&GateFilter { limit: per_run, ..all })?);
    }
    let merged = if filter.status == Some(GateStatus::Pending) {
        merge(lists, want, |g: &Gate| (g.mode.rank(), Reverse(g.priority.rank()), g.created_at, g.id.clone()))
    } else {
        merge(lists, want, |g: &Gate| Reverse((g.created_at, g.id.clone())))
    };
    Ok((merged.into_iter().skip(offset).collect(), total))
}

/// A page of `search` over the gates among `runs` (its own `run_id`, if
/// any, narrows them), newest first.
pub fn search_among(e: &Engine, runs: &[RunId], search: &GateSearch) -> Result<SearchResults> {
    let want = (search.offset + search.limit) as usize;
    let runs: Vec<&RunId> = runs.iter().filter(|run| search.run_id.as_ref().is_none_or(|only| only == *run)).collect();
    if runs.is_empty() {
        // Nothing to find, but a bad search is still refused as the engine would.
        let none = RunId::from_string("");
        e.search_gates(&GateSearch { run_id: Some(none), limit: 1, offset: 0, ..search.clone() })?;
        return Ok(SearchResults { hits: Vec::new(), more: false });
    }
    let (mut lists, mut more) = (Vec::new(), false);
    for run in runs {
        let mut hits = Vec::new();
        loop {
            let got = hits.len() as u32;
            let page = GateSearch {
                run_id: Some(run.clone()),
                offset: got,
                limit: (want as u32 - got).min(MAX_SEARCH_LIMIT),
                ..search.clone()
            };
            let found = e.search_gates(&page)?;
            hits.extend(found.hits);
            if !found.more || hits.len() >= want {
                more |= found.more;
                break;
            }
        }
        lists.push(hits);
    }
    let found: usize = lists.iter().map(Vec::len).sum();
    let hits = merge(lists, Some(want), |h| Reverse((h.gate.created_at, h.gate.id.clone())));
    Ok(SearchResults { hits: hits.into_iter().skip(search.offset as usize).collect(), more: more || found > want })
}

/// Allow-rules of `agents` matching `filter` (whose own `agent`, if any,
/// narrows them), newest first, at most `filter.limit`.
pub fn rules_among(e: &Engine, agents: &[String], filter: &AllowRuleFilter) -> Result<Vec<AllowRule>> {
    let mut lists = Vec::new();
    for agent in agents.iter().filter(|a| filter.agent.as_ref().is_none_or(|only| only == *a)) {
        lists.push(e.allow_rules(&AllowRuleFilter { agent: Some(agent.clone()), ..filter.clone() })?);
    }
    Ok(merge(lists, filter.limit.map(|l| l as usize), |rule| Reverse((rule.created_at, rule.id.clone()))))
}

/// Merges lists, each already in ascending order of `key`, into one in
/// that order, keeping at most `n`. Each list keeps its own order even
/// where `key` ties, so a page is always a prefix of every list it draws on.
fn merge<T, K: Ord>(lists: Vec<Vec<T>>, n: Option<usize>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut lists: Vec<std::vec::IntoIter<T>> = lists.into_iter().map(Vec::into_iter).collect();
    let mut heads: Vec<Option<T>> = lists.iter_mut().map(Iterator::next).collect();
    let mut next: BinaryHeap<Reverse<(K, usize)>> =
        heads.iter().enumerate().filter_map(|(i, head)| head.as_ref().map(|t| Reverse((key(t), i)))).collect();
    let n = n.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    while out.len() < n {
        let Some(Reverse((_, i))) = next.pop() else { break };
        let Some(item) = heads[i].take() else { continue };
        out.push(item);
        heads[i] = lists[i].next();
        if let Some(head) = &heads[i] {
            next.push(Reverse((key(head), i)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn merging_keeps_the_order_and_takes_only_what_is_asked() {
        let lists = vec![vec![1, 4, 9], vec![2, 3, 10], vec![], vec![5]];
        assert_eq!(merge(lists.clone(), None, |x| *x), [1, 2, 3, 4, 5, 9, 10]);
        assert_eq!(merge(lists, Some(4), |x| *x), [1, 2, 3, 4]);
        // Ties keep each list's own order.
        let tied = vec![vec![(1, 'a'), (1, 'b')], vec![(1, 'c')]];
        let merged = merge(tied, None, |x| x.0);
        assert!(merged.iter().position(|x| x.1 == 'a') < merged.iter().position(|x| x.1 == 'b'));
    }
}
