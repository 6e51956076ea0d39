//! Builders that keep the demo's scenarios readable: one constructor per
//! gate kind and chainable setters for the common fields, so a scenario
//! reads like what the agent asks rather than like struct literals.

use gatehouse_engine::gate::{GateSpec, Quorum};
use gatehouse_engine::plan::{PlanOperation, TaskPriority};
use gatehouse_engine::policy::{HitlConfig, ReviewThresholds, RunPolicy};
use gatehouse_engine::{BlockingMode, DecisionAction, DecisionInput, GateContext, NewGate, Priority};
use serde_json::Value;

/// Chainable setters for [`NewGate`].
pub trait GateExt: Sized {
    /// Sync, async or advisory.
    fn mode(self, mode: BlockingMode) -> Self;
    /// Urgency.
    fn priority(self, priority: Priority) -> Self;
    /// The proposed payload.
    fn payload(self, payload: Value) -> Self;
    /// What the payload should look like (the policy counts changes against it).
    fn example(self, example: Value) -> Self;
    /// The plan task the gate belongs to.
    fn task(self, task_id: &str, description: &str) -> Self;
    /// Needs `required` approvals; one rejection rejects.
    fn quorum(self, required: u32) -> Self;
    /// Never auto-passed by a policy.
    fn human_only(self) -> Self;
    /// Expires after `secs`.
    fn expires_in(self, secs: u64) -> Self;
    /// The agent's idempotency key.
    fn key(self, key: &str) -> Self;
}

impl GateExt for NewGate {
    fn mode(mut self, mode: BlockingMode) -> Self {
        self.mode = mode;
        self
    }
    fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }
    fn payload(mut self, payload: Value) -> Self {
        self.payload = Some(payload);
        self
    }
    fn example(mut self, example: Value) -> Self {
        self.example_input = Some(example);
        self
    }
    fn task(mut self, task_id: &str, description: &str) -> Self {
        self.context = GateContext {
            task_id: Some(task_id.to_owned()),
            task_description: Some(description.to_owned()),
            step: self.context.step.take(),
        };
        self
    }
    fn quorum(mut self, required: u32) -> Self {
        self.quorum = Some(Quorum { required, rejections_to_reject: 1 });
        self
    }
    fn human_only(mut self) -> Self {
        self.requires_human = true;
        self
    }
    fn expires_in(mut self, secs: u64) -> Self {
        self.expires_in_secs = Some(secs);
        self
    }
    fn key(mut self, key: &str) -> Self {
        self.idempotency_key = Some(key.to_owned());
        self
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// A blocker question.
pub fn question(text: &str) -> NewGate {
    NewGate::question(text)
}

/// Approval of a named action with its payload.
pub fn approval(action: &str, text: &str, payload: Value) -> NewGate {
    NewGate::approval(action, text, payload)
}

/// A payload to check before a tool call, with the tool's own validation.
pub fn payload_review(
    text: &str,
    payload: Value,
    validation: &[&str],
    suggestions: &[&str],
    required: &[&str],
) -> NewGate {
    let spec = GateSpec::PayloadReview {
        validation: strings(validation),
        suggestions: strings(suggestions),
        required_fields: strings(required),
    };
    NewGate::new(spec, text).payload(payload)
}

/// What the information step found, with its confidence and safety flags.
pub fn information_review(text: &str, confidence: f64, reasons: &[&str], flags: &[&str], settings: Value) -> NewGate {
    let spec = GateSpec::InformationReview {
        confidence: Some(confidence),
        reasons: strings(reasons),
        safety_flags: strings(flags),
        recommended_settings: settings,
    };
    NewGate::new(spec, text)
}

/// Raw model output against its audited version.
pub fn response_review(text: &str, raw: &str, audited: &str, indicators: &[&str]) -> NewGate {
    let spec =
        GateSpec::ResponseReview { raw: raw.to_owned(), audited: audited.to_owned(), indicators: strings(indicators) };
    NewGate::new(spec, text)
}

/// A deliverable to score against a rubric.
pub fn quality(text: &str, deliverable: &str, required_score: f64, rubric: &[&str]) -> NewGate {
    let spec =
        GateSpec::QualityScore { deliverable_id: deliverable.to_owned(), required_score, rubric: strings(rubric) };
    NewGate::new(spec, text)
}

/// One round of goal refinement.
pub fn goal_review(text: &str, goal: Value, round: u32) -> NewGate {
    NewGate::new(GateSpec::GoalReview { goal, round }, text)
}

/// One round of plan review of a stored plan revision.
pub fn plan_review(text: &str, plan_revision: u32, round: u32, plan: Value) -> NewGate {
    NewGate::new(GateSpec::PlanReview { plan_revision: Some(plan_revision), round }, text).payload(plan)
}

/// `run_policy: auto`.
pub fn auto_policy() -> HitlConfig {
    HitlConfig { run_policy: RunPolicy::Auto, ..HitlConfig::default() }
}

/// `run_policy: require_human`.
pub fn human_policy() -> HitlConfig {
    HitlConfig { run_policy: RunPolicy::RequireHuman, ..HitlConfig::default() }
}

/// `run_policy: auto_with_thresholds`.
pub fn threshold_policy(confidence_min: Option<f64>, flags: &[&str], payload_changes_max: Option<u32>) -> HitlConfig {
    HitlConfig {
        run_policy: RunPolicy::AutoWithThresholds,
        review_thresholds: Some(ReviewThresholds { confidence_min, safety_flags: strings(flags), payload_changes_max }),
        ..HitlConfig::default()
    }
}

/// An `add_task` plan operation with an explicit id.
pub fn add_task(
    id: &str,
    description: &str,
    agent: &str,
    priority: TaskPriority,
    dependencies: &[&str],
    estimate: &str,
) -> PlanOperation {
    PlanOperation::AddTask {
        description: description.to_owned(),
        priority,
        dependencies: strings(dependencies),
        task_id: Some(id.to_owned()),
        assigned_agent: Some(agent.to_owned()),
        estimated_duration: Some(estimate.to_owned()),
    }
}

/// Sends the work back with feedback (goal and plan collaboration's `modify` and `refine`).
pub fn needs_revision(feedback: &str) -> DecisionInput {
    DecisionInput { text: Some(feedback.to_owned()), ..DecisionInput::new(DecisionAction::NeedsRevision) }
}

/// Asks for the step to be tried again, saying what to change.
pub fn retry(note: &str) -> DecisionInput {
    DecisionInput { text: Some(note.to_owned()), ..DecisionInput::new(DecisionAction::Retry) }
}

/// Not now: the agent continues without an answer.
pub fn defer(note: &str) -> DecisionInput {
    DecisionInput { text: Some(note.to_owned()), ..DecisionInput::new(DecisionAction::Defer) }
}
