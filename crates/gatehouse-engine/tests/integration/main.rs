//! The engine's integration tests, one module per capability, on a real SQLite
//! file (or, with `GATEHOUSE_TEST_BACKEND=postgres`, on PostgreSQL).
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;

mod abandoned_runs;
mod alerts;
mod allow_rules;
mod audit;
mod batched_actions;
mod collaboration;
mod control;
mod deciders;
mod declared_gates;
mod durability;
mod exact_text;
mod expiry_and_audit;
mod gates;
mod global_memory;
mod instances;
mod metrics;
mod parallel_writes;
mod payload_schema;
mod postgres_tls;
mod recordings;
mod released_gates;
mod response_forms;
mod search;
mod subagents;
mod timeouts;
mod token_scopes;
mod visibility;
