//! A provider with canned answers, for the demo and for tests: each tool
//! follows a script of replies and failures, in order, the last step
//! repeating. No network, no randomness: the same calls always get the
//! same answers. Failures are returned as they are, as if the retries a
//! real provider makes had already run out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use serde_json::{json, Value};

use crate::error::{ProviderError, TransientFailure};
use crate::openai::chat_schema;
use crate::prepare::{self, SystemPlacement};
use crate::provider::{Provider, ProviderKind};
use crate::request::{Payload, RunInput, Tool};
use crate::response::{FinishReason, ProviderResponse};
use crate::scripted_release::{is_release, release_plan, release_task};
use crate::scripted_team::{completion, team_turn, ScriptedToolCall};

/// One step of a tool's script.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Answer with this text; `{prompt}` is replaced by the payload's prompt.
    Reply(String),
    /// Fail with this error.
    Fail(ProviderError),
    /// Answer like a (canned) assistant following an orchestrated run's
    /// requests: restate a goal with its feedback, write a numbered plan,
    /// report a task done, or draft an answer. See [`assist`]. A team
    /// agent's turn gets the team story's answer, with tool calls
    /// ([`crate::scripted_team::team_turn`]).
    Assist,
    /// Answer with this text and these native tool calls (name, arguments),
    /// shaped as an OpenAI chat completion.
    Calls(String, Vec<ScriptedToolCall>),
}

/// How a scripted tool's payload is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadShape {
    /// Like a chat completions request: `model` and `messages`.
    Chat,
    /// Like a Replicate input: the tool's fields, the prompt in its prompt field.
    Inputs,
}

#[derive(Debug)]
struct Script {
    shape: PayloadShape,
    steps: VecDeque<Step>,
}

/// A call the provider received.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// The tool called.
    pub tool: String,
    /// The payload it was called with.
    pub payload: Payload,
}

/// The scripted provider.
#[derive(Debug)]
pub struct ScriptedProvider {
    name: String,
    tools: Vec<Tool>,
    scripts: Mutex<HashMap<String, Script>>,
    calls: Mutex<Vec<ScriptedCall>>,
}

impl ScriptedProvider {
    /// A provider with no tools.
    pub fn new(name: impl Into<String>) -> Self {
        Self { name: name.into(), tools: Vec::new(), scripts: Mutex::default(), calls: Mutex::default() }
    }

    /// Adds a tool following `steps` (an empty script replies with the prompt).
    pub fn with_tool(mut self, tool: Tool, shape: PayloadShape, steps: impl IntoIterator<Item = Step>) -> Self {
        let script = Script { shape, steps: steps.into_iter().collect() };
        lock(&self.scripts).insert(tool.name.clone(), script);
        self.tools.push(tool);
        self
    }

    /// Replaces what is left of a tool's script (a test making the next call fail).
    pub fn script(&self, tool: &str, steps: impl IntoIterator<Item = Step>) {
        if let Some(script) = lock(&self.scripts).get_mut(tool) {
            script.steps = steps.into_iter().collect();
        }
    }

    /// Every call received so far, in order.
    pub fn calls(&self) -> Vec<ScriptedCall> {
        lock(&self.calls).clone()
    }

    /// The demo's provider, `scripted`: `scripted:chat` assists (see [`assist`]),
    /// `scripted:caption` captions an image (its payload wants
    /// `input_image`, so an `image_file` input shows a mapping suggestion),
    /// and `scripted:flaky` is unavailable on its first call.
    pub fn demo() -> Self {
        let chat = Tool::new("scripted:chat", "scripted-chat", chat_schema())
            .with_description("Drafts an answer to the prompt (canned)")
            .with_example(json!({"temperature": 0.2}));
        let caption = Tool::new(
            "scripted:caption",
            "scripted-caption",
            json!({
                "type": "object",
                "required": ["prompt", "input_image"],
                "properties": {
                    "prompt": {"type": "string", "minLength": 1},
                    "input_image": {"type": "string", "format": "uri"},
                    "detail": {"enum": ["low", "high"], "default": "low"}
                }
            }),
        )
        .with_description("Captions an image (canned)")
        .with_example(json!({"prompt": "Describe the picture", "input_image": "https://example.com/picture.png"}));
        let flaky = Tool::new("scripted:flaky", "scripted-flaky", chat_schema())
            .with_description("Fails its first call as unavailable, then answers (canned)");
        let unavailable = ProviderError::Unavailable {
            provider: "scripted".to_owned(),
            attempts: 4,
            failure: TransientFailure::Status {
                status: 503,
                message: "the scripted model is warming up".to_owned(),
                retry_after_ms: None,
            },
        };
        Self::new("scripted")
            .with_tool(chat, PayloadShape::Chat, [Step::Assist])
            .with_tool(
                caption,
                PayloadShape::Inputs,
                [Step::Reply("A caption, as asked (\"{prompt}\"): a cat asleep on a windowsill.".into())],
            )
            .with_tool(
                flaky,
                PayloadShape::Chat,
                [Step::Fail(unavailable), Step::Reply("Answered on a later try: {prompt}".into())],
            )
    }

    fn next_step(&self, tool: &str) -> Option<Step> {
        let mut scripts = lock(&self.scripts);
        let steps = &mut scripts.get_mut(tool)?.steps;
        Some(if steps.len() > 1 { steps.pop_front()? } else { steps.front().cloned().unwrap_or_else(echo) })
    }
}

/// A section of an orchestrated request: the text after a line `{name}:`
/// up to the next such header (or the rest of the line after it).
fn section<'a>(prompt: &'a str, name: &str) -> Option<&'a str> {
    let header = format!("{name}:");
    let start = prompt.lines().position(|l| l.trim_start().starts_with(&header))?;
    let lines: Vec<&str> = prompt.lines().collect();
    let first = lines[start].trim_start()[header.len()..].trim();
    if !first.is_empty() {
        return Some(first);
    }
    let body = lines[start + 1..].iter().take_while(|l| !is_header(l)).map(|l| l.trim()).find(|l| !l.is_empty());
    body
}

fn is_header(line: &str) -> bool {
    let line = line.trim();
    line.ends_with(':') && !line.contains(' ') && line.len() > 1
}

/// The scripted assistant's answer to an orchestrated request, chosen by
/// what it asks for (its `Goal:`, `Feedback:` and `Task:` sections):
/// a numbered plan when asked for one, a restated goal, a finished task,
/// or else a draft answer to the prompt; a goal naming a release plays the
/// release story (`scripted_release.rs`). Deterministic.
pub fn assist(prompt: &str) -> String {
    let goal = section(prompt, "Goal").unwrap_or(prompt).trim();
    let feedback = section(prompt, "Feedback").map(str::trim).filter(|f| !f.is_empty());
    let lowered = prompt.to_lowercase();
    if lowered.contains("numbered list") && is_release(goal) && feedback.is_none() {
        return release_plan();
    }
    if lowered.contains("numbered list") {
        let mut steps = vec![
            format!("Gather what is known about: {goal}"),
            "Draft the work in small, reviewable pieces".to_owned(),
            "Check the result against the goal".to_owned(),
        ];
        if let Some(feedback) = feedback {
            steps.insert(2, format!("Address the feedback: {feedback}"));
        }
        return steps.iter().enumerate().map(|(i, s)| format!("{}. {s}", i + 1)).collect::<Vec<_>>().join("\n");
    }
    if lowered.contains("restate the goal") {
        return match feedback {
            Some(feedback) => format!("{goal}, taking into account: {feedback}."),
            None => format!("{goal}, done well enough that a reviewer can check it."),
        };
    }
    if let Some(task) = section(prompt, "Task") {
        let attempt = section(prompt, "Attempt").and_then(|a| a.trim().parse().ok()).unwrap_or(1);
        if let Some(answer) = is_release(goal).then(|| release_task(task, attempt)).flatten() {
            return answer;
        }
        return format!("Done: {task}.");
    }
    format!("Draft answer to \"{}\": it depends; here is a first plan.", prompt.trim())
}

fn echo() -> Step {
    Step::Reply("{prompt}".to_owned())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The prompt a payload carries: its prompt field, or its last user message.
fn prompt_in(tool: &Tool, payload: &Payload) -> String {
    if let Some(prompt) = payload.get(&tool.prompt_field).and_then(Value::as_str) {
        return prompt.to_owned();
    }
    let messages = payload.get("messages").and_then(Value::as_array);
    let last_user = messages.and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    last_user.and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

#[async_trait]
impl Provider for ScriptedProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Scripted
    }

    fn tools(&self) -> &[Tool] {
        &self.tools
    }

    fn prepare(&self, tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError> {
        let shape = lock(&self.scripts).get(&tool.name).map(|s| s.shape);
        match shape {
            Some(PayloadShape::Chat) => prepare::chat(tool, input, SystemPlacement::Message),
            Some(PayloadShape::Inputs) => prepare::inputs(tool, input),
            None => Err(ProviderError::UnknownTool { tool: tool.name.clone() }),
        }
    }

    async fn call(&self, tool: &Tool, payload: &Payload) -> Result<ProviderResponse, ProviderError> {
        let step = self.next_step(&tool.name).ok_or_else(|| ProviderError::UnknownTool { tool: tool.name.clone() })?;
        let number = {
            let mut calls = lock(&self.calls);
            calls.push(ScriptedCall { tool: tool.name.clone(), payload: payload.clone() });
            calls.len()
        };
        let prompt = prompt_in(tool, payload);
        let (text, calls) = match step {
            Step::Reply(template) => (template.replace("{prompt}", &prompt), None),
            Step::Fail(error) => return Err(error),
            Step::Assist => match team_turn(&prompt) {
                Some((text, calls)) => (text, Some(calls)),
                None => (assist(&prompt), None),
            },
            Step::Calls(text, calls) => (text, Some(calls)),
        };
        let id = format!("scripted-{number}");
        let (raw, finish) = match &calls {
            Some(calls) if !calls.is_empty() => (completion(&id, &tool.model, &text, calls), FinishReason::ToolUse),
            Some(_) => (completion(&id, &tool.model, &text, &[]), FinishReason::Stop),
            None => (json!({"id": id, "tool": tool.name, "output": text}), FinishReason::Stop),
        };
        Ok(ProviderResponse {
            provider: self.name.clone(),
            id: Some(id),
            model: Some(tool.model.clone()),
            raw,
            text,
            finish,
            usage: None,
            attempts: 1,
            latency_ms: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::assist;

    #[test]
    fn the_assistant_writes_a_numbered_plan_with_the_feedback_in_it() {
        let plan = assist("Write the plan as a numbered list.\nGoal: Ship the beta\nFeedback: add a rollback step");
        let lines: Vec<&str> = plan.lines().collect();
        assert_eq!(lines.len(), 4, "{plan}");
        assert_eq!(lines[0], "1. Gather what is known about: Ship the beta");
        assert_eq!(lines[2], "3. Address the feedback: add a rollback step");
        assert!(!assist("Write the plan as a numbered list.\nGoal: Ship").contains("feedback"));
    }

    #[test]
    fn the_assistant_restates_a_goal_finishes_a_task_or_drafts_an_answer() {
        let goal = assist("Restate the goal clearly.\nGoal:\nShip the beta\n\nFeedback:\nby Friday");
        assert_eq!(goal, "Ship the beta, taking into account: by Friday.");
        assert_eq!(assist("Carry out one task.\nGoal: Ship\nTask: Write notes"), "Done: Write notes.");
        assert_eq!(assist("hello"), "Draft answer to \"hello\": it depends; here is a first plan.");
    }
}
