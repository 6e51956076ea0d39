//! Teams from other agent frameworks: a LangChain chain, an AutoGen group
//! chat or a CrewAI crew, read from its configuration file (YAML or JSON),
//! becomes a Gatehouse team and, where the framework fixes an order, a
//! custom collaboration pattern ([`crate::pattern`]), ready to go into an
//! orchestrated run's input:
//!
//! - a **LangChain** sequential chain is a handoff sequence: each model
//!   step an agent, the steps in the chain's order;
//! - an **AutoGen** group chat is a group of agents taking turns: round
//!   robin in its order; a selector chat or a swarm, free handoffs;
//! - a **CrewAI** crew is a flat team: each agent a team member, its
//!   tasks steps in order, a task with `human_input` a review step.
//!
//! Nothing is guessed silently: what has no equivalent (a router chain,
//! Magentic-One's ledgers) is refused naming the field, and what is
//! approximated (tools dropped, a termination condition) is listed in the
//! result's notes. Models go to the provider their configuration names
//! (`openai/gpt-4o`, a LangChain `openai-chat` LLM); the rest to the
//! defaults given.

mod autogen;
mod crewai;
mod langchain;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The frameworks a team can be imported from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// A LangChain chain (`SequentialChain`, `LLMChain`, a serialised `RunnableSequence`).
    Langchain,
    /// An AutoGen group chat (AgentChat's component configuration, or the older `agents` list).
    Autogen,
    /// A CrewAI crew (`agents` and `tasks`, as in `agents.yaml` and `tasks.yaml`).
    Crewai,
}

impl Framework {
    /// The framework called `name` (`langchain`, `autogen`, `crewai`).
    pub fn named(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "langchain" => Some(Self::Langchain),
            "autogen" => Some(Self::Autogen),
            "crewai" => Some(Self::Crewai),
            _ => None,
        }
    }
}

/// Where agents run when their configuration names no model Gatehouse knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaults {
    /// The registry's provider (`scripted`, `openai`).
    pub provider: String,
    /// Its model.
    pub model: String,
}

/// A translated team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The agents, as a run input's `team` takes them.
    pub team: Vec<Value>,
    /// The order they work in, as a run input's `pattern` takes it; none for free handoffs.
    pub pattern: Option<Value>,
    /// What was approximated or left out, for the person importing.
    pub notes: Vec<String>,
}

/// A configuration that cannot be imported, naming the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ImportError {
    /// The field, as a path in the configuration (`tasks.report.agent`); empty for the whole file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

pub(crate) fn bad(field: impl Into<String>, message: impl Into<String>) -> ImportError {
    ImportError { field: field.into(), message: message.into() }
}

/// Translates `config` (the framework's configuration, YAML or JSON) into a team.
pub fn import(framework: Framework, config: &str, defaults: &Defaults) -> Result<Imported, ImportError> {
    let value: Value = serde_norway::from_str(config).map_err(|e| bad("", format!("is not YAML or JSON: {e}")))?;
    let mut team = Builder { defaults, agents: Vec::new(), notes: Vec::new() };
    let pattern = match framework {
        Framework::Langchain => langchain::import(&value, &mut team)?,
        Framework::Autogen => autogen::import(&value, &mut team)?,
        Framework::Crewai => crewai::import(&value, &mut team)?,
    };
    if team.agents.is_empty() {
        return Err(bad("", "names no agent to import"));
    }
    Ok(Imported { team: team.agents, pattern, notes: team.notes })
}

/// A team being built: agents with unique names, and the notes so far.
pub(crate) struct Builder<'a> {
    defaults: &'a Defaults,
    agents: Vec<Value>,
    notes: Vec<String>,
}

impl Builder<'_> {
    /// Adds an agent; its name is made a team name (letters, digits, `_-.`)
    /// and unique. Returns the name it got.
    pub fn agent(&mut self, name: &str, role: &str, model: Option<(String, String)>) -> String {
        let base: String = name
            .trim()
            .chars()
            .map(|c| if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' })
            .take(56)
            .collect();
        let base = if base.is_empty() { format!("agent{}", self.agents.len() + 1) } else { base };
        let mut unique = base.clone();
        let mut n = 2;
        while self.agents.iter().any(|a| a["name"] == unique.as_str()) {
            unique = format!("{base}_{n}");
            n += 1;
        }
        let (provider, model) = model.unwrap_or_else(|| (self.defaults.provider.clone(), self.defaults.model.clone()));
        let role: String = role.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(200).collect();
        let role = if role.is_empty() { unique.clone() } else { role };
        self.agents.push(json!({"name": unique, "role": role, "provider": provider, "model": model, "tools": []}));
        unique
    }

    /// Notes something approximated or left out.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }
}

/// A `provider/model` string (LiteLLM's spelling, which CrewAI uses) as the
/// registry's provider and model; a bare model name goes to OpenAI when it
/// looks like one of its models.
pub(crate) fn provider_model(spec: &str) -> Option<(String, String)> {
    let spec = spec.trim();
    if let Some((provider, model)) = spec.split_once('/') {
        let provider = match provider {
            "openai" | "azure" | "ollama" | "deepseek" | "groq" | "openrouter" => "openai",
            "anthropic" => "anthropic",
            "replicate" => "replicate",
            _ => return None,
        };
        return (!model.is_empty()).then(|| (provider.to_owned(), model.to_owned()));
    }
    if spec.starts_with("gpt-") || spec.starts_with("o1") || spec.starts_with("o3") || spec.starts_with("o4") {
        return Some(("openai".to_owned(), spec.to_owned()));
    }
    spec.starts_with("claude-").then(|| ("anthropic".to_owned(), spec.to_owned()))
}

/// Steps in order, each handing to the next on success: the pattern of a fixed sequence.
pub(crate) fn sequence(name: &str, steps: &[(String, String)]) -> Value {
    let workflow: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, (step, agent))| {
            let mut s = json!({"step": step, "agent": agent});
            if let Some((next, _)) = steps.get(i + 1) {
                s["next_on_success"] = json!(next);
            }
            s
        })
        .collect();
    json!({"name": name, "type": "custom", "workflow": workflow})
}

/// A string field, trimmed, if present and not blank.
pub(crate) fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_strings_go_to_the_provider_they_name() {
        assert_eq!(provider_model("openai/gpt-4o"), Some(("openai".into(), "gpt-4o".into())));
        assert_eq!(provider_model("anthropic/claude-sonnet-4"), Some(("anthropic".into(), "claude-sonnet-4".into())));
        assert_eq!(provider_model("deepseek/deepseek-chat"), Some(("openai".into(), "deepseek-chat".into())));
        assert_eq!(provider_model("gpt-4o-mini"), Some(("openai".into(), "gpt-4o-mini".into())));
        assert_eq!(provider_model("bedrock/titan"), None);
        assert_eq!(provider_model("mistral-large"), None);
    }

    #[test]
    fn agent_names_become_unique_team_names() {
        let defaults = Defaults { provider: "scripted".into(), model: "chat".into() };
        let mut b = Builder { defaults: &defaults, agents: Vec::new(), notes: Vec::new() };
        assert_eq!(b.agent("Senior Researcher", "finds things", None), "Senior_Researcher");
        assert_eq!(b.agent("Senior Researcher", "", None), "Senior_Researcher_2");
        assert_eq!(b.agent("  ", "x", None), "agent3");
        assert_eq!(b.agents[1]["role"], "Senior_Researcher_2");
        assert_eq!(b.agents[0]["provider"], "scripted");
    }

    #[test]
    fn a_file_that_is_not_yaml_or_names_no_agent_is_refused() {
        let defaults = Defaults { provider: "scripted".into(), model: "chat".into() };
        let e = import(Framework::Crewai, "agents: [unclosed", &defaults).unwrap_err();
        assert!(e.message.starts_with("is not YAML or JSON"), "{e}");
        assert_eq!(Framework::named("CrewAI"), Some(Framework::Crewai));
        assert_eq!(Framework::named("dspy"), None);
    }
}
