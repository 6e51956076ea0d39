//! API tokens: who is calling and in which role. Agents open runs and gates
//! and wait; reviewers decide; admins manage tokens and retention. Only a
//! SHA-256 of each secret is stored, so a copied database leaks no token.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::gate::Decider;
use crate::store::Store;

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
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The stored form of a secret.
pub fn secret_hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn new_secret() -> String {
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

/// Checks and tidies a token's teams: trimmed, each once.
fn check_teams(teams: &[String]) -> Result<Vec<String>> {
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

impl<S: Store> Engine<S> {
    /// Creates a token; returns its record and its secret, shown only now.
    pub fn create_token(&self, name: &str, role: TokenRole, actor: &str) -> Result<(Token, String)> {
        self.create_token_in(name, role, &[], actor)
    }

    /// Creates a token belonging to `teams` (see [`Token::teams`]).
    pub fn create_token_in(
        &self,
        name: &str,
        role: TokenRole,
        teams: &[String],
        actor: &str,
    ) -> Result<(Token, String)> {
        let teams = check_teams(teams)?;
        let name = name.trim();
        if name.is_empty() || name.len() > 128 {
            return Err(EngineError::invalid("name", "a token name must be 1 to 128 characters"));
        }
        let now = self.now();
        let token = Token {
            id: format!("tok_{}", uuid::Uuid::now_v7().simple()),
            name: name.to_owned(),
            role,
            teams,
            created_at: now,
            revoked_at: None,
        };
        let secret = new_secret();
        let hash = secret_hash(&secret);
        let (record, actor) = (token.clone(), actor.to_owned());
        self.store().write(move |tx| {
            tx.insert_token(&record, &hash)?;
            tx.append_event(bookkeeping(now, actor, EventKind::TokenCreated { token: record.clone() }))?;
            Ok(())
        })?;
        Ok((token, secret))
    }

    /// Every token, revoked ones included.
    pub fn tokens(&self) -> Result<Vec<Token>> {
        self.store().read(|r| r.tokens())
    }

    /// Revokes the token with this id or name (a name must be unambiguous).
    pub fn revoke_token(&self, id_or_name: &str, actor: &str) -> Result<Token> {
        let (key, actor, now) = (id_or_name.to_owned(), actor.to_owned(), self.now());
        self.store().write(move |tx| {
            let live: Vec<Token> =
                tx.tokens()?.into_iter().filter(|t| t.revoked_at.is_none() && (t.id == key || t.name == key)).collect();
            let mut token = match live.len() {
                0 => return Err(EngineError::NotFound { what: "live token", id: key }),
                1 => live.into_iter().next().ok_or_else(|| EngineError::Storage("token vanished".into()))?,
                n => {
                    return Err(EngineError::invalid(
                        "token",
                        format!("{n} live tokens are named `{key}`; revoke by id"),
                    ))
                }
            };
            token.revoked_at = Some(now);
            tx.update_token(&token)?;
            tx.append_event(bookkeeping(now, actor, EventKind::TokenRevoked { token_id: token.id.clone() }))?;
            Ok(token)
        })
    }

    /// The live token a secret belongs to.
    pub fn authenticate(&self, secret: &str) -> Result<Option<Token>> {
        let hash = secret_hash(secret);
        self.store().read(|r| r.token_by_hash(&hash))
    }
}

fn bookkeeping(at: DateTime<Utc>, actor: String, kind: EventKind) -> EventBody {
    EventBody { at, run_id: None, session_id: None, user_id: None, actor, kind }
}
