//! Team runs with the operator's toolbox: agents granted workspace tools,
//! `web_search`, command tools and `ask_human` call them through the team
//! loop on a real engine. Files stay in the run's workspace, a command runs
//! only once a person approves its exact argv (and never twice after a
//! restart), a question waits for a person's answer, and each model family
//! gets its prompt template.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::{open, until};
use gatehouse_engine::{DecisionInput, Engine, Gate, GateFilter, GateKind, NewRun, RunId, RunStatus, StepMode, Turn};
use gatehouse_orchestrator::toolbox::{Toolbox, ToolboxConfig};
use gatehouse_orchestrator::{Orchestrator, StartError};
use gatehouse_providers::{PayloadShape, Provider, ProviderRegistry, ScriptedProvider, Step, Tool};
use serde_json::{json, Value};

/// A scripted model `model` of provider `name` following `steps`.
fn scripted(name: &str, model: &str, steps: Vec<Step>) -> Arc<ScriptedProvider> {
    let tool = Tool::new(format!("{name}:{model}"), model, gatehouse_providers::openai::chat_schema());
    Arc::new(ScriptedProvider::new(name).with_tool(tool, PayloadShape::Chat, steps))
}

fn calls(text: &str, list: Vec<(&str, Value)>) -> Step {
    Step::Calls(text.into(), list.into_iter().map(|(n, a)| (n.to_owned(), a)).collect())
}

async fn toolbox(yaml: &str, workspaces: &Path) -> Arc<Toolbox> {
    let config: ToolboxConfig = serde_norway::from_str(yaml).expect("a toolbox file");
    Arc::new(Toolbox::load(config, workspaces.to_owned()).await.expect("the toolbox loads"))
}

/// An orchestrator over the database in `dir` with `providers` and the toolbox `yaml`.
struct Setup {
    engine: Engine,
    orch: Arc<Orchestrator>,
    workspaces: PathBuf,
}

async fn setup(dir: &Path, yaml: &str, providers: &[Arc<ScriptedProvider>]) -> Setup {
    let engine = open(&dir.join("gatehouse.db"));
    let mut registry = ProviderRegistry::new();
    for p in providers {
        registry.register(p.clone() as Arc<dyn Provider>).expect("provider registers");
    }
    let workspaces = dir.join("workspaces");
    let orch = Orchestrator::with_toolbox(engine.clone(), registry, Some(toolbox(yaml, &workspaces).await));
    Setup { engine, orch, workspaces }
}

impl Setup {
    async fn start(&self, input: Value, config: Value) -> RunId {
        let template: NewRun = serde_json::from_value(config).expect("a NewRun");
        self.orch.start(&input, template, "alice").await.expect("the run starts").id
    }

    async fn gate(&self, run: &RunId, kind: GateKind) -> Gate {
        let filter = GateFilter { run_id: Some(run.clone()), kind: Some(kind), ..GateFilter::pending() };
        let found = until(&self.engine, |e| Ok(e.gates(&filter)?.into_iter().next())).await;
        found.unwrap_or_else(|| panic!("no pending {kind:?} gate: {:#?}", common::history(&self.engine, run)))
    }

    async fn done(&self, run: &RunId) {
        let found = until(&self.engine, |e| Ok(Some(e.run(run)?).filter(|r| r.status == RunStatus::Completed))).await;
        assert!(found.is_some(), "never completed: {:#?}", common::history(&self.engine, run));
    }

    fn workspace(&self, run: &RunId) -> PathBuf {
        self.workspaces.join(run.to_string())
    }
}

fn one_agent(provider: &str, model: &str, tools: &[&str]) -> Value {
    json!({"prompt": "Add a logout button", "team": [
        {"name": "a", "role": "coder", "provider": provider, "model": model, "tools": tools}]})
}

fn prompts(p: &ScriptedProvider) -> Vec<String> {
    p.calls().iter().map(|c| c.payload.to_value().to_string()).collect()
}

fn tool_turns(turns: &[Turn]) -> Vec<Value> {
    turns.iter().filter(|t| t.metadata["step"] == "tool_call").map(|t| t.metadata.clone()).collect()
}

const AUTO: &str = r#"{"hitl_config": {"run_policy": "auto"}}"#;

fn auto() -> Value {
    serde_json::from_str(AUTO).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_writes_reads_and_searches_its_runs_workspace_and_cannot_leave_it() {
    let dir = tempfile::tempdir().unwrap();
    let model = scripted(
        "ws",
        "agent",
        vec![
            calls(
                "Writing the change.",
                vec![
                    ("create_artifact", json!({"path": "src/app.py", "content": "def logout():\n    pass\n"})),
                    ("read_artifact", json!({"path": "src/app.py"})),
                    ("code_search", json!({"query": "LOGOUT"})),
                    ("read_artifact", json!({"path": "../../gatehouse.db"})),
                    ("create_artifact", json!({"path": "/tmp/escaped.txt", "content": "x"})),
                    ("web_search", json!({"query": "not granted"})),
                ],
            ),
            Step::Reply("Done.".into()),
        ],
    );
    let s = setup(dir.path(), "{}", std::slice::from_ref(&model)).await;
    let run = s.start(one_agent("ws", "agent", &["create_artifact", "read_artifact", "code_search"]), auto()).await;
    s.done(&run).await;

    let written = std::fs::read_to_string(s.workspace(&run).join("src/app.py")).unwrap();
    assert_eq!(written, "def logout():\n    pass\n");
    assert!(!Path::new("/tmp/escaped.txt").exists());
    let sent = prompts(&model);
    assert!(sent[0].contains("Available Tools:"), "the default template: {}", sent[0]);
    assert!(sent[0].contains("- create_artifact(path: str, content: str): Create or overwrite"), "{}", sent[0]);
    assert!(sent[0].contains("- code_search(query: str, path: Optional[str], limit: Optional[int])"), "{}", sent[0]);
    let second = &sent[1];
    for expected in ["Wrote 23 bytes to `src/app.py`.", "def logout():", "src/app.py:1: def logout():"] {
        assert!(second.contains(expected), "{expected} in {second}");
    }
    let turns = s.engine.turns(&run).unwrap();
    let answers: Vec<String> = tool_turns(&turns).iter().map(|m| m["orchestrator"]["output"].to_string()).collect();
    assert_eq!(answers.len(), 6);
    for refused in &answers[3..5] {
        assert!(refused.contains("leaves the workspace"), "refused: {refused}");
    }
    assert!(
        answers[5].contains(
            "`web_search` is not one of your tools; they are handoff, create_artifact, read_artifact, code_search"
        ),
        "{}",
        answers[5]
    );
    assert_eq!(tool_turns(&turns)[0]["tool_call"]["args"]["path"], "src/app.py", "the call's arguments are shown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolbox_tools_are_granted_by_name_and_an_unknown_one_is_named_with_the_tools_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let model = scripted("ws", "agent", Vec::new());
    let s = setup(dir.path(), "commands:\n  - {name: lint, command: [true]}\n", std::slice::from_ref(&model)).await;
    let field = |e: StartError| match e {
        StartError::Spec(s) => (s.field, s.message),
        other => panic!("not a spec error: {other}"),
    };
    let input = one_agent("ws", "agent", &["lint", "rm_rf"]);
    let (f, message) = field(s.orch.start(&input, NewRun::default(), "alice").await.unwrap_err());
    assert_eq!(f, "team[0].tools[1]");
    for tool in ["handoff", "ask_human", "create_artifact", "code_search", "lint"] {
        assert!(message.contains(tool), "{tool} in {message}");
    }
    assert!(!message.contains("web_search"), "no endpoint, no web_search: {message}");
    // The same team on an orchestrator without a toolbox: the run input cannot define the tool.
    let bare = Orchestrator::new(s.engine.clone(), s.orch.registry().clone());
    let (f, _) = field(bare.start(&one_agent("ws", "agent", &["lint"]), NewRun::default(), "alice").await.unwrap_err());
    assert_eq!(f, "team[0].tools[0]");
}

/// A command that appends its word to `tally.txt` in the workspace and says so.
const TALLY: &str = r#"commands:
  - name: tally
    description: Count a word
    command: [sh, -c, 'echo "$1" >> tally.txt; echo counted "$1"', sh, "{word}"]
"#;

fn tally_model() -> Arc<ScriptedProvider> {
    scripted(
        "cmd",
        "agent",
        vec![calls("Counting.", vec![("tally", json!({"word": "one; rm -rf ~"}))]), Step::Reply("Counted.".into())],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tool_runs_only_once_a_person_approves_its_exact_argv() {
    let dir = tempfile::tempdir().unwrap();
    let model = tally_model();
    let s = setup(dir.path(), TALLY, std::slice::from_ref(&model)).await;
    // Even on an auto policy, the command waits for a person.
    let run = s.start(one_agent("cmd", "agent", &["tally"]), auto()).await;
    let gate = s.gate(&run, GateKind::Approval).await;
    let workdir = s.workspace(&run).canonicalize().unwrap();
    let argv = json!(["sh", "-c", "echo \"$1\" >> tally.txt; echo counted \"$1\"", "sh", "one; rm -rf ~"]);
    let payload = gate.payload.clone().unwrap();
    assert_eq!(payload["argv"], argv, "the agent's argument is one argv entry");
    assert_eq!(payload["workdir"], workdir.display().to_string());
    assert!(
        gate.text.contains("'one; rm -rf ~'") && gate.text.contains(&workdir.display().to_string()),
        "{}",
        gate.text
    );
    assert!(!workdir.join("tally.txt").exists(), "nothing ran before the approval");
    let edit = s.engine.resolve_gate(&gate.id, DecisionInput::edit(json!({"argv": ["rm", "-rf", "/"]})), "alice");
    assert!(edit.is_err(), "an edit cannot change what runs");
    s.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    s.done(&run).await;

    assert_eq!(std::fs::read_to_string(workdir.join("tally.txt")).unwrap(), "one; rm -rf ~\n");
    let turns = s.engine.turns(&run).unwrap();
    let ran = &tool_turns(&turns)[0]["command"];
    assert_eq!((ran["exit_code"].as_i64(), &ran["argv"]), (Some(0), &argv));
    assert_eq!(ran["stdout_tail"], "counted one; rm -rf ~\n");
    assert!(prompts(&model)[1].contains("The command exited with code 0."), "{}", prompts(&model)[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_command_does_not_run_and_the_agent_hears_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let model = tally_model();
    let s = setup(dir.path(), TALLY, std::slice::from_ref(&model)).await;
    let run = s.start(one_agent("cmd", "agent", &["tally"]), auto()).await;
    let gate = s.gate(&run, GateKind::Approval).await;
    s.engine.resolve_gate(&gate.id, DecisionInput::reject("not on a Friday"), "alice").unwrap();
    s.done(&run).await;

    assert!(!s.workspace(&run).join("tally.txt").exists());
    let second = &prompts(&model)[1];
    assert!(second.contains("A person refused to run `tally` (alice): not on a Friday"), "{second}");
    let turns = s.engine.turns(&run).unwrap();
    assert!(tool_turns(&turns)[0].get("command").is_none());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn a_command_approved_before_a_restart_never_runs_twice() {
    let dir = tempfile::tempdir().unwrap();
    // Paused just after the command's outcome is journaled: killed there.
    let config = json!({"hitl_config": {"run_policy": "auto"}, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "tool_call"}]});
    let (run, workdir) = {
        let rt = runtime();
        let model = tally_model();
        let s = rt.block_on(setup(dir.path(), TALLY, std::slice::from_ref(&model)));
        let run = rt.block_on(s.start(one_agent("cmd", "agent", &["tally"]), config));
        let gate = rt.block_on(s.gate(&run, GateKind::Approval));
        s.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
        let paused = rt.block_on(until(&s.engine, |e| Ok((e.run(&run)?.status == RunStatus::Paused).then_some(()))));
        assert!(paused.is_some(), "{:#?}", common::history(&s.engine, &run));
        rt.shutdown_background();
        let workdir = s.workspace(&run);
        (run, workdir)
    };
    assert_eq!(std::fs::read_to_string(workdir.join("tally.txt")).unwrap().lines().count(), 1);

    let rt = runtime();
    let model = scripted("cmd", "agent", vec![Step::Reply("Counted.".into())]);
    let s = rt.block_on(setup(dir.path(), TALLY, std::slice::from_ref(&model)));
    assert_eq!(rt.block_on(s.orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    s.engine.set_run_control(&run, StepMode::Continuous, Vec::new(), "alice").unwrap();
    s.engine.resume_run(&run, "alice").unwrap();
    rt.block_on(s.done(&run));

    assert_eq!(std::fs::read_to_string(workdir.join("tally.txt")).unwrap(), "one; rm -rf ~\n", "ran once");
    assert_eq!(prompts(&model).len(), 1, "only the turn after the command was asked");
    let gates = s.engine.gates(&GateFilter { run_id: Some(run.clone()), ..GateFilter::default() }).unwrap();
    assert_eq!(gates.iter().filter(|g| g.kind() == GateKind::Approval).count(), 1, "asked once");
    rt.shutdown_background();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_goes_to_the_configured_endpoint_and_its_results_reach_the_agent() {
    use axum::extract::Query;
    use axum::routing::get;
    use std::collections::HashMap;

    let asked: Arc<Mutex<Vec<HashMap<String, String>>>> = Arc::default();
    let seen = asked.clone();
    let app = axum::Router::new().route(
        "/search",
        get(move |Query(q): Query<HashMap<String, String>>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(q);
                axum::Json(json!({"results": [{"title": "Logout buttons done right",
                    "url": "https://example.com/logout", "content": "Clear the session first."}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().unwrap();
    let model = scripted(
        "web",
        "agent",
        vec![
            calls("Looking it up.", vec![("web_search", json!({"query": "logout button"}))]),
            Step::Reply("Ok.".into()),
        ],
    );
    let yaml = format!("web_search: http://{addr}/search\n");
    let s = setup(dir.path(), &yaml, std::slice::from_ref(&model)).await;
    let run = s.start(one_agent("web", "agent", &["web_search"]), auto()).await;
    s.done(&run).await;

    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!((asked[0]["q"].as_str(), asked[0]["format"].as_str()), ("logout button", "json"));
    let sent = prompts(&model);
    assert!(sent[0].contains("- web_search(query: str): Search the web"), "{}", sent[0]);
    assert!(sent[1].contains("1. Logout buttons done right <https://example.com/logout>"), "{}", sent[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_human_waits_for_a_persons_answer_with_the_agents_timeout_and_escalation() {
    let dir = tempfile::tempdir().unwrap();
    let model = scripted(
        "hitl",
        "agent",
        vec![
            calls(
                "I need a decision.",
                vec![(
                    "ask_human",
                    json!({"question": "Which region do we deploy to?", "options": ["eu", "us"],
                           "timeout_secs": 600, "escalation": {"after_secs": 120, "to": ["role:sre"]}}),
                )],
            ),
            calls("Bad question.", vec![("ask_human", json!({"question": "x", "timeout_secs": 0}))]),
            Step::Reply("Deploying to eu.".into()),
        ],
    );
    let s = setup(dir.path(), "{}", std::slice::from_ref(&model)).await;
    let run = s.start(one_agent("hitl", "agent", &["ask_human"]), json!({})).await;
    let gate = s.gate(&run, GateKind::Question).await;
    assert!(gate.text.starts_with("Which region do we deploy to?"), "{}", gate.text);
    assert!(gate.text.contains("Asked by **a** (coder)"), "{}", gate.text);
    assert_eq!(gate.payload.as_ref().unwrap()["options"], json!(["eu", "us"]));
    let expires = gate.expires_at.expect("the agent's timeout") - gate.created_at;
    assert_eq!(expires.num_seconds(), 600);
    let escalation = gate.escalation.clone().expect("the agent's escalation");
    assert_eq!(escalation.to, ["role:sre"]);
    assert_eq!(s.engine.run(&run).unwrap().status, RunStatus::AwaitingHuman);
    s.engine.resolve_gate(&gate.id, DecisionInput::respond("eu, the customer is in Berlin"), "alice").unwrap();
    // The final answer still passes its review.
    let review = s.gate(&run, GateKind::ResponseReview).await;
    s.engine.resolve_gate(&review.id, DecisionInput::approve(), "alice").unwrap();
    s.done(&run).await;

    let sent = prompts(&model);
    assert!(sent[1].contains("alice answered: eu, the customer is in Berlin"), "{}", sent[1]);
    assert!(sent[2].contains("ask_human: `timeout_secs` must be"), "{}", sent[2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_nobody_answers_in_time_is_told_to_the_agent_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let clock = gatehouse_engine::ManualClock::new(chrono::Utc::now());
    let engine = Engine::open_with_clock(dir.path().join("g.db"), Default::default(), Arc::new(clock.clone())).unwrap();
    let model = scripted(
        "hitl",
        "agent",
        vec![
            calls("Asking.", vec![("ask_human", json!({"question": "Ship it?", "timeout_secs": 60}))]),
            Step::Reply("Not shipping without an answer.".into()),
        ],
    );
    let mut registry = ProviderRegistry::new();
    registry.register(model.clone() as Arc<dyn Provider>).unwrap();
    let orch = Orchestrator::with_toolbox(engine.clone(), registry, None);
    let input = one_agent("hitl", "agent", &["ask_human"]);
    let run = orch.start(&input, serde_json::from_value(auto()).unwrap(), "alice").await.unwrap().id;
    let filter = GateFilter { run_id: Some(run.clone()), kind: Some(GateKind::Question), ..GateFilter::pending() };
    assert!(until(&engine, |e| Ok(e.gates(&filter)?.into_iter().next())).await.is_some());
    clock.advance(chrono::Duration::seconds(61));
    assert_eq!(engine.sweep_expired().unwrap().len(), 1);
    let done = until(&engine, |e| Ok(Some(e.run(&run)?).filter(|r| r.status == RunStatus::Completed))).await;
    assert!(done.is_some(), "{:#?}", common::history(&engine, &run));
    let second = &prompts(&model)[1];
    assert!(second.contains("No one answered your question in time (no answer within 1m"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deepseek_agent_gets_the_deepseek_template_and_its_teammate_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let ds = scripted(
        "ds",
        "deepseek-chat",
        vec![calls("Over to b.", vec![("handoff", json!({"destination_agent": "b", "reason": "yours"}))])],
    );
    let other = scripted("gen", "chat-model", vec![Step::Reply("Done.".into())]);
    let s = setup(dir.path(), "{}", &[ds.clone(), other.clone()]).await;
    let input = json!({"prompt": "Ship", "team": [
        {"name": "a", "role": "planner", "provider": "ds", "model": "deepseek-chat", "tools": ["read_artifact"]},
        {"name": "b", "role": "deployer", "provider": "gen", "model": "chat-model"}]});
    let run = s.start(input, auto()).await;
    s.done(&run).await;

    let (deepseek, generic) = (&prompts(&ds)[0], &prompts(&other)[0]);
    assert!(
        deepseek.contains("You can use these tools:") && deepseek.contains("outside any <think> block"),
        "{deepseek}"
    );
    assert!(deepseek.contains("- read_artifact(path: str): Read a text file"), "{deepseek}");
    assert!(generic.contains("Available Tools:") && !generic.contains("<think>"), "{generic}");
    assert!(!generic.contains("read_artifact"), "b was granted no toolbox tool: {generic}");
}

/// A command that notes it started in `started.txt`, then takes its time.
const SLOW: &str = r#"commands:
  - name: migrate
    description: Migrate the database
    command: [sh, -c, 'echo started >> started.txt; exec sleep 60']
"#;

#[test]
fn a_command_cut_short_by_a_restart_is_not_run_again_and_the_agent_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let first = || scripted("cmd", "agent", vec![calls("Migrating.", vec![("migrate", json!({}))])]);
    let (run, workdir) = {
        let rt = runtime();
        let model = first();
        let s = rt.block_on(setup(dir.path(), SLOW, std::slice::from_ref(&model)));
        let run = rt.block_on(s.start(one_agent("cmd", "agent", &["migrate"]), auto()));
        let gate = rt.block_on(s.gate(&run, GateKind::Approval));
        s.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
        let started = s.workspace(&run).join("started.txt");
        let running = rt.block_on(until(&s.engine, |_| Ok(started.exists().then_some(()))));
        assert!(running.is_some(), "{:#?}", common::history(&s.engine, &run));
        // Killed while the command runs: its outcome never reaches the journal.
        rt.shutdown_background();
        let workdir = s.workspace(&run);
        (run, workdir)
    };

    let rt = runtime();
    let model = scripted("cmd", "agent", vec![Step::Reply("I will check the migration by hand.".into())]);
    let s = rt.block_on(setup(dir.path(), SLOW, std::slice::from_ref(&model)));
    assert_eq!(rt.block_on(s.orch.resume_all()).unwrap(), std::slice::from_ref(&run));
    rt.block_on(s.done(&run));

    assert_eq!(std::fs::read_to_string(workdir.join("started.txt")).unwrap(), "started\n", "it ran once");
    let told = &prompts(&model)[0];
    assert!(told.contains("`migrate` was started before Gatehouse restarted and what it did is unknown"), "{told}");
    rt.shutdown_background();
}
