//! Gatehouse over the Model Context Protocol, with the official Rust SDK
//! (`rmcp`). The tools (approval, `ask_human`, feedback, output review, a
//! coding assistant's permission prompt, `check_gate`, and the plan
//! tools) are written once in [`GatehouseMcp`], over a [`Backend`]: the
//! server serves them at `/mcp` over its engine in-process, and `gatehouse
//! mcp` serves them on stdio over a running server's API ([`HttpBackend`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use gatehouse_mcp::{serve_stdio, HttpBackend, McpOptions};
//!
//! let backend = HttpBackend::new("http://127.0.0.1:7777".parse()?, "the agent token")?;
//! serve_stdio(Arc::new(backend), McpOptions::default()).await?;
//! # Ok(()) }
//! ```

mod args;
mod backend;
mod gate_tools;
mod http;
mod outcome;
mod plan_tools;
mod server;

use std::sync::Arc;

pub use backend::{finished_its_work, Backend, BackendError, Failure, PlanSnapshot, SessionRun, SESSION_CLOSED};
pub use http::HttpBackend;
pub use outcome::Outcome;
pub use server::{GatehouseMcp, McpOptions};

/// Serves the tools on stdin and stdout until the client disconnects, then
/// ends the run the session started (see [`Backend::end_run`]).
pub async fn serve_stdio<B: Backend>(backend: Arc<B>, options: McpOptions) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let server = GatehouseMcp::new(backend, options);
    let session = server.session();
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    let waited = running.waiting().await;
    session.end().await;
    waited.map_err(std::io::Error::other)?;
    Ok(())
}
