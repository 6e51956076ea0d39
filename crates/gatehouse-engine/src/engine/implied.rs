//! The state the event log implies: every run, gate, decision, turn,
//! context key, global memory key, plan revision, allow-rule and token as the events describe
//! them, replayed in log order. Audit verification compares each stored
//! row with it, so a row edited, added or removed behind the engine's back
//! shows as a difference from its events.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::allow_rule::AllowRule;
use crate::decision::Decision;
use crate::event::{EventBody, EventKind};
use crate::gate::{ActionDecision, BlockingMode, Gate, GateStatus, Priority, Released, TimeoutFallback};
use crate::plan::PlanRevision;
use crate::recording::Imported;
use crate::run::{Run, Turn};
use crate::token::Token;

/// Rows keyed as the tables key them.
#[derive(Default)]
pub(crate) struct Implied {
    pub runs: BTreeMap<String, Run>,
    pub gates: BTreeMap<String, Gate>,
    /// By decision id.
    pub decisions: BTreeMap<String, Decision>,
    pub turns: BTreeMap<String, Turn>,
    /// By (run, key).
    pub context: BTreeMap<(String, String), serde_json::Value>,
    /// The global memory, by key (events of no run, never purged).
    pub global_memory: BTreeMap<String, serde_json::Value>,
    /// By (run, revision).
    pub plans: BTreeMap<(String, u32), PlanRevision>,
    /// Each with the sequence number of the event that created it.
    pub rules: BTreeMap<String, (AllowRule, u64)>,
    pub tokens: BTreeMap<String, Token>,
    /// Gates auto-passed by each rule: how often, and when last.
    rule_uses: HashMap<String, (u64, DateTime<Utc>)>,
    /// Runs retention purged: their rows are gone and their events bodiless.
    pub purged_runs: HashSet<String>,
    /// Problems in the log itself (an event about a row no event made).
    pub problems: Vec<String>,
}

impl Implied {
    /// Applies the event at `seq`.
    pub fn apply(&mut self, seq: u64, body: EventBody) {
        let run_id = body.run_id.as_ref().map(|r| r.to_string()).unwrap_or_default();
        let at = body.at;
        match body.kind {
            EventKind::RunCreated { run } => {
                self.runs.insert(run.id.to_string(), *run);
            }
            EventKind::RunStatusChanged { from, to, reason } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.status = to;
                    if reason.is_some() || to != from {
                        run.status_reason = reason;
                    }
                    // A run that ended and lives again was retried.
                    if from.is_terminal() && !to.is_terminal() {
                        run.retries += 1;
                    }
                }
            }
            EventKind::TurnAdded { turn } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.turn_count = run.turn_count.max(turn.index);
                }
                self.turns.insert(turn.id.to_string(), *turn);
            }
            EventKind::RunControlChanged { step_mode, breakpoints } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.step_mode = step_mode;
                    run.control.breakpoints = breakpoints;
                }
            }
            EventKind::InstructionInjected { instruction } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.control.pending_instructions.push(instruction);
                }
            }
            EventKind::NextAgentSet { agent } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.control.next_agent = agent;
                }
            }
            EventKind::DirectiveDelivered { .. } => {
                if let Some(run) = self.run(seq, &run_id) {
                    run.control.pending_instructions.clear();
                    run.control.next_agent = None;
                }
            }
            EventKind::GateOpened { gate } => {
                self.gates.insert(gate.id.to_string(), *gate);
            }
            EventKind::GateAutoPassed { gate, decision } => {
                let rules: HashSet<&str> = std::iter::once(decision.decided_by.as_str())
                    .chain(gate.actions.iter().filter_map(|a| a.decision.as_ref().map(|d| d.decided_by.as_str())))
                    .filter_map(|by| by.strip_prefix("rule:"))
                    .collect();
                for rule in rules {
                    let uses = self.rule_uses.entry(rule.to_owned()).or_insert((0, at));
                    *uses = (uses.0 + 1, at);
                }
                self.decisions.insert(decision.id.to_string(), *decision);
                self.gates.insert(gate.id.to_string(), *gate);
            }
            EventKind::GateResolved { gate_id, decision } => {
                if let Some(gate) = self.gate(seq, gate_id.as_str()) {
                    settle(gate, &decision.actions);
                    gate.status = GateStatus::Resolved;
                    gate.closed_at = Some(decision.decided_at);
                    gate.decision = Some((*decision).clone());
                }
                self.decisions.insert(decision.id.to_string(), *decision);
            }
            EventKind::ActionsDecided { gate_id, decisions } => {
                if let Some(gate) = self.gate(seq, gate_id.as_str()) {
                    settle(gate, &decisions);
                }
            }
            EventKind::VoteRecorded { gate_id, vote } => {
                if let Some(gate) = self.gate(seq, gate_id.as_str()) {
                    gate.votes.push(vote);
                }
            }
            EventKind::GateEscalated { gate_id, priority, expires_at, notify, .. } => {
                if let Some(gate) = self.gate(seq, gate_id.as_str()) {
                    gate.priority = priority;
                    if gate.expires_at != expires_at {
                        // The timeout fallback: urgent, a new window, then a plain expiry.
                        gate.priority = Priority::Urgent;
                        gate.expires_at = expires_at;
                        gate.on_timeout = TimeoutFallback::Expire;
                    } else if let Some(escalation) = &mut gate.escalation {
                        // The escalation's wait: who it names may decide too.
                        escalation.escalated_at = Some(at);
                        if !gate.deciders.is_empty() {
                            for name in notify {
                                if !gate.deciders.contains(&name) {
                                    gate.deciders.push(name);
                                }
                            }
                        }
                    }
                }
            }
            EventKind::GateReleased { gate_id, .. } => {
                if let Some(gate) = self.gate(seq, gate_id.as_str()) {
                    gate.released = Some(Released { by: body.actor.clone(), at, from_mode: gate.mode });
                    gate.mode = BlockingMode::Async;
                }
            }
            EventKind::GateExpired { gate_id, reason } => {
                self.close(seq, gate_id.as_str(), GateStatus::Expired, reason, at)
            }
            EventKind::GateCancelled { gate_id, reason } => {
                self.close(seq, gate_id.as_str(), GateStatus::Cancelled, reason, at)
            }
            EventKind::ContextSet { key, new, .. } => {
                self.context.insert((run_id, key), new);
            }
            EventKind::ContextDeleted { key, .. } => {
                self.context.remove(&(run_id, key));
            }
            EventKind::GlobalMemorySet { key, new, .. } => {
                self.global_memory.insert(key, new);
            }
            EventKind::GlobalMemoryDeleted { key, .. } => {
                self.global_memory.remove(&key);
            }
            EventKind::PlanRevised { revision } => {
                self.plans.insert((run_id, revision.revision), *revision);
            }
            EventKind::AllowRuleCreated { rule } => {
                self.rules.insert(rule.id.to_string(), (*rule, seq));
            }
            EventKind::AllowRuleRevoked { rule } => {
                let made = self.rules.get(rule.id.as_str()).map_or(seq, |(_, made)| *made);
                self.rules.insert(rule.id.to_string(), (*rule, made));
            }
            EventKind::RecordingImported { events, runs } => {
                // The recording's own events were appended just before this
                // one; its runs' rows were imported with them, but not the
                // allow-rules they made, which stay in the other database.
                let first = seq.saturating_sub(events);
                self.rules.retain(|_, (_, made)| *made < first);
                // Its runs and gates carry the import's mark.
                let mark = Imported { at, by: body.actor.clone() };
                let runs: HashSet<String> = runs.iter().map(|r| r.to_string()).collect();
                for run in self.runs.values_mut().filter(|r| runs.contains(r.id.as_str())) {
                    run.imported = Some(mark.clone());
                }
                for gate in self.gates.values_mut().filter(|g| runs.contains(g.run_id.as_str())) {
                    gate.imported = Some(mark.clone());
                }
            }
            EventKind::TokenCreated { token } => {
                self.tokens.insert(token.id.clone(), token);
            }
            EventKind::TokenRevoked { token_id } => match self.tokens.get_mut(&token_id) {
                Some(token) => token.revoked_at = Some(at),
                None => self.problems.push(format!("event {seq} revokes token {token_id}, which no event created")),
            },
            EventKind::RetentionPurged { runs, .. } => {
                for run in runs {
                    let run = run.to_string();
                    self.forget_run(&run);
                    self.purged_runs.insert(run);
                }
            }
            // Scores feed agents' ratings, kept as running tallies, not as records.
            EventKind::ScoreRecorded { .. } | EventKind::ResolutionRefused { .. } => {}
            // Alerts describe figures, not stored rows.
            EventKind::AlertRaised { .. } | EventKind::AlertCleared { .. } => {}
            // A kind added later changes no row verification reads until it is handled here.
            #[allow(unreachable_patterns)]
            _ => {}
        }
    }

    /// Each allow-rule's uses as the auto-passed gates count them, with the
    /// last one's time; `None` once retention purged gates that may have used it.
    pub fn rule_uses(&self, rule: &str) -> Option<(u64, Option<DateTime<Utc>>)> {
        if !self.uses_countable() {
            return None;
        }
        Some(self.rule_uses.get(rule).map_or((0, None), |(n, at)| (*n, Some(*at))))
    }

    /// Whether every gate that used a rule is still in the log.
    pub fn uses_countable(&self) -> bool {
        self.purged_runs.is_empty()
    }

    fn run(&mut self, seq: u64, id: &str) -> Option<&mut Run> {
        if !self.runs.contains_key(id) {
            self.problems.push(format!("event {seq} changes run {id}, which no event created"));
        }
        self.runs.get_mut(id)
    }

    fn gate(&mut self, seq: u64, id: &str) -> Option<&mut Gate> {
        if !self.gates.contains_key(id) {
            self.problems.push(format!("event {seq} changes gate {id}, which no event opened"));
        }
        self.gates.get_mut(id)
    }

    fn close(&mut self, seq: u64, id: &str, status: GateStatus, reason: String, at: DateTime<Utc>) {
        if let Some(gate) = self.gate(seq, id) {
            gate.status = status;
            gate.status_reason = Some(reason);
            gate.closed_at = Some(at);
        }
    }

    fn forget_run(&mut self, run: &str) {
        self.runs.remove(run);
        self.gates.retain(|_, g| g.run_id.as_str() != run);
        self.decisions.retain(|_, d| d.run_id.as_str() != run);
        self.turns.retain(|_, t| t.run_id.as_str() != run);
        self.context.retain(|(r, _), _| r != run);
        self.plans.retain(|(r, _), _| r != run);
    }
}

/// Records decisions on a gate's proposed actions, each by its id.
fn settle(gate: &mut Gate, decisions: &[ActionDecision]) {
    for decision in decisions {
        if let Some(action) = gate.actions.iter_mut().find(|a| a.id == decision.id) {
            action.decision = Some(decision.clone());
        }
    }
}
