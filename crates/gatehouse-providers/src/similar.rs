//! How alike two field names are, for suggesting that a payload's unknown
//! field was meant as one the schema wants: shared meaningful words
//! (`image_file`, `input_image`), common abbreviations (`img`), or a typo
//! (`promt`). Words that say nothing on their own (`input`, `file`, `url`)
//! do not count, or every `input_*` field would look alike.

/// Words too generic to show two fields mean the same thing.
const GENERIC: &[&str] = &["input", "inputs", "file", "files", "url", "uri", "path", "data", "value", "the", "for"];

/// Abbreviations and synonyms, each with the word it stands for.
const ALIASES: &[(&str, &str)] = &[
    ("img", "image"),
    ("pic", "image"),
    ("picture", "image"),
    ("photo", "image"),
    ("txt", "text"),
    ("msg", "message"),
    ("neg", "negative"),
    ("num", "number"),
];

/// 0 when the names look unrelated; higher is more alike.
pub(crate) fn field_similarity(a: &str, b: &str) -> u32 {
    let (words_a, words_b) = (words(a), words(b));
    let shared =
        words_a.iter().filter(|w| w.len() >= 3 && !GENERIC.contains(&w.as_str()) && words_b.contains(w)).count();
    let mut score = 2 * shared as u32;
    let (squashed_a, squashed_b) = (words_a.concat(), words_b.concat());
    let shortest = squashed_a.len().min(squashed_b.len());
    let allowed = if shortest <= 5 { 1 } else { 2 };
    if squashed_a != squashed_b && shortest >= 4 && edit_distance(&squashed_a, &squashed_b) <= allowed {
        score += 1;
    }
    score
}

/// A field name's words, lower case, with aliases expanded: `inputImage`
/// and `input-img` are both `["input", "image"]`.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            previous_lower = false;
            words.push(std::mem::take(&mut current));
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    words.push(current);
    words
        .into_iter()
        .filter(|w| !w.is_empty())
        .map(|w| ALIASES.iter().find(|(alias, _)| *alias == w).map(|(_, word)| (*word).to_owned()).unwrap_or(w))
        .collect()
}

/// Edit distance counting a swap of neighbours as one edit (optimal string
/// alignment), by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut table = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in table.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in table[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (table[i - 1][j - 1] + cost).min(table[i - 1][j] + 1).min(table[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(table[i - 2][j - 2] + 1);
            }
            table[i][j] = best;
        }
    }
    table[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sharing_a_meaningful_word_are_alike() {
        assert!(field_similarity("image_file", "input_image") > 0);
        assert!(field_similarity("inputImage", "image") > 0);
        assert!(field_similarity("img", "input_image") > 0);
        assert!(field_similarity("negative_text", "neg_prompt") > 0);
    }

    #[test]
    fn a_typo_is_alike_but_generic_words_are_not() {
        assert!(field_similarity("promt", "prompt") > 0);
        assert!(field_similarity("widht", "width") > 0);
        assert_eq!(field_similarity("input_file", "input_url"), 0);
        assert_eq!(field_similarity("seed", "input_image"), 0);
        assert_eq!(field_similarity("steps", "seed"), 0);
        assert_eq!(field_similarity("scale", "style"), 0);
    }

    #[test]
    fn words_split_on_case_and_punctuation() {
        assert_eq!(words("inputImage"), ["input", "image"]);
        assert_eq!(words("image-file_2"), ["image", "file", "2"]);
        assert_eq!(words("max_new_tokens"), ["max", "new", "tokens"]);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("widht", "width"), 1);
    }
}
