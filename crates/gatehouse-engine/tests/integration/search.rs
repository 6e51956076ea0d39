//! Searching gates through the engine and a real SQLite file: every field
//! the text matches, prefixes while typing, input that looks like FTS5
//! syntax, the exact filters, newest-first paging, snippets, and an index
//! kept current by decisions, cancellations, purges, VACUUM and the
//! migration that backfills older databases.

use crate::common;

use chrono::{Duration, TimeZone, Utc};
use common::Fixture;
use gatehouse_engine::gate::{GateContext, GateSpec, PresetOption, ProposedAction};
use gatehouse_engine::{
    DecisionAction, DecisionInput, Engine, EngineConfig, EngineError, Gate, GateKind, GateSearch, GateStatus, NewGate,
    NewRun, RecordingScope, Run, SearchResults,
};
use serde_json::json;

fn search(f: &Fixture, text: &str) -> SearchResults {
    f.engine.search_gates(&GateSearch::text(text, 50)).expect("search")
}

fn ids(results: &SearchResults) -> Vec<String> {
    results.hits.iter().map(|h| h.gate.id.to_string()).collect()
}

fn found(f: &Fixture, text: &str) -> Vec<String> {
    ids(&search(f, text))
}

fn open(f: &Fixture, run: &Run, new: NewGate) -> Gate {
    f.engine.open_gate(&run.id, new, &run.agent).expect("open gate")
}

#[test]
fn the_text_matches_each_field_of_a_gate() {
    let f = Fixture::new();
    let run =
        f.run_with(NewRun { agent: "builder-bot".into(), title: "Quarterly invoicing".into(), ..NewRun::default() });
    let mut approval = NewGate::approval(
        "deploy_service",
        "Ship the **release** now?",
        json!({ "service": "billing-api", "region": "eu-west-1" }),
    );
    approval.context = GateContext { step: Some("canary rollout".into()), ..GateContext::default() };
    approval.options = vec![PresetOption {
        name: "later".into(),
        title: "Tomorrow morning".into(),
        description: None,
        action: DecisionAction::Reject,
        text: None,
    }];
    let approval = open(&f, &run, approval);
    let mut batch = NewGate::new(GateSpec::Approval { action: String::new() }, "Run these tools?");
    batch.actions = vec![ProposedAction {
        id: "call-1".into(),
        name: "send_email".into(),
        args: json!({ "to": "finance@example.com" }),
        description: Some("Tell finance about the refund".into()),
        allowed_actions: vec![],
        decision: None,
    }];
    let batch = open(&f, &run, batch);
    let question = open(&f, &run, NewGate::question("Which currency for Zürich?"));
    f.engine.resolve_gate(&question.id, DecisionInput::respond("Swiss francs, always"), "carol").unwrap();

    let (a, b, q) = (approval.id.to_string(), batch.id.to_string(), question.id.to_string());
    assert_eq!(found(&f, "release"), vec![a.clone()], "question text");
    assert_eq!(found(&f, "deploy_service"), vec![a.clone()], "action name");
    assert_eq!(found(&f, "send_email"), vec![b.clone()], "a batched action's name");
    assert_eq!(found(&f, "eu-west-1"), vec![a.clone()], "payload value");
    assert_eq!(found(&f, "region"), vec![a.clone()], "payload key");
    assert_eq!(found(&f, "finance@example.com"), vec![b.clone()], "a batched action's arguments");
    assert_eq!(found(&f, "refund"), vec![b.clone()], "a batched action's description");
    assert_eq!(found(&f, "canary"), vec![a.clone()], "task context");
    assert_eq!(found(&f, "tomorrow"), vec![a.clone()], "a preset option");
    assert_eq!(found(&f, "builder-bot"), vec![q.clone(), b.clone(), a.clone()], "agent");
    assert_eq!(found(&f, "invoicing"), vec![q.clone(), b.clone(), a.clone()], "run title");
    assert_eq!(found(&f, run.id.as_str()), vec![q.clone(), b.clone(), a.clone()], "run id");
    assert_eq!(found(&f, "carol"), vec![q.clone()], "who decided");
    assert_eq!(found(&f, "francs"), vec![q.clone()], "the decision's text");
    assert_eq!(found(&f, "zurich"), vec![q.clone()], "diacritics are folded");
    assert_eq!(found(&f, "SHIP RELEASE"), vec![a.clone()], "case and every word");
    assert!(found(&f, "release francs").is_empty(), "every word must match the same gate");
}

#[test]
fn the_last_word_matches_as_a_prefix_while_it_is_typed() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = open(&f, &run, NewGate::question("Rotate the postgres credentials?"));
    let id = gate.id.to_string();
    assert_eq!(found(&f, "postg"), vec![id.clone()]);
    assert_eq!(found(&f, "rotate cred"), vec![id.clone()]);
    assert!(found(&f, "postg ").is_empty(), "a finished word matches whole");
    assert!(found(&f, "cred rotate").is_empty(), "only the last word is a prefix");
    assert_eq!(found(&f, "credentials rot"), vec![id]);
}

#[test]
fn text_that_looks_like_fts5_syntax_is_only_ever_text() {
    let f = Fixture::new();
    let run = f.run("agent");
    let quoted = open(&f, &run, NewGate::question(r#"Is "blue-green" AND(canary) safe? -force NEAR x*"#));
    for text in [
        "\"",
        "\"\"",
        "\"blue",
        "*",
        "x*",
        "AND(",
        "AND",
        "OR NOT",
        "-",
        "-force",
        "NEAR(a b, 2)",
        "col:value",
        "{text}: x",
        "^start",
        "a + b",
        "(((",
        ")",
        "'; DROP TABLE gates; --",
        "\u{E000}\u{E001}",
        "\0",
        "😀",
        "é",
    ] {
        let result = f.engine.search_gates(&GateSearch::text(text, 10));
        assert!(result.is_ok(), "{text:?}: {result:?}");
    }
    let id = quoted.id.to_string();
    assert_eq!(found(&f, r#""blue-green""#), vec![id.clone()]);
    assert_eq!(found(&f, "AND(canary)"), vec![id.clone()]);
    assert_eq!(found(&f, "-force"), vec![id.clone()]);
    assert_eq!(found(&f, "NEAR"), vec![id.clone()]);
    // Punctuation alone matches nothing to look for: the newest gates, as for no text.
    assert_eq!(found(&f, "- * \""), vec![id]);
}

#[test]
fn filters_narrow_exactly() {
    let f = Fixture::new();
    let builder = f.run("builder-bot");
    let other = f.run("builder-bot-2");
    let deploy = open(&f, &builder, NewGate::approval("deploy", "Deploy billing?", json!({})));
    let question = open(&f, &builder, NewGate::question("Deploy where?"));
    let elsewhere = open(&f, &other, NewGate::question("Deploy the docs?"));
    f.engine.resolve_gate(&question.id, DecisionInput::respond("staging"), "alice").unwrap();
    f.engine.resolve_gate(&elsewhere.id, DecisionInput::respond("no"), "alice-admin").unwrap();
    let cancelled = open(&f, &other, NewGate::question("Deploy again?"));
    f.engine.cancel_gate(&cancelled.id, "superseded by a newer build", "builder-bot-2").unwrap();

    let with = |change: &dyn Fn(&mut GateSearch)| {
        let mut s = GateSearch::text("deploy", 50);
        change(&mut s);
        ids(&f.engine.search_gates(&s).unwrap())
    };
    let (d, q, e, c) =
        (deploy.id.to_string(), question.id.to_string(), elsewhere.id.to_string(), cancelled.id.to_string());
    assert_eq!(with(&|_| {}), vec![c.clone(), e.clone(), q.clone(), d.clone()]);
    assert_eq!(with(&|s| s.status = Some(GateStatus::Pending)), vec![d.clone()]);
    assert_eq!(with(&|s| s.status = Some(GateStatus::Resolved)), vec![e.clone(), q.clone()]);
    assert_eq!(with(&|s| s.status = Some(GateStatus::Cancelled)), vec![c.clone()]);
    assert_eq!(with(&|s| s.kind = Some(GateKind::Approval)), vec![d.clone()]);
    assert_eq!(with(&|s| s.agent = Some("builder-bot".into())), vec![q.clone(), d.clone()], "exact, not a prefix");
    assert_eq!(with(&|s| s.run_id = Some(other.id.clone())), vec![c.clone(), e.clone()]);
    assert_eq!(with(&|s| s.decided_by = Some("alice".into())), vec![q.clone()], "exact, not a prefix");
    assert_eq!(with(&|s| s.decided_by = Some("alice-admin".into())), vec![e.clone()]);
    assert_eq!(
        with(&|s| {
            s.text.clear();
            s.agent = Some("builder-bot-2".into());
        }),
        vec![c.clone(), e.clone()],
        "filters without text"
    );
    assert_eq!(found(&f, "superseded"), vec![c], "a cancellation's reason");
}

#[test]
fn a_date_range_keeps_gates_opened_inside_it() {
    let f = Fixture::new();
    let run = f.run("agent");
    let start = f.engine.now();
    let first = open(&f, &run, NewGate::question("Backup the ledger?"));
    f.clock.advance(Duration::days(2));
    let second = open(&f, &run, NewGate::question("Backup the ledger again?"));
    f.clock.advance(Duration::days(2));
    let third = open(&f, &run, NewGate::question("Backup the ledger once more?"));

    for text in ["ledger", ""] {
        let range = |from: Option<i64>, to: Option<i64>| {
            let s = GateSearch {
                from: from.map(|d| start + Duration::days(d)),
                to: to.map(|d| start + Duration::days(d)),
                ..GateSearch::text(text, 50)
            };
            ids(&f.engine.search_gates(&s).unwrap())
        };
        assert_eq!(range(Some(1), Some(3)), vec![second.id.to_string()], "{text:?}");
        assert_eq!(range(Some(0), Some(2)), vec![first.id.to_string()], "from is inclusive, to exclusive");
        assert_eq!(range(Some(2), None), vec![third.id.to_string(), second.id.to_string()]);
        assert_eq!(range(None, Some(1)), vec![first.id.to_string()]);
    }
}

#[test]
fn pages_come_newest_first_and_say_when_more_follow() {
    let f = Fixture::new();
    let run = f.run("agent");
    let opened: Vec<String> =
        (0..7).map(|i| open(&f, &run, NewGate::question(format!("Invoice {i}?"))).id.to_string()).collect();
    let newest_first: Vec<String> = opened.iter().rev().cloned().collect();
    for text in ["invoice", ""] {
        let page = |offset| f.engine.search_gates(&GateSearch { offset, ..GateSearch::text(text, 3) }).unwrap();
        let (one, two, three) = (page(0), page(3), page(6));
        assert_eq!(ids(&one), newest_first[0..3], "{text:?}");
        assert!(one.more);
        assert_eq!(ids(&two), newest_first[3..6]);
        assert!(two.more);
        assert_eq!(ids(&three), newest_first[6..]);
        assert!(!three.more);
    }
}

#[test]
fn a_resolved_gate_is_found_by_its_reviewer_once_decided() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = open(&f, &run, NewGate::approval("drop_table", "Drop the staging table?", json!({ "table": "tmp" })));
    assert!(found(&f, "dana").is_empty());
    let by_dana = || GateSearch { decided_by: Some("dana".into()), ..GateSearch::text("", 10) };
    assert!(f.engine.search_gates(&by_dana()).unwrap().hits.is_empty());

    f.engine.resolve_gate(&gate.id, DecisionInput::reject("Not before the audit closes"), "dana").unwrap();
    assert_eq!(found(&f, "dana"), vec![gate.id.to_string()]);
    assert_eq!(found(&f, "audit"), vec![gate.id.to_string()], "the rejection's reason");
    let hits = f.engine.search_gates(&by_dana()).unwrap().hits;
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].gate.status, GateStatus::Resolved);
    assert_eq!(hits[0].gate.decision.as_ref().map(|d| d.decided_by.as_str()), Some("dana"));
    assert_eq!(hits[0].run_title, "agent's run");
    // Still found by what it always said.
    assert_eq!(found(&f, "staging table"), vec![gate.id.to_string()]);
}

#[test]
fn snippets_mark_the_matched_words_as_parts_of_plain_text() {
    let f = Fixture::new();
    let run = f.run("agent");
    open(&f, &run, NewGate::question("<script>alert(1)</script> Should we rotate the signing keys before Friday?"));
    let hit = &search(&f, "rotate key").hits[0];
    let marked: Vec<&str> = hit.snippet.iter().filter(|p| p.matched).map(|p| p.text.as_str()).collect();
    assert_eq!(marked, vec!["rotate", "keys"]);
    let whole: String = hit.snippet.iter().map(|p| p.text.as_str()).collect();
    assert!(whole.contains("<script>alert(1)</script>"), "agent text is returned as text: {whole}");
    assert!(whole.contains("rotate the signing keys"), "{whole}");

    // A filter's words are not the reviewer's: only the text is marked.
    let filtered = GateSearch { agent: Some("agent".into()), ..GateSearch::text("friday", 10) };
    let hit = &f.engine.search_gates(&filtered).unwrap().hits[0];
    let marked: Vec<&str> = hit.snippet.iter().filter(|p| p.matched).map(|p| p.text.as_str()).collect();
    assert_eq!(marked, vec!["Friday"]);
    // Of the columns that match, the one that matches most of the words;
    // on a tie what the gate says or what was decided, before the names.
    let run = f.run("zed");
    let answered = open(&f, &run, NewGate::question("Which zone for the canary?"));
    f.engine.resolve_gate(&answered.id, DecisionInput::respond("zone b, as zed asked"), "zed").unwrap();
    let hit = &search(&f, "zed zone").hits[0];
    let whole: String = hit.snippet.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(whole, "zone b, as zed asked", "{:?}", hit.snippet);
    let hit = &search(&f, "zed").hits[0];
    let whole: String = hit.snippet.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(whole, "zone b, as zed asked", "{:?}", hit.snippet);
    // Without text there is nothing to mark.
    assert!(search(&f, "").hits[0].snippet.is_empty());
}

#[test]
fn the_index_follows_purges_and_survives_vacuum() {
    // VACUUM and FTS5's integrity check are SQLite's own.
    let f = Fixture::sqlite();
    let old = f.run("agent");
    let old_gate = open(&f, &old, NewGate::question("Archive the old tenant?"));
    f.engine.resolve_gate(&old_gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    f.engine.complete_run(&old.id, "agent", None).unwrap();
    f.clock.advance(Duration::days(40));
    let live = f.run("agent");
    let pending = open(&f, &live, NewGate::question("Archive the new tenant?"));
    assert_eq!(f.engine.purge_terminal_runs(30).unwrap().runs.len(), 1);
    assert_eq!(found(&f, "tenant"), vec![pending.id.to_string()], "a purged run's gates leave the index");

    // VACUUM must keep each gate's rowid, which keys its document.
    let conn = rusqlite::Connection::open(f.db_path()).unwrap();
    conn.execute_batch("VACUUM").unwrap();
    f.engine.resolve_gate(&pending.id, DecisionInput::respond("fine"), "erin").unwrap();
    assert_eq!(found(&f, "erin tenant"), vec![pending.id.to_string()]);
    conn.execute_batch("INSERT INTO gate_search (gate_search) VALUES ('integrity-check')").unwrap();
}

#[test]
fn migrating_an_older_database_indexes_its_gates() {
    // SQLite's schema history.
    let f = Fixture::sqlite();
    let run = f.run("agent");
    let gate = open(&f, &run, NewGate::question("Renew the TLS certificate?"));
    f.engine.resolve_gate(&gate.id, DecisionInput::respond("done"), "frank").unwrap();
    let path = f.db_path();
    drop(f.engine);
    // Back to version 3: no search index (nor the later versions' additions).
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE global_memory;
         DROP INDEX gates_escalation; ALTER TABLE gates DROP COLUMN escalate_at; DROP TABLE allow_rules;
         DROP INDEX runs_by_parent; ALTER TABLE runs DROP COLUMN parent_id;
         DROP TRIGGER gate_search_insert; DROP TRIGGER gate_search_update; DROP TRIGGER gate_search_delete;
         DROP VIEW gate_search_source; DROP TABLE gate_search; PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);

    let engine = Engine::open(&path, EngineConfig::default()).unwrap();
    let hits = engine.search_gates(&GateSearch::text("certificate frank", 10)).unwrap().hits;
    assert_eq!(hits.iter().map(|h| h.gate.id.clone()).collect::<Vec<_>>(), vec![gate.id]);
}

#[test]
fn an_imported_gate_is_found_by_its_runs_title_and_its_decision_as_one_opened_here() {
    // An import stores its runs and then their gates, reading no run first
    // (PostgreSQL looks the title up as it writes the gate's document).
    let source = Fixture::new();
    let run =
        source.run_with(NewRun { agent: "scope-bot".into(), title: "Orbital telescope".into(), ..NewRun::default() });
    let gate = open(&source, &run, NewGate::question("Point the mirror north?"));
    source.engine.resolve_gate(&gate.id, DecisionInput::respond("aligned with Polaris"), "vera").unwrap();
    let target = Fixture::new();
    target.engine.import(source.engine.export(RecordingScope::All).unwrap(), "importer").unwrap();
    for words in ["orbital telescope", "mirror north", "polaris", "vera", "scope-bot"] {
        assert_eq!(found(&target, words), vec![gate.id.to_string()], "{words}");
    }
}

#[test]
fn a_gate_with_more_words_than_an_index_entry_holds_opens_and_is_found_by_its_first_ones() {
    // About 1.3 MB of distinct words: more than a PostgreSQL tsvector holds
    // (1 MiB), so there the document keeps the start of each field.
    let f = Fixture::new();
    let run = f.run("agent");
    let words: Vec<String> = (0..150_000).map(|i| format!("w{i:07}")).collect();
    let gate = open(&f, &run, NewGate::approval("bulk", "Load the word list?", json!({ "words": words.join(" ") })));
    assert_eq!(found(&f, "w0000001"), vec![gate.id.to_string()]);
    let decided = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "vera").unwrap();
    assert_eq!(decided.status, GateStatus::Resolved);
    assert_eq!(found(&f, "w0000002 vera"), vec![gate.id.to_string()]);
}

#[test]
fn out_of_range_searches_name_the_field() {
    let f = Fixture::new();
    let field = |s: GateSearch| match f.engine.search_gates(&s) {
        Err(EngineError::Invalid { field, .. }) => field,
        other => panic!("expected an invalid field, got {other:?}"),
    };
    assert_eq!(field(GateSearch::text("x", 0)), "limit");
    assert_eq!(field(GateSearch::text("x", 501)), "limit");
    assert_eq!(field(GateSearch { offset: 10_001, ..GateSearch::text("x", 10) }), "offset");
    assert_eq!(field(GateSearch::text("x".repeat(1_001), 10)), "text");
    assert_eq!(field(GateSearch::text("w ".repeat(33), 10)), "text");
    let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    assert_eq!(field(GateSearch { from: Some(at), to: Some(at), ..GateSearch::text("", 10) }), "to");
}

#[test]
fn a_purged_runs_gates_leave_the_index_on_either_backend() {
    let f = Fixture::new();
    let old = f.run("agent");
    let old_gate = open(&f, &old, NewGate::question("Archive the old tenant?"));
    f.engine.resolve_gate(&old_gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    f.engine.complete_run(&old.id, "agent", None).unwrap();
    f.clock.advance(Duration::days(40));
    let live = f.run("agent");
    let pending = open(&f, &live, NewGate::question("Archive the new tenant?"));
    assert_eq!(f.engine.purge_terminal_runs(30).unwrap().runs.len(), 1);
    assert_eq!(found(&f, "tenant"), vec![pending.id.to_string()]);
    assert!(found(&f, "alice").is_empty(), "nor is a purged gate's reviewer found");
    if f.is_postgres() {
        // No document outlives its gate.
        f.tamper(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM gate_search s WHERE NOT EXISTS
                 (SELECT 1 FROM gates g WHERE g.id = s.gate_id)) THEN RAISE EXCEPTION 'a stale document'; END IF; END $$",
        );
    }
    f.engine.resolve_gate(&pending.id, DecisionInput::respond("fine"), "erin").unwrap();
    assert_eq!(found(&f, "erin tenant"), vec![pending.id.to_string()]);
}

#[test]
fn snippets_show_the_text_as_written_however_its_words_were_folded() {
    let f = Fixture::new();
    let run = f.run("agent");
    let text = "Déployer à Zürich: the billing-API (eu-west-1)?";
    open(&f, &run, NewGate::question(text));
    let hit = &search(&f, "zurich billing-api").hits[0];
    let marked: Vec<&str> = hit.snippet.iter().filter(|p| p.matched).map(|p| p.text.as_str()).collect();
    assert_eq!(marked[0], "Zürich", "{:?}", hit.snippet);
    // SQLite marks the phrase as one part, PostgreSQL each of its words.
    assert!(marked[1].starts_with("billing"), "{:?}", hit.snippet);
    assert!(marked.concat().ends_with("API"), "{:?}", hit.snippet);
    let whole: String = hit.snippet.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(whole, text);
    assert_eq!(found(&f, "DEPLOYER a"), found(&f, "zürich"), "diacritics are folded in what is typed too");
}

#[test]
fn text_that_looks_like_tsquery_syntax_is_only_ever_text() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = open(&f, &run, NewGate::question("Is a & b | !c <-> d:* 'quoted' \\ safe?"));
    for text in ["&", "a & b", "| !c", "!", "<->", "<2>", "d:*", ":*", "'", "''", "'quoted'", "\\", "a:A", "(a | b"] {
        let result = f.engine.search_gates(&GateSearch::text(text, 10));
        assert!(result.is_ok(), "{text:?}: {result:?}");
    }
    let id = gate.id.to_string();
    assert_eq!(found(&f, "a & b"), vec![id.clone()], "`&` is punctuation");
    assert_eq!(found(&f, "!c"), vec![id.clone()]);
    assert_eq!(found(&f, "d:*"), vec![id.clone()]);
    assert_eq!(found(&f, "'quoted'"), vec![id]);
    assert!(found(&f, "d:* nowhere").is_empty());
}

#[test]
fn a_filter_naming_a_nul_character_matches_nothing() {
    // PostgreSQL's text cannot hold a NUL, and SQLite's FTS5 refuses one in
    // the column phrase it narrows by ("unterminated string"): no error, no hit.
    let f = Fixture::new();
    let run = f.run("agent");
    open(&f, &run, NewGate::question("Anything?"));
    assert_eq!(f.engine.search_gates(&GateSearch::text("anything", 10)).unwrap().hits.len(), 1);
    for search in [
        GateSearch { agent: Some("agent\0".into()), ..GateSearch::text("", 10) },
        GateSearch { agent: Some("agent\0".into()), ..GateSearch::text("anything", 10) },
        GateSearch { decided_by: Some("\0".into()), ..GateSearch::text("anything", 10) },
    ] {
        assert!(f.engine.search_gates(&search).unwrap().hits.is_empty());
    }
}

#[test]
fn migrating_an_older_postgres_database_indexes_its_gates() {
    // PostgreSQL's schema history; on SQLite, `migrating_an_older_database_indexes_its_gates`.
    let f = Fixture::new();
    if !f.is_postgres() {
        return;
    }
    let run = f.run("agent");
    let gate = open(&f, &run, NewGate::question("Renew the TLS certificate?"));
    f.engine.resolve_gate(&gate.id, DecisionInput::respond("done"), "frank").unwrap();
    // Back to version 1: no search index (nor the later versions' additions).
    f.tamper(
        "DROP TABLE global_memory;
         DROP TABLE gate_search; DROP TRIGGER gate_search_delete ON gates; DROP FUNCTION gate_search_follow();
         DROP FUNCTION gate_search_word; DROP FUNCTION gate_search_fold;
         UPDATE gatehouse_schema SET version = 1;",
    );
    let f = f.reopen();
    let hits = f.engine.search_gates(&GateSearch::text("certificate frank", 10)).unwrap().hits;
    assert_eq!(hits.iter().map(|h| h.gate.id.clone()).collect::<Vec<_>>(), vec![gate.id]);
}

/// A measurement, not a check (docs/benchmarks.md §4, "On PostgreSQL"):
/// pages of 50 hits over `GATEHOUSE_SEARCH_GATES` gates (100,000 unless
/// set), bulk-inserted with their documents, opened evenly over a
/// year in 500 runs of 20 agents, each text 12 words of a 30,000-word
/// vocabulary drawn with probability about 1/rank; 1 % pending, the rest
/// decided by 25 reviewers. Prints the build's and each search's median time.
#[test]
#[ignore = "a measurement; GATEHOUSE_TEST_BACKEND=postgres, --release --ignored --nocapture"]
fn measure_search_on_postgres() {
    use sha2::Digest;
    let f = Fixture::new();
    if !f.is_postgres() {
        return;
    }
    let gates: u32 = std::env::var("GATEHOUSE_SEARCH_GATES").map_or(100_000, |n| n.parse().expect("a number"));
    let run = f.run("agent-0");
    let template = open(&f, &run, NewGate::approval("deploy", "template", json!({ "service": "billing-api" })));
    let timed = |what: &str, sql: &str| {
        let start = std::time::Instant::now();
        f.tamper(sql);
        println!("{what}: {:.1} s", start.elapsed().as_secs_f64());
    };
    // The vocabulary's word of rank k (1 is the most common): seven letters.
    let word = |k: u32| -> String {
        let digest = hex::encode(sha2::Sha256::digest(k.to_string()));
        digest.chars().map(|c| if c.is_ascii_digit() { (b'g' + c as u8 - b'0') as char } else { c }).take(7).collect()
    };
    f.tamper(&format!(
        "CREATE FUNCTION bench_word(k int) RETURNS text LANGUAGE sql IMMUTABLE
             RETURN left(translate(encode(sha256(k::text::bytea), 'hex'), '0123456789', 'ghijklmnop'), 7);
         CREATE FUNCTION bench_text(seed int) RETURNS text LANGUAGE sql VOLATILE
             RETURN (SELECT string_agg(bench_word(floor(exp(random() * ln(30000)))::int + 0 * seed), ' ')
                     FROM generate_series(1, 12));
         INSERT INTO runs (id, status, created_at, updated_at, data)
             SELECT 'run_bench_' || r, status, created_at, updated_at,
                 jsonb_set(jsonb_set(data::jsonb, '{{id}}', to_jsonb('run_bench_' || r)), '{{title}}',
                     to_jsonb('Bench run ' || r))::text
             FROM runs, generate_series(0, 499) r WHERE id = '{}'",
        run.id
    ));
    let insert = |from: u32, to: u32| {
        format!(
            "INSERT INTO gates (id, run_id, kind, mode_rank, priority, status, agent, created_at, data)
             SELECT 'gate_bench_' || i, 'run_bench_' || i % 500, t.kind, t.mode_rank, t.priority,
                 CASE WHEN i % 100 = 0 THEN 'pending' ELSE 'resolved' END, 'agent-' || i % 20,
                 t.created_at - ({gates} - i)::bigint * 315360000,
                 jsonb_set(jsonb_set(jsonb_set(jsonb_set(jsonb_set(t.data::jsonb,
                     '{{id}}', to_jsonb('gate_bench_' || i)), '{{run_id}}', to_jsonb('run_bench_' || i % 500)),
                     '{{text}}', to_jsonb(bench_text(i))), '{{agent}}', to_jsonb('agent-' || i % 20)),
                     '{{status}}', to_jsonb(CASE WHEN i % 100 = 0 THEN 'pending' ELSE 'resolved' END))::text
             FROM gates t, generate_series({from}, {to} - 1) i WHERE t.id = '{}';
             INSERT INTO gate_search (gate_id, run_id, kind, status, created_at,
                                      text, action, payload, details, agent, run, reviewer, decision, document)
             SELECT g.id, g.run_id, g.kind, g.status, g.created_at, f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8],
                 to_tsvector('simple', to_jsonb(ARRAY[gate_search_fold(f[1]), gate_search_fold(f[2]),
                     gate_search_fold(f[3]), gate_search_fold(f[4]), gate_search_fold(f[5]), gate_search_fold(f[6]),
                     gate_search_fold(f[7]), gate_search_fold(f[8])]))
             FROM gates g JOIN runs r ON r.id = g.run_id, gate_search t,
                 LATERAL (SELECT ARRAY[g.data::json ->> 'text', t.action, t.payload, t.details, g.agent,
                     concat_ws(' ', g.run_id, r.data::json ->> 'title'), NULL, NULL] AS f) d
             WHERE t.gate_id = '{}' AND g.id LIKE 'gate_bench_%'
                 AND NOT EXISTS (SELECT 1 FROM gate_search s WHERE s.gate_id = g.id)",
            template.id, template.id
        )
    };
    timed(&format!("{gates} gates with their documents"), &insert(0, gates));
    timed(
        "their decisions",
        "INSERT INTO decisions (id, gate_id, run_id, action, decided_by, decided_at, latency_ms, data)
         SELECT 'decision_' || id, id, run_id, 'approve', 'reviewer-' || (hashtext(id) & 1023) % 25, created_at, 0, '{}'
         FROM gates WHERE status = 'resolved' AND id LIKE 'gate_bench_%'",
    );
    // Statistics, and the GIN index's pending entries merged, as autovacuum would.
    timed("ANALYZE", "ANALYZE; SELECT gin_clean_pending_list('gate_search_document')");
    let more = insert(gates, gates + 10_000);
    timed("10,000 more with their documents (rolled back)", &format!("BEGIN; {more}; ROLLBACK"));

    let now = f.engine.now();
    let page = |change: &dyn Fn(&mut GateSearch)| {
        let mut search = GateSearch::text("", 50);
        change(&mut search);
        search
    };
    let (common, rare, middle) = (word(1), word(20_000), word(300));
    let searches = [
        ("newest", page(&|_| {})),
        ("rare_word", page(&|s| s.text = format!("{rare} "))),
        ("common_word", page(&|s| s.text = format!("{common} "))),
        ("two_words", page(&|s| s.text = format!("{common} {} ", word(2)))),
        ("prefix_2", page(&|s| s.text = common[..2].to_owned())),
        ("prefix_4", page(&|s| s.text = middle[..4].to_owned())),
        ("no_match", page(&|s| s.text = "qwertyuiop ".into())),
        (
            "common_word_pending",
            page(&|s| {
                s.text = format!("{common} ");
                s.status = Some(GateStatus::Pending);
            }),
        ),
        (
            "common_word_agent",
            page(&|s| {
                s.text = format!("{common} ");
                s.agent = Some("agent-7".into());
            }),
        ),
        (
            "common_word_reviewer",
            page(&|s| {
                s.text = format!("{common} ");
                s.decided_by = Some("reviewer-3".into());
            }),
        ),
        (
            "common_word_last_30_days",
            page(&|s| {
                s.text = format!("{common} ");
                s.from = Some(now - Duration::days(30));
            }),
        ),
        (
            "common_word_to_mid_year",
            page(&|s| {
                s.text = format!("{common} ");
                s.to = Some(now - Duration::days(182));
            }),
        ),
        (
            "common_word_offset_5000",
            page(&|s| {
                s.text = format!("{common} ");
                s.offset = 5_000;
            }),
        ),
        ("agent_only", page(&|s| s.agent = Some("agent-7".into()))),
        ("run_only", page(&|s| s.run_id = Some(gatehouse_engine::RunId::from("run_bench_42")))),
        ("reviewer_only", page(&|s| s.decided_by = Some("reviewer-3".into()))),
        ("pending_only", page(&|s| s.status = Some(GateStatus::Pending))),
    ];
    for (name, search) in searches {
        let hits = f.engine.search_gates(&search).expect("search").hits.len();
        let mut times: Vec<f64> = (0..15)
            .map(|_| {
                let start = std::time::Instant::now();
                f.engine.search_gates(&search).expect("search");
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("search/{name}: {:.2} ms ({hits} hits)", times[times.len() / 2]);
    }
}
