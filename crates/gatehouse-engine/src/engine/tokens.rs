//! Tokens in the engine: issuing one (with its teams and scope, checked in
//! the transaction that stores it), listing, revoking and authenticating.
//! The token types and their checks are in `token.rs`.

use chrono::{DateTime, Utc};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::event::{EventBody, EventKind};
use crate::store::Store;
use crate::token::{check_scope, check_teams, new_secret, secret_hash, NewToken, Token, TokenRole, TokenScope};

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
        self.issue_token(NewToken { teams: teams.to_vec(), ..NewToken::new(name, role) }, actor)
    }

    /// Creates a token, with its teams and scope; returns its record and
    /// its secret, shown only now. A scope's runs must exist.
    pub fn issue_token(&self, mut new: NewToken, actor: &str) -> Result<(Token, String)> {
        // A name is an identity: its secrets are redacted like any text a client sends.
        new.name = self.redacted_text(&new.name);
        new.scope = self.redacted(new.scope)?;
        let teams = check_teams(&new.teams)?;
        let name = new.name.trim();
        if name.is_empty() || name.len() > 128 {
            return Err(EngineError::invalid("name", "a token name must be 1 to 128 characters"));
        }
        let now = self.now();
        let mut token = Token {
            id: format!("tok_{}", uuid::Uuid::now_v7().simple()),
            name: name.to_owned(),
            role: new.role,
            teams,
            scope: TokenScope::default(),
            created_at: now,
            revoked_at: None,
        };
        let secret = new_secret();
        let hash = secret_hash(&secret);
        let (mut record, actor) = (token.clone(), actor.to_owned());
        // The scope's runs are looked up in the transaction that stores the token.
        token.scope = self.store().write(move |tx| {
            record.scope = check_scope(&new.scope, |id| Ok(tx.run(id)?.is_some()))?;
            tx.insert_token(&record, &hash)?;
            tx.append_event(bookkeeping(now, actor, EventKind::TokenCreated { token: record.clone() }))?;
            Ok(record.scope)
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
