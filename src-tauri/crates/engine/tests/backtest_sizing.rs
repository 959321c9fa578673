//! The backtest with risk sizing: every trade's loss at the stop-loss, both sides' fees
//! included, stays within the risk percent of the equity it was bought with, its shares
//! are a buy the board accepts, and one more step of the board's lot would have broken the
//! budget or the cash; the run is reproducible. One position at a time (`top_n` 1), so the
//! equity at each buy is the starting cash plus the closed trades' P/L, recomputed here
//! from the trades themselves.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, BacktestResult, INITIAL_CASH, RawBacktestArgs, SignalSource,
    run_backtest,
};
use wyckoff_engine::fees::{div_round, fees_for};
use wyckoff_engine::risk_limits::RiskLimits;
use wyckoff_engine::sizing::{LimitsSource, PositionSizing};
use wyckoff_engine::{Bar, Board, StockSeries, Universe};

/// Every code, every day, the first one turning with the date.
struct All(Vec<String>);

impl SignalSource for All {
    fn picks(&mut self, day: u32) -> Vec<String> {
        let mut codes = self.0.clone();
        let k = day as usize % codes.len();
        codes.rotate_left(k);
        codes
    }
}

/// Consecutive weekdays from 2024-01-02, `n` of them.
fn weekdays(n: usize) -> Vec<u32> {
    let mut out = Vec::new();
    let mut d = wyckoff_engine::dates::days_from_civil(20240102).unwrap();
    while out.len() < n {
        if (d + 3).rem_euclid(7) < 5 {
            out.push(wyckoff_engine::dates::civil_from_days(d));
        }
        d += 1;
    }
    out
}

/// A stock whose fen-priced closes swing up to ±6 % a day on a fixed pseudo-random walk
/// (so some trades hit the −8 % stop and some do not).
fn stock(code: &str, start: f64, seed: u64, days: &[u32]) -> StockSeries {
    let mut x = seed;
    let mut close: f64 = start;
    let fen = |p: f64| (p * 100.0).round() / 100.0;
    let bars = days
        .iter()
        .map(|&date| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let r = ((x >> 33) % 1_201) as f64 / 10_000.0 - 0.06;
            let open = fen(close * (1.0 + r / 3.0));
            close = fen(close * (1.0 + r));
            Bar {
                date,
                open,
                high: fen(open.max(close) * 1.01),
                low: fen(open.min(close) * 0.99),
                close,
                volume: 1e6,
                amount: close * 1e6,
                turnover: None,
            }
        })
        .collect();
    StockSeries {
        code: code.to_owned(),
        name: code.to_owned(),
        board: Board::from_code(code),
        industry: None,
        market_cap_yi: None,
        list_date: None,
        bars,
        name_history: Vec::new(),
        delist_date: None,
        cap_history: Vec::new(),
    }
}

fn universe() -> Universe {
    let days = weekdays(160);
    Universe {
        stocks: vec![
            stock("600000", 10.37, 1, &days),
            stock("688001", 86.5, 2, &days),
            stock("830799", 23.18, 3, &days),
            stock("300027", 4.52, 4, &days),
        ],
        ..Universe::default()
    }
}

fn args(sizing: &str, risk_pct: Option<f64>, top_n: i64) -> Result<BacktestArgs, BacktestError> {
    BacktestArgs::parse(
        &RawBacktestArgs {
            start: Some("2024-01-03"),
            end: Some("2024-08-01"),
            hold_days: Some(5),
            top_n: Some(top_n),
            sizing: Some(sizing),
            risk_pct,
            ..RawBacktestArgs::default()
        },
        20250101,
    )
}

fn run(u: &Universe, a: &BacktestArgs) -> BacktestResult {
    let codes = u.stocks.iter().map(|s| s.code.clone()).collect();
    run_backtest(u, a, &mut All(codes)).unwrap()
}

fn amount(n: u64, price_e6: i64) -> i64 {
    div_round(i128::from(n) * i128::from(price_e6), 10_000) as i64
}

/// Loss at the stop in millionths: the price difference and both sides' fees.
fn risk_e6(n: u64, entry_e6: i64, stop_e6: i64, date: u32) -> i128 {
    let buy = fees_for(amount(n, entry_e6), false, date).total_fen();
    let sell = fees_for(amount(n, stop_e6), true, date).total_fen();
    i128::from(n) * i128::from(entry_e6 - stop_e6) + 10_000 * i128::from(buy + sell)
}

fn cost_fen(n: u64, entry_e6: i64, date: u32) -> i64 {
    let a = amount(n, entry_e6);
    a + fees_for(a, false, date).total_fen()
}

#[test]
fn each_trades_risk_at_entry_stays_within_the_budget() {
    let u = universe();
    for (risk_pct, risk_bp) in [(1.0, 100i64), (0.5, 50), (2.0, 200)] {
        let a = args("risk", Some(risk_pct), 1).unwrap();
        assert_eq!(
            a.sizing,
            PositionSizing::Risk {
                risk_bp: risk_bp as u32,
                limits: RiskLimits::default(),
                limits_from: LimitsSource::EngineDefault,
            }
        );
        let r = run(&u, &a);
        assert!(
            r.trades.len() >= 10,
            "{risk_pct}%: {} trades",
            r.trades.len()
        );
        let boards: BTreeSet<Board> = r.trades.iter().map(|t| Board::from_code(&t.code)).collect();
        assert!(boards.len() >= 3, "{risk_pct}%: boards traded {boards:?}");
        let mut trades = r.trades.clone();
        trades.sort_by_key(|t| t.entry_date);
        let mut equity = INITIAL_CASH;
        let mut bound_by_budget = 0;
        for t in &trades {
            let equity_fen = (equity * 100.0).round() as i64;
            let budget_e6 = i128::from(equity_fen * risk_bp / 10_000) * 10_000;
            let entry_e6 = (t.entry_price * 1e6).round() as i64;
            // the −8 % stop the backtest sells at
            let stop_e6 = entry_e6 * 92 / 100;
            let lot = Board::from_code(&t.code).lot_rule();
            assert!(lot.is_valid(t.shares), "{t:?}");
            let risk = risk_e6(t.shares, entry_e6, stop_e6, t.entry_date);
            assert!(
                risk <= budget_e6,
                "over budget: {risk} > {budget_e6}: {t:?}"
            );
            assert!(
                cost_fen(t.shares, entry_e6, t.entry_date) <= equity_fen,
                "{t:?}"
            );
            // the largest such buy: one more step breaks the budget or the cash
            let next = t.shares + lot.step;
            let over_budget = risk_e6(next, entry_e6, stop_e6, t.entry_date) > budget_e6;
            assert!(
                over_budget || cost_fen(next, entry_e6, t.entry_date) > equity_fen,
                "{next} shares would fit too: {t:?}"
            );
            bound_by_budget += usize::from(over_budget);
            equity += t.pnl;
        }
        assert!(bound_by_budget > 0, "{risk_pct}%: the budget never bound");
        let note = r.notes.iter().find(|n| n.contains("按风险定仓")).unwrap();
        assert!(note.contains(&format!("{risk_pct}%")), "{note}");
    }
}

#[test]
fn risk_sizing_is_reproducible_and_not_equal_slots() {
    let u = universe();
    let a = args("risk", None, 3).unwrap();
    assert_eq!(
        a.sizing,
        PositionSizing::Risk {
            risk_bp: 100,
            limits: RiskLimits::default(),
            limits_from: LimitsSource::EngineDefault,
        }
    );
    let once = serde_json::to_string(&run(&u, &a)).unwrap();
    let again = serde_json::to_string(&run(&u, &a)).unwrap();
    assert_eq!(once, again);
    // The arguments say how it was sized; equal slots say nothing, as before.
    assert!(once.contains(
        r#""sizing":{"type":"risk","risk_bp":100,"limits":{"max_heat_bp":600,"max_industry_bp":3000,"max_positions":8,"drawdown_brake_bp":1500,"max_stop_outs":3,"stop_out_days":10},"limits_from":"engine_default"}"#
    ));
    let equal = run(&u, &args("equal", None, 3).unwrap());
    let equal_json = serde_json::to_string(&equal).unwrap();
    assert!(!equal_json.contains("sizing"));
    let sized: BacktestResult = serde_json::from_str(&once).unwrap();
    assert_ne!(
        sized.trades.iter().map(|t| t.shares).collect::<Vec<_>>(),
        equal.trades.iter().map(|t| t.shares).collect::<Vec<_>>()
    );
    // Each position at most a slot of the equity: never more than a third of the
    // highest equity the run reached.
    let top = sized
        .equity_curve
        .iter()
        .map(|p| p.equity)
        .fold(INITIAL_CASH, f64::max);
    for t in &sized.trades {
        assert!(t.entry_price * t.shares as f64 <= top / 3.0, "{t:?}");
    }
}

#[test]
fn bad_sizing_arguments_are_refused() {
    let msg = |e: BacktestError| e.to_string();
    assert_eq!(
        msg(args("kelly", None, 4).unwrap_err()),
        "sizing 无效: 'kelly'，可选: equal（等分仓位，默认）/ risk（按风险定仓）"
    );
    assert_eq!(
        msg(args("risk", Some(0.0), 4).unwrap_err()),
        "risk_pct 必须在 0.01–100 之间（收到 0）"
    );
    assert_eq!(
        msg(args("equal", Some(1.0), 4).unwrap_err()),
        "risk_pct 只用于 sizing=risk（按风险定仓）"
    );
    let no_stop = BacktestArgs::parse(
        &RawBacktestArgs {
            stop_loss_pct: Some(0.0),
            sizing: Some("risk"),
            ..RawBacktestArgs::default()
        },
        20250101,
    );
    assert_eq!(no_stop.unwrap_err(), BacktestError::RiskSizingNeedsStop);
}

#[test]
fn the_heat_cap_and_the_drawdown_brake_hold_buys_back() {
    let u = universe();
    // 2 % a trade in 5 slots could put 10 % at risk; the cap holds it to 6 %.
    let mut a = args("risk", Some(2.0), 5).unwrap();
    let capped = run(&u, &a);
    assert!(
        capped.skipped_entries.get("heat_cap").copied().unwrap_or(0) > 0,
        "{:?}",
        capped.skipped_entries
    );
    for t in &capped.trades {
        let r = t.entry_risk.expect("risk-sized trades say their risk");
        assert!(r.risk <= r.equity * 0.02 + 1e-6, "{t:?}");
        assert!(r.risk <= r.equity * 0.06 + 1e-6, "{t:?}");
    }
    let PositionSizing::Risk { risk_bp, .. } = a.sizing else {
        panic!("risk sizing")
    };
    let risk = |limits: RiskLimits| PositionSizing::Risk {
        risk_bp,
        limits,
        limits_from: LimitsSource::Settings,
    };
    a.sizing = risk(OFF);
    let free = run(&u, &a);
    for guard in GUARDS {
        assert_eq!(free.skipped_entries.get(guard), None, "{guard}");
    }
    assert_ne!(free.trades.len(), capped.trades.len());

    // A brake at 0.01 % below the high stops buying at the first dip.
    a.sizing = risk(RiskLimits {
        drawdown_brake_bp: 1,
        ..OFF
    });
    let braked = run(&u, &a);
    assert!(
        braked
            .skipped_entries
            .get("drawdown_brake")
            .copied()
            .unwrap_or(0)
            > 0,
        "{:?}",
        braked.skipped_entries
    );
    assert!(braked.trades.len() < free.trades.len());
    // Equal slots carry no risk figure.
    let equal = run(&u, &args("equal", None, 5).unwrap());
    assert!(equal.trades.iter().all(|t| t.entry_risk.is_none()));
}

/// Every limit off.
const OFF: RiskLimits = RiskLimits {
    max_heat_bp: 0,
    max_industry_bp: 0,
    max_positions: 0,
    drawdown_brake_bp: 0,
    max_stop_outs: 0,
    stop_out_days: 10,
};

/// The skip reasons the account limits give.
const GUARDS: [&str; 4] = [
    "heat_cap",
    "positions_limit",
    "drawdown_brake",
    "stop_out_brake",
];

fn risk_run(u: &Universe, limits: RiskLimits, top_n: i64) -> BacktestResult {
    let mut a = args("risk", Some(1.0), top_n).unwrap();
    a.sizing = a.sizing.under(limits, LimitsSource::Settings);
    run(u, &a)
}

/// Losing sales by their day, from the run's own trades.
fn losing_days(r: &BacktestResult) -> Vec<u32> {
    r.trades
        .iter()
        .filter(|t| t.pnl < 0.0)
        .map(|t| t.exit_date)
        .collect()
}

fn day_number(d: u32) -> i64 {
    wyckoff_engine::dates::days_from_civil(d).unwrap()
}

#[test]
fn the_stop_out_brake_holds_buys_after_losing_sales_in_the_window() {
    let u = universe();
    let free = risk_run(&u, OFF, 3);
    assert!(losing_days(&free).len() >= 3, "the walk has losing sales");
    // (losing sales, window days, whether a buy is held back).
    for (max_stop_outs, stop_out_days, holds) in [
        (1, 30, true),
        (2, 10, true),
        (50, 10, false),
        (0, 10, false),
    ] {
        let limits = RiskLimits {
            max_stop_outs,
            stop_out_days,
            ..OFF
        };
        let r = risk_run(&u, limits, 3);
        let held = r
            .skipped_entries
            .get("stop_out_brake")
            .copied()
            .unwrap_or(0);
        assert_eq!(
            held > 0,
            holds,
            "{max_stop_outs} in {stop_out_days}: {held}"
        );
        if holds {
            assert!(
                r.trades.len() < free.trades.len(),
                "{max_stop_outs} in {stop_out_days}"
            );
        } else {
            assert_eq!(r.trades, free.trades);
        }
        // No buy while the brake held: fewer than the limit's losing sales in the window
        // before each entry (bought at the open, before that day's sales).
        let sales = losing_days(&r);
        for t in &r.trades {
            let recent = sales
                .iter()
                .filter(|&&e| {
                    e < t.entry_date
                        && (0..i64::from(stop_out_days))
                            .contains(&(day_number(t.entry_date) - day_number(e)))
                })
                .count();
            assert!(
                max_stop_outs == 0 || recent < max_stop_outs as usize,
                "{max_stop_outs} in {stop_out_days}: bought {t:?} after {recent} losing sales"
            );
        }
    }
}

#[test]
fn the_positions_limit_caps_open_positions_below_top_n() {
    let u = universe();
    let limits = RiskLimits {
        max_positions: 2,
        ..OFF
    };
    let r = risk_run(&u, limits, 5);
    assert!(
        r.skipped_entries
            .get("positions_limit")
            .copied()
            .unwrap_or(0)
            > 0,
        "{:?}",
        r.skipped_entries
    );
    // At no day were more than two positions open.
    for p in &r.equity_curve {
        let open = r
            .trades
            .iter()
            .filter(|t| t.entry_date <= p.date && p.date < t.exit_date)
            .count();
        assert!(open <= 2, "{} open on {}", open, p.date);
    }
    let free = risk_run(&u, OFF, 5);
    assert!(free.trades.len() > r.trades.len());
}

#[test]
fn the_result_says_which_limits_it_ran_under() {
    let u = universe();
    let mine = RiskLimits {
        max_heat_bp: 450,
        max_positions: 3,
        ..RiskLimits::default()
    };
    let r = risk_run(&u, mine, 4);
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["args"]["sizing"]["limits_from"], "settings");
    assert_eq!(json["args"]["sizing"]["limits"]["max_heat_bp"], 450);
    let note = r.notes.iter().find(|n| n.starts_with("账户限制")).unwrap();
    assert!(
        note.contains("取自设置") && note.contains("4.5%") && note.contains("最多 3 只"),
        "{note}"
    );
    // The per-position budget is the run's 1/top_n, not Settings' largest position, and
    // the 水温 is counted, not enforced: both said.
    let sizing = r
        .notes
        .iter()
        .find(|n| n.starts_with("按风险定仓"))
        .unwrap();
    assert!(
        sizing.contains("单只不超过权益的 1/4（按 top_n 等分，不取设置里的单只仓位上限）")
            && sizing.contains("水温只统计不执行"),
        "{sizing}"
    );
    let default = run(&u, &args("risk", None, 4).unwrap());
    let note = default
        .notes
        .iter()
        .find(|n| n.starts_with("账户限制"))
        .unwrap();
    assert!(note.contains("引擎默认值"), "{note}");
    // Equal slots: no limits applied, none recorded.
    let equal = serde_json::to_value(run(&u, &args("equal", None, 4).unwrap())).unwrap();
    assert!(equal["args"].get("sizing").is_none());
}
