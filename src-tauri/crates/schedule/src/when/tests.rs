use chrono::{NaiveDateTime, TimeZone, Utc};
use wyckoff_market::TradingCalendar;
use wyckoff_time::{from_beijing, to_beijing};

use super::*;

fn cal() -> TradingCalendar {
    wyckoff_market::bundled::calendar().unwrap()
}

fn t(s: &str) -> NaiveDateTime {
    parse_minute(s).unwrap()
}

fn at(time: &str, days: Days) -> When {
    When::At {
        time: time.into(),
        days,
    }
}

fn cron(expr: &str) -> When {
    When::Cron { expr: expr.into() }
}

fn latest(w: &When, now: &str) -> Option<(String, bool)> {
    w.latest_at_or_before(t(now), &cal(), 31)
        .unwrap()
        .map(|o| (format_minute(o.at), o.assumed_trading_day))
}

fn next(w: &When, now: &str) -> Option<(String, bool)> {
    w.next_after(t(now), &cal())
        .unwrap()
        .map(|o| (format_minute(o.at), o.assumed_trading_day))
}

#[test]
fn the_latest_due_time_on_trading_days_weekends_and_holidays() {
    let close = at("15:05", Days::Trading);
    // (now, latest due at or before it): 2026-12-04 is a Friday; 2026-10-01…07 closed.
    let cases = [
        ("2026-12-04 15:10", "2026-12-04 15:05"),
        ("2026-12-04 15:05", "2026-12-04 15:05"),
        ("2026-12-04 15:04", "2026-12-03 15:05"),
        ("2026-12-05 12:00", "2026-12-04 15:05"),
        ("2026-12-07 09:00", "2026-12-04 15:05"),
        ("2026-10-05 10:00", "2026-09-30 15:05"),
        ("2026-10-08 15:06", "2026-10-08 15:05"),
    ];
    for (now, want) in cases {
        assert_eq!(latest(&close, now), Some((want.into(), false)), "{now}");
    }
}

#[test]
fn the_next_due_time_skips_closed_days_and_says_when_the_calendar_has_ended() {
    let open = at("09:25", Days::Trading);
    let cases = [
        ("2026-12-04 09:24", "2026-12-04 09:25", false),
        ("2026-12-04 09:25", "2026-12-07 09:25", false),
        ("2026-09-30 16:00", "2026-10-08 09:25", false),
        ("2026-12-30 10:00", "2026-12-31 09:25", false),
        // The bundled calendar ends 2026-12-31: the next weekday is assumed, and said so;
        // New Year's Day is closed every year.
        ("2026-12-31 10:00", "2027-01-04 09:25", true),
        ("2027-01-01 10:00", "2027-01-04 09:25", true),
        ("2027-01-04 10:00", "2027-01-05 09:25", true),
    ];
    for (now, want, assumed) in cases {
        assert_eq!(next(&open, now), Some((want.into(), assumed)), "{now}");
    }
}

#[test]
fn every_day_and_chosen_weekdays() {
    let daily = at("08:00", Days::Daily);
    assert_eq!(
        latest(&daily, "2026-12-05 07:59"),
        Some(("2026-12-04 08:00".into(), false))
    );
    assert_eq!(
        next(&daily, "2026-12-05 07:59"),
        Some(("2026-12-05 08:00".into(), false))
    );
    let weekend = at("20:00", parse_days("sat,sun").unwrap());
    assert_eq!(
        latest(&weekend, "2026-12-04 23:00"),
        Some(("2026-11-29 20:00".into(), false))
    );
    assert_eq!(
        next(&weekend, "2026-12-04 23:00"),
        Some(("2026-12-05 20:00".into(), false))
    );
    assert_eq!(
        parse_days("FRI, mon,fri").unwrap(),
        Days::Weekdays { days: vec![1, 5] }
    );
}

#[test]
fn cron_expressions() {
    let cases = [
        // (expr, now, latest at or before, next after)
        (
            "*/30 9-10 * * 1-5",
            "2026-12-05 12:00",
            "2026-12-04 10:30",
            "2026-12-07 09:00",
        ),
        (
            "0 8 1 * *",
            "2026-12-04 00:00",
            "2026-12-01 08:00",
            "2027-01-01 08:00",
        ),
        // day-of-month and day-of-week both restricted: either day runs
        (
            "0 9 13 * 5",
            "2026-12-04 09:00",
            "2026-12-04 09:00",
            "2026-12-11 09:00",
        ),
        (
            "5,35 15 * * 0",
            "2026-12-04 09:00",
            "2026-11-29 15:35",
            "2026-12-06 15:05",
        ),
        (
            "0 9 * * 7",
            "2026-12-04 09:00",
            "2026-11-29 09:00",
            "2026-12-06 09:00",
        ),
    ];
    for (expr, now, want_latest, want_next) in cases {
        let w = cron(expr);
        assert_eq!(
            latest(&w, now),
            Some((want_latest.into(), false)),
            "{expr} latest"
        );
        assert_eq!(
            next(&w, now),
            Some((want_next.into(), false)),
            "{expr} next"
        );
    }
}

#[test]
fn beijing_time_across_the_utc_date_line() {
    // 23:30 UTC on Friday is 07:30 on Saturday in Beijing.
    let utc = Utc.with_ymd_and_hms(2026, 12, 4, 23, 30, 0).unwrap();
    assert_eq!(format_minute(to_beijing(utc)), "2026-12-05 07:30");
    assert_eq!(from_beijing(to_beijing(utc)), utc);
    let open = at("09:25", Days::Trading);
    // the trading day before that Saturday morning
    assert_eq!(
        latest(&open, &format_minute(to_beijing(utc))),
        Some(("2026-12-04 09:25".into(), false))
    );
}

#[test]
fn bad_rules_are_refused_with_what_to_write() {
    for bad in ["9:25", "24:00", "09:60", "0925", "", "09:25:00"] {
        assert!(
            matches!(parse_time(bad), Err(WhenError::Time(_))),
            "{bad:?}"
        );
    }
    for bad in ["weekend", "", "mon,,tue", "monday"] {
        assert!(
            matches!(parse_days(bad), Err(WhenError::Days(_))),
            "{bad:?}"
        );
    }
    for (bad, why) in [
        ("* * * *", "expected 5 fields"),
        ("61 * * * *", "minute: 61 is outside 0–59"),
        ("*/0 * * * *", "minute: a step of 0"),
        ("5-1 * * * *", "minute: the range 5-1 runs backwards"),
        ("a * * * *", "minute: 'a' is not a number"),
        ("0 9 * 13 *", "month: 13 is outside 1–12"),
    ] {
        let err = cron(bad).validate().unwrap_err();
        assert!(err.to_string().contains(why), "{bad}: {err}");
    }
    let bad_days = at("09:25", Days::Weekdays { days: vec![8] });
    assert!(bad_days.validate().is_err());
    assert!(
        bad_days
            .latest_at_or_before(t("2026-12-04 10:00"), &cal(), 7)
            .is_err()
    );
}

#[test]
fn a_clock_outside_the_years_is_refused_not_stored() {
    for (text, ok) in [
        ("2026-12-04 15:10", true),
        ("1990-01-01 00:00", true),
        ("2999-12-31 23:59", true),
        ("1989-12-31 23:59", false),
        ("3000-01-01 00:00", false),
        ("+262142-12-31 23:59", false),
        ("2026-02-30 10:00", false),
    ] {
        assert_eq!(parse_minute(text).is_some(), ok, "{text}");
    }
}
