//! The plan tools over MCP: read the run's plan, change it one
//! operation at a time (the change is recorded at once, as the plan API
//! does), or propose a whole plan for the reviewer to approve, modify or
//! send back (a plan-review gate; a reviewer's edit becomes the plan).

use gatehouse_engine::plan::{PlanOperation, PlanRevision, TaskPriority};
use gatehouse_engine::{NewGate, RunId};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, RoleServer};
use serde_json::json;

use crate::args::{
    AddTaskArgs, AssignTaskArgs, EstimateDurationArgs, ProposePlanArgs, RunArg, SetDependenciesArgs, UpdateTaskArgs,
};
use crate::backend::{Backend, BackendError};
use crate::outcome::{answer, bad_arguments, Outcome};
use crate::server::{input_schema, parse, settle, GatehouseMcp};

macro_rules! arguments {
    ($tool:literal, $args:expr) => {
        match parse($tool, $args) {
            Ok(args) => args,
            Err(result) => return *result,
        }
    };
}

/// The answer to a plan change: the new revision and what changed.
fn revised(run: &RunId, revision: &PlanRevision) -> CallToolResult {
    let changes =
        if revision.change_log.is_empty() { "nothing changed".to_owned() } else { revision.change_log.join("; ") };
    let summary = format!("Plan revision {}: {changes}.", revision.revision);
    answer(
        &summary,
        json!({
            "summary": summary,
            "run_id": run,
            "revision": revision.revision,
            "change_log": revision.change_log,
            "plan": revision.plan,
        }),
    )
}

#[tool_router(router = plan_tools, vis = "pub(crate)")]
impl<B: Backend> GatehouseMcp<B> {
    /// Read the run's plan: its tasks with status, priority, dependencies and
    /// assignments, the revision number and progress.
    #[tool(input_schema = input_schema::<RunArg>(), annotations(read_only_hint = true))]
    async fn plan_read(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: RunArg = arguments!("plan_read", arguments);
        let result = async {
            let caller = self.backend.caller(&request)?;
            let run = self.run_for(&caller, &request, args.run_id.as_deref()).await?;
            let snapshot = self.backend.read_plan(&caller, &run).await?;
            let summary = match &snapshot.plan {
                None => "This run has no plan yet: propose one with plan_propose or add tasks with plan_add_task."
                    .to_owned(),
                Some(rev) => format!(
                    "The plan (revision {}) has {} tasks, {} done.",
                    rev.revision, snapshot.progress.total, snapshot.progress.completed
                ),
            };
            let plan = snapshot.plan.as_ref();
            let ready: Vec<&str> =
                plan.map(|p| p.plan.ready_tasks().iter().map(|t| t.task_id.as_str()).collect()).unwrap_or_default();
            Ok(answer(
                &summary,
                json!({
                    "summary": summary,
                    "run_id": run,
                    "revision": plan.map(|p| p.revision),
                    "plan": plan.map(|p| &p.plan),
                    "ready_tasks": ready,
                    "progress": snapshot.progress,
                }),
            ))
        };
        settle(result.await)
    }

    /// Add a task to the run's plan; it starts as `pending`.
    #[tool(input_schema = input_schema::<AddTaskArgs>())]
    async fn plan_add_task(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: AddTaskArgs = arguments!("plan_add_task", arguments);
        let op = PlanOperation::AddTask {
            description: args.description,
            priority: TaskPriority::from(args.priority),
            dependencies: args.dependencies,
            task_id: args.task_id,
            assigned_agent: args.assigned_agent,
            estimated_duration: args.estimated_duration,
        };
        self.change(&request, args.run.run_id.as_deref(), op).await
    }

    /// Update a task's status and notes, e.g. mark it `in_progress` when
    /// you start and `completed` when done.
    #[tool(input_schema = input_schema::<UpdateTaskArgs>())]
    async fn plan_update_task(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: UpdateTaskArgs = arguments!("plan_update_task", arguments);
        let op = PlanOperation::UpdateTask {
            task_id: args.task_id,
            status: args.status.map(Into::into),
            metadata: args.metadata,
        };
        self.change(&request, args.run.run_id.as_deref(), op).await
    }

    /// Assign a task of the run's plan to an agent, by the agent's name.
    #[tool(input_schema = input_schema::<AssignTaskArgs>())]
    async fn plan_assign_task(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: AssignTaskArgs = arguments!("plan_assign_task", arguments);
        let op = PlanOperation::AssignTask { task_id: args.task_id, agent_name: args.agent_name };
        self.change(&request, args.run.run_id.as_deref(), op).await
    }

    /// Record how long a task should take.
    #[tool(input_schema = input_schema::<EstimateDurationArgs>())]
    async fn plan_estimate_duration(
        &self,
        request: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let args: EstimateDurationArgs = arguments!("plan_estimate_duration", arguments);
        let op = PlanOperation::EstimateDuration { task_id: args.task_id, duration: args.duration };
        self.change(&request, args.run.run_id.as_deref(), op).await
    }

    /// Replace a task's dependencies; unknown ids and cycles are refused.
    #[tool(input_schema = input_schema::<SetDependenciesArgs>())]
    async fn plan_set_dependencies(
        &self,
        request: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> CallToolResult {
        let args: SetDependenciesArgs = arguments!("plan_set_dependencies", arguments);
        let op = PlanOperation::SetDependencies { task_id: args.task_id, dependencies: args.dependencies };
        self.change(&request, args.run.run_id.as_deref(), op).await
    }

    /// Propose a whole plan and ask the reviewer to approve it. It becomes the run's plan at once and
    /// blocks until they decide. Approved: follow it. Edited: the reviewer's version (returned as
    /// `payload`) is now the plan; follow that. needs_revision: revise using `message` and propose
    /// again. Rejected: do not follow it.
    #[tool(input_schema = input_schema::<ProposePlanArgs>())]
    async fn plan_propose(&self, request: RequestContext<RoleServer>, arguments: JsonObject) -> CallToolResult {
        let args: ProposePlanArgs = arguments!("plan_propose", arguments);
        let plan = args.plan();
        if let Err(e) = plan.validate() {
            return bad_arguments("plan_propose", &format!("tasks: {e}"));
        }
        let result = async {
            let caller = self.backend.caller(&request)?;
            let run = self.run_for(&caller, &request, args.options.run_id.as_deref()).await?;
            let revision =
                self.backend.change_plan(&caller, &run, PlanOperation::Replace { plan: plan.clone() }).await?;
            let round = self.next_plan_round();
            let gate = NewGate::plan_propose(&plan, Some(revision.revision), round, args.note.as_deref());
            let options = crate::args::GateOptions { run_id: Some(run.to_string()), ..args.options.clone() };
            let gate = self.ask(&request, gate, &options).await?;
            Ok::<_, BackendError>(Outcome::of(&gate).into_result(json!({ "plan_revision": revision.revision })))
        };
        settle(result.await)
    }
}

impl<B: Backend> GatehouseMcp<B> {
    /// Applies one plan operation in the call's run.
    async fn change(
        &self,
        request: &RequestContext<RoleServer>,
        run: Option<&str>,
        op: PlanOperation,
    ) -> CallToolResult {
        let result = async {
            let caller = self.backend.caller(request)?;
            let run = self.run_for(&caller, request, run).await?;
            let revision = self.backend.change_plan(&caller, &run, op).await?;
            Ok::<_, BackendError>(revised(&run, &revision))
        };
        settle(result.await)
    }
}
