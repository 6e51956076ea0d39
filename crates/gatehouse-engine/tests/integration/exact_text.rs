//! What agents and reviewers send is stored exactly: text with quotes,
//! backslashes, SQL, dollar quotes, control characters and emoji comes back
//! byte for byte from every record that holds it, on either backend, and
//! is never read as SQL or as an escape.

use crate::common;

use common::Fixture;
use gatehouse_engine::search::GateSearch;
use gatehouse_engine::{DecisionInput, NewGate, NewRun};

#[test]
fn text_with_quotes_backslashes_and_sql_in_it_is_stored_and_read_back_exactly_as_sent() {
    // In the run, the gate, its decision and its search document, read
    // back by the engine that wrote them and by another on the same data.
    let hostile = [
        "it's",
        r"C:\temp\'quoted'\\",
        "'); DROP TABLE gates; --",
        "E'\\x00' $1 $$ dollar $$ ::int",
        "line one\nline two\ttab\r\n",
        "é ✓ 😀 \u{200B}",
        r#"{"not": "json'"}"#,
    ];
    let f = Fixture::new();
    let run = f.run_with(NewRun { agent: "it's-a-bot\\".into(), title: hostile.join(" | "), ..NewRun::default() });
    let payload = serde_json::json!({ "command": hostile, "path": hostile[1], "nested": { hostile[2]: hostile[3] } });
    let gate = f
        .engine
        .open_gate(&run.id, NewGate::approval(hostile[2], hostile[4], payload.clone()), "it's-a-bot\\")
        .unwrap();
    let edited = serde_json::json!({ "command": hostile[1..].to_vec(), hostile[0]: hostile[5] });
    let decided = f
        .engine
        .resolve_gate(
            &gate.id,
            DecisionInput { text: Some(hostile.concat()), ..DecisionInput::edit(edited.clone()) },
            hostile[0],
        )
        .unwrap();

    for engine in [f.engine.clone(), f.open_again()] {
        let stored = engine.gate(&gate.id).unwrap();
        assert_eq!(stored, decided);
        assert_eq!((stored.text.as_str(), stored.payload.as_ref()), (hostile[4], Some(&payload)));
        let decision = stored.decision.expect("decided");
        assert_eq!(
            (decision.payload, decision.text.as_deref()),
            (Some(edited.clone()), Some(hostile.concat().as_str()))
        );
        assert_eq!(decision.decided_by, hostile[0]);
        assert_eq!(engine.run(&run.id).unwrap().title, hostile.join(" | "));
        // Its search document was written from the same values.
        for words in ["dollar", "temp quoted", "line two"] {
            let hits = engine.search_gates(&GateSearch::text(words, 10)).unwrap().hits;
            assert_eq!(hits.iter().map(|h| h.gate.id.clone()).collect::<Vec<_>>(), vec![gate.id.clone()], "{words}");
        }
    }
    assert!(f.engine.verify_audit().unwrap().is_intact());
}
