//! The `gatehouse` command's integration tests: the built binary run as a user
//! runs it.
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;

mod cli;
mod mcp_client_tools;
mod mcp_stdio;
mod memory_cli;
mod private_files;
mod runs_steer;
mod runs_sub_team;
mod serve_and_ask;
mod slow_clients;
mod team_server;
mod team_tools;
mod tls_and_scoped_tokens;
