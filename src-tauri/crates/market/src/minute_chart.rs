//! The stock page at a minute period: the cached bars, and the daily reading's marks placed
//! on them where they apply.
//!
//! Minute bars are unadjusted; the daily reading is forward-adjusted. Its price levels are
//! carried over by the ratio of the same day's closes (the 15:00 bar's close over the daily
//! close), so a level sits where it sits on the daily chart; without such a day they are
//! left off and the chart says why. Wyckoff events and phases are read on daily bars only:
//! on a minute chart an event marks the last bar of the day it was read on.

use serde::Serialize;

use crate::minute::{MinuteCoverage, MinutePeriod, MinuteSeries};

/// One price line drawn across a minute chart.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteLevel {
    /// `support`, `resistance`, `stop`, `target` or `cost`.
    pub kind: String,
    pub price: f64,
    /// The timeframe that drew it (`daily`, or `holding` for a holding's own prices).
    pub timeframe: String,
}

/// A daily event on the minute bar that closed its day.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteMark {
    /// SC, AR, ST, Spring, SOS, …
    pub label: String,
    /// The daily bar the engine labelled (YYYYMMDD).
    pub date: u32,
    /// The minute bar it is drawn on (YYYYMMDDHHMM): the day's last cached bar.
    #[specta(type = f64)]
    pub bar_time: u64,
    /// The event's price on the minute chart's (unadjusted) scale.
    pub price: f64,
    pub timeframe: String,
}

/// Why part of the daily reading is not on a minute chart, or is there only by the day.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MinuteChartNote {
    /// No minute bars are cached for the period: sync them first.
    NoBars,
    /// Events and phases are read on daily bars; events mark their day's last bar.
    EventsDailyOnly,
    /// Phases are drawn on the daily chart only.
    PhasesDailyOnly,
    /// No day has both a daily close and a 15:00 minute bar, so the daily levels (range,
    /// stop, target) cannot be carried onto unadjusted minute prices.
    LevelsWithoutCommonDay,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteChart {
    pub code: String,
    pub name: Option<String>,
    pub period: MinutePeriod,
    /// Bar ends, YYYYMMDDHHMM (Beijing time), ascending.
    #[specta(type = Vec<f64>)]
    pub times: Vec<u64>,
    pub open: Vec<f64>,
    pub high: Vec<f64>,
    pub low: Vec<f64>,
    pub close: Vec<f64>,
    pub volume: Vec<f64>,
    /// Where the bars came from.
    pub sources: Vec<String>,
    pub coverage: Option<MinuteCoverage>,
    pub levels: Vec<MinuteLevel>,
    pub marks: Vec<MinuteMark>,
    /// The daily close / 15:00 close day the levels were carried over by, when any.
    pub scale_day: Option<u32>,
    pub notes: Vec<MinuteChartNote>,
}

/// What of the daily reading a minute chart can carry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DailyMarks {
    /// (date, forward-adjusted close) of the daily bars.
    pub closes: Vec<(u32, f64)>,
    /// (kind, forward-adjusted price): range lines, stop, target.
    pub levels: Vec<(String, f64)>,
    /// (label, date, forward-adjusted price).
    pub events: Vec<(String, u32, f64)>,
    /// Whether the daily reading has phases.
    pub has_phases: bool,
    /// A holding's own cost (real money, unadjusted).
    pub cost: Option<f64>,
}

/// The chart of `series` at `period` with `daily`'s marks where they apply.
pub fn build(
    code: &str,
    name: Option<String>,
    period: MinutePeriod,
    series: &MinuteSeries,
    coverage: Option<MinuteCoverage>,
    daily: &DailyMarks,
) -> MinuteChart {
    let bars = &series.bars;
    let mut notes = Vec::new();
    if bars.is_empty() {
        notes.push(MinuteChartNote::NoBars);
    }
    // the latest day with both a 15:00 bar and a daily close
    let scale = bars
        .iter()
        .rev()
        .filter(|b| b.hhmm() == 1500)
        .find_map(|b| {
            daily
                .closes
                .binary_search_by_key(&b.date(), |(d, _)| *d)
                .ok()
                .map(|i| (b.date(), b.close / daily.closes[i].1))
                .filter(|(_, f)| f.is_finite() && *f > 0.0)
        });
    let mut levels = Vec::new();
    let mut marks = Vec::new();
    match scale {
        Some((_, factor)) => {
            for (kind, price) in &daily.levels {
                levels.push(MinuteLevel {
                    kind: kind.clone(),
                    price: (price * factor * 100.0).round() / 100.0,
                    timeframe: "daily".into(),
                });
            }
            for (label, date, price) in &daily.events {
                let last_of_day = bars.iter().rev().find(|b| b.date() == *date);
                if let Some(b) = last_of_day {
                    marks.push(MinuteMark {
                        label: label.clone(),
                        date: *date,
                        bar_time: b.time,
                        price: (price * factor * 100.0).round() / 100.0,
                        timeframe: "daily".into(),
                    });
                }
            }
        }
        None if !bars.is_empty() && (!daily.levels.is_empty() || !daily.events.is_empty()) => {
            notes.push(MinuteChartNote::LevelsWithoutCommonDay)
        }
        None => {}
    }
    if let Some(cost) = daily.cost {
        levels.push(MinuteLevel {
            kind: "cost".into(),
            price: cost,
            timeframe: "holding".into(),
        });
    }
    if !bars.is_empty() {
        if !daily.events.is_empty() {
            notes.push(MinuteChartNote::EventsDailyOnly);
        }
        if daily.has_phases {
            notes.push(MinuteChartNote::PhasesDailyOnly);
        }
    }
    MinuteChart {
        code: code.to_owned(),
        name,
        period,
        times: bars.iter().map(|b| b.time).collect(),
        open: bars.iter().map(|b| b.open).collect(),
        high: bars.iter().map(|b| b.high).collect(),
        low: bars.iter().map(|b| b.low).collect(),
        close: bars.iter().map(|b| b.close).collect(),
        volume: bars.iter().map(|b| b.volume).collect(),
        sources: series.sources.clone(),
        coverage,
        levels,
        marks,
        scale_day: scale.map(|(d, _)| d),
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minute::MinuteBar;

    fn bar(time: u64, close: f64) -> MinuteBar {
        MinuteBar {
            time,
            open: close,
            high: close,
            low: close,
            close,
            volume: 100.0,
            amount: None,
        }
    }

    fn series(bars: Vec<MinuteBar>) -> MinuteSeries {
        MinuteSeries {
            source_of: vec![0; bars.len()],
            bars,
            sources: vec!["tencent".into()],
        }
    }

    #[test]
    fn levels_and_events_carry_over_by_the_common_day() {
        // daily closes adjusted at half the traded price (a 2-for-1 since)
        let daily = DailyMarks {
            closes: vec![(20241202, 5.0), (20241203, 5.5)],
            levels: vec![("support".into(), 4.8), ("resistance".into(), 6.0)],
            events: vec![
                ("Spring".into(), 20241202, 4.9),
                ("SOS".into(), 20241130, 5.1),
            ],
            has_phases: true,
            cost: Some(10.2),
        };
        let s = series(vec![
            bar(202_412_021_400, 10.1),
            bar(202_412_021_500, 10.0),
            bar(202_412_031_030, 10.5),
            bar(202_412_031_500, 11.0),
        ]);
        let c = build("600519", None, MinutePeriod::M60, &s, None, &daily);
        assert_eq!(c.scale_day, Some(20241203));
        let prices: Vec<(&str, f64)> = c
            .levels
            .iter()
            .map(|l| (l.kind.as_str(), l.price))
            .collect();
        assert_eq!(
            prices,
            [("support", 9.6), ("resistance", 12.0), ("cost", 10.2)]
        );
        // the Spring marks its day's last bar; the SOS's day has no minute bars
        assert_eq!(c.marks.len(), 1);
        assert_eq!(
            (c.marks[0].bar_time, c.marks[0].price),
            (202_412_021_500, 9.8)
        );
        assert_eq!(
            c.notes,
            [
                MinuteChartNote::EventsDailyOnly,
                MinuteChartNote::PhasesDailyOnly
            ]
        );
    }

    #[test]
    fn no_common_day_or_no_bars_is_said() {
        let daily = DailyMarks {
            closes: vec![(20241101, 5.0)],
            levels: vec![("support".into(), 4.8)],
            ..DailyMarks::default()
        };
        let s = series(vec![bar(202_412_031_500, 11.0)]);
        let c = build("600519", None, MinutePeriod::M60, &s, None, &daily);
        assert!(c.levels.is_empty());
        assert_eq!(c.notes, [MinuteChartNote::LevelsWithoutCommonDay]);
        let c = build(
            "600519",
            None,
            MinutePeriod::M5,
            &series(vec![]),
            None,
            &daily,
        );
        assert_eq!(c.notes, [MinuteChartNote::NoBars]);
        assert!(c.times.is_empty());
    }
}
