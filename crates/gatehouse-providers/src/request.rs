//! What is sent to a model: the run input, a tool with the JSON Schema of
//! its input, and the payload a provider is called with. Plain values, so
//! validation, auditing and every provider can share them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a run asks for: a prompt for one tool, and any further inputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunInput {
    /// The tool (see [`Tool::name`]) to run.
    pub tool: String,
    /// What the user asks the model.
    pub prompt: String,
    /// Instructions for the model, where the tool takes them.
    pub system: Option<String>,
    /// Further fields of the payload (`temperature`, an image URL...),
    /// laid over the tool's `example_input`.
    pub inputs: Map<String, Value>,
}

/// One thing a provider can run: a model with the JSON Schema of its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// The registry's name for it, unique across providers (`openai:gpt-4o-mini`).
    pub name: String,
    /// What it does, for the reviewer.
    #[serde(default)]
    pub description: String,
    /// The provider's model id (`gpt-4o-mini`, `owner/model:version`).
    pub model: String,
    /// The JSON Schema every payload is validated against.
    pub input_schema: Value,
    /// A known-good input; prepared payloads start from it, and reviewers
    /// see a payload's changes from it.
    #[serde(default)]
    pub example_input: Map<String, Value>,
    /// The payload field the prompt goes in, for tools that take inputs
    /// rather than chat messages.
    #[serde(default = "default_prompt_field")]
    pub prompt_field: String,
}

fn default_prompt_field() -> String {
    "prompt".to_owned()
}

impl Tool {
    /// A tool with no description and no example input.
    pub fn new(name: impl Into<String>, model: impl Into<String>, input_schema: Value) -> Self {
        Self {
            name: name.into(),
            description: String::new(),
            model: model.into(),
            input_schema,
            example_input: Map::new(),
            prompt_field: default_prompt_field(),
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// Sets the example input (ignored unless `example` is an object).
    pub fn with_example(mut self, example: Value) -> Self {
        if let Value::Object(map) = example {
            self.example_input = map;
        }
        self
    }
}

/// The body a provider is called with: a JSON object, without credentials
/// (keys travel in headers only), so it is safe to snapshot and show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Payload(Map<String, Value>);

impl Payload {
    /// The payload of a JSON object; `None` for any other value.
    pub fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::Object(map) => Some(Self(map)),
            _ => None,
        }
    }

    /// Its fields.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.0
    }

    /// Its fields, to change.
    pub fn fields_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.0
    }

    /// One field.
    pub fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field)
    }

    /// The payload as a JSON value.
    pub fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

impl From<Map<String, Value>> for Payload {
    fn from(map: Map<String, Value>) -> Self {
        Self(map)
    }
}
