//! Calendar arithmetic on `YYYYMMDD` dates, without a clock: dates only come from bars.

/// Days since 1970-01-01 for a `YYYYMMDD` date (proleptic Gregorian); `None` if malformed.
pub fn days_from_civil(date: u32) -> Option<i64> {
    let y = i64::from(date / 10_000);
    let m = i64::from((date / 100) % 100);
    let d = i64::from(date % 100);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// Weekday 0 = Monday … 6 = Sunday.
fn weekday(days: i64) -> i64 {
    // 1970-01-01 was a Thursday (3).
    (days + 3).rem_euclid(7)
}

/// Weekdays strictly between two dates (exclusive both ends): trading days the exchange skipped
/// for a holiday when both are trading days. A plain weekend gives 0 (REFERENCE §15 version note 3).
pub fn skipped_weekdays(from: u32, to: u32) -> Option<i64> {
    let a = days_from_civil(from)?;
    let b = days_from_civil(to)?;
    if b <= a + 1 {
        return Some(0);
    }
    // Cap the walk: any gap this long is already "skipped"; keeps the cost bounded on odd input.
    let span = (b - a - 1).min(366);
    Some((a + 1..a + 1 + span).filter(|&d| weekday(d) < 5).count() as i64)
}

/// Parse `YYYYMMDD` or `YYYY-MM-DD` into a `YYYYMMDD` integer, checking it is a real date.
pub fn parse_date(s: &str) -> Option<u32> {
    let digits: String = s.trim().chars().filter(|c| *c != '-').collect();
    if digits.len() != 8 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: u32 = digits.parse().ok()?;
    let days = days_from_civil(v)?;
    // Round-trip to reject e.g. 20230231.
    (civil_from_days(days) == v).then_some(v)
}

/// Inverse of [`days_from_civil`]: the `YYYYMMDD` date `z` days after 1970-01-01.
pub fn civil_from_days(z: i64) -> u32 {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    (y * 10_000 + m * 100 + d) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekend_is_not_a_holiday() {
        // Fri 2020-06-12 → Mon 2020-06-15
        assert_eq!(skipped_weekdays(20200612, 20200615), Some(0));
        // Consecutive days
        assert_eq!(skipped_weekdays(20200615, 20200616), Some(0));
    }

    #[test]
    fn midweek_holiday_counts() {
        // Dragon boat 2020: Wed 2020-06-24 → Mon 2020-06-29 skips Thu 25 and Fri 26.
        assert_eq!(skipped_weekdays(20200624, 20200629), Some(2));
        // National day 2019: Mon 2019-09-30 → Tue 2019-10-08 skips Oct 1-4 and Oct 7.
        assert_eq!(skipped_weekdays(20190930, 20191008), Some(5));
    }

    #[test]
    fn parses_and_validates() {
        assert_eq!(parse_date("2020-06-16"), Some(20200616));
        assert_eq!(parse_date("20200616"), Some(20200616));
        assert_eq!(parse_date("20230231"), None);
        assert_eq!(parse_date("2020616"), None);
        assert_eq!(parse_date(""), None);
    }
}
