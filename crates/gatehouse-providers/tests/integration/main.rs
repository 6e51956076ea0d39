//! The model providers' integration tests: each provider against a local stand-
//! in for its HTTP API.
//!
//! They build as one test binary; a binary per file linked the whole
//! dependency tree once per file.

mod common;

mod anthropic;
mod openai;
mod registry;
mod replicate;
