//! The server's integration tests, one module per part of the API: a real
//! server on a loopback port for each test, driven over HTTP.
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;

mod abandoned_runs;
mod admin;
mod agents;
mod alerts;
mod allow_rules;
mod database_restart;
mod deciders;
mod declared_gates;
mod events;
mod gates;
mod guards;
mod hitl;
mod hitl_listings;
mod instances;
mod json_errors;
mod legacy;
mod mcp;
mod memory;
mod open_and_wait;
mod operations;
mod orchestrated;
mod oversight;
mod plan_restart;
mod redaction;
mod released_gates;
mod replays;
mod robustness;
mod run_control;
mod scoped_admin;
mod scoped_tokens;
mod search;
mod signin;
mod storage_failure;
mod subagents;
mod team;
mod team_flow;
mod team_restart;
mod team_tools;
mod tls;
mod webhooks;
