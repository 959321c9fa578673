use std::collections::HashMap;

use super::*;

/// Picks fixed in advance, by signal day.
struct Fixed(HashMap<u32, Vec<String>>);

impl SignalSource for Fixed {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.0.get(&day).cloned().unwrap_or_default()
    }
}

fn bar(date: u32, open: f64, close: f64) -> Bar {
    Bar {
        date,
        open,
        high: open.max(close),
        low: open.min(close),
        close,
        volume: 1e6,
        amount: 1e6 * close,
        turnover: None,
    }
}

fn stock(code: &str, name: &str, bars: Vec<Bar>) -> StockSeries {
    StockSeries {
        code: code.into(),
        name: name.into(),
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

const D: [u32; 8] = [
    20220104, 20220105, 20220106, 20220107, 20220110, 20220111, 20220112, 20220113,
];

fn args(hold: i64, top: i64, sl: f64, tp: f64, entry: &str) -> BacktestArgs {
    BacktestArgs::parse(
        &RawBacktestArgs {
            start: Some("2022-01-04"),
            end: Some("2022-01-13"),
            hold_days: Some(hold),
            top_n: Some(top),
            stop_loss_pct: Some(sl),
            take_profit_pct: Some(tp),
            entry_price_mode: Some(entry),
            ..RawBacktestArgs::default()
        },
        20260101,
    )
    .unwrap()
}

fn run(u: &Universe, a: &BacktestArgs, picks: &[(u32, &str)]) -> BacktestResult {
    let mut map: HashMap<u32, Vec<String>> = HashMap::new();
    for (d, c) in picks {
        map.entry(*d).or_default().push((*c).to_owned());
    }
    run_backtest(u, a, &mut Fixed(map)).unwrap()
}

fn flat(code: &str, price: f64) -> StockSeries {
    stock(
        code,
        "测试",
        D.iter().map(|&d| bar(d, price, price)).collect(),
    )
}

#[test]
fn fees_match_a_hand_calculation_to_the_fen() {
    // (amount, sell, date, commission, stamp, transfer)
    let cases = [
        (10_000.0, false, 20220104, 5.00, 0.0, 0.10),
        (10_000.0, true, 20230825, 5.00, 10.00, 0.10),
        (10_000.0, true, 20230828, 5.00, 5.00, 0.10),
        (1_234_567.89, false, 20220104, 308.64, 0.0, 12.35),
        (1_234_567.89, true, 20240102, 308.64, 617.28, 12.35),
        (19_999.0, false, 20220104, 5.00, 0.0, 0.20),
        (20_001.0, false, 20220104, 5.00, 0.0, 0.20),
        (40_000.0, false, 20220104, 10.00, 0.0, 0.40),
    ];
    for (amount, sell, date, c, s, t) in cases {
        assert_eq!(
            fees(amount, sell, date),
            (c, s, t),
            "{amount} {sell} {date}"
        );
    }
}

#[test]
fn limits_follow_board_st_and_date() {
    // (code, name, date, limit)
    let cases = [
        ("600519", "贵州茅台", 20220104, 0.10),
        ("600519", "ST茅台", 20220104, 0.05),
        ("300027", "华谊兄弟", 20200616, 0.10),
        ("300027", "华谊兄弟", 20200824, 0.20),
        ("688001", "华兴源创", 20220104, 0.20),
        ("830799", "艾融软件", 20220104, 0.30),
    ];
    for (code, name, date, want) in cases {
        let s = stock(code, name, vec![]);
        assert_eq!(
            s.board.limit_fraction(s.is_st(), date),
            want,
            "{code} {name} {date}"
        );
    }
    assert_eq!(limit_prices(10.03, 0.10), (11.03, 9.03));
    assert_eq!(limit_prices(3.35, 0.05), (3.52, 3.18));
}

#[test]
fn t_plus_1_lots_and_fees_of_one_round_trip() {
    let u = Universe {
        stocks: vec![flat("600000", 10.0)],
        ..Universe::default()
    };
    let r = run(&u, &args(1, 4, -8.0, 0.0, "open"), &[(D[0], "600000")]);
    assert_eq!(r.trades.len(), 1);
    let t = &r.trades[0];
    // Signal at the close of D0, bought at D1's open, sold no earlier than D2 (T+1).
    assert_eq!(
        (t.signal_date, t.entry_date, t.exit_date),
        (D[0], D[1], D[2])
    );
    assert_eq!(t.exit_reason, ExitReason::HoldExpired);
    // A quarter of 100,000 at 10.00 = 25 lots = 2,500 shares.
    assert_eq!(t.shares, 2_500);
    // Buy 25,000: commission 6.25, transfer 0.25; sell 25,000: 6.25 + stamp 25.00 + 0.25.
    assert_eq!(t.fees, 38.00);
    assert_eq!(t.pnl, -38.00);
    assert_eq!(r.metrics.final_equity, 100_000.0 - 38.0);
    assert_eq!(r.equity_curve.len(), 8);
}

#[test]
fn close_entry_buys_on_the_signal_day_and_still_waits_a_day_to_sell() {
    let u = Universe {
        stocks: vec![flat("600000", 10.0)],
        ..Universe::default()
    };
    let r = run(&u, &args(1, 4, -8.0, 0.0, "close"), &[(D[0], "600000")]);
    let t = &r.trades[0];
    assert_eq!((t.entry_date, t.exit_date), (D[0], D[1]));
}

#[test]
fn no_buy_at_a_limit_up_open() {
    let mut bars: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    bars[1] = bar(D[1], 11.0, 11.0); // opens at +10 %: limit-up
    let u = Universe {
        stocks: vec![stock("600000", "测试", bars)],
        ..Universe::default()
    };
    let r = run(&u, &args(2, 4, -8.0, 0.0, "open"), &[(D[0], "600000")]);
    assert!(r.trades.is_empty());
    assert_eq!(r.skipped_entries.get("limit_up"), Some(&1));
}

#[test]
fn a_limit_down_close_holds_the_position_until_it_can_be_sold() {
    let mut bars: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    bars[2] = bar(D[2], 9.5, 9.0); // −10 %: limit-down, the stop is hit but nobody buys
    bars[3] = bar(D[3], 8.1, 8.1); // −10 % again
    bars[4] = bar(D[4], 8.0, 7.9); // tradable: sold here
    for b in &mut bars[5..] {
        *b = bar(b.date, 7.9, 7.9);
    }
    let u = Universe {
        stocks: vec![stock("600000", "测试", bars)],
        ..Universe::default()
    };
    let r = run(&u, &args(10, 4, -8.0, 0.0, "open"), &[(D[0], "600000")]);
    let t = &r.trades[0];
    assert_eq!(t.exit_reason, ExitReason::StopLoss);
    assert_eq!(t.exit_date, D[4]);
    assert_eq!(t.exit_price, 7.9);
    assert_eq!(t.limit_down_days, 2);
}

#[test]
fn a_run_with_a_horizon_never_reads_a_later_bar() {
    // Bought D1, stop hit on a limit-down D2 that is also the period's end.
    let mut bars: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    bars[2] = bar(D[2], 9.5, 9.0);
    bars[3] = bar(D[3], 8.5, 8.5);
    let u = Universe {
        stocks: vec![stock("600000", "测试", bars)],
        ..Universe::default()
    };
    let a = BacktestArgs {
        end: D[2],
        ..args(10, 4, -8.0, 0.0, "open")
    };
    let mut picks = Fixed(HashMap::from([(D[0], vec!["600000".to_owned()])]));
    let tape = Tape::new(&u).unwrap();
    // Without a horizon the sale waits for D3 (a later bar).
    let open = simulate(&tape, &a, &mut picks, &Never).unwrap();
    assert_eq!(open.trades[0].exit_reason, ExitReason::StopLoss);
    assert_eq!(open.trades[0].exit_date, D[3]);
    // Seeing only up to D2: still held, valued at D2's close.
    let blind = simulate_seeing(&tape, &a, &mut picks, &Never, D[2]).unwrap();
    let t = &blind.trades[0];
    assert_eq!(t.exit_reason, ExitReason::OpenAtEnd);
    assert_eq!((t.exit_date, t.exit_price), (D[2], 9.0));
    assert_eq!(t.limit_down_days, 1);
}

#[test]
fn stop_loss_and_take_profit_on_closes() {
    let mut up: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    up[3] = bar(D[3], 10.0, 10.6); // +6 %
    let u = Universe {
        stocks: vec![stock("600000", "测试", up)],
        ..Universe::default()
    };
    let r = run(&u, &args(10, 4, -8.0, 5.0, "open"), &[(D[0], "600000")]);
    assert_eq!(r.trades[0].exit_reason, ExitReason::TakeProfit);
    assert_eq!(r.trades[0].exit_date, D[3]);
    assert!(r.trades[0].pnl > 0.0);

    let mut down: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    down[3] = bar(D[3], 10.0, 9.15); // −8.5 %, not a limit-down
    let u = Universe {
        stocks: vec![stock("600000", "测试", down)],
        ..Universe::default()
    };
    let r = run(&u, &args(10, 4, -8.0, 0.0, "open"), &[(D[0], "600000")]);
    assert_eq!(r.trades[0].exit_reason, ExitReason::StopLoss);
    assert_eq!(r.trades[0].exit_date, D[3]);
    assert_eq!(r.metrics.win_rate_pct, Some(0.0));
    assert_eq!(r.metrics.profit_factor, Some(0.0));
}

#[test]
fn a_lot_beyond_the_slot_is_skipped_and_suspended_days_trade_nothing() {
    let mut suspended: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    suspended.remove(1); // no bar on D1: the open-mode entry cannot happen
    let u = Universe {
        stocks: vec![flat("600519", 300.0), stock("600000", "测试", suspended)],
        ..Universe::default()
    };
    let r = run(
        &u,
        &args(2, 4, -8.0, 0.0, "open"),
        &[(D[0], "600519"), (D[0], "600000")],
    );
    assert!(r.trades.is_empty());
    assert_eq!(r.skipped_entries.get("lot_too_expensive"), Some(&1));
    assert_eq!(r.skipped_entries.get("no_bar"), Some(&1));
}

#[test]
fn the_period_end_sells_what_is_held() {
    let u = Universe {
        stocks: vec![flat("600000", 10.0)],
        ..Universe::default()
    };
    let r = run(&u, &args(60, 1, -8.0, 0.0, "open"), &[(D[5], "600000")]);
    let t = &r.trades[0];
    assert_eq!(t.exit_reason, ExitReason::EndOfPeriod);
    assert_eq!(t.exit_date, D[7]);
    // One slot: all the cash on one stock.
    assert_eq!(t.shares, 9_900);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let raw = |start: &'static str, end: &'static str| RawBacktestArgs {
        start: Some(start),
        end: Some(end),
        ..RawBacktestArgs::default()
    };
    assert!(matches!(
        BacktestArgs::parse(&raw("2022-02-01", "2022-01-01"), 20260101),
        Err(BacktestError::StartAfterEnd { .. })
    ));
    assert!(matches!(
        BacktestArgs::parse(&raw("2022-13-01", "2022-12-01"), 20260101),
        Err(BacktestError::BadDate(_))
    ));
    let bad_board = RawBacktestArgs {
        board: Some("nasdaq"),
        ..RawBacktestArgs::default()
    };
    assert!(matches!(
        BacktestArgs::parse(&bad_board, 20260101),
        Err(BacktestError::UnknownBoard(_))
    ));
    let nan = RawBacktestArgs {
        stop_loss_pct: Some(f64::NAN),
        ..RawBacktestArgs::default()
    };
    assert!(BacktestArgs::parse(&nan, 20260101).is_err());
    // Defaults and clamps of §14.11.
    let a = BacktestArgs::parse(
        &RawBacktestArgs {
            hold_days: Some(500),
            top_n: Some(-3),
            stop_loss_pct: Some(5.0),
            take_profit_pct: Some(-2.0),
            entry_price_mode: Some("tail_1455"),
            ..RawBacktestArgs::default()
        },
        20260101,
    )
    .unwrap();
    assert_eq!((a.start, a.end), (20250705, 20251231));
    assert_eq!((a.hold_days, a.top_n), (60, 0));
    // A positive stop-loss is the same loss (a stop at +5 % would mean no stop at all).
    assert_eq!((a.stop_loss_pct, a.take_profit_pct), (-5.0, 0.0));
    assert_eq!(a.triggers, TriggerSet::FUNNEL_DEFAULT);
    assert_eq!(a.entry_price_mode, EntryMode::Close);
    // No bars in the range.
    let u = Universe {
        stocks: vec![flat("600000", 10.0)],
        ..Universe::default()
    };
    let far = BacktestArgs {
        start: 20300101,
        end: 20300201,
        ..args(1, 1, -8.0, 0.0, "open")
    };
    assert!(matches!(
        run_backtest(&u, &far, &mut Fixed(HashMap::new())),
        Err(BacktestError::NoBarsInRange { .. })
    ));
    assert!(matches!(
        run_backtest(&Universe::default(), &far, &mut Fixed(HashMap::new())),
        Err(BacktestError::EmptyUniverse)
    ));
}

#[test]
fn the_benchmark_return_spans_the_same_days_or_says_why_not() {
    let mut u = Universe {
        stocks: vec![flat("600000", 10.0)],
        ..Universe::default()
    };
    let r = run(&u, &args(1, 1, -8.0, 0.0, "open"), &[]);
    assert_eq!(r.benchmark.return_pct, None);
    assert!(r.benchmark.note.is_some());
    let mut idx = vec![bar(20211231, 4000.0, 4000.0)];
    idx.extend(
        D.iter()
            .enumerate()
            .map(|(i, &d)| bar(d, 4000.0, 4000.0 + 10.0 * i as f64)),
    );
    u.benchmarks.csi300 = Some(idx);
    let r = run(&u, &args(1, 1, -8.0, 0.0, "open"), &[]);
    assert_eq!(r.benchmark.code, "000300.SH");
    let want = (4070.0 / 4000.0 - 1.0) * 100.0;
    assert!((r.benchmark.return_pct.unwrap() - want).abs() < 1e-9);
}

#[cfg(feature = "synthetic")]
mod with_the_funnel {
    use super::*;
    use crate::synthetic::{MarketShape, market};

    fn shape() -> MarketShape {
        MarketShape {
            stocks: 120,
            bars: 320,
            start: 20220103,
            seed: 11,
        }
    }

    fn run_funnel(u: &Universe, start: u32, end: u32) -> BacktestResult {
        let a = BacktestArgs {
            start,
            end,
            ..args(5, 4, -8.0, 0.0, "open")
        };
        let mut signals = FunnelSignals::new(u, BoardFilter::All);
        run_backtest(u, &a, &mut signals).unwrap()
    }

    #[test]
    fn a_future_bar_cannot_change_a_past_signal_or_trade() {
        let u = market(shape());
        let days: Vec<u32> = u.stocks[0].bars.iter().map(|b| b.date).collect();
        let (start, cut, end) = (days[250], days[290], days[319]);
        let base = run_funnel(&u, start, end);
        // Rewrite every bar after `cut` wildly.
        let mut changed = u.clone();
        for s in &mut changed.stocks {
            for b in s.bars.iter_mut().filter(|b| b.date > cut) {
                b.close *= 1.7;
                b.high = b.high.max(b.close);
                b.volume *= 9.0;
            }
        }
        let other = run_funnel(&changed, start, end);
        let before = |r: &BacktestResult| -> Vec<(String, u32, u32, u64)> {
            r.trades
                .iter()
                .filter(|t| t.entry_date <= cut)
                .map(|t| (t.code.clone(), t.signal_date, t.entry_date, t.shares))
                .collect()
        };
        assert!(
            !before(&base).is_empty(),
            "the funnel bought something before the cut"
        );
        assert_eq!(before(&base), before(&other));
        let curve = |r: &BacktestResult| -> Vec<EquityPoint> {
            r.equity_curve
                .iter()
                .filter(|p| p.date <= cut)
                .copied()
                .collect()
        };
        assert_eq!(curve(&base), curve(&other));
        // And the same inputs give the same result.
        assert_eq!(base, run_funnel(&u, start, end));
    }
}

#[test]
fn a_slot_freed_at_a_close_cannot_take_that_mornings_open_buy() {
    let u = Universe {
        stocks: vec![flat("600000", 10.0), flat("600001", 10.0)],
        ..Universe::default()
    };
    // One slot: A is bought at D1's open and sold at D2's close. B, picked at D1's close,
    // would need that slot at D2's open, hours before A is sold — so it is not bought;
    // B picked again at D2's close is bought at D3's open.
    let picks = [(D[0], "600000"), (D[1], "600001"), (D[2], "600001")];
    let r = run(&u, &args(1, 1, -8.0, 0.0, "open"), &picks);
    let got: Vec<(&str, u32, u32, u32)> = r
        .trades
        .iter()
        .map(|t| (t.code.as_str(), t.signal_date, t.entry_date, t.exit_date))
        .collect();
    assert_eq!(
        got,
        vec![("600000", D[0], D[1], D[2]), ("600001", D[2], D[3], D[4])]
    );
    // With the book full at D1's close the source was not asked at all.
    assert_eq!(r.signal_days, 2);
}

/// A stock named `today` whose name history is `history`, on the flat bars of `D` but for
/// `changes` (index, close).
fn named(today: &str, history: &[(u32, &str)], changes: &[(usize, f64)]) -> StockSeries {
    let mut bars: Vec<Bar> = D.iter().map(|&d| bar(d, 10.0, 10.0)).collect();
    for &(i, close) in changes {
        bars[i] = bar(D[i], bars[i - 1].close, close);
    }
    StockSeries {
        name_history: history
            .iter()
            .map(|&(from, name)| crate::NameSpan {
                from,
                name: name.into(),
            })
            .collect(),
        ..stock("600001", today, bars)
    }
}

#[test]
fn price_limits_read_the_st_status_of_the_day() {
    // Bought at D1's open at 10.00; D2 closes −5 %, past a −4 % stop. ST then, that close is
    // its 5 % limit-down and the sale waits for D3; not ST then, it sells at D2.
    let st_then: &[(u32, &str)] = &[(20200101, "*ST测试"), (D[5], "测试")];
    let healthy_then: &[(u32, &str)] = &[(20200101, "测试"), (D[5], "ST测试")];
    // (today's name, history, exit day, limit-down days, ST fell back to today's name,
    // the trade's name: the one carried when it was entered)
    type Names<'a> = &'a [(u32, &'a str)];
    let cases: [(&str, Names<'_>, u32, usize, bool, &str); 4] = [
        ("测试", st_then, D[3], 1, false, "*ST测试"),
        ("ST测试", healthy_then, D[2], 0, false, "测试"),
        // no history: today's name stands in, and the result says so
        ("ST测试", &[], D[3], 1, true, "ST测试"),
        ("测试", &[], D[2], 0, true, "测试"),
    ];
    for (today, history, exit, stuck, fell_back, traded_as) in cases {
        let u = Universe {
            stocks: vec![named(today, history, &[(2, 9.5), (3, 9.5)])],
            ..Universe::default()
        };
        let r = run(&u, &args(10, 4, -4.0, 0.0, "open"), &[(D[0], "600001")]);
        let t = &r.trades[0];
        assert_eq!(t.exit_reason, ExitReason::StopLoss, "{today} {history:?}");
        assert_eq!(t.name, traded_as, "{today} {history:?}");
        assert_eq!(
            (t.exit_date, t.limit_down_days),
            (exit, stuck),
            "{today} {history:?}"
        );
        assert_eq!(r.as_of_notes.stocks, 1);
        assert_eq!(r.as_of_notes.st_from_today, usize::from(fell_back));
        assert_eq!(
            r.notes.iter().any(|n| n.contains("ST 状态取自今日名称")),
            fell_back,
            "{:?}",
            r.notes
        );
    }
}

#[test]
fn a_position_held_into_its_delisting_is_closed_on_the_last_trading_day() {
    // 600001 trades D0–D4 and is delisted; 600000 keeps the calendar going to D7. Bought at
    // D1's open at 10.00.
    let delisted = |closes: &[(usize, f64)], delist: u32| -> StockSeries {
        let mut s = named("测试", &[], closes);
        s.bars.truncate(5);
        s.delist_date = Some(delist);
        s
    };
    // (D4's close, delisting day, hold days, stop, reason, exit day, exit price, limit-down days)
    let cases = [
        // no rule due on the last day: closed as delisted at its close
        (10.0, D[4], 10, -8.0, ExitReason::Delisted, D[4], 10.0, 0),
        // suspended before the delisting day: its last bar is the last trading day
        (
            10.0,
            20220131,
            10,
            -8.0,
            ExitReason::Delisted,
            D[4],
            10.0,
            0,
        ),
        // the stop is due but the close is a limit-down: delisting still ends it there
        (9.0, D[4], 10, -8.0, ExitReason::Delisted, D[4], 9.0, 1),
        // a rule due that day and sold: the rule's exit
        (10.0, D[4], 3, -8.0, ExitReason::HoldExpired, D[4], 10.0, 0),
        (9.5, D[4], 10, -4.0, ExitReason::StopLoss, D[4], 9.5, 0),
        // a rule exit before the last day is the rule's as ever
        (10.0, D[4], 2, -8.0, ExitReason::HoldExpired, D[3], 10.0, 0),
    ];
    for (close, delist, hold, stop, reason, day, price, stuck) in cases {
        let u = Universe {
            stocks: vec![flat("600000", 10.0), delisted(&[(4, close)], delist)],
            ..Universe::default()
        };
        let r = run(&u, &args(hold, 4, stop, 0.0, "open"), &[(D[0], "600001")]);
        let what = format!("close {close} delisted {delist} hold {hold} stop {stop}");
        assert_eq!(r.trades.len(), 1, "{what}");
        let t = &r.trades[0];
        assert_eq!(
            (t.exit_reason, t.exit_date, t.exit_price, t.limit_down_days),
            (reason, day, price, stuck),
            "{what}"
        );
        // Sold: the proceeds are cash from then on, nothing is valued after the last bar.
        let last = r.equity_curve.last().unwrap();
        assert_eq!(last.equity, last.cash, "{what}");
        assert_eq!(last.equity, fen(INITIAL_CASH + t.pnl), "{what}");
        assert_eq!(r.as_of_notes.delisted, 1, "{what}");
    }
}

#[test]
fn a_stock_is_not_bought_on_or_after_its_last_trading_day() {
    let mut s = named("测试", &[], &[]);
    s.bars.truncate(5);
    s.delist_date = Some(D[4]);
    let u = Universe {
        stocks: vec![flat("600000", 10.0), s],
        ..Universe::default()
    };
    // Picked at D3's close: D4's open is its last day, a share bought then could never be
    // sold. Picked at D5: gone.
    for (mode, pick) in [
        ("open", D[3]),
        ("close", D[4]),
        ("open", D[5]),
        ("close", D[6]),
    ] {
        let r = run(&u, &args(3, 4, -8.0, 0.0, mode), &[(pick, "600001")]);
        assert!(r.trades.is_empty(), "{mode} {pick}: {:?}", r.trades);
        assert_eq!(r.skipped_entries.get("delisted"), Some(&1), "{mode} {pick}");
    }
    // The day before its last it is bought and then closed on the last day.
    let r = run(&u, &args(3, 4, -8.0, 0.0, "close"), &[(D[3], "600001")]);
    assert_eq!(r.trades[0].exit_reason, ExitReason::Delisted);
    assert_eq!(
        (r.trades[0].entry_date, r.trades[0].exit_date),
        (D[3], D[4])
    );
}

#[test]
fn an_exit_at_a_close_follows_the_rule_unless_the_delisting_ends_it() {
    use ExitReason::*;
    // (rule due, its sale went through, the last trading day, exit)
    let cases = [
        (None, false, false, None),
        (Some(StopLoss), true, false, Some(StopLoss)),
        (Some(StopLoss), false, false, None),
        (None, false, true, Some(Delisted)),
        (Some(HoldExpired), true, true, Some(HoldExpired)),
        (Some(StopLoss), false, true, Some(Delisted)),
    ];
    for (due, sold, last, want) in cases {
        assert_eq!(
            exit_at_close(due, sold, last),
            want,
            "{due:?} {sold} {last}"
        );
    }
}
