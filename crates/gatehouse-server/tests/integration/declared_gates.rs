//! Gates declared with a run over HTTP: `POST /run` with `declared_gates`
//! (422 naming the field when one is wrong), `POST /run/{id}/nodes/{node}`
//! opening the declared gate, and an agent's own gate for the node unable
//! to lower the declared score or swap its kind.

use crate::common;

use common::TestServer;
use serde_json::{json, Value};

fn review_node() -> Value {
    json!({"workflow_node_id": "draft-review", "kind": "quality_score", "rubric": ["accuracy", "tone"],
        "required_score": 4.0, "requires_human": true})
}

async fn declaring_run(s: &TestServer, gates: Value) -> (u16, Value) {
    s.post("/run", &s.agent, json!({"run_input": {"prompt": "write"}, "declared_gates": gates})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reaching_a_node_opens_the_declared_gate_and_the_agent_cannot_lower_it() {
    let s = TestServer::start().await;
    let (code, started) =
        declaring_run(&s, json!([review_node(), {"workflow_node_id": "ship", "kind": "approval"}])).await;
    assert_eq!(code, 201, "{started}");
    let run = started["run_id"].as_str().unwrap().to_owned();
    let (_, detail) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    assert_eq!(detail["run"]["declared_gates"].as_array().map(Vec::len), Some(2), "{detail}");

    let (code, opened) =
        s.post(&format!("/run/{run}/nodes/draft-review"), &s.agent, json!({"payload": {"draft": "text"}})).await;
    assert_eq!(code, 201, "{opened}");
    let gate = &opened["gate"];
    assert_eq!(
        (gate["workflow_node_id"].as_str(), gate["spec"]["required_score"].as_f64()),
        (Some("draft-review"), Some(4.0))
    );
    assert_eq!(gate["spec"]["rubric"], json!(["accuracy", "tone"]));
    assert_eq!(gate["requires_human"], true);

    let weaker = json!({"kind": "quality_score", "text": "Score it", "required_score": 1.0, "rubric": [],
        "mode": "advisory", "workflow_node_id": "draft-review"});
    let (code, opened) = s.post(&format!("/runs/{run}/gates"), &s.agent, weaker).await;
    assert_eq!(code, 201, "{opened}");
    assert_eq!(opened["gate"]["spec"]["required_score"], 4.0, "the declared score stands: {opened}");
    assert_eq!(opened["gate"]["mode"], "sync");

    let swapped = json!({"kind": "question", "text": "Skip it?", "workflow_node_id": "draft-review"});
    let (code, body) = s.post(&format!("/runs/{run}/gates"), &s.agent, swapped).await;
    assert_eq!((code, body["field"].as_str()), (422, Some("kind")), "{body}");
    let (code, body) = s.post(&format!("/run/{run}/nodes/nowhere"), &s.agent, json!({})).await;
    assert_eq!((code, body["field"].as_str()), (422, Some("node_id")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_declaration_is_422_naming_the_field() {
    let s = TestServer::start().await;
    let cases = [
        (json!([review_node(), review_node()]), "declared_gates[1].workflow_node_id"),
        (
            json!([{"workflow_node_id": "a", "kind": "quality_score", "required_score": 7}]),
            "declared_gates[0].required_score",
        ),
        (json!([{"workflow_node_id": "a", "kind": "approval", "rubric": ["x"]}]), "declared_gates[0].rubric"),
    ];
    for (gates, field) in cases {
        let (code, body) = declaring_run(&s, gates).await;
        assert_eq!((code, body["field"].as_str()), (422, Some(field)), "{body}");
    }
    let (code, body) = declaring_run(&s, json!([{"workflow_node_id": "a", "kind": "vibe_check"}])).await;
    assert_eq!(code, 422, "{body}");
    assert!(body["field"].as_str().is_some_and(|f| f.contains("declared_gates")), "{body}");
}
