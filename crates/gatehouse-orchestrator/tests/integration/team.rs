//! Team runs: agents that take turns and hand off to each other through
//! the intercepted `handoff` tool, keep what they learn in the run's
//! memory, and end with an answer a reviewer reviews. A team run killed
//! mid-handoff carries on after a restart with nothing repeated.

use crate::common;

use std::sync::Arc;

use common::{member, open, paused, registry, runtime, steps, until, Harness};
use gatehouse_engine::{DecisionInput, Engine, GateKind, NewRun, RunStatus, StepMode, Turn};
use gatehouse_orchestrator::team::change::TeamChange;
use gatehouse_orchestrator::team::restart::RestartTask;
use gatehouse_orchestrator::{Orchestrator, StartError};
use gatehouse_providers::{PayloadShape, Provider, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

/// The scripted story: coder → tester → coder → tester → deployer.
fn story() -> Value {
    json!({"prompt": "Add a logout button", "team": [
        member("coder", "coder", &[]),
        member("tester", "tester", &["store_memory", "retrieve_memory"]),
        member("deployer", "deployer", &[]),
    ]})
}

fn handoffs(turns: &[Turn]) -> Vec<(String, String)> {
    steps(turns, "handoff")
        .iter()
        .filter_map(|m| {
            let h = m.get("handoff")?;
            Some((h["from"].as_str()?.to_owned(), h["destination_agent"].as_str()?.to_owned()))
        })
        .collect()
}

fn pair(from: &str, to: &str) -> (String, String) {
    (from.to_owned(), to.to_owned())
}

fn expected_handoffs() -> Vec<(String, String)> {
    vec![pair("coder", "tester"), pair("tester", "coder"), pair("coder", "tester"), pair("tester", "deployer")]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_team_story_hands_back_on_failing_tests_once_then_deploys_under_review() {
    let h = Harness::new();
    let run = h.start(story(), json!({})).await;
    assert!(run.title.starts_with("team coder, tester, deployer: "), "{}", run.title);
    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(gate.text.contains("answer from **deployer**"), "{}", gate.text);
    let shown = serde_json::to_string(&gate.payload).unwrap();
    assert!(shown.contains("Deployed to production: Add a logout button."), "{shown}");
    assert_eq!(h.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);
    h.decide(&gate, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;

    let result = done.result.unwrap();
    assert_eq!((result["agent"].as_str(), result["turns"].as_u64()), (Some("deployer"), Some(5)));
    assert_eq!(result["handoffs"].as_array().unwrap().len(), 4);
    let turns = h.turns(&run.id);
    assert_eq!(handoffs(&turns), expected_handoffs());
    let agents: Vec<Value> = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].clone()).collect();
    assert_eq!(agents, [json!("coder"), json!("tester"), json!("coder"), json!("tester"), json!("deployer")]);

    // The handoffs' context and the tester's report are in the run's memory, with their history.
    let context = h.engine.context(&run.id).unwrap();
    assert_eq!(context["memory:run:handoff:2"]["value"]["context"]["failing_tests"][0], "login_rejects_a_bad_password");
    assert_eq!(context["memory:team:test_report"]["by"], "tester");
    let history = h.engine.context_history(&run.id).unwrap();
    assert_eq!(history.iter().filter(|c| c.key.starts_with("memory:run:handoff:")).count(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_to_an_unknown_agent_is_answered_with_the_team_and_the_turn_stays() {
    let scripted = ScriptedProvider::new("script").with_tool(
        Tool::new("script:agent", "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        [
            Step::Calls("Over to nobody.".into(), vec![("handoff".into(), json!({"destination_agent": "nobody"}))]),
            Step::Calls(
                "Over to d.".into(),
                vec![("handoff".into(), json!({"destination_agent": "d", "reason": "ready"}))],
            ),
        ],
    );
    let scripted = Arc::new(scripted);
    let h = Harness::with(vec![scripted.clone() as Arc<dyn Provider>]);
    let input = json!({"prompt": "Ship", "team": [
        {"name": "a", "role": "planner", "provider": "script", "model": "agent"},
        member("d", "deployer", &[]),
    ]});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    h.status(&run.id, RunStatus::Completed).await;

    let calls = scripted.calls();
    assert_eq!(calls.len(), 2, "a asked again after the refusal");
    let second = calls[1].payload.to_value().to_string();
    assert!(second.contains("handoff refused: there is no agent `nobody`; the agents are a, d"), "{second}");
    let turns = h.turns(&run.id);
    assert_eq!(handoffs(&turns), [pair("a", "d")]);
    let refused = steps(&turns, "handoff");
    assert_eq!(refused.len(), 2);
    assert!(refused[0].get("handoff").is_none(), "a refused handoff is not a handoff on the timeline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_is_checked_when_the_run_starts_naming_the_field() {
    let h = Harness::new();
    let start = |input: Value| {
        let orch = h.orch.clone();
        async move { orch.start(&input, NewRun::default(), "alice").await }
    };
    let field = |e: StartError| match e {
        StartError::Spec(s) => s.field,
        other => panic!("not a spec error: {other}"),
    };
    let dup = json!({"prompt": "x", "team": [member("a", "r", &[]), member("a", "r", &[])]});
    assert_eq!(field(start(dup).await.unwrap_err()), "team[1].name");
    let empty = json!({"prompt": "x", "team": []});
    assert_eq!(field(start(empty).await.unwrap_err()), "team");
    let tool = json!({"prompt": "x", "team": [member("a", "r", &["deploy_to_prod"])]});
    assert_eq!(field(start(tool).await.unwrap_err()), "team[0].tools[0]");
    let provider = json!({"prompt": "x", "team": [{"name": "a", "role": "r", "provider": "nope", "model": "m"}]});
    assert_eq!(field(start(provider).await.unwrap_err()), "team[0].provider");
    assert!(h.engine.runs(&Default::default()).unwrap().is_empty(), "no run was created");
}

#[test]
fn a_team_run_killed_mid_handoff_carries_on_with_nothing_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gatehouse.db");
    // Paused after the coder's turn asks for the handoff, before the handoff is made: killed there.
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = {
        let rt = runtime();
        let engine = open(&path);
        let (reg, scripted) = registry(Vec::new());
        let orch = Orchestrator::new(engine.clone(), reg);
        let template: NewRun = serde_json::from_value(config).unwrap();
        let run = rt.block_on(orch.start(&story(), template, "alice")).unwrap();
        let reached = rt.block_on(until(&engine, |e| Ok(paused(e, &run.id).then_some(()))));
        assert!(reached.is_some(), "{:#?}", common::history(&engine, &run.id));
        assert_eq!(scripted.calls().len(), 1);
        assert!(handoffs(&engine.turns(&run.id).unwrap()).is_empty(), "the handoff is not made yet");
        rt.shutdown_background();
        run.id
    };

    let rt = runtime();
    let engine = open(&path);
    let (reg, scripted) = registry(Vec::new());
    let orch = Orchestrator::new(engine.clone(), reg);
    assert_eq!(rt.block_on(orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    engine.set_run_control(&run, StepMode::Continuous, Vec::new(), "alice").unwrap();
    engine.resume_run(&run, "alice").unwrap();
    let gate = rt.block_on(until(&engine, |e| {
        let filter = gatehouse_engine::GateFilter {
            run_id: Some(run.clone()),
            kind: Some(GateKind::ResponseReview),
            ..gatehouse_engine::GateFilter::pending()
        };
        Ok(e.gates(&filter)?.into_iter().next())
    }));
    let gate = gate.unwrap_or_else(|| panic!("{:#?}", common::history(&engine, &run)));
    engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let done = rt.block_on(until(&engine, |e| Ok(Some(e.run(&run)?).filter(|r| r.status == RunStatus::Completed))));
    let done = done.unwrap_or_else(|| panic!("{:#?}", common::history(&engine, &run)));

    // The same outcome as the uninterrupted story, each step once.
    assert_eq!(scripted.calls().len(), 4, "the coder's first turn was not asked again");
    let turns = engine.turns(&run).unwrap();
    assert_eq!(handoffs(&turns), expected_handoffs());
    assert_eq!(steps(&turns, "agent_turn").len(), 5);
    assert_eq!(steps(&turns, "call").len(), 5);
    let result = done.result.unwrap();
    assert_eq!((result["agent"].as_str(), result["turns"].as_u64()), (Some("deployer"), Some(5)));
    let history = engine.context_history(&run).unwrap();
    assert_eq!(history.iter().filter(|c| c.key.starts_with("memory:run:handoff:")).count(), 4);
    rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_overrides_the_next_agent_and_changes_the_team_while_paused() {
    let h = Harness::new();
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(story(), config).await;
    h.status(&run.id, RunStatus::Paused).await;

    // While paused after the coder's turn: the deployer acts next, and an auditor joins.
    let start = gatehouse_orchestrator::team::parse(&story()["team"], h.orch.registry()).unwrap();
    let add = json!({"action": "add", "agent": {"name": "auditor", "role": "auditor", "provider": "scripted", "model": "chat"}});
    let change = TeamChange::check(&add, &start, h.orch.registry()).unwrap();
    h.engine.add_turn(&run.id, change.turn("alice"), "alice").unwrap();
    h.engine.set_next_agent(&run.id, Some("deployer"), "alice").unwrap();
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();

    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(gate.text.contains("answer from **deployer**"), "{}", gate.text);
    h.decide(&gate, DecisionInput::approve());
    let done = h.status(&run.id, RunStatus::Completed).await;
    assert_eq!(done.result.unwrap()["turns"], 2, "the deployer took the second turn");

    let turns = h.turns(&run.id);
    let overrides = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].clone()).collect::<Vec<_>>();
    assert_eq!(overrides, [json!("coder"), json!("deployer")]);
    assert!(turns.iter().any(|t| t.metadata["team_override"] == "deployer"), "{:#?}", h.history(&run.id));
    assert_eq!(steps(&turns, "team_change").len(), 1);
    let prompts: Vec<String> = h.scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert!(prompts[1].contains("- auditor (auditor)"), "the deployer saw the new team: {}", prompts[1]);
    assert!(!prompts[0].contains("auditor"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_next_agent_chosen_with_a_restart_takes_the_turn_after_the_redone_one() {
    let h = Harness::new();
    let config = json!({"step_mode": "breakpoint", "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = h.start(story(), config).await;
    h.status(&run.id, RunStatus::Paused).await;

    // While paused after the coder's turn: the coder redoes it, told a word for the team, then the deployer acts.
    let team = gatehouse_orchestrator::team::view::team_of(&h.engine.run(&run.id).unwrap()).unwrap();
    let request = RestartTask::check(&json!({"agent": "coder", "instruction": "add a confirmation"}), &team).unwrap();
    h.engine.add_turn(&run.id, request.turn("alice"), "alice").unwrap();
    h.engine.set_next_agent(&run.id, Some("deployer"), "alice").unwrap();
    h.engine.inject_instruction(&run.id, "ship it behind a flag", "alice").unwrap();
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();

    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(gate.text.contains("answer from **deployer**"), "{}", gate.text);
    h.decide(&gate, DecisionInput::approve());
    h.status(&run.id, RunStatus::Completed).await;
    let turns = h.turns(&run.id);
    let agents: Vec<Value> = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].clone()).collect();
    assert_eq!(agents, [json!("coder"), json!("coder"), json!("deployer")], "{:#?}", h.history(&run.id));
    assert!(turns.iter().any(|t| t.metadata["team_override"] == "deployer"), "{:#?}", h.history(&run.id));
    let sent = common::prompts(&h.scripted);
    assert!(sent[1].contains("sent you back to redo your turn: add a confirmation"), "{}", sent[1]);
    assert!(sent[1].contains("A reviewer says: ship it behind a flag"), "the next to act was told: {}", sent[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_a_handoff_breakpoint_a_restart_and_a_next_agent_both_take_effect() {
    let h = Harness::new();
    let run = h.start(story(), json!({"step_mode": "breakpoint", "breakpoints": [{"on": "handoff"}]})).await;
    h.status(&run.id, RunStatus::Paused).await;

    // Paused once the coder handed to the tester: the coder redoes its turn, then the deployer acts.
    let team = gatehouse_orchestrator::team::view::team_of(&h.engine.run(&run.id).unwrap()).unwrap();
    let request = RestartTask::check(&json!({"agent": "coder"}), &team).unwrap();
    h.engine.add_turn(&run.id, request.turn("alice"), "alice").unwrap();
    h.engine.set_next_agent(&run.id, Some("deployer"), "alice").unwrap();
    h.engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    h.engine.resume_run(&run.id, "alice").unwrap();

    let gate = h.gate(&run.id, GateKind::ResponseReview).await;
    assert!(gate.text.contains("answer from **deployer**"), "{}", gate.text);
    let turns = h.turns(&run.id);
    let agents: Vec<Value> = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].clone()).collect();
    assert_eq!(agents, [json!("coder"), json!("coder"), json!("deployer")], "{:#?}", h.history(&run.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_tools_keep_retrieve_search_and_expire_values_in_their_scope() {
    let calls = |text: &str, list: Vec<(&str, Value)>| {
        Step::Calls(text.into(), list.into_iter().map(|(n, a)| (n.to_owned(), a)).collect())
    };
    let scripted = Arc::new(ScriptedProvider::new("mem").with_tool(
        Tool::new("mem:agent", "agent", gatehouse_providers::openai::chat_schema()),
        PayloadShape::Chat,
        [
            calls(
                "Noting the build.",
                vec![
                    ("store_memory", json!({"key": "build", "value": {"id": 7}, "scope": "team", "ttl": 60})),
                    ("store_memory", json!({"key": "x", "value": 1, "scope": "global"})),
                    ("retrieve_memory", json!({"key": "build", "scope": "team"})),
                    ("search_memory", json!({"query": "\"id\":7", "scope": "team"})),
                    ("retrieve_memory", json!({"key": "build", "scope": "run"})),
                ],
            ),
            calls("A minute later.", vec![("retrieve_memory", json!({"key": "build", "scope": "team"}))]),
            Step::Reply("Done.".into()),
        ],
    ));
    let dir = tempfile::tempdir().unwrap();
    let clock = gatehouse_engine::ManualClock::new(chrono::Utc::now());
    let engine = Engine::open_with_clock(dir.path().join("g.db"), Default::default(), Arc::new(clock.clone())).unwrap();
    let (reg, _) = registry(vec![scripted.clone() as Arc<dyn Provider>]);
    let orch = Orchestrator::new(engine.clone(), reg);
    let input = json!({"prompt": "Keep notes", "team": [
        {"name": "a", "role": "keeper", "provider": "mem", "model": "agent",
         "tools": ["store_memory", "retrieve_memory", "search_memory"]},
    ]});
    let config = json!({"hitl_config": {"run_policy": "auto"}, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let run = orch.start(&input, serde_json::from_value(config).unwrap(), "alice").await.unwrap();
    let first = until(&engine, |e| Ok(paused(e, &run.id).then_some(()))).await;
    assert!(first.is_some(), "{:#?}", common::history(&engine, &run.id));
    // Paused after each agent turn: the first turn's calls are answered once it goes on;
    // a minute passes before the second turn's call is.
    engine.resume_run(&run.id, "alice").unwrap();
    let second = until(&engine, |e| {
        let turns = e.turns(&run.id)?;
        Ok((paused(e, &run.id) && steps(&turns, "agent_turn").len() == 2).then_some(()))
    })
    .await;
    assert!(second.is_some(), "{:#?}", common::history(&engine, &run.id));
    clock.advance(chrono::Duration::seconds(61));
    engine.set_run_control(&run.id, StepMode::Continuous, Vec::new(), "alice").unwrap();
    engine.resume_run(&run.id, "alice").unwrap();
    let done = until(&engine, |e| Ok(Some(e.run(&run.id)?).filter(|r| r.status == RunStatus::Completed))).await;
    assert!(done.is_some(), "{:#?}", common::history(&engine, &run.id));

    let prompts: Vec<String> = scripted.calls().iter().map(|c| c.payload.to_value().to_string()).collect();
    assert_eq!(prompts.len(), 3);
    for expected in [
        "store_memory: kept `build` in the team memory until ",
        "store_memory: kept `x` in the global memory",
        "retrieve_memory `build`: {\\\"id\\\":7}",
        "search_memory `\\\"id\\\":7`:\\n- build: {\\\"id\\\":7}",
        "retrieve_memory: nothing kept under `build` in the run memory",
    ] {
        assert!(prompts[1].contains(expected), "{expected} in {}", prompts[1]);
    }
    assert!(prompts[2].contains("retrieve_memory: nothing kept under `build` in the team memory"), "{}", prompts[2]);
    // Kept with its history, for a reviewer.
    let history = engine.context_history(&run.id).unwrap();
    assert_eq!(history.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(), ["memory:team:build", "snapshot:end"]);
    assert_eq!(engine.global_memory().unwrap()["x"]["value"], 1);
}

/// A chat completion answering `text`, with no native tool call.
fn text_completion(text: &str) -> Value {
    json!({"id": "c", "model": "test-model", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_tool_calling_hands_off_in_the_text_protocol_after_its_mistakes_are_answered() {
    use axum::http::Method;
    use gatehouse_providers::{OpenAiProvider, ProviderKind};

    use crate::wire::{MockProvider, Reply};

    let replies = [
        // Invalid JSON (a trailing comma).
        "Over to d.\nTOOL_CALL: {\"tool_name\": \"handoff\", \"args\": {\"destination_agent\": \"d\",}}",
        // A tool that does not exist.
        "TOOL_CALL: {\"tool_name\": \"deploy_now\", \"args\": {}}",
        // A handoff missing its destination.
        "TOOL_CALL: {\"tool_name\": \"handoff\", \"args\": {\"reason\": \"ready\"}}",
        "Handing over.\nTOOL_CALL: {\"tool_name\": \"handoff\", \"args\": {\"destination_agent\": \"d\", \"reason\": \"ready\"}}",
        "Deployed.",
    ];
    let server = MockProvider::start(vec![(
        Method::POST,
        "/v1/chat/completions",
        replies.iter().map(|r| Reply::json(200, text_completion(r))).collect(),
    )])
    .await;
    let provider = OpenAiProvider::new(&server.config(ProviderKind::OpenaiCompatible, "/v1")).unwrap();
    let h = Harness::with(vec![Arc::new(provider) as Arc<dyn Provider>]);
    let agent =
        |name: &str, role: &str| json!({"name": name, "role": role, "provider": "openai", "model": "test-model"});
    let input = json!({"prompt": "Ship the release", "team": [agent("a", "planner"), agent("d", "deployer")]});
    let run = h.start(input, json!({"hitl_config": {"run_policy": "auto"}})).await;
    let done = h.status(&run.id, RunStatus::Completed).await;

    let sent: Vec<String> = server.seen().iter().map(|s| s.body.to_string()).collect();
    assert_eq!(sent.len(), 5, "a took four turns, d one");
    assert!(sent[0].contains("TOOL_CALL:"), "the prompt shows the text protocol: {}", sent[0]);
    assert!(sent[1].contains("is not valid JSON"), "{}", sent[1]);
    assert!(
        sent[2].contains("There is no tool called `deploy_now`. The tools you can use are: handoff"),
        "{}",
        sent[2]
    );
    assert!(sent[3].contains("The arguments of `handoff` are wrong"), "{}", sent[3]);
    assert!(sent[3].contains("destination_agent"), "{}", sent[3]);
    let turns = h.turns(&run.id);
    assert_eq!(handoffs(&turns), [pair("a", "d")]);
    let result = done.result.unwrap();
    assert_eq!((result["agent"].as_str(), result["text"].as_str()), (Some("d"), Some("Deployed.")));
    // The handoff turn shows the agent's words without the call's line.
    let said: Vec<String> = steps(&turns, "agent_turn").iter().map(|m| m["team_agent"].to_string()).collect();
    assert_eq!(said, ["\"a\"", "\"a\"", "\"a\"", "\"a\"", "\"d\""]);
}
