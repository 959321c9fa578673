//! A second timeframe around a daily reading: the weekly structure the daily trigger sits
//! in (the weekly trend and the range of the last quarter) and, where 60-minute bars of the
//! trigger day are at hand, whether the session itself confirmed a bullish trigger. Each
//! line says which timeframe said it. Pure: bars in, reading out.

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::dates::days_from_civil;

/// Weeks of history a weekly read needs (the 10-week average and its slope).
pub const MIN_WEEKS: usize = 14;
/// Weeks the weekly range spans (a quarter).
pub const RANGE_WEEKS: usize = 13;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timeframe {
    Weekly,
    Daily,
    Minutes60,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WeeklyTrend {
    /// Close above a rising 10-week average.
    Up,
    /// Close below a falling 10-week average.
    Down,
    Sideways,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WeeklyContext {
    pub trend: WeeklyTrend,
    /// Low and high of the last [`RANGE_WEEKS`] weeks up to the trigger's week.
    pub range_low: f64,
    pub range_high: f64,
    /// Where the trigger day's close sits in that range, 0 (low) to 100 (high).
    pub position_pct: f64,
    /// The 10-week average at the trigger's week, and four weeks before.
    pub ma10: f64,
    pub ma10_4w_ago: f64,
    /// Weeks read.
    pub weeks: usize,
}

/// What the trigger day's 60-minute bars said of a bullish daily trigger.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Intraday {
    /// The day closed in the upper half of its own range and its last hour did not sell
    /// off (last hour close ≥ its open).
    Confirmed { close_in_range_pct: f64 },
    /// Closed in the lower half of the day's range, or the last hour sold off.
    NotConfirmed {
        close_in_range_pct: f64,
        last_hour_down: bool,
    },
    /// No 60-minute bars of the trigger day (or not its last bar, 15:00).
    NoBars,
}

/// One line of the reading, with the timeframe that said it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeframeLine {
    pub timeframe: Timeframe,
    pub zh: String,
    pub en: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeframeReading {
    /// `None` with fewer than [`MIN_WEEKS`] weeks before the trigger.
    pub weekly: Option<WeeklyContext>,
    pub intraday: Intraday,
    pub lines: Vec<TimeframeLine>,
}

/// One 60-minute bar of the trigger day: its end `HHMM` and prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HourBar {
    pub hhmm: u16,
    pub open: f64,
    pub high: f64,
    pub low: f64,
    pub close: f64,
}

/// Monday-based week number of a `YYYYMMDD` day (1970-01-05 was a Monday).
fn week_of(date: u32) -> Option<i64> {
    days_from_civil(date).map(|d| (d - 4).div_euclid(7))
}

/// Daily bars folded into weeks (high, low, close), up to and including `until`.
fn weeks(daily: &[Bar], until: u32) -> Vec<(f64, f64, f64)> {
    let mut out: Vec<(i64, f64, f64, f64)> = Vec::new();
    for b in daily.iter().take_while(|b| b.date <= until) {
        let Some(w) = week_of(b.date) else { continue };
        match out.last_mut() {
            Some(last) if last.0 == w => {
                last.1 = last.1.max(b.high);
                last.2 = last.2.min(b.low);
                last.3 = b.close;
            }
            _ => out.push((w, b.high, b.low, b.close)),
        }
    }
    out.into_iter().map(|(_, h, l, c)| (h, l, c)).collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// The weekly structure around a daily trigger on `trigger_date` (its week included, as it
/// stood at that close).
pub fn weekly_context(daily: &[Bar], trigger_date: u32) -> Option<WeeklyContext> {
    let w = weeks(daily, trigger_date);
    if w.len() < MIN_WEEKS {
        return None;
    }
    let closes: Vec<f64> = w.iter().map(|x| x.2).collect();
    let n = closes.len();
    let ma10 = mean(&closes[n - 10..]);
    let ma10_4w_ago = mean(&closes[n - 14..n - 4]);
    let close = closes[n - 1];
    let trend = if close > ma10 && ma10 > ma10_4w_ago {
        WeeklyTrend::Up
    } else if close < ma10 && ma10 < ma10_4w_ago {
        WeeklyTrend::Down
    } else {
        WeeklyTrend::Sideways
    };
    let span = &w[n.saturating_sub(RANGE_WEEKS)..];
    let range_high = span.iter().map(|x| x.0).fold(f64::MIN, f64::max);
    let range_low = span.iter().map(|x| x.1).fold(f64::MAX, f64::min);
    let position_pct = if range_high > range_low {
        (close - range_low) / (range_high - range_low) * 100.0
    } else {
        50.0
    };
    Some(WeeklyContext {
        trend,
        range_low,
        range_high,
        position_pct,
        ma10,
        ma10_4w_ago,
        weeks: n,
    })
}

/// Whether the trigger day's 60-minute bars (any order) confirm a bullish daily trigger.
pub fn intraday_confirmation(hours: &[HourBar]) -> Intraday {
    let mut h = hours.to_vec();
    h.sort_by_key(|b| b.hhmm);
    let Some(last) = h.last().filter(|b| b.hhmm == 1500) else {
        return Intraday::NoBars;
    };
    let high = h.iter().map(|b| b.high).fold(f64::MIN, f64::max);
    let low = h.iter().map(|b| b.low).fold(f64::MAX, f64::min);
    let pct = if high > low {
        (last.close - low) / (high - low) * 100.0
    } else {
        50.0
    };
    let last_hour_down = last.close < last.open;
    if pct >= 50.0 && !last_hour_down {
        Intraday::Confirmed {
            close_in_range_pct: pct,
        }
    } else {
        Intraday::NotConfirmed {
            close_in_range_pct: pct,
            last_hour_down,
        }
    }
}

/// The reading of a daily trigger (`trigger`, e.g. "Spring", on `trigger_date`) with the
/// weekly context and, when `hours` of that day are given, the intraday check.
pub fn read(
    daily: &[Bar],
    trigger: &str,
    trigger_date: u32,
    hours: &[HourBar],
) -> TimeframeReading {
    let weekly = weekly_context(daily, trigger_date);
    let intraday = intraday_confirmation(hours);
    let day = format!(
        "{:04}-{:02}-{:02}",
        trigger_date / 10_000,
        trigger_date / 100 % 100,
        trigger_date % 100
    );
    let mut lines = vec![TimeframeLine {
        timeframe: Timeframe::Daily,
        zh: format!("日线：{day} 触发 {trigger}"),
        en: format!("daily: {trigger} triggered on {day}"),
    }];
    match &weekly {
        Some(w) => {
            let (zh, en) = match w.trend {
                WeeklyTrend::Up => (
                    "上升（收盘在上升的10周均线之上）",
                    "up (close above a rising 10-week average)",
                ),
                WeeklyTrend::Down => (
                    "下降（收盘在下降的10周均线之下）",
                    "down (close below a falling 10-week average)",
                ),
                WeeklyTrend::Sideways => (
                    "横盘（10周均线走平或收盘与其方向相反）",
                    "sideways (the 10-week average flat, or the close against it)",
                ),
            };
            lines.push(TimeframeLine {
                timeframe: Timeframe::Weekly,
                zh: format!(
                    "周线：趋势{zh}；近 {RANGE_WEEKS} 周区间 {:.2}–{:.2}，{day} 收盘位于区间 {:.0}%",
                    w.range_low, w.range_high, w.position_pct
                ),
                en: format!(
                    "weekly: trend {en}; {RANGE_WEEKS}-week range {:.2}–{:.2}, the {day} close at {:.0}% of it",
                    w.range_low, w.range_high, w.position_pct
                ),
            });
        }
        None => lines.push(TimeframeLine {
            timeframe: Timeframe::Weekly,
            zh: format!("周线：触发前不足 {MIN_WEEKS} 周，无法判断周线结构"),
            en: format!(
                "weekly: fewer than {MIN_WEEKS} weeks before the trigger, no weekly structure read"
            ),
        }),
    }
    lines.push(match intraday {
        Intraday::Confirmed { close_in_range_pct } => TimeframeLine {
            timeframe: Timeframe::Minutes60,
            zh: format!("60分钟：确认——当日收在日内区间 {close_in_range_pct:.0}% 处，尾盘一小时未走弱"),
            en: format!("60-minute: confirmed — the day closed at {close_in_range_pct:.0}% of its range and the last hour held"),
        },
        Intraday::NotConfirmed {
            close_in_range_pct,
            last_hour_down,
        } => TimeframeLine {
            timeframe: Timeframe::Minutes60,
            zh: format!(
                "60分钟：未确认——当日收在日内区间 {close_in_range_pct:.0}% 处{}",
                if last_hour_down { "，尾盘一小时下跌" } else { "" }
            ),
            en: format!(
                "60-minute: not confirmed — the day closed at {close_in_range_pct:.0}% of its range{}",
                if last_hour_down { ", the last hour fell" } else { "" }
            ),
        },
        Intraday::NoBars => TimeframeLine {
            timeframe: Timeframe::Minutes60,
            zh: "60分钟：没有触发日的60分钟K线缓存，未做日内确认".into(),
            en: "60-minute: no cached 60-minute bars of the trigger day, no intraday check".into(),
        },
    });
    TimeframeReading {
        weekly,
        intraday,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weekday bars from 2024-01-01, one a day, closes from `close(i)`.
    fn daily(n: usize, close: impl Fn(usize) -> f64) -> Vec<Bar> {
        let mut out = Vec::new();
        let mut d = days_from_civil(20240101).unwrap();
        let mut i = 0;
        while out.len() < n {
            let weekday = (d + 3).rem_euclid(7); // 0 = Monday
            if weekday < 5 {
                let c = close(i);
                out.push(Bar {
                    date: crate::dates::civil_from_days(d),
                    open: c,
                    high: c + 0.5,
                    low: c - 0.5,
                    close: c,
                    volume: 1e6,
                    amount: 1e7,
                    turnover: None,
                });
                i += 1;
            }
            d += 1;
        }
        out
    }

    #[test]
    fn weekly_trend_table() {
        // (closes, expected trend)
        let cases: Vec<(Vec<Bar>, WeeklyTrend)> = vec![
            (daily(100, |i| 10.0 + i as f64 * 0.1), WeeklyTrend::Up),
            (daily(100, |i| 30.0 - i as f64 * 0.1), WeeklyTrend::Down),
            (
                daily(100, |i| 20.0 + if i % 2 == 0 { 0.3 } else { -0.3 }),
                WeeklyTrend::Sideways,
            ),
            // rose for months then fell the last three weeks below the still-rising average
            (
                daily(100, |i| if i < 85 { 10.0 + i as f64 * 0.1 } else { 15.0 }),
                WeeklyTrend::Sideways,
            ),
        ];
        for (bars, want) in cases {
            let last = bars.last().unwrap().date;
            let w = weekly_context(&bars, last).unwrap();
            assert_eq!(w.trend, want, "{w:?}");
            assert!((0.0..=100.0).contains(&w.position_pct));
        }
    }

    #[test]
    fn weekly_range_is_the_last_quarter_as_of_the_trigger() {
        let bars = daily(100, |i| 10.0 + i as f64 * 0.1);
        let trigger = bars[79].date;
        let w = weekly_context(&bars, trigger).unwrap();
        // nothing after the trigger day is read
        assert!(w.range_high <= bars[79].high + 1e-9, "{w:?}");
        assert_eq!(w.weeks, 16);
        assert!(
            (w.position_pct
                - 100.0 * (bars[79].close - w.range_low) / (w.range_high - w.range_low))
                .abs()
                < 1e-9
        );
        // too few weeks: no weekly read
        assert_eq!(weekly_context(&bars, bars[30].date), None);
    }

    #[test]
    fn intraday_table() {
        let h = |hhmm, open: f64, close: f64| HourBar {
            hhmm,
            open,
            high: open.max(close) + 0.1,
            low: open.min(close) - 0.1,
            close,
        };
        let cases: Vec<(Vec<HourBar>, &str)> = vec![
            (
                vec![
                    h(1030, 10.0, 9.6),
                    h(1130, 9.6, 9.8),
                    h(1400, 9.8, 10.1),
                    h(1500, 10.1, 10.3),
                ],
                "confirmed",
            ),
            (
                vec![
                    h(1030, 10.0, 10.4),
                    h(1130, 10.4, 10.2),
                    h(1400, 10.2, 9.9),
                    h(1500, 9.9, 9.7),
                ],
                "not_confirmed",
            ),
            // upper half, but the last hour fell
            (
                vec![
                    h(1030, 10.0, 9.5),
                    h(1130, 9.5, 10.5),
                    h(1400, 10.5, 10.6),
                    h(1500, 10.6, 10.4),
                ],
                "not_confirmed",
            ),
            // no 15:00 bar: the day is not complete
            (vec![h(1030, 10.0, 10.4), h(1130, 10.4, 10.5)], "no_bars"),
            (vec![], "no_bars"),
        ];
        for (bars, want) in cases {
            let got = intraday_confirmation(&bars);
            let kind = match got {
                Intraday::Confirmed { .. } => "confirmed",
                Intraday::NotConfirmed { .. } => "not_confirmed",
                Intraday::NoBars => "no_bars",
            };
            assert_eq!(kind, want, "{bars:?} → {got:?}");
        }
    }

    #[test]
    fn each_line_names_its_timeframe() {
        let bars = daily(100, |i| 10.0 + i as f64 * 0.1);
        let r = read(&bars, "Spring", bars[99].date, &[]);
        let tf: Vec<Timeframe> = r.lines.iter().map(|l| l.timeframe).collect();
        assert_eq!(
            tf,
            [Timeframe::Daily, Timeframe::Weekly, Timeframe::Minutes60]
        );
        assert!(
            r.lines[1].en.starts_with("weekly: trend up"),
            "{}",
            r.lines[1].en
        );
        assert!(r.lines[2].zh.contains("没有触发日的60分钟K线"));
        assert_eq!(r.intraday, Intraday::NoBars);
    }
}
