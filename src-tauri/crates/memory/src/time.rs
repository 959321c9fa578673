//! Timestamps are stored as fixed-width UTC RFC 3339 text with milliseconds, so SQL text
//! comparison and ORDER BY follow time order.

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};

use crate::MemoryError;

pub(crate) fn to_db(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn from_db(s: &str) -> Result<DateTime<Utc>, MemoryError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| MemoryError::Corrupt(format!("timestamp `{s}`: {e}")))
}

/// Dates shown to the model and the user are Beijing dates: A-share users think in
/// exchange time, and a UTC date would be off by one every evening.
pub(crate) fn beijing_date(t: DateTime<Utc>) -> String {
    // 8 h is always a valid offset; the fallback only exists to avoid a panic path.
    match FixedOffset::east_opt(8 * 3600) {
        Some(tz) => t.with_timezone(&tz).format("%Y-%m-%d").to_string(),
        None => t.format("%Y-%m-%d").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn db_format_round_trips_and_sorts() {
        let a = Utc.with_ymd_and_hms(2026, 4, 20, 1, 2, 3).unwrap();
        let b = a + chrono::Duration::milliseconds(5);
        assert_eq!(to_db(a), "2026-04-20T01:02:03.000Z");
        assert_eq!(from_db(&to_db(b)).unwrap(), b);
        assert!(to_db(a) < to_db(b));
        assert!(from_db("yesterday").is_err());
    }

    #[test]
    fn beijing_date_rolls_over_at_16_utc() {
        let t = Utc.with_ymd_and_hms(2026, 4, 19, 16, 30, 0).unwrap();
        assert_eq!(beijing_date(t), "2026-04-20");
        let t = Utc.with_ymd_and_hms(2026, 4, 19, 15, 59, 0).unwrap();
        assert_eq!(beijing_date(t), "2026-04-19");
    }
}
