//! The MCP tools' integration tests: an rmcp client over the real protocol on a
//! real engine.
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;

mod schemas;
mod tools;
