//! The client against a real server on loopback (the server crate's
//! `start`, as `gatehouse serve` runs it): typed replies, the event stream,
//! and refusals whose code, message and field arrive as the server sent them.

use std::time::Duration;

use gatehouse_client::{ApiErrorCode, Client, ClientError, StatusCode, TransportKind};
use gatehouse_engine::plan::PlanOperation;
use gatehouse_engine::{
    DecisionAction, DecisionInput, Engine, EngineConfig, EventKind, GateStatus, NewGate, TokenRole,
};
use gatehouse_server::ServerConfig;
use reqwest::Method;
use serde_json::json;

/// A server on a free loopback port, an agent's and a reviewer's client.
struct Served {
    _dir: tempfile::TempDir,
    server: gatehouse_server::RunningServer,
    agent: Client,
    reviewer: Client,
}

async fn serve() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("g.db"), EngineConfig::default()).unwrap();
    let (_, agent) = engine.create_token("deployer", TokenRole::Agent, "test").unwrap();
    let (_, reviewer) = engine.create_token("alice", TokenRole::Reviewer, "test").unwrap();
    let config = ServerConfig { bind: "127.0.0.1:0".parse().unwrap(), ..ServerConfig::default() };
    let server = gatehouse_server::start(engine, config).await.unwrap();
    let client = |token: &str| Client::new(server.url().parse().unwrap(), token, "client-test", Vec::new()).unwrap();
    Served { agent: client(&agent), reviewer: client(&reviewer), server, _dir: dir }
}

#[tokio::test]
async fn a_gate_opened_waited_for_and_decided_comes_back_typed() {
    let s = serve().await;
    let run = s.agent.start_run(&json!({"run_input": {"task": "deploy"}, "title": "Deploy"})).await.unwrap();
    let mut events = s.reviewer.events(0).await.unwrap();

    let new = NewGate::request_approval("deploy build 42", None, Some(json!({"build": 42})));
    let gate = s.agent.open_gate(&run.run_id, &new, Some("deploy-42")).await.unwrap();
    let again = s.agent.open_gate(&run.run_id, &new, Some("deploy-42")).await.unwrap();
    assert_eq!(again.id, gate.id, "the idempotency key reached the server");
    assert_eq!((gate.status, gate.run_id.clone()), (GateStatus::Pending, run.run_id.clone()));
    let pending = s.reviewer.pending().await.unwrap();
    assert_eq!(pending.total, 1);
    assert!(pending.head_seq > 0);

    let waiting = {
        let (agent, id) = (s.agent.clone(), gate.id.clone());
        tokio::spawn(async move { agent.wait_gate(&id, Duration::from_secs(20)).await })
    };
    let decided = s.reviewer.resolve_gate(&gate.id, &DecisionInput::approve()).await.unwrap();
    assert_eq!(decided.decision.as_ref().map(|d| d.decided_by.as_str()), Some("alice"));
    let woken = tokio::time::timeout(Duration::from_secs(10), waiting).await.unwrap().unwrap().unwrap();
    assert_eq!(woken.status, GateStatus::Resolved);
    assert_eq!(woken.decision.unwrap().action, DecisionAction::Approve);
    assert_eq!(s.reviewer.gate(&gate.id).await.unwrap().status, GateStatus::Resolved);

    // The stream carries the same story, as the engine's events.
    let mut kinds = Vec::new();
    while !kinds.iter().any(|k| matches!(k, EventKind::GateResolved { .. })) {
        let burst = tokio::time::timeout(Duration::from_secs(10), events.next_burst()).await.unwrap().unwrap();
        let burst = burst.expect("the stream stays open");
        assert!(burst.last_seq.is_some());
        kinds.extend(burst.events.into_iter().map(|e| e.body.kind));
    }
    assert!(kinds.iter().any(|k| matches!(k, EventKind::GateOpened { .. })), "{kinds:?}");
}

#[tokio::test]
async fn a_plan_change_answers_with_its_revision() {
    let s = serve().await;
    let run = s.agent.start_run(&json!({"run_input": {}})).await.unwrap();
    let op: PlanOperation =
        serde_json::from_value(json!({"op": "add_task", "task_id": "t1", "description": "write it"})).unwrap();
    let revision = s.agent.change_plan(&run.run_id, &op).await.unwrap();
    assert_eq!(revision.revision, 1);
    assert_eq!(revision.plan.tasks[0].task_id, "t1");
}

#[tokio::test]
async fn a_refusal_keeps_the_servers_code_message_and_field() {
    let s = serve().await;
    let bad = s.reviewer.request(Method::GET, &["gates"]).query(&[("limit", "-1")]);
    let Err(ClientError::Api(e)) = s.reviewer.send::<serde_json::Value>(bad).await else { panic!("refused") };
    assert_eq!((e.status, e.code), (StatusCode::UNPROCESSABLE_ENTITY, ApiErrorCode::Invalid));
    assert_eq!(e.field.as_deref(), Some("limit"));
    assert!(e.message.starts_with("limit") && e.message.contains("`-1`"), "{}", e.message);

    // A second decision: the conflict names who decided first.
    let run = s.agent.start_run(&json!({"run_input": {}})).await.unwrap();
    let gate = s.agent.open_gate(&run.run_id, &NewGate::question("Which region?"), None).await.unwrap();
    s.reviewer.resolve_gate(&gate.id, &DecisionInput::respond("eu-west-1")).await.unwrap();
    let second = s.reviewer.resolve_gate(&gate.id, &DecisionInput::respond("us-east-1")).await.unwrap_err();
    let conflict = second.api().expect("the server's answer");
    assert_eq!((conflict.status, conflict.code), (StatusCode::CONFLICT, ApiErrorCode::Conflict));
    assert_eq!(conflict.resolved_by.as_deref(), Some("alice"));
    assert!(conflict.resolved_at.is_some());

    // Agents never decide; an unknown token is not let in.
    let forbidden = s.agent.resolve_gate(&gate.id, &DecisionInput::approve()).await.unwrap_err();
    assert_eq!(forbidden.api().map(|e| e.code), Some(ApiErrorCode::Forbidden), "{forbidden}");
    let stranger = Client::new(s.server.url().parse().unwrap(), "gh_unknown", "client-test", Vec::new()).unwrap();
    let refused = stranger.pending().await.unwrap_err();
    assert_eq!(refused.api().map(|e| (e.status, e.code)), Some((StatusCode::UNAUTHORIZED, ApiErrorCode::Unauthorized)));
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_connect_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::new(format!("http://{addr}").parse().unwrap(), "t", "client-test", Vec::new()).unwrap();
    match client.pending().await {
        Err(ClientError::Transport(t)) => assert_eq!(t.kind(), TransportKind::Connect, "{t}"),
        other => panic!("expected a transport failure, got {other:?}"),
    }
}
