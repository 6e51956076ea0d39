//! Allow-rules for a scoped token, for `routes/rules.rs`: the rule of what
//! a scope sees is the engine's ([`Engine::allow_rules_visible`]); this is
//! the shape that module asks for it in, the scope's agents.

use gatehouse_engine::token::TokenScope;
use gatehouse_engine::{AllowRule, AllowRuleFilter, Engine, Result};

/// Allow-rules of `agents` matching `filter` (whose own `agent`, if any,
/// narrows them), newest first, at most `filter.limit`; none without agents.
pub fn rules_among(e: &Engine, agents: &[String], filter: &AllowRuleFilter) -> Result<Vec<AllowRule>> {
    if agents.is_empty() {
        return Ok(Vec::new());
    }
    e.allow_rules_visible(&TokenScope { runs: Vec::new(), agents: agents.to_vec() }, filter)
}
