//! `gatehouse token`: API tokens, managed on the database directly, so the
//! first reviewer token can be made before (or beside) a running server.
//! Only a hash of each secret is stored; `create` prints the secret once,
//! alone on stdout, so `TOKEN=$(gatehouse token create ...)` works.

use anyhow::{Context, Result};
use clap::Subcommand;
use gatehouse_engine::{Engine, TokenRole};

use crate::commands::CLI_ACTOR;
use crate::out::outln;
use crate::table::Table;

const ROLES: [TokenRole; 3] = [TokenRole::Agent, TokenRole::Reviewer, TokenRole::Admin];

/// The `token` subcommands.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token and print its secret, alone on stdout (it is shown only this once).
    Create {
        /// agent: opens runs and gates and waits; reviewer: also decides gates and controls runs;
        /// admin: also manages tokens and retention.
        #[arg(long, value_parser = crate::enum_parser(ROLES, TokenRole::as_str))]
        role: TokenRole,
        /// The identity recorded as the actor of everything done with the token.
        #[arg(long, value_name = "NAME")]
        name: String,
        /// A team the token belongs to (repeat for several): gates restricted to `role:TEAM`
        /// may be decided with it.
        #[arg(long = "team", value_name = "TEAM")]
        teams: Vec<String>,
    },
    /// List every token, revoked ones included (never their secrets).
    List,
    /// Revoke a token by id or name; a running server refuses it within 5 seconds.
    Revoke {
        /// The token's id (`tok_...`) or its name.
        id_or_name: String,
    },
}

/// Runs a `token` subcommand.
pub fn run(engine: &Engine, command: &TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Create { role, name, teams } => {
            let (token, secret) = engine
                .create_token_in(name, *role, teams, CLI_ACTOR)
                .with_context(|| format!("cannot create a {} token named `{name}`", role.as_str()))?;
            outln!("{secret}");
            eprintln!(
                "created {} token `{}` ({}); keep the secret printed above: only its hash is stored",
                token.role.as_str(),
                token.name,
                token.id
            );
        }
        TokenCommand::List => list(engine)?,
        TokenCommand::Revoke { id_or_name } => {
            let token = engine.revoke_token(id_or_name, CLI_ACTOR).with_context(|| {
                format!("cannot revoke `{id_or_name}` (`gatehouse token list` shows the tokens and their ids)")
            })?;
            outln!("revoked {} token `{}` ({})", token.role.as_str(), token.name, token.id);
        }
    }
    Ok(())
}

fn list(engine: &Engine) -> Result<()> {
    let tokens = engine.tokens().context("cannot list the tokens")?;
    if tokens.is_empty() {
        outln!("no tokens yet: `gatehouse serve` creates an admin token on its first start, and");
        outln!("`gatehouse token create --role reviewer --name NAME` makes one now");
        return Ok(());
    }
    let when = |at: chrono::DateTime<chrono::Utc>| at.format("%Y-%m-%d %H:%M UTC").to_string();
    let mut table = Table::new(&["id", "name", "role", "teams", "created", "revoked"]);
    for token in &tokens {
        table.row(vec![
            token.id.clone(),
            token.name.clone(),
            token.role.as_str().to_owned(),
            if token.teams.is_empty() { "-".to_owned() } else { token.teams.join(",") },
            when(token.created_at),
            token.revoked_at.map_or_else(|| "-".to_owned(), when),
        ]);
    }
    table.print("");
    Ok(())
}
