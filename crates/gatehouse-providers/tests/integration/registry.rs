//! The registry (tools to providers, the listing `GET /api/hitl/providers`
//! will show) and the scripted provider the demo runs on.

use std::collections::HashMap;
use std::sync::Arc;

use gatehouse_providers::scripted::{PayloadShape, Step};
use gatehouse_providers::{
    ConfigError, Fix, Provider as _, ProviderError, ProviderKind, ProviderRegistry, RunInput, ScriptedProvider, Tool,
};
use serde_json::json;

const KEY: &str = "sk-registry-0123456789abcdef";

fn registry(vars: &[(&str, &str)]) -> Result<ProviderRegistry, ConfigError> {
    let vars: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ProviderRegistry::from_lookup(|name| vars.get(name).cloned())
}

fn input(tool: &str, prompt: &str) -> RunInput {
    RunInput { tool: tool.into(), prompt: prompt.into(), ..RunInput::default() }
}

#[test]
fn the_listing_names_each_configured_provider_its_kind_and_tools_and_never_a_key() {
    let registry = registry(&[
        ("GATEHOUSE_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
        ("GATEHOUSE_OPENAI_MODELS", "llama3,qwen3"),
        ("GATEHOUSE_ANTHROPIC_API_KEY", KEY),
    ])
    .unwrap();
    let listing = registry.listing();
    let summary: Vec<(&str, ProviderKind, Option<&str>, Vec<&str>)> = listing
        .iter()
        .map(|p| (p.name.as_str(), p.kind, p.endpoint.as_deref(), p.tools.iter().map(|t| t.name.as_str()).collect()))
        .collect();
    assert_eq!(
        summary,
        [
            ("scripted", ProviderKind::Scripted, None, vec!["scripted:chat", "scripted:caption", "scripted:flaky"]),
            (
                "openai",
                ProviderKind::OpenaiCompatible,
                Some("http://127.0.0.1:11434/v1"),
                vec!["openai:llama3", "openai:qwen3"]
            ),
            (
                "anthropic",
                ProviderKind::Anthropic,
                Some("https://api.anthropic.com"),
                vec!["anthropic:claude-sonnet-4-5"]
            ),
        ]
    );
    let json = serde_json::to_string(&listing).unwrap();
    assert!(json.contains(r#""kind":"openai_compatible""#), "{json}");
    assert!(!json.contains(KEY) && !format!("{registry:?}").contains(KEY));

    let found = registry.resolve("openai:qwen3").unwrap();
    assert_eq!((found.provider.name(), found.tool.model.as_str()), ("openai", "qwen3"));
    assert_eq!(
        registry.resolve("openai:gpt-5").unwrap_err(),
        ProviderError::UnknownTool { tool: "openai:gpt-5".into() }
    );
}

#[test]
fn a_misconfigured_provider_stops_the_registry_naming_the_variable() {
    let error = registry(&[("GATEHOUSE_REPLICATE_API_KEY", KEY)]).unwrap_err();
    assert!(
        matches!(&error, ConfigError::Invalid { setting, .. } if setting == "GATEHOUSE_REPLICATE_MODELS"),
        "{error}"
    );
    assert!(!error.to_string().contains(KEY));
}

#[test]
fn a_tool_or_provider_name_can_be_registered_once() {
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(ScriptedProvider::demo())).unwrap();
    let again = registry.register(Arc::new(ScriptedProvider::demo())).unwrap_err();
    assert_eq!(again, ConfigError::DuplicateProvider { name: "scripted".into() });
    let twin =
        ScriptedProvider::new("other").with_tool(Tool::new("scripted:chat", "m", json!({})), PayloadShape::Chat, []);
    assert_eq!(
        registry.register(Arc::new(twin)).unwrap_err(),
        ConfigError::DuplicateTool { tool: "scripted:chat".into() }
    );
    assert_eq!(registry.listing().len(), 1);
}

#[tokio::test]
async fn the_demos_caption_tool_walks_through_a_suggested_fix_to_an_answer() {
    let registry = registry(&[]).unwrap();
    let found = registry.resolve("scripted:caption").unwrap();
    let (provider, tool) = (found.provider, found.tool);
    let mut run = input("scripted:caption", "Who is on the sofa?");
    run.inputs.insert("image_file".into(), json!("https://example.com/sofa.png"));
    let mut payload = provider.prepare(tool, &run).unwrap();
    // Valid, but the example's picture would be captioned instead of the user's.
    assert_eq!(payload.get("input_image"), Some(&json!("https://example.com/picture.png")));

    let report = provider.validate(tool, &payload);
    assert!(report.valid, "{report:?}");
    assert_eq!(report.issues[0].field, "image_file");
    let mapping = &report.suggestions[0];
    assert_eq!(mapping.fix, Fix::MapField { from: "image_file".into(), to: "input_image".into() });
    mapping.apply(&mut payload);
    assert_eq!(payload.get("input_image"), Some(&json!("https://example.com/sofa.png")));
    let report = provider.validate(tool, &payload);
    assert!(report.issues.is_empty() && report.suggestions.is_empty(), "{report:?}");

    let response = provider.call(tool, &payload).await.unwrap();
    assert_eq!(response.text, "A caption, as asked (\"Who is on the sofa?\"): a cat asleep on a windowsill.");
    assert_eq!(provider.audit(&response).cleaned, response.text);
}

#[tokio::test]
async fn the_flaky_tool_is_unavailable_once_then_answers_and_scripts_can_be_replaced() {
    let scripted = ScriptedProvider::demo();
    let registry = {
        let mut registry = ProviderRegistry::new();
        registry.register(Arc::new(ScriptedProvider::demo())).unwrap();
        registry
    };
    let found = registry.resolve("scripted:flaky").unwrap();
    let payload = found.provider.prepare(found.tool, &input("scripted:flaky", "ping")).unwrap();
    let first = found.provider.call(found.tool, &payload).await.unwrap_err();
    assert!(first.is_transient(), "{first:?}");
    for _ in 0..2 {
        assert_eq!(found.provider.call(found.tool, &payload).await.unwrap().text, "Answered on a later try: ping");
    }

    let tool = scripted.tools().iter().find(|t| t.name == "scripted:chat").unwrap().clone();
    let payload = scripted.prepare(&tool, &input("scripted:chat", "hello")).unwrap();
    let refused = ProviderError::Rejected {
        provider: "scripted".into(),
        status: 400,
        message: "no".into(),
        error_type: None,
        field: Some("messages".into()),
    };
    scripted.script("scripted:chat", [Step::Fail(refused.clone()), Step::Reply("{prompt}!".into())]);
    assert_eq!(scripted.call(&tool, &payload).await.unwrap_err(), refused);
    assert_eq!(scripted.call(&tool, &payload).await.unwrap().text, "hello!");
    let calls = scripted.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].payload, payload);
    assert_eq!(calls[0].payload.get("model"), Some(&json!("scripted-chat")));
}
