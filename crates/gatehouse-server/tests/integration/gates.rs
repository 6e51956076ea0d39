//! Gates over real HTTP: opening (with idempotency), long-poll waits, who
//! may resolve, the first-resolver-wins race, the reviewer's queue order
//! and filters, and the detail view's safe markdown and payload diff.

use crate::common;

use std::time::{Duration, Instant};

use common::TestServer;
use gatehouse_engine::NewRun;
use serde_json::{json, Value};

/// A run driven by `deployer`, created through the engine (the HTTP
/// `POST /run` lives in another module).
async fn new_run(s: &TestServer) -> String {
    let engine = s.server.state.engine_handle().clone();
    let new = NewRun { agent: "deployer".into(), title: "deploy".into(), ..NewRun::default() };
    let run = tokio::task::spawn_blocking(move || engine.create_run(new, "deployer")).await.unwrap().unwrap();
    run.id.to_string()
}

fn approval(text: &str) -> Value {
    json!({"kind": "approval", "action": "deploy", "text": text, "payload": {"env": "prod"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_gate_answers_201_with_its_fields() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let body = json!({"kind": "approval", "action": "deploy", "text": "Deploy **v2**?", "mode": "sync",
        "priority": "high", "payload": {"env": "prod"}, "context": {"task_id": "t-1"}});
    let (status, opened) = s.post(&format!("/runs/{run}/gates"), &s.agent, body).await;
    assert_eq!(status, 201, "{opened}");
    assert_eq!(opened["status"], "pending");
    let gate = &opened["gate"];
    assert_eq!(gate["id"], opened["gate_id"]);
    assert_eq!(gate["run_id"], run.as_str());
    assert_eq!(gate["spec"]["kind"], "approval");
    assert_eq!(gate["spec"]["action"], "deploy");
    assert_eq!(gate["mode"], "sync");
    assert_eq!(gate["priority"], "high");
    assert_eq!(gate["agent"], "deployer", "the token's identity is the asking agent");
    assert_eq!(gate["text"], "Deploy **v2**?");
    assert_eq!(gate["payload"], json!({"env": "prod"}));
    assert_eq!(gate["context"]["task_id"], "t-1");
    assert!(gate["decision"].is_null() && gate["created_at"].is_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_header_returns_the_first_gate() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let resp = s
            .http
            .post(s.url(&format!("/runs/{run}/gates")))
            .bearer_auth(&s.agent)
            .header("Idempotency-Key", "deploy-42")
            .json(&approval("Deploy?"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
        let body: Value = resp.json().await.unwrap();
        ids.push(body["gate_id"].as_str().unwrap().to_owned());
    }
    assert!(ids.iter().all(|id| id == &ids[0]), "{ids:?}");
    let (_, list) = s.get(&format!("/gates?run_id={run}&status=all"), &s.reviewer).await;
    assert_eq!(list["total"], 1, "{list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_on_a_decided_gate_returns_at_once() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval("Deploy?")).await;
    let (status, _) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 200);
    let started = Instant::now();
    let (status, body) = s.get(&format!("/gates/{gate}/wait?timeout=30"), &s.agent).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "resolved");
    assert_eq!(body["decision"]["action"], "approve");
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

/// The fewest store read transactions a wait made over three tries (a
/// background sweep's read landing in one of them does not count): `setup`
/// makes a gate, `wait` waits on it.
async fn fewest_reads_of_a_wait<S, SF, W, WF>(s: &TestServer, mut setup: S, mut wait: W) -> u64
where
    S: FnMut() -> SF,
    SF: std::future::Future<Output = String>,
    W: FnMut(String) -> WF,
    WF: std::future::Future<Output = ()>,
{
    let reads = || s.server.state.engine_handle().store_stats().expect("the store counts its reads").reads;
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let gate = setup().await;
        let before = reads();
        wait(gate).await;
        fewest = fewest.min(reads() - before);
    }
    fewest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_checks_access_and_reads_its_gate_in_one_read() {
    let server = TestServer::start().await;
    let s = &server;
    let run = &new_run(s).await;
    let expect = |status: u16, body: &Value, want: &str| {
        assert_eq!((status, body["status"].as_str()), (200, Some(want)), "{body}");
    };
    // Decided before the wait: the wait reads the gate and its run once.
    let decided = || async {
        let gate = s.gate(run, approval("Deploy?")).await;
        let (status, _) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
        assert_eq!(status, 200);
        gate
    };
    let waited = fewest_reads_of_a_wait(s, decided, |gate| async move {
        let (status, body) = s.get(&format!("/gates/{gate}/wait?timeout=30"), &s.agent).await;
        expect(status, &body, "resolved");
    })
    .await;
    assert_eq!(waited, 1, "a wait on a decided gate");

    // Decided on this server while the wait is parked: the wake-up carries
    // the gate, so the first read is the only one.
    let pending = || async { s.gate(run, approval("Deploy?")).await };
    let waited = fewest_reads_of_a_wait(s, pending, |gate| async move {
        let (waited, resolved) = (format!("/gates/{gate}/wait?timeout=30"), format!("/gates/{gate}/resolve"));
        let wait = s.get(&waited, &s.agent);
        let decide = async {
            // Parked once the wait is registered with the dispatcher.
            while s.server.state.waiters.waiting().0 == 0 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            assert_eq!(s.post(&resolved, &s.reviewer, json!({"action": "approve"})).await.0, 200);
        };
        let ((status, body), ()) = tokio::join!(wait, decide);
        expect(status, &body, "resolved");
    })
    .await;
    assert_eq!(waited, 1, "a wait woken by a decision made here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_on_a_pending_gate_returns_it_after_the_timeout() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval("Deploy?")).await;
    let started = Instant::now();
    let (status, body) = s.get(&format!("/gates/{gate}/wait?timeout=0.3"), &s.agent).await;
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "pending");
    assert!(took >= Duration::from_millis(290) && took < Duration::from_secs(3), "took {took:?}");
    let (status, body) = s.get(&format!("/gates/{gate}/wait?timeout=61"), &s.agent).await;
    assert_eq!(status, 422, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_is_woken_by_a_resolution() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Which region?"})).await;
    let (http, url, reviewer) = (s.http.clone(), s.url(&format!("/gates/{gate}/resolve")), s.reviewer.clone());
    let resolver = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let body = json!({"action": "respond", "text": "go ahead, use eu-west-1"});
        http.post(url).bearer_auth(reviewer).json(&body).send().await.unwrap().status().as_u16()
    });
    let started = Instant::now();
    let (status, body) = s.get(&format!("/gates/{gate}/wait?timeout=20"), &s.agent).await;
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    assert_eq!(resolver.await.unwrap(), 200);
    assert_eq!(body["status"], "resolved");
    assert_eq!(body["decision"]["action"], "respond");
    assert_eq!(body["decision"]["text"], "go ahead, use eu-west-1");
    assert_eq!(body["decision"]["decided_by"], "alice");
    assert!(took >= Duration::from_millis(250), "returned before the decision: {took:?}");
    assert!(took < Duration::from_secs(5), "not woken promptly (timeout was 20 s): {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_cannot_resolve_a_gate() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let gate = s.gate(&run, approval("Deploy?")).await;
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.agent, json!({"action": "approve"})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "forbidden");
    assert!(body["message"].as_str().unwrap().contains("an agent must not approve itself"), "{body}");
    let (_, gate) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(gate["gate"]["status"], "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_reviewers_get_one_200_and_one_409_naming_the_winner() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    for _ in 0..5 {
        let gate = s.gate(&run, approval("Deploy?")).await;
        let path = format!("/gates/{gate}/resolve");
        let ((a, a_body), (b, b_body)) = tokio::join!(
            s.post(&path, &s.reviewer, json!({"action": "approve"})),
            s.post(&path, &s.reviewer2, json!({"action": "reject", "text": "not today"})),
        );
        let mut statuses = [a, b];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{a_body} / {b_body}");
        let (winner, loser) = if a == 200 { (a_body, b_body) } else { (b_body, a_body) };
        let winner_name = winner["decision"]["decided_by"].as_str().unwrap();
        assert_eq!(loser["code"], "conflict");
        assert_eq!(loser["resolved_by"], winner_name, "{loser}");
        assert!(loser["resolved_at"].is_string(), "{loser}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_lists_sync_first_then_priority_then_age_with_filters_and_total() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let open = |text: &str, mode: &str, priority: &str| {
        let mut gate = json!({"kind": "question", "text": text});
        (gate["mode"], gate["priority"]) = (json!(mode), json!(priority));
        gate
    };
    // Opened in an order that differs from the panel's.
    let async_low = s.gate(&run, open("async low", "async", "low")).await;
    let sync_normal_old = s.gate(&run, open("sync normal old", "sync", "normal")).await;
    let async_urgent = s.gate(&run, open("async urgent", "async", "urgent")).await;
    let sync_urgent = s.gate(&run, open("sync urgent", "sync", "urgent")).await;
    let sync_normal_new = s.gate(&run, open("sync normal new", "sync", "normal")).await;
    let approval_gate = s.gate(&run, json!({"kind": "approval", "text": "approve?", "mode": "advisory"})).await;

    let (status, list) = s.get("/gates", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    let ids: Vec<&str> = list["gates"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap()).collect();
    let expected = [&sync_urgent, &sync_normal_old, &sync_normal_new, &async_urgent, &async_low, &approval_gate];
    assert_eq!(ids, expected.map(String::as_str), "{list}");
    assert_eq!(list["total"], 6);
    assert_eq!(list["gates"][0]["preview"], "sync urgent");

    let (_, page) = s.get("/gates?limit=2&offset=1", &s.reviewer).await;
    let ids: Vec<&str> = page["gates"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [sync_normal_old.as_str(), sync_normal_new.as_str()]);
    assert_eq!(page["total"], 6, "total ignores paging");

    let (_, asyncs) = s.get("/gates?mode=async", &s.reviewer).await;
    assert_eq!(asyncs["total"], 2, "{asyncs}");
    let (_, approvals) = s.get("/gates?kind=approval", &s.reviewer).await;
    assert_eq!(approvals["total"], 1, "{approvals}");
    assert_eq!(approvals["gates"][0]["id"], approval_gate.as_str());

    let (status, _) = s.post(&format!("/gates/{async_low}/resolve"), &s.reviewer, json!({"action": "defer"})).await;
    assert_eq!(status, 200);
    let (_, pending) = s.get("/gates?status=pending", &s.reviewer).await;
    assert_eq!(pending["total"], 5);
    let (_, resolved) = s.get("/gates?status=resolved", &s.reviewer).await;
    assert_eq!(resolved["total"], 1);
    assert_eq!(resolved["gates"][0]["id"], async_low.as_str());
    let (_, all) = s.get("/gates?status=all", &s.reviewer).await;
    assert_eq!(all["total"], 6);

    // Another agent sees none of these.
    let (status, theirs) = s.get("/gates?status=all", &s.other_agent).await;
    assert_eq!(status, 200);
    assert_eq!(theirs["total"], 0, "{theirs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_detail_view_renders_markdown_inertly_and_diffs_the_payload() {
    let s = TestServer::start().await;
    let run = new_run(&s).await;
    let text = "# Deploy\n\n<script>alert('x')</script>\n\n<img src=x onerror=alert(1)>\n\n\
                See [docs](javascript:alert(2)) and <a href=\"https://ok.example\" onclick=\"steal()\">ok</a>";
    let body = json!({"kind": "payload_review", "text": text,
        "payload": {"image_file": "a.png", "size": 1024},
        "example_input": {"input_image": "a.png", "size": 512}});
    let gate = s.gate(&run, body).await;
    let (status, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(status, 200, "{detail}");
    let html = detail["text_html"].as_str().unwrap();
    assert!(html.contains("<h1>Deploy</h1>"), "{html}");
    // The agent's raw HTML is shown as sent, escaped; none of it is markup.
    let tags: Vec<&str> = html.split('<').skip(1).map(|t| t.split('>').next().unwrap_or("")).collect();
    for bad in ["script", "onerror", "javascript:", "onclick", "img"] {
        assert!(tags.iter().all(|t| !t.contains(bad)), "`{bad}` survived as markup: {html}");
    }
    assert!(
        html.contains("&lt;script&gt;alert('x')&lt;/script&gt;") || html.contains("&lt;script&gt;alert(&#39;x&#39;)"),
        "{html}"
    );
    assert!(html.contains("&lt;a href=\"https://ok.example\" onclick=\"steal()\"&gt;"), "{html}");
    assert!(
        html.contains(r#"<a target="_blank" rel="noopener noreferrer nofollow">docs</a>"#),
        "the markdown link stays, inert (no address): {html}"
    );
    assert_eq!(detail["gate"]["text"], text, "the stored text is kept as sent");
    let changes = detail["payload_diff"]["changes"].as_array().unwrap();
    let paths: Vec<&str> = changes.iter().map(|c| c["path"].as_str().unwrap()).collect();
    for path in ["/image_file", "/input_image", "/size"] {
        assert!(paths.contains(&path), "{path} missing from {paths:?}");
    }
    let size = changes.iter().find(|c| c["path"] == "/size").unwrap();
    assert_eq!((size["old"].clone(), size["new"].clone()), (json!(512), json!(1024)));
    assert!(detail["payload_diff"]["unified"].as_str().unwrap().contains("image_file"));
    assert_eq!(detail["run_title"], "deploy");

    // Without an example there is nothing to diff.
    let plain = s.gate(&run, approval("Deploy?")).await;
    let (_, detail) = s.get(&format!("/gates/{plain}"), &s.reviewer).await;
    assert!(detail["payload_diff"].is_null(), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_gates_are_404_and_bad_filters_422() {
    let s = TestServer::start().await;
    let missing = "0190a000-0000-7000-8000-000000000000";
    for path in [format!("/gates/{missing}"), format!("/gates/{missing}/wait?timeout=0")] {
        let (status, body) = s.get(&path, &s.reviewer).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert_eq!(body["code"], "not_found");
    }
    let (status, body) = s.post(&format!("/gates/{missing}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = s.post(&format!("/runs/{missing}/gates"), &s.agent, approval("Deploy?")).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = s.get("/gates?status=bogus", &s.reviewer).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["code"], "invalid");
    assert!(body["message"].as_str().unwrap().starts_with("status:"), "{body}");
    let (status, _) = s.get("/gates?limit=10001", &s.reviewer).await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn the_queue_names_the_log_head_it_was_read_at() {
    let s = TestServer::start().await;
    let run = s.run().await;
    s.gate(&run, json!({"kind": "question", "text": "Which region?"})).await;
    let (status, list) = s.get("/gates", &s.reviewer).await;
    assert_eq!(status, 200, "{list}");
    let engine = s.server.state.engine_handle().clone();
    let head = tokio::task::spawn_blocking(move || engine.head_seq().unwrap()).await.unwrap();
    assert_eq!(list["head_seq"].as_u64(), Some(head), "{list}");
    // Following the stream from there yields only what came after.
    s.gate(&run, json!({"kind": "question", "text": "Which zone?"})).await;
    let (_, page) = s.get(&format!("/runs/{run}/events?after={head}"), &s.reviewer).await;
    let kinds: Vec<&str> = page["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["gate_opened"], "{page}");
}

#[tokio::test]
async fn a_quality_gate_is_scored_by_its_agent_under_the_threshold_or_by_a_reviewer() {
    let s = TestServer::start().await;
    // A person sets the threshold for the agent's run; the agent may not lower its own review.
    let (status, run) = s
        .post(
            "/run",
            &s.reviewer,
            json!({"run_input": {}, "agent": "deployer", "protocol": {"auto_approve_threshold": 4.0}}),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    let run = run["run_id"].as_str().unwrap().to_owned();
    let quality = json!({"kind": "quality_score", "text": "Score the draft", "deliverable_id": "draft-1"});

    // The agent's own score meets the threshold: the gate passes automatically.
    let gate = s.gate(&run, quality.clone()).await;
    let (status, reply) =
        s.post(&format!("/gates/{gate}/score"), &s.agent, json!({"score": 4.5, "justification": "tight"})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["verdict"], "passes");
    assert_eq!(reply["gate"]["status"], "resolved", "{reply}");
    assert_eq!(reply["gate"]["decision"]["origin"]["by"], "auto", "{reply}");
    assert_eq!(reply["gate"]["decision"]["score"]["scorer"], "deployer");
    assert_eq!(reply["gate"]["decision"]["score"]["deliverable_id"], "draft-1");

    // Below the threshold, the agent's score is recorded and a reviewer decides.
    let gate = s.gate(&run, quality.clone()).await;
    let (_, reply) = s.post(&format!("/gates/{gate}/score"), &s.agent, json!({"score": 3.5})).await;
    assert_eq!(
        (reply["verdict"].as_str(), reply["gate"]["status"].as_str()),
        (Some("passes"), Some("pending")),
        "{reply}"
    );
    let (status, reply) =
        s.post(&format!("/gates/{gate}/score"), &s.reviewer, json!({"score": 2.0, "justification": "thin"})).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["verdict"], "needs_revision");
    assert_eq!(reply["gate"]["decision"]["action"], "needs_revision");
    assert_eq!(reply["gate"]["decision"]["decided_by"], "alice");

    // Mistakes: out of range, someone else's run, not a quality gate, unknown gate.
    let gate = s.gate(&run, quality).await;
    let (status, body) = s.post(&format!("/gates/{gate}/score"), &s.reviewer, json!({"score": 6})).await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = s.post(&format!("/gates/{gate}/score"), &s.other_agent, json!({"score": 5})).await;
    assert_eq!(status, 403);
    let question = s.gate(&run, json!({"kind": "question", "text": "?"})).await;
    let (status, body) = s.post(&format!("/gates/{question}/score"), &s.reviewer, json!({"score": 4})).await;
    assert_eq!(status, 422, "{body}");
    let (status, _) = s.post("/gates/gate_nope/score", &s.reviewer, json!({"score": 4})).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_actions_is_decided_action_by_action_and_the_waiting_agent_gets_every_decision() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s
        .gate(
            &run,
            json!({"kind": "approval", "action": "tool_calls", "text": "Run these?", "actions": [
                {"id": "c1", "name": "read", "args": {"path": "a"}},
                {"id": "c2", "name": "write", "args": {"path": "b"}},
            ]}),
        )
        .await;
    let waiter = {
        let (base, token, gate) = (s.base.clone(), s.agent.clone(), gate.clone());
        tokio::spawn(async move {
            let resp = reqwest::Client::new()
                .get(format!("{base}/gates/{gate}/wait?timeout=30"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap();
            resp.json::<Value>().await.unwrap()
        })
    };

    let first = json!({"action": "approve", "actions": [{"id": "c2", "action": "reject", "text": "no"}]});
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, first.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "pending", "{body}");
    assert_eq!(body["actions"][1]["decision"]["action"], "reject", "{body}");

    // Deciding c2 again: 409 naming who decided it and when.
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, first).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["resolved_by"].is_string() && body["resolved_at"].is_string(), "{body}");
    assert!(body["message"].as_str().unwrap_or_default().contains("`c2`"), "{body}");
    // A bad choice: 422 naming the field.
    let bad = json!({"action": "approve", "actions": [{"id": "c1", "action": "edit"}]});
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, bad).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap_or_default().starts_with("actions[0].args"), "{body}");
    assert!(!waiter.is_finished(), "the agent still waits while an action is open");

    let last = json!({"action": "approve", "actions": [{"id": "c1", "action": "edit", "args": {"path": "A"}}]});
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, last).await;
    assert_eq!(status, 200, "{body}");
    let decided = waiter.await.unwrap();
    assert_eq!(decided["status"], "resolved", "{decided}");
    let each: Vec<_> = decided["decision"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["id"].as_str().unwrap().to_owned(), a["action"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(each, vec![("c1".to_owned(), "edit".to_owned()), ("c2".to_owned(), "reject".to_owned())]);
    assert_eq!(decided["decision"]["actions"][0]["args"], json!({"path": "A"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_response_form_refuses_a_bad_answer_naming_the_field_and_the_agent_gets_the_good_one() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let schema = json!({"type": "object", "required": ["region"], "properties": {
        "region": {"type": "string", "enum": ["eu", "us"]},
        "percent": {"type": "integer", "minimum": 1, "maximum": 50}
    }});
    let (status, body) = s
        .post(
            &format!("/runs/{run}/gates"),
            &s.agent,
            json!({"kind": "question", "text": "Where?", "response_schema": {"type": "array"}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap_or_default().starts_with("response_schema"), "{body}");
    let gate = s.gate(&run, json!({"kind": "question", "text": "Where?", "response_schema": schema})).await;
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["response_schema"], schema);

    let bad = json!({"action": "respond", "response": {"region": "eu", "percent": 99}});
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, bad).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap_or_default().starts_with("response.percent"), "{body}");
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["status"], "pending", "a refused answer changes nothing");

    let good = json!({"action": "respond", "response": {"region": "us", "percent": 5}, "text": "canary"});
    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, good).await;
    assert_eq!(status, 200, "{body}");
    let (_, waited) = s.get(&format!("/gates/{gate}/wait?timeout=1"), &s.agent).await;
    assert_eq!(waited["decision"]["response"], json!({"region": "us", "percent": 5}), "{waited}");
    assert_eq!(waited["decision"]["text"], "canary");
}
