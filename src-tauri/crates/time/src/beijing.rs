//! Beijing time (UTC+8): the exchange's clock and the one users think in.

use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};

/// China has used UTC+8 all year since 1991 (no DST), so a fixed offset is exact for
/// every date the trading calendar covers and avoids pulling in a tz database.
pub const BEIJING_OFFSET_SECS: i32 = 8 * 3600;

/// Beijing wall-clock time of a UTC instant.
pub fn to_beijing(t: DateTime<Utc>) -> NaiveDateTime {
    t.naive_utc()
        .checked_add_signed(offset())
        // only the last eight hours chrono can represent have no Beijing wall time
        .unwrap_or(NaiveDateTime::MAX)
}

/// The UTC instant of a Beijing wall-clock time.
pub fn from_beijing(t: NaiveDateTime) -> DateTime<Utc> {
    t.checked_sub_signed(offset())
        // only the first eight hours chrono can represent have no UTC instant
        .map_or(DateTime::<Utc>::MIN_UTC, |utc| utc.and_utc())
}

fn offset() -> TimeDelta {
    TimeDelta::seconds(i64::from(BEIJING_OFFSET_SECS))
}

/// The Beijing calendar date of `t`, `YYYY-MM-DD`: a UTC date would be a day behind
/// every evening after 16:00 UTC.
pub fn beijing_date(t: DateTime<Utc>) -> String {
    to_beijing(t).format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, 0).unwrap()
    }

    #[test]
    fn beijing_is_utc_plus_8_across_midnight_and_year_ends() {
        // (UTC instant, Beijing wall time, Beijing date)
        let table = [
            (utc(2026, 4, 19, 15, 59), "2026-04-19 23:59", "2026-04-19"),
            // the UTC evening is already the next day in Beijing
            (utc(2026, 4, 19, 16, 0), "2026-04-20 00:00", "2026-04-20"),
            (utc(2026, 12, 2, 16, 30), "2026-12-03 00:30", "2026-12-03"),
            (utc(2023, 12, 31, 16, 0), "2024-01-01 00:00", "2024-01-01"),
            (utc(2024, 2, 28, 20, 0), "2024-02-29 04:00", "2024-02-29"),
            (utc(2024, 1, 2, 7, 0), "2024-01-02 15:00", "2024-01-02"),
            (utc(2024, 1, 2, 0, 0), "2024-01-02 08:00", "2024-01-02"),
        ];
        for (t, wall, date) in table {
            let local = to_beijing(t);
            assert_eq!(local.format("%Y-%m-%d %H:%M").to_string(), wall, "{t}");
            assert_eq!(beijing_date(t), date, "{t}");
            assert_eq!(from_beijing(local), t, "{t}");
        }
    }

    #[test]
    fn the_extremes_do_not_panic() {
        assert_eq!(from_beijing(NaiveDateTime::MIN), DateTime::<Utc>::MIN_UTC);
        assert_eq!(to_beijing(DateTime::<Utc>::MAX_UTC), NaiveDateTime::MAX);
    }
}
