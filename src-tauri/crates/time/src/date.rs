//! Trading dates are `u32` `YYYYMMDD` (the engine's `Bar::date`); helpers to convert,
//! show and parse them.

use chrono::{Datelike, NaiveDate};

/// `20240102` from a calendar date.
pub fn to_yyyymmdd(d: NaiveDate) -> u32 {
    // year is always positive for market dates; month/day fit easily
    (d.year().max(0) as u32) * 10_000 + d.month() * 100 + d.day()
}

/// Calendar date from `YYYYMMDD`; `None` when it is not a real date.
pub fn from_yyyymmdd(v: u32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt((v / 10_000) as i32, (v / 100) % 100, v % 100)
}

/// Whether `YYYYMMDD` is a real date, exactly as [`from_yyyymmdd`] decides, in plain
/// arithmetic: every cached bar's date is checked on each whole-market read.
pub fn is_valid_yyyymmdd(v: u32) -> bool {
    let (y, m, d) = (v / 10_000, (v / 100) % 100, v % 100);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    // chrono's last representable year
    y <= 262_142 && (1..=days).contains(&d)
}

/// `2024-01-02` for display and for sources that want dashes. Any `u32` is shown digit
/// for digit, real date or not, so a bad value is visible rather than hidden.
pub fn iso(v: u32) -> String {
    format!("{:04}-{:02}-{:02}", v / 10_000, (v / 100) % 100, v % 100)
}

/// Strict parse of `YYYYMMDD` or `YYYY-MM-DD` (a real calendar date; no other shapes).
pub fn parse_date(s: &str) -> Option<u32> {
    let s = s.trim();
    let digits: String = match s.len() {
        8 if s.bytes().all(|b| b.is_ascii_digit()) => s.to_string(),
        10 if s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' => {
            let d: String = s.chars().filter(|c| *c != '-').collect();
            if d.len() != 8 || !d.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            d
        }
        _ => return None,
    };
    let v: u32 = digits.parse().ok()?;
    // round-trip through a real date, so 20230230 is rejected
    from_yyyymmdd(v).map(to_yyyymmdd).filter(|r| *r == v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_shows_every_value_digit_for_digit() {
        let table = [
            (20240102, "2024-01-02"),
            (20200616, "2020-06-16"),
            (19991231, "1999-12-31"),
            (20000229, "2000-02-29"),
            (21991231, "2199-12-31"),
            // not dates, shown as they are
            (20230230, "2023-02-30"),
            (20241399, "2024-13-99"),
            (101, "0000-01-01"),
            (0, "0000-00-00"),
            (u32::MAX, "429496-72-95"),
        ];
        for (v, want) in table {
            assert_eq!(iso(v), want, "{v}");
        }
    }

    #[test]
    fn iso_and_parse_round_trip() {
        for v in [20240102, 20000229, 19000101, 21991231] {
            assert_eq!(parse_date(&iso(v)), Some(v));
            assert_eq!(parse_date(&v.to_string()), Some(v));
        }
    }

    #[test]
    fn the_plain_date_check_agrees_with_chrono_everywhere_it_is_asked() {
        let mut checked = 0u32;
        let years = (0u32..=3000).chain([262_140, 262_141, 262_142, 262_143, 262_144, 429_496]);
        for y in years {
            for m in 0..=13 {
                for d in 0..=32 {
                    let Some(v) = y.checked_mul(10_000).map(|x| x + m * 100 + d) else {
                        continue;
                    };
                    assert_eq!(is_valid_yyyymmdd(v), from_yyyymmdd(v).is_some(), "{v}");
                    checked += 1;
                }
            }
        }
        assert!(is_valid_yyyymmdd(20240229) && !is_valid_yyyymmdd(20230229));
        assert!(!is_valid_yyyymmdd(19000229) && is_valid_yyyymmdd(20000229));
        assert!(!is_valid_yyyymmdd(u32::MAX));
        assert_eq!(checked, 3007 * 14 * 33);
    }

    #[test]
    fn parses_both_shapes_strictly() {
        assert_eq!(parse_date("20240102"), Some(20240102));
        assert_eq!(parse_date("2024-01-02"), Some(20240102));
        assert_eq!(parse_date(" 2024-01-02 "), Some(20240102));
        for bad in [
            "2024-1-2",
            "20230230",
            "2023-02-30",
            "2024/01/02",
            "202401021",
            "",
            "abcdefgh",
            "2024-01-0x",
            "20241301",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips() {
        let d = NaiveDate::from_ymd_opt(2020, 6, 16).unwrap();
        assert_eq!(to_yyyymmdd(d), 20200616);
        assert_eq!(from_yyyymmdd(20200616), Some(d));
        assert_eq!(iso(20200616), "2020-06-16");
        assert_eq!(from_yyyymmdd(20200631), None);
    }
}
