//! Gates end to end through the engine and a real SQLite file: opening,
//! deciding, conflicts, idempotency, policies, quorum and edits.

use crate::common;

use common::Fixture;
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::gate::{GateSpec, Quorum};
use gatehouse_engine::policy::{HitlConfig, ReviewThresholds, RunPolicy};
use gatehouse_engine::{
    BlockingMode, DecisionInput, DecisionOrigin, EngineError, EventKind, GateFilter, GateKind, GateStatus, NewGate,
    NewRun, Priority, RunStatus, Store,
};
use serde_json::json;

#[test]
fn a_sync_question_holds_the_run_until_a_human_answers() {
    let f = Fixture::new();
    let run = f.run("BackendWorker-abc123");
    let gate = f
        .engine
        .open_gate(&run.id, NewGate::question("What API key should I use for Stripe?"), "BackendWorker-abc123")
        .unwrap();
    assert_eq!(gate.status, GateStatus::Pending);
    assert_eq!(gate.agent, "BackendWorker-abc123");
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::AwaitingHuman);

    f.clock.advance(chrono::Duration::seconds(90));
    let decided =
        f.engine.resolve_gate(&gate.id, DecisionInput::respond("Use the test key from the vault"), "alice").unwrap();
    let d = decided.decision.expect("decision");
    assert_eq!((d.action, d.decided_by.as_str(), d.latency_ms), (DecisionAction::Respond, "alice", 90_000));
    assert_eq!(decided.status, GateStatus::Resolved);
    assert_eq!(f.engine.run(&run.id).unwrap().status, RunStatus::Active);
}

#[test]
fn second_resolution_is_a_conflict_naming_the_first_reviewer_and_its_attempt_is_logged() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Ship it?"), "agent").unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::respond("yes"), "alice").unwrap();
    let err = f.engine.resolve_gate(&gate.id, DecisionInput::respond("no, wait"), "bob").unwrap_err();
    match &err {
        EngineError::GateClosed { resolved_by, resolved_at, status, .. } => {
            assert_eq!(resolved_by.as_deref(), Some("alice"));
            assert!(resolved_at.is_some());
            assert_eq!(*status, GateStatus::Resolved);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(err.to_string().contains("already resolved by alice"), "{err}");
    let events = f.engine.events_after(0, &Default::default(), 100).unwrap();
    let refused = events.iter().find_map(|e| match &e.body.kind {
        EventKind::ResolutionRefused { attempted_by, attempted, .. } => {
            Some((attempted_by.clone(), attempted.text.clone()))
        }
        _ => None,
    });
    assert_eq!(refused, Some(("bob".into(), Some("no, wait".into()))));
}

#[test]
fn a_retried_request_with_the_same_idempotency_key_returns_the_first_gate() {
    let f = Fixture::new();
    let run = f.run("agent");
    let mut new = NewGate::approval("deploy", "Deploy build 42?", json!({"build": 42}));
    new.idempotency_key = Some("deploy-42".into());
    let first = f.engine.open_gate(&run.id, new.clone(), "agent").unwrap();
    let second = f.engine.open_gate(&run.id, new, "agent").unwrap();
    assert_eq!(first.id, second.id);
    assert_eq!(f.engine.count_gates(&GateFilter { run_id: Some(run.id.clone()), ..Default::default() }).unwrap(), 1);
}

#[test]
fn on_a_database_server_an_open_with_a_retry_key_and_a_decision_each_wait_for_its_reply_only_where_they_must() {
    let f = Fixture::new();
    let run = f.run("agent");
    let trips = || f.engine.store_stats().map_or(0, |s| s.round_trips);
    // The fewest of several: a writer connection's first use of a statement
    // prepares it (a round trip of its own), and either of two writers may serve.
    let (mut open, mut decide) = (u64::MAX, u64::MAX);
    for i in 0..6 {
        let mut new = NewGate::approval("deploy", "Deploy?", json!({"build": i}));
        new.idempotency_key = Some(format!("deploy-{i}"));
        let before = trips();
        let gate = f.engine.open_gate(&run.id, new.clone(), "agent").unwrap();
        open = open.min(trips() - before);
        let before = trips();
        f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
        decide = decide.min(trips() - before);
        // Still idempotent, and still first resolver wins.
        assert_eq!(f.engine.open_gate(&run.id, new, "agent").unwrap().id, gate.id);
        let second = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap_err();
        assert!(matches!(second, EngineError::GateClosed { .. }), "{second:?}");
    }
    match f.is_postgres() {
        // A writer busy a moment ago sends a group's begin without waiting.
        // Open: the run with its rules and the key's gate, the chain's head,
        // the commit. Decide: the gate with its run, the run's other blocking
        // gates, the chain's head with the agent's rating, the commit.
        true => assert_eq!((open, decide), (3, 4), "waits for the database's reply"),
        false => assert_eq!((open, decide), (0, 0), "SQLite, in the process, has no round trips"),
    }
}

#[test]
fn within_one_write_a_second_conditional_update_or_a_second_gate_with_the_same_key_sees_the_first() {
    // On PostgreSQL the first of each is sent without waiting, on what the
    // write read with the run's row held; the second must still be refused.
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Which key?"), "agent").unwrap();
    let (id, run_id, now) = (gate.id.clone(), run.id.clone(), f.engine.now());
    let (first, second, inserted, again) = f
        .engine
        .store()
        .write(move |tx| {
            let mut closed = tx.gate(&id)?.expect("the gate");
            closed.status = GateStatus::Cancelled;
            let first = tx.update_gate_if(&closed, GateStatus::Pending)?;
            let second = tx.update_gate_if(&closed, GateStatus::Pending)?;
            let key = "a-fresh-key";
            assert!(tx.reads_before_open(&run_id, "agent", &[], Some(key), now)?.existing.is_none());
            let mut fresh = closed.clone();
            (fresh.id, fresh.status, fresh.idempotency_key) =
                (gatehouse_engine::GateId::new(), GateStatus::Pending, Some(key.to_owned()));
            let inserted = tx.insert_gate(&fresh)?;
            fresh.id = gatehouse_engine::GateId::new();
            let again = tx.insert_gate(&fresh)?;
            Ok((first, second, inserted, again))
        })
        .unwrap();
    assert!(first, "the gate was pending");
    assert!(!second, "the first update closed it");
    assert!(inserted, "the key was unused");
    assert!(!again, "the first insert took the key");
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Cancelled);
}

#[test]
fn idempotency_keys_are_kept_as_digests_and_secret_keys_that_redact_alike_stay_apart() {
    let f = Fixture::new();
    let run = f.run("agent");
    let open = |key: &str| {
        let mut new = NewGate::question("Which region?");
        new.idempotency_key = Some(key.into());
        f.engine.open_gate(&run.id, new, "agent").unwrap()
    };
    let a = open("sk-proj-AAAAAAAAAAAAAAAAAAAA");
    let b = open("sk-proj-BBBBBBBBBBBBBBBBBBBB");
    assert_ne!(a.id, b.id, "two keys are two gates");
    assert_eq!(open("sk-proj-AAAAAAAAAAAAAAAAAAAA").id, a.id, "a retry finds the first");
    let stored = f.engine.gate(&a.id).unwrap().idempotency_key;
    assert_eq!(stored, Some(gatehouse_engine::redact::idempotency_digest("sk-proj-AAAAAAAAAAAAAAAAAAAA")));
}

#[test]
fn the_pending_queue_puts_sync_first_then_priority_then_age() {
    let f = Fixture::new();
    let run = f.run("agent");
    let open = |text: &str, mode, priority| {
        let mut g = NewGate::question(text);
        g.mode = mode;
        g.priority = priority;
        f.clock.advance(chrono::Duration::seconds(1));
        f.engine.open_gate(&run.id, g, "agent").unwrap()
    };
    open("async urgent", BlockingMode::Async, Priority::Urgent);
    open("sync low old", BlockingMode::Sync, Priority::Low);
    open("advisory", BlockingMode::Advisory, Priority::Urgent);
    open("sync high", BlockingMode::Sync, Priority::High);
    open("sync low new", BlockingMode::Sync, Priority::Low);
    let texts: Vec<String> = f.engine.gates(&GateFilter::pending()).unwrap().into_iter().map(|g| g.text).collect();
    assert_eq!(texts, ["sync high", "sync low old", "sync low new", "async urgent", "advisory"]);
    let only_async = GateFilter { mode: Some(BlockingMode::Async), ..GateFilter::pending() };
    assert_eq!(f.engine.count_gates(&only_async).unwrap(), 1);
}

#[test]
fn an_edit_records_the_diff_against_the_agents_original_and_can_be_undone() {
    let f = Fixture::new();
    let run = f.run("agent");
    let original = json!({"prompt": "a cat", "steps": 20});
    let gate =
        f.engine.open_gate(&run.id, NewGate::approval("generate", "Generate?", original.clone()), "agent").unwrap();
    let edited = json!({"prompt": "a cat in a hat", "steps": 30});
    let decided = f.engine.resolve_gate(&gate.id, DecisionInput::edit(edited.clone()), "alice").unwrap();
    let d = decided.decision.unwrap();
    let diff = d.diff.clone().expect("diff");
    assert_eq!(diff.changes.len(), 2);
    assert_eq!(diff.undo(&edited), original);
    assert_eq!(d.payload, Some(edited));
    assert_eq!(d.decision_type(), gatehouse_engine::policy::DecisionType::HumanEdited);
}

#[test]
fn decisions_a_gate_does_not_offer_are_refused_and_change_nothing() {
    let f = Fixture::new();
    let run = f.run("agent");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Which region?"), "agent").unwrap();
    let err = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap_err();
    assert!(matches!(err, EngineError::ActionNotAllowed { .. }), "{err:?}");
    let err = f.engine.resolve_gate(&gate.id, DecisionInput::respond("  "), "alice").unwrap_err();
    assert!(err.to_string().starts_with("text:"), "{err}");
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending);
    let unknown = f.engine.resolve_gate(&"gate_nope".into(), DecisionInput::approve(), "alice").unwrap_err();
    assert!(matches!(unknown, EngineError::NotFound { what: "gate", .. }));
}

#[test]
fn auto_policy_passes_approvals_at_once_and_records_the_reason() {
    let f = Fixture::new();
    let hitl = HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() };
    let run = f.run_with(NewRun { agent: "a".into(), hitl_config: hitl, ..NewRun::default() });
    let gate = f.engine.open_gate(&run.id, NewGate::approval("x", "Do x?", json!({})), "a").unwrap();
    assert_eq!(gate.status, GateStatus::Resolved);
    let d = gate.decision.unwrap();
    assert!(matches!(d.origin, DecisionOrigin::Auto { ref reason } if reason.contains("auto")), "{:?}", d.origin);
    assert_eq!(d.decision_type(), gatehouse_engine::policy::DecisionType::AutoApproved);
    // A question never auto-passes, and neither does a gate that requires a human.
    let q = f.engine.open_gate(&run.id, NewGate::question("Why?"), "a").unwrap();
    assert_eq!(q.status, GateStatus::Pending);
    let mut strict = NewGate::approval("y", "Do y?", json!({}));
    strict.requires_human = true;
    assert_eq!(f.engine.open_gate(&run.id, strict, "a").unwrap().status, GateStatus::Pending);
}

#[test]
fn thresholds_hold_low_confidence_flagged_or_heavily_changed_payloads() {
    let f = Fixture::new();
    let hitl = HitlConfig {
        run_policy: RunPolicy::AutoWithThresholds,
        review_thresholds: Some(ReviewThresholds {
            confidence_min: Some(0.8),
            safety_flags: vec!["nsfw".into(), "pii".into()],
            payload_changes_max: Some(1),
        }),
        ..HitlConfig::default()
    };
    let run = f.run_with(NewRun { agent: "a".into(), hitl_config: hitl, ..NewRun::default() });
    let info = |confidence: f64, flags: Vec<String>| {
        NewGate::new(
            GateSpec::InformationReview {
                confidence: Some(confidence),
                reasons: vec![],
                safety_flags: flags,
                recommended_settings: json!({}),
            },
            "Model choice",
        )
    };
    assert_eq!(f.engine.open_gate(&run.id, info(0.95, vec![]), "a").unwrap().status, GateStatus::Resolved);
    assert_eq!(f.engine.open_gate(&run.id, info(0.5, vec![]), "a").unwrap().status, GateStatus::Pending);
    assert_eq!(f.engine.open_gate(&run.id, info(0.95, vec!["PII".into()]), "a").unwrap().status, GateStatus::Pending);
    let mut payload = NewGate::new(
        GateSpec::PayloadReview { validation: vec![], suggestions: vec![], required_fields: vec![] },
        "Payload",
    );
    payload.example_input = Some(json!({"a": 1, "b": 2}));
    payload.payload = Some(json!({"a": 5, "b": 6}));
    assert_eq!(f.engine.open_gate(&run.id, payload, "a").unwrap().status, GateStatus::Pending);

    // Other kinds pass a confidence threshold only with a reported confidence.
    let mut approval = NewGate::approval("post", "Post the summary?", json!({}));
    assert_eq!(f.engine.open_gate(&run.id, approval.clone(), "a").unwrap().status, GateStatus::Pending);
    approval.confidence = Some(0.9);
    assert_eq!(f.engine.open_gate(&run.id, approval.clone(), "a").unwrap().status, GateStatus::Resolved);
    approval.safety_flags = vec!["nsfw".into()];
    assert_eq!(f.engine.open_gate(&run.id, approval, "a").unwrap().status, GateStatus::Pending);
}

#[test]
fn a_quorum_gate_needs_distinct_approvals_and_any_rejection_rejects() {
    let f = Fixture::new();
    let run = f.run("a");
    let mut new = NewGate::approval("migrate", "Run the migration?", json!({}));
    new.quorum = Some(Quorum { required: 2, rejections_to_reject: 1 });
    let gate = f.engine.open_gate(&run.id, new.clone(), "a").unwrap();
    let after_one = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    assert_eq!((after_one.status, after_one.votes.len()), (GateStatus::Pending, 1));
    let twice = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap_err();
    assert!(matches!(twice, EngineError::AlreadyVoted { .. }));
    let done = f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "bob").unwrap();
    assert_eq!(done.status, GateStatus::Resolved);
    assert_eq!(done.decision.unwrap().action, DecisionAction::Approve);

    let gate = f.engine.open_gate(&run.id, new, "a").unwrap();
    f.engine.resolve_gate(&gate.id, DecisionInput::approve(), "alice").unwrap();
    let rejected = f.engine.resolve_gate(&gate.id, DecisionInput::reject("not on a Friday"), "carol").unwrap();
    let d = rejected.decision.unwrap();
    assert_eq!(d.action, DecisionAction::Reject);
    assert!(d.text.unwrap().contains("alice, carol"));
}

#[test]
fn ending_a_run_cancels_its_pending_gates_and_refuses_new_ones() {
    let f = Fixture::new();
    let run = f.run("a");
    let gate = f.engine.open_gate(&run.id, NewGate::question("?"), "a").unwrap();
    f.engine.cancel_run(&run.id, "alice", Some("wrong branch")).unwrap();
    let g = f.engine.gate(&gate.id).unwrap();
    assert_eq!(g.status, GateStatus::Cancelled);
    assert!(g.status_reason.unwrap().contains("cancelled"));
    let err = f.engine.open_gate(&run.id, NewGate::question("again?"), "a").unwrap_err();
    assert!(matches!(err, EngineError::RunEnded { status: RunStatus::Cancelled, .. }), "{err:?}");
}

#[test]
fn pausing_a_waiting_run_and_resuming_returns_it_to_waiting() {
    let f = Fixture::new();
    let run = f.run("a");
    f.engine.open_gate(&run.id, NewGate::question("?"), "a").unwrap();
    assert_eq!(f.engine.pause_run(&run.id, "alice").unwrap().status, RunStatus::Paused);
    assert_eq!(f.engine.resume_run(&run.id, "alice").unwrap().status, RunStatus::AwaitingHuman);
    let err = f.engine.start_run(&run.id, "alice").unwrap_err();
    assert!(matches!(err, EngineError::RunTransition(_)));
}

#[test]
fn every_kind_of_gate_opens_with_its_default_actions() {
    let f = Fixture::new();
    let run = f.run("a");
    let specs = vec![
        GateSpec::Approval { action: "deploy".into() },
        GateSpec::PayloadReview {
            validation: vec!["missing prompt".into()],
            suggestions: vec![],
            required_fields: vec!["prompt".into()],
        },
        GateSpec::Question {},
        GateSpec::InformationReview {
            confidence: Some(0.4),
            reasons: vec![],
            safety_flags: vec![],
            recommended_settings: json!({}),
        },
        GateSpec::ResponseReview { raw: "RAW".into(), audited: "clean".into(), indicators: vec![] },
        GateSpec::QualityScore { deliverable_id: "doc-1".into(), required_score: 3.5, rubric: vec!["clarity".into()] },
        GateSpec::GoalReview { goal: json!("Build a CLI"), round: 1 },
        GateSpec::PlanReview { plan_revision: None, round: 1 },
    ];
    for spec in specs {
        let kind = spec.kind();
        let gate = f.engine.open_gate(&run.id, NewGate::new(spec, "Review"), "a").unwrap();
        assert_eq!(gate.kind(), kind);
        assert_eq!(gate.allowed_actions, kind.default_actions());
    }
    let kinds: std::collections::HashSet<GateKind> =
        f.engine.gates(&GateFilter::pending()).unwrap().iter().map(|g| g.kind()).collect();
    assert_eq!(kinds.len(), GateKind::ALL.len());
}

#[test]
fn secrets_are_redacted_before_a_payload_is_stored() {
    let f = Fixture::new();
    let run = f.run("a");
    let payload = json!({"api_key": "sk-live-0123456789abcdefghij", "header": "Bearer abc.def.ghi", "n": 1});
    let gate = f.engine.open_gate(&run.id, NewGate::approval("call", "Call the API?", payload), "a").unwrap();
    let stored = serde_json::to_string(&f.engine.gate(&gate.id).unwrap()).unwrap();
    assert!(!stored.contains("sk-live-0123456789abcdefghij"), "{stored}");
    assert!(!stored.contains("abc.def.ghi"), "{stored}");
    assert!(stored.contains("[REDACTED]"));
}

#[test]
fn modifying_a_plan_under_review_makes_the_edited_plan_the_runs_plan() {
    let f = Fixture::new();
    let run = f.run("planner");
    let review = |f: &Fixture| {
        let gate = NewGate::new(GateSpec::PlanReview { plan_revision: None, round: 1 }, "Review the plan");
        f.engine.open_gate(&run.id, gate, "planner").unwrap()
    };
    // A cycle is refused naming the problem; the gate stays pending and the run has no plan.
    let gate = review(&f);
    let cyclic = json!({"tasks": [
        {"task_id": "a", "description": "A", "dependencies": ["b"]},
        {"task_id": "b", "description": "B", "dependencies": ["a"]}]});
    let err = f.engine.resolve_gate(&gate.id, DecisionInput::edit(cyclic), "alice").unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending);
    assert!(f.engine.plan(&run.id).unwrap().is_none());
    let err =
        f.engine.resolve_gate(&gate.id, DecisionInput::edit(json!({"tasks": "all of them"})), "alice").unwrap_err();
    assert!(matches!(&err, EngineError::Invalid { field, .. } if field == "payload"), "{err:?}");

    let plan = json!({"tasks": [
        {"task_id": "build", "description": "Build"},
        {"task_id": "ship", "description": "Ship", "dependencies": ["build"]}]});
    f.engine.resolve_gate(&gate.id, DecisionInput::edit(plan), "alice").unwrap();
    let current = f.engine.plan(&run.id).unwrap().expect("the edited plan is the run's plan");
    let ids: Vec<&str> = current.plan.tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["build", "ship"]);
    assert_eq!(current.actor, "alice");
}

#[test]
fn a_score_given_with_a_decision_is_attributed_to_the_decider() {
    let f = Fixture::new();
    let run = f.run("writer");
    let gate = NewGate::new(
        GateSpec::QualityScore { deliverable_id: "draft".into(), required_score: 3.0, rubric: vec![] },
        "Score the draft",
    );
    let gate = f.engine.open_gate(&run.id, gate, "writer").unwrap();
    let mut input = DecisionInput::new(DecisionAction::Approve);
    let mut score: gatehouse_engine::scoring::QualityScore =
        serde_json::from_value(json!({"score": 4.0, "scorer": "mallory", "at": "2001-01-01T00:00:00Z"})).unwrap();
    let bare: gatehouse_engine::scoring::QualityScore = serde_json::from_value(json!({"score": 2.5})).unwrap();
    assert_eq!(bare.scorer, "", "scorer and time may be left to the server");
    score.justification = "clear".into();
    input.score = Some(score);
    let decided = f.engine.resolve_gate(&gate.id, input, "alice").unwrap();
    let recorded = decided.decision.unwrap().score.unwrap();
    assert_eq!(recorded.scorer, "alice");
    assert_eq!(recorded.at, f.engine.now());
}

/// What `open_gate_then` hands its `done`, waited for here.
fn open_checked(
    f: &Fixture,
    run: &gatehouse_engine::RunId,
    access: impl FnOnce(&gatehouse_engine::RunAccess<'_>) -> Result<(), EngineError> + Send + 'static,
) -> Result<gatehouse_engine::Gate, EngineError> {
    let (reply, answer) = std::sync::mpsc::channel();
    f.engine.open_gate_then(run, NewGate::question("Ship it?"), "coder", access, move |gate| {
        reply.send(gate).unwrap();
    });
    answer.recv().expect("done is called once")
}

#[test]
fn an_access_check_sees_the_run_and_its_chain_in_the_gates_write_and_a_refusal_stores_nothing() {
    let f = Fixture::new();
    let parent = f.run("lead");
    let child =
        f.run_with(NewRun { agent: "coder".into(), parent_run_id: Some(parent.id.clone()), ..NewRun::default() });
    let refused = open_checked(&f, &child.id, |_| Err(EngineError::invalid("token", "refused by the check")));
    assert_eq!(refused.unwrap_err().to_string(), "token: refused by the check");
    assert!(f
        .engine
        .gates(&GateFilter { run_id: Some(child.id.clone()), ..GateFilter::default() })
        .unwrap()
        .is_empty());
    assert_eq!(f.engine.run(&child.id).unwrap().status, RunStatus::Created, "the refused open did not start the run");

    let (parent_id, child_id) = (parent.id.clone(), child.id.clone());
    let gate = open_checked(&f, &child.id, move |access| {
        assert_eq!(access.run()?.id, child_id);
        let chain: Vec<_> = access.chain()?.into_iter().map(|run| run.id).collect();
        assert_eq!(chain, [parent_id, child_id], "outermost first");
        Ok(())
    })
    .unwrap();
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending);
    assert_eq!(f.engine.run(&child.id).unwrap().status, RunStatus::AwaitingHuman);
    let missing = open_checked(&f, &gatehouse_engine::RunId::from_string("run_nope"), |_| Ok(()));
    assert!(matches!(missing, Err(EngineError::NotFound { what: "run", .. })), "{missing:?}");
}

/// Resolves `gate` as `alice` through [`Engine::resolve_gate_then`] with `access` as the caller's check.
fn resolve_checked(
    f: &Fixture,
    gate: &gatehouse_engine::GateId,
    input: DecisionInput,
    access: impl FnOnce(&gatehouse_engine::Gate, &gatehouse_engine::RunAccess<'_>) -> Result<(), EngineError>
        + Send
        + 'static,
) -> Result<gatehouse_engine::Gate, EngineError> {
    let (reply, answer) = std::sync::mpsc::channel();
    let alice = gatehouse_engine::gate::Decider::new("alice", [] as [&str; 0]);
    f.engine.resolve_gate_then(gate, input, &alice, access, move |gate| {
        reply.send(gate).unwrap();
    });
    answer.recv().expect("done is called once")
}

#[test]
fn a_deciders_access_check_sees_the_gate_and_its_run_in_the_decisions_write_and_a_refusal_stores_nothing() {
    let f = Fixture::new();
    let run = f.run("coder");
    let gate = f.engine.open_gate(&run.id, NewGate::question("Ship it?"), "coder").unwrap();
    let events_before = f.engine.events_after(0, &Default::default(), 1000).unwrap().len();

    // A refusal is the answer; the gate stays pending and nothing is logged,
    // not even the refused attempt (the caller may not see the gate at all).
    let refused = resolve_checked(&f, &gate.id, DecisionInput::respond("yes"), |_, _| {
        Err(EngineError::invalid("token", "refused by the check"))
    });
    assert_eq!(refused.unwrap_err().to_string(), "token: refused by the check");
    assert_eq!(f.engine.gate(&gate.id).unwrap().status, GateStatus::Pending);
    assert_eq!(f.engine.events_after(0, &Default::default(), 1000).unwrap().len(), events_before);

    // The check sees the gate and, when it asks, its run; then the decision is made.
    let (gate_id, run_id) = (gate.id.clone(), run.id.clone());
    let decided = resolve_checked(&f, &gate.id, DecisionInput::respond("yes"), move |seen, access| {
        assert_eq!(seen.id, gate_id);
        assert_eq!(access.id(), &run_id);
        assert_eq!(access.run()?.agent, "coder");
        Ok(())
    })
    .unwrap();
    assert_eq!(decided.status, GateStatus::Resolved);

    // On a closed gate the check still comes first: a refused caller hears
    // its refusal, not who decided.
    let again = resolve_checked(&f, &gate.id, DecisionInput::respond("no"), |_, _| {
        Err(EngineError::invalid("token", "refused by the check"))
    });
    assert_eq!(again.unwrap_err().to_string(), "token: refused by the check");
    let missing =
        resolve_checked(&f, &gatehouse_engine::GateId::from_string("gate_nope"), DecisionInput::approve(), |_, _| {
            Ok(())
        });
    assert!(matches!(missing, Err(EngineError::NotFound { what: "gate", .. })), "{missing:?}");
}

#[test]
fn a_gate_this_engine_decided_is_kept_for_its_decisions_event_once_and_as_stored() {
    // A waiter woken by `GateResolved` is answered with this gate instead of
    // reading it back: it must be the gate exactly as a read returns it.
    let f = Fixture::new();
    let run = f.run("agent");
    let mut events = f.engine.live_events();
    let gate = f.engine.open_gate(&run.id, NewGate::question("Ship it?"), "agent").unwrap();
    let decided = f.engine.resolve_gate(&gate.id, DecisionInput::respond("Yes, ship it"), "alice").unwrap();
    let decision = loop {
        let event = events.try_recv().expect("the decision's event is published before resolve returns");
        if let EventKind::GateResolved { decision, .. } = &event.body.kind {
            break decision.clone();
        }
    };
    let kept = f.engine.closed_by(&decision.id).expect("the gate this engine decided");
    assert_eq!(*kept, f.engine.gate(&gate.id).unwrap(), "the gate as stored");
    assert_eq!(*kept, decided);
    assert!(f.engine.closed_by(&decision.id).is_none(), "taken once");

    // An edited approval (the diff, the edited payload, numbers) too.
    let payload = json!({"service": "billing", "replicas": 3, "ratio": 0.125, "tags": ["a", "b"]});
    let approval =
        f.engine.open_gate(&run.id, NewGate::approval("deploy", "Deploy billing?", payload), "agent").unwrap();
    let edit = json!({"service": "billing", "replicas": 2, "ratio": 0.25, "tags": ["a"]});
    let edited = f.engine.resolve_gate(&approval.id, DecisionInput::edit(edit), "alice").unwrap();
    let kept = f.engine.closed_by(&edited.decision.clone().expect("decided").id).expect("kept");
    assert_eq!(*kept, f.engine.gate(&approval.id).unwrap());

    // A decision another engine made (another instance, the CLI) is not kept here.
    let other = f.open_again();
    let second = f.engine.open_gate(&run.id, NewGate::question("And this one?"), "agent").unwrap();
    let elsewhere = other.resolve_gate(&second.id, DecisionInput::respond("No"), "bob").unwrap();
    let id = elsewhere.decision.expect("decided").id;
    assert!(f.engine.closed_by(&id).is_none());
    assert!(other.closed_by(&id).is_some());
}
