//! `gatehouse mcp`: the Gatehouse MCP tools on stdio, for assistants that
//! launch their MCP servers as commands. The reviewer decides in another
//! process (the desktop app or `gatehouse serve`), so the tools talk to
//! that server over its API, whose long polls answer the moment a decision
//! is committed. Stdout carries the protocol only; logs go to stderr.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use gatehouse_engine::RunId;
use gatehouse_mcp::{HttpBackend, McpOptions};

use crate::client::{ca_certificates, parse_url, DEFAULT_URL};

/// Arguments of `mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The Gatehouse server to talk to (the desktop app prints its address).
    #[arg(long, env = "GATEHOUSE_URL", default_value = DEFAULT_URL, value_name = "URL")]
    pub url: String,
    /// The agent's API token, sent as `Authorization: Bearer` (`gatehouse token create --role agent`).
    #[arg(long, env = "GATEHOUSE_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Also trust the certificate authorities in this PEM file for an https:// server.
    #[arg(long, env = "GATEHOUSE_CA_CERT", value_name = "PEM")]
    pub ca_cert: Option<std::path::PathBuf>,
    /// Ask in this run instead of starting one for the session (named after the MCP client).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Seconds between progress notifications while a call waits for the reviewer.
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS", value_parser = progress_interval)]
    pub progress_every: f64,
}

fn progress_interval(raw: &str) -> Result<f64, String> {
    let secs: f64 = raw.parse().map_err(|_| format!("`{raw}` is not a number of seconds"))?;
    if !(0.05..=60.0).contains(&secs) {
        return Err(format!("must be from 0.05 to 60 seconds, got {secs}"));
    }
    Ok(secs)
}

/// Serves MCP on stdin and stdout until the client closes them.
pub fn mcp(args: &McpArgs) -> Result<()> {
    let Some(token) = args.token.as_deref().map(str::trim).filter(|t| !t.is_empty()) else {
        bail!(
            "`gatehouse mcp` needs the agent's token: pass --token TOKEN or set GATEHOUSE_TOKEN. Make one beside \
             the server's database with `gatehouse token create --role agent --name NAME`"
        );
    };
    let base = parse_url(&args.url)?;
    let roots = ca_certificates(args.ca_cert.as_deref())?;
    let backend = HttpBackend::trusting(base, token, roots).map_err(|e| anyhow::anyhow!(e.message))?;
    let options = McpOptions {
        progress_every: Duration::from_secs_f64(args.progress_every),
        run: args.run.as_deref().map(str::trim).filter(|r| !r.is_empty()).map(RunId::from_string),
        ..McpOptions::default()
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("gatehouse-mcp")
        .build()
        .context("cannot start the MCP server's async runtime")?;
    tracing::info!(server = %backend.server(), "serving the Gatehouse MCP tools on stdio");
    runtime.block_on(gatehouse_mcp::serve_stdio(Arc::new(backend), options)).context("the MCP session failed")
}
