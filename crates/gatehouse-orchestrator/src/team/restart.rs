//! Restart a task, a reviewer's intervention on a team run: a named agent
//! (or the one holding the turn) goes back to redo its turn, with the
//! reviewer's instruction when one is given. The request is checked
//! against the team (an unknown agent names the field `agent`) and
//! recorded as the reviewer's turn (metadata `restart_task`); the team
//! loop takes it at its next step boundary: before an agent's model call,
//! before each tool call, and before the team's answer goes to review.
//! What the turn had not done yet is dropped; what it did stays on the
//! timeline. Each boundary's look is journaled, so a run driven again
//! takes the same restarts at the same places.

use gatehouse_engine::{NewTurn, Role, Turn};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::driver::{Driver, Halt, Record, Step};
use crate::spec::SpecError;

use super::Team;

/// The longest instruction.
pub const MAX_INSTRUCTION: usize = 4000;

/// A reviewer's request, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartTask {
    /// The agent sent back; none: whoever holds the turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// What the agent is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
}

fn bad(field: &str, message: impl Into<String>) -> SpecError {
    SpecError { field: field.into(), message: message.into() }
}

impl RestartTask {
    /// Reads `{"agent"?, "instruction"?}` against `team`; errors name the field.
    pub fn check(request: &Value, team: &Team) -> Result<Self, SpecError> {
        let text = |key: &str| -> Result<Option<String>, SpecError> {
            match request.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.trim().to_owned())),
                Some(_) => Err(bad(key, "must be a string")),
            }
        };
        let agent = text("agent")?;
        if let Some(name) = agent.as_deref().filter(|n| team.agent(n).is_none()) {
            return Err(bad(
                "agent",
                format!("no agent `{name}` in the team; the agents are {}", team.names().join(", ")),
            ));
        }
        let instruction = text("instruction")?;
        if instruction.as_ref().is_some_and(|i| i.chars().count() > MAX_INSTRUCTION) {
            return Err(bad("instruction", format!("is longer than {MAX_INSTRUCTION} characters")));
        }
        Ok(Self { agent, instruction })
    }

    /// The reviewer's turn recording it.
    pub fn turn(&self, by: &str) -> NewTurn {
        let who =
            self.agent.as_deref().map(|a| format!("**{a}**")).unwrap_or_else(|| "the agent holding the turn".into());
        let with = self.instruction.as_deref().map(|i| format!(": {i}")).unwrap_or_default();
        NewTurn {
            role: Role::Human,
            actor: Some(by.to_owned()),
            content: format!("{by} sent {who} back to redo its turn{with}"),
            score: None,
            metadata: json!({"restart_task": self}),
        }
    }
}

/// The restarts recorded on `turns`: turn index, reviewer, request.
pub fn recorded(turns: &[Turn]) -> Vec<(u32, String, RestartTask)> {
    turns
        .iter()
        .filter(|t| t.role == Role::Human)
        .filter_map(|t| {
            let request = serde_json::from_value(t.metadata.get("restart_task")?.clone()).ok()?;
            Some((t.index, t.actor.clone(), request))
        })
        .collect()
}

/// A restart the team loop took, journaled.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Taken {
    /// The reviewer's turn.
    pub index: u32,
    /// The reviewer.
    pub by: String,
    /// The agent that redoes its turn.
    pub agent: String,
    /// What it is told.
    pub note: String,
}

/// Looks for restarts recorded since `after` at the boundary `here`, unless
/// the run already went past it (one of `next` is journaled). Waits while
/// the run is paused first, so a restart asked at a pause is taken at once.
/// `current` is the agent whose turn it is. `after` moves on to the last
/// turn read, so each look reads only the turns recorded since the last.
pub(crate) async fn taken(
    d: &mut Driver,
    team: &Team,
    here: &str,
    next: &[String],
    after: &mut u32,
    current: &str,
) -> Step<Option<Taken>> {
    if !d.journaled(here) {
        if next.iter().any(|k| d.journaled(k)) {
            return Ok(None);
        }
        d.checkpoint().await?;
    }
    let found = if d.journaled(here) {
        None
    } else {
        let (id, since) = (d.run_id.clone(), *after);
        let turns = d.engine(move |e| e.turns_after(&id, since)).await?;
        let Some((index, by, request)) = recorded(&turns).into_iter().next_back() else {
            // Nothing to take up to the last turn read: the next look reads
            // only what comes after it (turn indices only grow).
            *after = turns.last().map_or(since, |t| t.index.max(since));
            return Ok(None);
        };
        let agent = request.agent.filter(|a| team.agent(a).is_some()).unwrap_or_else(|| current.to_owned());
        let note = match &request.instruction {
            Some(i) => format!("A reviewer ({by}) sent you back to redo your turn: {i}"),
            None => format!("A reviewer ({by}) sent you back to redo your turn."),
        };
        Some(Taken { index, by, agent, note })
    };
    let took: Taken = d
        .step(here, "restart_task", || async move {
            let took = found.ok_or_else(|| Halt::Fail(format!("the restart at `{here}` was not looked up")))?;
            let content = format!("**{}** goes back to redo its turn, as {} asked.", took.agent, took.by);
            let meta = json!({"agent": took.agent, "by": took.by, "request_turn": took.index});
            Ok(Record::new(took, content).with("restart_taken", meta))
        })
        .await?;
    *after = (*after).max(took.index);
    Ok(Some(took))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gatehouse_providers::ProviderRegistry;

    #[test]
    fn a_request_names_an_agent_of_the_team_or_none() {
        let registry = ProviderRegistry::from_lookup(|_| None).unwrap();
        let team = super::super::parse(
            &json!([{"name": "coder", "role": "c", "provider": "scripted", "model": "chat"}]),
            &registry,
        )
        .unwrap();
        let ok = RestartTask::check(&json!({"agent": "coder", "instruction": " add tests "}), &team).unwrap();
        assert_eq!((ok.agent.as_deref(), ok.instruction.as_deref()), (Some("coder"), Some("add tests")));
        assert_eq!(RestartTask::check(&json!({}), &team).unwrap().agent, None);
        let unknown = RestartTask::check(&json!({"agent": "zed"}), &team).unwrap_err();
        assert_eq!(
            (unknown.field.as_str(), unknown.message.as_str()),
            ("agent", "no agent `zed` in the team; the agents are coder")
        );
        assert_eq!(RestartTask::check(&json!({"instruction": 3}), &team).unwrap_err().field, "instruction");
        let long = "x".repeat(MAX_INSTRUCTION + 1);
        assert_eq!(RestartTask::check(&json!({"instruction": long}), &team).unwrap_err().field, "instruction");
    }
}
