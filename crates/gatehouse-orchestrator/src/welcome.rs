//! The runs a new desktop user finds on first start: two orchestrated runs
//! with the scripted provider, waiting for a first review (a
//! payload review, and goal collaboration), so the panel shows
//! what Gatehouse does before any agent is connected. No network, no keys.

use gatehouse_engine::NewRun;
use serde_json::{json, Value};

/// Each welcome run's input and settings.
pub fn runs() -> Vec<(Value, NewRun)> {
    let titled = |title: &str| NewRun { title: title.to_owned(), ..NewRun::default() };
    vec![
        (
            json!({"tool": "scripted:chat",
                "prompt": "Draft a short note to the team announcing that reviews now happen in Gatehouse"}),
            titled("Welcome: review a model call (payload, then answer)"),
        ),
        (
            json!({"tool": "scripted:chat", "prompt": "Plan the first week of using Gatehouse with our agents",
                "collaborate": true}),
            titled("Welcome: agree a goal and a plan with the model"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use gatehouse_providers::ProviderRegistry;

    #[test]
    fn every_welcome_run_is_a_valid_orchestrated_input() {
        let registry = ProviderRegistry::from_lookup(|_| None).unwrap();
        for (input, _) in super::runs() {
            crate::spec::parse(&input, &registry).expect("a valid welcome run");
        }
    }
}
