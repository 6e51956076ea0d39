//! Review metrics on small known workloads: every figure is asserted
//! against numbers worked out by hand from the gates opened and decided.

use crate::common;

use chrono::Duration;
use common::Fixture;
use gatehouse_engine::gate::GateSpec;
use gatehouse_engine::policy::{HitlConfig, RunPolicy};
use gatehouse_engine::{BlockingMode, DecisionInput, GateKind, GateStatus, Metrics, NewGate, NewRun};
use serde_json::json;

fn payload_review(payload: serde_json::Value) -> NewGate {
    let spec = GateSpec::PayloadReview { validation: vec![], suggestions: vec![], required_fields: vec![] };
    let mut gate = NewGate::new(spec, "Send this payload?");
    gate.payload = Some(payload);
    gate
}

fn kind(m: &Metrics, kind: GateKind) -> &gatehouse_engine::engine::metrics::KindMetrics {
    m.by_kind.iter().find(|k| k.kind == kind).expect("kind present")
}

/// Nine gates over two agents: two auto-passed, four decided by people
/// after 20 to 60 seconds, one expired, one cancelled, one still pending.
fn known_workload(f: &Fixture) {
    let auto = HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() };
    let input = json!({"model": "writer-model", "prompt": "a post"});
    let writer = f.run_with(NewRun { agent: "writer".into(), hitl_config: auto, input, ..NewRun::default() });
    let coder = f.run("coder");
    let e = &f.engine;

    let g1 = e.open_gate(&writer.id, NewGate::approval("publish", "Publish?", json!({})), "writer").unwrap();
    let g2 = e.open_gate(&writer.id, payload_review(json!({"prompt": "hi"})), "writer").unwrap();
    assert_eq!((g1.status, g2.status), (GateStatus::Resolved, GateStatus::Resolved), "the auto policy passes both");
    let g3 = e.open_gate(&writer.id, NewGate::question("Which tone?"), "writer").unwrap();

    let g4 = e.open_gate(&coder.id, payload_review(json!({"prompt": "a cat", "steps": 20})), "coder").unwrap();
    let g5 = e.open_gate(&coder.id, payload_review(json!({"prompt": "x"})), "coder").unwrap();
    let g6 = e.open_gate(&coder.id, NewGate::approval("deploy", "Deploy?", json!({"env": "prod"})), "coder").unwrap();
    let mut expiring = NewGate::question("Still there?");
    expiring.mode = BlockingMode::Async;
    expiring.expires_in_secs = Some(30);
    let g7 = e.open_gate(&coder.id, expiring, "coder").unwrap();
    let g8 = e.open_gate(&coder.id, NewGate::question("Never mind?"), "coder").unwrap();
    e.open_gate(&coder.id, NewGate::question("Left open?"), "coder").unwrap();

    f.clock.advance(Duration::seconds(20));
    e.resolve_gate(&g5.id, DecisionInput::edit(json!({"prompt": "y", "width": 512})), "alice").unwrap();
    f.clock.advance(Duration::seconds(20));
    e.resolve_gate(&g3.id, DecisionInput::respond("Friendly"), "bob").unwrap();
    f.clock.advance(Duration::seconds(20));
    e.resolve_gate(&g4.id, DecisionInput::edit(json!({"prompt": "a dog", "steps": 30})), "alice").unwrap();
    e.resolve_gate(&g6.id, DecisionInput::reject("not today"), "alice").unwrap();
    e.cancel_gate(&g8.id, "answered elsewhere", "coder").unwrap();
    assert_eq!(e.sweep_expired().unwrap(), vec![g7.id.clone()]);
}

#[test]
fn each_reviewer_and_each_model_has_its_own_figures() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();

    let reviewers: Vec<_> = m
        .by_reviewer
        .iter()
        .map(|r| (r.reviewer.as_str(), r.decisions.decided, r.decisions.edited, r.decisions.rejected))
        .collect();
    assert_eq!(reviewers, vec![("alice", 3, 2, 1), ("bob", 1, 0, 0)]);
    let alice = &m.by_reviewer[0].decisions;
    assert_eq!(
        (alice.edit_rate, alice.rejection_rate, alice.approval_rate),
        (Some(2.0 / 3.0), Some(1.0 / 3.0), Some(0.0))
    );
    assert_eq!(alice.avg_latency_ms, Some((20_000.0 + 60_000.0 + 60_000.0) / 3.0));
    assert_eq!(m.by_reviewer[1].decisions.avg_latency_ms, Some(40_000.0));

    // Only the writer's run named a model; the coder's gates belong to none.
    let models: Vec<_> = m.by_model.iter().map(|x| x.model.as_str()).collect();
    assert_eq!(models, ["writer-model"]);
    let writer = &m.by_model[0];
    assert_eq!((writer.rates.gates, writer.rates.auto_passed, writer.rates.auto_pass_rate), (3, 2, Some(2.0 / 3.0)));
    assert_eq!((writer.decisions.decided, writer.decisions.avg_latency_ms), (1, Some(40_000.0)));
}

#[test]
fn hitl_and_auto_pass_rates_are_counted_per_agent_and_per_kind() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();

    assert_eq!(
        (m.overall.gates, m.overall.auto_passed, m.overall.waited_for_human, m.overall.human_decided),
        (9, 2, 7, 4)
    );
    assert_eq!(m.overall.hitl_rate, Some(7.0 / 9.0));
    assert_eq!(m.overall.auto_pass_rate, Some(2.0 / 9.0));

    let agents: Vec<_> =
        m.by_agent.iter().map(|a| (a.agent.as_str(), a.rates.gates, a.rates.auto_passed, a.rates.hitl_rate)).collect();
    assert_eq!(agents, vec![("coder", 6, 0, Some(1.0)), ("writer", 3, 2, Some(1.0 / 3.0))]);

    let kinds: Vec<_> = m.by_kind.iter().map(|k| k.kind).collect();
    assert_eq!(kinds, vec![GateKind::Approval, GateKind::PayloadReview, GateKind::Question]);
    let approval = kind(&m, GateKind::Approval);
    assert_eq!((approval.rates.gates, approval.rates.auto_passed, approval.rates.auto_pass_rate), (2, 1, Some(0.5)));
    let payload = kind(&m, GateKind::PayloadReview);
    assert_eq!((payload.rates.gates, payload.rates.human_decided, payload.rates.hitl_rate), (3, 2, Some(2.0 / 3.0)));
    let question = kind(&m, GateKind::Question);
    assert_eq!((question.rates.gates, question.rates.auto_passed, question.rates.hitl_rate), (4, 0, Some(1.0)));
}

#[test]
fn human_latency_is_averaged_per_kind_over_human_decisions_only() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();
    // Auto-passed gates (latency 0) must not pull the averages down.
    assert_eq!(kind(&m, GateKind::Approval).avg_human_latency_ms, Some(60_000.0));
    assert_eq!(kind(&m, GateKind::PayloadReview).avg_human_latency_ms, Some(40_000.0));
    assert_eq!(kind(&m, GateKind::Question).avg_human_latency_ms, Some(40_000.0));
    assert_eq!(m.avg_human_latency_ms, Some(45_000.0));
}

#[test]
fn expiry_rate_is_expired_over_closed_gates() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();
    assert_eq!((m.expiry.expired, m.expiry.closed, m.expiry.expiry_rate), (1, 8, Some(0.125)));
}

#[test]
fn common_corrections_count_the_paths_human_edits_changed() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();
    let got: Vec<_> = m.common_corrections.iter().map(|c| (c.path.as_str(), c.count)).collect();
    assert_eq!(got, vec![("/prompt", 2), ("/steps", 1), ("/width", 1)]);
}

#[test]
fn capability_ratings_reflect_the_human_decisions() {
    let f = Fixture::new();
    known_workload(&f);
    let m = f.engine.metrics().unwrap();
    let coder = m.capability_ratings.iter().find(|r| r.agent == "coder").expect("coder rated");
    assert_eq!((coder.decisions, coder.approvals), (3, 2), "two edits approve, one rejection does not");
    // The writer's one human decision answered its question: that judges nothing, so it is not rated.
    assert!(m.capability_ratings.iter().all(|r| r.agent != "writer"), "{:?}", m.capability_ratings);
}

#[test]
fn only_the_ten_most_corrected_paths_are_listed_most_frequent_first_then_by_path() {
    let f = Fixture::new();
    let run = f.run("coder");
    let fields: serde_json::Map<_, _> = (0..12).map(|i| (format!("f{i:02}"), json!(0))).collect();
    let all_changed: serde_json::Map<_, _> = (0..12).map(|i| (format!("f{i:02}"), json!(1))).collect();
    let g1 = f.engine.open_gate(&run.id, payload_review(fields.clone().into()), "coder").unwrap();
    let g2 = f.engine.open_gate(&run.id, payload_review(fields.clone().into()), "coder").unwrap();
    f.engine.resolve_gate(&g1.id, DecisionInput::edit(all_changed.into()), "alice").unwrap();
    let mut some_changed = fields;
    for key in ["f11", "f07", "f03"] {
        some_changed.insert(key.into(), json!(2));
    }
    f.engine.resolve_gate(&g2.id, DecisionInput::edit(some_changed.into()), "alice").unwrap();

    let m = f.engine.metrics().unwrap();
    let got: Vec<_> = m.common_corrections.iter().map(|c| (c.path.as_str(), c.count)).collect();
    assert_eq!(
        got,
        vec![
            ("/f03", 2),
            ("/f07", 2),
            ("/f11", 2),
            ("/f00", 1),
            ("/f01", 1),
            ("/f02", 1),
            ("/f04", 1),
            ("/f05", 1),
            ("/f06", 1),
            ("/f08", 1)
        ]
    );
}

#[test]
fn an_empty_database_has_zero_counts_and_no_rates() {
    let f = Fixture::new();
    let m = f.engine.metrics().unwrap();
    assert_eq!(m.overall.gates, 0);
    assert_eq!((m.overall.hitl_rate, m.overall.auto_pass_rate, m.avg_human_latency_ms), (None, None, None));
    assert_eq!((m.expiry.closed, m.expiry.expiry_rate), (0, None));
    assert!(m.by_agent.is_empty() && m.by_kind.is_empty() && m.common_corrections.is_empty());
    assert_eq!(m.computed_at, f.engine.now());
}
