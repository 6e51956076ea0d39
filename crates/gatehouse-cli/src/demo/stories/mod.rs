//! The scripted stories: seven runs that together exercise every gate
//! kind, every run policy, every blocking mode, plans, shared context,
//! scoring, quorum, a lost race between reviewers, a cancelled run and an
//! expired question; then five runs Gatehouse orchestrates itself with the
//! scripted provider, and five team runs: agents handing off to each
//! other, a lead handing three researchers their topics in parallel, a
//! consensus people decide at a quorum gate, a workflow with a people's
//! review step, and a team left paused at a handoff breakpoint for a
//! person to try the team interventions on. Each story reads top to bottom like what happened.

mod engineering;
mod images;
mod operations;
mod orchestrated;
mod sweep;
mod team;

use anyhow::Result;
use gatehouse_engine::run::{Participant, Role};

use super::Sim;

/// How many runs the stories create.
pub const COUNT: u32 = 7 + orchestrated::COUNT + team::COUNT + sweep::COUNT;

/// Plays every story in order.
pub fn play(sim: &mut Sim) -> Result<()> {
    engineering::checkout(sim)?;
    operations::release(sim)?;
    operations::research(sim)?;
    engineering::payments_refactor(sim)?;
    images::product_shots(sim)?;
    images::cancelled_batch(sim)?;
    engineering::nightly_ledger(sim)?;
    orchestrated::play(sim)?;
    team::play(sim)?;
    sweep::play(sim)
}

/// Participants from `(name, role)` pairs.
fn team(members: &[(&str, Role)]) -> Vec<Participant> {
    members.iter().map(|(name, role)| Participant { name: (*name).to_owned(), role: *role }).collect()
}
