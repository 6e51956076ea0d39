//! Tool calls for models without native tool calling: the text protocol.
//!
//! The tools are listed in the prompt, one signature a line
//! (`handoff(destination_agent: str, reason: str, context: Optional[Dict])`),
//! and the model calls one by writing
//! `TOOL_CALL: {"tool_name": "...", "args": {...}}` in its answer.
//! [`parse_reply`] finds every such call, checks its tool against the list
//! and its arguments against the tool's JSON Schema, and returns the calls
//! that hold together with an error for each that does not, worded for
//! the model so it can try again: invalid JSON (with where it broke), an
//! unknown tool (with the tools there are), wrong arguments (each field and
//! what is wrong with it).
//!
//! Prompts follow the model's family ([`ModelFamily::of`]): DeepSeek's
//! reasoning models are told to think first and to put the call after
//! their reasoning, and markers inside `<think>` blocks are never read as
//! calls (reasoning often quotes the format).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What a reply's calls are marked with.
pub const MARKER: &str = "TOOL_CALL:";

/// A tool offered to the model: its name, what it does, and the JSON Schema
/// of its arguments (an object schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSignature {
    /// What the model calls it by.
    pub name: String,
    /// What it does, one line.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters: Value,
}

impl ToolSignature {
    /// A tool named `name`, described by `description`, taking `parameters`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self { name: name.into(), description: description.into(), parameters }
    }

    /// The line the model is shown: `name(arg: type, opt: Optional[type]): description`.
    pub fn line(&self) -> String {
        let required: Vec<&str> =
            self.parameters["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        let args: Vec<String> = self.parameters["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, schema)| {
                let kind = type_name(schema);
                if required.contains(&name.as_str()) {
                    format!("{name}: {kind}")
                } else {
                    format!("{name}: Optional[{kind}]")
                }
            })
            .collect();
        format!("{}({}): {}", self.name, args.join(", "), self.description)
    }
}

/// A JSON Schema type the way tool lists spell it.
fn type_name(schema: &Value) -> String {
    let kind = match &schema["type"] {
        Value::String(kind) => kind.as_str(),
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).find(|k| *k != "null").unwrap_or("Any"),
        _ if schema.get("enum").is_some() => "str",
        _ => "Any",
    };
    match kind {
        "string" => "str".to_owned(),
        "integer" => "int".to_owned(),
        "number" => "float".to_owned(),
        "boolean" => "bool".to_owned(),
        "object" => "Dict".to_owned(),
        "array" => format!("List[{}]", type_name(&schema["items"])),
        other => other.to_owned(),
    }
}

/// Model families whose prompts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFamily {
    /// Any instruction-following model.
    Generic,
    /// DeepSeek's models (`deepseek-chat`, `deepseek-reasoner`, `deepseek-r1`...).
    DeepSeek,
}

impl ModelFamily {
    /// The family of the model called `model` (a provider's model id).
    pub fn of(model: &str) -> Self {
        if model.to_ascii_lowercase().contains("deepseek") {
            Self::DeepSeek
        } else {
            Self::Generic
        }
    }

    /// Whether its instructions go in the first user message rather than a
    /// system message (DeepSeek's reasoning models follow them better there).
    pub fn instructions_in_user_turn(self, model: &str) -> bool {
        let model = model.to_ascii_lowercase();
        self == Self::DeepSeek && (model.contains("reasoner") || model.contains("r1"))
    }
}

/// The instructions listing `tools` and how to call them, in `family`'s template.
pub fn tools_prompt(tools: &[ToolSignature], family: ModelFamily) -> String {
    let list: String = tools.iter().map(|t| format!("- {}\n", t.line())).collect();
    let format = format!("{MARKER} {{\"tool_name\": \"tool_name\", \"args\": {{\"param\": \"value\"}}}}");
    match family {
        ModelFamily::Generic => format!(
            "Available Tools:\n{list}\nTo use a tool, respond with:\n{format}\n\n\
             Write one {MARKER} line per call, with the arguments as JSON. \
             Answer in plain text when you need no tool."
        ),
        ModelFamily::DeepSeek => format!(
            "You can use these tools:\n{list}\n\
             Reason about the task first. When your reasoning is done and a tool is needed, \
             end your answer with exactly one line per call, outside any <think> block:\n{format}\n\n\
             The JSON must be complete and valid: double quotes, no comments, no trailing commas. \
             Use only the tools listed above, with their argument names. \
             If no tool is needed, answer in plain text without {MARKER}."
        ),
    }
}

/// A call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextToolCall {
    /// The tool called.
    pub tool: String,
    /// Its arguments (an object, checked against the tool's schema).
    pub args: Value,
}

/// A call that could not be read or does not fit its tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
pub enum TextCallError {
    /// What follows the marker is not a JSON object.
    InvalidJson {
        /// The text after the marker, cut to a readable length.
        near: String,
        /// The JSON parser's complaint.
        message: String,
    },
    /// The object has no string `tool_name`.
    MissingToolName,
    /// No tool has that name.
    UnknownTool {
        /// The name called.
        tool: String,
        /// The tools there are.
        available: Vec<String>,
    },
    /// The arguments do not fit the tool's schema.
    InvalidArgs {
        /// The tool called.
        tool: String,
        /// Each problem: the field and what is wrong.
        problems: Vec<String>,
    },
}

impl fmt::Display for TextCallError {
    /// The message the model receives, so it can try again.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson { near, message } => write!(
                f,
                "Your tool call is not valid JSON ({message}) near `{near}`. \
                 Write it again as: {MARKER} {{\"tool_name\": \"...\", \"args\": {{...}}}}"
            ),
            Self::MissingToolName => {
                write!(f, "Your tool call has no \"tool_name\". Write it as: {MARKER} {{\"tool_name\": \"...\", \"args\": {{...}}}}")
            }
            Self::UnknownTool { tool, available } => {
                write!(f, "There is no tool called `{tool}`. The tools you can use are: {}.", available.join(", "))
            }
            Self::InvalidArgs { tool, problems } => {
                write!(
                    f,
                    "The arguments of `{tool}` are wrong: {}. Call it again with arguments that fit.",
                    problems.join("; ")
                )
            }
        }
    }
}

/// A reply read for tool calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParsedReply {
    /// The reply without its calls and reasoning blocks: what it says to people.
    pub text: String,
    /// The calls that hold together, in order.
    pub calls: Vec<TextToolCall>,
    /// The calls that do not, in order.
    pub errors: Vec<TextCallError>,
}

impl ParsedReply {
    /// The message telling the model what went wrong with its calls, if anything did.
    pub fn feedback(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
    }
}

/// Reads `reply`'s tool calls against `tools`.
pub fn parse_reply(reply: &str, tools: &[ToolSignature]) -> ParsedReply {
    let visible = without_reasoning(reply);
    let mut parsed = ParsedReply::default();
    let mut text = String::new();
    let mut rest = visible.as_str();
    while let Some(at) = rest.find(MARKER) {
        text.push_str(&rest[..at]);
        let after = &rest[at + MARKER.len()..];
        let (outcome, used) = read_call(after);
        match outcome.and_then(|call| check(call, tools)) {
            Ok(call) => parsed.calls.push(call),
            Err(error) => parsed.errors.push(error),
        }
        rest = &after[used..];
    }
    text.push_str(rest);
    parsed.text = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join("\n");
    parsed
}

/// `reply` without its `<think>...</think>` blocks (an unclosed one runs to the end).
fn without_reasoning(reply: &str) -> String {
    let mut out = String::with_capacity(reply.len());
    let mut rest = reply;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        rest = match rest[start..].find("</think>") {
            Some(end) => &rest[start + end + "</think>".len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// The call's object after a marker (a code fence around it is allowed),
/// and how many bytes of `after` it took.
fn read_call(after: &str) -> (Result<Map<String, Value>, TextCallError>, usize) {
    let trimmed = after.trim_start();
    let mut offset = after.len() - trimmed.len();
    let mut body = trimmed;
    if let Some(fenced) = body.strip_prefix("```") {
        let skip = fenced.find('\n').map_or(fenced.len(), |n| n + 1);
        offset += 3 + skip;
        body = &fenced[skip..];
    }
    let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    let outcome = match stream.next() {
        Some(Ok(Value::Object(map))) => Ok(map),
        Some(Ok(other)) => Err(TextCallError::InvalidJson {
            near: near(body),
            message: format!("expected an object, found {}", kind_of(&other)),
        }),
        Some(Err(e)) => Err(TextCallError::InvalidJson { near: near(body), message: e.to_string() }),
        None => Err(TextCallError::InvalidJson { near: near(body), message: "nothing follows the marker".to_owned() }),
    };
    // A broken call takes its line; a good one exactly its object (and a closing fence).
    let used = match &outcome {
        Ok(_) => {
            let end = stream.byte_offset();
            let tail = &body[end..];
            let fence = tail.trim_start().strip_prefix("```").map_or(0, |_| tail.len() - tail.trim_start().len() + 3);
            end + fence
        }
        Err(_) => body.find('\n').unwrap_or(body.len()),
    };
    (outcome, offset + used)
}

fn near(body: &str) -> String {
    let line = body.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The call if its tool exists and its arguments fit the tool's schema.
fn check(mut call: Map<String, Value>, tools: &[ToolSignature]) -> Result<TextToolCall, TextCallError> {
    let Some(Value::String(name)) = call.remove("tool_name") else {
        return Err(TextCallError::MissingToolName);
    };
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        return Err(TextCallError::UnknownTool {
            tool: name,
            available: tools.iter().map(|t| t.name.clone()).collect(),
        });
    };
    let args = match call.remove("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(args) => args,
    };
    let problems = arg_problems(&tool.parameters, &args);
    if problems.is_empty() {
        Ok(TextToolCall { tool: name, args })
    } else {
        Err(TextCallError::InvalidArgs { tool: name, problems })
    }
}

/// What is wrong with `args` under `schema`, each naming its field.
fn arg_problems(schema: &Value, args: &Value) -> Vec<String> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(validator) => validator,
        Err(e) => return vec![format!("the tool's own schema is broken ({e})")],
    };
    validator
        .iter_errors(args)
        .map(|error| {
            let path = error.instance_path().to_string();
            let field = path.trim_start_matches('/').replace('/', ".");
            if field.is_empty() {
                error.to_string()
            } else {
                format!("`{field}`: {error}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSignature> {
        vec![
            ToolSignature::new(
                "handoff",
                "Transfer control to another agent",
                json!({
                    "type": "object",
                    "required": ["destination_agent", "reason"],
                    "properties": {
                        "destination_agent": {"type": "string"},
                        "reason": {"type": "string"},
                        "context": {"type": "object"}
                    }
                }),
            ),
            ToolSignature::new(
                "web_search",
                "Search the web for information",
                json!({"type": "object", "required": ["query"], "properties": {"query": {"type": "string", "minLength": 1}}}),
            ),
        ]
    }

    #[test]
    fn the_prompt_lists_each_tool_as_a_signature_and_shows_the_call_format() {
        let prompt = tools_prompt(&tools(), ModelFamily::Generic);
        assert!(prompt.contains(
            "- handoff(destination_agent: str, reason: str, context: Optional[Dict]): Transfer control to another agent"
        ));
        assert!(prompt.contains("- web_search(query: str): Search the web for information"));
        assert!(prompt.contains(r#"TOOL_CALL: {"tool_name": "tool_name", "args": {"param": "value"}}"#));
        let deepseek = tools_prompt(&tools(), ModelFamily::DeepSeek);
        assert!(deepseek.contains("outside any <think> block"));
        assert_ne!(prompt, deepseek);
    }

    #[test]
    fn the_family_follows_the_model_id() {
        assert_eq!(ModelFamily::of("deepseek-ai/DeepSeek-R1"), ModelFamily::DeepSeek);
        assert_eq!(ModelFamily::of("gpt-4o-mini"), ModelFamily::Generic);
        assert!(ModelFamily::DeepSeek.instructions_in_user_turn("deepseek-reasoner"));
        assert!(!ModelFamily::DeepSeek.instructions_in_user_turn("deepseek-chat"));
        assert!(!ModelFamily::Generic.instructions_in_user_turn("r1-lookalike"));
    }

    #[test]
    fn calls_are_read_in_order_and_the_text_around_them_kept() {
        let reply = "Tests fail on the parser.\n\
            TOOL_CALL: {\"tool_name\": \"web_search\", \"args\": {\"query\": \"serde stream offset\"}}\n\
            Then I hand over.\n\
            TOOL_CALL: ```json\n{\"tool_name\": \"handoff\", \"args\": {\"destination_agent\": \"coder\", \"reason\": \"fix it\"}}\n```\n";
        let parsed = parse_reply(reply, &tools());
        assert_eq!(parsed.errors, vec![]);
        assert_eq!(
            parsed.calls,
            vec![
                TextToolCall { tool: "web_search".into(), args: json!({"query": "serde stream offset"}) },
                TextToolCall {
                    tool: "handoff".into(),
                    args: json!({"destination_agent": "coder", "reason": "fix it"})
                },
            ]
        );
        assert_eq!(parsed.text, "Tests fail on the parser.\nThen I hand over.");
        assert_eq!(parsed.feedback(), None);
    }

    #[test]
    fn invalid_json_is_answered_with_where_it_broke_and_the_format() {
        let parsed =
            parse_reply("TOOL_CALL: {\"tool_name\": \"web_search\", \"args\": {\"query\": \"x\",}}\nok", &tools());
        assert_eq!(parsed.calls, vec![]);
        let [TextCallError::InvalidJson { near, message }] = parsed.errors.as_slice() else {
            panic!("expected one invalid-JSON error, got {:?}", parsed.errors);
        };
        assert!(near.starts_with("{\"tool_name\": \"web_search\""), "{near}");
        assert!(message.contains("line 1"), "{message}");
        assert!(parsed.feedback().unwrap().contains("is not valid JSON"));
        assert_eq!(parsed.text, "ok", "the broken call's line is not shown as text");
        let not_object = parse_reply("TOOL_CALL: [\"web_search\"]", &tools());
        assert!(
            matches!(&not_object.errors[..], [TextCallError::InvalidJson { message, .. }] if message.contains("an array"))
        );
        let empty = parse_reply("TOOL_CALL:", &tools());
        assert!(
            matches!(&empty.errors[..], [TextCallError::InvalidJson { message, .. }] if message.contains("nothing follows"))
        );
    }

    #[test]
    fn an_unknown_tool_is_answered_with_the_tools_there_are() {
        let parsed = parse_reply(r#"TOOL_CALL: {"tool_name": "rm_rf", "args": {}}"#, &tools());
        assert_eq!(
            parsed.errors,
            vec![TextCallError::UnknownTool {
                tool: "rm_rf".into(),
                available: vec!["handoff".into(), "web_search".into()]
            }]
        );
        assert_eq!(
            parsed.feedback().unwrap(),
            "There is no tool called `rm_rf`. The tools you can use are: handoff, web_search."
        );
        let nameless = parse_reply(r#"TOOL_CALL: {"args": {}}"#, &tools());
        assert_eq!(nameless.errors, vec![TextCallError::MissingToolName]);
    }

    #[test]
    fn wrong_arguments_name_each_field_and_what_is_wrong() {
        let parsed = parse_reply(
            r#"TOOL_CALL: {"tool_name": "handoff", "args": {"destination_agent": 7, "context": "none"}}"#,
            &tools(),
        );
        let [TextCallError::InvalidArgs { tool, problems }] = parsed.errors.as_slice() else {
            panic!("expected one argument error, got {:?}", parsed.errors);
        };
        assert_eq!(tool, "handoff");
        assert!(problems.iter().any(|p| p.contains("\"reason\" is a required property")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("`destination_agent`:")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("`context`:")), "{problems:?}");
        let no_args = parse_reply(r#"TOOL_CALL: {"tool_name": "web_search"}"#, &tools());
        assert!(
            matches!(&no_args.errors[..], [TextCallError::InvalidArgs { problems, .. }] if problems[0].contains("query"))
        );
    }

    #[test]
    fn markers_inside_reasoning_are_not_calls() {
        let reply = "<think>I could write TOOL_CALL: {\"tool_name\": \"rm_rf\"} but no.</think>\n\
                     TOOL_CALL: {\"tool_name\": \"web_search\", \"args\": {\"query\": \"docs\"}}";
        let parsed = parse_reply(reply, &tools());
        assert_eq!(parsed.errors, vec![]);
        assert_eq!(parsed.calls.len(), 1);
        assert_eq!(parse_reply("<think>unfinished TOOL_CALL: {", &tools()), ParsedReply::default());
    }

    #[test]
    fn a_reply_without_markers_is_plain_text() {
        let parsed = parse_reply("All tests pass.", &tools());
        assert_eq!(parsed, ParsedReply { text: "All tests pass.".into(), ..ParsedReply::default() });
    }
}
