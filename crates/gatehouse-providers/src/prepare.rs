//! Turning a run input into a payload, deterministically: start from the
//! tool's `example_input`, lay the run's inputs over it, and put the prompt
//! where the tool takes it (a chat message, or the tool's prompt field).

use serde_json::{json, Value};

use crate::error::ProviderError;
use crate::request::{Payload, RunInput, Tool};

/// Where a chat payload puts the system instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemPlacement {
    /// A first message with the `system` role (OpenAI-compatible).
    Message,
    /// A top-level `system` field (Anthropic).
    TopLevel,
}

/// `{..example_input, ..inputs, model, messages}`: the tool's model and one user message.
pub fn chat(tool: &Tool, input: &RunInput, system: SystemPlacement) -> Result<Payload, ProviderError> {
    let prompt = prompt_of(tool, input)?;
    let mut fields = tool.example_input.clone();
    fields.extend(input.inputs.clone());
    fields.insert("model".to_owned(), json!(tool.model));
    let mut messages = Vec::new();
    match (&input.system, system) {
        (Some(text), SystemPlacement::Message) => messages.push(json!({"role": "system", "content": text})),
        (Some(text), SystemPlacement::TopLevel) => {
            fields.insert("system".to_owned(), json!(text));
        }
        (None, _) => {}
    }
    messages.push(json!({"role": "user", "content": prompt}));
    fields.insert("messages".to_owned(), Value::Array(messages));
    Ok(Payload::from(fields))
}

/// `{..example_input, prompt_field: prompt, ..inputs}`, with the system
/// instructions as `system_prompt` when the schema has that field.
pub fn inputs(tool: &Tool, input: &RunInput) -> Result<Payload, ProviderError> {
    let prompt = prompt_of(tool, input)?;
    let mut fields = tool.example_input.clone();
    fields.insert(tool.prompt_field.clone(), json!(prompt));
    let takes_system = tool.input_schema.pointer("/properties/system_prompt").is_some();
    if let (Some(system), true) = (&input.system, takes_system) {
        fields.insert("system_prompt".to_owned(), json!(system));
    }
    fields.extend(input.inputs.clone());
    Ok(Payload::from(fields))
}

fn prompt_of<'a>(tool: &Tool, input: &'a RunInput) -> Result<&'a str, ProviderError> {
    let prompt = input.prompt.trim();
    if prompt.is_empty() {
        return Err(ProviderError::InvalidInput {
            tool: tool.name.clone(),
            field: "prompt".to_owned(),
            message: "is empty; say what the model should do".to_owned(),
        });
    }
    Ok(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(prompt: &str, inputs: Value) -> RunInput {
        RunInput {
            tool: "t".into(),
            prompt: prompt.into(),
            system: Some("Be brief.".into()),
            inputs: inputs.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn a_chat_payload_starts_from_the_example_and_keeps_the_tools_model() {
        let tool = Tool::new("openai:m", "m", json!({})).with_example(json!({"temperature": 0.2, "max_tokens": 64}));
        let payload =
            chat(&tool, &input(" Hi ", json!({"temperature": 0.9, "model": "other"})), SystemPlacement::Message);
        assert_eq!(
            payload.unwrap().to_value(),
            json!({"temperature": 0.9, "max_tokens": 64, "model": "m", "messages": [
                {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})
        );
        let payload = chat(&tool, &input("Hi", json!({})), SystemPlacement::TopLevel).unwrap();
        assert_eq!(payload.get("system"), Some(&json!("Be brief.")));
        assert_eq!(payload.get("messages"), Some(&json!([{"role": "user", "content": "Hi"}])));
    }

    #[test]
    fn an_inputs_payload_puts_the_prompt_in_the_tools_field_and_keeps_extra_inputs() {
        let mut tool = Tool::new("r", "o/m", json!({"properties": {"system_prompt": {}}}))
            .with_example(json!({"text": "example", "steps": 4}));
        tool.prompt_field = "text".into();
        let payload = inputs(&tool, &input("a fox", json!({"image_file": "https://e.com/f.png"}))).unwrap();
        assert_eq!(
            payload.to_value(),
            json!({"text": "a fox", "steps": 4, "system_prompt": "Be brief.", "image_file": "https://e.com/f.png"})
        );
    }

    #[test]
    fn an_empty_prompt_is_refused_naming_the_field() {
        let tool = Tool::new("t", "m", json!({}));
        let error = inputs(&tool, &input("  ", json!({}))).unwrap_err();
        assert_eq!(error.field(), Some("prompt"));
    }
}
