//! What a scoped token sees: `Engine::gates_visible`, `runs_visible` and
//! `search_gates_visible` give exactly the listing over the runs its scope
//! covers (named runs, its agents' runs, their sub-runs), in the store's
//! order, with filters, offsets, limits and totals as over just those runs.

use crate::common;

use common::Fixture;
use gatehouse_engine::run::{Participant, Role};
use gatehouse_engine::token::TokenScope;
use gatehouse_engine::{
    BlockingMode, DecisionInput, Gate, GateFilter, GateSearch, GateStatus, NewGate, NewRun, Priority, Run, RunFilter,
    RunId, RunStatus,
};

/// Five runs: a planner with a coder below it and a tester below that, a
/// lead's run the coder takes part in, and a stranger's. Each has four
/// question gates about ledgers of mixed mode and priority, the first one
/// answered.
struct World {
    f: Fixture,
    planner: Run,
    coder: Run,
    tester: Run,
    joined: Run,
    stranger: Run,
}

impl World {
    fn new() -> Self {
        let f = Fixture::new();
        let planner = f.run("planner");
        let child = |parent: &Run, agent: &str| {
            f.run_with(NewRun { agent: agent.into(), parent_run_id: Some(parent.id.clone()), ..NewRun::default() })
        };
        let coder = child(&planner, "coder");
        let tester = child(&coder, "tester");
        let joined = f.run_with(NewRun {
            agent: "lead".into(),
            participants: vec![Participant { name: "coder".into(), role: Role::Agent }],
            ..NewRun::default()
        });
        let stranger = f.run("stranger");
        let shapes = [
            (BlockingMode::Sync, Priority::Normal),
            (BlockingMode::Async, Priority::High),
            (BlockingMode::Sync, Priority::Low),
            (BlockingMode::Async, Priority::Normal),
        ];
        for (i, (mode, priority)) in shapes.into_iter().enumerate() {
            for run in [&planner, &coder, &tester, &joined, &stranger] {
                let new = NewGate { mode, priority, ..NewGate::question(format!("Which ledger, {i}?")) };
                let gate = f.engine.open_gate(&run.id, new, &run.agent).expect("open gate");
                if i == 0 {
                    f.engine.resolve_gate(&gate.id, DecisionInput::respond("the blue one"), "alice").expect("answer");
                }
            }
        }
        Self { f, planner, coder, tester, joined, stranger }
    }

    /// Every gate matching `filter` (unpaged) whose run is one of `runs`, in the store's order.
    fn expected_gates(&self, filter: &GateFilter, runs: &[&Run]) -> Vec<Gate> {
        let all = self.f.engine.gates(&GateFilter { limit: None, offset: 0, ..filter.clone() }).expect("gates");
        all.into_iter().filter(|g| runs.iter().any(|r| r.id == g.run_id)).collect()
    }
}

fn ids<T>(items: &[T], id: impl Fn(&T) -> String) -> Vec<String> {
    items.iter().map(id).collect()
}

fn gate_ids(gates: &[Gate]) -> Vec<String> {
    ids(gates, |g| g.id.to_string())
}

#[test]
fn a_scope_sees_exactly_the_gates_of_its_runs_in_order_and_pages_them_exactly() {
    let w = World::new();
    let by_agent = TokenScope { runs: vec![], agents: vec!["coder".into()] };
    let by_run = TokenScope { runs: vec![w.planner.id.clone()], agents: vec![] };
    let cases: [(&TokenScope, Vec<&Run>); 2] =
        [(&by_agent, vec![&w.coder, &w.tester, &w.joined]), (&by_run, vec![&w.planner, &w.coder, &w.tester])];
    let filters = [
        GateFilter::pending(),
        GateFilter::default(),
        GateFilter { status: Some(GateStatus::Resolved), ..GateFilter::default() },
        GateFilter { mode: Some(BlockingMode::Async), ..GateFilter::pending() },
        GateFilter { agent: Some("tester".into()), ..GateFilter::default() },
    ];
    for (scope, runs) in &cases {
        for filter in &filters {
            let expected = w.expected_gates(filter, runs);
            assert!(!expected.is_empty(), "{filter:?} finds something");
            let whole = w.f.engine.gates_visible(scope, filter).expect("visible");
            assert_eq!(gate_ids(&whole.gates), gate_ids(&expected), "{scope:?} {filter:?}");
            assert_eq!(whole.total, expected.len() as u64);
            for (limit, offset) in [(1, 0), (2, 1), (3, 2), (5, 4), (50, 0), (2, 40)] {
                let page = GateFilter { limit: Some(limit), offset, ..filter.clone() };
                let got = w.f.engine.gates_visible(scope, &page).expect("page");
                let want: Vec<Gate> = expected.iter().skip(offset as usize).take(limit as usize).cloned().collect();
                assert_eq!(gate_ids(&got.gates), gate_ids(&want), "{scope:?} {filter:?} {limit} from {offset}");
                assert_eq!(got.total, expected.len() as u64, "the total ignores the page");
            }
            assert_eq!(w.f.engine.count_gates_visible(scope, filter).expect("count"), expected.len() as u64);
        }
    }
    // The filter's own run narrows the scope; a run outside it yields nothing.
    let only_tester = GateFilter { run_id: Some(w.tester.id.clone()), ..GateFilter::default() };
    let got = w.f.engine.gates_visible(&by_agent, &only_tester).expect("narrowed");
    assert_eq!(got.total, 4);
    assert!(got.gates.iter().all(|g| g.run_id == w.tester.id));
    let outside = GateFilter { run_id: Some(w.stranger.id.clone()), ..GateFilter::default() };
    let got = w.f.engine.gates_visible(&by_agent, &outside).expect("outside");
    assert_eq!((got.gates.len(), got.total), (0, 0));
    // Without a scope: everything, as the plain listing.
    let all = w.f.engine.gates_visible(&TokenScope::default(), &GateFilter::pending()).expect("all");
    assert_eq!(gate_ids(&all.gates), gate_ids(&w.f.engine.gates(&GateFilter::pending()).expect("gates")));
    assert_eq!(all.total, 15);
}

#[test]
fn a_filters_own_runs_narrow_the_scope_and_none_match_nothing() {
    let w = World::new();
    let scope = TokenScope { runs: vec![w.coder.id.clone()], agents: vec![] };
    let runs = Some(vec![w.tester.id.clone(), w.stranger.id.clone()]);
    let got = w.f.engine.gates_visible(&scope, &GateFilter { runs, ..GateFilter::default() }).expect("narrowed");
    assert_eq!(got.total, 4, "the tester's gates, never the stranger's");
    assert!(got.gates.iter().all(|g| g.run_id == w.tester.id));
    let none = GateFilter { runs: Some(Vec::new()), ..GateFilter::default() };
    assert_eq!(w.f.engine.gates_visible(&TokenScope::default(), &none).expect("none").total, 0);
    let many: Vec<RunId> = [&w.planner, &w.joined].iter().map(|r| r.id.clone()).collect();
    let two = GateFilter { runs: Some(many), ..GateFilter::pending() };
    let got = w.f.engine.gates_visible(&TokenScope::default(), &two).expect("two runs");
    assert_eq!(gate_ids(&got.gates), gate_ids(&w.expected_gates(&GateFilter::pending(), &[&w.planner, &w.joined])));
}

#[test]
fn a_scope_sees_exactly_its_runs_newest_first_with_filters_and_pages() {
    let w = World::new();
    let run_ids = |runs: &[Run]| ids(runs, |r| r.id.to_string());
    let newest_first = |runs: Vec<&Run>| {
        let all = w.f.engine.runs(&RunFilter::default()).expect("runs");
        all.into_iter().filter(|r| runs.iter().any(|x| x.id == r.id)).collect::<Vec<Run>>()
    };
    let scope = TokenScope { runs: vec![w.coder.id.clone()], agents: vec!["lead".into()] };
    let expected = newest_first(vec![&w.coder, &w.tester, &w.joined]);
    let got = w.f.engine.runs_visible(&scope, &RunFilter::default()).expect("visible");
    assert_eq!(run_ids(&got), run_ids(&expected));
    for (limit, offset) in [(1, 0), (1, 1), (2, 1), (5, 2), (1, 3)] {
        let page = RunFilter { limit: Some(limit), offset: Some(offset), ..RunFilter::default() };
        let got = w.f.engine.runs_visible(&scope, &page).expect("page");
        let want: Vec<Run> = expected.iter().skip(offset as usize).take(limit as usize).cloned().collect();
        assert_eq!(run_ids(&got), run_ids(&want), "{limit} from {offset}");
    }
    // Filters apply within the scope: the coder drives one run and takes part in another.
    let coders = RunFilter { agent: Some("coder".into()), ..RunFilter::default() };
    assert_eq!(
        run_ids(&w.f.engine.runs_visible(&scope, &coders).unwrap()),
        run_ids(&newest_first(vec![&w.coder, &w.joined]))
    );
    let awaiting = RunFilter { statuses: vec![RunStatus::AwaitingHuman], ..RunFilter::default() };
    let got = w.f.engine.runs_visible(&scope, &awaiting).expect("awaiting");
    assert_eq!(run_ids(&got), run_ids(&expected), "sync gates are pending on each");
    let ended = RunFilter { statuses: vec![RunStatus::Completed], ..RunFilter::default() };
    assert!(w.f.engine.runs_visible(&scope, &ended).expect("ended").is_empty());
    let narrowed = RunFilter { ids: Some(vec![w.tester.id.clone(), w.stranger.id.clone()]), ..RunFilter::default() };
    assert_eq!(run_ids(&w.f.engine.runs_visible(&scope, &narrowed).unwrap()), vec![w.tester.id.to_string()]);
    // Without a scope: every run.
    assert_eq!(w.f.engine.runs_visible(&TokenScope::default(), &RunFilter::default()).unwrap().len(), 5);
}

#[test]
fn a_scoped_search_finds_only_its_runs_gates_and_pages_them_exactly() {
    let w = World::new();
    let scope = TokenScope { runs: vec![], agents: vec!["coder".into()] };
    let covered = [&w.coder.id, &w.tester.id, &w.joined.id];
    let everything = w.f.engine.search_gates(&GateSearch::text("ledger", 500)).expect("search");
    let expected: Vec<String> =
        everything.hits.iter().filter(|h| covered.contains(&&h.gate.run_id)).map(|h| h.gate.id.to_string()).collect();
    assert_eq!(expected.len(), 12);
    for (limit, offset) in [(1, 0), (5, 0), (5, 5), (5, 10), (12, 0), (3, 11)] {
        let search = GateSearch { offset, ..GateSearch::text("ledger", limit) };
        let got = w.f.engine.search_gates_visible(&scope, &search).expect("scoped search");
        let want: Vec<String> = expected.iter().skip(offset as usize).take(limit as usize).cloned().collect();
        assert_eq!(ids(&got.hits, |h| h.gate.id.to_string()), want, "{limit} from {offset}");
        assert_eq!(got.more, (offset + limit) < 12, "{limit} from {offset}");
        assert!(got.hits.iter().all(|h| !h.snippet.is_empty()), "snippets as in any search");
    }
    let outside = GateSearch { run_id: Some(w.stranger.id.clone()), ..GateSearch::text("ledger", 10) };
    assert!(w.f.engine.search_gates_visible(&scope, &outside).expect("outside").hits.is_empty());
    let bad = GateSearch::text("ledger", 0);
    assert!(w.f.engine.search_gates_visible(&scope, &bad).is_err(), "a bad search is refused as any search is");
}
