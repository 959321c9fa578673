use std::sync::Mutex;

use chrono::{DateTime, Utc};

/// Source of "now", injected so decay, pruning and timestamps are testable without sleeping.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to (tests, benchmarks, replay).
#[derive(Debug)]
pub struct FixedClock(Mutex<DateTime<Utc>>);

impl FixedClock {
    pub fn new(now: DateTime<Utc>) -> Self {
        FixedClock(Mutex::new(now))
    }

    pub fn set(&self, now: DateTime<Utc>) {
        // A poisoned lock only means a panicking test; the value is still usable.
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = now;
    }

    pub fn advance(&self, by: chrono::Duration) {
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *guard += by;
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
