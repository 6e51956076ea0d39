//! Allow-rules: a reviewer's standing approval. "Always allow `deploy`
//! for `deployer`, with arguments like these, for the next hour (or until
//! revoked)": while a rule is live, an approval gate it matches passes the
//! moment it opens, recorded as `auto_approved` by `rule:<id>`.
//!
//! How arguments match ([`args_match`]): a pattern has the arguments'
//! shape. An object matches an object with exactly the same keys (an extra
//! or a missing key does not match), each value matching its pattern; an
//! array matches an array of the same length, element by element; a string
//! matches a string, where `*` stands for any run of characters (`\*` and
//! `\\` for a literal `*` and `\`); numbers, booleans and null match only
//! themselves. A rule without a pattern matches any arguments. So a rule
//! never matches arguments with a key its author did not see, and a
//! pattern built from a gate's own arguments ([`literal_pattern`], which
//! escapes their `*`) matches those arguments and nothing else.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{AllowRuleId, GateId};

/// Where a rule is.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AllowRuleStatus {
    /// It passes matching gates.
    #[default]
    Live,
    /// Its time ran out; it matches nothing.
    Expired,
    /// A reviewer revoked it; it matches nothing.
    Revoked,
}

impl AllowRuleStatus {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Expired => "expired",
            Self::Revoked => "revoked",
        }
    }
}

/// A standing approval of one action of one agent.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowRule {
    /// Its id; gates it passes are decided by `rule:<id>`.
    pub id: AllowRuleId,
    /// The agent whose gates it passes (only gates that agent opened itself).
    pub agent: String,
    /// The action (an approval gate's `action`, or a proposed action's name).
    pub action: String,
    /// The argument pattern: an object needs exactly its keys, an array its
    /// length, a string may use `*` for any characters (`\*` for a star),
    /// other values must be equal; `null` matches any arguments.
    pub args: Option<Value>,
    /// The reviewer who made it.
    pub created_by: String,
    /// When.
    pub created_at: DateTime<Utc>,
    /// When it stops matching; `null`: until revoked.
    pub expires_at: Option<DateTime<Utc>>,
    /// The gate whose decision made it, when it was made while deciding.
    #[serde(default)]
    pub gate_id: Option<GateId>,
    /// Why, in the reviewer's words.
    #[serde(default)]
    pub note: Option<String>,
    /// Live, expired or revoked, as of when it was read.
    #[serde(default)]
    pub status: AllowRuleStatus,
    /// When it was revoked.
    #[serde(default)]
    pub revoked_at: Option<DateTime<Utc>>,
    /// Who revoked it.
    #[serde(default)]
    pub revoked_by: Option<String>,
    /// How many gates it has passed.
    #[serde(default)]
    pub uses: u64,
    /// When it last passed one.
    #[serde(default)]
    pub last_used_at: Option<DateTime<Utc>>,
}

impl AllowRule {
    /// Its status at `now`.
    pub fn status_at(&self, now: DateTime<Utc>) -> AllowRuleStatus {
        if self.revoked_at.is_some() {
            AllowRuleStatus::Revoked
        } else if self.expires_at.is_some_and(|at| at <= now) {
            AllowRuleStatus::Expired
        } else {
            AllowRuleStatus::Live
        }
    }

    /// The rule with its status brought up to `now`.
    pub fn as_of(mut self, now: DateTime<Utc>) -> Self {
        self.status = self.status_at(now);
        self
    }

    /// Whether it passes an action of `agent` named `action` with `args` at `now`.
    pub fn matches(&self, agent: &str, action: &str, args: &Value, now: DateTime<Utc>) -> bool {
        self.status_at(now) == AllowRuleStatus::Live
            && self.agent == agent
            && self.action == action
            && self.args.as_ref().is_none_or(|pattern| args_match(pattern, args))
    }

    /// `rule:<id>`: who a gate it passed was decided by.
    pub fn decider(&self) -> String {
        format!("rule:{}", self.id)
    }

    /// Why a gate it passed went ahead: the rule, who made it, until when.
    pub fn reason(&self) -> String {
        let until = match self.expires_at {
            Some(at) => format!("until {}", at.format("%Y-%m-%d %H:%M UTC")),
            None => "until revoked".to_owned(),
        };
        let args = if self.args.is_some() { "with matching arguments" } else { "with any arguments" };
        format!(
            "allowed by rule {} that {} made at {}: always allow `{}` for {} {args}, {until}",
            self.id,
            self.created_by,
            self.created_at.format("%Y-%m-%d %H:%M UTC"),
            self.action,
            self.agent
        )
    }
}

/// An allow-rule made while deciding an approval gate: the decision's
/// `allow_rule`. It is made in the same transaction as the decision, by the
/// reviewer, for the gate's agent and action.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllowRuleRequest {
    /// For how long, in seconds (at most a year); absent or `null`: until revoked.
    #[serde(default)]
    pub for_secs: Option<u64>,
    /// The argument pattern; absent: exactly the arguments approved (the
    /// edited ones for an edit; each action's own on a gate of several).
    /// It must match the arguments approved.
    #[serde(default)]
    pub args: Option<Value>,
    /// Allow any arguments at all (then give no `args`).
    #[serde(default)]
    pub any_args: bool,
    /// Why, in the reviewer's words.
    #[serde(default)]
    pub note: Option<String>,
}

/// An allow-rule to make directly (not while deciding).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewAllowRule {
    /// The agent whose approval gates it passes.
    pub agent: String,
    /// The action.
    pub action: String,
    /// The argument pattern; required unless `any_args`.
    #[serde(default)]
    pub args: Option<Value>,
    /// Allow any arguments at all (then give no `args`).
    #[serde(default)]
    pub any_args: bool,
    /// For how long, in seconds (at most a year); absent or `null`: until revoked.
    #[serde(default)]
    pub for_secs: Option<u64>,
    /// Why.
    #[serde(default)]
    pub note: Option<String>,
}

/// Which rules to list.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllowRuleFilter {
    /// Only this agent's.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only rules in this status (as of now).
    #[serde(default)]
    pub status: Option<AllowRuleStatus>,
    /// At most this many, newest first (default: all).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// The longest a rule may last.
pub const MAX_FOR_SECS: u64 = 366 * 24 * 3600;
/// Whether `args` match `pattern` (see the module's rules).
pub fn args_match(pattern: &Value, args: &Value) -> bool {
    match (pattern, args) {
        (Value::String(p), Value::String(a)) => glob_match(p, a),
        (Value::Object(p), Value::Object(a)) => {
            p.len() == a.len() && p.iter().all(|(key, pv)| a.get(key).is_some_and(|av| args_match(pv, av)))
        }
        (Value::Array(p), Value::Array(a)) => p.len() == a.len() && p.iter().zip(a).all(|(pv, av)| args_match(pv, av)),
        (p, a) => p == a,
    }
}

/// A pattern matching exactly `args`: every string's `*` and `\` escaped.
pub fn literal_pattern(args: &Value) -> Value {
    match args {
        Value::String(s) => Value::String(s.replace('\\', "\\\\").replace('*', "\\*")),
        Value::Array(items) => Value::Array(items.iter().map(literal_pattern).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), literal_pattern(v))).collect()),
        other => other.clone(),
    }
}

/// One piece of a string pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Piece {
    Char(char),
    Star,
}

fn pieces(pattern: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some('*' | '\\')) => out.push(Piece::Char(chars.next().unwrap_or('\\'))),
            '*' => out.push(Piece::Star),
            c => out.push(Piece::Char(c)),
        }
    }
    out
}

/// Glob matching with `*` only: linear backtracking to the last star, so
/// it never takes more than `pattern × text` steps.
fn glob_match(pattern: &str, text: &str) -> bool {
    let p = pieces(pattern);
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(Piece::Star) => {
                last_star = Some((pi, ti));
                pi += 1;
            }
            Some(Piece::Char(c)) if *c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match last_star {
                Some((star, from)) => {
                    pi = star + 1;
                    ti = from + 1;
                    last_star = Some((star, from + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|piece| *piece == Piece::Star)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stars_match_any_run_of_characters_and_escaped_stars_only_themselves() {
        assert!(glob_match("v1.*", "v1.2.3"));
        assert!(glob_match("v1.*", "v1."));
        assert!(!glob_match("v1.*", "v2.0"));
        assert!(glob_match("*-staging-*", "eu-staging-3"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxbyy"));
        assert!(glob_match(r"SELECT \* FROM t", "SELECT * FROM t"));
        assert!(!glob_match(r"SELECT \* FROM t", "SELECT id FROM t"));
        assert!(glob_match(r"C:\\dir", r"C:\dir"));
        assert!(glob_match(r"C:\dir", r"C:\dir"), "a lone backslash is literal");
        assert!(glob_match("plain", "plain"));
        assert!(!glob_match("plain", "plainer"));
    }

    #[test]
    fn objects_match_with_exactly_their_keys() {
        let pattern = json!({"env": "staging", "version": "1.*"});
        assert!(args_match(&pattern, &json!({"version": "1.4", "env": "staging"})));
        assert!(!args_match(&pattern, &json!({"env": "prod", "version": "1.4"})));
        assert!(!args_match(&pattern, &json!({"env": "staging"})), "a missing key");
        assert!(!args_match(&pattern, &json!({"env": "staging", "version": "1.4", "force": true})), "an extra key");
        assert!(!args_match(&pattern, &json!(["staging"])));
    }

    #[test]
    fn nested_values_arrays_and_scalars_match_exactly() {
        let pattern = json!({"hosts": ["a-*", "b"], "replicas": 3, "dry_run": false, "opts": {"x": null}});
        assert!(args_match(
            &pattern,
            &json!({"hosts": ["a-1", "b"], "replicas": 3, "dry_run": false, "opts": {"x": null}})
        ));
        assert!(!args_match(
            &pattern,
            &json!({"hosts": ["a-1", "b", "c"], "replicas": 3, "dry_run": false, "opts": {"x": null}})
        ));
        assert!(!args_match(
            &pattern,
            &json!({"hosts": ["a-1", "b"], "replicas": 4, "dry_run": false, "opts": {"x": null}})
        ));
        assert!(!args_match(
            &pattern,
            &json!({"hosts": ["a-1", "b"], "replicas": "3", "dry_run": false, "opts": {"x": null}})
        ));
        assert!(!args_match(&json!({"n": "*"}), &json!({"n": 3})), "a star matches strings only");
    }

    #[test]
    fn a_literal_pattern_matches_its_own_arguments_and_nothing_else() {
        let args = json!({"query": "SELECT * FROM users", "path": r"C:\tmp\*", "n": [1, "x*"]});
        let pattern = literal_pattern(&args);
        assert!(args_match(&pattern, &args));
        assert!(!args_match(
            &pattern,
            &json!({"query": "SELECT password FROM users", "path": r"C:\tmp\*", "n": [1, "x*"]})
        ));
        assert!(!args_match(&pattern, &json!({"query": "SELECT * FROM users", "path": r"C:\tmp\a", "n": [1, "x*"]})));
        assert!(!args_match(&pattern, &json!({"query": "SELECT * FROM users", "path": r"C:\tmp\*", "n": [1, "xy"]})));
    }

    #[test]
    fn status_follows_revocation_and_expiry() {
        let now = Utc::now();
        let rule = AllowRule {
            id: AllowRuleId::new(),
            agent: "deployer".into(),
            action: "deploy".into(),
            args: None,
            created_by: "alice".into(),
            created_at: now,
            expires_at: Some(now + chrono::Duration::hours(1)),
            gate_id: None,
            note: None,
            status: AllowRuleStatus::Live,
            revoked_at: None,
            revoked_by: None,
            uses: 0,
            last_used_at: None,
        };
        assert!(rule.matches("deployer", "deploy", &json!({"anything": 1}), now));
        assert!(!rule.matches("other", "deploy", &json!({}), now));
        assert!(!rule.matches("deployer", "delete", &json!({}), now));
        let later = now + chrono::Duration::hours(1);
        assert_eq!(rule.status_at(later), AllowRuleStatus::Expired);
        assert!(!rule.matches("deployer", "deploy", &json!({}), later));
        let revoked = AllowRule { revoked_at: Some(now), ..rule };
        assert_eq!(revoked.status_at(now), AllowRuleStatus::Revoked);
    }
}
