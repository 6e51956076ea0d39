//! The global memory, kept across runs on SQLite and PostgreSQL alike:
//! set by one run's agent, read from another's, its history from the log,
//! never dropped with the run that wrote it, and checked by audit
//! verification like every other row.

use crate::common::Fixture;

use gatehouse_engine::ErrorCode;
use serde_json::json;

#[test]
fn a_key_set_in_one_run_is_read_in_another_after_the_first_ended_and_was_purged() {
    let f = Fixture::new();
    let first = f.run("researcher");
    let old = f.engine.global_memory_set("style", json!({"value": "terse"}), "researcher", &first.id).unwrap();
    assert_eq!(old, None);
    // The same value again changes nothing and logs nothing.
    let head = f.engine.global_memory_history().unwrap().len();
    f.engine.global_memory_set("style", json!({"value": "terse"}), "researcher", &first.id).unwrap();
    assert_eq!(f.engine.global_memory_history().unwrap().len(), head);
    f.engine.cancel_run(&first.id, "alice", None).unwrap();
    f.clock.advance(chrono::Duration::days(40));
    let purged = f.engine.purge_terminal_runs(30).unwrap();
    assert_eq!(purged.runs, std::slice::from_ref(&first.id), "{purged:?}");

    let f = f.reopen();
    let second = f.run("writer");
    assert_eq!(f.engine.global_memory().unwrap()["style"], json!({"value": "terse"}));
    let old = f.engine.global_memory_set("style", json!({"value": "warm"}), "writer", &second.id).unwrap();
    assert_eq!(old, Some(json!({"value": "terse"})));
    f.engine.global_memory_delete("style", "alice").unwrap();
    let history = f.engine.global_memory_history().unwrap();
    let seen: Vec<(&str, Option<&serde_json::Value>)> =
        history.iter().map(|c| (c.actor.as_str(), c.new.as_ref())).collect();
    assert_eq!(
        seen,
        [
            ("researcher", Some(&json!({"value": "terse"}))),
            ("writer", Some(&json!({"value": "warm"}))),
            ("alice", None)
        ]
    );
    assert!(f.engine.global_memory().unwrap().is_empty());
    assert!(f.engine.verify_audit().unwrap().is_intact(), "{:?}", f.engine.verify_audit().unwrap().problems);
}

#[test]
fn an_ended_run_writes_nothing_and_bad_keys_name_the_field() {
    let f = Fixture::new();
    let run = f.run("agent");
    let err = f.engine.global_memory_set(" ", json!(1), "agent", &run.id).unwrap_err();
    assert_eq!((err.code(), err.field().as_deref()), (ErrorCode::Invalid, Some("key")));
    let err = f.engine.global_memory_delete("never-set", "alice").unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    f.engine.cancel_run(&run.id, "alice", None).unwrap();
    assert!(f.engine.global_memory_set("k", json!(1), "agent", &run.id).is_err());
    assert!(f.engine.global_memory().unwrap().is_empty());
}

#[test]
fn a_global_memory_row_edited_behind_the_engine_fails_verification() {
    let f = Fixture::new();
    let run = f.run("agent");
    f.engine.global_memory_set("budget", json!(100), "agent", &run.id).unwrap();
    assert!(f.engine.verify_audit().unwrap().is_intact());
    f.tamper("UPDATE global_memory SET value = '100000'");
    let report = f.engine.verify_audit().unwrap();
    let named = report.problems.iter().any(|p| p.contains("global memory key") && p.contains("budget"));
    assert!(named, "{:?}", report.problems);
}
