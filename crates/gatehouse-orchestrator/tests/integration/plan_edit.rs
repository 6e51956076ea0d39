//! Plan changes read and written in one transaction: a reviewer's new task
//! description against an agent's plan change committed between, and an
//! agent's change against a gate a person set after the agent read the
//! plan. The writes are lined up in the store's writer queue behind a write
//! the test holds open, so the interleaving is the same on every run.

use std::sync::mpsc;
use std::thread;

use gatehouse_engine::plan::{Plan, PlanOperation};
use gatehouse_engine::{NewRun, Store};
use gatehouse_orchestrator::plan_edit::describe_task;
use serde_json::{json, Map};

use crate::common::{until, Harness};

#[tokio::test]
async fn an_agents_plan_change_made_while_a_description_is_written_survives_it() {
    let h = Harness::new();
    let run = h.engine.create_run(NewRun { agent: "coder".into(), ..NewRun::default() }, "coder").unwrap();
    let plan: Plan = serde_json::from_value(json!({"tasks": [
        {"task_id": "build", "description": "Build it", "dependencies": []},
        {"task_id": "ship", "description": "Ship it", "dependencies": ["build"]}
    ]}))
    .unwrap();
    h.engine.plan_apply(&run.id, PlanOperation::Replace { plan }, "alice").unwrap();

    // The writer is held by a write that waits for the test's word.
    let (release, wait) = mpsc::channel::<()>();
    let (held, holding) = mpsc::channel::<()>();
    let engine = h.engine.clone();
    let holder = thread::spawn(move || {
        engine.store().write(move |_| {
            held.send(()).ok();
            wait.recv().ok();
            Ok(())
        })
    });
    holding.recv().unwrap();
    // The agent's change is queued first...
    let (engine, id) = (h.engine.clone(), run.id.clone());
    let agent = thread::spawn(move || {
        let metadata = Map::from_iter([("note".to_owned(), json!("tests pass"))]);
        let op = PlanOperation::UpdateTask { task_id: "build".into(), status: None, metadata };
        engine.plan_apply_by_agent(&id, op, "coder")
    });
    let queued = |n: u64| move |e: &gatehouse_engine::Engine| Ok(e.store_stats().filter(|s| s.writes_in_flight == n));
    until(&h.engine, queued(2)).await.expect("the agent's change is queued");
    // ...then the reviewer's description, with the plan read before the agent's change is in.
    let (engine, id) = (h.engine.clone(), run.id.clone());
    let reviewer = thread::spawn(move || describe_task(&engine, &id, "ship", "Ship it to staging".into(), "alice"));
    until(&h.engine, queued(3)).await.expect("the reviewer's description is queued");
    release.send(()).unwrap();
    holder.join().unwrap().unwrap();
    agent.join().unwrap().unwrap();
    reviewer.join().unwrap().unwrap();

    let now = h.engine.plan(&run.id).unwrap().expect("a plan").plan;
    assert_eq!(now.task("ship").unwrap().description, "Ship it to staging");
    assert_eq!(now.task("build").unwrap().metadata.get("note"), Some(&json!("tests pass")), "{now:?}");
}

#[tokio::test]
async fn a_description_of_a_task_not_in_the_plan_changes_nothing() {
    let h = Harness::new();
    let run = h.engine.create_run(NewRun { agent: "coder".into(), ..NewRun::default() }, "coder").unwrap();
    let plan: Plan =
        serde_json::from_value(json!({"tasks": [{"task_id": "build", "description": "Build it", "dependencies": []}]}))
            .unwrap();
    let first = h.engine.plan_apply(&run.id, PlanOperation::Replace { plan }, "alice").unwrap();
    let after = describe_task(&h.engine, &run.id, "gone", "Anything".into(), "alice").unwrap().unwrap();
    assert_eq!(after.revision, first.revision);
    assert_eq!(after.plan, first.plan);
}

#[tokio::test]
async fn an_agents_change_is_judged_against_a_gate_a_person_set_after_the_agent_read_the_plan() {
    let h = Harness::new();
    let run = h.engine.create_run(NewRun { agent: "coder".into(), ..NewRun::default() }, "coder").unwrap();
    let plan: Plan = serde_json::from_value(json!({"tasks": [
        {"task_id": "ship", "description": "Ship it", "dependencies": []}
    ]}))
    .unwrap();
    h.engine.plan_apply(&run.id, PlanOperation::Replace { plan: plan.clone() }, "alice").unwrap();

    let (release, wait) = mpsc::channel::<()>();
    let (held, holding) = mpsc::channel::<()>();
    let engine = h.engine.clone();
    let holder = thread::spawn(move || {
        engine.store().write(move |_| {
            held.send(()).ok();
            wait.recv().ok();
            Ok(())
        })
    });
    holding.recv().unwrap();
    // A person gates the task before deployment...
    let (engine, id) = (h.engine.clone(), run.id.clone());
    let person = thread::spawn(move || {
        let mut gated = plan;
        gated.human_intervention_points = vec!["before_deployment".into()];
        gated.tasks[0].metadata.insert("kind".into(), json!("deploy"));
        engine.plan_apply(&id, PlanOperation::Replace { plan: gated }, "alice")
    });
    let queued = |n: u64| move |e: &gatehouse_engine::Engine| Ok(e.store_stats().filter(|s| s.writes_in_flight == n));
    until(&h.engine, queued(2)).await.expect("the person's change is queued");
    // ...while the agent, which read the plan before, marks it done.
    let (engine, id) = (h.engine.clone(), run.id.clone());
    let agent = thread::spawn(move || {
        let done = PlanOperation::UpdateTask {
            task_id: "ship".into(),
            status: Some(gatehouse_engine::plan::TaskStatus::Completed),
            metadata: Map::new(),
        };
        let gated = |plan: &Plan, _: &PlanOperation| {
            let deploys = plan.task("ship").is_some_and(|t| t.metadata.get("kind") == Some(&json!("deploy")));
            (deploys && plan.human_intervention_points.iter().any(|p| p == "before_deployment"))
                .then(|| "task `ship` waits for a person before it runs".to_owned())
        };
        engine.plan_apply_by_agent_unless(&id, done, "coder", gated)
    });
    until(&h.engine, queued(3)).await.expect("the agent's change is queued");
    release.send(()).unwrap();
    holder.join().unwrap().unwrap();
    person.join().unwrap().unwrap();
    let refused = agent.join().unwrap().unwrap();
    assert_eq!(refused.unwrap_err(), "task `ship` waits for a person before it runs");
    let now = h.engine.plan(&run.id).unwrap().unwrap().plan;
    assert_eq!(now.task("ship").unwrap().status, gatehouse_engine::plan::TaskStatus::Pending);
}
