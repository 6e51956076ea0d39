//! What a token may see. A scope ([`TokenScope`]: some runs, the runs of
//! some agents) is resolved to the runs it covers, sub-runs included, and
//! each listing is then one store query over those runs, so offsets,
//! limits and totals are exactly those of the same listing over just them.
//! An empty scope sees everything. A search over a scope is
//! [`Engine::search_gates_visible`] (`engine/search.rs`); single runs and
//! gates are checked with [`TokenScope::covers`] on the run's chain.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet, VecDeque};

use serde_json::Value;

use crate::allow_rule::{AllowRule, AllowRuleFilter};
use crate::engine::tx::not_found_run;
use crate::engine::Engine;
use crate::error::Result;
use crate::gate::Gate;
use crate::ids::RunId;
use crate::plan::PlanRevision;
use crate::run::{Run, Turn};
use crate::store::{GateFilter, ReadTx, RunFilter, Store};
use crate::token::TokenScope;

/// A page of gates and how many match in all.
#[derive(Debug, Clone, PartialEq)]
pub struct GatePage {
    /// The page, in the store's order: pending gates in panel order, others newest first.
    pub gates: Vec<Gate>,
    /// How many gates match, ignoring the page's limit and offset.
    pub total: u64,
}

/// A run's whole state, read from one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct RunState {
    /// The run.
    pub run: Run,
    /// Its turns in order.
    pub turns: Vec<Turn>,
    /// All its gates, oldest first, with their decisions.
    pub gates: Vec<Gate>,
    /// Its shared context.
    pub context: BTreeMap<String, Value>,
    /// Every plan revision, oldest first.
    pub plan_revisions: Vec<PlanRevision>,
}

impl<S: Store> Engine<S> {
    /// Runs matching `filter` that `scope` covers, newest first, paged as
    /// `filter` says (its own `ids`, if any, narrow them further). Users and
    /// sessions are matched as they were stored, redacted.
    pub fn runs_visible(&self, scope: &TokenScope, filter: &RunFilter) -> Result<Vec<Run>> {
        let mut filter = RunFilter {
            user_id: filter.user_id.as_deref().map(|u| self.redacted_text(u)),
            session_id: filter.session_id.as_deref().map(|s| self.redacted_text(s)),
            ..filter.clone()
        };
        self.store().read(|r| {
            if !scope.is_empty() {
                filter.ids = Some(narrowed(covered_runs(r, scope)?, filter.ids.as_deref()));
            }
            r.runs(&filter)
        })
    }

    /// A page of the gates matching `filter` that `scope` covers, and how
    /// many match in all, from one snapshot (its own `runs` and `run_id`,
    /// if any, narrow them further).
    pub fn gates_visible(&self, scope: &TokenScope, filter: &GateFilter) -> Result<GatePage> {
        self.store().read(|r| {
            let mut filter = filter.clone();
            if !scope.is_empty() {
                filter.runs = Some(narrowed(covered_runs(r, scope)?, filter.runs.as_deref()));
            }
            let all = GateFilter { limit: None, offset: 0, ..filter.clone() };
            Ok(GatePage { gates: r.gates(&filter)?, total: r.count_gates(&all)? })
        })
    }

    /// As [`Engine::gates_visible`], over only the runs matching `runs`
    /// (users and sessions matched as stored, redacted), from one snapshot:
    /// the HITL API's pending approvals of one user's live runs.
    pub fn gates_of_runs_visible(&self, scope: &TokenScope, runs: &RunFilter, filter: &GateFilter) -> Result<GatePage> {
        let mut runs = RunFilter {
            user_id: runs.user_id.as_deref().map(|u| self.redacted_text(u)),
            session_id: runs.session_id.as_deref().map(|s| self.redacted_text(s)),
            limit: None,
            offset: None,
            ..runs.clone()
        };
        self.store().read(|r| {
            if !scope.is_empty() {
                runs.ids = Some(narrowed(covered_runs(r, scope)?, runs.ids.as_deref()));
            }
            let mut filter = filter.clone();
            filter.runs = Some(narrowed(r.runs(&runs)?, filter.runs.as_deref()));
            let all = GateFilter { limit: None, offset: 0, ..filter.clone() };
            Ok(GatePage { gates: r.gates(&filter)?, total: r.count_gates(&all)? })
        })
    }

    /// How many gates match `filter` that `scope` covers.
    pub fn count_gates_visible(&self, scope: &TokenScope, filter: &GateFilter) -> Result<u64> {
        self.store().read(|r| {
            let mut filter = filter.clone();
            if !scope.is_empty() {
                filter.runs = Some(narrowed(covered_runs(r, scope)?, filter.runs.as_deref()));
            }
            r.count_gates(&filter)
        })
    }

    /// Allow-rules matching `filter` of the agents `scope` names (its own
    /// `agent`, if any, narrows them), newest first, at most `filter.limit`.
    /// An empty scope sees every rule; a scope of runs alone, none.
    pub fn allow_rules_visible(&self, scope: &TokenScope, filter: &AllowRuleFilter) -> Result<Vec<AllowRule>> {
        if scope.is_empty() {
            return self.allow_rules(filter);
        }
        let mut lists = Vec::new();
        for agent in scope.agents.iter().filter(|a| filter.agent.as_ref().is_none_or(|only| only == *a)) {
            lists.push(self.allow_rules(&AllowRuleFilter { agent: Some(agent.clone()), ..filter.clone() })?);
        }
        Ok(merge(lists, filter.limit.map(|l| l as usize), |rule| Reverse((rule.created_at, rule.id.clone()))))
    }

    /// A run's run, turns, gates (oldest first), context and plan revisions
    /// from one snapshot.
    pub fn run_state(&self, id: &RunId) -> Result<RunState> {
        self.store().read(|r| {
            let run = r.run(id)?.ok_or_else(|| not_found_run(id))?;
            let mut gates = r.gates(&GateFilter { run_id: Some(id.clone()), ..GateFilter::default() })?;
            gates.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            Ok(RunState {
                run,
                turns: r.turns(id)?,
                gates,
                context: r.context(id)?,
                plan_revisions: r.plan_revisions(id)?,
            })
        })
    }
}

/// The runs `scope` covers, each once: the named ones that exist (one
/// query), the runs its agents drive or take part in (one per agent), then
/// every sub-run below them (one query per run looked under).
pub(super) fn covered_runs(r: &dyn ReadTx, scope: &TokenScope) -> Result<Vec<Run>> {
    let mut seen = HashSet::new();
    let mut runs = Vec::new();
    let mut add = |run: Run, runs: &mut Vec<Run>| {
        let new = seen.insert(run.id.clone());
        if new {
            runs.push(run);
        }
        new
    };
    if !scope.runs.is_empty() {
        for run in r.runs(&RunFilter { ids: Some(scope.runs.clone()), ..RunFilter::default() })? {
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

/// The ids of `covered`, only those among `only` when it is given.
fn narrowed(covered: Vec<Run>, only: Option<&[RunId]>) -> Vec<RunId> {
    covered.into_iter().map(|run| run.id).filter(|id| only.is_none_or(|only| only.contains(id))).collect()
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
