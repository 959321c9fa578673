//! Circuit breaker per source: a pure state machine driven by an injected time, so a
//! failing vendor is skipped for a cooldown instead of being hammered on every request.
//!
//! A source that cannot be connected to at all (DNS, refused, no route) opens at once for
//! [`UNREACHABLE_COOLDOWN`]. The state is kept in `wyckoff.db` ([`BreakerStore`]) so a
//! second process — the next `wyckoff analyze`, or the app — skips a source the previous
//! one found unreachable instead of paying the connect failures again. The database,
//! rather than a file beside it, because the app and the CLI already share it with
//! SQLite's locking and this crate's migrations; a file would need its own atomic-write
//! and concurrent-writer handling.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::SqlitePool;

/// How long a source that could not be connected to is skipped (across processes).
/// Short enough that a machine back online gets live data within minutes.
pub const UNREACHABLE_COOLDOWN: Duration = Duration::from_secs(5 * 60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerConfig {
    /// Consecutive failures that open the circuit.
    pub failure_threshold: u32,
    /// How long an open circuit rejects calls before one probe is let through.
    pub cooldown: Duration,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        Self {
            failure_threshold: 3,
            cooldown: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed {
        failures: u32,
    },
    Open {
        until: DateTime<Utc>,
    },
    /// Cooldown over; one probe call is allowed, the rest wait for its outcome.
    HalfOpen {
        probing: bool,
    },
}

#[derive(Debug, Clone)]
pub struct CircuitBreaker {
    cfg: BreakerConfig,
    state: BreakerState,
}

impl CircuitBreaker {
    pub fn new(cfg: BreakerConfig) -> Self {
        Self {
            cfg,
            state: BreakerState::Closed { failures: 0 },
        }
    }

    /// A breaker in a state another process left (see [`BreakerStore`]).
    pub fn restored(cfg: BreakerConfig, state: BreakerState) -> Self {
        Self { cfg, state }
    }

    pub fn state(&self) -> BreakerState {
        self.state
    }

    /// Whether a call may go out now. Moving into half-open reserves the single probe.
    pub fn allow(&mut self, now: DateTime<Utc>) -> bool {
        match self.state {
            BreakerState::Closed { .. } => true,
            BreakerState::Open { until } if now >= until => {
                self.state = BreakerState::HalfOpen { probing: true };
                true
            }
            BreakerState::Open { .. } => false,
            BreakerState::HalfOpen { probing: true } => false,
            BreakerState::HalfOpen { probing: false } => {
                self.state = BreakerState::HalfOpen { probing: true };
                true
            }
        }
    }

    /// The source answered (even "unknown code" shows it is up).
    pub fn on_success(&mut self) {
        self.state = BreakerState::Closed { failures: 0 };
    }

    /// The source failed in a way that says it is unhealthy (network, 5xx, HTML, rate limit).
    pub fn on_failure(&mut self, now: DateTime<Utc>) {
        let open = |cd: Duration| BreakerState::Open {
            until: now + chrono::Duration::from_std(cd).unwrap_or(chrono::Duration::zero()),
        };
        self.state = match self.state {
            BreakerState::Closed { failures } => {
                let failures = failures + 1;
                if failures >= self.cfg.failure_threshold {
                    open(self.cfg.cooldown)
                } else {
                    BreakerState::Closed { failures }
                }
            }
            BreakerState::HalfOpen { .. } => open(self.cfg.cooldown),
            // a late failure from before the circuit opened does not extend the cooldown
            s @ BreakerState::Open { .. } => s,
        };
    }

    /// The source could not be connected to at all: nothing will answer on a retry a
    /// moment later, so the circuit opens now for [`UNREACHABLE_COOLDOWN`] (an open
    /// circuit that already runs longer keeps its end).
    pub fn on_unreachable(&mut self, now: DateTime<Utc>) {
        self.open_for(now, UNREACHABLE_COOLDOWN);
    }

    /// The source said to stay away (a ban, or "wait N seconds"): asking again before then
    /// only prolongs it, so the circuit opens now for `period` (an open circuit that
    /// already runs longer keeps its end).
    pub fn open_for(&mut self, now: DateTime<Utc>, period: Duration) {
        let until = now + chrono::Duration::from_std(period).unwrap_or(chrono::Duration::zero());
        self.state = match self.state {
            BreakerState::Open { until: later } if later > until => {
                BreakerState::Open { until: later }
            }
            _ => BreakerState::Open { until },
        };
    }
}

/// One source's breaker as stored: what a later process restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredBreaker {
    pub state: BreakerState,
    /// The end of the open period a skip was already reported for ("say so once").
    pub announced_until: Option<DateTime<Utc>>,
}

/// A source skipped because it was unreachable recently, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedSource {
    pub source: String,
    pub until: DateTime<Utc>,
}

/// Whether every source is inside an open period now, and the ones whose skip was not yet
/// reported. `None` when at least one source may be tried (or there are none).
pub fn all_skipped(
    states: &[(&str, StoredBreaker)],
    now: DateTime<Utc>,
) -> Option<Vec<SkippedSource>> {
    if states.is_empty() {
        return None;
    }
    let mut unannounced = Vec::new();
    for (source, stored) in states {
        let BreakerState::Open { until } = stored.state else {
            return None;
        };
        if now >= until {
            return None;
        }
        if stored.announced_until != Some(until) {
            unannounced.push(SkippedSource {
                source: (*source).to_owned(),
                until,
            });
        }
    }
    Some(unannounced)
}

/// The breakers of every source, in `wyckoff.db` (migration 2200).
#[derive(Debug, Clone)]
pub struct BreakerStore {
    pool: SqlitePool,
}

fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn from_millis(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::<Utc>::from_timestamp_millis(ms)
}

impl BreakerStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Every stored breaker by source name. A half-open state is never stored (it is a
    /// probe in flight in one process).
    pub async fn load(&self) -> Result<HashMap<String, StoredBreaker>, sqlx::Error> {
        let rows: Vec<(String, i64, Option<i64>, Option<i64>)> = sqlx::query_as(
            "SELECT source, failures, open_until_ms, announced_until_ms FROM market_source_breaker",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(source, failures, open_until, announced)| {
                let state = match open_until.and_then(from_millis) {
                    Some(until) => BreakerState::Open { until },
                    None => BreakerState::Closed {
                        failures: u32::try_from(failures).unwrap_or(0),
                    },
                };
                let stored = StoredBreaker {
                    state,
                    announced_until: announced.and_then(from_millis),
                };
                (source, stored)
            })
            .collect())
    }

    /// Records a breaker's new state; the report mark of an earlier open period stays
    /// (it no longer matches, so the next skip is reported again).
    pub async fn save(&self, source: &str, state: BreakerState) -> Result<(), sqlx::Error> {
        let (failures, open_until) = match state {
            BreakerState::Closed { failures } => (i64::from(failures), None),
            BreakerState::Open { until } => (0, Some(millis(until))),
            BreakerState::HalfOpen { .. } => return Ok(()),
        };
        sqlx::query(
            "INSERT INTO market_source_breaker (source, failures, open_until_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT(source) DO UPDATE SET failures = excluded.failures, open_until_ms = excluded.open_until_ms",
        )
        .bind(source)
        .bind(failures)
        .bind(open_until)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Notes that the skip of `source` until `until` has been reported.
    pub async fn mark_announced(
        &self,
        source: &str,
        until: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE market_source_breaker SET announced_until_ms = ?2 WHERE source = ?1")
            .bind(source)
            .bind(millis(until))
            .execute(&self.pool)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[derive(Debug, Clone, Copy)]
    enum Ev {
        Allow(i64, bool),
        Ok,
        Fail(i64),
    }

    fn t(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_700_000_000 + s, 0).unwrap()
    }

    #[test]
    fn state_table() {
        use Ev::*;
        let cfg = BreakerConfig {
            failure_threshold: 2,
            cooldown: Duration::from_secs(10),
        };
        // (events, final state)
        let cases: Vec<(Vec<Ev>, BreakerState)> = vec![
            (vec![Allow(0, true)], BreakerState::Closed { failures: 0 }),
            (vec![Fail(0)], BreakerState::Closed { failures: 1 }),
            (vec![Fail(0), Ok], BreakerState::Closed { failures: 0 }),
            (
                vec![Fail(0), Fail(1), Allow(5, false)],
                BreakerState::Open { until: t(11) },
            ),
            (
                vec![Fail(0), Fail(1), Allow(11, true), Allow(11, false)],
                BreakerState::HalfOpen { probing: true },
            ),
            (
                vec![Fail(0), Fail(1), Allow(11, true), Ok, Allow(12, true)],
                BreakerState::Closed { failures: 0 },
            ),
            (
                vec![
                    Fail(0),
                    Fail(1),
                    Allow(11, true),
                    Fail(12),
                    Allow(21, false),
                    Allow(22, true),
                ],
                BreakerState::HalfOpen { probing: true },
            ),
            (
                vec![Fail(0), Fail(1), Fail(5)],
                BreakerState::Open { until: t(11) },
            ),
            // success in between resets the count
            (
                vec![Fail(0), Ok, Fail(2), Allow(3, true)],
                BreakerState::Closed { failures: 1 },
            ),
        ];
        for (i, (events, want)) in cases.into_iter().enumerate() {
            let mut b = CircuitBreaker::new(cfg);
            for ev in &events {
                match *ev {
                    Allow(s, expect) => assert_eq!(b.allow(t(s)), expect, "case {i} {events:?}"),
                    Ok => b.on_success(),
                    Fail(s) => b.on_failure(t(s)),
                }
            }
            assert_eq!(b.state(), want, "case {i} {events:?}");
        }
    }

    #[test]
    fn unreachable_opens_at_once_for_the_unreachable_cooldown() {
        let cfg = BreakerConfig::default();
        let cd = UNREACHABLE_COOLDOWN.as_secs() as i64;
        // (state before, then on_unreachable at t(100), state after)
        let cases = [
            (
                BreakerState::Closed { failures: 0 },
                BreakerState::Open { until: t(100 + cd) },
            ),
            (
                BreakerState::Closed { failures: 2 },
                BreakerState::Open { until: t(100 + cd) },
            ),
            (
                BreakerState::HalfOpen { probing: true },
                BreakerState::Open { until: t(100 + cd) },
            ),
            // an open period that already ends later keeps its end
            (
                BreakerState::Open {
                    until: t(100 + cd + 50),
                },
                BreakerState::Open {
                    until: t(100 + cd + 50),
                },
            ),
            // a shorter one is extended
            (
                BreakerState::Open { until: t(110) },
                BreakerState::Open { until: t(100 + cd) },
            ),
        ];
        for (before, after) in cases {
            let mut b = CircuitBreaker::restored(cfg, before);
            b.on_unreachable(t(100));
            assert_eq!(b.state(), after, "{before:?}");
            assert!(!b.allow(t(100 + cd - 1)), "{before:?}");
        }
    }

    #[test]
    fn a_source_that_says_to_stay_away_is_left_alone_exactly_that_long() {
        let mut b = CircuitBreaker::new(BreakerConfig::default());
        b.open_for(t(100), Duration::from_secs(90));
        assert_eq!(b.state(), BreakerState::Open { until: t(190) });
        assert!(!b.allow(t(189)));
        // the wait over, one probe goes out
        assert!(b.allow(t(190)));
        assert!(!b.allow(t(190)));
    }

    #[test]
    fn all_skipped_table() {
        let open = |until: i64, announced: Option<i64>| StoredBreaker {
            state: BreakerState::Open { until: t(until) },
            announced_until: announced.map(t),
        };
        let closed = StoredBreaker {
            state: BreakerState::Closed { failures: 1 },
            announced_until: None,
        };
        let skipped = |name: &str, until: i64| SkippedSource {
            source: name.into(),
            until: t(until),
        };
        // (states, now, want)
        type Case<'a> = (
            Vec<(&'a str, StoredBreaker)>,
            i64,
            Option<Vec<SkippedSource>>,
        );
        let cases: Vec<Case> = vec![
            (vec![], 0, None),
            (vec![("em", open(10, None)), ("tx", closed)], 0, None),
            (vec![("em", open(10, None)), ("tx", open(5, None))], 5, None),
            (
                vec![("em", open(10, None)), ("tx", open(20, None))],
                5,
                Some(vec![skipped("em", 10), skipped("tx", 20)]),
            ),
            // reported already for this very period: skipped quietly
            (
                vec![("em", open(10, Some(10))), ("tx", open(20, Some(20)))],
                5,
                Some(vec![]),
            ),
            // a report for an earlier period does not count
            (
                vec![("em", open(10, Some(3))), ("tx", open(20, Some(20)))],
                5,
                Some(vec![skipped("em", 10)]),
            ),
        ];
        for (i, (states, now, want)) in cases.into_iter().enumerate() {
            assert_eq!(all_skipped(&states, t(now)), want, "case {i}");
        }
    }
}
