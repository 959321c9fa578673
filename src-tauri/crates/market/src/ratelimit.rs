//! Per-source pacing and retry backoff, as pure functions of an injected time.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// Spaces requests at least `min_interval` apart. Reservation-based: each caller gets the
/// next free slot, so concurrent callers queue instead of bursting.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    min_interval: Duration,
    next_free: Option<DateTime<Utc>>,
}

impl RateLimiter {
    pub fn new(min_interval: Duration) -> Self {
        Self {
            min_interval,
            next_free: None,
        }
    }

    /// Reserves a slot and returns how long to wait before using it.
    pub fn reserve(&mut self, now: DateTime<Utc>) -> Duration {
        let start = match self.next_free {
            Some(t) if t > now => t,
            _ => now,
        };
        self.next_free =
            Some(start + chrono::Duration::from_std(self.min_interval).unwrap_or_default());
        (start - now).to_std().unwrap_or(Duration::ZERO)
    }

    /// The vendor told us to back off: no slot before `now + wait`.
    pub fn penalize(&mut self, now: DateTime<Utc>, wait: Duration) {
        let until = now + chrono::Duration::from_std(wait).unwrap_or_default();
        if self.next_free.is_none_or(|t| t < until) {
            self.next_free = Some(until);
        }
    }
}

/// Delay before retry number `attempt` (0-based): exponential from `base`, capped at `max`;
/// a vendor's own retry-after wins when it gave one (still capped).
pub fn backoff_delay(
    attempt: u32,
    base: Duration,
    max: Duration,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(r) = retry_after {
        return r.min(max);
    }
    let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(ms: i64) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(1_700_000_000_000 + ms).unwrap()
    }

    #[test]
    fn spaces_requests() {
        let mut r = RateLimiter::new(Duration::from_secs(1));
        assert_eq!(r.reserve(t(0)), Duration::ZERO);
        // two more callers at the same instant queue one second apart
        assert_eq!(r.reserve(t(0)), Duration::from_secs(1));
        assert_eq!(r.reserve(t(0)), Duration::from_secs(2));
        // much later: no wait
        assert_eq!(r.reserve(t(10_000)), Duration::ZERO);
        assert_eq!(r.reserve(t(10_400)), Duration::from_millis(600));
    }

    #[test]
    fn zero_interval_never_waits() {
        let mut r = RateLimiter::new(Duration::ZERO);
        for _ in 0..5 {
            assert_eq!(r.reserve(t(0)), Duration::ZERO);
        }
    }

    #[test]
    fn penalty_pushes_the_next_slot() {
        let mut r = RateLimiter::new(Duration::from_secs(1));
        assert_eq!(r.reserve(t(0)), Duration::ZERO);
        r.penalize(t(0), Duration::from_secs(30));
        assert_eq!(r.reserve(t(1_000)), Duration::from_secs(29));
        // a shorter penalty does not shorten an existing wait
        r.penalize(t(1_000), Duration::from_secs(1));
        assert_eq!(r.reserve(t(1_000)), Duration::from_secs(30));
    }

    #[test]
    fn backoff_table() {
        let b = Duration::from_millis(500);
        let m = Duration::from_secs(5);
        let cases = [
            (0, None, 500),
            (1, None, 1000),
            (2, None, 2000),
            (3, None, 4000),
            (4, None, 5000),
            (40, None, 5000),
            (0, Some(3000), 3000),
            (0, Some(90_000), 5000),
        ];
        for (attempt, ra, want) in cases {
            assert_eq!(
                backoff_delay(attempt, b, m, ra.map(Duration::from_millis)),
                Duration::from_millis(want),
                "{attempt} {ra:?}"
            );
        }
    }
}
