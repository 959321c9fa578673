//! Circuit breaker per source: a pure state machine driven by an injected time, so a
//! failing vendor is skipped for a cooldown instead of being hammered on every request.

use std::time::Duration;

use chrono::{DateTime, Utc};

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
}
