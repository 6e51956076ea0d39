//! The orchestrator's integration tests: orchestrated runs on a real engine
//! with the scripted provider and, where a test adds one, a stand-in for a
//! provider's HTTP API (the providers crate's test server, `wire`).
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;
// The providers' stand-in HTTP APIs, shared with that crate's tests (which use
// the parts these do not).
#[allow(dead_code)]
#[path = "../../../gatehouse-providers/tests/integration/common/mod.rs"]
mod wire;

mod collaboration;
mod control;
mod flow;
mod injection;
mod memory;
mod plan_acts;
mod plan_edit;
mod providers;
mod released;
mod restart;
mod team;
mod team_parallel;
mod team_plan;
mod team_sub_teams;
mod team_tools;
mod teamflow;
