//! Who sets how much review there is. People (the server's configuration,
//! a reviewer or an admin) set the least review an agent's runs and gates
//! get, its [`ReviewFloor`]; an agent may ask for more review, never for
//! less. [`Oversight`] picks the floor for an agent (by name, then by its
//! token's teams, then the default) and says what in an agent's request
//! would weaken it, naming the field and the rule.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::gate::{NewGate, TimeoutFallback};
use crate::policy::{HitlConfig, ReviewThresholds, RunPolicy};
use crate::run::NewRun;

/// The review people configured: a floor for every agent, and floors for
/// agents by name and for tokens' teams. Read from the server's oversight
/// file (`serve --oversight FILE`); the default floor asks a human for
/// every gate and lets no timeout approve.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Oversight {
    /// The floor of every agent without one of its own.
    pub default: ReviewFloor,
    /// Floors by agent name (the name on its token).
    pub agents: BTreeMap<String, ReviewFloor>,
    /// Floors by team (`gatehouse token create --team`); an agent named in
    /// `agents` uses its own, else the first of its token's teams listed here.
    pub teams: BTreeMap<String, ReviewFloor>,
}

/// The least review an agent's runs and gates get.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReviewFloor {
    /// The run policy an agent's runs get when it asks for none, and the
    /// weakest it may ask for (`require_human` unless configured).
    pub hitl_config: HitlConfig,
    /// Whether the agent's gates may approve themselves when nobody
    /// answers in time (`on_timeout: approve`).
    pub timeout_may_approve: bool,
    /// The lowest quality score at which its runs' quality gates may pass
    /// without a human (`protocol.auto_approve_threshold`); none: never.
    pub auto_approve_threshold: Option<f64>,
}

/// What in an agent's request would weaken the review people set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Weakening {
    /// The field, e.g. `hitl_config.run_policy`.
    pub field: String,
    /// The rule it breaks, as a sentence.
    pub rule: String,
}

impl Weakening {
    fn new(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self { field: field.into(), rule: rule.into() }
    }
}

impl std::fmt::Display for Weakening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.rule)
    }
}

impl From<Weakening> for crate::error::EngineError {
    fn from(w: Weakening) -> Self {
        Self::Weakens { field: w.field, rule: w.rule }
    }
}

const ASK_MORE: &str = "an agent may ask for more review than people set for it, never for less";

impl Oversight {
    /// Checks the configuration: every floor's run policy must be valid.
    pub fn validate(&self) -> Result<(), String> {
        let floors = std::iter::once(("default".to_owned(), &self.default))
            .chain(self.agents.iter().map(|(n, f)| (format!("agents.{n}"), f)))
            .chain(self.teams.iter().map(|(n, f)| (format!("teams.{n}"), f)));
        for (name, floor) in floors {
            floor.hitl_config.validate().map_err(|e| format!("{name}: {e}"))?;
            if let Some(url) = &floor.hitl_config.webhook_url {
                crate::policy::check_webhook_url(url).map_err(|e| format!("{name}.hitl_config.webhook_url: {e}"))?;
            }
            if floor.auto_approve_threshold.is_some_and(|t| !(1.0..=5.0).contains(&t)) {
                return Err(format!("{name}.auto_approve_threshold: must be a score from 1 to 5"));
            }
        }
        Ok(())
    }

    /// The floor for an agent named `agent` whose token has `teams`.
    pub fn floor(&self, agent: &str, teams: &[String]) -> &ReviewFloor {
        self.agents.get(agent).or_else(|| teams.iter().find_map(|t| self.teams.get(t))).unwrap_or(&self.default)
    }
}

impl ReviewFloor {
    /// Fills in what the agent did not ask for (`asked` false: it sent no
    /// `hitl_config`) and checks the rest against this floor. `agent` is the
    /// asking agent's name.
    pub fn apply_to_run(&self, new: &mut NewRun, asked: bool) -> Result<(), Weakening> {
        if asked {
            check_config(&self.hitl_config, &new.hitl_config)?;
        } else {
            new.hitl_config = self.hitl_config.clone();
        }
        if let Some(t) = new.protocol.auto_approve_threshold {
            match self.auto_approve_threshold {
                Some(floor) if t >= floor => {}
                Some(floor) => {
                    return Err(Weakening::new(
                        "protocol.auto_approve_threshold",
                        format!("{ASK_MORE}: quality gates may pass on their own only at a score of {floor} or more"),
                    ))
                }
                None => {
                    return Err(Weakening::new(
                        "protocol.auto_approve_threshold",
                        format!("{ASK_MORE}: this agent's quality gates are always scored by a person"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Checks a gate an agent (`agent`) opens against this floor.
    pub fn check_gate(&self, new: &NewGate, agent: &str) -> Result<(), Weakening> {
        if new.on_timeout == TimeoutFallback::Approve && !self.timeout_may_approve {
            return Err(Weakening::new(
                "on_timeout",
                format!("{ASK_MORE}: a gate of this agent may not approve itself when nobody answers in time"),
            ));
        }
        if let Some(i) = new.deciders.iter().position(|d| d.trim() == agent) {
            return Err(Weakening::new(
                format!("deciders[{i}]"),
                "an agent may not name itself among the people who decide its gates",
            ));
        }
        Ok(())
    }
}

/// How much review a run policy gives, least first.
fn rank(policy: RunPolicy) -> u8 {
    match policy {
        RunPolicy::Auto => 0,
        RunPolicy::AutoWithThresholds => 1,
        RunPolicy::RequireHuman => 2,
    }
}

/// Whether `asked` reviews at least everything `floor` reviews.
fn check_config(floor: &HitlConfig, asked: &HitlConfig) -> Result<(), Weakening> {
    if let Some(url) = &asked.webhook_url {
        if floor.webhook_url.as_deref() != Some(url.as_str()) {
            return Err(Weakening::new(
                "hitl_config.webhook_url",
                "webhook targets are set by people: the server's configuration, or a reviewer or admin for a run",
            ));
        }
    }
    if rank(asked.run_policy) < rank(floor.run_policy) {
        return Err(Weakening::new(
            "hitl_config.run_policy",
            format!(
                "{ASK_MORE}: the least this agent may ask for is `{}`, not `{}`",
                policy_name(floor.run_policy),
                policy_name(asked.run_policy)
            ),
        ));
    }
    if asked.run_policy == RunPolicy::AutoWithThresholds && floor.run_policy == RunPolicy::AutoWithThresholds {
        let none = ReviewThresholds::default();
        let f = floor.review_thresholds.as_ref().unwrap_or(&none);
        let a = asked.review_thresholds.as_ref().unwrap_or(&none);
        check_thresholds(f, a)?;
    }
    // A non-empty list reviews only the kinds named; every other kind passes.
    if !asked.allowed_actions.is_empty() {
        let named = |list: &[String], kind: &str| list.iter().any(|k| k.eq_ignore_ascii_case(kind));
        let missing = if floor.allowed_actions.is_empty() {
            Some("every kind of gate".to_owned())
        } else {
            floor.allowed_actions.iter().find(|k| !named(&asked.allowed_actions, k)).map(|k| format!("`{k}` gates"))
        };
        if let Some(missing) = missing {
            return Err(Weakening::new(
                "hitl_config.allowed_actions",
                format!("{ASK_MORE}: its runs must review {missing}"),
            ));
        }
    }
    Ok(())
}

fn check_thresholds(floor: &ReviewThresholds, asked: &ReviewThresholds) -> Result<(), Weakening> {
    if let Some(min) = floor.confidence_min {
        if asked.confidence_min.is_none_or(|a| a < min) {
            return Err(Weakening::new(
                "hitl_config.review_thresholds.confidence_min",
                format!("{ASK_MORE}: the minimum confidence may not be below {min}"),
            ));
        }
    }
    let listed = |flag: &String| asked.safety_flags.iter().any(|a| a.eq_ignore_ascii_case(flag));
    if let Some(flag) = floor.safety_flags.iter().find(|f| !listed(f)) {
        return Err(Weakening::new(
            "hitl_config.review_thresholds.safety_flags",
            format!("{ASK_MORE}: the safety flag `{flag}` must keep forcing review"),
        ));
    }
    if let Some(max) = floor.payload_changes_max {
        if asked.payload_changes_max.is_none_or(|a| a > max) {
            return Err(Weakening::new(
                "hitl_config.review_thresholds.payload_changes_max",
                format!("{ASK_MORE}: at most {max} payload changes may pass without review"),
            ));
        }
    }
    Ok(())
}

fn policy_name(policy: RunPolicy) -> &'static str {
    match policy {
        RunPolicy::Auto => "auto",
        RunPolicy::AutoWithThresholds => "auto_with_thresholds",
        RunPolicy::RequireHuman => "require_human",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> HitlConfig {
        serde_json::from_value(v).expect("a run policy")
    }

    fn floor(v: serde_json::Value) -> ReviewFloor {
        ReviewFloor { hitl_config: config(v), ..ReviewFloor::default() }
    }

    fn ask(floor: &ReviewFloor, v: serde_json::Value) -> Result<NewRun, Weakening> {
        let mut new = NewRun { hitl_config: config(v), ..NewRun::default() };
        floor.apply_to_run(&mut new, true).map(|()| new)
    }

    #[test]
    fn an_agent_may_not_ask_for_auto_under_the_default_floor() {
        let e = ask(&ReviewFloor::default(), json!({"run_policy": "auto"})).unwrap_err();
        assert_eq!(e.field, "hitl_config.run_policy");
        assert!(e.rule.contains("`require_human`, not `auto`"), "{e}");
        let e = ask(
            &ReviewFloor::default(),
            json!({"run_policy": "auto_with_thresholds",
            "review_thresholds": {"confidence_min": 0.99}}),
        )
        .unwrap_err();
        assert_eq!(e.field, "hitl_config.run_policy");
    }

    #[test]
    fn an_agent_may_always_ask_for_more_review() {
        let lax = floor(json!({"run_policy": "auto"}));
        assert!(ask(&lax, json!({"run_policy": "require_human"})).is_ok());
        assert!(ask(&lax, json!({"run_policy": "auto_with_thresholds", "review_thresholds": {}})).is_ok());
        let thresholds = floor(json!({"run_policy": "auto_with_thresholds",
            "review_thresholds": {"confidence_min": 0.8, "safety_flags": ["pii"], "payload_changes_max": 2}}));
        assert!(ask(
            &thresholds,
            json!({"run_policy": "auto_with_thresholds",
            "review_thresholds": {"confidence_min": 0.9, "safety_flags": ["PII", "nsfw"], "payload_changes_max": 1}})
        )
        .is_ok());
    }

    #[test]
    fn looser_thresholds_name_the_threshold_they_loosen() {
        let f = floor(json!({"run_policy": "auto_with_thresholds",
            "review_thresholds": {"confidence_min": 0.8, "safety_flags": ["pii"], "payload_changes_max": 2}}));
        let base = json!({"confidence_min": 0.8, "safety_flags": ["pii"], "payload_changes_max": 2});
        let with = |k: &str, v: serde_json::Value| {
            let mut t = base.clone();
            t[k] = v;
            ask(&f, json!({"run_policy": "auto_with_thresholds", "review_thresholds": t})).unwrap_err().field
        };
        assert_eq!(with("confidence_min", json!(0.5)), "hitl_config.review_thresholds.confidence_min");
        assert_eq!(with("confidence_min", json!(null)), "hitl_config.review_thresholds.confidence_min");
        assert_eq!(with("safety_flags", json!([])), "hitl_config.review_thresholds.safety_flags");
        assert_eq!(with("payload_changes_max", json!(3)), "hitl_config.review_thresholds.payload_changes_max");
    }

    #[test]
    fn reviewing_only_some_kinds_is_less_review() {
        let e = ask(&ReviewFloor::default(), json!({"allowed_actions": ["payload_review"]})).unwrap_err();
        assert_eq!(e.field, "hitl_config.allowed_actions");
        let some = floor(json!({"allowed_actions": ["payload_review"]}));
        assert!(ask(&some, json!({"allowed_actions": ["payload_review", "approval"]})).is_ok());
        assert!(ask(&some, json!({})).is_ok(), "reviewing every kind is more");
        assert!(ask(&some, json!({"allowed_actions": ["approval"]})).is_err());
    }

    #[test]
    fn webhooks_come_from_people() {
        let e = ask(&ReviewFloor::default(), json!({"webhook_url": "http://169.254.169.254/latest"})).unwrap_err();
        assert_eq!(e.field, "hitl_config.webhook_url");
        let set = floor(json!({"webhook_url": "https://hooks.example.com/a"}));
        assert!(ask(&set, json!({"webhook_url": "https://hooks.example.com/a"})).is_ok(), "repeating it is fine");
    }

    #[test]
    fn a_run_that_asks_nothing_gets_the_floor() {
        let f = floor(json!({"run_policy": "auto"}));
        let mut new = NewRun::default();
        f.apply_to_run(&mut new, false).unwrap();
        assert_eq!(new.hitl_config.run_policy, RunPolicy::Auto);
    }

    #[test]
    fn quality_gates_pass_on_their_own_only_where_people_allow_it() {
        let mut new = NewRun::default();
        new.protocol.auto_approve_threshold = Some(3.0);
        let e = ReviewFloor::default().apply_to_run(&mut new.clone(), false).unwrap_err();
        assert_eq!(e.field, "protocol.auto_approve_threshold");
        let f = ReviewFloor { auto_approve_threshold: Some(4.0), ..ReviewFloor::default() };
        assert!(f.apply_to_run(&mut new.clone(), false).is_err());
        new.protocol.auto_approve_threshold = Some(4.5);
        assert!(f.apply_to_run(&mut new, false).is_ok());
    }

    #[test]
    fn an_agents_gate_may_not_approve_itself_on_timeout_or_name_itself_a_decider() {
        let f = ReviewFloor::default();
        let mut gate = NewGate::approval("rm -rf /prod", "Wipe prod?", json!({}));
        gate.on_timeout = TimeoutFallback::Approve;
        assert_eq!(f.check_gate(&gate, "bot").unwrap_err().field, "on_timeout");
        let allowed = ReviewFloor { timeout_may_approve: true, ..ReviewFloor::default() };
        assert!(allowed.check_gate(&gate, "bot").is_ok());
        let mut gate = NewGate::approval("rm -rf /prod", "Wipe prod?", json!({}));
        gate.deciders = vec!["alice".into(), "bot".into()];
        assert_eq!(f.check_gate(&gate, "bot").unwrap_err().field, "deciders[1]");
    }

    #[test]
    fn the_floor_is_the_agents_own_then_its_teams_then_the_default() {
        let o: Oversight = serde_json::from_value(json!({
            "agents": {"ci": {"hitl_config": {"run_policy": "auto"}}},
            "teams": {"ops": {"timeout_may_approve": true}}
        }))
        .unwrap();
        assert_eq!(o.floor("ci", &["ops".into()]).hitl_config.run_policy, RunPolicy::Auto);
        assert!(o.floor("deployer", &["ops".into()]).timeout_may_approve);
        assert_eq!(o.floor("deployer", &[]), &ReviewFloor::default());
        assert!(o.validate().is_ok());
        let bad: Oversight =
            serde_json::from_value(json!({"agents": {"x": {"hitl_config": {"run_policy": "auto_with_thresholds"}}}}))
                .unwrap();
        assert!(bad.validate().unwrap_err().starts_with("agents.x:"));
        assert!(serde_json::from_value::<Oversight>(json!({"defualt": {}})).is_err(), "a typo is an error");
    }
}
