//! What reviewers' directives (instructions, a chosen next agent) delivered
//! during a team turn: every journaled step delivers what is held, so the
//! team loop (`turns.rs`) reads the deliveries of all of the turn's steps,
//! in the order they came. Deliveries journaled before that order was kept
//! are read only where the loop read them then, so a run driven again
//! after an upgrade does what it did.

use serde_json::Value;

use crate::driver::Driver;

/// The deliveries of turn `turn`, in the order they came.
pub(super) fn delivered_in_turn(d: &Driver, turn: u32) -> Vec<Value> {
    let mut delivered: Vec<(u32, Value)> = d
        .delivered_within(&format!("team:{turn}"))
        .into_iter()
        .filter_map(|(step, found)| Some((followed_rank(step, found, turn)?, found.clone())))
        .collect();
    delivered.sort_by_key(|(rank, _)| *rank);
    delivered.into_iter().map(|(_, found)| found).collect()
}

/// Where a delivery of turn `turn` stands among the turn's others: in the
/// order it came (`at`, kept since deliveries with any step are followed).
/// One journaled before that, without `at`, is followed only where it was
/// then (the model call and its retries, the agent's turn, a tool call, in
/// that order), so a run driven again after an upgrade does as it did.
fn followed_rank(step: &str, found: &Value, turn: u32) -> Option<u32> {
    if let Some(at) = found.get("at").and_then(Value::as_u64) {
        return Some(u32::try_from(at).unwrap_or(u32::MAX).saturating_add(1_000_000));
    }
    let rest = step.strip_prefix(&format!("team:{turn}"))?;
    match rest.strip_prefix(':').map(|r| r.split(':').collect::<Vec<_>>()).as_deref() {
        None if rest.is_empty() => Some(100_000),
        Some(["call"]) => Some(0),
        Some(["call", "retry", n]) => n.parse::<u32>().ok().map(|n| n.min(99_999)),
        Some(["tool", i]) => i.parse::<u32>().ok().map(|i| 100_001 + i.min(800_000)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deliveries_follow_in_the_order_they_came() {
        let (first, later) = (json!({"at": 7}), json!({"at": 12}));
        let first_rank = followed_rank("team:3:restart", &first, 3).unwrap();
        assert!(first_rank < followed_rank("team:3:call", &later, 3).unwrap());
    }

    #[test]
    fn older_deliveries_are_read_only_where_they_were_read_then() {
        let old = json!({"next_agent": "deployer", "instructions": []});
        let rank = |step: &str| followed_rank(step, &old, 3);
        assert_eq!(rank("team:3:restart"), None, "a restart's step was not read then");
        assert_eq!(rank("team:3:team"), None);
        assert_eq!(rank("team:3:tool:0:restart"), None);
        let read = [
            rank("team:3:call"),
            rank("team:3:call:retry:2"),
            rank("team:3"),
            rank("team:3:tool:0"),
            rank("team:3:tool:1"),
        ];
        assert!(read.iter().all(Option::is_some), "{read:?}");
        assert!(read.windows(2).all(|w| w[0] < w[1]), "the call, its retries, the turn, its tools: {read:?}");
        assert!(rank("team:3:tool:0").unwrap() < followed_rank("team:3:restart", &json!({"at": 1}), 3).unwrap());
        assert_eq!(rank("team:30"), None, "another turn");
    }
}
