//! The HITL tools over HTTP (request_approval, escalate_to_human,
//! request_feedback), the plan and its six operations, and the shared
//! context: what an agent calls while it works, and what reviewers see.

use crate::common;

use std::time::Duration;

use common::TestServer;
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn request_approval_opens_an_approval_gate_and_can_wait_for_the_decision() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let path = format!("/runs/{run}/tools/request_approval");
    let call = {
        let (url, token, http) = (s.url(&path), s.agent.clone(), s.http.clone());
        tokio::spawn(async move {
            let body = json!({"action": "deploy build 42 to prod", "context": {"build": 42, "env": "prod"},
                "urgency": "critical", "timeout": 3600, "wait": 30});
            let resp = http.post(url).bearer_auth(token).json(&body).send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap())
        })
    };
    // The reviewer finds it in the queue and approves with an edit.
    let gate = loop {
        let (_, list) = s.get(&format!("/gates?run_id={run}"), &s.reviewer).await;
        if let Some(g) = list["gates"].as_array().and_then(|g| g.first()).cloned() {
            break g;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(gate["kind"], "approval");
    assert_eq!(gate["priority"], "urgent");
    assert_eq!(gate["mode"], "sync");
    let id = gate["id"].as_str().unwrap();
    let (status, body) = s
        .post(
            &format!("/gates/{id}/resolve"),
            &s.reviewer,
            json!({"action": "edit", "payload": {"build": 42, "env": "staging"}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, reply) = tokio::time::timeout(Duration::from_secs(10), call).await.expect("woken").unwrap();
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["status"], "resolved");
    assert_eq!(reply["decision"]["action"], "edit");
    assert_eq!(reply["decision"]["payload"]["env"], "staging", "{reply}");
    assert!(reply["gate"]["expires_at"].is_string(), "the timeout became an expiry: {reply}");
}

#[tokio::test]
async fn escalate_to_human_is_a_sync_question_naming_the_expertise() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, reply) = s
        .post(
            &format!("/runs/{run}/tools/escalate_to_human"),
            &s.agent,
            json!({
            "issue": "Migrations fail on the replica", "urgency": "high",
            "required_expertise": ["postgres", " ", "replication"]}),
        )
        .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["status"], "pending");
    assert_eq!(reply["decision"], Value::Null);
    let gate = &reply["gate"];
    assert_eq!(gate["spec"]["kind"], "question");
    assert_eq!(gate["mode"], "sync");
    assert_eq!(gate["priority"], "high");
    let text = gate["text"].as_str().unwrap();
    assert!(text.contains("Migrations fail on the replica") && text.contains("postgres, replication"), "{text}");
    assert_eq!(gate["payload"]["required_expertise"], json!(["postgres", "replication"]));
    let (_, status) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_eq!(status["status"], "awaiting_human", "a sync escalation blocks the run");
}

#[tokio::test]
async fn request_feedback_is_async_by_default_and_lists_the_questions() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, reply) = s
        .post(
            &format!("/runs/{run}/tools/request_feedback"),
            &s.agent,
            json!({
            "artifact": "## Release notes\n\n- faster sync", "questions": ["Is the tone right?", "Anything missing?"]}),
        )
        .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["gate"]["mode"], "async");
    let text = reply["gate"]["text"].as_str().unwrap();
    assert!(text.contains("1. Is the tone right?\n2. Anything missing?"), "{text}");
    assert!(text.contains("## Release notes"), "{text}");
    let (_, status) = s.get(&format!("/run/{run}/status"), &s.agent).await;
    assert_ne!(status["status"], "awaiting_human", "an async request does not block the run");
}

#[tokio::test]
async fn a_retried_tool_call_with_the_same_idempotency_key_returns_the_first_gate() {
    let s = TestServer::start().await;
    let run = s.run().await;
    for tool in ["request_approval", "escalate_to_human", "request_feedback"] {
        let path = format!("/runs/{run}/tools/{tool}");
        let body =
            json!({"action": "deploy", "issue": "stuck", "artifact": "draft", "idempotency_key": format!("{tool}-1")});
        let (_, first) = s.post(&path, &s.agent, body.clone()).await;
        let (status, again) = s.post(&path, &s.agent, body).await;
        assert_eq!(status, 201, "{again}");
        assert_eq!(first["gate_id"], again["gate_id"], "{tool}: the retry returned the first gate");
        // The header takes precedence over the body, as for `POST /runs/{id}/gates`.
        let key = format!("{tool}-header");
        let send = |key: String| {
            s.http
                .post(s.url(&path))
                .bearer_auth(&s.agent)
                .header("Idempotency-Key", key)
                .json(&json!({"action": "deploy", "issue": "stuck", "artifact": "draft", "idempotency_key": "ignored"}))
                .send()
        };
        let a: Value = send(key.clone()).await.unwrap().json().await.unwrap();
        let b: Value = send(key.clone()).await.unwrap().json().await.unwrap();
        assert_eq!(a["gate_id"], b["gate_id"], "{tool}: {a} {b}");
        // Only the key's digest is kept: a key may hold anything, a secret too.
        assert_eq!(a["gate"]["idempotency_key"], gatehouse_engine::redact::idempotency_digest(&key), "{a}");
        assert_ne!(a["gate_id"], first["gate_id"]);
    }
    let (_, list) = s.get(&format!("/gates?status=all&run_id={run}"), &s.reviewer).await;
    assert_eq!(list["total"], 6, "two gates per tool, not four: {list}");
}

#[tokio::test]
async fn tool_calls_with_bad_input_are_422_naming_the_field_and_store_nothing() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let cases = [
        ("request_approval", json!({"action": " "}), "action"),
        ("request_approval", json!({"context": {}}), "action"),
        ("request_approval", json!({"action": "x", "urgency": "whenever"}), "urgency"),
        ("request_approval", json!({"action": "x", "wait": 61}), "wait"),
        ("request_approval", json!({"action": "x", "timeout": 0}), "timeout"),
        ("escalate_to_human", json!({"issue": ""}), "issue"),
        ("request_feedback", json!({"artifact": "x", "mode": "eventually"}), "mode"),
    ];
    for (tool, body, field) in cases {
        let (status, reply) = s.post(&format!("/runs/{run}/tools/{tool}"), &s.agent, body.clone()).await;
        assert_eq!(status, 422, "{tool} {body}: {reply}");
        assert!(reply["message"].as_str().unwrap().contains(field), "{tool} {body}: {reply}");
    }
    let (_, list) = s.get(&format!("/gates?status=all&run_id={run}"), &s.reviewer).await;
    assert_eq!(list["total"], 0, "{list}");
    let (status, _) =
        s.post(&format!("/runs/{run}/tools/request_approval"), &s.other_agent, json!({"action": "x"})).await;
    assert_eq!(status, 403, "another agent's run");
}

#[tokio::test]
async fn the_plan_is_read_and_changed_by_its_agent_and_its_reviewers() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let path = format!("/runs/{run}/plan");
    let (status, view) = s.get(&path, &s.agent).await;
    assert_eq!(status, 200, "{view}");
    assert_eq!(view["plan"], Value::Null);

    let ops = [
        json!({"op": "add_task", "task_id": "build", "description": "Build the image"}),
        json!({"op": "add_task", "task_id": "ship", "description": "Ship it", "dependencies": ["build"]}),
        json!({"op": "assign_task", "task_id": "ship", "agent_name": "deployer"}),
        json!({"op": "estimate_duration", "task_id": "build", "duration": "10m"}),
        json!({"op": "update_task", "task_id": "build", "status": "completed"}),
    ];
    for op in ops {
        let (status, rev) = s.post(&path, &s.agent, op.clone()).await;
        assert_eq!(status, 200, "{op}: {rev}");
    }
    // A reviewer edits the plan too; a cycle is refused naming it.
    let cycle = json!({"op": "set_dependencies", "task_id": "build", "dependencies": ["ship"]});
    let (status, err) = s.post(&path, &s.reviewer, cycle).await;
    assert_eq!(status, 422, "{err}");
    assert!(err["message"].as_str().unwrap().contains("cycle"), "{err}");
    let (status, rev) =
        s.post(&path, &s.reviewer, json!({"op": "set_dependencies", "task_id": "ship", "dependencies": []})).await;
    assert_eq!(status, 200, "{rev}");
    let (status, err) = s.post(&path, &s.agent, json!({"op": "teleport"})).await;
    assert_eq!(status, 422, "{err}");

    let (_, view) = s.get(&path, &s.reviewer).await;
    let tasks = view["plan"]["plan"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2, "{view}");
    assert_eq!(tasks[1]["assigned_agent"], "deployer");
    assert_eq!(tasks[1]["dependencies"], json!([]));
    assert_eq!(view["revisions"].as_array().unwrap().len(), 6);
    assert_eq!((&view["progress"]["completed"], &view["progress"]["total"]), (&json!(1), &json!(2)), "{view}");

    let replace = json!({"op": "replace", "plan": {"tasks": [{"task_id": "only", "description": "One step"}]}});
    let (status, rev) = s.post(&path, &s.reviewer, replace).await;
    assert_eq!(status, 200, "{rev}");
    let (status, _) = s.get(&path, &s.other_agent).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn an_agent_may_not_change_how_people_review_its_plan() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let path = format!("/runs/{run}/plan");
    let plan = |mode: &str, points: Value, kind: &str| {
        json!({"op": "replace", "plan": {"execution_mode": mode, "human_intervention_points": points, "tasks": [
            {"task_id": "build", "description": "Build the image"},
            {"task_id": "ship", "description": "Ship it", "metadata": {"kind": kind}}]}})
    };
    // The agent writes the first plan as it likes.
    let (status, rev) = s.post(&path, &s.agent, plan("supervised", json!(["before_deployment"]), "deployment")).await;
    assert_eq!(status, 200, "{rev}");

    // Then how people review it is theirs: the mode, the points, a task's review metadata.
    let refused = [
        (plan("autonomous", json!(["before_deployment"]), "deployment"), "plan.execution_mode"),
        (plan("supervised", json!([]), "deployment"), "plan.human_intervention_points"),
        (plan("supervised", json!(["before_deployment"]), "chore"), "plan.tasks[1].metadata.kind"),
        (json!({"op": "update_task", "task_id": "ship", "metadata": {"kind": null}}), "metadata.kind"),
        (
            json!({"op": "update_task", "task_id": "ship", "metadata": {"intervention_point": "qa"}}),
            "metadata.intervention_point",
        ),
    ];
    for (op, field) in refused {
        let (status, err) = s.post(&path, &s.agent, op.clone()).await;
        assert_eq!(status, 403, "{op}: {err}");
        assert_eq!(err["field"], field, "{err}");
    }
    let (_, view) = s.get(&path, &s.reviewer).await;
    assert_eq!(view["revisions"].as_array().unwrap().len(), 1, "nothing refused was stored: {view}");

    // The agent still works its plan: progress, its own notes, the same review with a task added.
    let (status, rev) = s
        .post(
            &path,
            &s.agent,
            json!({"op": "update_task", "task_id": "build", "status": "completed",
        "metadata": {"output": "image built", "kind": null}}),
        )
        .await;
    assert_eq!(status, 200, "{rev}");
    let mut more = plan("supervised", json!(["before_deployment"]), "deployment");
    more["plan"]["tasks"].as_array_mut().unwrap().push(json!({"task_id": "announce", "description": "Tell the team"}));
    let (status, rev) = s.post(&path, &s.agent, more).await;
    assert_eq!(status, 200, "{rev}");

    // A reviewer changes the review.
    let (status, rev) = s.post(&path, &s.reviewer, plan("autonomous", json!([]), "deployment")).await;
    assert_eq!(status, 200, "{rev}");
    assert_eq!(rev["plan"]["execution_mode"], "autonomous", "{rev}");
}

#[tokio::test]
async fn shared_context_is_set_read_deleted_and_its_history_kept() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let key = |k: &str| format!("/runs/{run}/context/{k}");
    let (status, up) = s.call(Method::PUT, &key("objective"), &s.agent, Some(json!({"value": "ship v2"}))).await;
    assert_eq!(status, 200, "{up}");
    assert_eq!(up, json!({"key": "objective", "old": null, "new": "ship v2"}));
    let (_, up) = s.call(Method::PUT, &key("objective"), &s.reviewer, Some(json!({"value": {"v": 3}}))).await;
    assert_eq!(up["old"], "ship v2");
    s.call(Method::PUT, &key("region"), &s.agent, Some(json!({"value": "eu-west-1"}))).await;

    let (status, ctx) = s.get(&format!("/runs/{run}/context"), &s.agent).await;
    assert_eq!(status, 200);
    assert_eq!(ctx, json!({"objective": {"v": 3}, "region": "eu-west-1"}));

    let (status, del) = s.call(Method::DELETE, &key("region"), &s.agent, None).await;
    assert_eq!(status, 200, "{del}");
    assert_eq!(del["old"], "eu-west-1");
    let (status, err) = s.call(Method::DELETE, &key("region"), &s.agent, None).await;
    assert_eq!(status, 404, "{err}");
    let (status, _) = s.call(Method::PUT, &key("x"), &s.agent, Some(json!({"val": 1}))).await;
    assert_eq!(status, 422);
    let (status, _) = s.call(Method::PUT, &key("x"), &s.other_agent, Some(json!({"value": 1}))).await;
    assert_eq!(status, 403);

    let (_, history) = s.get(&format!("/runs/{run}/context/history"), &s.reviewer).await;
    let actors: Vec<(&str, &str)> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c["actor"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actors,
        [("objective", "deployer"), ("objective", "alice"), ("region", "deployer"), ("region", "deployer")]
    );
}
