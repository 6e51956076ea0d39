//! Searching gates over real HTTP: text and filters, snippets as plain-text
//! parts, who decided, paging, 422s naming the bad parameter (never a 500,
//! whatever the text), and who may see what.

use crate::common;

use common::TestServer;
use serde_json::{json, Value};

/// `GET /gates/search` with `params`, as `token`.
async fn search(s: &TestServer, token: &str, params: &[(&str, &str)]) -> (u16, Value) {
    let resp = s.http.get(s.url("/gates/search")).query(params).bearer_auth(token).send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn hit_ids(page: &Value) -> Vec<&str> {
    page["hits"].as_array().expect("hits").iter().map(|h| h["id"].as_str().expect("id")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_finds_past_and_pending_gates_with_marked_snippets() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let deploy = s
        .gate(
            &run,
            json!({"kind": "approval", "action": "deploy_service", "text": "Deploy <b>billing</b> to prod?",
            "payload": {"service": "billing-api", "replicas": 3}}),
        )
        .await;
    let question = s.gate(&run, json!({"kind": "question", "text": "Which billing region?"})).await;
    let (status, body) =
        s.post(&format!("/gates/{question}/resolve"), &s.reviewer2, json!({"action": "respond", "text": "eu"})).await;
    assert_eq!(status, 200, "{body}");

    let (status, page) = search(&s, &s.reviewer, &[("q", "billing")]).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(hit_ids(&page), vec![question.as_str(), deploy.as_str()], "newest first");
    assert_eq!(page["more"], false);

    let decided = &page["hits"][0];
    assert_eq!(decided["status"], "resolved");
    assert_eq!(decided["decided_by"], "bob");
    assert_eq!(decided["decision"], "respond");
    assert_eq!(decided["kind"], "question");
    assert_eq!(decided["agent"], "deployer");
    assert_eq!(decided["run_id"], run.as_str());
    assert!(decided["closed_at"].is_string());

    let pending = &page["hits"][1];
    assert_eq!((pending["status"].as_str(), pending["mode"].as_str()), (Some("pending"), Some("sync")));
    assert!(pending["decided_by"].is_null());
    // The snippet is agent text in parts: the markup stays text, the match is marked.
    let parts = pending["snippet"].as_array().expect("snippet");
    let whole: String = parts.iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert!(whole.contains("Deploy <b>billing</b> to prod?"), "{whole}");
    let marked: Vec<&str> =
        parts.iter().filter(|p| p["matched"] == true).map(|p| p["text"].as_str().unwrap()).collect();
    assert_eq!(marked, vec!["billing"]);

    // By the payload, by who decided, by the prefix being typed.
    let (_, page) = search(&s, &s.reviewer, &[("q", "billing-api")]).await;
    assert_eq!(hit_ids(&page), vec![deploy.as_str()]);
    let (_, page) = search(&s, &s.reviewer, &[("q", "bob")]).await;
    assert_eq!(hit_ids(&page), vec![question.as_str()]);
    let (_, page) = search(&s, &s.reviewer, &[("q", "deploy_serv")]).await;
    assert_eq!(hit_ids(&page), vec![deploy.as_str()]);
    // No text and no filter: the newest gates.
    let (_, page) = search(&s, &s.admin, &[]).await;
    assert_eq!(hit_ids(&page), vec![question.as_str(), deploy.as_str()]);
    assert_eq!(page["hits"][0]["snippet"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_and_pages_narrow_the_hits() {
    let s = TestServer::start().await;
    let (first_run, second_run) = (s.run().await, s.run().await);
    let approval = s.gate(&first_run, json!({"kind": "approval", "action": "deploy", "text": "Invoice run?"})).await;
    let question = s.gate(&first_run, json!({"kind": "question", "text": "Invoice currency?"})).await;
    let other = s.gate(&second_run, json!({"kind": "question", "text": "Invoice format?", "mode": "async"})).await;
    s.post(&format!("/gates/{question}/resolve"), &s.reviewer, json!({"action": "respond", "text": "EUR"})).await;

    let ids = |page: &Value| hit_ids(page).into_iter().map(str::to_owned).collect::<Vec<_>>();
    let q = |extra: &[(&'static str, String)]| {
        let mut params = vec![("q", "invoice".to_owned())];
        params.extend(extra.iter().cloned());
        params
    };
    let get = |params: Vec<(&'static str, String)>| {
        let s = &s;
        async move {
            let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let (status, page) = search(s, &s.reviewer, &params).await;
            assert_eq!(status, 200, "{params:?}: {page}");
            page
        }
    };
    assert_eq!(ids(&get(q(&[("status", "pending".into())])).await), vec![other.clone(), approval.clone()]);
    assert_eq!(ids(&get(q(&[("status", "resolved".into())])).await), vec![question.clone()]);
    assert_eq!(ids(&get(q(&[("status", "any".into()), ("kind", "approval".into())])).await), vec![approval.clone()]);
    assert_eq!(ids(&get(q(&[("run_id", second_run.clone())])).await), vec![other.clone()]);
    assert_eq!(ids(&get(q(&[("agent", "deployer".into())])).await).len(), 3);
    assert_eq!(ids(&get(q(&[("decided_by", "alice".into())])).await), vec![question.clone()]);
    assert!(ids(&get(q(&[("decided_by", "bob".into())])).await).is_empty());
    // Blank parameters, as a form sends them, are no filter.
    assert_eq!(ids(&get(q(&[("kind", "".into()), ("agent", " ".into())])).await).len(), 3);

    let today = chrono::Utc::now().date_naive();
    let (yesterday, tomorrow) = (today.pred_opt().unwrap(), today.succ_opt().unwrap());
    assert_eq!(ids(&get(q(&[("from", today.to_string()), ("to", today.to_string())])).await).len(), 3);
    assert!(ids(&get(q(&[("to", yesterday.to_string())])).await).is_empty());
    assert!(ids(&get(q(&[("from", tomorrow.to_string())])).await).is_empty());
    let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    assert_eq!(ids(&get(q(&[("from", an_hour_ago)])).await).len(), 3);

    let page = get(q(&[("limit", "2".into())])).await;
    assert_eq!(ids(&page), vec![other.clone(), question.clone()]);
    assert_eq!(page["more"], true);
    let page = get(q(&[("limit", "2".into()), ("offset", "2".into())])).await;
    assert_eq!(ids(&page), vec![approval.clone()]);
    assert_eq!(page["more"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_parameters_are_422_naming_the_parameter() {
    let s = TestServer::start().await;
    for (name, value) in [
        ("limit", "0"),
        ("limit", "501"),
        ("limit", "ten"),
        ("offset", "-1"),
        ("offset", "10001"),
        ("from", "yesterday"),
        ("to", "2026-02-30"),
        ("status", "bogus"),
        ("kind", "bogus"),
    ] {
        let (status, body) = search(&s, &s.reviewer, &[(name, value)]).await;
        assert_eq!(status, 422, "{name}={value}: {body}");
        assert_eq!(body["code"], "invalid");
        assert!(body["message"].as_str().unwrap().starts_with(&format!("{name}:")), "{name}={value}: {body}");
    }
    let (status, body) = search(&s, &s.reviewer, &[("from", "2026-03-02"), ("to", "2026-03-01T00:00:00Z")]).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("to:"), "{body}");
    let long = "x".repeat(1_001);
    let (status, body) = search(&s, &s.reviewer, &[("q", &long)]).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("q:"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_that_looks_like_fts5_syntax_never_fails() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": r#"Is "blue-green" AND(canary) -safe?"#})).await;
    for q in [
        "\"",
        "\"blue",
        "*",
        "AND(",
        "OR",
        "NOT x",
        "-",
        "-safe",
        "NEAR(a b)",
        "a:b",
        "{text}:",
        "^",
        "(((",
        "%",
        "\u{E000}",
    ] {
        let (status, body) = search(&s, &s.reviewer, &[("q", q)]).await;
        assert_eq!(status, 200, "{q:?}: {body}");
    }
    let (_, page) = search(&s, &s.reviewer, &[("q", "AND(canary)")]).await;
    assert_eq!(hit_ids(&page), vec![gate.as_str()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_searches_only_its_own_gates() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let gate = s.gate(&run, json!({"kind": "question", "text": "Rotate the signing key?"})).await;

    let (status, page) = search(&s, &s.agent, &[("q", "signing")]).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(hit_ids(&page), vec![gate.as_str()]);
    for params in [&[("q", "signing")][..], &[("q", "signing"), ("agent", "deployer")], &[]] {
        let (status, page) = search(&s, &s.other_agent, params).await;
        assert_eq!(status, 200, "{page}");
        assert!(hit_ids(&page).is_empty(), "{params:?}: {page}");
    }
    let resp = s.http.get(s.url("/gates/search?q=signing")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 401);
}
