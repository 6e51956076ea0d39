//! `gatehouse token`: API tokens, managed on the database directly, so the
//! first reviewer token can be made before (or beside) a running server.
//! Only a hash of each secret is stored; `create` prints the secret once,
//! alone on stdout, so `TOKEN=$(gatehouse token create ...)` works. A token
//! may be scoped to runs and agents (`--run`, `--agent`).

use anyhow::{Context, Result};
use clap::Subcommand;
use gatehouse_engine::token::{NewToken, TokenScope};
use gatehouse_engine::{Engine, RunId, TokenRole};

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
        /// Scope the token to this run and its sub-runs (repeat for several); anything outside its scope is, for
        /// the token, as if it did not exist.
        #[arg(long = "run", value_name = "RUN_ID")]
        runs: Vec<String>,
        /// Scope the token to the runs this agent drives or takes part in, and their sub-runs (repeat for several).
        #[arg(long = "agent", value_name = "NAME")]
        agents: Vec<String>,
    },
    /// List every token, revoked ones included (never their secrets).
    List,
    /// Revoke a token by id or name; a running server refuses it within half a second.
    Revoke {
        /// The token's id (`tok_...`) or its name.
        id_or_name: String,
    },
}

/// Runs a `token` subcommand.
pub fn run(engine: &Engine, command: &TokenCommand) -> Result<()> {
    match command {
        TokenCommand::Create { role, name, teams, runs, agents } => {
            let scope = TokenScope {
                runs: runs.iter().map(|r| RunId::from_string(r.as_str())).collect(),
                agents: agents.clone(),
            };
            let new = NewToken { name: name.clone(), role: *role, teams: teams.clone(), scope };
            let (token, secret) = engine
                .issue_token(new, CLI_ACTOR)
                .with_context(|| format!("cannot create a {} token named `{name}`", role.as_str()))?;
            outln!("{secret}");
            let scoped = if token.scope.is_empty() {
                String::new()
            } else {
                format!(", scoped to {}", scope_text(&token.scope))
            };
            eprintln!(
                "created {} token `{}` ({}{scoped}); keep the secret printed above: only its hash is stored",
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
    let mut table = Table::new(&["id", "name", "role", "teams", "scope", "created", "revoked"]);
    for token in &tokens {
        table.row(vec![
            token.id.clone(),
            token.name.clone(),
            token.role.as_str().to_owned(),
            if token.teams.is_empty() { "-".to_owned() } else { token.teams.join(",") },
            if token.scope.is_empty() { "-".to_owned() } else { scope_text(&token.scope) },
            when(token.created_at),
            token.revoked_at.map_or_else(|| "-".to_owned(), when),
        ]);
    }
    table.print("");
    Ok(())
}

/// A scope in a few words: `run:ID`, `agent:NAME`, comma-separated.
fn scope_text(scope: &TokenScope) -> String {
    let runs = scope.runs.iter().map(|r| format!("run:{r}"));
    runs.chain(scope.agents.iter().map(|a| format!("agent:{a}"))).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Token {
        #[command(subcommand)]
        command: TokenCommand,
    }

    #[test]
    fn create_takes_repeatable_runs_and_agents_for_its_scope() {
        let args =
            ["token", "create", "--role", "reviewer", "--name", "ci", "--run", "r1", "--agent", "a", "--run", "r2"];
        let Token { command: TokenCommand::Create { runs, agents, .. } } = Token::try_parse_from(args).unwrap() else {
            panic!("not a create");
        };
        assert_eq!(runs, ["r1", "r2"]);
        assert_eq!(agents, ["a"]);
        let plain = Token::try_parse_from(["token", "create", "--role", "agent", "--name", "bot"]).unwrap();
        assert!(
            matches!(plain.command, TokenCommand::Create { runs, agents, .. } if runs.is_empty() && agents.is_empty())
        );
        let scope = TokenScope { runs: vec![RunId::from_string("r1")], agents: vec!["a".into()] };
        assert_eq!(scope_text(&scope), "run:r1,agent:a");
    }
}
