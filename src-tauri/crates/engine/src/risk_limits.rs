//! Account risk: what the open positions stand to lose at their stops ("heat"), the largest
//! industry's share, the number of positions, the drawdown brake, and which limits a
//! proposed buy breaks. Pure and integer: money in fen, prices in millionths, limits in
//! basis points; percents in the answers are for showing.
//!
//! * Heat is Σ shares × (price − stop), never negative per position (a price already under
//!   its stop adds nothing more), as a share of equity. A position without a stop has all
//!   of its value at risk and is counted so, and named ([`PortfolioRisk::unstopped`]).
//! * An industry's share is its positions' market value over equity. Stocks without a
//!   known industry are not lumped into one; they are named ([`PortfolioRisk::unclassified`]).
//! * The brake holds while the NAV is at least the limit below its high (flows taken out,
//!   as the ledger measures it), or after the limit's number of losing sales within the
//!   last days (calendar days, the sale day counted). While it holds, every buy breaks it.
//! * Adding to a held code does not add a position.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use wyckoff_protocol::RiskBreach;

use crate::sizing::{BP, E6_PER_FEN};

/// The account limits (see the module doc); a limit of 0 is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RiskLimits {
    /// Open risk to the stops, at most this share of equity.
    pub max_heat_bp: u32,
    /// One industry's market value, at most this share of equity.
    pub max_industry_bp: u32,
    /// At most this many positions.
    pub max_positions: u32,
    /// No new buy while NAV is this far below its high.
    pub drawdown_brake_bp: u32,
    /// No new buy after this many losing sales within `stop_out_days`.
    pub max_stop_outs: u32,
    pub stop_out_days: u32,
}

impl Default for RiskLimits {
    /// Heat ≤ 6 %, one industry ≤ 30 %, 8 positions, brake at 15 % below the high or
    /// after 3 losing sales in 10 days.
    fn default() -> Self {
        RiskLimits {
            max_heat_bp: 600,
            max_industry_bp: 3_000,
            max_positions: 8,
            drawdown_brake_bp: 1_500,
            max_stop_outs: 3,
            stop_out_days: 10,
        }
    }
}

/// One held position as the limits see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct OpenPosition {
    pub code: String,
    pub industry: Option<String>,
    pub shares: u64,
    /// The latest price (raw), millionths.
    pub price_e6: i64,
    pub stop_e6: Option<i64>,
}

/// The account the limits are checked against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub equity_fen: i64,
    /// How far NAV is below its high now, basis points (0 at a high).
    pub drawdown_bp: u32,
    pub positions: Vec<OpenPosition>,
    /// The day of every losing sale, `YYYYMMDD`.
    pub losing_sales: Vec<u32>,
    /// Today, `YYYYMMDD`.
    pub today: u32,
}

/// A buy to check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedBuy {
    pub code: String,
    pub industry: Option<String>,
    pub shares: u64,
    pub entry_e6: i64,
    /// `None`: all of the buy is at risk.
    pub stop_e6: Option<i64>,
}

/// One industry's market value and share of equity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct IndustryShare {
    pub industry: String,
    pub value_fen: i64,
    pub share_pct: f64,
}

/// The account's risk now, against its limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PortfolioRisk {
    pub equity_fen: i64,
    pub limits: RiskLimits,
    pub heat_fen: i64,
    pub heat_pct: f64,
    pub positions: u32,
    pub largest_industry: Option<IndustryShare>,
    pub drawdown_pct: f64,
    /// Losing sales within the stop-out window.
    pub recent_stop_outs: u32,
    /// The brake's breaches while it holds (drawdown, stop-outs); empty: buys allowed.
    pub brake: Vec<RiskBreach>,
    /// Held codes without a stop (counted at their full value in the heat).
    pub unstopped: Vec<String>,
    /// Held codes without a known industry (in no industry's share).
    pub unclassified: Vec<String>,
}

/// `shares × price` in fen, to the nearest.
fn value_fen(shares: u64, price_e6: i64) -> i64 {
    let e6 = i128::from(shares) * i128::from(price_e6);
    i64::try_from((e6 + i128::from(E6_PER_FEN) / 2).div_euclid(i128::from(E6_PER_FEN)))
        .unwrap_or(i64::MAX)
}

/// What `shares` lose from `price` to `stop` (all of it without a stop), fen rounded up.
fn open_risk_fen(shares: u64, price_e6: i64, stop_e6: Option<i64>) -> i64 {
    let per_share = match stop_e6 {
        Some(stop) => (price_e6 - stop).max(0),
        None => price_e6.max(0),
    };
    let e6 = i128::from(shares) * i128::from(per_share);
    i64::try_from((e6 + i128::from(E6_PER_FEN) - 1).div_euclid(i128::from(E6_PER_FEN)))
        .unwrap_or(i64::MAX)
}

/// `part / whole` in basis points, rounded up (a limit is never met by rounding).
fn bp_of(part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        return i64::MAX;
    }
    let p = i128::from(part) * i128::from(BP);
    i64::try_from((p + i128::from(whole) - 1).div_euclid(i128::from(whole))).unwrap_or(i64::MAX)
}

fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        return 0.0;
    }
    (part as f64 * 100.0 / whole as f64 * 100.0).round() / 100.0
}

fn bp_pct(bp: u32) -> f64 {
    f64::from(bp) / 100.0
}

/// Days since 1970-01-01 of a `YYYYMMDD` (proleptic Gregorian).
fn day_number(date: u32) -> i64 {
    let (y, m, d) = (
        i64::from(date / 10_000),
        i64::from(date / 100 % 100),
        i64::from(date % 100),
    );
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Losing sales within the last `days` calendar days up to `today` (both ends counted).
fn recent_losses(account: &Account, days: u32) -> u32 {
    if days == 0 {
        return 0;
    }
    let today = day_number(account.today);
    let n = account
        .losing_sales
        .iter()
        .map(|d| today - day_number(*d))
        .filter(|ago| (0..i64::from(days)).contains(ago))
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The brake's breaches now: empty when buys are allowed (the positions are not read).
pub fn brake(account: &Account, limits: &RiskLimits) -> Vec<RiskBreach> {
    let mut out = Vec::new();
    if limits.drawdown_brake_bp > 0 && account.drawdown_bp >= limits.drawdown_brake_bp {
        out.push(RiskBreach::Drawdown {
            drawdown_pct: bp_pct(account.drawdown_bp),
            limit_pct: bp_pct(limits.drawdown_brake_bp),
        });
    }
    let losses = recent_losses(account, limits.stop_out_days);
    if limits.max_stop_outs > 0 && losses >= limits.max_stop_outs {
        out.push(RiskBreach::StopOuts {
            count: losses,
            days: limits.stop_out_days,
            limit: limits.max_stop_outs,
        });
    }
    out
}

/// Market value by industry (known industries only).
fn industry_values<'a>(
    positions: impl Iterator<Item = (&'a Option<String>, i64)>,
) -> BTreeMap<&'a str, i64> {
    let mut by = BTreeMap::new();
    for (industry, value) in positions {
        if let Some(i) = industry {
            *by.entry(i.as_str()).or_insert(0) += value;
        }
    }
    by
}

/// The account's risk now.
pub fn assess(account: &Account, limits: &RiskLimits) -> PortfolioRisk {
    let held: Vec<&OpenPosition> = account.positions.iter().filter(|p| p.shares > 0).collect();
    let heat_fen: i64 = held
        .iter()
        .map(|p| open_risk_fen(p.shares, p.price_e6, p.stop_e6))
        .sum();
    let by = industry_values(
        held.iter()
            .map(|p| (&p.industry, value_fen(p.shares, p.price_e6))),
    );
    // The largest; the first by name on a tie, so the answer does not depend on order.
    let largest = by
        .iter()
        .fold(None::<(&str, i64)>, |best, (i, v)| match best {
            Some((_, bv)) if bv >= *v => best,
            _ => Some((i, *v)),
        })
        .map(|(industry, value_fen)| IndustryShare {
            industry: industry.to_owned(),
            value_fen,
            share_pct: pct(value_fen, account.equity_fen),
        });
    PortfolioRisk {
        equity_fen: account.equity_fen,
        limits: *limits,
        heat_fen,
        heat_pct: pct(heat_fen, account.equity_fen),
        positions: u32::try_from(held.len()).unwrap_or(u32::MAX),
        largest_industry: largest,
        drawdown_pct: bp_pct(account.drawdown_bp),
        recent_stop_outs: recent_losses(account, limits.stop_out_days),
        brake: brake(account, limits),
        unstopped: held
            .iter()
            .filter(|p| p.stop_e6.is_none())
            .map(|p| p.code.clone())
            .collect(),
        unclassified: held
            .iter()
            .filter(|p| p.industry.is_none())
            .map(|p| p.code.clone())
            .collect(),
    }
}

/// Every limit `buy` breaks, in the order heat, industry, positions, drawdown, stop-outs.
/// A limit already exceeded before the buy is broken by any buy that adds to it.
pub fn check_buy(account: &Account, limits: &RiskLimits, buy: &ProposedBuy) -> Vec<RiskBreach> {
    let mut out = Vec::new();
    let now = assess(account, limits);
    if limits.max_heat_bp > 0 {
        let heat = now.heat_fen + open_risk_fen(buy.shares, buy.entry_e6, buy.stop_e6);
        if bp_of(heat, account.equity_fen) > i64::from(limits.max_heat_bp) {
            out.push(RiskBreach::Heat {
                heat_pct: pct(heat, account.equity_fen),
                limit_pct: bp_pct(limits.max_heat_bp),
            });
        }
    }
    if limits.max_industry_bp > 0
        && let Some(industry) = &buy.industry
    {
        let held: i64 = account
            .positions
            .iter()
            .filter(|p| p.shares > 0 && p.industry.as_ref() == Some(industry))
            .map(|p| value_fen(p.shares, p.price_e6))
            .sum();
        let after = held + value_fen(buy.shares, buy.entry_e6);
        if bp_of(after, account.equity_fen) > i64::from(limits.max_industry_bp) {
            out.push(RiskBreach::Industry {
                industry: industry.clone(),
                share_pct: pct(after, account.equity_fen),
                limit_pct: bp_pct(limits.max_industry_bp),
            });
        }
    }
    if limits.max_positions > 0 {
        let adds = !account
            .positions
            .iter()
            .any(|p| p.shares > 0 && p.code == buy.code);
        let count = now.positions + u32::from(adds);
        if count > limits.max_positions {
            out.push(RiskBreach::Positions {
                count,
                limit: limits.max_positions,
            });
        }
    }
    out.extend(now.brake);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const Y: i64 = 1_000_000; // a yuan in millionths

    fn pos(
        code: &str,
        industry: Option<&str>,
        shares: u64,
        price: i64,
        stop: Option<i64>,
    ) -> OpenPosition {
        OpenPosition {
            code: code.into(),
            industry: industry.map(Into::into),
            shares,
            price_e6: price * Y,
            stop_e6: stop.map(|s| s * Y),
        }
    }

    fn account(positions: Vec<OpenPosition>) -> Account {
        Account {
            equity_fen: 100_000 * 100, // 100,000 yuan
            drawdown_bp: 0,
            positions,
            losing_sales: vec![],
            today: 20_260_310,
        }
    }

    fn buy(
        code: &str,
        industry: Option<&str>,
        shares: u64,
        entry: i64,
        stop: Option<i64>,
    ) -> ProposedBuy {
        ProposedBuy {
            code: code.into(),
            industry: industry.map(Into::into),
            shares,
            entry_e6: entry * Y,
            stop_e6: stop.map(|s| s * Y),
        }
    }

    fn names(b: &[RiskBreach]) -> Vec<&'static str> {
        b.iter().map(RiskBreach::name).collect()
    }

    #[test]
    fn heat_sums_the_risk_to_each_stop() {
        // 1000 × (10 − 9) + 500 × (20 − 18) = 2,000 yuan of 100,000 = 2 %;
        // a price under its stop adds nothing; no stop counts all of its value.
        let a = account(vec![
            pos("600000", Some("银行"), 1000, 10, Some(9)),
            pos("000001", Some("银行"), 500, 20, Some(18)),
            pos("300750", None, 100, 8, Some(9)),
        ]);
        let r = assess(&a, &RiskLimits::default());
        assert_eq!(r.heat_fen, 2_000 * 100);
        assert_eq!(r.heat_pct, 2.0);
        assert_eq!(r.positions, 3);
        assert_eq!(r.unclassified, vec!["300750"]);
        assert!(r.unstopped.is_empty());
        let with_unstopped = account(vec![pos("600000", Some("银行"), 1000, 10, None)]);
        let r = assess(&with_unstopped, &RiskLimits::default());
        assert_eq!(r.heat_fen, 10_000 * 100);
        assert_eq!(r.unstopped, vec!["600000"]);
    }

    #[test]
    fn largest_industry_by_market_value() {
        let a = account(vec![
            pos("600000", Some("银行"), 1000, 10, Some(9)), // 10,000
            pos("000001", Some("银行"), 500, 20, Some(18)), // 10,000
            pos("600519", Some("白酒"), 100, 150, Some(140)), // 15,000
        ]);
        let r = assess(&a, &RiskLimits::default());
        let top = r.largest_industry.unwrap();
        assert_eq!(
            (top.industry.as_str(), top.value_fen, top.share_pct),
            ("银行", 20_000 * 100, 20.0)
        );
    }

    #[test]
    fn check_buy_table() {
        let limits = RiskLimits {
            max_heat_bp: 600,
            max_industry_bp: 3_000,
            max_positions: 2,
            drawdown_brake_bp: 1_500,
            max_stop_outs: 3,
            stop_out_days: 10,
        };
        // Holds 2 % heat, 20 % banks, 2 positions.
        let base = account(vec![
            pos("600000", Some("银行"), 1000, 10, Some(9)),
            pos("000001", Some("银行"), 500, 20, Some(18)),
        ]);
        let cases: Vec<(&str, Account, ProposedBuy, Vec<&str>)> = vec![
            // An add to a held bank: 1,000 more risk (3 %), banks 30 % exactly: within.
            (
                "add within",
                base.clone(),
                buy("600000", Some("银行"), 1000, 10, Some(9)),
                vec![],
            ),
            // One fen of value past 30 %.
            (
                "industry past",
                base.clone(),
                buy("600000", Some("银行"), 1001, 10, Some(9)),
                vec!["industry"],
            ),
            // 4,000 more risk: 6 % exactly is within; one more share is not.
            (
                "heat at",
                base.clone(),
                buy("600000", None, 1000, 10, Some(6)),
                vec![],
            ),
            (
                "heat past",
                base.clone(),
                buy("600000", None, 1001, 10, Some(6)),
                vec!["heat"],
            ),
            // A third code is a third position.
            (
                "positions",
                base.clone(),
                buy("600519", Some("白酒"), 10, 150, Some(149)),
                vec!["positions"],
            ),
            // Without a stop all of the buy is at risk.
            (
                "no stop",
                base.clone(),
                buy("000001", None, 300, 20, None),
                vec!["heat"],
            ),
            (
                "drawdown brake",
                Account {
                    drawdown_bp: 1_500,
                    ..base.clone()
                },
                buy("600000", None, 100, 10, Some(9)),
                vec!["drawdown"],
            ),
            (
                "below the brake",
                Account {
                    drawdown_bp: 1_499,
                    ..base.clone()
                },
                buy("600000", None, 100, 10, Some(9)),
                vec![],
            ),
            (
                // 20260301 is 9 days before 20260310 (in the window), 20260228 is 10 (out).
                "stop-outs in window",
                Account {
                    losing_sales: vec![20_260_301, 20_260_305, 20_260_310],
                    ..base.clone()
                },
                buy("600000", None, 100, 10, Some(9)),
                vec!["stop_outs"],
            ),
            (
                "stop-outs partly outside",
                Account {
                    losing_sales: vec![20_260_228, 20_260_305, 20_260_310],
                    ..base.clone()
                },
                buy("600000", None, 100, 10, Some(9)),
                vec![],
            ),
            (
                "everything",
                Account {
                    drawdown_bp: 2_000,
                    losing_sales: vec![20_260_310; 3],
                    ..base.clone()
                },
                buy("600519", Some("银行"), 1000, 150, Some(100)),
                vec!["heat", "industry", "positions", "drawdown", "stop_outs"],
            ),
        ];
        for (what, a, b, want) in cases {
            assert_eq!(names(&check_buy(&a, &limits, &b)), want, "{what}");
        }
    }

    #[test]
    fn a_limit_of_zero_is_off() {
        let off = RiskLimits {
            max_heat_bp: 0,
            max_industry_bp: 0,
            max_positions: 0,
            drawdown_brake_bp: 0,
            max_stop_outs: 0,
            stop_out_days: 10,
        };
        let a = Account {
            drawdown_bp: 5_000,
            losing_sales: vec![20_260_310; 9],
            ..account(vec![pos("600000", Some("银行"), 9000, 10, None)])
        };
        assert!(check_buy(&a, &off, &buy("600519", Some("银行"), 1000, 150, None)).is_empty());
        assert!(assess(&a, &off).brake.is_empty());
    }

    #[test]
    fn breach_figures_are_the_account_after_the_buy() {
        let a = account(vec![pos("600000", Some("银行"), 1000, 10, Some(9))]);
        let limits = RiskLimits {
            max_heat_bp: 100,
            max_industry_bp: 1_000,
            ..RiskLimits::default()
        };
        let got = check_buy(&a, &limits, &buy("000001", Some("银行"), 500, 20, Some(18)));
        assert_eq!(
            got,
            vec![
                RiskBreach::Heat {
                    heat_pct: 2.0,
                    limit_pct: 1.0
                },
                RiskBreach::Industry {
                    industry: "银行".into(),
                    share_pct: 20.0,
                    limit_pct: 10.0
                },
            ]
        );
    }

    #[test]
    fn day_numbers_cross_months_and_leap_days() {
        assert_eq!(day_number(19_700_101), 0);
        assert_eq!(day_number(20_240_301) - day_number(20_240_228), 2);
        assert_eq!(day_number(20_230_301) - day_number(20_230_228), 1);
        assert_eq!(day_number(20_260_101) - day_number(20_251_231), 1);
    }
}
