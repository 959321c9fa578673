//! Injected time, so deadlines (approval timeouts, tool timeouts) and timestamps can be
//! tested without sleeping.

use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::Notify;

#[async_trait]
pub trait Clock: Send + Sync {
    /// Wall-clock time, for timestamps (task records, scratchpad names).
    fn now(&self) -> DateTime<Utc>;
    /// Waits for `duration` of this clock's time.
    async fn sleep(&self, duration: Duration);
}

/// The real clock: `chrono::Utc::now` and `tokio::time::sleep`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[async_trait]
impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

/// A clock that only moves when told to. Sleepers wake once `advance` passes their
/// deadline, which lets tests drive a 120 s approval timeout in microseconds.
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

    pub fn advance(&self, by: Duration) {
        if let Ok(mut now) = self.now.lock() {
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
        self.now
            .lock()
            .map(|n| *n)
            .unwrap_or(DateTime::<Utc>::UNIX_EPOCH)
    }

    async fn sleep(&self, duration: Duration) {
        let deadline = add_std(self.now(), duration);
        loop {
            // Register interest before checking, so an advance between check and await is not lost.
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
}
