//! The bank of routine gates: for each kind, a few realistic gates per
//! agent, so a research assistant asks research questions and the deployer
//! asks about deployments. Questions carry the answer a reviewer gives.

use gatehouse_engine::plan::PlanRevision;
use gatehouse_engine::{GateKind, NewGate};
use serde_json::json;

use super::build::*;
use super::Sim;

/// A realistic gate of `kind` from `agent`, with the answer a reviewer would give if it is a
/// question. A plan review reviews `plan`, the run's current plan.
pub fn gate(
    sim: &mut Sim,
    kind: GateKind,
    agent: &str,
    plan: Option<&PlanRevision>,
) -> (NewGate, Option<&'static str>) {
    let gate = match kind {
        GateKind::Question => {
            let own: Vec<(&str, &str)> =
                QUESTIONS.iter().filter(|(who, ..)| *who == agent).map(|(_, q, a)| (*q, *a)).collect();
            let (text, answer) = if own.is_empty() {
                let (_, q, a) = sim.pick(&QUESTIONS);
                (q, a)
            } else {
                sim.pick(&own)
            };
            return (question(text), Some(answer));
        }
        GateKind::Approval => approval_gate(sim, agent),
        GateKind::PayloadReview => payload_gate(sim, agent),
        GateKind::InformationReview => information_gate(sim, agent),
        GateKind::ResponseReview => response_gate(sim, agent),
        GateKind::QualityScore => {
            let (text, deliverable) = match agent {
                "image-pipeline" => ("Score the thumbnail batch for 300 SKUs", "thumbs-300"),
                _ if sim.chance(0.5) => ("Score the search indexer rewrite (PR #4907)", "pr-4907"),
                _ => ("Score the dependency licence audit", "licence-audit"),
            };
            quality(text, deliverable, 3.5, &["correctness", "completeness", "clarity"])
        }
        GateKind::GoalReview => goal_review(
            "Is this the right goal for the churn interviews?",
            json!({"objective": "Find the top three reasons subscribers cancel", "scope": "Q2 interviews",
                   "deliverables": ["ranked reasons", "quotes", "recommendations"]}),
            1,
        ),
        GateKind::PlanReview => match plan.and_then(|p| Some((p.revision, serde_json::to_value(&p.plan).ok()?))) {
            Some((revision, plan)) => plan_review("Review my plan before I start", revision, 1, plan),
            // Without a plan there is nothing to review; asking is the honest fallback.
            None => return (question("Should I draft a plan before I continue?"), Some("Yes, keep it short.")),
        },
    };
    (gate, None)
}

fn approval_gate(sim: &mut Sim, agent: &str) -> NewGate {
    match agent {
        "deployer" if sim.chance(0.5) => approval(
            "deploy",
            "Deploy storefront 5.3.1 to production",
            json!({"service": "storefront", "version": "5.3.1", "environment": "production", "replicas": 8,
                   "strategy": "rolling"}),
        )
        .example(json!({"service": "storefront", "version": "5.3.0", "environment": "production", "replicas": 8,
                        "strategy": "rolling"})),
        "deployer" => approval(
            "rotate_certificate",
            "Rotate the TLS certificate for `api.acme-shop.test` (expires in 9 days)",
            json!({"domain": "api.acme-shop.test", "issuer": "letsencrypt", "key_type": "ecdsa-p256",
                   "reload": "rolling"}),
        ),
        "code-reviewer" => approval(
            "merge_pr",
            "Merge PR #4907 (search indexer rewrite) into `main`",
            json!({"pr": 4907, "base": "main", "merge_method": "squash", "checks": "passing"}),
        ),
        _ => approval(
            "send_email",
            "Send the price-change notice to 1,840 B2B customers",
            json!({"template": "price-change-2025", "recipients": 1840, "send_at": "09:00 CET", "batch_size": 200}),
        ),
    }
}

fn payload_gate(sim: &mut Sim, agent: &str) -> NewGate {
    match agent {
        "image-pipeline" => payload_review(
            "Check the image-generation parameters for the summer lookbook",
            json!({"model": "sdxl-1.0", "prompt": "two friends cycling along a lake at golden hour",
                   "width": 1536, "height": 1024, "steps": 40, "guidance_scale": 6.5, "num_images": 6}),
            &["all required fields present"],
            &[],
            &["model", "prompt"],
        )
        .example(json!({"model": "sdxl-1.0", "prompt": "a person cycling", "width": 1024, "height": 1024,
                        "steps": 30, "guidance_scale": 7.0, "num_images": 4})),
        "BackendWorker-7f3a" if sim.chance(0.5) => payload_review(
            "Review the refund call for order #88213",
            json!({"order": 88213, "amount_eur": 129.0, "reason": "damaged_in_transit", "restock": false}),
            &["amount equals the order total"],
            &["partial refund if the customer keeps the item"],
            &["order", "amount_eur"],
        ),
        _ => payload_review(
            "Review the search-index rebuild call",
            json!({"index": "products-v7", "shards": 6, "replicas": 1, "refresh_interval": "30s", "batch_size": 500}),
            &["shards 6 > recommended 4 for 2M documents"],
            &["use 4 shards"],
            &["index"],
        )
        .example(json!({"index": "products-v6", "shards": 4, "replicas": 1, "refresh_interval": "1s",
                        "batch_size": 1000})),
    }
}

fn information_gate(sim: &mut Sim, agent: &str) -> NewGate {
    let (text, confidence, reasons, flags): (&str, f64, &[&str], &[&str]) = match agent {
        "image-pipeline" => (
            "Mood-board images collected from the web",
            0.72,
            &["41 images, 9 without a licence statement"],
            &["copyright"],
        ),
        _ if sim.chance(0.5) => {
            ("Competitor prices collected from 14 shops", 0.93, &["cross-checked against last quarter"], &[])
        }
        _ => (
            "Interview transcripts summarised; two of them name customers",
            0.84,
            &["18 interviews, 3 hours of audio"],
            &["pii"],
        ),
    };
    information_review(text, confidence, reasons, flags, json!({}))
}

fn response_gate(sim: &mut Sim, agent: &str) -> NewGate {
    let (text, raw, audited) = match agent {
        "image-pipeline" => (
            "Review the generated product description",
            "The BEST bike EVER, guaranteed 200 km range!!",
            "A city e-bike with up to 120 km of range on the standard test cycle.",
        ),
        "research-assistant" if sim.chance(0.5) => (
            "Review the churn summary before it is shared",
            "Churn is up 4% because Tom in support is slow.",
            "Churn is up 4%; slow first responses in support are the most cited reason.",
        ),
        "research-assistant" => (
            "Review the competitor summary for the pricing meeting",
            "Swapfiets is definitely going bankrupt, per a Reddit thread.",
            "Swapfiets raised prices twice this year; there is no public sign of financial trouble.",
        ),
        _ => (
            "Review the changelog entry",
            "fixed stuff in checkout, see slack",
            "Checkout: fixed a rounding error in VAT totals for mixed-rate baskets.",
        ),
    };
    response_review(text, raw, audited, &["claims checked", "tone normalised"])
}

/// Questions routine runs ask: who asks, the question, the answer a reviewer gives.
const QUESTIONS: [(&str, &str, &str); 9] = [
    (
        "BackendWorker-7f3a",
        "Which VAT rate applies to e-bike batteries shipped to Austria: 20% or the reduced 13%?",
        "20%. Batteries are not covered by the reduced rate.",
    ),
    (
        "BackendWorker-7f3a",
        "The coupon endpoint gets 40 req/s from one IP. Rate-limit per IP or per account?",
        "Per account, with a per-IP ceiling of 100 req/s as a backstop.",
    ),
    (
        "BackendWorker-7f3a",
        "Should the flaky `test_cart_totals` be quarantined or fixed before the release?",
        "Fix it: it hides a real rounding bug. Quarantine only if it takes more than an hour.",
    ),
    (
        "deployer",
        "May I restart the worker fleet during business hours for the OpenSSL patch?",
        "Yes, one availability zone at a time, with 10 minutes between them.",
    ),
    (
        "deployer",
        "The EU replica lags 40 s behind. Fail over now or wait for the nightly window?",
        "Wait for the window unless the lag passes 2 minutes.",
    ),
    (
        "research-assistant",
        "Should the pricing sweep include refurbished bikes, or new ones only?",
        "New only; refurbished prices swing too much to compare.",
    ),
    (
        "research-assistant",
        "Two sources disagree on Dutch cargo-bike subsidies (€500 vs €1,000). Which should I cite?",
        "Cite the municipal page (€500); the €1,000 figure is from an expired 2023 scheme.",
    ),
    (
        "image-pipeline",
        "Which S3 bucket should the lookbook renders go to: `acme-assets` or `acme-marketing`?",
        "acme-marketing; acme-assets is for catalogue images only.",
    ),
    (
        "code-reviewer",
        "PR #4907 disables two integration tests. Block the merge or accept with a follow-up ticket?",
        "Block it: re-enable the tests first, they cover the checkout search path.",
    ),
];
