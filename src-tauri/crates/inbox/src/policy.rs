//! When an inbox request may be answered, and what answering it does: pure functions of
//! its status, its expiry and the time.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use wyckoff_protocol::InboxStatus;

/// How long a queued call waits for an answer unless the run says otherwise.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);

/// The longest expiry a run may ask for (a year).
pub const MAX_EXPIRY: Duration = Duration::from_secs(366 * 24 * 60 * 60);

/// An answer to a pending request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Allow,
    Deny,
}

/// What an answer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The request moves to this status (allowed: the call runs now).
    Apply(InboxStatus),
    /// Too late: the request becomes expired and is refused; the model is told.
    Expire,
    /// Already decided: nothing changes.
    AlreadyDecided(InboxStatus),
}

/// When an answer is given: `recorded` is the clock's time (stored as the decision time
/// and in the audit log), `judged` the time the expiry is judged at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerTime {
    pub recorded: DateTime<Utc>,
    pub judged: DateTime<Utc>,
}

impl AnswerTime {
    /// An answer at `clock`, the real time. `asked` (`--now`) may move the judged time
    /// later (to see what happens at an expiry) but never earlier: a back-dated answer
    /// would allow a request that has already expired. The record keeps the real time
    /// either way.
    pub fn new(clock: DateTime<Utc>, asked: Option<DateTime<Utc>>) -> AnswerTime {
        AnswerTime {
            recorded: clock,
            judged: asked.map_or(clock, |asked| asked.max(clock)),
        }
    }
}

/// The moment a request made at `created` expires.
pub fn expires_at(created: DateTime<Utc>, expiry: Duration) -> DateTime<Utc> {
    created + TimeDelta::from_std(expiry).unwrap_or(TimeDelta::MAX)
}

/// A request is answerable strictly before its expiry; at the expiry itself it is not.
pub fn is_expired(now: DateTime<Utc>, expires_at: DateTime<Utc>) -> bool {
    now >= expires_at
}

/// The one rule for answers: only a pending request is answered, and only before it
/// expires (an answer at or after the expiry expires it, whichever answer it was).
pub fn verdict(
    status: InboxStatus,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
    answer: Answer,
) -> Verdict {
    if status != InboxStatus::Pending {
        return Verdict::AlreadyDecided(status);
    }
    if is_expired(now, expires_at) {
        return Verdict::Expire;
    }
    Verdict::Apply(match answer {
        Answer::Allow => InboxStatus::Allowed,
        Answer::Deny => InboxStatus::Denied,
    })
}

/// The status a request is shown with at `now` (a pending one past its expiry is
/// expired, even before anyone touched it).
pub fn status_at(
    status: InboxStatus,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> InboxStatus {
    if status == InboxStatus::Pending && is_expired(now, expires_at) {
        InboxStatus::Expired
    } else {
        status
    }
}

/// Moves allowed between statuses: out of pending only, never back.
pub fn may_move(from: InboxStatus, to: InboxStatus) -> bool {
    from == InboxStatus::Pending && to != InboxStatus::Pending
}

/// Parses an expiry such as `24h`, `90m`, `30s` or `2d` (a bare number is minutes).
pub fn parse_expiry(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, "m"),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("'{text}' is not an expiry (e.g. 24h, 90m, 30s, 2d)"))?;
    let secs = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        "d" => n.saturating_mul(86_400),
        _ => {
            return Err(format!(
                "'{text}' is not an expiry (e.g. 24h, 90m, 30s, 2d)"
            ));
        }
    };
    let expiry = Duration::from_secs(secs);
    if expiry.is_zero() || expiry > MAX_EXPIRY {
        return Err(format!("an expiry is between 1 s and 366 d: '{text}'"));
    }
    Ok(expiry)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use InboxStatus::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    #[test]
    fn answers_by_status_and_expiry() {
        let expires = at("2026-12-05T07:00:00Z");
        let before = at("2026-12-05T06:59:59Z");
        let on = expires;
        let after = at("2026-12-05T07:00:01Z");
        let cases = [
            (Pending, before, Answer::Allow, Verdict::Apply(Allowed)),
            (Pending, before, Answer::Deny, Verdict::Apply(Denied)),
            (Pending, on, Answer::Allow, Verdict::Expire),
            (Pending, on, Answer::Deny, Verdict::Expire),
            (Pending, after, Answer::Allow, Verdict::Expire),
            (
                Allowed,
                before,
                Answer::Allow,
                Verdict::AlreadyDecided(Allowed),
            ),
            (
                Allowed,
                before,
                Answer::Deny,
                Verdict::AlreadyDecided(Allowed),
            ),
            (
                Denied,
                before,
                Answer::Allow,
                Verdict::AlreadyDecided(Denied),
            ),
            (
                Expired,
                before,
                Answer::Allow,
                Verdict::AlreadyDecided(Expired),
            ),
            (
                Expired,
                after,
                Answer::Deny,
                Verdict::AlreadyDecided(Expired),
            ),
        ];
        for (status, now, answer, want) in cases {
            assert_eq!(
                verdict(status, expires, now, answer),
                want,
                "{status:?} {now} {answer:?}"
            );
        }
    }

    #[test]
    fn an_answer_is_judged_no_earlier_than_the_clock_and_recorded_at_it() {
        let clock = at("2026-12-05T07:00:00Z");
        let cases = [
            (None, clock),
            (Some(at("2020-01-01T00:00:00Z")), clock),
            (Some(clock), clock),
            (Some(at("2026-12-06T07:00:00Z")), at("2026-12-06T07:00:00Z")),
        ];
        for (asked, judged) in cases {
            assert_eq!(
                AnswerTime::new(clock, asked),
                AnswerTime {
                    recorded: clock,
                    judged
                },
                "{asked:?}"
            );
        }
        // A back-dated answer to an expired request is still too late.
        let expires = at("2026-12-05T06:00:00Z");
        let back = AnswerTime::new(clock, Some(at("2020-01-01T00:00:00Z")));
        assert_eq!(
            verdict(Pending, expires, back.judged, Answer::Allow),
            Verdict::Expire
        );
    }

    #[test]
    fn shown_status_and_transitions() {
        let expires = at("2026-12-05T07:00:00Z");
        assert_eq!(
            status_at(Pending, expires, at("2026-12-05T06:59:59Z")),
            Pending
        );
        assert_eq!(status_at(Pending, expires, expires), Expired);
        assert_eq!(status_at(Denied, expires, expires), Denied);
        for (from, to, ok) in [
            (Pending, Allowed, true),
            (Pending, Denied, true),
            (Pending, Expired, true),
            (Pending, Pending, false),
            (Allowed, Denied, false),
            (Denied, Allowed, false),
            (Expired, Allowed, false),
            (Allowed, Pending, false),
        ] {
            assert_eq!(may_move(from, to), ok, "{from:?} → {to:?}");
        }
    }

    #[test]
    fn expiry_defaults_and_parses() {
        let created = at("2026-12-04T07:00:00Z");
        assert_eq!(
            expires_at(created, DEFAULT_EXPIRY),
            at("2026-12-05T07:00:00Z")
        );
        for (text, secs) in [
            ("24h", 86_400),
            ("90m", 5_400),
            ("90", 5_400),
            ("30s", 30),
            ("2d", 172_800),
            ("1s", 1),
            ("366d", 366 * 86_400),
        ] {
            assert_eq!(parse_expiry(text), Ok(Duration::from_secs(secs)), "{text}");
        }
        for bad in ["", "h", "0m", "-5m", "5w", "1.5h", "367d", "24 h"] {
            assert!(parse_expiry(bad).is_err(), "{bad}");
        }
    }
}
