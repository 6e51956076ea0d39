//! Snippets, as both backends make them: the markers around a match, the
//! columns a snippet prefers, and the split of a marked snippet into
//! plain-text parts. SQLite's FTS5 `snippet()` and PostgreSQL's
//! `ts_headline` both mark matches with [`OPEN`] and [`CLOSE`].

use crate::search::SnippetPart;

/// Marks the start and the end of a match in FTS5's `snippet()`: private-use
/// characters, which agent text practically never contains.
pub(crate) const OPEN: char = '\u{E000}';
pub(crate) const CLOSE: char = '\u{E001}';
/// Tokens of context in a snippet (FTS5 allows up to 64).
pub(crate) const SNIPPET_TOKENS: u32 = 16;
/// Longest snippet returned, in characters: one token may be a long string.
const SNIPPET_CHARS: usize = 240;

/// Splits FTS5's `snippet()` output at the match markers into parts, at
/// most [`SNIPPET_CHARS`] characters in all.
pub(crate) fn snippet_parts(snippet: &str) -> Vec<SnippetPart> {
    let mut parts: Vec<SnippetPart> = Vec::new();
    let (mut matched, mut budget) = (false, SNIPPET_CHARS);
    for (i, piece) in snippet.split([OPEN, CLOSE]).enumerate() {
        if i > 0 {
            // Each marker toggles; a stray one in agent text only shifts the marking.
            matched = !matched;
        }
        if piece.is_empty() {
            continue;
        }
        let mut text: String = piece.chars().take(budget).collect();
        budget -= text.chars().count();
        if text.len() < piece.len() {
            text.push('…');
        }
        match parts.last_mut() {
            Some(last) if last.matched == matched => last.text.push_str(&text),
            _ => parts.push(SnippetPart { text, matched }),
        }
        if budget == 0 {
            break;
        }
    }
    parts
}

/// The index's columns (migration 4's order) as a snippet prefers them
/// when two match as many of the reviewer's words: what the gate says, then
/// what was decided, before the names a hit shows anyway.
pub(crate) const SNIPPET_COLUMNS: [usize; 8] = [0, 1, 2, 3, 7, 5, 6, 4];

/// How many different words a snippet marks, whatever their case.
pub(crate) fn distinct_matches(parts: &[SnippetPart]) -> usize {
    let words: std::collections::HashSet<String> =
        parts.iter().filter(|p| p.matched).map(|p| p.text.to_lowercase()).collect();
    words.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_split_into_marked_parts() {
        let parts = snippet_parts("…run \u{E000}deploy\u{E001} to \u{E000}prod\u{E001}");
        let expect = |text: &str, matched| SnippetPart { text: text.into(), matched };
        assert_eq!(
            parts,
            vec![expect("…run ", false), expect("deploy", true), expect(" to ", false), expect("prod", true)]
        );
        assert_eq!(snippet_parts(""), vec![]);
        assert_eq!(snippet_parts("<b>no markup</b>"), vec![expect("<b>no markup</b>", false)]);
    }

    #[test]
    fn a_snippet_is_cut_to_its_budget() {
        let long = format!("\u{E000}{}\u{E001} tail", "x".repeat(1_000));
        let parts = snippet_parts(&long);
        assert_eq!(parts.len(), 1);
        assert!(parts[0].matched);
        assert_eq!(parts[0].text.chars().count(), SNIPPET_CHARS + 1);
        assert!(parts[0].text.ends_with('…'));
    }
}
