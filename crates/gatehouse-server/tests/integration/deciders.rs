//! Who may answer, over HTTP: a gate restricted to named reviewers or roles
//! refuses everyone else with 403 (the UI shows it read-only), tokens carry
//! teams, and `GET /whoami` tells the UI who it is.

use crate::common;

use common::TestServer;
use serde_json::{json, Value};

async fn token(s: &TestServer, name: &str, teams: Value) -> String {
    let (status, body) = s.post("/tokens", &s.admin, json!({"name": name, "role": "reviewer", "teams": teams})).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["token"]["teams"], teams);
    body["secret"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restricted_gate_is_refused_to_others_with_403_and_decided_by_its_role() {
    let s = TestServer::start().await;
    let carol = token(&s, "carol", json!(["security"])).await;
    let (status, me) = s.get("/whoami", &carol).await;
    assert_eq!(status, 200);
    assert_eq!(
        me,
        json!({"name": "carol", "role": "reviewer", "teams": ["security"], "roles": ["reviewer", "security"]})
    );

    let run = s.run().await;
    let gate = s
        .gate(&run, json!({"kind": "approval", "action": "rotate_keys", "text": "Rotate the keys?", "deciders": ["role:security"]}))
        .await;
    let (_, detail) = s.get(&format!("/gates/{gate}"), &s.reviewer).await;
    assert_eq!(detail["gate"]["deciders"], json!(["role:security"]), "everyone can read it, and see who may decide");

    let (status, body) = s.post(&format!("/gates/{gate}/resolve"), &s.reviewer, json!({"action": "approve"})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["code"], "forbidden");
    assert!(
        body["message"].as_str().unwrap().contains("may be decided only by role:security; alice may read it"),
        "{body}"
    );
    // The HITL run API's approve endpoint enforces it too.
    let approve = json!({"approval_id": gate, "action": "approve"});
    assert_eq!(s.post(&format!("/run/{run}/approve"), &s.reviewer2, approve.clone()).await.0, 403);

    let (status, body) = s.post(&format!("/run/{run}/approve"), &carol, approve).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["decision"]["decided_by"], "carol");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_deciders_and_teams_are_422s_naming_the_field() {
    let s = TestServer::start().await;
    let run = s.run().await;
    let (status, body) = s
        .post(&format!("/runs/{run}/gates"), &s.agent, json!({"kind": "question", "text": "Q?", "deciders": ["role:"]}))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("deciders[0]:"), "{body}");
    let (status, body) = s
        .post(
            &format!("/runs/{run}/gates"),
            &s.agent,
            json!({"kind": "question", "text": "Q?", "escalate_to": ["bob"]}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("escalate_to:"), "{body}");
    let (status, body) =
        s.post("/tokens", &s.admin, json!({"name": "x", "role": "reviewer", "teams": ["two words"]})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["message"].as_str().unwrap().starts_with("teams[0]:"), "{body}");
}
