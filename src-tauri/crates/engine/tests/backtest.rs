//! The backtest over the real bundled bars (tests/data, 8 A-shares) with the funnel as the
//! signal source: every trade checked against the bars it claims (prices, T+1, lots, fees to
//! the fen, P/L), the equity curve against the trades, determinism, and bad input.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use common::real_universe;

use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, BacktestResult, EntryMode, ExitReason, FunnelSignals,
    RawBacktestArgs, fees, fen, run_backtest,
};
use wyckoff_engine::{Bar, BoardFilter, Universe};

fn args(start: &str, end: &str, entry: &str) -> BacktestArgs {
    let raw = RawBacktestArgs {
        start: Some(start),
        end: Some(end),
        entry_price_mode: Some(entry),
        ..RawBacktestArgs::default()
    };
    BacktestArgs::parse(&raw, 20210101).unwrap()
}

fn run(u: &Universe, a: &BacktestArgs) -> BacktestResult {
    let mut signals = FunnelSignals::new(u, a.board);
    run_backtest(u, a, &mut signals).unwrap()
}

fn bar(u: &Universe, code: &str, date: u32) -> Bar {
    let s = u.stocks.iter().find(|s| s.code == code).unwrap();
    *s.bars.iter().find(|b| b.date == date).unwrap()
}

/// Every trade is what the bars and the fee rules say it is.
fn check_trades(u: &Universe, r: &BacktestResult) {
    for t in &r.trades {
        let entry = bar(u, &t.code, t.entry_date);
        match r.args.entry_price_mode {
            EntryMode::Open => {
                assert!(t.entry_date > t.signal_date, "{t:?}");
                assert_eq!(t.entry_price, entry.open, "{t:?}");
            }
            EntryMode::Close => {
                assert_eq!(t.entry_date, t.signal_date, "{t:?}");
                assert_eq!(t.entry_price, entry.close, "{t:?}");
            }
            // these runs have no minute bars (tested in backtest::tail)
            EntryMode::At1455 => unreachable!("no 14:55 run here"),
        }
        assert!(t.shares > 0 && t.shares % 100 == 0, "whole lots: {t:?}");
        // T+1: never sold on the day it was bought.
        assert!(t.exit_date > t.entry_date, "T+1: {t:?}");
        let exit = bar(u, &t.code, t.exit_date);
        assert_eq!(t.exit_price, exit.close, "{t:?}");
        let shares = t.shares as f64;
        let (bc, _, bt) = fees(t.entry_price * shares, false, t.entry_date);
        let buy_fees = bc + bt;
        let (sell_fees, proceeds) = if t.exit_reason == ExitReason::OpenAtEnd {
            (0.0, t.exit_price * shares)
        } else {
            let (c, s, x) = fees(t.exit_price * shares, true, t.exit_date);
            (c + s + x, t.exit_price * shares)
        };
        assert!((t.fees - fen(buy_fees + sell_fees)).abs() < 0.005, "{t:?}");
        let pnl = fen(proceeds - sell_fees - t.entry_price * shares - buy_fees);
        assert!((t.pnl - pnl).abs() < 0.005, "{t:?}");
        assert!(t.pnl.is_finite() && t.pnl_pct.is_finite());
    }
}

#[test]
fn funnel_trades_on_real_bars_match_the_bars_and_the_fee_rules() {
    let u = real_universe();
    for entry in ["open", "close"] {
        let r = run(&u, &args("2018-01-01", "2019-12-31", entry));
        assert!(r.trading_days > 400, "{}", r.trading_days);
        assert!(
            !r.trades.is_empty(),
            "the funnel found something to buy ({entry})"
        );
        check_trades(&u, &r);
        // Never more positions at once than top_n (4).
        for p in &r.equity_curve {
            let open = r
                .trades
                .iter()
                .filter(|t| t.entry_date <= p.date && p.date < t.exit_date)
                .count();
            assert!(open <= 4, "{} positions on {}", open, p.date);
            assert!(p.cash >= 0.0 && p.equity > 0.0);
        }
        // Closed trades add up to the change in cash when nothing is held at the end.
        let last = r.equity_curve.last().unwrap();
        assert_eq!(r.metrics.final_equity, last.equity);
        if r.trades
            .iter()
            .all(|t| t.exit_reason != ExitReason::OpenAtEnd)
        {
            let pnl: f64 = r.trades.iter().map(|t| t.pnl).sum();
            assert!((r.initial_cash + pnl - last.cash).abs() < 0.05 * r.trades.len() as f64);
        }
        let want = (last.equity / r.initial_cash - 1.0) * 100.0;
        assert!((r.metrics.total_return_pct - want).abs() < 1e-6);
        // No index bars offline: no benchmark figure, and a note why.
        assert_eq!(r.benchmark.return_pct, None);
        assert!(r.benchmark.note.is_some());
    }
}

#[test]
fn the_same_bars_give_the_same_backtest_in_any_stock_order() {
    let u = real_universe();
    let a = args("2019-01-01", "2019-12-31", "open");
    let base = run(&u, &a);
    assert_eq!(base, run(&u, &a));
    let mut reversed = u.clone();
    reversed.stocks.reverse();
    let other = run(&reversed, &a);
    assert_eq!(base.trades, other.trades);
    assert_eq!(base.equity_curve, other.equity_curve);
}

#[test]
fn the_json_uses_snake_case_names() {
    let u = real_universe();
    let r = run(&u, &args("2019-01-01", "2019-06-30", "open"));
    let v = serde_json::to_value(&r).unwrap();
    for key in ["trades", "equity_curve", "metrics", "benchmark", "args"] {
        assert!(v.get(key).is_some(), "{key} in {v}");
    }
    assert!(v["metrics"].get("max_drawdown_pct").is_some());
}

#[test]
fn bad_input_is_a_clear_error() {
    let u = real_universe();
    let raw = RawBacktestArgs {
        start: Some("2019-12-31"),
        end: Some("2019-01-01"),
        ..RawBacktestArgs::default()
    };
    assert!(matches!(
        BacktestArgs::parse(&raw, 20210101),
        Err(BacktestError::StartAfterEnd { .. })
    ));
    let raw = RawBacktestArgs {
        board: Some("nasdaq"),
        ..RawBacktestArgs::default()
    };
    let e = BacktestArgs::parse(&raw, 20210101).unwrap_err();
    assert!(matches!(e, BacktestError::UnknownBoard(_)));
    assert!(e.to_string().contains("nasdaq"));
    // Bars end in 2020: a 2024 window has nothing to trade on.
    let a = args("2024-01-01", "2024-06-30", "open");
    let mut signals = FunnelSignals::new(&u, BoardFilter::All);
    let e = run_backtest(&u, &a, &mut signals).unwrap_err();
    assert!(matches!(e, BacktestError::NoBarsInRange { .. }), "{e}");
    let empty = Universe {
        stocks: Vec::new(),
        ..Universe::default()
    };
    let mut signals = FunnelSignals::new(&empty, BoardFilter::All);
    assert_eq!(
        run_backtest(&empty, &a, &mut signals),
        Err(BacktestError::EmptyUniverse)
    );
}
