//! Injected time, so deadlines (approval and tool timeouts), staleness, backoff, decay and
//! timestamps are tested without sleeping.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDateTime, Utc};
use tokio::sync::Notify;

use crate::beijing::{from_beijing, to_beijing};

#[async_trait]
pub trait Clock: Send + Sync {
    /// Wall-clock time, for timestamps (task records, memories, cache freshness).
    fn now(&self) -> DateTime<Utc>;

    /// Wall-clock time at the exchange and for the user (Beijing, UTC+8).
    fn now_beijing(&self) -> NaiveDateTime {
        to_beijing(self.now())
    }

    /// Waits for `duration` of this clock's time; real time unless the clock says otherwise.
    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

/// The real clock: `chrono::Utc::now` and `tokio::time::sleep`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Real time moved to start at a chosen instant: `now` is that instant plus the real time
/// elapsed since the clock was made, and sleeps are real. A whole app can run "at"
/// 2020-06-17 10:42 this way (a test or diagnostic override), its timers and timeouts
/// behaving as they do on the system clock.
#[derive(Debug, Clone, Copy)]
pub struct ShiftedClock {
    start: DateTime<Utc>,
    started: std::time::Instant,
}

impl ShiftedClock {
    /// A clock reading `start` now and moving on in real time.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        ShiftedClock {
            start,
            started: std::time::Instant::now(),
        }
    }
}

impl Clock for ShiftedClock {
    fn now(&self) -> DateTime<Utc> {
        add_std(self.start, self.started.elapsed())
    }
}

/// Parses a clock override: RFC 3339 (`2020-06-17T10:42:00+08:00`), or a Beijing wall
/// time `YYYY-MM-DD HH:MM[:SS]` (the form the CLI's `--now` takes). `None` when it is
/// neither.
pub fn parse_instant(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.to_utc());
    }
    ["%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(from_beijing)
}

/// A clock that only moves when told to (tests, benchmarks, replay). Sleepers wake once
/// `advance` or `set` passes their deadline, which lets tests drive a 120 s approval
/// timeout in microseconds.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
    moved: Notify,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            now: Mutex::new(start),
            moved: Notify::new(),
        }
    }

    /// A clock set to a Beijing wall-clock time.
    pub fn at_beijing(local: NaiveDateTime) -> Self {
        Self::new(from_beijing(local))
    }

    pub fn set(&self, now: DateTime<Utc>) {
        // A poisoned lock only means a panicking test; the value is still usable.
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = now;
        self.moved.notify_waiters();
    }

    pub fn advance(&self, by: Duration) {
        {
            let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
            *now = add_std(*now, by);
        }
        self.moved.notify_waiters();
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new(DateTime::<Utc>::UNIX_EPOCH + chrono::Duration::days(20_000))
    }
}

/// `at + by`, saturating instead of panicking on overflow.
fn add_std(at: DateTime<Utc>, by: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(by)
        .ok()
        .and_then(|d| at.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[async_trait]
impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn sleep(&self, duration: Duration) {
        let deadline = add_std(self.now(), duration);
        loop {
            // Register interest before checking, so a move between check and await is not lost.
            let notified = self.moved.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.now() >= deadline {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use std::sync::Arc;

    #[tokio::test]
    async fn manual_clock_wakes_sleepers_only_past_deadline() {
        let clock = Arc::new(ManualClock::default());
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep(Duration::from_secs(120)).await });
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(60));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_secs(61));
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn set_wakes_sleepers_too() {
        let clock = Arc::new(ManualClock::default());
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep(Duration::from_secs(60)).await });
        tokio::task::yield_now().await;
        clock.set(clock.now() + chrono::Duration::minutes(2));
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_system_clock_sleeps_in_tokio_time() {
        let before = tokio::time::Instant::now();
        SystemClock.sleep(Duration::from_secs(30)).await;
        assert_eq!(before.elapsed(), Duration::from_secs(30));
    }

    #[test]
    fn clock_overrides_parse_as_rfc_3339_or_beijing_wall_time() {
        let bj =
            |s: &str| from_beijing(NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap());
        let table = [
            ("2020-06-17T10:42:00+08:00", Some(bj("2020-06-17 10:42:00"))),
            ("2020-06-17T02:42:00Z", Some(bj("2020-06-17 10:42:00"))),
            (" 2020-06-17 10:42 ", Some(bj("2020-06-17 10:42:00"))),
            ("2020-06-17 10:42:30", Some(bj("2020-06-17 10:42:30"))),
            ("2020-06-17", None),
            ("2020-06-31 10:42", None),
            ("10:42", None),
            ("", None),
        ];
        for (text, want) in table {
            assert_eq!(parse_instant(text), want, "{text:?}");
        }
    }

    #[test]
    fn a_shifted_clock_starts_at_its_instant_and_moves_in_real_time() {
        let start = parse_instant("2020-06-17 10:42").unwrap();
        let c = ShiftedClock::starting_at(start);
        let first = c.now();
        assert!(first >= start && first - start < chrono::Duration::seconds(5));
        std::thread::sleep(Duration::from_millis(20));
        assert!(c.now() - first >= chrono::Duration::milliseconds(20));
        assert_eq!(
            c.now_beijing().date(),
            NaiveDate::from_ymd_opt(2020, 6, 17).unwrap()
        );
    }

    #[test]
    fn a_clock_at_a_beijing_time_reads_utc_eight_hours_earlier() {
        let local = NaiveDate::from_ymd_opt(2024, 1, 2)
            .unwrap()
            .and_hms_opt(15, 0, 0)
            .unwrap();
        let c = ManualClock::at_beijing(local);
        assert_eq!(c.now().format("%H").to_string(), "07");
        assert_eq!(c.now_beijing(), local);
        c.advance(Duration::from_secs(3600));
        assert_eq!(c.now_beijing().format("%H").to_string(), "16");
        // advancing past the representable end saturates instead of panicking
        c.advance(Duration::MAX);
        assert_eq!(c.now(), DateTime::<Utc>::MAX_UTC);
    }
}
