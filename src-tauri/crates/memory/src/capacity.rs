//! Capacity and retention (seed 记忆容量控制): per-type caps, oldest trimmed on insert;
//! non-preference memories older than 90 days are pruned.

use chrono::{DateTime, Duration, Utc};

use crate::MemoryType;

/// Non-preference memories older than this many days are removed by `prune`.
pub const RETENTION_DAYS: i64 = 90;

/// Maximum number of stored memories of a type; the oldest beyond it are trimmed.
pub fn cap(memory_type: MemoryType) -> usize {
    match memory_type {
        MemoryType::Preference => 50,
        MemoryType::StockOpinion | MemoryType::Decision => 30,
        MemoryType::MarketView => 20,
        // The seed gives no cap for session; extraction writes several per session, so
        // without one they would pile up until the 90-day prune.
        MemoryType::Session => 50,
    }
}

/// Whether a memory of this type is removed by age at all.
pub fn expires(memory_type: MemoryType) -> bool {
    memory_type != MemoryType::Preference
}

/// Memories created strictly before this instant are expired.
pub fn prune_cutoff(now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::days(RETENTION_DAYS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn caps_follow_the_seed() {
        let table = [
            (MemoryType::Preference, 50, false),
            (MemoryType::StockOpinion, 30, true),
            (MemoryType::Decision, 30, true),
            (MemoryType::MarketView, 20, true),
            (MemoryType::Session, 50, true),
        ];
        for (t, c, e) in table {
            assert_eq!(cap(t), c, "{t}");
            assert_eq!(expires(t), e, "{t}");
        }
    }

    #[test]
    fn cutoff_is_ninety_days_back() {
        let now = Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap();
        assert_eq!(
            prune_cutoff(now),
            Utc.with_ymd_and_hms(2026, 4, 2, 0, 0, 0).unwrap()
        );
    }
}
