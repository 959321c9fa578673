//! Timestamps are stored as fixed-width UTC RFC 3339 text with milliseconds, so SQL text
//! comparison and ORDER BY follow time order.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::MemoryError;

pub(crate) fn to_db(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn from_db(s: &str) -> Result<DateTime<Utc>, MemoryError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| MemoryError::Corrupt(format!("timestamp `{s}`: {e}")))
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
}
