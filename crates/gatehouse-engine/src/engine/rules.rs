//! Allow-rules in the engine: made directly or with a reviewer's approval
//! (in the decision's transaction), listed, revoked, and matched as an
//! approval gate opens (in the transaction that opens it).
//!
//! A rule passes a gate only when nothing else says a human must look:
//! never a gate that `requires_human`, needs a quorum, names its deciders
//! or whose payload breaks its declared schema; and only a gate its agent
//! opened itself (the token opening it is the gate's agent), so no agent
//! can borrow another's rules by naming it. A gate of several actions
//! passes only when every action is allowed.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::allow_rule::{
    args_match, literal_pattern, AllowRule, AllowRuleFilter, AllowRuleRequest, AllowRuleStatus, NewAllowRule,
    MAX_FOR_SECS,
};
use crate::decision::{DecisionAction, DecisionInput};
use crate::engine::tx::{emit, load_run};
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::gate::{Gate, GateSpec, NewGate};
use crate::ids::AllowRuleId;
use crate::store::{ReadTx, Store, WriteTx};

impl<S: Store> Engine<S> {
    /// Makes an allow-rule directly, by `author`. Its `args` pattern is
    /// required unless `any_args` says any arguments will do.
    pub fn create_allow_rule(&self, new: NewAllowRule, author: &str) -> Result<AllowRule> {
        let new = self.redacted(new)?;
        let now = self.now();
        let agent = check_name("agent", &new.agent)?;
        let action = check_name("action", &new.action)?;
        let args = match (new.args, new.any_args) {
            (Some(_), true) => return Err(EngineError::invalid("args", "give a pattern or any_args: true, not both")),
            (None, false) => {
                return Err(EngineError::invalid(
                    "args",
                    "give the argument pattern, or any_args: true to allow any arguments",
                ))
            }
            (None, true) => None,
            (Some(pattern), false) => {
                check_pattern("args", &pattern)?;
                Some(self.redactor().redact_value(&pattern))
            }
        };
        let rule = AllowRule {
            id: AllowRuleId::new(),
            agent,
            action,
            args,
            created_by: author.to_owned(),
            created_at: now,
            expires_at: expiry("for_secs", new.for_secs, now)?,
            gate_id: None,
            note: check_note("note", new.note.as_deref())?.map(|n| self.redactor().redact_str(&n).into_owned()),
            status: AllowRuleStatus::Live,
            revoked_at: None,
            revoked_by: None,
            uses: 0,
            last_used_at: None,
        };
        let (stored, author) = (rule.clone(), author.to_owned());
        self.store().write(move |tx| {
            tx.insert_allow_rule(&stored)?;
            tx.append_event(bookkeeping(now, author, EventKind::AllowRuleCreated { rule: Box::new(stored) }))?;
            Ok(())
        })?;
        Ok(rule)
    }

    /// One allow-rule, its status as of now.
    pub fn allow_rule(&self, id: &AllowRuleId) -> Result<AllowRule> {
        let now = self.now();
        self.store().read(|r| r.allow_rule(id, now))?.ok_or_else(|| not_found(id))
    }

    /// Allow-rules, live and past, newest first.
    pub fn allow_rules(&self, filter: &AllowRuleFilter) -> Result<Vec<AllowRule>> {
        let now = self.now();
        self.store().read(|r| r.allow_rules(filter, now))
    }

    /// Revokes a rule at once: it matches nothing from now on. Revoking a
    /// rule already revoked changes nothing and returns it as it is (who
    /// revoked it first, and when); an expired rule may still be revoked.
    pub fn revoke_allow_rule(&self, id: &AllowRuleId, by: &str) -> Result<AllowRule> {
        let (id, by, now) = (id.clone(), by.to_owned(), self.now());
        self.store().write(move |tx| {
            let mut rule = tx.allow_rule(&id, now)?.ok_or_else(|| not_found(&id))?;
            if rule.revoked_at.is_some() {
                return Ok(rule);
            }
            rule.revoked_at = Some(now);
            rule.revoked_by = Some(by.clone());
            rule.status = AllowRuleStatus::Revoked;
            tx.update_allow_rule(&rule)?;
            tx.append_event(bookkeeping(now, by, EventKind::AllowRuleRevoked { rule: Box::new(rule.clone()) }))?;
            Ok(rule)
        })
    }
}

fn not_found(id: &AllowRuleId) -> EngineError {
    EngineError::NotFound { what: "allow-rule", id: id.to_string() }
}

fn bookkeeping(at: DateTime<Utc>, actor: String, kind: EventKind) -> EventBody {
    EventBody { at, run_id: None, session_id: None, user_id: None, actor, kind }
}

/// The rules that pass a gate as it opens.
#[derive(Debug, Default)]
pub(crate) struct RuleMatch {
    /// The rules used, each once, in the order first used.
    rules: Vec<AllowRule>,
    /// For a gate of several actions: the rule that allowed each, in the gate's order.
    per_action: Vec<AllowRuleId>,
}

impl RuleMatch {
    /// Who decided: `rule:<id>` of the (first) rule.
    pub(crate) fn decided_by(&self) -> String {
        self.rules.first().map(AllowRule::decider).unwrap_or_default()
    }

    /// Why: each rule used, who made it, until when.
    pub(crate) fn reason(&self) -> String {
        self.rules.iter().map(AllowRule::reason).collect::<Vec<_>>().join("; ")
    }

    /// Names each action's own rule as its decider.
    pub(crate) fn name_action_deciders(&self, gate: &mut Gate) {
        for (action, rule) in gate.actions.iter_mut().zip(&self.per_action) {
            if let Some(decision) = &mut action.decision {
                decision.decided_by = format!("rule:{rule}");
            }
        }
    }

    /// Counts one use of each rule.
    pub(crate) fn record_uses(&self, tx: &mut dyn WriteTx, now: DateTime<Utc>) -> Result<()> {
        for rule in &self.rules {
            let used = AllowRule { uses: rule.uses + 1, last_used_at: Some(now), ..rule.clone() };
            tx.update_allow_rule(&used)?;
        }
        Ok(())
    }
}

/// A call's arguments as rules see them: absent or `null` is `{}`.
fn arguments(args: Option<&Value>) -> Value {
    match args {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v) => v.clone(),
    }
}

/// The actions whose rules could pass a gate opened with `new`, each
/// once: its proposed actions' names, or an approval's own action.
pub(crate) fn actions_asked(new: &NewGate) -> Vec<String> {
    let mut names: Vec<String> = match (&new.spec, new.actions.is_empty()) {
        (GateSpec::Approval { action }, true) => vec![action.clone()],
        (GateSpec::Approval { .. }, false) => new.actions.iter().map(|a| a.name.clone()).collect(),
        _ => Vec::new(),
    };
    names.retain(|name| !name.trim().is_empty());
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names
}

/// The live rules read ahead for one agent's actions, with the gate's run
/// (`ReadTx::reads_before_open`); [`matching`] reads any other
/// action's (a declared gate may name another) itself.
pub(crate) struct LiveRules {
    agent: String,
    by_action: HashMap<String, Vec<AllowRule>>,
}

impl LiveRules {
    /// `rules`, one list for each of `actions`, live for `agent`.
    pub(crate) fn read(agent: &str, actions: &[String], rules: Vec<Vec<AllowRule>>) -> Self {
        Self { agent: agent.to_owned(), by_action: actions.iter().cloned().zip(rules).collect() }
    }

    /// The rules read ahead for `agent`'s `action`, if they were.
    fn take(&mut self, agent: &str, action: &str) -> Option<Vec<AllowRule>> {
        match self.agent == agent {
            true => self.by_action.remove(action),
            false => None,
        }
    }
}

/// The live rules that pass `gate`, opened by `opener`, at `now`: one for
/// each action it proposes (or for the gate's own action and payload), or
/// `None` when any is not allowed or the gate must wait for a human.
/// `ahead` holds the rules already read for some actions.
pub(crate) fn matching(
    tx: &dyn ReadTx,
    gate: &Gate,
    opener: &str,
    now: DateTime<Utc>,
    mut ahead: LiveRules,
) -> Result<Option<RuleMatch>> {
    let GateSpec::Approval { action } = &gate.spec else { return Ok(None) };
    let must_wait = gate.requires_human
        || gate.quorum.is_some()
        || !gate.deciders.is_empty()
        || !gate.payload_problems.is_empty()
        || gate.agent != opener
        || !gate.allowed_actions.contains(&DecisionAction::Approve);
    if must_wait {
        return Ok(None);
    }
    let calls: Vec<(&str, Value)> = if gate.actions.is_empty() {
        vec![(action.as_str(), arguments(gate.payload.as_ref()))]
    } else {
        if gate.actions.iter().any(|a| !a.allows(DecisionAction::Approve)) {
            return Ok(None);
        }
        gate.actions.iter().map(|a| (a.name.as_str(), arguments(Some(&a.args)))).collect()
    };
    let mut live: HashMap<&str, Vec<AllowRule>> = HashMap::new();
    let mut found = RuleMatch::default();
    for (name, args) in calls {
        if name.trim().is_empty() {
            return Ok(None);
        }
        if !live.contains_key(name) {
            let rules = match ahead.take(&gate.agent, name) {
                Some(rules) => rules,
                None => tx.live_allow_rules(&gate.agent, name, now)?,
            };
            live.insert(name, rules);
        }
        let rules = live.get(name).map(Vec::as_slice).unwrap_or_default();
        let Some(rule) = rules.iter().find(|r| r.matches(&gate.agent, name, &args, now)) else { return Ok(None) };
        if !found.rules.iter().any(|r| r.id == rule.id) {
            found.rules.push(rule.clone());
        }
        found.per_action.push(rule.id.clone());
    }
    Ok(Some(found))
}

/// A rule a decision asks for, checked before anything is written.
#[derive(Debug)]
pub(crate) struct PlannedRule {
    action: String,
    args: Option<Value>,
    expires_at: Option<DateTime<Utc>>,
    note: Option<String>,
}

/// Checks a decision's `allow_rule` against the gate and the decision, and
/// works out the rules it makes: for the gate's action, or for each open
/// action of a gate of several, with the arguments approved unless a
/// pattern (which must match them) or `any_args` is given.
pub(crate) fn plan(
    gate: &Gate,
    input: &DecisionInput,
    req: &AllowRuleRequest,
    now: DateTime<Utc>,
) -> Result<Vec<PlannedRule>> {
    let refuse = |reason: &str| Err(EngineError::invalid("allow_rule", reason));
    let GateSpec::Approval { action } = &gate.spec else {
        return refuse("only an approval gate's approval can also always allow its action");
    };
    if !matches!(input.action, DecisionAction::Approve | DecisionAction::Edit) {
        return refuse("only approve or edit can also always allow the action");
    }
    if gate.quorum.is_some() {
        return refuse("a vote on a quorum gate cannot make a rule: such gates always wait for their quorum");
    }
    if gate.requires_human || !gate.deciders.is_empty() {
        return refuse(
            "this gate always waits for a human (or its named deciders); a rule would never pass gates like it",
        );
    }
    let expires_at = expiry("allow_rule.for_secs", req.for_secs, now)?;
    let note = check_note("allow_rule.note", req.note.as_deref())?;
    if req.any_args && req.args.is_some() {
        return Err(EngineError::invalid("allow_rule.args", "give a pattern or any_args: true, not both"));
    }
    if let Some(pattern) = &req.args {
        check_pattern("allow_rule.args", pattern)?;
    }
    let planned = |action: &str, approved: &Value, pattern: Option<&Value>| PlannedRule {
        action: action.to_owned(),
        args: if req.any_args { None } else { Some(pattern.cloned().unwrap_or_else(|| literal_pattern(approved))) },
        expires_at,
        note: note.clone(),
    };
    if gate.actions.is_empty() {
        if action.trim().is_empty() {
            return refuse(
                "this gate names no action, so a rule could not tell its gates apart; ask the agent to name it",
            );
        }
        let approved = match input.action {
            DecisionAction::Edit => arguments(input.payload.as_ref()),
            _ => arguments(gate.payload.as_ref()),
        };
        if let Some(pattern) = &req.args {
            if !args_match(pattern, &approved) {
                return Err(EngineError::invalid(
                    "allow_rule.args",
                    "the pattern does not match the arguments you are approving; a rule allows what you approve",
                ));
            }
        }
        return Ok(vec![planned(action, &approved, req.args.as_ref())]);
    }
    if req.args.is_some() {
        return Err(EngineError::invalid(
            "allow_rule.args",
            "this gate proposes several actions: each gets a rule for its own arguments (or give any_args: true)",
        ));
    }
    if input.action != DecisionAction::Approve || !input.actions.is_empty() {
        return refuse("on a gate of several actions, a rule comes with approving every open action at once");
    }
    let mut out: Vec<PlannedRule> = Vec::new();
    for proposed in gate.actions.iter().filter(|a| a.decision.is_none()) {
        let rule = planned(&proposed.name, &arguments(Some(&proposed.args)), None);
        if !out.iter().any(|o| o.action == rule.action && o.args == rule.args) {
            out.push(rule);
        }
    }
    Ok(out)
}

/// Makes the planned rules for a gate just approved by `by`, each with
/// its `allow_rule_created` event on the gate's run.
pub(crate) fn create_planned(
    tx: &mut dyn WriteTx,
    gate: &Gate,
    planned: Vec<PlannedRule>,
    by: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    let run = load_run(tx, &gate.run_id)?;
    for p in planned {
        let rule = AllowRule {
            id: AllowRuleId::new(),
            agent: gate.agent.clone(),
            action: p.action,
            args: p.args,
            created_by: by.to_owned(),
            created_at: now,
            expires_at: p.expires_at,
            gate_id: Some(gate.id.clone()),
            note: p.note,
            status: AllowRuleStatus::Live,
            revoked_at: None,
            revoked_by: None,
            uses: 0,
            last_used_at: None,
        };
        tx.insert_allow_rule(&rule)?;
        emit(tx, &run, by, now, EventKind::AllowRuleCreated { rule: Box::new(rule) })?;
    }
    Ok(())
}

// What a rule to make must satisfy. The rule's own type (`allow_rule.rs`)
// knows nothing of the engine's errors; the engine checks it here.

/// The largest pattern, in bytes of JSON.
const MAX_PATTERN_BYTES: usize = 64 * 1024;
/// The deepest pattern.
const MAX_PATTERN_DEPTH: usize = 32;

/// Checks a rule's duration, naming `field`; returns its expiry from `now`.
fn expiry(field: &str, for_secs: Option<u64>, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
    match for_secs {
        None => Ok(None),
        Some(0) => Err(EngineError::invalid(field, "must be at least 1 second (or null: until revoked)")),
        Some(s) if s > MAX_FOR_SECS => {
            Err(EngineError::invalid(field, "must be at most a year (or null: until revoked)"))
        }
        Some(s) => Ok(Some(now + chrono::Duration::seconds(s as i64))),
    }
}

/// Checks a pattern's size and depth, naming `field`.
fn check_pattern(field: &str, pattern: &Value) -> Result<()> {
    if pattern.is_null() {
        return Err(EngineError::invalid(field, "a pattern cannot be null; use any_args: true to allow any arguments"));
    }
    let bytes = serde_json::to_vec(pattern).map(|b| b.len()).unwrap_or(usize::MAX);
    if bytes > MAX_PATTERN_BYTES {
        return Err(EngineError::invalid(field, format!("must be at most {MAX_PATTERN_BYTES} bytes of JSON")));
    }
    if depth(pattern) > MAX_PATTERN_DEPTH {
        return Err(EngineError::invalid(field, format!("must nest at most {MAX_PATTERN_DEPTH} levels")));
    }
    Ok(())
}

/// Checks a name (agent, action), naming `field`; returns it trimmed.
fn check_name(field: &str, name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() || name.len() > 255 {
        return Err(EngineError::invalid(field, "must be 1 to 255 characters"));
    }
    Ok(name.to_owned())
}

/// Checks a note, naming `field`; blank is none.
fn check_note(field: &str, note: Option<&str>) -> Result<Option<String>> {
    match note.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) if n.len() > 1000 => Err(EngineError::invalid(field, "must be at most 1000 characters")),
        other => Ok(other.map(str::to_owned)),
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_are_checked_naming_the_field() {
        let now = Utc::now();
        assert_eq!(expiry("for_secs", None, now).unwrap(), None);
        assert_eq!(expiry("for_secs", Some(60), now).unwrap(), Some(now + chrono::Duration::seconds(60)));
        assert!(expiry("allow_rule.for_secs", Some(0), now)
            .unwrap_err()
            .to_string()
            .starts_with("allow_rule.for_secs:"));
        assert!(expiry("for_secs", Some(MAX_FOR_SECS + 1), now).is_err());
        assert!(check_pattern("args", &Value::Null).is_err());
        let deep = (0..40).fold(json!(1), |v, _| json!([v]));
        assert!(check_pattern("args", &deep).unwrap_err().to_string().starts_with("args:"));
    }
}
