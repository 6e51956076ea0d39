//! `memory delete KEY` (a key of the global memory every run's team agents
//! share) and `memory delete KEY --run RUN [--scope run|team]` (a key of a
//! live run's memory): a reviewer's deletion, through the server, which
//! records it in the key's history and the audit log under the token's name.

use anyhow::Result;
use clap::Subcommand;
use reqwest::Method;
use serde::Deserialize;
use serde_json::Value;

use crate::client::Api;
use crate::out::outln;
use crate::table::short;

/// The team agents' memory, as a reviewer tends it.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Delete a remembered key: the global memory's, or with --run a live run's (needs a reviewer token).
    Delete {
        /// The key.
        key: String,
        /// The run whose memory holds it (without it: the global memory).
        #[arg(long, value_name = "RUN")]
        run: Option<String>,
        /// Which of the run's memories: its own (`run`) or its team's (`team`).
        #[arg(long, requires = "run", value_parser = ["run", "team"], default_value = "run")]
        scope: String,
    },
}

/// What the server says it deleted.
#[derive(Debug, Deserialize)]
struct MemoryDeletion {
    scope: String,
    key: String,
    value: Value,
    by: String,
}

/// Runs a `memory` command against the server.
pub fn run(api: &Api, command: &MemoryCommand) -> Result<()> {
    match command {
        MemoryCommand::Delete { key, run, scope } => delete(api, key, run.as_deref(), scope),
    }
}

fn delete(api: &Api, key: &str, run: Option<&str>, scope: &str) -> Result<()> {
    let segments = match run {
        Some(run) => vec!["runs", run, "memory", scope, key],
        None => vec!["memory", "global", key],
    };
    let gone: MemoryDeletion = api.send(api.request(Method::DELETE, &segments))?;
    let place = run.map(|r| format!(" of run {r}")).unwrap_or_default();
    let stored = if gone.by.is_empty() { String::new() } else { format!(", stored by {}", gone.by) };
    outln!("deleted {}:{}{place} (it held {}{stored})", gone.scope, gone.key, short(&gone.value.to_string(), 70));
    Ok(())
}
