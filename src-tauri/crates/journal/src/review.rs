//! From the fills and the cached bars: the account's value each trading day (holdings at
//! that day's close, cost basis, unrealised and realised P/L, in fen) and the exit review
//! of each sale — what the stock did 5, 10 and 20 trading days after it, and the engine's
//! exit signal as of the sale day's close. Nothing is estimated: a missing bar leaves a
//! horizon pending and a day's missing close is named.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use wyckoff_engine::{Bar, ExitConfig, accum_stage, exit_signal};
use wyckoff_time::iso;

use crate::ledger::{Holding, LedgerFill, Realised, apply, replay, sort_fills};
use crate::money::{E6_PER_FEN, div_round, price_f64, price_from_f64};

/// Trading days after a sale the review looks at.
pub const HORIZONS: [u32; 3] = [5, 10, 20];

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DayValue {
    /// YYYY-MM-DD.
    pub date: String,
    /// Holdings at the day's close (a suspended stock at its last close before).
    pub market_value_fen: i64,
    pub cost_basis_fen: i64,
    pub unrealised_fen: i64,
    /// Realised P/L of the sales up to and including the day.
    pub realised_fen: i64,
    /// Held codes without any close up to the day: not in the value.
    pub missing: Vec<String>,
}

/// One horizon after a sale.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AfterSale {
    /// The bar `days` trading days after the sale is not cached (yet).
    Pending { days: u32 },
    Done {
        days: u32,
        /// YYYY-MM-DD of that bar.
        date: String,
        close: f64,
        /// The close against the sale price, percent.
        change_pct: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ExitAtSale {
    /// stop_loss / upthrust_warning / distribution_warning.
    pub signal: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ExitReview {
    pub fill_id: i64,
    pub code: String,
    pub name: String,
    /// YYYY-MM-DD.
    pub date: String,
    pub price: f64,
    pub shares: i64,
    pub realised_fen: i64,
    /// When the holding the sale came out of started (YYYY-MM-DD).
    pub held_since: String,
    pub after: Vec<AfterSale>,
    /// The engine's exit signal as of the sale day's close; `None` when none fired.
    pub exit_signal: Option<ExitAtSale>,
    /// No cached bar up to the sale day: the signal could not be computed.
    pub signal_unknown: bool,
}

/// The last close on or before `day`, in millionths.
fn close_on(bars: &[Bar], day: u32) -> Option<i64> {
    let i = bars.partition_point(|b| b.date <= day);
    (i > 0).then(|| bars[i - 1].close).and_then(price_from_f64)
}

/// The value series from the first fill's day to the last cached bar of any code traded.
pub fn daily_values(fills: &[LedgerFill], bars: &HashMap<String, Vec<Bar>>) -> Vec<DayValue> {
    let mut sorted = fills.to_vec();
    sort_fills(&mut sorted);
    let Some(first) = sorted.first().map(|f| f.date) else {
        return Vec::new();
    };
    let days: BTreeSet<u32> = sorted
        .iter()
        .filter_map(|f| bars.get(&f.code))
        .flat_map(|b| b.iter().map(|b| b.date))
        .filter(|d| *d >= first)
        .collect();
    let mut holdings: HashMap<String, Holding> = HashMap::new();
    let mut realised = 0_i64;
    let mut next = 0;
    let mut out = Vec::with_capacity(days.len());
    for day in days {
        while next < sorted.len() && sorted[next].date <= day {
            let f = &sorted[next];
            let h = holdings.entry(f.code.clone()).or_default();
            if let Ok(Some(r)) = apply(h, f) {
                realised += r.pnl_fen;
            }
            next += 1;
        }
        let mut mv: i128 = 0;
        let mut basis: i64 = 0;
        let mut missing = Vec::new();
        let mut codes: Vec<&String> = holdings
            .iter()
            .filter(|(_, h)| h.shares > 0)
            .map(|(c, _)| c)
            .collect();
        codes.sort();
        for code in codes {
            let h = holdings[code];
            match bars.get(code).and_then(|b| close_on(b, day)) {
                Some(close) => {
                    mv += i128::from(close) * i128::from(h.shares);
                    basis += h.basis_fen();
                }
                None => missing.push(code.clone()),
            }
        }
        let mv_fen = div_round(mv, i128::from(E6_PER_FEN)) as i64;
        out.push(DayValue {
            date: iso(day),
            market_value_fen: mv_fen,
            cost_basis_fen: basis,
            unrealised_fen: mv_fen - basis,
            realised_fen: realised,
            missing,
        });
    }
    out
}

fn review_one(r: &Realised, name: &str, bars: &[Bar]) -> ExitReview {
    let after_start = bars.partition_point(|b| b.date <= r.date);
    let sale = price_f64(r.price_e6);
    let after = HORIZONS
        .iter()
        .map(|&days| match bars.get(after_start + days as usize - 1) {
            Some(b) => AfterSale::Done {
                days,
                date: iso(b.date),
                close: b.close,
                change_pct: (b.close / sale - 1.0) * 100.0,
            },
            None => AfterSale::Pending { days },
        })
        .collect();
    let upto = &bars[..after_start];
    let held = &upto[upto.partition_point(|b| b.date < r.held_since)..];
    let signal = (!upto.is_empty())
        .then(|| exit_signal(held, accum_stage(upto), &ExitConfig::default()))
        .flatten()
        .map(|s| ExitAtSale {
            signal: s.signal.as_str().to_owned(),
            reason: s.reason,
        });
    ExitReview {
        fill_id: r.fill_id,
        code: r.code.clone(),
        name: name.to_owned(),
        date: iso(r.date),
        price: sale,
        shares: r.shares,
        realised_fen: r.pnl_fen,
        held_since: iso(r.held_since),
        after,
        exit_signal: signal,
        signal_unknown: upto.is_empty(),
    }
}

/// Every sale's review, newest first.
pub fn exit_reviews(
    fills: &[LedgerFill],
    names: &HashMap<String, String>,
    bars: &HashMap<String, Vec<Bar>>,
) -> Vec<ExitReview> {
    let Ok(ledger) = replay(fills) else {
        return Vec::new();
    };
    let empty = Vec::new();
    let mut out: Vec<ExitReview> = ledger
        .realised
        .iter()
        .map(|r| {
            review_one(
                r,
                names.get(&r.code).map(String::as_str).unwrap_or(""),
                bars.get(&r.code).unwrap_or(&empty),
            )
        })
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Side;
    use wyckoff_engine::fees::Fees;

    fn bar(date: u32, close: f64) -> Bar {
        Bar {
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 1e6,
            amount: 1e7,
            turnover: None,
        }
    }

    fn f(id: i64, side: Side, date: u32, price_e6: i64, shares: i64, fee: i64) -> LedgerFill {
        LedgerFill {
            id,
            code: "600519".into(),
            side,
            date,
            price_e6,
            shares,
            amount_fen: crate::money::amount_fen(price_e6, shares),
            fees: Fees {
                commission_fen: fee,
                stamp_fen: 0,
                transfer_fen: 0,
            },
        }
    }

    #[test]
    fn values_follow_the_holdings_and_closes() {
        let bars = HashMap::from([(
            "600519".to_string(),
            vec![
                bar(20240102, 10.0),
                bar(20240103, 10.5),
                bar(20240104, 11.0),
                bar(20240105, 12.0),
            ],
        )]);
        // buy 100 @ 10.00 + 5.00 fee on the 2nd (basis 1,005.00); sell 100 @ 11.00 − 5.00
        // on the 4th: realised 1,100 − 5 − 1,005 = 90.00
        let fills = [
            f(1, Side::Buy, 20240102, 10_000_000, 100, 500),
            f(2, Side::Sell, 20240104, 11_000_000, 100, 500),
        ];
        let v = daily_values(&fills, &bars);
        let got: Vec<(&str, i64, i64, i64)> = v
            .iter()
            .map(|d| {
                (
                    d.date.as_str(),
                    d.market_value_fen,
                    d.unrealised_fen,
                    d.realised_fen,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("2024-01-02", 100_000, -500, 0),
                ("2024-01-03", 105_000, 4_500, 0),
                ("2024-01-04", 0, 0, 9_000),
                ("2024-01-05", 0, 0, 9_000),
            ]
        );
    }

    #[test]
    fn a_held_code_without_closes_is_named_not_valued() {
        let bars = HashMap::from([("600519".to_string(), vec![bar(20240103, 10.0)])]);
        let mut other = f(2, Side::Buy, 20240102, 5_000_000, 100, 0);
        other.code = "000001".into();
        let v = daily_values(
            &[f(1, Side::Buy, 20240102, 10_000_000, 100, 0), other],
            &bars,
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].market_value_fen, 100_000);
        assert_eq!(v[0].missing, ["000001"]);
    }

    #[test]
    fn exit_review_reads_the_bars_after_the_sale_and_leaves_the_rest_pending() {
        let mut series: Vec<Bar> = (0..10).map(|i| bar(20240101 + i, 10.0)).collect();
        // the sale on the 5th at 10.00; then 5 bars, the 5th after it closing at 11.00
        series[9].close = 11.0;
        let bars = HashMap::from([("600519".to_string(), series)]);
        let fills = [
            f(1, Side::Buy, 20240101, 10_000_000, 100, 0),
            f(2, Side::Sell, 20240105, 10_000_000, 100, 0),
        ];
        let names = HashMap::from([("600519".to_string(), "贵州茅台".to_string())]);
        let r = exit_reviews(&fills, &names, &bars);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].name, "贵州茅台");
        assert_eq!(r[0].held_since, "2024-01-01");
        match &r[0].after[0] {
            AfterSale::Done {
                days,
                date,
                change_pct,
                ..
            } => {
                assert_eq!((*days, date.as_str()), (5, "2024-01-10"));
                assert!((change_pct - 10.0).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r[0].after[1], AfterSale::Pending { days: 10 });
        assert_eq!(r[0].after[2], AfterSale::Pending { days: 20 });
        assert!(!r[0].signal_unknown);
        // no bars at all: everything pending, the signal unknown
        let r = exit_reviews(&fills, &names, &HashMap::new());
        assert!(r[0].signal_unknown);
        assert!(
            r[0].after
                .iter()
                .all(|a| matches!(a, AfterSale::Pending { .. }))
        );
    }
}
