//! Audit verification. The chain: gap-free sequence numbers, each body
//! matching its hash, each link chained to the one before (plain SHA-256,
//! or HMAC with the store's audit key; plain links only before the first
//! keyed one), the head matching an anchor kept elsewhere. The rows: every
//! run, gate, decision, turn, context key, plan revision, allow-rule and
//! token compared with the state the log implies.

use std::collections::{BTreeMap, HashSet};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::allow_rule::AllowRule;
use crate::decision::Decision;
use crate::engine::implied::Implied;
use crate::engine::Engine;
use crate::error::Result;
use crate::event::{self, AuditAnchor, AuditKey, EventBody, EventRow};
use crate::gate::Gate;
use crate::plan::PlanRevision;
use crate::run::{Run, Turn};
use crate::store::{AuditTable, ReadTx, Store, StoredRow};
use crate::token::Token;

/// The result of verifying the audit log.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    /// Events checked.
    pub events: u64,
    /// Events whose bodies retention removed (hashes still checked).
    pub purged_events: u64,
    /// Logged decisions compared with the stored ones (rows and gates').
    pub decisions_checked: u64,
    /// Stored rows compared with the state the log implies.
    #[serde(default)]
    pub rows_checked: u64,
    /// The newest event's sequence number.
    #[serde(default)]
    pub head_seq: u64,
    /// The newest hash, hex: anchor it elsewhere to detect a rewritten log.
    pub head_hash: String,
    /// Whether the links were checked with the audit key.
    #[serde(default)]
    pub keyed: bool,
    /// The first event chained with a key; the ones before it predate the key.
    #[serde(default)]
    pub keyed_from: Option<u64>,
    /// Keyed links not checked, for want of the key.
    #[serde(default)]
    pub unchecked_links: u64,
    /// The anchor checked, if one was given.
    #[serde(default)]
    pub anchor: Option<AuditAnchor>,
    /// Everything found wrong; empty when the log is intact.
    pub problems: Vec<String>,
}

impl AuditReport {
    /// Whether nothing was found wrong.
    pub fn is_intact(&self) -> bool {
        self.problems.is_empty()
    }
}

impl<S: Store> Engine<S> {
    /// Verifies the whole event log and every stored row against it, with
    /// the store's audit key if it has one.
    pub fn verify_audit(&self) -> Result<AuditReport> {
        self.verify_audit_against(None)
    }

    /// [`Engine::verify_audit`], and the log must still hold `anchor`'s
    /// event with its hash: nothing up to it was truncated or rewritten.
    pub fn verify_audit_against(&self, anchor: Option<&AuditAnchor>) -> Result<AuditReport> {
        let key = self.store().audit_key();
        self.store().read(|r| {
            let mut report = AuditReport {
                events: 0,
                purged_events: 0,
                decisions_checked: 0,
                rows_checked: 0,
                head_seq: 0,
                head_hash: hex::encode(event::GENESIS),
                keyed: key.is_some(),
                keyed_from: None,
                unchecked_links: 0,
                anchor: anchor.cloned(),
                problems: Vec::new(),
            };
            let mut implied = Implied::default();
            let mut anchored = None;
            walk_chain(r, key, &mut report, &mut implied, |seq, hash| {
                if anchor.is_some_and(|a| a.seq == seq) {
                    anchored = Some(hex::encode(hash));
                }
            })?;
            if let Some(anchor) = anchor {
                check_anchor(&mut report, anchor, anchored);
            }
            report.problems.append(&mut implied.problems);
            compare_rows(r, &implied, &mut report)?;
            Ok(report)
        })
    }

    /// The log's head as an anchor to keep elsewhere (`SEQ:HASH`).
    pub fn audit_anchor(&self) -> Result<AuditAnchor> {
        self.store().read(head_anchor)
    }

    /// Whether the newest event's link is not a plain SHA-256 one: the
    /// log is keyed (or broken), so writing without its key would append
    /// links that verification with the key reports.
    pub fn audit_head_is_keyed(&self) -> Result<bool> {
        self.store().read(|r| {
            let seq = r.head_seq()?;
            let rows = r.event_rows(seq.saturating_sub(2), 2)?;
            let (prev, head) = match rows.as_slice() {
                [head] if head.seq == 1 => (event::GENESIS, head),
                [prev, head] => (prev.hash.as_slice().try_into().unwrap_or([0; 32]), head),
                _ => return Ok(false),
            };
            let body_hash: [u8; 32] = head.body_hash.as_slice().try_into().unwrap_or([0; 32]);
            Ok(head.hash != event::chain(&prev, head.seq, &body_hash))
        })
    }
}

/// The head of the log `r` reads.
pub(crate) fn head_anchor(r: &dyn ReadTx) -> Result<AuditAnchor> {
    let seq = r.head_seq()?;
    let hash = match r.event_rows(seq.saturating_sub(1), 1)?.into_iter().next() {
        Some(row) if seq > 0 => hex::encode(row.hash),
        _ => hex::encode(event::GENESIS),
    };
    Ok(AuditAnchor { seq, hash })
}

/// Checks every link and replays every readable body into `implied`.
fn walk_chain(
    r: &dyn ReadTx,
    key: Option<&AuditKey>,
    report: &mut AuditReport,
    implied: &mut Implied,
    mut seen: impl FnMut(u64, &[u8]),
) -> Result<()> {
    let mut prev = event::GENESIS;
    let mut expected_seq = 1u64;
    let mut bodiless: Vec<(u64, Option<String>)> = Vec::new();
    let mut head_keyed = false;
    seen(0, &event::GENESIS);
    loop {
        let rows = r.event_rows(expected_seq - 1, 10_000)?;
        if rows.is_empty() {
            break;
        }
        for row in rows {
            if row.seq != expected_seq {
                report.problems.push(format!("events {expected_seq} to {} are missing", row.seq - 1));
            }
            expected_seq = row.seq + 1;
            report.events += 1;
            let body_hash: [u8; 32] = row.body_hash.as_slice().try_into().unwrap_or([0; 32]);
            replay(&row, &body_hash, report, implied, &mut bodiless);
            head_keyed = check_link(key, &prev, &row, &body_hash, report);
            seen(row.seq, &row.hash);
            prev = row.hash.as_slice().try_into().unwrap_or([0; 32]);
            report.head_seq = row.seq;
        }
    }
    for (seq, run) in bodiless {
        if !run.as_ref().is_some_and(|r| implied.purged_runs.contains(r)) {
            report.problems.push(format!("event {seq} lost its body without a recorded retention purge"));
        }
    }
    if key.is_some() && report.events > 0 && !head_keyed {
        report.problems.push(format!(
            "the newest event ({}) is not chained with the audit key: the log was rewritten without it, \
             or nothing was written since the key was set up",
            report.head_seq
        ));
    }
    report.head_hash = hex::encode(prev);
    Ok(())
}

/// Checks a body against its hash and applies it to the implied state.
fn replay(
    row: &EventRow,
    body_hash: &[u8; 32],
    report: &mut AuditReport,
    implied: &mut Implied,
    bodiless: &mut Vec<(u64, Option<String>)>,
) {
    let Some(body) = &row.body else {
        report.purged_events += 1;
        bodiless.push((row.seq, row.run_id.clone()));
        return;
    };
    if event::body_hash(body) != *body_hash {
        report.problems.push(format!("event {} was altered: its body no longer matches its hash", row.seq));
    }
    match serde_json::from_str::<EventBody>(body) {
        Ok(b) => implied.apply(row.seq, b),
        Err(e) => report.problems.push(format!("event {} is unreadable: {e}", row.seq)),
    }
}

/// Checks one link; returns whether it is keyed. Plain links are accepted
/// only before the first keyed one: a forger without the key can only
/// re-chain plainly, from the first event they change.
fn check_link(
    key: Option<&AuditKey>,
    prev: &[u8; 32],
    row: &EventRow,
    body_hash: &[u8; 32],
    report: &mut AuditReport,
) -> bool {
    let keyed = match key {
        Some(key) if row.hash == key.chain(prev, row.seq, body_hash) => true,
        _ if row.hash == event::chain(prev, row.seq, body_hash) => false,
        Some(_) => {
            report.problems.push(format!("event {} breaks the hash chain", row.seq));
            return false;
        }
        None => {
            // Keyed, or broken: only the key can tell.
            report.unchecked_links += 1;
            report.keyed_from.get_or_insert(row.seq);
            return true;
        }
    };
    match (keyed, report.keyed_from, key) {
        (true, None, _) => report.keyed_from = Some(row.seq),
        (false, Some(from), Some(_)) => report.problems.push(format!(
            "event {} is chained without the audit key after event {from} was chained with it: \
             the log was re-chained from there by someone without the key",
            row.seq
        )),
        (false, Some(from), None) => {
            // The links taken for keyed ones were broken: plain links follow them.
            report.problems.push(format!("event {from} breaks the hash chain"));
            report.keyed_from = None;
        }
        _ => {}
    }
    keyed
}

fn check_anchor(report: &mut AuditReport, anchor: &AuditAnchor, found: Option<String>) {
    match found {
        None => report.problems.push(format!(
            "the log ends at event {} but the anchor names event {}: the log was truncated",
            report.head_seq, anchor.seq
        )),
        Some(hash) if hash != anchor.hash => report
            .problems
            .push(format!("event {}'s hash differs from the anchor's: the log was rewritten up to there", anchor.seq)),
        Some(_) => {}
    }
}

/// Compares every stored row with the state the log implies.
fn compare_rows(r: &dyn ReadTx, implied: &Implied, report: &mut AuditReport) -> Result<()> {
    let micros = |t: chrono::DateTime<chrono::Utc>| t.timestamp_micros();
    let logged = |map: &BTreeMap<String, Run>| -> Result<BTreeMap<String, Value>> {
        map.iter().map(|(k, v)| Ok((k.clone(), run_facts(v)?))).collect()
    };
    let runs = Table { what: "run", rows: r.stored_rows(AuditTable::Runs)?, expected: logged(&implied.runs)? };
    runs.compare::<Run>(
        report,
        |_, run| run.id.to_string(),
        |run| {
            json!({"id": run.id, "session_id": run.session_id, "user_id": run.user_id,
                "status": run.status.as_str(), "created_at": micros(run.created_at),
                "updated_at": micros(run.updated_at), "parent_id": run.parent_run_id})
        },
        run_facts,
        |_| false,
    )?;

    let gates = Table { what: "gate", rows: r.stored_rows(AuditTable::Gates)?, expected: values(&implied.gates)? };
    gates.compare::<Gate>(
        report,
        |_, gate| gate.id.to_string(),
        |gate| {
            json!({"id": gate.id, "run_id": gate.run_id, "kind": gate.kind().as_str(),
                "mode_rank": gate.mode.rank(), "priority": gate.priority.rank(), "status": gate.status.as_str(),
                "agent": gate.agent, "created_at": micros(gate.created_at),
                "expires_at": gate.expires_at.map(micros), "escalate_at": gate.escalate_at().map(micros)})
        },
        to_value,
        |_| false,
    )?;

    let decisions =
        Table { what: "decision", rows: r.stored_rows(AuditTable::Decisions)?, expected: values(&implied.decisions)? };
    report.decisions_checked += implied.decisions.len() as u64;
    decisions.compare::<Decision>(
        report,
        |_, d| d.id.to_string(),
        |d| {
            json!({"id": d.id, "gate_id": d.gate_id, "run_id": d.run_id, "action": d.action.as_str(),
                "decided_by": d.decided_by, "decided_at": micros(d.decided_at), "latency_ms": d.latency_ms})
        },
        to_value,
        |_| false,
    )?;

    let turns = Table { what: "turn", rows: r.stored_rows(AuditTable::Turns)?, expected: values(&implied.turns)? };
    turns.compare::<Turn>(
        report,
        |_, t| t.id.to_string(),
        |t| json!({"id": t.id, "run_id": t.run_id, "idx": t.index}),
        to_value,
        |_| false,
    )?;

    let context = Table {
        what: "context key",
        rows: r.stored_rows(AuditTable::Context)?,
        expected: implied.context.iter().map(|((run, key), v)| (format!("{run}/{key}"), v.clone())).collect(),
    };
    context.compare::<Value>(
        report,
        |row, _| format!("{}/{}", text(&row.columns, "run_id"), text(&row.columns, "key")),
        |_| Value::Null,
        |v| Ok(v.clone()),
        |_| false,
    )?;

    let global_memory = Table {
        what: "global memory key",
        rows: r.stored_rows(AuditTable::GlobalMemory)?,
        expected: implied.global_memory.iter().map(|(key, v)| (key.clone(), v.clone())).collect(),
    };
    global_memory.compare::<Value>(
        report,
        |row, _| text(&row.columns, "key"),
        |_| Value::Null,
        |v| Ok(v.clone()),
        |_| false,
    )?;

    let plans = Table {
        what: "plan revision",
        rows: r.stored_rows(AuditTable::PlanRevisions)?,
        expected: implied
            .plans
            .iter()
            .map(|((run, n), p)| Ok((format!("{run}/{n}"), to_value(p)?)))
            .collect::<Result<_>>()?,
    };
    plans.compare::<PlanRevision>(
        report,
        |row, p| format!("{}/{}", text(&row.columns, "run_id"), p.revision),
        |_| Value::Null,
        to_value,
        |_| false,
    )?;

    let countable = implied.uses_countable();
    let rules = Table {
        what: "allow-rule",
        rows: r.stored_rows(AuditTable::AllowRules)?,
        expected: implied
            .rules
            .iter()
            .map(|(id, (rule, _))| Ok((id.clone(), rule_facts(&counted(implied, rule), countable)?)))
            .collect::<Result<_>>()?,
    };
    let purged_gates = !implied.purged_runs.is_empty();
    rules.compare::<AllowRule>(
        report,
        |_, rule| rule.id.to_string(),
        |rule| {
            json!({"id": rule.id, "agent": rule.agent, "action": rule.action,
                "created_at": micros(rule.created_at), "expires_at": rule.expires_at.map(micros),
                "revoked_at": rule.revoked_at.map(micros)})
        },
        |rule| rule_facts(rule, countable),
        // Made while deciding a gate of a run since purged: its event went with the run.
        |rule| purged_gates && rule.gate_id.as_ref().is_some_and(|g| !implied.gates.contains_key(g.as_str())),
    )?;

    let tokens = Table { what: "token", rows: r.stored_rows(AuditTable::Tokens)?, expected: values(&implied.tokens)? };
    tokens.compare::<Token>(
        report,
        |_, t| t.id.clone(),
        |t| {
            json!({"id": t.id, "name": t.name, "role": t.role.as_str(), "created_at": micros(t.created_at),
                "revoked_at": t.revoked_at.map(micros)})
        },
        to_value,
        |_| false,
    )?;
    Ok(())
}

/// One table's stored rows and the snapshots the log implies for them, by key.
struct Table {
    what: &'static str,
    rows: Vec<StoredRow>,
    expected: BTreeMap<String, Value>,
}

impl Table {
    /// Each row's columns against its own snapshot (`Null`: nothing to
    /// check), its snapshot's `facts` against the log's, then the logged
    /// rows no stored row answered.
    fn compare<T: DeserializeOwned>(
        mut self,
        report: &mut AuditReport,
        key: impl Fn(&StoredRow, &T) -> String,
        columns: impl Fn(&T) -> Value,
        facts: impl Fn(&T) -> Result<Value>,
        unlogged_ok: impl Fn(&T) -> bool,
    ) -> Result<()> {
        let what = self.what;
        for row in &self.rows {
            report.rows_checked += 1;
            let snapshot: T = match serde_json::from_str(&row.data) {
                Ok(s) => s,
                Err(e) => {
                    report.problems.push(format!("a {what} row is unreadable: {e}"));
                    continue;
                }
            };
            let key = key(row, &snapshot);
            if let Value::Object(expected) = columns(&snapshot) {
                let differ = differing(&Value::Object(row.columns.clone()), &Value::Object(expected));
                if !differ.is_empty() {
                    report.problems.push(format!(
                        "{what} {key}'s columns {} differ from its own snapshot: the row was edited",
                        differ.join(", ")
                    ));
                }
            }
            let stored = facts(&snapshot)?;
            match self.expected.remove(&key) {
                Some(logged) if logged == stored => {}
                Some(logged) => report.problems.push(format!(
                    "{what} {key} differs from its logged events in {}",
                    differing(&stored, &logged).join(", ")
                )),
                None if unlogged_ok(&snapshot) => {}
                None => report.problems.push(format!("{what} {key} has no logged event behind it")),
            }
        }
        for key in self.expected.keys() {
            report.problems.push(format!("{what} {key} was removed: its logged events remain"));
        }
        Ok(())
    }
}

/// The top-level fields (or the whole value) where `a` and `b` differ.
fn differing(a: &Value, b: &Value) -> Vec<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: HashSet<&String> = a.keys().chain(b.keys()).collect();
            let mut out: Vec<String> = keys.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect();
            out.sort();
            out
        }
        _ => vec!["its value".to_owned()],
    }
}

fn text(columns: &Map<String, Value>, name: &str) -> String {
    columns.get(name).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn to_value<T: Serialize>(v: &T) -> Result<Value> {
    Ok(serde_json::to_value(v)?)
}

fn values<T: Serialize>(map: &BTreeMap<String, T>) -> Result<BTreeMap<String, Value>> {
    map.iter().map(|(k, v)| Ok((k.clone(), to_value(v)?))).collect()
}

/// What of a run the log fixes: everything but its bookkeeping (when it
/// last changed, the handoff counter, the result an agent reported).
fn run_facts(run: &Run) -> Result<Value> {
    let mut v = to_value(run)?;
    if let Value::Object(o) = &mut v {
        for field in ["updated_at", "consecutive_agent_turns", "result"] {
            o.remove(field);
        }
    }
    Ok(v)
}

/// What of an allow-rule the log fixes: its uses only while every gate
/// that may have used it is still in the log.
fn rule_facts(rule: &AllowRule, countable: bool) -> Result<Value> {
    let mut v = to_value(rule)?;
    if let (Value::Object(o), false) = (&mut v, countable) {
        o.remove("uses");
        o.remove("last_used_at");
    }
    Ok(v)
}

/// `rule` with the uses the auto-passed gates in the log count.
fn counted(implied: &Implied, rule: &AllowRule) -> AllowRule {
    match implied.rule_uses(rule.id.as_str()) {
        Some((uses, last_used_at)) => AllowRule { uses, last_used_at, ..rule.clone() },
        None => rule.clone(),
    }
}
