//! A LangChain chain as a handoff sequence: each model step of the chain an
//! agent, its prompt the agent's role, the steps in the chain's order. Two
//! forms are read: the classic serialised chain (`chain.save()`: an
//! `llm_chain`, or a `sequential_chain` or `simple_sequential_chain` of
//! them) and a serialised runnable (`dumpd(prompt | model | parser | ...)`,
//! a `RunnableSequence`). Routers, retrieval and document chains, and
//! runnable branches choose their path at run time from data Gatehouse does
//! not have, so they are refused.

use serde_json::Value;

use super::{bad, provider_model, sequence, text, Builder, ImportError};

pub(super) fn import(config: &Value, team: &mut Builder<'_>) -> Result<Option<Value>, ImportError> {
    let mut steps = Vec::new();
    if config.get("lc").is_some() {
        runnable(config, "", team, &mut steps)?;
    } else {
        classic(config, "", team, &mut steps)?;
    }
    if steps.is_empty() {
        return Err(bad("", "has no model step: nothing to make an agent of"));
    }
    Ok(Some(sequence("chain", &steps)))
}

/// A classic chain at `field`: its model steps, in order, onto `steps`.
fn classic(
    chain: &Value,
    field: &str,
    team: &mut Builder<'_>,
    steps: &mut Vec<(String, String)>,
) -> Result<(), ImportError> {
    let at = |key: &str| if field.is_empty() { key.to_owned() } else { format!("{field}.{key}") };
    match text(chain, "_type") {
        Some("sequential_chain" | "simple_sequential_chain") => {
            let chains = chain
                .get("chains")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(at("chains"), "is required: the chains in order"))?;
            for (i, inner) in chains.iter().enumerate() {
                classic(inner, &at(&format!("chains[{i}]")), team, steps)?;
            }
            Ok(())
        }
        Some("llm_chain") => {
            let llm = chain.get("llm").unwrap_or(&Value::Null);
            let model = classic_model(llm);
            if model.is_none() {
                team.note(format!("{} has no model Gatehouse knows; it runs on the default.", at("llm")));
            }
            let role = chain.pointer("/prompt/template").and_then(Value::as_str).unwrap_or("a step of the chain");
            let key = text(chain, "output_key").filter(|k| *k != "text").map(str::to_owned);
            let name = team.agent(&key.unwrap_or_else(|| format!("step{}", steps.len() + 1)), role, model);
            steps.push((name.clone(), name));
            Ok(())
        }
        Some(other) => Err(bad(
            at("_type"),
            format!("a `{other}` chooses or fetches at run time and has no Gatehouse equivalent; only llm and sequential chains are imported"),
        )),
        None => Err(bad(at("_type"), "is required: a serialised chain (`chain.save()`) or runnable (`dumpd`)")),
    }
}

/// A classic LLM's provider and model (`openai-chat` with `model_name`...).
fn classic_model(llm: &Value) -> Option<(String, String)> {
    let model = text(llm, "model_name").or_else(|| text(llm, "model"))?;
    match text(llm, "_type")? {
        "openai" | "openai-chat" | "azure-openai-chat" | "ollama" | "chat-ollama" => {
            Some(("openai".into(), model.into()))
        }
        "anthropic" | "anthropic-chat" => Some(("anthropic".into(), model.into())),
        _ => provider_model(model),
    }
}

/// A serialised runnable at `field`: a sequence's model steps, each with the prompt before it.
fn runnable(
    node: &Value,
    field: &str,
    team: &mut Builder<'_>,
    steps: &mut Vec<(String, String)>,
) -> Result<(), ImportError> {
    let class = node.pointer("/id").and_then(Value::as_array).and_then(|id| id.last()).and_then(Value::as_str);
    let at = |key: &str| if field.is_empty() { key.to_owned() } else { format!("{field}.{key}") };
    match class {
        Some("RunnableSequence") => {
            let kwargs = node.get("kwargs").unwrap_or(&Value::Null);
            let mut parts: Vec<(String, &Value)> = Vec::new();
            parts.extend(kwargs.get("first").map(|v| (at("kwargs.first"), v)));
            if let Some(middle) = kwargs.get("middle").and_then(Value::as_array) {
                parts.extend(middle.iter().enumerate().map(|(i, v)| (at(&format!("kwargs.middle[{i}]")), v)));
            }
            parts.extend(kwargs.get("last").map(|v| (at("kwargs.last"), v)));
            let mut prompt: Option<String> = None;
            for (part_field, part) in parts {
                let part_class =
                    part.pointer("/id").and_then(Value::as_array).and_then(|id| id.last()).and_then(Value::as_str);
                match part_class {
                    Some(c) if c.ends_with("PromptTemplate") => prompt = prompt_text(part),
                    Some(c) if c.starts_with("Chat") || c.ends_with("LLM") || c == "OpenAI" => {
                        let model = runnable_model(c, part);
                        if model.is_none() {
                            team.note(format!(
                                "{part_field} ({c}) is not a provider Gatehouse has; it runs on the default."
                            ));
                        }
                        let role = prompt.take().unwrap_or_else(|| "a step of the chain".to_owned());
                        let name = team.agent(&format!("step{}", steps.len() + 1), &role, model);
                        steps.push((name.clone(), name));
                    }
                    Some(c) if c.ends_with("OutputParser") => {}
                    Some("RunnableSequence") => runnable(part, &part_field, team, steps)?,
                    Some(c @ ("RunnableBranch" | "RouterRunnable" | "RunnableParallel" | "RunnableLambda")) => {
                        return Err(bad(
                            format!("{part_field}.id"),
                            format!("a `{c}` decides at run time in your code and has no Gatehouse equivalent"),
                        ))
                    }
                    other => {
                        return Err(bad(
                            format!("{part_field}.id"),
                            format!("`{}` is not a prompt, model or output parser", other.unwrap_or("?")),
                        ))
                    }
                }
            }
            Ok(())
        }
        Some(other) => Err(bad(at("id"), format!("a `{other}` is not a runnable sequence"))),
        None => Err(bad(at("id"), "is required: a serialised runnable (`dumpd`)")),
    }
}

/// A prompt template's text: its `template`, or its messages' templates joined.
fn prompt_text(prompt: &Value) -> Option<String> {
    if let Some(template) = prompt.pointer("/kwargs/template").and_then(Value::as_str) {
        return Some(template.to_owned());
    }
    let messages = prompt.pointer("/kwargs/messages").and_then(Value::as_array)?;
    let texts: Vec<&str> =
        messages.iter().filter_map(|m| m.pointer("/kwargs/prompt/kwargs/template").and_then(Value::as_str)).collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// A chat model runnable's provider and model.
fn runnable_model(class: &str, part: &Value) -> Option<(String, String)> {
    let kwargs = part.get("kwargs")?;
    let model = text(kwargs, "model_name").or_else(|| text(kwargs, "model"))?;
    match class {
        "ChatOpenAI" | "AzureChatOpenAI" | "ChatOllama" | "ChatDeepSeek" | "OpenAI" => {
            Some(("openai".into(), model.into()))
        }
        "ChatAnthropic" => Some(("anthropic".into(), model.into())),
        _ => provider_model(model),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::import::{import, Defaults, Framework};

    fn defaults() -> Defaults {
        Defaults { provider: "scripted".into(), model: "chat".into() }
    }

    fn llm_chain(key: &str, template: &str) -> serde_json::Value {
        json!({"_type": "llm_chain", "output_key": key,
               "llm": {"_type": "openai-chat", "model_name": "gpt-4o-mini", "temperature": 0.2},
               "prompt": {"_type": "prompt", "template": template, "input_variables": ["title"]}})
    }

    #[test]
    fn a_sequential_chain_is_a_handoff_sequence_of_its_llm_chains() {
        let chain = json!({"_type": "sequential_chain", "chains": [
            llm_chain("synopsis", "Write a synopsis for {title}."),
            llm_chain("review", "Review this synopsis: {synopsis}")
        ]});
        let imported = import(Framework::Langchain, &chain.to_string(), &defaults()).unwrap();
        assert_eq!(
            imported.team[1],
            json!({"name": "review", "role": "Review this synopsis: {synopsis}", "provider": "openai", "model": "gpt-4o-mini", "tools": []})
        );
        assert_eq!(
            imported.pattern,
            Some(json!({"name": "chain", "type": "custom", "workflow": [
                {"step": "synopsis", "agent": "synopsis", "next_on_success": "review"},
                {"step": "review", "agent": "review"}
            ]}))
        );
    }

    #[test]
    fn a_runnable_sequence_makes_an_agent_of_each_model_with_the_prompt_before_it() {
        let prompt = |t: &str| json!({"lc": 1, "type": "constructor", "id": ["langchain", "prompts", "prompt", "PromptTemplate"], "kwargs": {"template": t}});
        let model = |class: &str, m: &str| json!({"lc": 1, "type": "constructor", "id": ["langchain", "chat_models", "x", class], "kwargs": {"model": m}});
        let parser = json!({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "output_parser", "StrOutputParser"], "kwargs": {}});
        let seq = json!({"lc": 1, "type": "constructor", "id": ["langchain", "schema", "runnable", "RunnableSequence"], "kwargs": {
            "first": prompt("Draft {topic}"),
            "middle": [model("ChatOpenAI", "gpt-4o"), parser, prompt("Polish: {draft}")],
            "last": model("ChatAnthropic", "claude-sonnet-4")
        }});
        let imported = import(Framework::Langchain, &seq.to_string(), &defaults()).unwrap();
        let summary: Vec<(String, String, String)> = imported
            .team
            .iter()
            .map(|a| {
                (
                    a["name"].as_str().unwrap().into(),
                    a["role"].as_str().unwrap().into(),
                    a["provider"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("step1".into(), "Draft {topic}".into(), "openai".into()),
                ("step2".into(), "Polish: {draft}".into(), "anthropic".into())
            ]
        );
    }

    #[test]
    fn routers_and_branches_are_refused_naming_the_field() {
        let router =
            json!({"_type": "sequential_chain", "chains": [llm_chain("a", "x"), {"_type": "llm_router_chain"}]});
        let e = import(Framework::Langchain, &router.to_string(), &defaults()).unwrap_err();
        assert_eq!(e.field, "chains[1]._type");
        assert!(e.message.contains("`llm_router_chain`"), "{e}");
        let branch = json!({"lc": 1, "id": ["langchain", "schema", "runnable", "RunnableSequence"], "kwargs": {
            "first": {"lc": 1, "id": ["langchain", "schema", "runnable", "RunnableBranch"], "kwargs": {}}}});
        let e = import(Framework::Langchain, &branch.to_string(), &defaults()).unwrap_err();
        assert_eq!(e.field, "kwargs.first.id");
        let empty =
            import(Framework::Langchain, r#"{"_type": "sequential_chain", "chains": []}"#, &defaults()).unwrap_err();
        assert_eq!(empty.message, "has no model step: nothing to make an agent of");
    }
}
