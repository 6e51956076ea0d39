//! API tokens: who is calling and in which role. Agents open runs and gates
//! and wait; reviewers decide; admins manage tokens and retention. A token
//! may be scoped to some runs and agents ([`TokenScope`]). Only a SHA-256 of
//! each secret is stored, so a copied database leaks no token. Issuing and
//! revoking tokens are engine operations, in `engine/tokens.rs`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{EngineError, Result};
use crate::gate::Decider;
use crate::ids::RunId;
use crate::run::Run;

/// What a token may do.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenRole {
    /// Opens runs, gates and turns; reads its own runs; waits.
    Agent,
    /// Resolves gates and controls runs.
    Reviewer,
    /// Everything, plus tokens and retention.
    Admin,
}

impl TokenRole {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Reviewer => "reviewer",
            Self::Admin => "admin",
        }
    }
}

impl std::str::FromStr for TokenRole {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "agent" => Ok(Self::Agent),
            "reviewer" => Ok(Self::Reviewer),
            "admin" => Ok(Self::Admin),
            other => {
                Err(EngineError::invalid("role", format!("`{other}` is not a role; use agent, reviewer or admin")))
            }
        }
    }
}

/// A token's public record (never its secret).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Token {
    /// Its id.
    pub id: String,
    /// The identity it stands for: recorded as the actor of what it does.
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// Teams it belongs to (`sre`, `security`): roles a gate's deciders
    /// may name (`role:sre`) besides the token role itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teams: Vec<String>,
    /// The runs and agents it is limited to; absent (empty) for a token
    /// that reaches everything its role allows.
    #[serde(default, skip_serializing_if = "TokenScope::is_empty")]
    pub scope: TokenScope,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// What a scoped token reaches: the runs named, the runs the agents named
/// drive or take part in, and the sub-runs of all of those. Everything
/// else is, for the token, as if it did not exist. Empty (both lists)
/// means no scope: the token reaches everything its role allows.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenScope {
    /// These runs, and their sub-runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RunId>,
    /// The runs these agents drive or take part in, and their sub-runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

impl TokenScope {
    /// Whether this is no scope at all (the token reaches everything).
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.agents.is_empty()
    }

    /// Whether `run` itself is named: its id, or an agent driving it or taking part in it.
    pub fn names(&self, run: &Run) -> bool {
        self.runs.contains(&run.id)
            || self.agents.iter().any(|a| run.agent == *a || run.participants.iter().any(|p| p.name == *a))
    }

    /// Whether the run at the end of `chain` (its runs from the first
    /// parent down to itself, as `Engine::run_chain` gives them) is
    /// within the scope: it or a run above it is named. Always true
    /// without a scope.
    pub fn covers(&self, chain: &[Run]) -> bool {
        self.is_empty() || chain.iter().any(|run| self.names(run))
    }
}

/// A token to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewToken {
    /// The identity it stands for, 1 to 128 characters.
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// Its teams (see [`Token::teams`]).
    pub teams: Vec<String>,
    /// What it is limited to (see [`TokenScope`]); empty for everything.
    pub scope: TokenScope,
}

impl NewToken {
    /// An unscoped token without teams.
    pub fn new(name: impl Into<String>, role: TokenRole) -> Self {
        Self { name: name.into(), role, teams: Vec::new(), scope: TokenScope::default() }
    }
}

/// The stored form of a secret.
pub fn secret_hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// A fresh secret: `ghs_` and 64 random hex digits.
pub(crate) fn new_secret() -> String {
    format!("ghs_{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

impl Token {
    /// Who this token decides as: its name, its role and its teams.
    pub fn decider(&self) -> Decider {
        decider_of(&self.name, self.role, &self.teams)
    }
}

/// Who a token's holder decides as: the name, with the token's role and teams as roles.
pub fn decider_of(name: &str, role: TokenRole, teams: &[String]) -> Decider {
    Decider::new(name, std::iter::once(role.as_str().to_owned()).chain(teams.iter().cloned()))
}

/// The most teams one token may belong to.
const MAX_TEAMS: usize = 20;

/// The most runs, and the most agents, one scope may name.
pub const MAX_SCOPE_ITEMS: usize = 100;

/// Checks and tidies a scope: each run must exist, each agent name is
/// trimmed, 1 to 128 characters; each named once.
pub(crate) fn check_scope(scope: &TokenScope, run_exists: impl Fn(&RunId) -> Result<bool>) -> Result<TokenScope> {
    if scope.runs.len() > MAX_SCOPE_ITEMS {
        return Err(EngineError::invalid("scope.runs", format!("at most {MAX_SCOPE_ITEMS} runs")));
    }
    if scope.agents.len() > MAX_SCOPE_ITEMS {
        return Err(EngineError::invalid("scope.agents", format!("at most {MAX_SCOPE_ITEMS} agents")));
    }
    let mut out = TokenScope::default();
    for (i, run) in scope.runs.iter().enumerate() {
        let id = RunId::from_string(run.as_str().trim());
        if id.as_str().is_empty() || !run_exists(&id)? {
            return Err(EngineError::invalid(
                format!("scope.runs[{i}]"),
                format!("no run with id `{run}`; a token can be scoped only to existing runs"),
            ));
        }
        if !out.runs.contains(&id) {
            out.runs.push(id);
        }
    }
    for (i, agent) in scope.agents.iter().enumerate() {
        let agent = agent.trim();
        if agent.is_empty() || agent.len() > 128 {
            return Err(EngineError::invalid(format!("scope.agents[{i}]"), "an agent name is 1 to 128 characters"));
        }
        if !out.agents.iter().any(|a| a == agent) {
            out.agents.push(agent.to_owned());
        }
    }
    Ok(out)
}

/// Checks and tidies a token's teams: trimmed, each once.
pub(crate) fn check_teams(teams: &[String]) -> Result<Vec<String>> {
    if teams.len() > MAX_TEAMS {
        return Err(EngineError::invalid("teams", format!("at most {MAX_TEAMS} teams")));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, team) in teams.iter().enumerate() {
        let team = team.trim();
        let valid = !team.is_empty()
            && team.len() <= 64
            && team.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            return Err(EngineError::invalid(
                format!("teams[{i}]"),
                "a team is 1 to 64 letters, digits, `-`, `_` or `.` (a gate names it as `role:TEAM`)",
            ));
        }
        if !out.iter().any(|t| t == team) {
            out.push(team.to_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_names_existing_runs_and_real_agent_names_each_once() {
        let exists = |id: &RunId| Ok(id.as_str() == "r1");
        let scope = TokenScope {
            runs: vec![RunId::from_string("r1"), RunId::from_string(" r1 ")],
            agents: vec![" coder ".into(), "coder".into()],
        };
        let tidy = check_scope(&scope, exists).unwrap();
        assert_eq!(tidy, TokenScope { runs: vec![RunId::from_string("r1")], agents: vec!["coder".into()] });

        let missing = TokenScope { runs: vec![RunId::from_string("r1"), RunId::from_string("nope")], agents: vec![] };
        let err = check_scope(&missing, exists).unwrap_err().to_string();
        assert!(err.contains("scope.runs[1]") && err.contains("nope"), "{err}");
        let blank = TokenScope { runs: vec![], agents: vec!["ok".into(), "  ".into()] };
        assert!(check_scope(&blank, exists).unwrap_err().to_string().contains("scope.agents[1]"));
        let many = TokenScope { runs: vec![], agents: (0..=MAX_SCOPE_ITEMS).map(|i| format!("a{i}")).collect() };
        assert!(check_scope(&many, exists).unwrap_err().to_string().contains("scope.agents"));
    }
}
