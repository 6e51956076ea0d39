//! A team on an orchestrated run: agents with a name, a role, a provider
//! and model each, and the built-in tools their role may use. The team is
//! read from the run input's `team` and checked when the run starts (every
//! mistake names its field, `run_input.team[2].name`); it is kept in the
//! run's stored input, so it survives a restart. [`turns`] drives it.

pub mod change;
pub mod consensus_tools;
pub(crate) mod directives;
pub mod dynamic;
pub(crate) mod hitl_tools;
pub mod memory;
pub mod parallel;
pub mod pattern_steps;
pub mod plan_progress;
pub mod plan_tools;
pub mod restart;
pub mod sub_team_change;
pub(crate) mod toolbox_tools;
pub(crate) mod tools;
pub(crate) mod turns;
pub mod view;

use std::collections::HashMap;

use gatehouse_providers::ProviderRegistry;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::spec::SpecError;
use crate::toolbox::Toolbox;
use tools::BuiltinTool;

/// The most agents a team may have.
pub const MAX_AGENTS: usize = 200;
/// The longest agent name, role or tool list.
const MAX_NAME: usize = 64;
const MAX_ROLE: usize = 200;

/// A team of agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Team {
    /// Its agents; the first acts first.
    pub agents: Vec<TeamAgent>,
}

/// One agent of a team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = TeamMember))]
pub struct TeamAgent {
    /// Its name, unique in the team (`coder`).
    pub name: String,
    /// What it does (`writes the code`), told to its model.
    pub role: String,
    /// The registry's provider (`scripted`, `openai`).
    pub provider: String,
    /// The provider's model, as given.
    pub model: String,
    /// The registry's tool the agent runs on (`scripted:chat`).
    pub tool: String,
    /// The tools its role may use besides `handoff`, which every agent has:
    /// built-in ones, and the operator's toolbox tools by name.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub tools: Vec<String>,
}

impl Team {
    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&TeamAgent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The agents' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.agents.iter().map(|a| a.name.as_str()).collect()
    }
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

/// Reads and checks a run input's `team` against `registry`.
pub fn parse(value: &Value, registry: &ProviderRegistry) -> Result<Team, SpecError> {
    parse_granting(value, registry, None)
}

/// [`parse`], where agents may also be granted `toolbox`'s tools (a run
/// input grants them; only the operator's file defines them).
pub fn parse_granting(
    value: &Value,
    registry: &ProviderRegistry,
    toolbox: Option<&Toolbox>,
) -> Result<Team, SpecError> {
    let Some(list) = value.as_array() else {
        return Err(bad("team", "must be a list of agents ({\"name\", \"role\", \"provider\", \"model\", \"tools\"})"));
    };
    if list.is_empty() {
        return Err(bad("team", "must name at least one agent"));
    }
    if list.len() > MAX_AGENTS {
        return Err(bad("team", format!("has {} agents; at most {MAX_AGENTS}", list.len())));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut agents = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let agent = parse_agent_granting(entry, &format!("team[{i}]"), registry, toolbox)?;
        if let Some(first) = seen.insert(agent.name.clone(), i) {
            return Err(bad(
                format!("team[{i}].name"),
                format!("`{}` is already the name of team[{first}]", agent.name),
            ));
        }
        agents.push(agent);
    }
    Ok(Team { agents })
}

/// Reads one agent at `field` (`team[2]`).
pub fn parse_agent(entry: &Value, field: &str, registry: &ProviderRegistry) -> Result<TeamAgent, SpecError> {
    parse_agent_granting(entry, field, registry, None)
}

/// [`parse_agent`], where the agent may also be granted `toolbox`'s tools.
pub fn parse_agent_granting(
    entry: &Value,
    field: &str,
    registry: &ProviderRegistry,
    toolbox: Option<&Toolbox>,
) -> Result<TeamAgent, SpecError> {
    let Some(obj) = entry.as_object() else {
        return Err(bad(field, "must be an object with name, role, provider and model"));
    };
    let text = |key: &str, max: usize| -> Result<String, SpecError> {
        match obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() && s.trim().chars().count() <= max => {
                Ok(s.trim().to_owned())
            }
            Some(Value::String(s)) if !s.trim().is_empty() => {
                Err(bad(format!("{field}.{key}"), format!("is longer than {max} characters")))
            }
            Some(Value::String(_)) | None | Some(Value::Null) => {
                Err(bad(format!("{field}.{key}"), "is required and not blank"))
            }
            Some(_) => Err(bad(format!("{field}.{key}"), "must be a string")),
        }
    };
    let name = text("name", MAX_NAME)?;
    if !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.')) {
        return Err(bad(format!("{field}.name"), "may hold letters, digits, `_`, `-` and `.` only"));
    }
    let role = text("role", MAX_ROLE)?;
    let provider = text("provider", MAX_ROLE)?;
    let model = text("model", MAX_ROLE)?;
    let tool = agent_tool(registry, &provider, &model, field)?;
    let tools = match obj.get("tools") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(names)) => names
            .iter()
            .enumerate()
            .map(|(j, n)| tool_name(n, &format!("{field}.tools[{j}]"), toolbox))
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return Err(bad(format!("{field}.tools"), "must be a list of tool names")),
    };
    Ok(TeamAgent { name, role, provider, model, tool, tools })
}

/// The registry's tool for `provider`'s `model`: `provider:model`, or the
/// provider's tool whose model id is `model`.
fn agent_tool(registry: &ProviderRegistry, provider: &str, model: &str, field: &str) -> Result<String, SpecError> {
    let listing = registry.listing();
    let Some(found) = listing.iter().find(|p| p.name == provider) else {
        let names: Vec<&str> = listing.iter().map(|p| p.name.as_str()).collect();
        return Err(bad(
            format!("{field}.provider"),
            format!("no provider named `{provider}`; the providers are {}", names.join(", ")),
        ));
    };
    let qualified = format!("{provider}:{model}");
    if let Some(tool) = found.tools.iter().find(|t| t.name == qualified || t.name == model || t.model == model) {
        return Ok(tool.name.clone());
    }
    let models: Vec<&str> = found.tools.iter().map(|t| t.name.as_str()).collect();
    Err(bad(
        format!("{field}.model"),
        format!("`{provider}` offers no model `{model}`; its tools are {}", models.join(", ")),
    ))
}

fn tool_name(value: &Value, field: &str, toolbox: Option<&Toolbox>) -> Result<String, SpecError> {
    let name = value.as_str().map(str::trim).ok_or_else(|| bad(field, "must be a tool's name, a string"))?;
    if let Some(tool) = BuiltinTool::named(name) {
        return Ok(tool.name().to_owned());
    }
    if toolbox.is_some_and(|t| t.offers(name)) {
        return Ok(name.to_owned());
    }
    let mut names: Vec<String> = BuiltinTool::names().into_iter().map(str::to_owned).collect();
    names.extend(toolbox.into_iter().flat_map(|t| t.signatures()).map(|s| s.name));
    let left_out = toolbox.and_then(Toolbox::problem).map(|why| format!(" (the team tools were not loaded: {why})"));
    let message = format!("no tool named `{name}`; the tools are {}{}", names.join(", "), left_out.unwrap_or_default());
    Err(bad(field, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn registry() -> ProviderRegistry {
        ProviderRegistry::from_lookup(|_| None).unwrap()
    }

    fn agent(name: &str) -> Value {
        json!({"name": name, "role": "coder", "provider": "scripted", "model": "chat", "tools": ["store_memory"]})
    }

    #[test]
    fn a_team_resolves_each_agents_tool() {
        let team = parse(
            &json!([agent("coder"), {"name": "t", "role": "r", "provider": "scripted", "model": "scripted-caption"}]),
            &registry(),
        )
        .unwrap();
        assert_eq!(team.names(), ["coder", "t"]);
        assert_eq!((team.agents[0].tool.as_str(), team.agents[1].tool.as_str()), ("scripted:chat", "scripted:caption"));
        assert_eq!(team.agents[0].tools, ["store_memory"]);
    }

    #[test]
    fn mistakes_name_the_agent_and_field() {
        let err = |v: Value| parse(&v, &registry()).unwrap_err();
        assert_eq!(err(json!([])).field, "team");
        assert_eq!(err(json!({})).field, "team");
        let dup = err(json!([agent("a"), agent("b"), agent("a")]));
        assert_eq!((dup.field.as_str(), dup.message.as_str()), ("team[2].name", "`a` is already the name of team[0]"));
        let mut unknown = agent("a");
        unknown["provider"] = json!("nobody");
        assert_eq!(err(json!([unknown])).field, "team[0].provider");
        let mut model = agent("a");
        model["model"] = json!("gpt-9");
        assert_eq!(err(json!([model])).field, "team[0].model");
        let mut tool = agent("a");
        tool["tools"] = json!(["store_memory", "rm_rf"]);
        let e = err(json!([agent("b"), tool]));
        assert_eq!(e.field, "team[1].tools[1]");
        assert!(e.message.contains("handoff"), "{}", e.message);
        let mut blank = agent("a");
        blank["role"] = json!(" ");
        assert_eq!(err(json!([blank])).field, "team[0].role");
        assert_eq!(err(json!([agent("a b")])).field, "team[0].name");
    }

    #[test]
    fn a_tool_of_a_team_tools_file_not_loaded_is_refused_saying_why() {
        let toolbox = Toolbox::not_loaded("tools.yaml is not a toolbox file: unknown field `x` at line 2".into());
        let mut a = agent("a");
        a["tools"] = json!(["create_artifact"]);
        let e = parse_granting(&json!([a]), &registry(), Some(&toolbox)).unwrap_err();
        assert_eq!(e.field, "team[0].tools[0]");
        assert!(e.message.starts_with("no tool named `create_artifact`"), "{}", e.message);
        assert!(
            e.message.ends_with(
                "(the team tools were not loaded: tools.yaml is not a toolbox file: unknown field `x` at line 2)"
            ),
            "{}",
            e.message
        );
    }
}
