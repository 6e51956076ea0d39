//! Who does the routine work (agents, their users, sessions and typical
//! gate kinds), how urgent it is, and the words reviewers answer with.
//! The gates themselves are in `bank`. Every pick goes through the
//! simulation's seeded RNG.

use super::Sim;
use gatehouse_engine::GateKind::{self, *};
use gatehouse_engine::{BlockingMode, Priority};

/// A demo agent: its name, the gate kinds its routine work opens, the
/// person (and session) it usually works for, and what it works on.
#[derive(Debug, Clone, Copy)]
pub struct Agent {
    /// The agent's name.
    pub name: &'static str,
    /// Kinds of gates it opens.
    pub kinds: &'static [GateKind],
    /// The user it works for.
    pub user: &'static str,
    /// That user's session.
    pub session: &'static str,
    /// Titles of its routine runs.
    pub titles: &'static [&'static str],
}

/// Every demo agent.
pub const AGENTS: [Agent; 5] = [
    Agent {
        name: "BackendWorker-7f3a",
        kinds: &[Question, Approval, PayloadReview, PlanReview],
        user: "dana",
        session: "checkout-revamp",
        titles: &[
            "Add a VAT breakdown to invoices",
            "Rate-limit the coupon endpoint",
            "Fix the flaky cart-totals test",
            "Move order e-mails to the new queue",
            "Support SEPA refunds",
        ],
    },
    Agent {
        name: "deployer",
        kinds: &[Approval, PayloadReview, Question],
        user: "priya",
        session: "release-2.15",
        titles: &[
            "Release storefront 5.3.1",
            "Rotate TLS certificates",
            "Patch OpenSSL on the worker fleet",
            "Fail over the EU read replica",
            "Roll back search 3.8.0",
        ],
    },
    Agent {
        name: "research-assistant",
        kinds: &[InformationReview, Question, GoalReview, ResponseReview],
        user: "marco",
        session: "strategy-q3",
        titles: &[
            "Competitor pricing sweep",
            "Summarise the Q2 churn interviews",
            "Survey SEPA Instant adoption",
            "Map cargo-bike subsidies by city",
            "Benchmark delivery times in Benelux",
        ],
    },
    Agent {
        name: "code-reviewer",
        kinds: &[QualityScore, PlanReview, ResponseReview, Approval],
        user: "dana",
        session: "checkout-revamp",
        titles: &[
            "Review the search indexer rewrite",
            "Audit dependency licences",
            "Review PR #4907",
            "Check the checkout service for N+1 queries",
            "Review the feature-flag cleanup",
        ],
    },
    Agent {
        name: "image-pipeline",
        kinds: &[PayloadReview, InformationReview, ResponseReview, QualityScore],
        user: "lena",
        session: "catalogue-summer",
        titles: &[
            "Lifestyle shots for the summer lookbook",
            "Thumbnails for 300 SKUs",
            "Social crops for the launch",
            "Colour variants of the Bolt frame",
            "Newsletter header for June",
        ],
    },
];

/// A random blocking mode, most often async.
pub fn mode(sim: &mut Sim) -> BlockingMode {
    sim.pick(&[BlockingMode::Sync, BlockingMode::Async, BlockingMode::Async, BlockingMode::Advisory])
}

/// A random priority, most often normal.
pub fn priority(sim: &mut Sim) -> Priority {
    sim.pick(&[Priority::Low, Priority::Normal, Priority::Normal, Priority::High, Priority::Urgent])
}

/// Why a reviewer rejects.
pub const REJECTIONS: [&str; 4] = [
    "Not during the change freeze; resubmit on Monday.",
    "This touches production; the run is scoped to staging.",
    "Confidence is too low for anything customer-facing; gather more sources first.",
    "Wrong target: this belongs in the marketing account, not the catalogue one.",
];

/// What a reviewer asks to change.
pub const FEEDBACK: [&str; 3] = [
    "Tighten the scope: one region and one customer segment first.",
    "Add a rollback step and say how you will know it worked.",
    "Split this into smaller steps that can be reviewed separately.",
];

/// Why a reviewer asks for another attempt.
pub const RETRIES: [&str; 2] =
    ["Too promotional; retry in a neutral tone.", "Cite the sources inline and drop the unverifiable claim."];

/// Why a reviewer scores as they do.
pub const JUSTIFICATIONS: [&str; 3] = [
    "Does what it says; a couple of edge cases are untested.",
    "Clear and complete, nothing to add.",
    "Works, but hard to follow without the design notes.",
];
