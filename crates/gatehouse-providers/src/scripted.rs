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
use crate::provider::{FinishReason, Payload, Provider, ProviderKind, ProviderResponse, RunInput, Tool};

/// One step of a tool's script.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Answer with this text; `{prompt}` is replaced by the payload's prompt.
    Reply(String),
    /// Fail with this error.
    Fail(ProviderError),
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

    /// The demo's provider, `scripted`: `scripted:chat` drafts an answer,
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
            .with_tool(
                chat,
                PayloadShape::Chat,
                [Step::Reply("Draft answer to \"{prompt}\": it depends; here is a first plan.".into())],
            )
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
        let text = match step {
            Step::Reply(template) => template.replace("{prompt}", &prompt_in(tool, payload)),
            Step::Fail(error) => return Err(error),
        };
        Ok(ProviderResponse {
            provider: self.name.clone(),
            id: Some(format!("scripted-{number}")),
            model: Some(tool.model.clone()),
            raw: json!({"id": format!("scripted-{number}"), "tool": tool.name, "output": text}),
            text,
            finish: FinishReason::Stop,
            usage: None,
            attempts: 1,
            latency_ms: 0,
        })
    }
}
