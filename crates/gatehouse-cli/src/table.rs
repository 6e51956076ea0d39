//! Plain-text tables and the small formatters shared by every command's
//! output: ages, one-line shortening and snake_case names of engine enums.
//! Output is meant for people at a terminal; scripts should use `export`.

use chrono::{DateTime, Utc};

/// A table printed with aligned columns and no trailing spaces.
pub struct Table {
    headers: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers; a header starting with `>` is
    /// right-aligned (for numbers) and printed without the `>`.
    pub fn new(headers: &[&str]) -> Self {
        let right = headers.iter().map(|h| h.starts_with('>')).collect();
        let headers = headers.iter().map(|h| h.trim_start_matches('>').to_owned()).collect();
        Self { headers, right, rows: Vec::new() }
    }

    /// Adds a row; missing cells print empty.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Whether no rows were added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as lines, each starting with `indent`.
    pub fn render(&self, indent: &str) -> String {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for cells in std::iter::once(&self.headers).chain(&self.rows) {
            let mut line = String::from(indent);
            for (i, width) in widths.iter().enumerate().take(columns) {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                let pad = width.saturating_sub(cell.chars().count());
                if i > 0 {
                    line.push_str("  ");
                }
                if self.right[i] {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Prints the table to stdout.
    pub fn print(&self, indent: &str) {
        crate::out::write(format_args!("{}", self.render(indent)));
    }
}

/// How long ago `then` was, coarsely: `42s`, `7m`, `3h`, `2d`.
pub fn age(then: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - then).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3_600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    }
}

/// The first non-blank line of `text`, at most `max` characters (with `…` when cut).
pub fn short(text: &str, max: usize) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.chars().count() <= max {
        return line.to_owned();
    }
    let mut out: String = line.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The snake_case name serde gives an enum value (for types without `as_str`).
pub fn snake<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

/// A ratio as a percentage, or `-` when there is nothing to divide.
pub fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_owned(), |r| format!("{:.0}%", r * 100.0))
}

/// A score with two decimals, or `-`.
pub fn score(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_and_right_aligned_headers_pad_on_the_left() {
        let mut t = Table::new(&["name", ">n"]);
        t.row(vec!["alice".into(), "7".into()]);
        t.row(vec!["bo".into(), "12".into()]);
        assert_eq!(t.render(""), "name    n\nalice   7\nbo     12\n");
    }

    #[test]
    fn ages_are_coarse_and_never_negative() {
        let now = Utc::now();
        assert_eq!(age(now - chrono::Duration::seconds(42), now), "42s");
        assert_eq!(age(now - chrono::Duration::minutes(90), now), "1h");
        assert_eq!(age(now - chrono::Duration::days(3), now), "3d");
        assert_eq!(age(now + chrono::Duration::seconds(5), now), "0s");
    }

    #[test]
    fn short_takes_the_first_non_blank_line_and_marks_a_cut() {
        assert_eq!(short("\n  Deploy now?  \nmore", 20), "Deploy now?");
        assert_eq!(short("abcdefghij", 5), "abcd…");
    }
}
