//! Searching gates, pending and past: the query a reviewer types (free text
//! and filters), and its hits, each with a snippet of agent text whose
//! matches are marked as parts, never as markup.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::gate::{Gate, GateKind, GateStatus};
use crate::ids::RunId;

/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: u32 = 500;
/// Most hits one search may skip: a deep page walks every hit before it.
pub const MAX_SEARCH_OFFSET: u32 = 10_000;
/// Longest free text accepted, in characters.
pub const MAX_SEARCH_TEXT: usize = 1_000;

/// A search over every stored gate.
///
/// `text` matches, word by word (all words must match, the last one as a
/// prefix unless the text ends with a space), the gate's question, its
/// action names, payload and arguments (keys and values), its kind's
/// details and task context, the agent, the run's id and title, who decided
/// and the decision's text. Filters are exact. Hits come newest first.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateSearch {
    /// Free text, as typed; empty lists the newest gates.
    #[serde(default)]
    pub text: String,
    /// Only this status (any when absent).
    #[serde(default)]
    pub status: Option<GateStatus>,
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<GateKind>,
    /// Only this agent's gates.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this run's gates.
    #[serde(default)]
    pub run_id: Option<RunId>,
    /// Only gates whose decision this identity recorded.
    #[serde(default)]
    pub decided_by: Option<String>,
    /// Only gates opened at or after this instant.
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    /// Only gates opened before this instant.
    #[serde(default)]
    pub to: Option<DateTime<Utc>>,
    /// At most this many hits (1 to [`MAX_SEARCH_LIMIT`]).
    pub limit: u32,
    /// Skip this many hits first (at most [`MAX_SEARCH_OFFSET`]).
    #[serde(default)]
    pub offset: u32,
}

impl GateSearch {
    /// The newest `limit` gates matching `text`, with no filter.
    pub fn text(text: impl Into<String>, limit: u32) -> Self {
        Self {
            text: text.into(),
            status: None,
            kind: None,
            agent: None,
            run_id: None,
            decided_by: None,
            from: None,
            to: None,
            limit,
            offset: 0,
        }
    }
}

/// Most words in one search's text.
pub const MAX_SEARCH_WORDS: usize = 32;

/// The words of a search text that can match something: split at spaces
/// and control characters, each with at least one letter or digit.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| w.chars().any(char::is_alphanumeric))
}

/// A piece of a snippet: agent text, matched or not. Joined in order, the
/// parts are the snippet; a UI marks the matched ones as plain text.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnippetPart {
    /// The text.
    pub text: String,
    /// Whether it matched the search.
    pub matched: bool,
}

/// One gate found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The gate, with its decision.
    pub gate: Gate,
    /// Its run's title.
    pub run_title: String,
    /// Where the text matched, in context (`…` marks cut text); empty when
    /// the search had no text.
    pub snippet: Vec<SnippetPart>,
}

/// A page of hits.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// The hits, newest first.
    pub hits: Vec<SearchHit>,
    /// Whether more hits follow this page.
    pub more: bool,
}
