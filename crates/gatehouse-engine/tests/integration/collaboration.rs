//! The collaborative state around gates: turns under the handoff
//! protocol, shared context with history, plans with revisions, progress,
//! quality scoring, ratings, and the resumable event stream.

use crate::common;

use std::time::Duration;

use common::Fixture;
use gatehouse_engine::decision::DecisionAction;
use gatehouse_engine::gate::GateSpec;
use gatehouse_engine::plan::{Plan, PlanOperation, TaskStatus};
use gatehouse_engine::run::HandoffProtocol;
use gatehouse_engine::scoring::{QualityScore, ScoreVerdict};
use gatehouse_engine::store::EventFilter;
use gatehouse_engine::{DecisionInput, EngineError, GateStatus, NewGate, NewRun, NewTurn, Role};
use serde_json::json;

#[test]
fn the_handoff_protocol_requires_a_human_after_max_agent_turns() {
    let f = Fixture::new();
    let protocol = HandoffProtocol { max_consecutive_agent_turns: Some(2), auto_approve_threshold: None };
    let run = f.run_with(NewRun { agent: "writer".into(), protocol, ..NewRun::default() });
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 1"), "writer").unwrap();
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 2"), "writer").unwrap();
    let err = f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 3"), "writer").unwrap_err();
    assert!(matches!(err, EngineError::HandoffRequired { turns: 2, .. }), "{err:?}");
    f.engine.add_turn(&run.id, NewTurn::new(Role::Human, "tighten the intro"), "alice").unwrap();
    let t = f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 3"), "writer").unwrap();
    assert_eq!(t.index, 4);
    assert_eq!(f.engine.turns(&run.id).unwrap().len(), 4);
}

#[test]
fn a_persons_decision_ends_the_agents_run_of_turns_whether_or_not_it_sends_the_run_back_to_work() {
    let f = Fixture::new();
    let protocol = HandoffProtocol { max_consecutive_agent_turns: Some(2), auto_approve_threshold: None };
    let run = f.run_with(NewRun { agent: "writer".into(), protocol, ..NewRun::default() });
    let two_turns = || {
        for n in 1..=2 {
            f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, format!("draft {n}")), "writer").unwrap();
        }
        let err = f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 3"), "writer").unwrap_err();
        assert!(matches!(err, EngineError::HandoffRequired { turns: 2, .. }), "{err:?}");
    };
    // A sync gate: the decision sends the run back to work and ends the turns, stored together.
    two_turns();
    let sync = f.engine.open_gate(&run.id, NewGate::question("Which intro?"), "writer").unwrap();
    assert_eq!(f.engine.run(&run.id).unwrap().status, gatehouse_engine::RunStatus::AwaitingHuman);
    let decided = f.engine.resolve_gate(&sync.id, DecisionInput::respond("the short one"), "alice").unwrap();
    let after = f.engine.run(&run.id).unwrap();
    assert_eq!(after.status, gatehouse_engine::RunStatus::Active);
    assert_eq!(after.consecutive_agent_turns, 0, "the decision ended the agent's turns");
    assert_eq!(Some(after.updated_at), decided.closed_at);
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 3"), "writer").unwrap();
    // An async gate: no status to change, the turns end all the same.
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 4"), "writer").unwrap();
    let new = NewGate { mode: gatehouse_engine::BlockingMode::Async, ..NewGate::question("Publish?") };
    let later = f.engine.open_gate(&run.id, new, "writer").unwrap();
    f.engine.resolve_gate(&later.id, DecisionInput::respond("yes"), "alice").unwrap();
    let after = f.engine.run(&run.id).unwrap();
    assert_eq!((after.status, after.consecutive_agent_turns), (gatehouse_engine::RunStatus::Active, 0));
    f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, "draft 5"), "writer").unwrap();
}

#[test]
fn shared_context_keeps_every_set_and_delete_with_actor_and_old_value() {
    let f = Fixture::new();
    let run = f.run("agent-BC");
    f.engine.context_set(&run.id, "objective", json!("Evaluate data pipeline design"), "human-alice").unwrap();
    let old =
        f.engine.context_set(&run.id, "objective", json!("Evaluate and optimize data pipeline"), "agent-BC").unwrap();
    assert_eq!(old, Some(json!("Evaluate data pipeline design")));
    f.engine.context_delete(&run.id, "objective", "human-alice").unwrap();
    assert!(f.engine.context(&run.id).unwrap().is_empty());
    let history = f.engine.context_history(&run.id).unwrap();
    let summary: Vec<_> = history.iter().map(|c| (c.actor.as_str(), c.old.is_some(), c.new.is_some())).collect();
    assert_eq!(summary, [("human-alice", false, true), ("agent-BC", true, true), ("human-alice", true, false)]);
    let missing = f.engine.context_delete(&run.id, "objective", "x").unwrap_err();
    assert!(matches!(missing, EngineError::NotFound { what: "context key", .. }));
}

#[test]
fn the_turns_after_an_index_are_the_later_ones_in_order() {
    let f = Fixture::new();
    let run = f.run("writer");
    for n in 1..=5 {
        f.engine.add_turn(&run.id, NewTurn::new(Role::Agent, format!("draft {n}")), "writer").unwrap();
    }
    let after = |i| f.engine.turns_after(&run.id, i).unwrap().iter().map(|t| t.index).collect::<Vec<_>>();
    assert_eq!(after(0), [1, 2, 3, 4, 5]);
    assert_eq!(after(3), [4, 5]);
    assert_eq!(after(5), Vec::<u32>::new());
    assert_eq!(f.engine.turns_after(&run.id, 3).unwrap()[0].content, "draft 4");
}

#[test]
fn one_context_key_or_the_keys_under_a_prefix_are_read_without_the_rest() {
    let f = Fixture::new();
    let run = f.run("agent");
    for key in ["memory:run:a", "memory:team:b", "memory;", "memorx", "snapshot:handoff:1", "mémoire:c", "m"] {
        f.engine.context_set(&run.id, key, json!(key), "agent").unwrap();
    }
    assert_eq!(f.engine.context_value(&run.id, "memory:team:b").unwrap(), Some(json!("memory:team:b")));
    assert_eq!(f.engine.context_value(&run.id, "memory:team").unwrap(), None);
    let keys = |prefix| f.engine.context_prefixed(&run.id, prefix).unwrap().into_keys().collect::<Vec<_>>();
    assert_eq!(keys("memory:"), ["memory:run:a", "memory:team:b"]);
    assert_eq!(keys("memory:run:"), ["memory:run:a"]);
    assert_eq!(keys("mé"), ["mémoire:c"]);
    assert_eq!(keys("nothing"), Vec::<String>::new());
    // A set reads the old value alone and still reports it.
    let old = f.engine.context_set(&run.id, "memory:run:a", json!(2), "agent").unwrap();
    assert_eq!(old, Some(json!("memory:run:a")));
    let unknown = f.engine.context_value(&gatehouse_engine::RunId::from_string("run_missing"), "k");
    assert!(matches!(unknown, Err(EngineError::NotFound { what: "run", .. })), "{unknown:?}");
}

#[test]
fn an_attempt_settled_after_a_reviewer_restarted_its_task_writes_nothing() {
    let f = Fixture::new();
    let run = f.run("lead");
    let seed: Plan = serde_json::from_value(json!({
        "tasks": [{"task_id": "build", "description": "Build", "status": "in_progress", "dependencies": []}]
    }))
    .unwrap();
    f.engine.plan_apply(&run.id, PlanOperation::Replace { plan: seed }, "lead").unwrap();
    let done = || PlanOperation::UpdateTask {
        task_id: "build".into(),
        status: Some(TaskStatus::Completed),
        metadata: Default::default(),
    };
    // A reviewer restarts the task while its first attempt (0) is under way.
    f.engine.plan_restart_task(&run.id, "build", None, "alice").unwrap();
    let revisions = f.engine.plan_revisions(&run.id).unwrap().len();
    assert_eq!(f.engine.plan_apply_at_attempt(&run.id, "build", 0, done(), "driver").unwrap(), None);
    assert_eq!(f.engine.plan_revisions(&run.id).unwrap().len(), revisions, "nothing written");
    let task = f.engine.plan(&run.id).unwrap().unwrap().plan.task("build").cloned().unwrap();
    assert_eq!((task.status, task.metadata["attempt"].as_u64()), (TaskStatus::Pending, Some(1)));
    // The attempt the restart started settles.
    let settled = f.engine.plan_apply_at_attempt(&run.id, "build", 1, done(), "driver").unwrap();
    assert_eq!(settled.map(|r| r.plan.task("build").unwrap().status), Some(TaskStatus::Completed));
    // An unknown task settles nothing either.
    assert_eq!(f.engine.plan_apply_at_attempt(&run.id, "nope", 0, done(), "driver").unwrap(), None);
}

#[test]
fn plan_revisions_keep_a_change_log_and_reject_cycles_without_storing_them() {
    let f = Fixture::new();
    let run = f.run("lead");
    let seed: Plan = serde_json::from_value(json!({
        "tasks": [
            {"task_id": "task_001", "description": "Analyze", "status": "completed", "dependencies": []},
            {"task_id": "task_002", "description": "Write app.py", "status": "in_progress", "dependencies": ["task_001"]},
            {"task_id": "task_003", "description": "Test app.py", "dependencies": ["task_002"]}
        ]
    }))
    .unwrap();
    f.engine.plan_apply(&run.id, PlanOperation::Replace { plan: seed }, "lead").unwrap();
    let rev = f
        .engine
        .plan_apply(
            &run.id,
            PlanOperation::AssignTask { task_id: "task_003".into(), agent_name: "tester".into() },
            "alice",
        )
        .unwrap();
    assert_eq!(rev.revision, 2);
    assert!(rev.change_log.iter().any(|l| l.contains("assigned to tester")), "{:?}", rev.change_log);
    let cycle = PlanOperation::SetDependencies { task_id: "task_001".into(), dependencies: vec!["task_003".into()] };
    assert!(matches!(f.engine.plan_apply(&run.id, cycle, "lead").unwrap_err(), EngineError::Plan(_)));
    assert_eq!(f.engine.plan_revisions(&run.id).unwrap().len(), 2);
    let progress = f.engine.progress(&run.id).unwrap();
    assert_eq!((progress.total, progress.completed), (3, 1));
    let done = PlanOperation::UpdateTask {
        task_id: "task_002".into(),
        status: Some(TaskStatus::Completed),
        metadata: Default::default(),
    };
    f.engine.plan_apply(&run.id, done, "coder").unwrap();
    assert!((f.engine.progress(&run.id).unwrap().percentage() - 200.0 / 3.0).abs() < 1e-6);
}

#[test]
fn a_quality_gate_passes_at_the_required_score_and_ratings_blend_approvals_and_scores() {
    let f = Fixture::new();
    let protocol = HandoffProtocol { max_consecutive_agent_turns: None, auto_approve_threshold: Some(4.5) };
    let run = f.run_with(NewRun { agent: "critic".into(), protocol, ..NewRun::default() });
    let spec = |id: &str| GateSpec::QualityScore {
        deliverable_id: id.into(),
        required_score: 3.0,
        rubric: vec!["clarity".into()],
    };
    let gate = f.engine.open_gate(&run.id, NewGate::new(spec("doc-1"), "Score doc-1"), "critic").unwrap();
    let score = QualityScore::new("doc-1", "alice", 3.0, f.engine.now()).unwrap().with_rubric("clarity", 3.0).unwrap();
    let (decided, verdict) = f.engine.evaluate_quality_gate(&gate.id, score, Role::Human).unwrap();
    assert_eq!(verdict, ScoreVerdict::Passes, "at the boundary the score passes");
    assert_eq!(decided.decision.unwrap().action, DecisionAction::Approve);

    // An agent's self-score below the auto-approve threshold only records the score.
    let gate = f.engine.open_gate(&run.id, NewGate::new(spec("doc-2"), "Score doc-2"), "critic").unwrap();
    let low = QualityScore::new("doc-2", "critic", 4.0, f.engine.now()).unwrap();
    let (still, _) = f.engine.evaluate_quality_gate(&gate.id, low, Role::Agent).unwrap();
    assert_eq!(still.status, GateStatus::Pending);
    let high = QualityScore::new("doc-2", "critic", 4.8, f.engine.now()).unwrap();
    let (passed, _) = f.engine.evaluate_quality_gate(&gate.id, high, Role::Agent).unwrap();
    assert_eq!(passed.status, GateStatus::Resolved);

    let rating = f.engine.rating("critic").unwrap();
    assert_eq!((rating.decisions, rating.approvals, rating.scores), (1, 1, 3));
    assert!(rating.effective_rating().unwrap() > 4.0);
}

#[test]
fn a_subscriber_resumes_from_a_sequence_number_and_misses_nothing() {
    let f = Fixture::new();
    let run = f.run("agent");
    for i in 0..5 {
        f.engine.open_gate(&run.id, NewGate::question(format!("q{i}")), "agent").unwrap();
    }
    let all = f.engine.events_after(0, &EventFilter::default(), 1000).unwrap();
    let resume_from = all[3].seq;
    let mut sub = f.engine.subscribe(resume_from, EventFilter { run_id: Some(run.id.clone()), ..Default::default() });
    let writer = {
        let (engine, run_id) = (f.engine.clone(), run.id.clone());
        std::thread::spawn(move || {
            for i in 0..200 {
                let g = engine.open_gate(&run_id, NewGate::question(format!("live {i}")), "agent").unwrap();
                engine.resolve_gate(&g.id, DecisionInput::respond("ok"), "alice").unwrap();
            }
        })
    };
    writer.join().unwrap();
    let head = f.engine.head_seq().unwrap();
    let mut seen = Vec::new();
    while let Some(e) = sub.next_timeout(Duration::from_millis(200)).unwrap() {
        seen.push(e.seq);
    }
    let expected: Vec<u64> = (resume_from + 1..=head).collect();
    assert_eq!(seen, expected, "gap-free and in order");
}

#[test]
fn goal_review_refined_over_three_rounds_then_accepted() {
    let f = Fixture::new();
    let run = f.run("planner");
    for round in 1..=3 {
        let spec = GateSpec::GoalReview { goal: json!({"goal": format!("goal v{round}")}), round };
        let g = f.engine.open_gate(&run.id, NewGate::new(spec, "Review the goal"), "planner").unwrap();
        let input = DecisionInput {
            text: Some(format!("refine {round}")),
            ..DecisionInput::new(DecisionAction::NeedsRevision)
        };
        let d = f.engine.resolve_gate(&g.id, input, "alice").unwrap().decision.unwrap();
        assert_eq!(d.action, DecisionAction::NeedsRevision);
    }
    let spec = GateSpec::GoalReview { goal: json!({"goal": "goal v4"}), round: 4 };
    let g = f.engine.open_gate(&run.id, NewGate::new(spec, "Review the goal"), "planner").unwrap();
    let accept: DecisionInput = serde_json::from_value(json!({"action": "accept"})).unwrap();
    assert_eq!(
        f.engine.resolve_gate(&g.id, accept, "alice").unwrap().decision.unwrap().action,
        DecisionAction::Approve
    );
}

#[test]
fn without_a_plan_progress_counts_decided_gates_and_not_withdrawn_ones() {
    let f = Fixture::new();
    let run = f.run("coder");
    let open = |text: &str| f.engine.open_gate(&run.id, NewGate::question(text), "coder").unwrap();
    let (a, b, c) = (open("First?"), open("Second?"), open("Third?"));
    f.engine.resolve_gate(&a.id, DecisionInput::respond("yes"), "alice").unwrap();
    f.engine.cancel_gate(&b.id, "asked elsewhere", "coder").unwrap();
    let progress = f.engine.progress(&run.id).unwrap();
    assert_eq!((progress.completed, progress.total), (1, 2), "the withdrawn gate counts for neither");
    // Cancelling the run withdraws the last gate: one of one decided, not three of three.
    f.engine.cancel_run(&run.id, "alice", None).unwrap();
    assert_eq!(f.engine.gate(&c.id).unwrap().status, GateStatus::Cancelled);
    let progress = f.engine.progress(&run.id).unwrap();
    assert_eq!((progress.completed, progress.total), (1, 1));
}
