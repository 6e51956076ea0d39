//! An AutoGen group chat as a team. AgentChat's component configuration
//! (`team.dump_component()`: a `provider` such as
//! `autogen_agentchat.teams.RoundRobinGroupChat` and its `config` with
//! `participants`) or the older form (`agents` with `llm_config`, and
//! `speaker_selection_method`) are read:
//!
//! - a round-robin chat takes turns in its participants' order: a sequence;
//! - a selector chat or a swarm lets the speaker be chosen as the talk
//!   goes: free handoffs, the first participant starting;
//! - a user proxy is not an agent: in Gatehouse the person is the reviewer
//!   at the gates, so it is left out (noted);
//! - Magentic-One's orchestrator ledgers and graph flows have no
//!   equivalent and are refused.

use serde_json::Value;

use super::{bad, sequence, text, Builder, ImportError};

/// How the chat picks its next speaker.
enum Turns {
    RoundRobin,
    Chosen,
}

pub(super) fn import(config: &Value, team: &mut Builder<'_>) -> Result<Option<Value>, ImportError> {
    let (turns, participants, field) = match text(config, "provider") {
        Some(provider) => component(config, provider)?,
        None => older(config)?,
    };
    let mut steps = Vec::new();
    for (i, participant) in participants.iter().enumerate() {
        let at = format!("{field}[{i}]");
        if let Some(name) = participant_agent(participant, &at, team)? {
            steps.push((name.clone(), name));
        }
    }
    if let Some(max) = config.pointer("/config/max_turns").or_else(|| config.get("max_round")).and_then(Value::as_u64) {
        team.note(format!(
            "The chat's limit of {max} turns is not kept: the run's own step limits and the reviewer apply."
        ));
    }
    if config.pointer("/config/termination_condition").is_some_and(|t| !t.is_null()) {
        team.note("The chat's termination condition is not kept: the workflow ends after its last step, or when an agent finishes.");
    }
    match turns {
        Turns::RoundRobin => {
            team.note("AutoGen repeats the round until the chat terminates; here each agent takes one turn in order and may hand back with handoff.");
            Ok(Some(sequence("round_robin", &steps)))
        }
        Turns::Chosen => Ok(None),
    }
}

/// AgentChat's component form: the team's kind and its participants.
fn component<'v>(config: &'v Value, provider: &str) -> Result<(Turns, &'v [Value], &'static str), ImportError> {
    let kind = provider.rsplit('.').next().unwrap_or(provider);
    let turns = match kind {
        "RoundRobinGroupChat" => Turns::RoundRobin,
        "SelectorGroupChat" | "Swarm" => Turns::Chosen,
        "MagenticOneGroupChat" => {
            return Err(bad("provider", "Magentic-One's orchestrator (task and progress ledgers) has no Gatehouse equivalent; import its agents as a round-robin or selector chat"))
        }
        "GraphFlow" => {
            return Err(bad("provider", "a graph flow is not imported: write its graph as a custom collaboration pattern"))
        }
        other => return Err(bad("provider", format!("`{other}` is not an AutoGen group chat Gatehouse can import (RoundRobinGroupChat, SelectorGroupChat, Swarm)"))),
    };
    let participants = config
        .pointer("/config/participants")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("config.participants", "is required: the chat's agents"))?;
    Ok((turns, participants, "config.participants"))
}

/// The older form: `agents` and `speaker_selection_method`.
fn older(config: &Value) -> Result<(Turns, &[Value], &'static str), ImportError> {
    let agents = config.get("agents").and_then(Value::as_array).ok_or_else(|| {
        bad("provider", "is required: an AgentChat team's component configuration (or the older `agents` list)")
    })?;
    let turns = match text(config, "speaker_selection_method").unwrap_or("auto") {
        "round_robin" => Turns::RoundRobin,
        "auto" | "random" | "manual" => Turns::Chosen,
        other => return Err(bad("speaker_selection_method", format!("`{other}` is not one AutoGen has"))),
    };
    Ok((turns, agents, "agents"))
}

/// Adds a participant as an agent; `None` for a user proxy, which is left out.
fn participant_agent(participant: &Value, at: &str, team: &mut Builder<'_>) -> Result<Option<String>, ImportError> {
    let kind = text(participant, "provider").map(|p| p.rsplit('.').next().unwrap_or(p));
    let body = participant.get("config").filter(|c| c.is_object()).unwrap_or(participant);
    let name = text(body, "name").ok_or_else(|| bad(format!("{at}.name"), "is required"))?;
    match kind {
        Some("UserProxyAgent") => {
            team.note(format!("{at} (`{name}`, a user proxy) is left out: the person reviews at Gatehouse's gates."));
            return Ok(None);
        }
        None | Some("AssistantAgent" | "ConversableAgent" | "CodeExecutorAgent") => {}
        Some(other) => {
            return Err(bad(
                format!("{at}.provider"),
                format!("`{other}` is not an agent Gatehouse can import (AssistantAgent, UserProxyAgent)"),
            ))
        }
    }
    if kind == Some("CodeExecutorAgent") {
        team.note(format!(
            "{at} (`{name}`) executes code in AutoGen; here it is a model agent, and commands pass an approval gate."
        ));
    }
    let role = text(body, "description").or_else(|| text(body, "system_message")).unwrap_or(name);
    let role = role.lines().next().unwrap_or(role);
    if body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()) {
        team.note(format!("{at}.tools have no Gatehouse equivalent and are left out."));
    }
    let model = model_of(body);
    if model.is_none() {
        team.note(format!("{at} (`{name}`) names no model Gatehouse knows; it runs on the default."));
    }
    Ok(Some(team.agent(name, role, model)))
}

/// The participant's model: its `model_client` (component form) or `llm_config` (older form).
fn model_of(body: &Value) -> Option<(String, String)> {
    if let Some(client) = body.get("model_client") {
        let provider = text(client, "provider")?;
        let model = client.pointer("/config/model").and_then(Value::as_str)?;
        let kind = provider.rsplit('.').next().unwrap_or(provider);
        return match kind {
            "OpenAIChatCompletionClient" | "AzureOpenAIChatCompletionClient" => Some(("openai".into(), model.into())),
            "AnthropicChatCompletionClient" => Some(("anthropic".into(), model.into())),
            _ => None,
        };
    }
    let model = body.pointer("/llm_config/config_list/0/model").and_then(Value::as_str)?;
    super::provider_model(model)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::import::{import, Defaults, Framework};

    fn defaults() -> Defaults {
        Defaults { provider: "scripted".into(), model: "chat".into() }
    }

    fn assistant(name: &str, model: &str) -> serde_json::Value {
        json!({"provider": "autogen_agentchat.agents.AssistantAgent", "component_type": "agent", "config": {
            "name": name, "description": format!("{name} does its part"), "system_message": "You help.",
            "model_client": {"provider": "autogen_ext.models.openai.OpenAIChatCompletionClient", "config": {"model": model}}
        }})
    }

    #[test]
    fn a_round_robin_chat_takes_turns_in_order_without_its_user_proxy() {
        let chat = json!({"provider": "autogen_agentchat.teams.RoundRobinGroupChat", "component_type": "team", "config": {
            "participants": [
                assistant("planner", "gpt-4o"),
                {"provider": "autogen_agentchat.agents.UserProxyAgent", "config": {"name": "user"}},
                assistant("critic", "gpt-4o-mini")
            ],
            "max_turns": 6
        }});
        let imported = import(Framework::Autogen, &chat.to_string(), &defaults()).unwrap();
        let names: Vec<&str> = imported.team.iter().map(|a| a["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["planner", "critic"]);
        assert_eq!(imported.team[1]["model"], "gpt-4o-mini");
        assert_eq!(imported.team[0]["role"], "planner does its part");
        assert_eq!(
            imported.pattern,
            Some(json!({"name": "round_robin", "type": "custom", "workflow": [
                {"step": "planner", "agent": "planner", "next_on_success": "critic"},
                {"step": "critic", "agent": "critic"}
            ]}))
        );
        assert!(imported.notes.iter().any(|n| n.contains("`user`, a user proxy")), "{:?}", imported.notes);
        assert!(imported.notes.iter().any(|n| n.contains("limit of 6 turns")));
    }

    #[test]
    fn a_swarm_or_selector_chat_is_free_handoffs_and_the_older_form_is_read() {
        let swarm = json!({"provider": "autogen_agentchat.teams.Swarm", "config": {"participants": [assistant("a", "gpt-4o")]}});
        assert_eq!(import(Framework::Autogen, &swarm.to_string(), &defaults()).unwrap().pattern, None);
        let older = "agents:\n  - name: coder\n    system_message: You write code.\n    llm_config: {config_list: [{model: gpt-4o}]}\n  - name: tester\nspeaker_selection_method: round_robin\n";
        let imported = import(Framework::Autogen, older, &defaults()).unwrap();
        assert_eq!(imported.team[0]["provider"], "openai");
        assert_eq!(imported.team[1]["provider"], "scripted");
        assert!(imported.pattern.is_some());
    }

    #[test]
    fn constructs_without_an_equivalent_are_refused_naming_the_field() {
        let err = |v: serde_json::Value| import(Framework::Autogen, &v.to_string(), &defaults()).unwrap_err();
        let magentic =
            err(json!({"provider": "autogen_agentchat.teams.MagenticOneGroupChat", "config": {"participants": []}}));
        assert_eq!(magentic.field, "provider");
        assert!(magentic.message.contains("Magentic-One"));
        let odd = err(json!({"provider": "autogen_agentchat.teams.RoundRobinGroupChat", "config": {"participants": [
            {"provider": "my.agents.SocietyOfMindAgent", "config": {"name": "x"}}
        ]}}));
        assert_eq!(odd.field, "config.participants[0].provider");
        assert_eq!(err(json!({"nothing": true})).field, "provider");
    }
}
