//! A CrewAI crew as a flat team: `agents` (as in `agents.yaml`: role, goal,
//! backstory, llm, tools) each a team member, and `tasks` (as in
//! `tasks.yaml`: description, agent, human_input) the steps of a
//! sequential crew, in order; a task with `human_input` is a review step a
//! person approves (on to the next task) or rejects (the task again). A
//! hierarchical crew's manager becomes the first agent, handing tasks out
//! freely, with no fixed order.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{bad, provider_model, text, Builder, ImportError};

pub(super) fn import(config: &Value, team: &mut Builder<'_>) -> Result<Option<Value>, ImportError> {
    let agents = entries(config, "agents")?;
    if agents.is_empty() {
        return Err(bad("agents", "is required: the crew's agents, by name (as in agents.yaml)"));
    }
    let hierarchical = match text(config, "process") {
        None | Some("sequential") => false,
        Some("hierarchical") => true,
        Some(other) => {
            return Err(bad("process", format!("`{other}` is not a CrewAI process; it is sequential or hierarchical")))
        }
    };
    if hierarchical {
        let model = text(config, "manager_llm").and_then(provider_model);
        team.agent("manager", "manages the crew: hands each task to the agent for it, and checks the result", model);
        team.note(
            "A hierarchical crew's manager is the first agent and hands tasks out by handoff; there is no fixed order.",
        );
    }
    let mut names: HashMap<String, String> = HashMap::new();
    for (key, agent) in &agents {
        let field = format!("agents.{key}");
        let role = text(agent, "role").ok_or_else(|| bad(format!("{field}.role"), "is required"))?;
        let goal = text(agent, "goal").map(|g| format!(". Goal: {g}")).unwrap_or_default();
        let model = match agent.get("llm") {
            None | Some(Value::Null) => None,
            Some(Value::String(llm)) => {
                let found = provider_model(llm);
                if found.is_none() {
                    team.note(format!(
                        "{field}.llm `{llm}` is not a provider Gatehouse has; the agent runs on the default."
                    ));
                }
                found
            }
            Some(_) => return Err(bad(format!("{field}.llm"), "must be a model name such as openai/gpt-4o")),
        };
        let name = team.agent(key, &format!("{role}{goal}"), model);
        if let Some(tools) = agent.get("tools").and_then(Value::as_array).filter(|t| !t.is_empty()) {
            let listed: Vec<String> =
                tools.iter().map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_owned)).collect();
            team.note(format!("{field}.tools ({}) have no Gatehouse equivalent and are left out.", listed.join(", ")));
        }
        if agent.get("backstory").is_some() {
            team.note(format!("{field}.backstory is not kept: a team agent's role is one line."));
        }
        names.insert(key.clone(), name);
    }
    let tasks = entries(config, "tasks")?;
    if tasks.is_empty() {
        team.note("The crew has no tasks: the team is imported without an order of work.");
        return Ok(None);
    }
    let mut steps: Vec<(String, String, bool)> = Vec::new();
    for (key, task) in &tasks {
        let field = format!("tasks.{key}");
        let agent = text(task, "agent")
            .ok_or_else(|| bad(format!("{field}.agent"), "is required: the agent who does the task"))?;
        let Some(name) = names.get(agent) else {
            let known: Vec<&str> = agents.iter().map(|(k, _)| k.as_str()).collect();
            return Err(bad(
                format!("{field}.agent"),
                format!("no agent `{agent}` in the crew; it has {}", known.join(", ")),
            ));
        };
        if task.get("async_execution").and_then(Value::as_bool) == Some(true) {
            team.note(format!("{field} runs asynchronously in CrewAI; here it runs in its turn."));
        }
        steps.push((key.clone(), name.clone(), task.get("human_input").and_then(Value::as_bool) == Some(true)));
    }
    if hierarchical {
        let listed: Vec<&str> = steps.iter().map(|(k, _, _)| k.as_str()).collect();
        team.note(format!("The tasks ({}) are the manager's to hand out.", listed.join(", ")));
        return Ok(None);
    }
    let workflow: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, (step, agent, review))| {
            let next = steps.get(i + 1).map(|(n, _, _)| n.as_str());
            let mut s = json!({"step": step, "agent": agent});
            match (review, next) {
                (true, next) => {
                    s["next_on_approve"] = json!(next);
                    s["next_on_reject"] = json!(step);
                }
                (false, Some(next)) => s["next_on_success"] = json!(next),
                (false, None) => {}
            }
            s
        })
        .collect();
    let name = text(config, "name").unwrap_or("crew");
    Ok(Some(json!({"name": name, "type": "custom", "workflow": workflow})))
}

/// `key`'s entries in order: a map by name (as in agents.yaml), or a list
/// whose entries carry a `name` (or, for agents, a `role`).
fn entries(config: &Value, key: &str) -> Result<Vec<(String, Value)>, ImportError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(map)) => Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let name = text(v, "name")
                    .or_else(|| text(v, "role"))
                    .ok_or_else(|| bad(format!("{key}[{i}].name"), "is required when the entries are a list"))?;
                Ok((name.to_owned(), v.clone()))
            })
            .collect(),
        Some(_) => Err(bad(key, "must be a map by name or a list")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::import::{import, Defaults, Framework};

    const CREW: &str = r#"
name: launch_crew
agents:
  researcher:
    role: Senior Researcher
    goal: Find what users need
    backstory: Ten years of interviews.
    llm: openai/gpt-4o
    tools: [SerperDevTool]
  writer:
    role: Writer
    goal: Write the launch post
tasks:
  research_task:
    description: Research the launch
    agent: researcher
  writing_task:
    description: Write it
    agent: writer
    human_input: true
"#;

    fn defaults() -> Defaults {
        Defaults { provider: "scripted".into(), model: "chat".into() }
    }

    #[test]
    fn a_sequential_crew_is_a_flat_team_working_its_tasks_in_order() {
        let imported = import(Framework::Crewai, CREW, &defaults()).unwrap();
        assert_eq!(
            imported.team,
            vec![
                json!({"name": "researcher", "role": "Senior Researcher. Goal: Find what users need", "provider": "openai", "model": "gpt-4o", "tools": []}),
                json!({"name": "writer", "role": "Writer. Goal: Write the launch post", "provider": "scripted", "model": "chat", "tools": []}),
            ]
        );
        assert_eq!(
            imported.pattern,
            Some(json!({"name": "launch_crew", "type": "custom", "workflow": [
                {"step": "research_task", "agent": "researcher", "next_on_success": "writing_task"},
                {"step": "writing_task", "agent": "writer", "next_on_approve": null, "next_on_reject": "writing_task"}
            ]}))
        );
        assert!(
            imported.notes.iter().any(|n| n.contains("agents.researcher.tools (SerperDevTool)")),
            "{:?}",
            imported.notes
        );
        // The pattern is one the orchestrator accepts.
        let agents = ["researcher", "writer"];
        crate::pattern::parse(imported.pattern.as_ref().unwrap(), "pattern", &agents).unwrap();
    }

    #[test]
    fn a_hierarchical_crew_puts_its_manager_first_with_free_handoffs() {
        let crew = format!("{CREW}\nprocess: hierarchical\nmanager_llm: anthropic/claude-sonnet-4\n");
        let imported = import(Framework::Crewai, &crew, &defaults()).unwrap();
        assert_eq!(imported.team[0]["name"], "manager");
        assert_eq!(imported.team[0]["provider"], "anthropic");
        assert_eq!(imported.team.len(), 3);
        assert_eq!(imported.pattern, None);
    }

    #[test]
    fn mistakes_name_their_field() {
        let err = |crew: &str| import(Framework::Crewai, crew, &defaults()).unwrap_err();
        assert_eq!(err("tasks: {}").field, "agents");
        assert_eq!(err("agents: {a: {goal: x}}").field, "agents.a.role");
        let e = err("agents: {a: {role: r}}\ntasks: {t: {agent: b}}");
        assert_eq!((e.field.as_str(), e.message.as_str()), ("tasks.t.agent", "no agent `b` in the crew; it has a"));
        assert_eq!(err("agents: {a: {role: r}}\nprocess: consensual").field, "process");
    }
}
