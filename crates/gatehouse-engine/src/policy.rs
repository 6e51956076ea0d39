//! Human-in-the-loop run policies: the `hitl_config` a run is started with, its validation,
//! and `decide`, which says whether a newly opened gate may pass automatically or must wait
//! for a human. Also defines the audit trail's `DecisionType` classification.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// How a run treats its gates.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPolicy {
    /// Gates pass without review (unless a gate itself requires a human).
    Auto,
    /// Every reviewed gate waits for a human. The default: a human-review tool asks by default.
    #[default]
    RequireHuman,
    /// Gates pass automatically only while they clear the [`ReviewThresholds`].
    AutoWithThresholds,
}

/// Limits under which `auto_with_thresholds` lets a gate pass without a human.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReviewThresholds {
    /// Minimum model confidence, 0..=1.
    pub confidence_min: Option<f64>,
    /// Safety flags that force review (compared case-insensitively).
    pub safety_flags: Vec<String>,
    /// Maximum number of payload changes allowed without review.
    pub payload_changes_max: Option<u32>,
}

/// A run's human-in-the-loop configuration, as sent in `hitl_config`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HitlConfig {
    /// How gates are treated; defaults to `require_human`.
    pub run_policy: RunPolicy,
    /// Limits for `auto_with_thresholds` (required by it, ignored by the other policies).
    pub review_thresholds: Option<ReviewThresholds>,
    /// Gate kinds (snake_case) the policy reviews; empty means all kinds.
    pub allowed_actions: Vec<String>,
    /// Where to notify when a gate starts waiting.
    pub webhook_url: Option<String>,
}

/// A configuration mistake, naming the offending field.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PolicyError {
    /// `confidence_min` is NaN, infinite, or outside 0..=1.
    #[error("hitl_config.review_thresholds.confidence_min must be between 0 and 1, got {0}")]
    ConfidenceMinOutOfRange(f64),
    /// `auto_with_thresholds` was chosen without any thresholds.
    #[error("hitl_config.review_thresholds is required when run_policy is auto_with_thresholds")]
    MissingThresholds,
    /// An `allowed_actions` entry is blank; it would never match a gate kind.
    #[error("hitl_config.allowed_actions[{0}] must not be empty")]
    EmptyAllowedAction(usize),
    /// `webhook_url` is not an http(s) address with a host.
    #[error("hitl_config.webhook_url: {0}")]
    WebhookUrl(String),
}

impl PolicyError {
    /// The offending field.
    pub fn field(&self) -> String {
        match self {
            Self::ConfidenceMinOutOfRange(_) => "hitl_config.review_thresholds.confidence_min".into(),
            Self::MissingThresholds => "hitl_config.review_thresholds".into(),
            Self::EmptyAllowedAction(i) => format!("hitl_config.allowed_actions[{i}]"),
            Self::WebhookUrl(_) => "hitl_config.webhook_url".into(),
        }
    }
}

/// Checks a webhook target: an `http` or `https` address with a host, and
/// no user name or password in it. Says what is wrong otherwise.
pub fn check_webhook_url(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url.trim()).map_err(|e| format!("`{url}` is not an address ({e})"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{}:` is not allowed; a webhook is an http or https address", parsed.scheme()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{url}` names no host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("put no user name or password in the address".into());
    }
    Ok(())
}

impl HitlConfig {
    /// Checks the configuration; deserialization alone accepts values `decide` cannot use.
    pub fn validate(&self) -> Result<(), PolicyError> {
        if self.run_policy == RunPolicy::AutoWithThresholds && self.review_thresholds.is_none() {
            return Err(PolicyError::MissingThresholds);
        }
        let min = self.review_thresholds.as_ref().and_then(|t| t.confidence_min);
        // `contains` is false for NaN and infinities fall outside, so this covers finiteness.
        if let Some(min) = min.filter(|m| !(0.0..=1.0).contains(m)) {
            return Err(PolicyError::ConfidenceMinOutOfRange(min));
        }
        if let Some(i) = self.allowed_actions.iter().position(|a| a.trim().is_empty()) {
            return Err(PolicyError::EmptyAllowedAction(i));
        }
        match &self.webhook_url {
            Some(url) => check_webhook_url(url).map_err(PolicyError::WebhookUrl),
            None => Ok(()),
        }
    }
}

/// What the engine knows about a gate when it opens.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GateSignals {
    /// The gate kind in snake_case, e.g. `payload_review`.
    pub kind: String,
    /// The gate itself insists on a human regardless of policy.
    #[serde(default)]
    pub requires_human: bool,
    /// Model confidence, 0..=1, when reported.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Safety flags raised on the gate's content.
    #[serde(default)]
    pub safety_flags: Vec<String>,
    /// How many fields the payload changed, when counted.
    #[serde(default)]
    pub payload_changes: Option<u32>,
}

/// Whether a gate passes on its own or waits, with a readable reason for the audit trail.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PolicyOutcome {
    /// The gate resolves without a human.
    AutoPass {
        /// Why, as a readable sentence.
        reason: String,
    },
    /// The gate waits for a human.
    Wait {
        /// Why, as a readable sentence.
        reason: String,
    },
}

impl PolicyOutcome {
    /// True when a human must act.
    pub fn is_wait(&self) -> bool {
        matches!(self, Self::Wait { .. })
    }

    /// The human-readable reason.
    pub fn reason(&self) -> &str {
        match self {
            Self::AutoPass { reason } | Self::Wait { reason } => reason,
        }
    }
}

/// Decides a gate's fate. Rules, first match wins:
/// 1. the gate requires a human → wait;
/// 2. `allowed_actions` is non-empty and lacks the gate's kind → auto-pass (not reviewed);
/// 3. `auto` → auto-pass; 4. `require_human` → wait;
/// 5. `auto_with_thresholds` → wait if confidence is missing (while a minimum is set) or
///    below the minimum, a gate safety flag is listed, or payload changes exceed the maximum;
///    all failing reasons are joined with "; ". Otherwise auto-pass, listing what passed.
///
/// A gate with no payload count has nothing to compare against `payload_changes_max`
/// (e.g. an information review carries no payload), so it does not force review.
pub fn decide(config: &HitlConfig, signals: &GateSignals) -> PolicyOutcome {
    if signals.requires_human {
        return wait("gate requires a human".into());
    }
    let actions = &config.allowed_actions;
    if !actions.is_empty() && !actions.iter().any(|a| a.eq_ignore_ascii_case(&signals.kind)) {
        return pass(format!("run policy does not review {} gates", signals.kind));
    }
    match config.run_policy {
        RunPolicy::Auto => pass("run policy is auto".into()),
        RunPolicy::RequireHuman => wait("run policy requires a human".into()),
        RunPolicy::AutoWithThresholds => match &config.review_thresholds {
            Some(t) => check_thresholds(t, signals),
            // Invalid config (validate rejects it); asking a human is the safe reading.
            None => wait("run policy auto_with_thresholds has no review thresholds".into()),
        },
    }
}

fn check_thresholds(t: &ReviewThresholds, s: &GateSignals) -> PolicyOutcome {
    let mut failed = Vec::new();
    let mut passed = Vec::new();
    if let Some(min) = t.confidence_min {
        match s.confidence {
            None => failed.push(format!("confidence is unknown but the minimum is {min:.2}")),
            Some(c) if !c.is_finite() => failed.push(format!("confidence {c} is not a number")),
            Some(c) if c < min => failed.push(format!("confidence {c:.2} is below the minimum {min:.2}")),
            Some(c) => passed.push(format!("confidence {c:.2} ≥ {min:.2}")),
        }
    }
    let flagged = |f: &&String| t.safety_flags.iter().any(|x| x.eq_ignore_ascii_case(f));
    let before = failed.len();
    for f in s.safety_flags.iter().filter(flagged) {
        failed.push(format!("safety flag {f} requires review"));
    }
    if failed.len() == before {
        passed.push("no flagged safety issues".into());
    }
    if let (Some(max), Some(n)) = (t.payload_changes_max, s.payload_changes) {
        let noun = if n == 1 { "change" } else { "changes" };
        if n > max {
            let verb = if n == 1 { "exceeds" } else { "exceed" };
            failed.push(format!("{n} payload {noun} {verb} the maximum of {max}"));
        } else {
            passed.push(format!("{n} payload {noun} ≤ {max}"));
        }
    }
    if failed.is_empty() {
        pass(passed.join("; "))
    } else {
        wait(failed.join("; "))
    }
}

fn pass(reason: String) -> PolicyOutcome {
    PolicyOutcome::AutoPass { reason }
}

fn wait(reason: String) -> PolicyOutcome {
    PolicyOutcome::Wait { reason }
}

/// How a gate was resolved, as recorded in the audit trail.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionType {
    /// The run policy passed the gate without a human.
    AutoApproved,
    /// A human approved the payload as proposed.
    HumanApproved,
    /// A human approved after editing the payload.
    HumanEdited,
    /// A human rejected the gate.
    HumanRejected,
    /// A human answered a question or supplied information.
    HumanResponded,
    /// The engine resolved the gate itself, e.g. on timeout or cancellation.
    SystemDecided,
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTO: &str = r#"{"run_policy":"auto","review_thresholds":null,"allowed_actions":[]}"#;
    const HUMAN: &str = r#"{"run_policy":"require_human","review_thresholds":null,"allowed_actions":["information_review","payload_review","response_review"]}"#;
    const THRESH: &str = r#"{"run_policy":"auto_with_thresholds","review_thresholds":{"confidence_min":0.8,"safety_flags":["nsfw","pii"],"payload_changes_max":3},"allowed_actions":["payload_review","response_review"]}"#;

    #[test]
    fn webhook_targets_are_http_or_https_addresses_with_a_host() {
        for bad in ["file:///etc/passwd", "gopher://x:70/", "not a url", "http://", "https://u:p@hooks.example.com/"] {
            let c = HitlConfig { webhook_url: Some(bad.into()), ..HitlConfig::default() };
            let e = c.validate().unwrap_err();
            assert_eq!(e.field(), "hitl_config.webhook_url", "{bad}: {e}");
        }
        for good in ["http://127.0.0.1:9000/hook", "https://hooks.example.com/gatehouse?x=1"] {
            let c = HitlConfig { webhook_url: Some(good.into()), ..HitlConfig::default() };
            assert!(c.validate().is_ok(), "{good}");
        }
    }

    fn parse(json: &str) -> HitlConfig {
        let c: HitlConfig = serde_json::from_str(json).expect("the documented example parses");
        assert_eq!(c.validate(), Ok(()));
        c
    }

    fn gate(kind: &str, conf: Option<f64>, flags: &[&str], n: Option<u32>) -> GateSignals {
        GateSignals {
            kind: kind.to_owned(),
            confidence: conf,
            safety_flags: flags.iter().map(|f| f.to_string()).collect(),
            payload_changes: n,
            ..GateSignals::default()
        }
    }

    /// `decide` under a JSON config, rendered as "pass: reason" or "wait: reason".
    fn outcome(config: &str, signals: &GateSignals) -> String {
        match decide(&parse(config), signals) {
            PolicyOutcome::AutoPass { reason } => format!("pass: {reason}"),
            PolicyOutcome::Wait { reason } => format!("wait: {reason}"),
        }
    }

    #[test]
    fn seed_examples_parse_and_validate() {
        assert_eq!(parse(AUTO).run_policy, RunPolicy::Auto);
        assert_eq!(parse(HUMAN).allowed_actions.len(), 3);
        let t = parse(THRESH).review_thresholds.expect("thresholds present");
        assert_eq!((t.confidence_min, t.payload_changes_max), (Some(0.8), Some(3)));
        assert_eq!(t.safety_flags, ["nsfw", "pii"]);
    }

    #[test]
    fn default_config_requires_a_human() {
        assert_eq!(HitlConfig::default().run_policy, RunPolicy::RequireHuman);
        let out = outcome("{}", &gate("payload_review", None, &[], None));
        assert_eq!(out, "wait: run policy requires a human");
    }

    #[test]
    fn confidence_min_out_of_range_names_the_field() {
        let mut c = parse(THRESH);
        if let Some(t) = c.review_thresholds.as_mut() {
            t.confidence_min = Some(1.5);
        }
        let msg = "hitl_config.review_thresholds.confidence_min must be between 0 and 1, got 1.5";
        assert_eq!(c.validate().map_err(|e| e.to_string()), Err(msg.to_owned()));
    }

    #[test]
    fn auto_with_thresholds_without_thresholds_is_invalid_and_waits() {
        let json = r#"{"run_policy":"auto_with_thresholds"}"#;
        let c: HitlConfig = serde_json::from_str(json).expect("parses");
        assert_eq!(c.validate(), Err(PolicyError::MissingThresholds));
        assert!(decide(&c, &gate("payload_review", Some(1.0), &[], None)).is_wait());
    }

    #[test]
    fn gate_requiring_a_human_waits_even_under_auto() {
        let mut g = gate("payload_review", None, &[], None);
        g.requires_human = true;
        assert_eq!(outcome(AUTO, &g), "wait: gate requires a human");
    }

    #[test]
    fn kinds_outside_allowed_actions_pass_automatically() {
        let out = outcome(THRESH, &gate("information_review", None, &["nsfw"], None));
        assert_eq!(out, "pass: run policy does not review information_review gates");
    }

    #[test]
    fn auto_passes_and_require_human_waits() {
        let g = gate("payload_review", None, &[], None);
        assert_eq!(outcome(AUTO, &g), "pass: run policy is auto");
        assert_eq!(outcome(HUMAN, &g), "wait: run policy requires a human");
    }

    #[test]
    fn thresholds_that_all_pass_list_what_passed() {
        let out = outcome(THRESH, &gate("payload_review", Some(0.93), &["violence"], Some(1)));
        let expected = "pass: confidence 0.93 ≥ 0.80; no flagged safety issues; 1 payload change ≤ 3";
        assert_eq!(out, expected);
    }

    #[test]
    fn every_failing_threshold_is_reported() {
        let out = outcome(THRESH, &gate("payload_review", Some(0.62), &["NSFW", "pii"], Some(4)));
        let expected = "wait: confidence 0.62 is below the minimum 0.80; \
            safety flag NSFW requires review; safety flag pii requires review; \
            4 payload changes exceed the maximum of 3";
        assert_eq!(out, expected);
    }

    #[test]
    fn missing_or_nan_confidence_waits_when_a_minimum_is_set() {
        let out = outcome(THRESH, &gate("response_review", None, &[], None));
        assert_eq!(out, "wait: confidence is unknown but the minimum is 0.80");
        let out = outcome(THRESH, &gate("response_review", Some(f64::NAN), &[], None));
        assert_eq!(out, "wait: confidence NaN is not a number");
    }

    #[test]
    fn values_exactly_at_the_limits_pass() {
        let out = outcome(THRESH, &gate("payload_review", Some(0.8), &[], Some(3)));
        assert!(out.starts_with("pass: confidence 0.80 ≥ 0.80"), "{out}");
    }

    #[test]
    fn outcome_and_decision_type_serialize_in_snake_case() {
        let json = serde_json::to_value(pass("ok".into())).expect("serializes");
        assert_eq!(json, serde_json::json!({"outcome": "auto_pass", "reason": "ok"}));
        let d = serde_json::to_value(DecisionType::HumanEdited).expect("serializes");
        assert_eq!(d, "human_edited");
    }
}
