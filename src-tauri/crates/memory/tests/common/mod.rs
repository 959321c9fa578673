// Shared helpers for the integration tests (included with `mod common;`).
// Test helpers may panic: clippy's test allowance covers only #[test] fns.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use tempfile::TempDir;
use wyckoff_memory::{ConversationStore, ManualClock, MemoryStore, open_pool};

pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 5, 1, 2, 0, 0).unwrap()
}

/// A store over a real SQLite file in a temp dir, on a clock the test controls.
pub async fn store() -> (TempDir, MemoryStore, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let pool = open_pool(dir.path().join("wyckoff.db")).await.unwrap();
    let clock = Arc::new(ManualClock::new(t0()));
    (dir, MemoryStore::with_clock(pool, clock.clone()), clock)
}

/// A conversation store over a real SQLite file in a temp dir.
pub async fn conversation_store() -> (TempDir, ConversationStore, Arc<ManualClock>) {
    let dir = tempfile::tempdir().unwrap();
    let pool = open_pool(dir.path().join("wyckoff.db")).await.unwrap();
    let clock = Arc::new(ManualClock::new(t0()));
    (
        dir,
        ConversationStore::with_clock(pool, clock.clone()),
        clock,
    )
}
