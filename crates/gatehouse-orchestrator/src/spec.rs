//! What an orchestrated run is asked to do, read from the HITL run
//! API's `run_input`: the tool (by name, or by `agent_tool_config`), the
//! prompt, further inputs, whether to collaborate on the goal and plan
//! first, and an optional assessment from the caller's own
//! information step. A run input naming no tool is an agent-driven run,
//! not this.

use gatehouse_engine::plan::ExecutionMode;
use gatehouse_providers::{ProviderRegistry, RunInput};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::information::Assessment;
use crate::team::{self, Team};

/// An orchestrated run's request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// The registry's tool to run (`openai:gpt-4o-mini`, `scripted:chat`).
    pub tool: String,
    /// What the user asks (the goal, when collaborating).
    pub prompt: String,
    /// Instructions for the model.
    #[serde(default)]
    pub system: Option<String>,
    /// Further payload fields, laid over the tool's example input.
    #[serde(default)]
    pub inputs: Map<String, Value>,
    /// Goal and plan collaboration before execution.
    #[serde(default)]
    pub collaborate: Option<Collaboration>,
    /// The caller's own information step, merged with Gatehouse's.
    #[serde(default)]
    pub assessment: Option<Assessment>,
    /// Created without starting: Gatehouse drives the run only once it is
    /// started (`POST /run/{run_id}/start`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wait_for_start: bool,
    /// How a blocker's answer is put into the next prompt (`{question}`,
    /// `{answer}`, `{answered_by}`); `injection::DEFAULT_TEMPLATE` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_template: Option<String>,
    /// A team of agents that take turns and hand off to each other; `tool`
    /// is then the first agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<Team>,
    /// The custom collaboration pattern the team follows, if any (`pattern`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<crate::pattern::Workflow>,
    /// How the team's proposals are finalised (`consensus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus: Option<crate::team::consensus_tools::ConsensusSettings>,
    /// Set on a parallel branch's sub-run only (never read from a run
    /// input): whose `parallel_handoff` started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<team::parallel::Branch>,
    /// A team run's plan as the run input gives it (`plan`: tasks assigned
    /// to members, its execution mode and intervention points); see
    /// `team/plan_progress.rs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<gatehouse_engine::plan::Plan>,
}

impl RunSpec {
    /// The provider-side run input.
    pub fn run_input(&self) -> RunInput {
        RunInput {
            tool: self.tool.clone(),
            prompt: self.prompt.clone(),
            system: self.system.clone(),
            inputs: self.inputs.clone(),
        }
    }
}

/// Which collaboration phases run before execution, and how the approved
/// plan runs (its `execution_mode` and `human_intervention_points`, which
/// the plan carries and only a person changes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Collaboration {
    /// Evaluate, present and refine the goal until the reviewer accepts it.
    pub goal: bool,
    /// Generate, present and modify the plan until approved (or rejected).
    pub plan: bool,
    /// How the approved plan's tasks run (see `execution.rs`).
    #[serde(default)]
    pub execution_mode: ExecutionMode,
    /// Where the run stops for a person: `before_deployment`, `on_error`, or a named point.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub human_intervention_points: Vec<String>,
}

impl Collaboration {
    /// These phases, the plan autonomous with no intervention point.
    pub fn phases(goal: bool, plan: bool) -> Self {
        Self { goal, plan, execution_mode: ExecutionMode::default(), human_intervention_points: Vec::new() }
    }
}

/// The most intervention points a plan names, and the longest name.
const MAX_POINTS: usize = 20;
const MAX_POINT: usize = 100;

/// `collaborate` as an object: its phases and the plan's settings.
fn collaboration(c: &Map<String, Value>) -> Result<Option<Collaboration>, SpecError> {
    let flag = |name: &str| match c.get(name) {
        None | Some(Value::Null) => Ok(true),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(format!("collaborate.{name}"), "must be true or false")),
    };
    let mut collaboration = Collaboration::phases(flag("goal")?, flag("plan")?);
    if let Some(mode) = c.get("execution_mode").filter(|m| !m.is_null()) {
        collaboration.execution_mode = serde_json::from_value(mode.clone())
            .map_err(|_| bad("collaborate.execution_mode", "must be `autonomous`, `supervised` or `step`"))?;
    }
    match c.get("human_intervention_points") {
        None | Some(Value::Null) => {}
        Some(Value::Array(points)) if points.len() <= MAX_POINTS => {
            for (i, point) in points.iter().enumerate() {
                let field = format!("collaborate.human_intervention_points[{i}]");
                let name = point.as_str().map(str::trim).filter(|p| !p.is_empty() && p.chars().count() <= MAX_POINT);
                let name = name.ok_or_else(|| bad(&field, format!("must be a name of 1 to {MAX_POINT} characters")))?;
                if !collaboration.human_intervention_points.iter().any(|p| p == name) {
                    collaboration.human_intervention_points.push(name.to_owned());
                }
            }
        }
        Some(_) => {
            let message = format!("must be a list of at most {MAX_POINTS} names (`before_deployment`, `on_error`...)");
            return Err(bad("collaborate.human_intervention_points", message));
        }
    }
    let settled = collaboration.execution_mode != ExecutionMode::Autonomous
        || !collaboration.human_intervention_points.is_empty();
    if settled && !collaboration.plan {
        return Err(bad(
            "collaborate.plan",
            "must be true when the plan's execution mode or intervention points are set",
        ));
    }
    Ok((collaboration.goal || collaboration.plan).then_some(collaboration))
}

/// A run input Gatehouse cannot orchestrate, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("run_input.{field}: {message}")]
pub struct SpecError {
    /// The field at fault, under `run_input`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

/// Whether a run input asks Gatehouse to drive a provider (it names a tool, or a team).
pub fn is_orchestrated(input: &Value) -> bool {
    ["tool", "agent_tool_config", "team"].iter().any(|k| input.get(k).is_some_and(|t| !t.is_null()))
}

/// The most characters a prompt may have.
const MAX_PROMPT: usize = 100_000;

/// Reads and checks an orchestrated run input against the tools `registry` offers.
pub fn parse(input: &Value, registry: &ProviderRegistry) -> Result<RunSpec, SpecError> {
    parse_granting(input, registry, None)
}

/// [`parse`], where a team's agents may also be granted `toolbox`'s tools.
pub fn parse_granting(
    input: &Value,
    registry: &ProviderRegistry,
    toolbox: Option<&crate::toolbox::Toolbox>,
) -> Result<RunSpec, SpecError> {
    let Some(obj) = input.as_object() else {
        return Err(bad("", "must be an object"));
    };
    let team = match obj.get("team") {
        None | Some(Value::Null) => None,
        Some(value) => Some(team::parse_granting(value, registry, toolbox)?),
    };
    let tool = match (obj.get("tool"), obj.get("agent_tool_config")) {
        _ if team.is_some() && obj.get("tool").is_none_or(Value::is_null) => {
            team.as_ref().map(|t| t.agents[0].tool.clone()).unwrap_or_default()
        }
        (Some(tool), _) if !tool.is_null() => {
            let name = tool.as_str().ok_or_else(|| bad("tool", "must be a tool's name, a string"))?;
            known_tool(registry, name, "tool")?
        }
        (_, Some(config)) => tool_from_config(registry, config)?,
        _ => return Err(bad("tool", "is required: name one of GET /api/hitl/providers' tools")),
    };
    let prompt = match obj.get("prompt") {
        Some(Value::String(p)) if !p.trim().is_empty() => p.clone(),
        Some(Value::String(_)) | None | Some(Value::Null) => return Err(bad("prompt", "is required and not blank")),
        Some(_) => return Err(bad("prompt", "must be a string")),
    };
    if prompt.chars().count() > MAX_PROMPT {
        return Err(bad("prompt", format!("is longer than {MAX_PROMPT} characters")));
    }
    let system = match obj.get("system") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        Some(_) => return Err(bad("system", "must be a string")),
    };
    let inputs = match obj.get("inputs") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(bad("inputs", "must be an object of payload fields")),
    };
    let collaborate = match obj.get("collaborate") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(Collaboration::phases(true, true)),
        Some(Value::Object(c)) => collaboration(c)?,
        Some(_) => return Err(bad("collaborate", "must be true, false or {\"goal\": bool, \"plan\": bool}")),
    };
    let assessment = match obj.get("assessment") {
        None | Some(Value::Null) => None,
        Some(value) => {
            let a: Assessment = serde_json::from_value(value.clone()).map_err(|e| bad("assessment", e.to_string()))?;
            if !(0.0..=1.0).contains(&a.confidence) {
                return Err(bad("assessment.confidence", "must be between 0 and 1"));
            }
            Some(a)
        }
    };
    let wait_for_start = match obj.get("wait_for_start") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("wait_for_start", "must be true or false")),
    };
    if team.is_some() && collaborate.is_some() {
        return Err(bad("collaborate", "a team run does not collaborate on the goal and plan first (yet)"));
    }
    let answer_template = crate::injection::check_template(obj.get("answer_template").unwrap_or(&Value::Null))
        .map_err(|m| bad("answer_template", m))?;
    let pattern = team::pattern_steps::parse_pattern(obj.get("pattern"), team.as_ref())?;
    let consensus = team::consensus_tools::parse_settings(obj.get("consensus"), team.is_some())?;
    let plan = team::plan_progress::parse_plan(obj.get("plan"), team.as_ref())?;
    Ok(RunSpec {
        tool,
        prompt,
        system,
        inputs,
        collaborate,
        assessment,
        wait_for_start,
        answer_template,
        team,
        pattern,
        consensus,
        branch: None,
        plan,
    })
}

/// The tool named `name`: a registry tool's name, or a model id exactly one tool serves.
pub fn known_tool(registry: &ProviderRegistry, name: &str, field: &str) -> Result<String, SpecError> {
    let name = name.trim();
    if registry.resolve(name).is_ok() {
        return Ok(name.to_owned());
    }
    let listing = registry.listing();
    let tools: Vec<_> = listing.iter().flat_map(|p| p.tools.iter()).collect();
    let by_model: Vec<_> = tools.iter().filter(|t| t.model == name).collect();
    if let [only] = by_model.as_slice() {
        return Ok(only.name.clone());
    }
    let known: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    Err(bad(field, format!("no provider offers `{name}`; the tools are {}", known.join(", "))))
}

/// The HITL run API's `agent_tool_config`: `{"REPLICATETOOL": {"data": {"model_name": ...}}}`.
/// The key names the provider (`REPLICATETOOL` is `replicate`); the model
/// name is a tool's name or its model id.
fn tool_from_config(registry: &ProviderRegistry, config: &Value) -> Result<String, SpecError> {
    let entries = config.as_object().filter(|c| !c.is_empty()).ok_or_else(|| {
        bad("agent_tool_config", "must be an object such as {\"REPLICATETOOL\": {\"data\": {\"model_name\": ...}}}")
    })?;
    let (key, value) = entries.iter().next().expect("checked non-empty");
    let field = format!("agent_tool_config.{key}.data.model_name");
    let model = value
        .pointer("/data/model_name")
        .or_else(|| value.get("model_name"))
        .and_then(Value::as_str)
        .ok_or_else(|| bad(&field, "is required"))?;
    let provider = key.to_lowercase().trim_end_matches("tool").trim_end_matches('_').to_owned();
    let qualified = format!("{provider}:{model}");
    if registry.resolve(&qualified).is_ok() {
        return Ok(qualified);
    }
    known_tool(registry, model, &field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn registry() -> ProviderRegistry {
        ProviderRegistry::from_lookup(|_| None).unwrap()
    }

    #[test]
    fn a_run_input_without_a_tool_is_agent_driven() {
        assert!(!is_orchestrated(&json!({"prompt": "x"})));
        assert!(!is_orchestrated(&json!({"tool": null})));
        assert!(is_orchestrated(&json!({"tool": "scripted:chat"})));
        assert!(is_orchestrated(&json!({"agent_tool_config": {}})));
    }

    #[test]
    fn tools_are_found_by_name_model_id_or_seed_config() {
        let r = registry();
        let spec = parse(&json!({"tool": "scripted:chat", "prompt": "hi"}), &r).unwrap();
        assert_eq!((spec.tool.as_str(), spec.collaborate), ("scripted:chat", None));
        let spec = parse(&json!({"tool": "scripted-caption", "prompt": "hi"}), &r).unwrap();
        assert_eq!(spec.tool, "scripted:caption");
        let seed = json!({"prompt": "hi", "agent_tool_config": {"SCRIPTEDTOOL": {"data": {"model_name": "chat"}}}});
        assert_eq!(parse(&seed, &r).unwrap().tool, "scripted:chat");
    }

    #[test]
    fn mistakes_name_their_field() {
        let r = registry();
        let err = |v: Value| parse(&v, &r).unwrap_err().to_string();
        assert!(err(json!({"tool": "nope", "prompt": "x"})).starts_with("run_input.tool: no provider offers `nope`"));
        assert_eq!(err(json!({"tool": "scripted:chat"})), "run_input.prompt: is required and not blank");
        assert_eq!(err(json!({"tool": "scripted:chat", "prompt": 3})), "run_input.prompt: must be a string");
        assert_eq!(
            err(json!({"tool": "scripted:chat", "prompt": "x", "inputs": []})),
            "run_input.inputs: must be an object of payload fields"
        );
        assert_eq!(
            err(json!({"tool": "scripted:chat", "prompt": "x", "collaborate": {"goal": 1}})),
            "run_input.collaborate.goal: must be true or false"
        );
        assert_eq!(
            err(json!({"tool": "scripted:chat", "prompt": "x", "assessment": {"confidence": 2}})),
            "run_input.assessment.confidence: must be between 0 and 1"
        );
        assert_eq!(
            err(json!({"prompt": "x", "agent_tool_config": {"REPLICATETOOL": {"data": {}}}})),
            "run_input.agent_tool_config.REPLICATETOOL.data.model_name: is required"
        );
    }

    #[test]
    fn collaboration_is_both_phases_or_the_ones_named() {
        let r = registry();
        let c = |v: Value| parse(&json!({"tool": "scripted:chat", "prompt": "x", "collaborate": v}), &r).unwrap();
        assert_eq!(c(json!(true)).collaborate, Some(Collaboration::phases(true, true)));
        assert_eq!(c(json!({"goal": false})).collaborate, Some(Collaboration::phases(false, true)));
        assert_eq!(c(json!({"goal": false, "plan": false})).collaborate, None);
        let settled = c(json!({"execution_mode": "supervised", "human_intervention_points": ["on_error", "on_error"]}));
        let settled = settled.collaborate.unwrap();
        assert_eq!(settled.execution_mode, ExecutionMode::Supervised);
        assert_eq!(settled.human_intervention_points, ["on_error"]);
    }

    #[test]
    fn plan_settings_name_their_field() {
        let r = registry();
        let err = |v: Value| {
            parse(&json!({"tool": "scripted:chat", "prompt": "x", "collaborate": v}), &r).unwrap_err().to_string()
        };
        assert_eq!(
            err(json!({"execution_mode": "wild"})),
            "run_input.collaborate.execution_mode: must be `autonomous`, `supervised` or `step`"
        );
        assert!(err(json!({"human_intervention_points": ["ok", " "]}))
            .starts_with("run_input.collaborate.human_intervention_points[1]: must be a name"));
        assert!(err(json!({"human_intervention_points": "on_error"}))
            .starts_with("run_input.collaborate.human_intervention_points: must be a list"));
        assert!(err(json!({"plan": false, "execution_mode": "step"}))
            .starts_with("run_input.collaborate.plan: must be true"));
    }
}
