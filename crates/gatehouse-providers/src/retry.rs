//! When to send a failed request again: exponential backoff with jitter,
//! a bounded number of attempts, and the provider's `Retry-After` (or
//! OpenAI's `retry-after-ms`) honoured exactly, unless it asks for longer
//! than we are willing to hold a run, in which case we stop and say so.

use std::time::Duration;

use chrono::{DateTime, Utc};
use rand::Rng;
use reqwest::header::HeaderMap;

/// How a provider retries transient failures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Requests sent at most, the first included (at least 1).
    pub max_attempts: u32,
    /// The wait before the first retry; it doubles for each one after.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
    /// A longer `Retry-After` ends the retries at once.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// The wait before retry number `retry` (1 for the first) without
    /// jitter: `initial_backoff * 2^(retry - 1)`, at most `max_backoff`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.initial_backoff.saturating_mul(factor).min(self.max_backoff)
    }

    /// The wait before retry number `retry`, or `None` to stop: the
    /// provider's `retry_after` when it gave one (stopping when it is over
    /// `max_retry_after`), otherwise the backoff less up to half of it at
    /// random, so clients that failed together do not retry together.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        match retry_after {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait),
            None => {
                let backoff = self.backoff(retry);
                let half = backoff / 2;
                Some(half + half.mul_f64(rand::thread_rng().gen_range(0.0..=1.0)))
            }
        }
    }
}

/// How long the response's headers ask us to wait: `retry-after-ms`, or
/// `Retry-After` in seconds or as an HTTP date (relative to `now`).
pub(crate) fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Duration::try_from_secs_f64(ms / 1000.0).ok();
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).ok();
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?.with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn backoff_doubles_up_to_its_ceiling() {
        let policy = RetryPolicy {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(5),
            ..RetryPolicy::default()
        };
        let waits: Vec<u64> = (1..=5).map(|retry| policy.backoff(retry).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 5, 5]);
        assert_eq!(policy.backoff(200), Duration::from_secs(5));
    }

    #[test]
    fn jitter_stays_between_half_and_the_whole_backoff() {
        let policy = RetryPolicy { initial_backoff: Duration::from_millis(800), ..RetryPolicy::default() };
        for _ in 0..100 {
            let wait = policy.delay(2, None).unwrap();
            assert!(wait >= Duration::from_millis(800) && wait <= Duration::from_millis(1600), "{wait:?}");
        }
    }

    #[test]
    fn a_retry_after_is_honoured_exactly_unless_it_is_too_long() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1, Some(Duration::from_secs(7))), Some(Duration::from_secs(7)));
        assert_eq!(policy.delay(1, Some(Duration::from_secs(61))), None);
    }

    #[test]
    fn retry_after_is_read_in_seconds_milliseconds_or_as_a_date() {
        let now = DateTime::parse_from_rfc3339("2015-10-21T07:28:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(retry_after(&headers(&[("retry-after", "3")]), now), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&headers(&[("retry-after-ms", "250")]), now), Some(Duration::from_millis(250)));
        let date = headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:30 GMT")]);
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(30)));
        let past = headers(&[("retry-after", "Wed, 21 Oct 2015 07:00:00 GMT")]);
        assert_eq!(retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&headers(&[("retry-after", "-1")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}
