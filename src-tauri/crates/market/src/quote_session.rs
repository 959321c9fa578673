//! Whether the exchange is trading at a Beijing wall-clock time: 09:30–11:30 and
//! 13:00–15:00 on a day the trading calendar says is open. A pure function of the time
//! and the calendar, so the intraday work (quotes drawn as today's candle, alerts checked
//! on the snapshot) is decided the same way in every process and tested without a clock.

use chrono::{NaiveDateTime, NaiveTime, Timelike};
use serde::Serialize;

use crate::calendar::TradingCalendar;
use crate::date::to_yyyymmdd;

/// Minutes of continuous trading in a day (two sessions of 120).
pub const SESSION_MINUTES: u32 = 240;

/// Where a moment falls in the trading day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionPhase {
    /// Not a trading day (weekend or holiday by the calendar).
    Closed,
    /// A trading day, before 09:30.
    PreOpen,
    /// 09:30–11:30.
    Morning,
    /// 11:30–13:00.
    Lunch,
    /// 13:00–15:00.
    Afternoon,
    /// A trading day, from 15:00.
    AfterClose,
}

impl SessionPhase {
    /// Continuous trading is on: an intraday check may run, a quote is a live partial bar.
    pub fn is_trading(self) -> bool {
        matches!(self, SessionPhase::Morning | SessionPhase::Afternoon)
    }
}

fn hm(h: u32, m: u32) -> u32 {
    h * 60 + m
}

/// The phase at Beijing time `now` by `calendar`.
pub fn session_phase(now: NaiveDateTime, calendar: &TradingCalendar) -> SessionPhase {
    if !calendar.is_trading_day(to_yyyymmdd(now.date())) {
        return SessionPhase::Closed;
    }
    let m = now.hour() * 60 + now.minute();
    match m {
        _ if m < hm(9, 30) => SessionPhase::PreOpen,
        _ if m < hm(11, 30) => SessionPhase::Morning,
        _ if m < hm(13, 0) => SessionPhase::Lunch,
        _ if m < hm(15, 0) => SessionPhase::Afternoon,
        _ => SessionPhase::AfterClose,
    }
}

/// Minutes of continuous trading elapsed by wall-clock `time` on a trading day, 0..=240
/// (the lunch break counts nothing): what a day's volume so far is scaled by.
pub fn elapsed_session_minutes(time: NaiveTime) -> u32 {
    let m = time.hour() * 60 + time.minute();
    let morning = m.clamp(hm(9, 30), hm(11, 30)) - hm(9, 30);
    let afternoon = m.clamp(hm(13, 0), hm(15, 0)) - hm(13, 0);
    morning + afternoon
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::from_yyyymmdd;

    fn at(d: u32, h: u32, m: u32) -> NaiveDateTime {
        from_yyyymmdd(d).unwrap().and_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn phase_table() {
        let cal = crate::bundled::calendar().unwrap();
        use SessionPhase::*;
        // 2020-06-17 Wednesday (trading), 2020-06-20 Saturday, 2020-06-25 Dragon Boat
        let cases = [
            (at(20200617, 9, 29), PreOpen),
            (at(20200617, 9, 30), Morning),
            (at(20200617, 10, 42), Morning),
            (at(20200617, 11, 29), Morning),
            (at(20200617, 11, 30), Lunch),
            (at(20200617, 12, 59), Lunch),
            (at(20200617, 13, 0), Afternoon),
            (at(20200617, 14, 59), Afternoon),
            (at(20200617, 15, 0), AfterClose),
            (at(20200617, 23, 0), AfterClose),
            (at(20200620, 10, 42), Closed),
            (at(20200625, 10, 42), Closed),
        ];
        for (now, want) in cases {
            assert_eq!(session_phase(now, &cal), want, "{now}");
            assert_eq!(
                session_phase(now, &cal).is_trading(),
                matches!(want, Morning | Afternoon),
                "{now}"
            );
        }
    }

    #[test]
    fn elapsed_minutes_table() {
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        let cases = [
            (t(9, 0), 0),
            (t(9, 30), 0),
            (t(10, 42), 72),
            (t(11, 30), 120),
            (t(12, 15), 120),
            (t(13, 0), 120),
            (t(14, 0), 180),
            (t(15, 0), 240),
            (t(16, 0), 240),
        ];
        for (time, want) in cases {
            assert_eq!(elapsed_session_minutes(time), want, "{time}");
        }
    }
}
