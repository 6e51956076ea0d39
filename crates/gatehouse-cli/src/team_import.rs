//! `gatehouse team import`: another framework's team (a LangChain chain, an
//! AutoGen group chat, a CrewAI crew) as the `team` and `pattern` of an
//! orchestrated run's input, printed as JSON on stdout; what was
//! approximated or left out goes to stderr, one note a line.

use std::path::PathBuf;

use anyhow::{anyhow, Context, Result};
use clap::Subcommand;
use gatehouse_orchestrator::import::{import, Defaults, Framework};
use serde_json::json;

use crate::out;

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Translate a framework's configuration file (YAML or JSON) into a run input's `team` and
    /// `pattern`: chains become handoff sequences, group chats agents taking turns, crews flat
    /// teams. Prints {"team": [...], "pattern": ...}; notes on what was approximated go to stderr.
    Import {
        /// The framework the file is from.
        #[arg(long = "from", value_parser = ["langchain", "autogen", "crewai"])]
        framework: String,
        /// The configuration file (`-` for standard input).
        file: PathBuf,
        /// The provider for agents whose configuration names none Gatehouse has.
        #[arg(long, default_value = "scripted")]
        provider: String,
        /// The model for those agents.
        #[arg(long, default_value = "chat")]
        model: String,
    },
}

pub fn run(command: &TeamCommand) -> Result<()> {
    let TeamCommand::Import { framework, file, provider, model } = command;
    let framework = Framework::named(framework).ok_or_else(|| anyhow!("unknown framework `{framework}`"))?;
    let config = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
    };
    let defaults = Defaults { provider: provider.clone(), model: model.clone() };
    let imported = import(framework, &config, &defaults).map_err(|e| {
        if e.field.is_empty() {
            anyhow!("{}: the file {}", file.display(), e.message)
        } else {
            anyhow!("{}: `{}` {}", file.display(), e.field, e.message)
        }
    })?;
    for note in &imported.notes {
        eprintln!("note: {note}");
    }
    let body = json!({"team": imported.team, "pattern": imported.pattern});
    out::outln!("{}", serde_json::to_string_pretty(&body)?);
    Ok(())
}
