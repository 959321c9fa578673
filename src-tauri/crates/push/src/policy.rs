//! When a send is done, retried or given up (pure).

use std::time::Duration;

/// Sends before a row that keeps failing with retryable errors is given up.
pub const MAX_ATTEMPTS: u32 = 10;
/// The first retry's wait; each later one doubles, up to [`MAX_BACKOFF`].
pub const FIRST_BACKOFF: Duration = Duration::from_secs(30);
pub const MAX_BACKOFF: Duration = Duration::from_secs(3600);

/// What one attempt's result means for the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Sent,
    /// Try again after the backoff.
    Retry,
    /// The channel refused it for good (a 4xx other than 408/429).
    Permanent,
}

/// The verdict on an HTTP status; `None` is no answer (timeout, connection refused).
pub fn verdict(status: Option<u16>) -> Verdict {
    match status {
        Some(s) if (200..300).contains(&s) => Verdict::Sent,
        Some(408 | 429) | None => Verdict::Retry,
        Some(s) if (400..500).contains(&s) => Verdict::Permanent,
        Some(_) => Verdict::Retry,
    }
}

/// The wait before the next attempt after `attempts` failed ones (1 → 30 s, 2 → 60 s, …,
/// capped at an hour).
pub fn backoff(attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1u32 << doublings)
        .min(MAX_BACKOFF)
}

/// Whether a row that failed `attempts` times with retryable errors is given up.
pub fn exhausted(attempts: u32) -> bool {
    attempts >= MAX_ATTEMPTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_sent_retry_or_permanent() {
        let table = [
            (Some(200), Verdict::Sent),
            (Some(204), Verdict::Sent),
            (Some(299), Verdict::Sent),
            (Some(300), Verdict::Retry),
            (Some(400), Verdict::Permanent),
            (Some(404), Verdict::Permanent),
            (Some(408), Verdict::Retry),
            (Some(429), Verdict::Retry),
            (Some(499), Verdict::Permanent),
            (Some(500), Verdict::Retry),
            (Some(503), Verdict::Retry),
            (None, Verdict::Retry),
        ];
        for (status, want) in table {
            assert_eq!(verdict(status), want, "{status:?}");
        }
    }

    #[test]
    fn backoff_doubles_from_thirty_seconds_up_to_an_hour() {
        let table = [
            (0, 30),
            (1, 30),
            (2, 60),
            (3, 120),
            (7, 1920),
            (8, 3600),
            (9, 3600),
            (40, 3600),
        ];
        for (attempts, secs) in table {
            assert_eq!(backoff(attempts), Duration::from_secs(secs), "{attempts}");
        }
        assert!(!exhausted(MAX_ATTEMPTS - 1));
        assert!(exhausted(MAX_ATTEMPTS));
    }
}
