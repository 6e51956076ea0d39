//! Quality scoring for deliverables and the boundary rule that turns a score into a verdict.
//! Also owns per-agent capability ratings, which blend how often an agent's work is approved
//! with the scores it receives into one number on the same 1..=5 scale.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The score a gate requires when its configuration does not say otherwise.
pub const DEFAULT_REQUIRED_SCORE: f64 = 3.0;

/// Lowest and highest valid scores (inclusive).
const MIN_SCORE: f64 = 1.0;
const MAX_SCORE: f64 = 5.0;

/// Slack for floating-point noise, e.g. an average of rubric scores landing on 2.9999999999.
const TOLERANCE: f64 = 1e-9;

/// Why a score was rejected.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ScoreError {
    /// A score was NaN, infinite, or outside 1..=5.
    #[error("score for `{what}` is {value}, but scores run from 1 to 5")]
    OutOfRange {
        /// `overall` or the rubric criterion's name.
        what: String,
        /// The rejected value.
        value: f64,
    },
    /// A rubric criterion had an empty (or all-whitespace) name.
    #[error("rubric criterion names must not be empty")]
    EmptyCriterion,
}

/// A reviewer's (human or model) score for one deliverable.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityScore {
    /// Overall score, 1..=5.
    pub score: f64,
    /// Optional per-criterion scores, each 1..=5; a BTreeMap keeps serialization stable.
    #[serde(default)]
    pub rubric_scores: BTreeMap<String, f64>,
    /// Free-text reason for the score.
    #[serde(default)]
    pub justification: String,
    /// Who scored: a user name or agent id. With a decision, always the
    /// decider (whatever the input says).
    #[serde(default)]
    pub scorer: String,
    /// The deliverable being scored.
    #[serde(default)]
    pub deliverable_id: String,
    /// When the score was given. With a decision, always the decision's time.
    #[serde(default)]
    pub at: DateTime<Utc>,
}

impl QualityScore {
    /// Creates a score, rejecting values outside 1..=5.
    pub fn new(
        deliverable_id: impl Into<String>,
        scorer: impl Into<String>,
        score: f64,
        at: DateTime<Utc>,
    ) -> Result<Self, ScoreError> {
        check_range("overall", score)?;
        Ok(Self {
            score,
            rubric_scores: BTreeMap::new(),
            justification: String::new(),
            scorer: scorer.into(),
            deliverable_id: deliverable_id.into(),
            at,
        })
    }

    /// Adds (or replaces) one rubric criterion's score.
    pub fn with_rubric(mut self, criterion: impl Into<String>, score: f64) -> Result<Self, ScoreError> {
        let criterion = criterion.into();
        check_criterion(&criterion, score)?;
        self.rubric_scores.insert(criterion, score);
        Ok(self)
    }

    /// Sets the justification text.
    pub fn with_justification(mut self, text: impl Into<String>) -> Self {
        self.justification = text.into();
        self
    }

    /// Re-checks every invariant; deserialized scores bypass the constructors, so call this
    /// before trusting one that came from outside.
    pub fn validate(&self) -> Result<(), ScoreError> {
        check_range("overall", self.score)?;
        self.rubric_scores.iter().try_for_each(|(criterion, &score)| check_criterion(criterion, score))
    }

    /// The verdict for this score against `required_score` (see [`evaluate`]).
    pub fn verdict(&self, required_score: f64) -> ScoreVerdict {
        evaluate(self.score, required_score)
    }
}

fn check_criterion(criterion: &str, score: f64) -> Result<(), ScoreError> {
    if criterion.trim().is_empty() {
        return Err(ScoreError::EmptyCriterion);
    }
    check_range(criterion, score)
}

fn check_range(what: &str, value: f64) -> Result<(), ScoreError> {
    // `contains` is false for NaN, and infinities are outside the range, so this covers finiteness.
    if (MIN_SCORE..=MAX_SCORE).contains(&value) {
        Ok(())
    } else {
        Err(ScoreError::OutOfRange { what: what.to_owned(), value })
    }
}

/// Whether a scored deliverable clears its gate.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreVerdict {
    /// The score meets the requirement.
    Passes,
    /// The score falls short; the deliverable goes back for revision.
    NeedsRevision,
}

/// THE BOUNDARY RULE: a score passes when it is **at or above** `required_score`
/// (`score >= required_score`), with a tolerance of 1e-9 so that 2.9999999999 produced by
/// averaging rubric scores counts as 3.0.
///
/// The quality-gate design Gatehouse follows passed only scores that *exceed* the requirement;
/// we deliberately choose "at or above" because a gate configured to require 3.0 must pass a
/// deliverable scored 3 — that is what reviewers mean when they write the requirement. A NaN
/// score never passes.
pub fn evaluate(score: f64, required_score: f64) -> ScoreVerdict {
    if score + TOLERANCE >= required_score {
        ScoreVerdict::Passes
    } else {
        ScoreVerdict::NeedsRevision
    }
}

/// Mean of the rubric scores, or `None` when there are none.
pub fn rubric_average(rubric_scores: &BTreeMap<String, f64>) -> Option<f64> {
    if rubric_scores.is_empty() {
        return None;
    }
    Some(rubric_scores.values().sum::<f64>() / rubric_scores.len() as f64)
}

/// Running track record of one agent. Serializes as [`CapabilityRatingView`] (the raw
/// counters plus the derived rates); deserializes from the raw counters alone and ignores the
/// derived fields, so they can never disagree with the counters.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "CapabilityRatingView")]
pub struct CapabilityRating {
    /// The agent being rated.
    pub agent: String,
    /// Human decisions that judged this agent's proposals (approve, edit, reject, send back,
    /// retry); answers to its questions and deferrals judge nothing and are not counted.
    #[serde(default)]
    pub decisions: u64,
    /// How many of those decisions approved.
    #[serde(default)]
    pub approvals: u64,
    /// Quality scores received.
    #[serde(default)]
    pub scores: u64,
    /// Sum of those scores.
    #[serde(default)]
    pub score_sum: f64,
}

/// One thing counted in an agent's rating. The counts add up whatever the
/// order (the score sum in the order of the log, as `audit verify` replays
/// it), so a backend may apply them as a write commits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RatingChange {
    /// A human decision on one of its gates; `approved` if it counts as an approval.
    Decision { approved: bool },
    /// A quality score.
    Score(f64),
}

impl CapabilityRating {
    /// Counts `change`.
    pub fn apply(&mut self, change: RatingChange) {
        match change {
            RatingChange::Decision { approved } => self.record_decision(approved),
            RatingChange::Score(score) => self.record_score(score),
        }
    }

    /// An empty record for `agent`.
    pub fn new(agent: impl Into<String>) -> Self {
        let agent = agent.into();
        Self { agent, ..Self::default() }
    }

    /// Counts one human decision.
    pub fn record_decision(&mut self, approved: bool) {
        self.decisions += 1;
        if approved {
            self.approvals += 1;
        }
    }

    /// Counts one quality score. Non-finite values are ignored so one bad input cannot turn
    /// the average into NaN forever; pass validated [`QualityScore`] values.
    pub fn record_score(&mut self, score: f64) {
        if score.is_finite() {
            self.scores += 1;
            self.score_sum += score;
        }
    }

    /// approvals / decisions, or `None` before the first decision.
    pub fn approval_rate(&self) -> Option<f64> {
        // Clamp so a hand-edited record with approvals > decisions still rates within 1..=5.
        let approvals = self.approvals.min(self.decisions);
        (self.decisions > 0).then(|| approvals as f64 / self.decisions as f64)
    }

    /// Mean score, or `None` before the first score.
    pub fn average_score(&self) -> Option<f64> {
        (self.scores > 0).then(|| self.score_sum / self.scores as f64)
    }

    /// One rating on the 1..=5 scale. The approval rate `r` is mapped onto the score scale as
    /// `1 + 4r`; with both signals the rating is `0.5 * (1 + 4r) + 0.5 * average_score`, with
    /// only one it is that one, and with neither it is `None`.
    pub fn effective_rating(&self) -> Option<f64> {
        let approval = self.approval_rate().map(|r| 1.0 + 4.0 * r);
        match (approval, self.average_score()) {
            (Some(a), Some(s)) => Some(0.5 * a + 0.5 * s),
            (a, s) => a.or(s),
        }
    }

    /// The serializable view including derived fields.
    pub fn view(&self) -> CapabilityRatingView {
        self.clone().into()
    }
}

/// What a [`CapabilityRating`] serializes to: its counters plus the derived figures.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapabilityRatingView {
    /// The agent being rated.
    pub agent: String,
    /// Human decisions that judged the agent's proposals; answers to its
    /// questions and deferrals are not counted.
    pub decisions: u64,
    /// How many of those decisions approved (as proposed or edited).
    pub approvals: u64,
    /// Quality scores received.
    pub scores: u64,
    /// Sum of those scores.
    pub score_sum: f64,
    /// `approvals / decisions`; absent before the first decision.
    pub approval_rate: Option<f64>,
    /// Mean quality score (1 to 5); absent before the first score.
    pub average_score: Option<f64>,
    /// The rating, 1 to 5: the approval rate mapped to `1 + 4 × rate` and the
    /// mean score, half each (either alone when only one is known); absent
    /// with neither.
    pub effective_rating: Option<f64>,
}

impl From<CapabilityRating> for CapabilityRatingView {
    fn from(r: CapabilityRating) -> Self {
        Self {
            approval_rate: r.approval_rate(),
            average_score: r.average_score(),
            effective_rating: r.effective_rating(),
            agent: r.agent,
            decisions: r.decisions,
            approvals: r.approvals,
            scores: r.scores,
            score_sum: r.score_sum,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000, 0).expect("valid timestamp")
    }

    #[test]
    fn score_equal_to_required_passes() {
        assert_eq!(evaluate(3.0, DEFAULT_REQUIRED_SCORE), ScoreVerdict::Passes);
        assert_eq!(evaluate(4.5, 4.5), ScoreVerdict::Passes);
    }

    #[test]
    fn score_a_hair_below_required_from_averaging_passes() {
        assert_eq!(evaluate(2.999_999_999_9, 3.0), ScoreVerdict::Passes);
    }

    #[test]
    fn score_below_required_beyond_the_tolerance_needs_revision() {
        assert_eq!(evaluate(3.0 - 1e-8, 3.0), ScoreVerdict::NeedsRevision);
        assert_eq!(evaluate(2.99, 3.0), ScoreVerdict::NeedsRevision);
        assert_eq!(evaluate(f64::NAN, 3.0), ScoreVerdict::NeedsRevision);
    }

    #[test]
    fn scores_outside_one_to_five_are_rejected_with_a_named_field() {
        let err = QualityScore::new("d1", "alice", 5.5, at()).expect_err("5.5 is out of range");
        let msg = "score for `overall` is 5.5, but scores run from 1 to 5";
        assert_eq!(err.to_string(), msg);
        for bad in [0.0, 0.999, 5.001, f64::NAN, f64::INFINITY] {
            assert!(QualityScore::new("d1", "alice", bad, at()).is_err(), "{bad}");
        }
        let err = QualityScore::new("d1", "alice", 4.0, at())
            .and_then(|s| s.with_rubric("clarity", 0.5))
            .expect_err("rubric 0.5 is out of range");
        assert!(err.to_string().starts_with("score for `clarity` is 0.5"));
    }

    #[test]
    fn empty_rubric_criterion_and_bad_deserialized_rubric_scores_are_rejected() {
        let s = QualityScore::new("d1", "alice", 4.0, at()).expect("valid");
        assert_eq!(s.with_rubric("  ", 3.0), Err(ScoreError::EmptyCriterion));
        let json = r#"{"score":4,"rubric_scores":{"depth":9},"scorer":"a","deliverable_id":"d",
            "at":"2024-01-01T00:00:00Z"}"#;
        let s: QualityScore = serde_json::from_str(json).expect("parses");
        let err = s.validate().expect_err("depth 9 is out of range");
        assert!(matches!(err, ScoreError::OutOfRange { what, .. } if what == "depth"));
    }

    #[test]
    fn builder_sets_rubric_and_justification_and_round_trips() {
        let s = QualityScore::new("d1", "alice", 4.0, at())
            .and_then(|s| s.with_rubric("clarity", 3.0))
            .and_then(|s| s.with_rubric("accuracy", 5.0))
            .expect("valid")
            .with_justification("solid");
        assert_eq!(rubric_average(&s.rubric_scores), Some(4.0));
        assert_eq!(s.justification, "solid");
        assert_eq!(s.verdict(4.5), ScoreVerdict::NeedsRevision);
        let json = serde_json::to_string(&s).expect("serializes");
        assert_eq!(serde_json::from_str::<QualityScore>(&json).ok(), Some(s));
    }

    #[test]
    fn rubric_average_of_nothing_is_none() {
        assert_eq!(rubric_average(&BTreeMap::new()), None);
    }

    #[test]
    fn capability_rating_blends_approval_rate_and_average_score() {
        let mut r = CapabilityRating::new("writer");
        assert_eq!(r.effective_rating(), None);
        r.record_decision(true);
        r.record_decision(false);
        // Approval rate 0.5 maps to 3.0 on the score scale.
        assert_eq!(r.approval_rate(), Some(0.5));
        assert_eq!(r.effective_rating(), Some(3.0));
        r.record_score(5.0);
        r.record_score(4.0);
        r.record_score(f64::NAN);
        assert_eq!(r.scores, 2);
        assert_eq!(r.average_score(), Some(4.5));
        assert_eq!(r.effective_rating(), Some(3.75));
    }

    #[test]
    fn capability_rating_with_only_scores_uses_the_average() {
        let mut r = CapabilityRating::new("critic");
        r.record_score(2.0);
        assert_eq!((r.approval_rate(), r.effective_rating()), (None, Some(2.0)));
    }

    #[test]
    fn capability_rating_serializes_derived_fields_and_deserializes_from_counters() {
        let mut r = CapabilityRating::new("writer");
        r.record_decision(true);
        let json = serde_json::to_value(&r).expect("serializes");
        assert_eq!(json["approval_rate"], 1.0);
        assert_eq!(json["effective_rating"], 5.0);
        assert!(json["average_score"].is_null());
        let back: CapabilityRating = serde_json::from_value(json).expect("parses");
        assert_eq!(back, r);
        let bare: CapabilityRating =
            serde_json::from_str(r#"{"agent":"x","decisions":4,"approvals":1}"#).expect("parses");
        assert_eq!(bare.approval_rate(), Some(0.25));
        assert_eq!(bare.view().effective_rating, Some(2.0));
    }
}
