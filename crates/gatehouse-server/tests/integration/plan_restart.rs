//! Plans over HTTP beyond one model: a reviewer restarts a plan
//! collaboration run's task with `POST /runs/{id}/restart-task` and
//! `task_id` (422 naming the field for a missing or unknown task or an
//! `agent`, 409 while the run waits at a gate or has neither a team nor a
//! plan), and a team run's plan takes tasks assigned to its members only
//! (422 naming the field).

use crate::common;

use common::{until, TestServer};
use serde_json::{json, Value};

fn pending_kind(status: &Value, kind: &str) -> Option<String> {
    let pending = status["pending_actions"].as_array()?;
    pending.iter().find(|g| g["kind"] == kind).map(|g| g["id"].as_str().unwrap().to_owned())
}

fn task<'a>(plan: &'a Value, id: &str) -> &'a Value {
    let tasks = plan["plan"]["plan"]["tasks"].as_array().unwrap();
    tasks.iter().find(|t| t["task_id"] == id).unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reviewer_restarts_a_plan_task_which_runs_again() {
    let s = TestServer::start().await;
    let input = json!({"tool": "scripted:chat", "prompt": "Launch the beta", "collaborate": {"goal": false}});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    let path = format!("/runs/{run}/restart-task");
    let st = until(&s, &format!("/run/{run}/status"), |b| pending_kind(b, "plan_review").is_some()).await;
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "task_001"})).await;
    assert_eq!(status, 409, "decided at the gate first: {body}");
    assert!(body["message"].as_str().unwrap().contains("decide it there"), "{body}");

    // Paused, the plan approved: the run stops before its first task's model call.
    assert_eq!(s.post(&format!("/run/{run}/pause"), &s.reviewer, json!({})).await.0, 200);
    let gate = pending_kind(&st, "plan_review").unwrap();
    let approve = json!({"approval_id": gate, "action": "approve"});
    assert_eq!(s.post(&format!("/run/{run}/approve"), &s.reviewer, approve).await.0, 200);
    let plan_path = format!("/runs/{run}/plan");
    until(&s, &plan_path, |p| task(p, "task_001")["status"] == "in_progress").await;

    let (status, body) = s.post(&path, &s.agent, json!({"task_id": "task_001"})).await;
    assert_eq!(status, 403, "never the agent's own call: {body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("task_id")), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "task_009"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("task_id")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("the tasks are task_001, task_002, task_003"), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "task_001", "agent": "coder"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent")), "{body}");

    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "task_001", "instruction": "be brief"})).await;
    assert_eq!(status, 200, "{body}");
    let first = &body["plan"]["tasks"][0];
    assert_eq!((first["status"].as_str(), first["metadata"]["attempt"].as_u64()), (Some("pending"), Some(1)), "{body}");
    assert_eq!(first["metadata"]["feedback"], "be brief");
    assert!(body["change_log"].to_string().contains("task_001: status in_progress -> pending"), "{body}");

    assert_eq!(s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await.0, 200);
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "completed").await;
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    let turns = state["turns"].to_string();
    assert!(turns.contains("restarted task `task_001`"), "the reviewer's restart is on the timeline: {turns}");
    assert!(turns.contains("its answer is dropped and it runs again"), "{turns}");
    let (_, plan) = s.get(&plan_path, &s.reviewer).await;
    assert_eq!(task(&plan, "task_001")["status"], "completed", "{plan}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "task_001"})).await;
    assert_eq!(status, 409, "an ended run restarts nothing: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_runs_plan_takes_its_members_only_and_a_plain_run_has_no_task_to_restart() {
    let s = TestServer::start().await;
    let member = |name: &str, tools: &[&str]| json!({"name": name, "role": name, "provider": "scripted", "model": "chat", "tools": tools});
    let ghost = json!({"prompt": "Ship", "team": [member("coder", &[])],
        "plan": {"tasks": [{"task_id": "t1", "description": "Build", "assigned_agent": "ghost"}]}});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": ghost})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("run_input.plan.tasks[0].assigned_agent")), "{body}");

    let input = json!({"prompt": "Ship", "team": [member("coder", &[]), member("deployer", &[])],
        "plan": {"human_intervention_points": ["before_deployment"], "tasks": [
            {"task_id": "t1", "description": "Deploy it", "assigned_agent": "coder"}]}});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": input})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "awaiting_human").await;
    let plan_path = format!("/runs/{run}/plan");
    let ghost = json!({"op": "assign_task", "task_id": "t1", "agent_name": "ghost"});
    let (status, body) = s.post(&plan_path, &s.reviewer, ghost).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent_name")), "{body}");
    assert!(body["message"].as_str().unwrap().contains("the agents are coder, deployer"), "{body}");
    let added = json!({"op": "add_task", "description": "Check it", "assigned_agent": "nobody"});
    let (status, body) = s.post(&plan_path, &s.reviewer, added).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("assigned_agent")), "{body}");
    let fine = json!({"op": "assign_task", "task_id": "t1", "agent_name": "deployer"});
    let (status, body) = s.post(&plan_path, &s.reviewer, fine).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = s.post(&format!("/runs/{run}/restart-task"), &s.reviewer, json!({"task_id": "t1"})).await;
    assert_eq!(status, 409, "it waits at the deployment's gate: {body}");

    let plain = json!({"tool": "scripted:chat", "prompt": "Say hi"});
    let (status, body) = s.post("/run", &s.reviewer, json!({"run_input": plain})).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap();
    let (status, body) = s.post(&format!("/runs/{run}/restart-task"), &s.reviewer, json!({"task_id": "t1"})).await;
    assert_eq!(status, 409, "{body}");
    assert!(body["message"].as_str().unwrap().contains("neither a team nor a plan"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarting_a_team_runs_plan_task_sends_its_agent_back() {
    let s = TestServer::start().await;
    let member = |name: &str| json!({"name": name, "role": name, "provider": "scripted", "model": "chat"});
    let input = json!({"prompt": "Add a logout button", "team": [member("coder"), member("tester")],
        "plan": {"tasks": [{"task_id": "t1", "description": "Write it", "assigned_agent": "coder"},
                           {"task_id": "t2", "description": "Test it", "assigned_agent": "tester", "dependencies": ["t1"]}]}});
    let start = json!({"run_input": input, "step_mode": "breakpoint",
        "breakpoints": [{"on": "step", "name": "agent_turn"}]});
    let (status, body) = s.post("/run", &s.reviewer, start).await;
    assert_eq!(status, 201, "{body}");
    let run = body["run_id"].as_str().unwrap().to_owned();
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "paused").await;
    let path = format!("/runs/{run}/restart-task");
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "t3"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("task_id")), "{body}");
    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "t1", "agent": "tester"})).await;
    assert_eq!((status, body["field"].as_str()), (422, Some("agent")), "{body}");

    let (status, body) = s.post(&path, &s.reviewer, json!({"task_id": "t1", "instruction": "smaller"})).await;
    assert_eq!(status, 200, "{body}");
    assert!(body["agents"].is_array(), "the team comes back: {body}");
    let (_, plan) = s.get(&format!("/runs/{run}/plan"), &s.reviewer).await;
    let t1 = task(&plan, "t1");
    assert_eq!((t1["status"].as_str(), t1["metadata"]["attempt"].as_u64()), (Some("pending"), Some(1)), "{plan}");
    let (_, state) = s.get(&format!("/run/{run}/state"), &s.reviewer).await;
    assert!(state["turns"].to_string().contains("sent **coder** back to redo its turn: smaller"), "{state}");

    // Going on, the coder redoes its task, which completes at its handoff; the tester's follows.
    let control = json!({"step_mode": "continuous"});
    let (status, body) =
        s.call(reqwest::Method::PUT, &format!("/runs/{run}/control"), &s.reviewer, Some(control)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(s.post(&format!("/run/{run}/resume"), &s.reviewer, json!({})).await.0, 200);
    until(&s, &format!("/run/{run}/status"), |b| b["status"] == "awaiting_human").await;
    let (_, plan) = s.get(&format!("/runs/{run}/plan"), &s.reviewer).await;
    let t1 = task(&plan, "t1");
    assert_eq!((t1["status"].as_str(), t1["metadata"]["attempt"].as_u64()), (Some("completed"), Some(1)), "{plan}");
    assert_eq!(task(&plan, "t2")["status"], "completed", "{plan}");
}
