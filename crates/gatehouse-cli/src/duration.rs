//! Durations as people type them on a command line: a whole number and a
//! unit, `90s`, `10m`, `2h`, `1d` (several may follow each other: `1h30m`).
//! A bare number is refused rather than guessed, and every error says what
//! a valid value looks like.

use std::time::Duration;

/// The units and their length in seconds, smallest first.
const UNITS: [(&str, u64); 4] = [("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)];

/// Parses `90s`, `10m`, `2h`, `1d` or a sum such as `1h30m`; used as a clap value parser.
pub fn parse(text: &str) -> Result<Duration, String> {
    let hint = "use a number and a unit: 90s, 10m, 2h or 1d";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the duration is empty; {hint}"));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("`{text}` is not a duration: expected a number before `{rest}`; {hint}"));
        }
        let number: u64 =
            rest[..digits].parse().map_err(|_| format!("`{text}` is not a duration: the number is too large"))?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        let Some((_, secs)) = UNITS.iter().find(|(name, _)| *name == unit) else {
            return Err(if unit.is_empty() {
                format!("`{text}` has no unit; {hint}")
            } else {
                format!("`{text}`: `{unit}` is not a unit; {hint}")
            });
        };
        total = number
            .checked_mul(*secs)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(|| format!("`{text}` is too long a duration"))?;
        rest = &rest[unit_len..];
    }
    if total == 0 {
        return Err(format!("`{text}` is zero; give a duration of at least 1s"));
    }
    Ok(Duration::from_secs(total))
}

/// A duration written back the way [`parse`] reads it, largest units first: `1h30m`.
pub fn format(duration: Duration) -> String {
    let mut secs = duration.as_secs();
    if secs == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (name, size) in UNITS.iter().rev() {
        if secs >= *size {
            out.push_str(&format!("{}{name}", secs / size));
            secs %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unit_and_sums_of_them_parse() {
        assert_eq!(parse("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse("2h"), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse("1d"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse(" 1h30m "), Ok(Duration::from_secs(5_400)));
    }

    #[test]
    fn mistakes_are_refused_with_the_expected_shape() {
        for bad in ["", "10", "m", "10x", "1.5h", "-5m", "0s", "99999999999999999999s"] {
            let err = parse(bad).expect_err(bad);
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(parse("10").unwrap_err().contains("no unit"));
        assert!(parse("10x").unwrap_err().contains("90s, 10m, 2h or 1d"));
        assert!(parse("0m").unwrap_err().contains("at least 1s"));
    }

    #[test]
    fn formatting_reads_back_the_same() {
        for text in ["2s", "10m", "1h30m", "1d2h3m4s"] {
            assert_eq!(format(parse(text).unwrap()), text);
        }
    }
}
