//! One-time sign-in links over real HTTP: a code printed by `serve` is
//! exchanged once, without a token, for a reviewer token recorded in the
//! audit log; a used or wrong code is 401 saying to ask for a new link.

use crate::common::TestServer;
use gatehouse_engine::event::EventKind;
use gatehouse_engine::store::EventFilter;
use gatehouse_server::routes::signin::{issue_link, SIGNIN_ACTOR};
use serde_json::{json, Value};

async fn exchange(s: &TestServer, code: &str) -> (u16, Value) {
    let url = format!("http://{}/api/signin", s.server.addr);
    let resp = reqwest::Client::new().post(url).json(&json!({ "code": code })).send().await.expect("request");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("a JSON body"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_link_works_once_and_gives_a_reviewer_token_the_audit_log_records() {
    let s = TestServer::start().await;
    let link = issue_link(s.server.state.engine_handle(), "carol");
    assert_eq!(link.url("http://h:1/"), format!("http://h:1/#signin={}", link.code));

    let (status, body) = exchange(&s, &link.code).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["name"].as_str(), body["role"].as_str()), (Some("carol"), Some("reviewer")));
    let token = body["token"].as_str().expect("a token");
    let (status, me) = s.get("/whoami", token).await;
    assert_eq!((status, me["name"].as_str()), (200, Some("carol")), "{me}");

    let (status, again) = exchange(&s, &link.code).await;
    assert_eq!((status, again["code"].as_str()), (401, Some("unauthorized")), "{again}");
    assert!(again["message"].as_str().unwrap_or("").contains("already used"), "{again}");

    let events = s.server.state.engine_handle().events_after(0, &EventFilter::default(), 500).expect("events");
    let made =
        events.iter().find(|e| matches!(&e.body.kind, EventKind::TokenCreated { token } if token.name == "carol"));
    assert_eq!(made.map(|e| e.body.actor.as_str()), Some(SIGNIN_ACTOR), "the audit log says the link made it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_code_is_401_and_another_servers_code_does_not_work_here() {
    let (a, b) = (TestServer::start().await, TestServer::start().await);
    let (status, body) = exchange(&a, "0123456789abcdef").await;
    assert_eq!((status, body["field"].as_str()), (401, Some("code")), "{body}");
    assert!(body["message"].as_str().unwrap_or("").contains("ask for a new one"), "{body}");

    let link = issue_link(b.server.state.engine_handle(), "dave");
    assert_eq!(exchange(&a, &link.code).await.0, 401, "codes are bound to their database");
    assert_eq!(exchange(&b, &link.code).await.0, 200, "and still work there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_asks_a_running_server_for_a_link_and_a_reviewer_may_not() {
    let s = TestServer::start().await;
    let (status, body) = s.post("/signin-links", &s.reviewer, json!({ "name": "erin" })).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("forbidden")), "{body}");

    let (status, body) = s.post("/signin-links", &s.admin, json!({ "name": "erin" })).await;
    assert_eq!(status, 201, "{body}");
    let url = body["url"].as_str().expect("a url");
    let code = url.split_once("#signin=").map(|(_, c)| c).expect("the code in the fragment");
    let (status, answer) = exchange(&s, code).await;
    assert_eq!((status, answer["name"].as_str()), (200, Some("erin")), "{answer}");

    let (status, body) = s.post("/signin-links", &s.admin, json!({ "name": "  " })).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("name")), "{body}");
}
