//! The team's memory beyond one run: the global scope, kept across runs
//! (one run's agent stores, another run's agent finds it), and the
//! snapshots of a run's memory kept at each handoff and at its end.

use crate::common;

use std::sync::Arc;

use common::{registry, until};
use gatehouse_engine::{Engine, RunStatus};
use gatehouse_orchestrator::team::memory::snapshots;
use gatehouse_orchestrator::Orchestrator;
use gatehouse_providers::{PayloadShape, Provider, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

fn calls(text: &str, list: Vec<(&str, Value)>) -> Step {
    Step::Calls(text.into(), list.into_iter().map(|(n, a)| (n.to_owned(), a)).collect())
}

fn keeper() -> Value {
    json!({"prompt": "Keep notes", "team": [
        {"name": "a", "role": "keeper", "provider": "mem", "model": "agent",
         "tools": ["store_memory", "retrieve_memory", "search_memory"]},
    ]})
}

async fn finish(engine: &Engine, orch: &Arc<Orchestrator>, input: &Value) -> gatehouse_engine::RunId {
    let config = json!({"hitl_config": {"run_policy": "auto"}});
    let run = orch.start(input, serde_json::from_value(config).unwrap(), "alice").await.unwrap();
    let done = until(engine, |e| Ok(Some(e.run(&run.id)?).filter(|r| r.status == RunStatus::Completed))).await;
    assert!(done.is_some(), "{:#?}", common::history(engine, &run.id));
    run.id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_global_value_stored_in_one_run_is_found_by_the_next() {
    let scripted = Arc::new(ScriptedProvider::new("mem").with_tool(
        Tool::new("mem:agent", "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        [
            calls(
                "Noting.",
                vec![("store_memory", json!({"key": "house_style", "value": "terse", "scope": "global"}))],
            ),
            Step::Reply("Done.".into()),
            calls("Looking.", vec![("retrieve_memory", json!({"key": "house_style", "scope": "global"}))]),
            Step::Reply("Done again.".into()),
        ],
    ));
    let dir = tempfile::tempdir().unwrap();
    let engine = common::open(&dir.path().join("g.db"));
    let (reg, _) = registry(vec![scripted.clone() as Arc<dyn Provider>]);
    let orch = Orchestrator::new(engine.clone(), reg);
    let first = finish(&engine, &orch, &keeper()).await;
    let second = finish(&engine, &orch, &keeper()).await;

    let prompts: Vec<String> = scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert!(prompts[3].contains("retrieve_memory `house_style`: \\\"terse\\\""), "{}", prompts[3]);
    let stored = &engine.global_memory().unwrap()["house_style"];
    assert_eq!((stored["value"].as_str(), stored["by"].as_str()), (Some("terse"), Some("a")));
    assert_eq!(stored["run"].as_str(), Some(first.as_str()), "it names the run it came from");
    let history = engine.global_memory_history().unwrap();
    assert_eq!(history.len(), 1);
    // Each run kept a snapshot of its own memory at its end; the global memory is in neither.
    for run in [&first, &second] {
        let kept = snapshots(&engine.context(run).unwrap());
        assert_eq!(kept.iter().map(|s| s.label.as_str()).collect::<Vec<_>>(), ["end"]);
        assert!(kept[0].entries.is_empty(), "{:?}", kept[0].entries);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_handoff_and_the_end_keep_a_snapshot_of_the_memory_as_it_stood() {
    let h = common::Harness::new();
    let story = json!({"prompt": "Add a logout button", "team": [
        {"name": "coder", "role": "coder", "provider": "scripted", "model": "chat"},
        {"name": "tester", "role": "tester", "provider": "scripted", "model": "chat", "tools": ["store_memory"]},
        {"name": "deployer", "role": "deployer", "provider": "scripted", "model": "chat"},
    ]});
    let run = h.start(story, json!({"hitl_config": {"run_policy": "auto"}})).await;
    h.status(&run.id, RunStatus::Completed).await;
    let kept = snapshots(&h.engine.context(&run.id).unwrap());
    let labels: Vec<&str> = kept.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels.len(), 5, "four handoffs and the end: {labels:?}");
    assert_eq!(labels.last(), Some(&"end"));
    // The first handoff's snapshot holds its own record, not yet the tester's report.
    let keys = |i: usize| kept[i].entries.iter().map(|e| e.key.clone()).collect::<Vec<_>>();
    assert!(keys(0).iter().any(|k| k.starts_with("run:handoff:")), "{:?}", keys(0));
    assert!(!keys(0).contains(&"team:test_report".to_owned()));
    assert!(keys(4).contains(&"team:test_report".to_owned()), "{:?}", keys(4));
}
