//! From the entries and the closes ([`crate::prices`]): the account each day — cash,
//! reverse repos out, holdings at that day's close, NAV, the day's P/L, the time-weighted
//! return and the drawdown, all in fen from integer closes — and the exit review of each
//! sale: what the stock closed at 5, 10 and 20 trading days after it against the price it
//! was sold at, and the engine's exit signal as of the sale day's close (the engine reads
//! adjusted bars; the money reads the closes). Nothing is estimated: a missing close
//! leaves a horizon pending and a day's held code without a close is named.
//!
//! The return: each day `r = NAV / (previous NAV + the day's transfers) − 1` (transfers —
//! recorded 银证转账 and implied ones, see [`crate::ledger`] — count at the day's start), a
//! day that starts with nothing returns 0, and the days link: `TWR = Π(1 + r) − 1`. The
//! drawdown is the fall of that index from its highest point so far.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use wyckoff_engine::{Bar, ExitConfig, Instrument, accum_stage, exit_signal};
use wyckoff_time::iso;

use crate::entry::Entry;
use crate::ledger::{Ledger, LedgerError, Realised, replay, sort_entries};
use crate::money::{E6_PER_FEN, div_round, fmt_fen, price_f64};
use crate::prices::{ApproximateCode, Closes, CodeCloses, approximate_codes};

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
    /// Cash at the day's end.
    pub cash_fen: i64,
    /// Reverse repo principal lent out at the day's end.
    pub repo_fen: i64,
    /// New-share subscription money paid and frozen at the day's end (not yet refunded or
    /// allotted).
    pub subscription_fen: i64,
    /// cash + repo + subscription money frozen + market value.
    pub nav_fen: i64,
    /// Transfers that day (+ in), recorded and implied.
    pub flow_fen: i64,
    /// NAV − the previous day's NAV − the day's transfers.
    pub pnl_fen: i64,
    /// Time-weighted return from the first day to this one, percent.
    pub twr_pct: f64,
    /// Below the highest return index so far, percent (0 or negative).
    pub drawdown_pct: f64,
    /// Held codes valued at approximate (adjusted) closes that day.
    pub approximate: Vec<String>,
}

/// The series' figures over its whole span.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Performance {
    /// YYYY-MM-DD of the first and last day valued.
    pub first: Option<String>,
    pub last: Option<String>,
    pub nav_fen: i64,
    pub cash_fen: i64,
    pub twr_pct: Option<f64>,
    /// The deepest drawdown, percent (0 or negative).
    pub max_drawdown_pct: Option<f64>,
    /// Codes valued at approximate closes, with why: the figures are approximate.
    pub approximate: Vec<ApproximateCode>,
    /// What the figures rest on that a reader should know (implied transfers, missing
    /// closes, approximate prices).
    pub notes: Vec<String>,
    /// What is held at the end of the last day and what each line is worth in the NAV.
    pub holdings: Vec<HoldingValue>,
}

/// One line of the account at the last day valued.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct HoldingValue {
    pub code: String,
    pub instrument: Instrument,
    /// Shares, units or bonds held; 0 for a repo (its money is the principal).
    pub shares: i64,
    pub cost_basis_fen: i64,
    pub valuation: Valuation,
}

/// How a line is valued.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Valuation {
    /// At a close: the valuation day's own, or the last before it (`days_behind` calendar
    /// days older — a suspension, or bars not synced that far).
    Close {
        close: f64,
        /// YYYY-MM-DD.
        close_date: String,
        days_behind: u32,
        /// False: an adjusted close stands in for the real one.
        exact: bool,
        value_fen: i64,
    },
    /// A reverse repo: cash lent, worth its principal until it comes back (its interest
    /// counts when it is booked).
    Principal { value_fen: i64 },
    /// New-share subscription money paid and frozen until its refund and allotment: worth
    /// what was paid.
    Frozen { value_fen: i64 },
    /// No close up to the valuation day: not in the NAV, and why.
    Unvalued { reason: String },
}

/// Why a held code has no close, and what would bring one.
fn unvalued_reason(code: &str) -> String {
    match Instrument::of_code(code) {
        Instrument::Stock => {
            format!(
                "缓存里没有 {code} 的日线（`wyckoff portfolio sync` 或 `wyckoff data sync {code}`）"
            )
        }
        Instrument::Fund | Instrument::Bond => {
            format!("没有 {code} 的收盘价（`wyckoff portfolio sync` 从东方财富取基金、债券日线）")
        }
        Instrument::Repo | Instrument::Other => {
            format!("{code} 没有收盘价来源（不是股票、场内基金或债券）")
        }
    }
}

/// Calendar days from `from` to `to` (both `YYYYMMDD`; 0 when not after).
fn days_between(from: u32, to: u32) -> u32 {
    match (
        wyckoff_time::date::from_yyyymmdd(from),
        wyckoff_time::date::from_yyyymmdd(to),
    ) {
        (Some(a), Some(b)) => u32::try_from((b - a).num_days()).unwrap_or(0),
        _ => 0,
    }
}

/// The lines held at the end of `day`.
fn holdings_on(ledger: &Ledger, closes: &Closes, day: u32) -> Vec<HoldingValue> {
    let mut out: Vec<HoldingValue> = ledger
        .held()
        .map(|(code, h)| HoldingValue {
            code: code.clone(),
            instrument: Instrument::of_code(code),
            shares: h.shares,
            cost_basis_fen: h.basis_fen(),
            valuation: match closes.get(code).and_then(|c| c.on(day)) {
                Some(c) => Valuation::Close {
                    close: price_f64(c.close_e6),
                    close_date: iso(c.date),
                    days_behind: days_between(c.date, day),
                    exact: c.exact,
                    value_fen: div_round(
                        i128::from(c.close_e6) * i128::from(h.shares),
                        i128::from(E6_PER_FEN),
                    ) as i64,
                },
                None => Valuation::Unvalued {
                    reason: closes
                        .get(code)
                        .and_then(|c| c.none_because.clone())
                        .unwrap_or_else(|| unvalued_reason(code)),
                },
            },
        })
        .collect();
    out.extend(
        ledger
            .repo_fen
            .iter()
            .filter(|(_, p)| **p > 0)
            .map(|(code, p)| HoldingValue {
                code: code.clone(),
                instrument: Instrument::of_code(code),
                shares: 0,
                cost_basis_fen: *p,
                valuation: Valuation::Principal { value_fen: *p },
            }),
    );
    out.extend(
        ledger
            .subscription_fen
            .iter()
            .filter(|(_, p)| **p > 0)
            .map(|(code, p)| HoldingValue {
                code: code.clone(),
                instrument: Instrument::of_code(code),
                shares: 0,
                cost_basis_fen: *p,
                valuation: Valuation::Frozen { value_fen: *p },
            }),
    );
    out
}

/// One horizon after a sale.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AfterSale {
    /// The close `days` trading days after the sale is not cached (yet).
    Pending { days: u32 },
    Done {
        days: u32,
        /// YYYY-MM-DD of that close.
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
    /// The closes compared are approximate (adjusted), and why.
    pub approximate: Option<String>,
}

fn pct(x: f64) -> f64 {
    (x - 1.0) * 100.0
}

/// The value series from the first entry's day to the last close of any code traded, and
/// its return and drawdown.
pub fn daily_values(
    entries: &[Entry],
    closes: &Closes,
) -> Result<(Vec<DayValue>, Performance), LedgerError> {
    let mut sorted = entries.to_vec();
    sort_entries(&mut sorted);
    let mut perf = Performance {
        first: None,
        last: None,
        nav_fen: 0,
        cash_fen: 0,
        twr_pct: None,
        max_drawdown_pct: None,
        approximate: Vec::new(),
        notes: Vec::new(),
        holdings: Vec::new(),
    };
    let Some(first) = sorted.first().map(|e| e.date) else {
        return Ok((Vec::new(), perf));
    };
    let codes: BTreeSet<&str> = sorted.iter().filter_map(|e| e.kind.code()).collect();
    let mut days: BTreeSet<u32> = sorted.iter().map(|e| e.date).collect();
    days.extend(
        codes
            .iter()
            .filter_map(|c| closes.get(*c))
            .flat_map(|c| c.closes.iter().map(|c| c.date))
            .filter(|d| *d >= first),
    );
    let mut ledger = Ledger::default();
    let mut next = 0;
    let (mut prev_nav, mut index, mut peak, mut worst) = (0_i64, 1.0_f64, 1.0_f64, 0.0_f64);
    let mut valued_approx: BTreeSet<String> = BTreeSet::new();
    let mut days_missing = 0;
    let mut out = Vec::with_capacity(days.len());
    let mut last_day = None;
    for day in days {
        last_day = Some(day);
        let mut flow = 0;
        while next < sorted.len() && sorted[next].date <= day {
            let e = &sorted[next];
            ledger.apply(e)?;
            flow += e.kind.external_flow_fen();
            next += 1;
        }
        flow += ledger.end_day();
        let mut mv: i128 = 0;
        let mut basis: i64 = 0;
        let mut missing = Vec::new();
        let mut approximate = Vec::new();
        for (code, h) in ledger.held() {
            match closes.get(code).and_then(|c| c.on(day)) {
                Some(close) => {
                    mv += i128::from(close.close_e6) * i128::from(h.shares);
                    basis += h.basis_fen();
                    if !close.exact {
                        approximate.push(code.clone());
                        valued_approx.insert(code.clone());
                    }
                }
                None => missing.push(code.clone()),
            }
        }
        if !missing.is_empty() {
            days_missing += 1;
        }
        let mv_fen = div_round(mv, i128::from(E6_PER_FEN)) as i64;
        let repo = ledger.repo_total_fen();
        let frozen = ledger.subscription_total_fen();
        let nav = ledger.cash_fen + repo + frozen + mv_fen;
        let base = prev_nav + flow;
        let r = if base > 0 {
            nav as f64 / base as f64
        } else {
            1.0
        };
        index *= r;
        peak = peak.max(index);
        let drawdown = pct(index / peak);
        worst = worst.min(drawdown);
        out.push(DayValue {
            date: iso(day),
            market_value_fen: mv_fen,
            cost_basis_fen: basis,
            unrealised_fen: mv_fen - basis,
            realised_fen: ledger.realised_fen(),
            missing,
            cash_fen: ledger.cash_fen,
            repo_fen: repo,
            subscription_fen: frozen,
            nav_fen: nav,
            flow_fen: flow,
            pnl_fen: nav - prev_nav - flow,
            twr_pct: pct(index),
            drawdown_pct: drawdown,
            approximate,
        });
        prev_nav = nav;
    }
    if let Some(last) = last_day {
        perf.holdings = holdings_on(&ledger, closes, last);
        let behind: Vec<String> = perf
            .holdings
            .iter()
            .filter_map(|h| match &h.valuation {
                Valuation::Close {
                    close_date,
                    days_behind,
                    ..
                } if *days_behind > 0 => Some(format!("{} 停在 {close_date}", h.code)),
                _ => None,
            })
            .collect();
        if !behind.is_empty() {
            perf.notes.push(format!(
                "{} 的持仓按此前最后一个收盘价估值（{}）",
                iso(last),
                behind.join("、")
            ));
        }
    }
    perf.first = out.first().map(|d| d.date.clone());
    perf.last = out.last().map(|d| d.date.clone());
    perf.nav_fen = prev_nav;
    perf.cash_fen = ledger.cash_fen;
    perf.twr_pct = Some(pct(index));
    perf.max_drawdown_pct = Some(worst);
    perf.approximate = approximate_codes(closes, valued_approx.iter().map(String::as_str));
    if !perf.approximate.is_empty() {
        perf.notes.push(format!(
            "估值为近似值：{} 没有原始（不复权）收盘价，按前复权价估值——{}",
            perf.approximate
                .iter()
                .map(|a| a.code.as_str())
                .collect::<Vec<_>>()
                .join("、"),
            perf.approximate[0].reason
        ));
    }
    if ledger.totals.implied_in_fen > 0 {
        perf.notes.push(format!(
            "有 {} 天现金记录不足（买入所需资金的银证转账不在账上），缺口共 {} 按当日转入计；用 `wyckoff portfolio cash in` 记录转账后这些数字会更准",
            ledger.implied.len(),
            fmt_fen(ledger.totals.implied_in_fen)
        ));
    }
    if days_missing > 0 {
        perf.notes.push(format!(
            "有 {days_missing} 天持有的证券没有收盘价，未计入当天市值（当天的净值偏低）"
        ));
    }
    Ok((out, perf))
}

fn review_one(r: &Realised, name: &str, closes: Option<&CodeCloses>, bars: &[Bar]) -> ExitReview {
    let sale = price_f64(r.price_e6);
    let after = match closes {
        Some(c) => {
            let start = c.closes.partition_point(|c| c.date <= r.date);
            HORIZONS
                .iter()
                .map(|&days| match c.closes.get(start + days as usize - 1) {
                    Some(c) => AfterSale::Done {
                        days,
                        date: iso(c.date),
                        close: price_f64(c.close_e6),
                        change_pct: (c.close_e6 as f64 / r.price_e6 as f64 - 1.0) * 100.0,
                    },
                    None => AfterSale::Pending { days },
                })
                .collect()
        }
        None => HORIZONS
            .iter()
            .map(|&days| AfterSale::Pending { days })
            .collect(),
    };
    let upto = &bars[..bars.partition_point(|b| b.date <= r.date)];
    let held = &upto[upto.partition_point(|b| b.date < r.held_since)..];
    let signal = (!upto.is_empty())
        .then(|| exit_signal(held, accum_stage(upto), &ExitConfig::default()))
        .flatten()
        .map(|s| ExitAtSale {
            signal: s.signal.as_str().to_owned(),
            reason: s.reason,
        });
    ExitReview {
        fill_id: r.entry_id,
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
        approximate: closes.and_then(|c| match &c.basis {
            crate::prices::PriceBasis::Exact => None,
            crate::prices::PriceBasis::Approximate { reason } => Some(reason.clone()),
        }),
    }
}

/// Every sale's review, newest first: the closes after it (for the money) and the
/// adjusted bars up to it (for the engine's signal).
pub fn exit_reviews(
    entries: &[Entry],
    names: &HashMap<String, String>,
    closes: &Closes,
    bars: &HashMap<String, Vec<Bar>>,
) -> Vec<ExitReview> {
    let Ok(ledger) = replay(entries) else {
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
                closes.get(&r.code),
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
    use crate::entry::EntryKind;
    use crate::prices::PriceBasis;
    use crate::store::Source;
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

    fn closes(code: &str, days: &[(u32, i64)], basis: PriceBasis) -> Closes {
        let mut c = CodeCloses::exact(days);
        if basis != PriceBasis::Exact {
            for close in &mut c.closes {
                close.exact = false;
            }
        }
        c.basis = basis;
        HashMap::from([(code.to_string(), c)])
    }

    fn e(id: i64, date: u32, kind: EntryKind) -> Entry {
        Entry {
            id,
            date,
            time: None,
            name: String::new(),
            kind,
            source: Source::Manual,
            identity: None,
        }
    }

    fn trade(id: i64, buy: bool, date: u32, price_e6: i64, shares: i64, fee: i64) -> Entry {
        let (code, amount_fen) = (
            "600519".to_string(),
            crate::money::amount_fen(price_e6, shares),
        );
        let fees = Fees {
            commission_fen: fee,
            stamp_fen: 0,
            transfer_fen: 0,
        };
        e(
            id,
            date,
            if buy {
                EntryKind::Buy {
                    code,
                    shares,
                    price_e6,
                    amount_fen,
                    fees,
                }
            } else {
                EntryKind::Sell {
                    code,
                    shares,
                    price_e6,
                    amount_fen,
                    fees,
                }
            },
        )
    }

    #[test]
    fn values_follow_the_holdings_cash_and_closes() {
        let c = closes(
            "600519",
            &[
                (20240102, 10_000_000),
                (20240103, 10_500_000),
                (20240104, 11_000_000),
                (20240105, 12_000_000),
            ],
            PriceBasis::Exact,
        );
        // 2,000.00 in; buy 100 @ 10.00 + 5.00 fee on the 2nd (basis 1,005.00, cash 995.00);
        // sell 100 @ 11.00 − 5.00 on the 4th: realised 1,100 − 5 − 1,005 = 90.00, cash
        // 2,090.00
        let entries = [
            e(
                1,
                20240102,
                EntryKind::CashIn {
                    amount_fen: 200_000,
                },
            ),
            trade(2, true, 20240102, 10_000_000, 100, 500),
            trade(3, false, 20240104, 11_000_000, 100, 500),
        ];
        let (v, perf) = daily_values(&entries, &c).unwrap();
        let got: Vec<(&str, i64, i64, i64, i64, i64, i64)> = v
            .iter()
            .map(|d| {
                (
                    d.date.as_str(),
                    d.market_value_fen,
                    d.unrealised_fen,
                    d.realised_fen,
                    d.cash_fen,
                    d.nav_fen,
                    d.pnl_fen,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                // NAV 995 + 1,000 = 1,995.00: the day lost the 5.00 fee
                ("2024-01-02", 100_000, -500, 0, 99_500, 199_500, -500),
                ("2024-01-03", 105_000, 4_500, 0, 99_500, 204_500, 5_000),
                ("2024-01-04", 0, 0, 9_000, 209_000, 209_000, 4_500),
                ("2024-01-05", 0, 0, 9_000, 209_000, 209_000, 0),
            ]
        );
        // by hand: 1,995/2,000 × 2,045/1,995 × 2,090/2,045 = 2,090/2,000 → +4.5 %
        assert!((perf.twr_pct.unwrap() - 4.5).abs() < 1e-9);
        // the only fall: the first day's 0.25 %
        assert!((perf.max_drawdown_pct.unwrap() - -0.25).abs() < 1e-9);
        assert!(perf.approximate.is_empty() && perf.notes.is_empty());
        assert_eq!(v[0].flow_fen, 200_000);
    }

    #[test]
    fn transfers_are_not_returns() {
        // 1,000.00 in, +10 % on the second day; 10,000.00 more in on the third, flat after:
        // the TWR stays 10 % though NAV went from 1,000 to 11,100
        let c = closes(
            "600519",
            &[
                (20240102, 10_000_000),
                (20240103, 11_000_000),
                (20240104, 11_000_000),
            ],
            PriceBasis::Exact,
        );
        let entries = [
            e(
                1,
                20240102,
                EntryKind::CashIn {
                    amount_fen: 100_000,
                },
            ),
            trade(2, true, 20240102, 10_000_000, 100, 0),
            e(
                3,
                20240104,
                EntryKind::CashIn {
                    amount_fen: 1_000_000,
                },
            ),
        ];
        let (v, perf) = daily_values(&entries, &c).unwrap();
        assert_eq!(v[2].nav_fen, 1_110_000);
        assert_eq!(v[2].pnl_fen, 0);
        assert!((perf.twr_pct.unwrap() - 10.0).abs() < 1e-9);
        // a withdrawal after a fall is no drawdown of its own
        let entries = [
            e(
                1,
                20240102,
                EntryKind::CashIn {
                    amount_fen: 100_000,
                },
            ),
            e(2, 20240103, EntryKind::CashOut { amount_fen: 50_000 }),
        ];
        let (_, perf) = daily_values(&entries, &HashMap::new()).unwrap();
        assert_eq!(perf.max_drawdown_pct, Some(0.0));
        assert_eq!(perf.nav_fen, 50_000);
    }

    #[test]
    fn approximate_closes_say_so_and_a_held_code_without_closes_is_named() {
        let mut c = closes(
            "600519",
            &[(20240103, 10_000_000)],
            PriceBasis::Approximate {
                reason: "前复权".into(),
            },
        );
        c.insert("510300".into(), CodeCloses::exact(&[]));
        let mut other = trade(2, true, 20240102, 5_000_000, 100, 0);
        if let EntryKind::Buy { code, .. } = &mut other.kind {
            *code = "510300".into();
        }
        let (v, perf) =
            daily_values(&[trade(1, true, 20240102, 10_000_000, 100, 0), other], &c).unwrap();
        assert_eq!(v.len(), 2);
        // the 2nd: no close of either yet
        assert_eq!(v[0].missing, ["510300", "600519"]);
        assert_eq!(v[1].market_value_fen, 100_000);
        assert_eq!(v[1].missing, ["510300"]);
        assert_eq!(v[1].approximate, ["600519"]);
        assert_eq!(perf.approximate.len(), 1);
        assert!(
            perf.notes.iter().any(|n| n.contains("近似")),
            "{:?}",
            perf.notes
        );
        // no transfer on record: the buys' 1,500.00 are counted as transferred in that day
        assert_eq!(v[0].flow_fen, 150_000);
        assert!(
            perf.notes.iter().any(|n| n.contains("1500.00")),
            "{:?}",
            perf.notes
        );
    }

    #[test]
    fn exit_review_reads_the_closes_after_the_sale_and_leaves_the_rest_pending() {
        let series: Vec<Bar> = (0..10).map(|i| bar(20240101 + i, 9.0)).collect();
        // the sale on the 5th at 10.00; the raw close 5 days on is 11.00 (the adjusted
        // bars say 9.00: not what the money compares)
        let mut raw: Vec<(u32, i64)> = (0..10).map(|i| (20240101 + i, 10_000_000)).collect();
        raw[9].1 = 11_000_000;
        let bars = HashMap::from([("600519".to_string(), series)]);
        let c = closes("600519", &raw, PriceBasis::Exact);
        let entries = [
            trade(1, true, 20240101, 10_000_000, 100, 0),
            trade(2, false, 20240105, 10_000_000, 100, 0),
        ];
        let names = HashMap::from([("600519".to_string(), "贵州茅台".to_string())]);
        let r = exit_reviews(&entries, &names, &c, &bars);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].name, "贵州茅台");
        assert_eq!(r[0].held_since, "2024-01-01");
        match &r[0].after[0] {
            AfterSale::Done {
                days,
                date,
                change_pct,
                close,
            } => {
                assert_eq!((*days, date.as_str()), (5, "2024-01-10"));
                assert_eq!(*close, 11.0);
                assert!((change_pct - 10.0).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r[0].after[1], AfterSale::Pending { days: 10 });
        assert_eq!(r[0].after[2], AfterSale::Pending { days: 20 });
        assert!(!r[0].signal_unknown);
        assert_eq!(r[0].approximate, None);
        // no closes or bars at all: everything pending, the signal unknown
        let r = exit_reviews(&entries, &names, &HashMap::new(), &HashMap::new());
        assert!(r[0].signal_unknown);
        assert!(
            r[0].after
                .iter()
                .all(|a| matches!(a, AfterSale::Pending { .. }))
        );
    }
}
