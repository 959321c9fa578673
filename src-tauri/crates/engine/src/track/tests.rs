use super::*;

fn bar(date: u32, open: f64, high: f64, low: f64, close: f64) -> Bar {
    Bar {
        date,
        open,
        high,
        low,
        close,
        volume: 1.0e6,
        amount: 1.0e7,
        turnover: None,
    }
}

/// Fen rounding written out again (half away from zero), so the expectations do not
/// lean on the code under test.
fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Net return of 100·lots shares, the fee rules spelled out: commission 0.025 % (min 5),
/// transfer 0.001 % both sides, stamp duty on the sell 0.1 % (0.05 % from 2023-08-28).
fn expected(shares: f64, buy: f64, sell: f64, sell_date: u32) -> (f64, f64) {
    let cost = buy * shares;
    let buy_fees = r2((cost * 0.00025).max(5.0)) + r2(cost * 0.00001);
    let proceeds = sell * shares;
    let stamp = if sell_date >= 20230828 { 0.0005 } else { 0.001 };
    let sell_fees =
        r2((proceeds * 0.00025).max(5.0)) + r2(proceeds * stamp) + r2(proceeds * 0.00001);
    let pnl = r2(proceeds - sell_fees - cost - buy_fees);
    (pnl, pnl / (cost + buy_fees) * 100.0)
}

fn series() -> Vec<Bar> {
    vec![
        bar(20240102, 10.0, 10.2, 9.8, 10.0),
        // screen day
        bar(20240103, 10.0, 10.3, 9.9, 10.1),
        // entry at this open
        bar(20240104, 10.5, 10.9, 10.4, 10.8),
        bar(20240105, 10.8, 11.6, 10.7, 11.5),
        bar(20240108, 11.5, 11.5, 9.6, 9.7),
        bar(20240109, 9.7, 10.0, 9.5, 9.9),
        bar(20240110, 9.9, 10.4, 9.9, 10.3),
    ]
}

#[test]
fn entry_at_next_open_exit_at_nth_close_net_of_fees() {
    let out = follow(
        &series(),
        20240103,
        Some(20240104),
        &[1, 4],
        Board::Main,
        false,
    );
    // 25,000 CNY at 10.50 buys 23 lots.
    let (pnl1, pct1) = expected(2300.0, 10.5, 11.5, 20240105);
    let (pnl5, pct5) = expected(2300.0, 10.5, 10.3, 20240110);
    let (_, mfe5) = expected(2300.0, 10.5, 11.6, 20240105);
    let (_, mae5) = expected(2300.0, 10.5, 9.5, 20240109);
    match &out[..] {
        [
            Outcome::Done {
                horizon: 1,
                entry_date: 20240104,
                entry_price: e1,
                exit_date: 20240105,
                exit_price: x1,
                shares: 2300,
                pnl: p1,
                net_return_pct: n1,
                hit: true,
                ..
            },
            Outcome::Done {
                horizon: 4,
                exit_date: 20240110,
                pnl: p5,
                net_return_pct: n5,
                mfe_pct,
                mae_pct,
                hit: false,
                ..
            },
        ] => {
            assert_eq!((*e1, *x1), (10.5, 11.5));
            assert_eq!(*p1, pnl1);
            assert!((n1 - pct1).abs() < 1e-9);
            assert_eq!(*p5, pnl5);
            assert!(pnl5 < 0.0);
            assert!((n5 - pct5).abs() < 1e-9);
            assert!((mfe_pct - mfe5).abs() < 1e-9);
            assert!((mae_pct - mae5).abs() < 1e-9);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn pending_until_the_exit_bar_exists() {
    let bars = series();
    // Screen on the last bar: nothing after it.
    assert_eq!(
        follow(&bars, 20240110, None, &HORIZONS, Board::Main, false),
        HORIZONS
            .iter()
            .map(|&h| Outcome::Pending {
                horizon: h,
                bars_after: 0
            })
            .collect::<Vec<_>>()
    );
    // Bought on 01-04, then four days held: horizon 4 is done exactly, 5 and 10 wait.
    let out = follow(&bars, 20240103, None, &[4, 5, 10], Board::Main, false);
    assert!(matches!(out[0], Outcome::Done { horizon: 4, .. }));
    assert_eq!(
        out[1..],
        [5, 10].map(|horizon| Outcome::Pending {
            horizon,
            bars_after: 4
        })
    );
    // One bar fewer: horizon 4 turns pending again.
    let out = follow(&bars[..6], 20240103, None, &[4], Board::Main, false);
    assert_eq!(
        out,
        vec![Outcome::Pending {
            horizon: 4,
            bars_after: 3
        }]
    );
}

#[test]
fn position_is_the_boards_lots_of_one_slot_at_least_its_smallest_buy() {
    // 25,000 CNY a slot: (board, price) → shares
    let cases = [
        (Board::Main, 10.5, 2300),
        (Board::Main, 25.0, 1000),
        (Board::Main, 250.0, 100),
        (Board::Main, 251.0, 100),
        (Board::Main, 1500.0, 100),
        (Board::Main, 0.99, 25200),
        (Board::Chinext, 10.5, 2300),
        // STAR and BSE buy any share above their minimum: 25,000 / 10.50 = 2,380.9
        (Board::Star, 10.5, 2380),
        (Board::Star, 125.0, 200),
        (Board::Star, 126.0, 200),
        (Board::Bse, 10.5, 2380),
        (Board::Bse, 300.0, 100),
    ];
    for (board, price, shares) in cases {
        assert_eq!(
            position_shares(board, price),
            shares,
            "{board:?} price {price}"
        );
    }
}

#[test]
fn stamp_duty_halves_from_2023_08_28() {
    // Flat price: the loss is the fees alone, larger before the cut.
    // Bought on the second bar, sold on the third.
    let before = vec![
        bar(20230823, 10.0, 10.0, 10.0, 10.0),
        bar(20230824, 10.0, 10.0, 10.0, 10.0),
        bar(20230825, 10.0, 10.0, 10.0, 10.0),
    ];
    let after = vec![
        bar(20230824, 10.0, 10.0, 10.0, 10.0),
        bar(20230825, 10.0, 10.0, 10.0, 10.0),
        bar(20230828, 10.0, 10.0, 10.0, 10.0),
    ];
    let fees_of = |o: &Outcome| match o {
        Outcome::Done { fees, hit, .. } => {
            assert!(!hit, "fees make a flat trade a miss");
            *fees
        }
        other => panic!("{other:?}"),
    };
    // 2,500 shares × 10 = 25,000 CNY: commission 6.25 each side, transfer 0.25 each side.
    assert_eq!(
        fees_of(&follow(&before, 20230823, None, &[1], Board::Main, false)[0]),
        6.25 * 2.0 + 0.25 * 2.0 + 25.0
    );
    assert_eq!(
        fees_of(&follow(&after, 20230824, None, &[1], Board::Main, false)[0]),
        6.25 * 2.0 + 0.25 * 2.0 + 12.5
    );
}

fn done(h: u32, hit: bool, ret: f64) -> Outcome {
    Outcome::Done {
        horizon: h,
        entry_date: 1,
        entry_price: 1.0,
        exit_date: 1,
        exit_price: 1.0,
        shares: 100,
        fees: 0.0,
        pnl: ret,
        net_return_pct: ret,
        mfe_pct: 0.0,
        mae_pct: 0.0,
        hit,
    }
}

fn signal(
    triggers: &[&str],
    track: &str,
    regime: Option<&str>,
    outcomes: Vec<Outcome>,
) -> TrackedSignal {
    TrackedSignal {
        triggers: triggers.iter().map(|s| s.to_string()).collect(),
        track: track.into(),
        regime: regime.map(str::to_owned),
        outcomes,
    }
}

#[test]
fn hit_rates_per_group_and_horizon() {
    let signals = vec![
        signal(
            &["Spring", "EVR"],
            "Accum",
            Some("RISK_ON"),
            vec![done(1, true, 2.0), done(5, true, 4.0)],
        ),
        signal(
            &["Spring"],
            "Accum",
            Some("UNKNOWN"),
            vec![
                done(1, false, -1.0),
                Outcome::Pending {
                    horizon: 5,
                    bars_after: 2,
                },
            ],
        ),
        signal(
            &["SOS", "SOS"],
            "Trend",
            None,
            vec![done(1, true, 1.0), done(5, false, -3.0)],
        ),
    ];
    let rates = hit_rates(&signals);
    let find = |g: GroupBy, k: &str, h: u32| {
        rates
            .iter()
            .find(|r| r.group == g && r.key == k && r.horizon == h)
            .map(|r| (r.signals, r.hits, r.pending, r.hit_rate_pct))
    };
    let table = [
        (
            GroupBy::All,
            "all",
            1,
            Some((3, 2, 0, Some(2.0 / 3.0 * 100.0))),
        ),
        (GroupBy::All, "all", 5, Some((2, 1, 1, Some(50.0)))),
        (GroupBy::Trigger, "Spring", 1, Some((2, 1, 0, Some(50.0)))),
        (GroupBy::Trigger, "Spring", 5, Some((1, 1, 1, Some(100.0)))),
        // A trigger listed twice counts once.
        (GroupBy::Trigger, "SOS", 1, Some((1, 1, 0, Some(100.0)))),
        (GroupBy::Trigger, "EVR", 5, Some((1, 1, 0, Some(100.0)))),
        (GroupBy::Track, "Accum", 1, Some((2, 1, 0, Some(50.0)))),
        (GroupBy::Track, "Trend", 5, Some((1, 0, 0, Some(0.0)))),
        (GroupBy::Regime, "RISK_ON", 1, Some((1, 1, 0, Some(100.0)))),
        // Unknown regimes are not a group.
        (GroupBy::Regime, "UNKNOWN", 1, None),
    ];
    for (g, k, h, want) in table {
        assert_eq!(find(g, k, h), want, "{g:?} {k} {h}");
    }
    // Only pending at a horizon: counted, with no rate.
    let only_pending = hit_rates(&[signal(
        &["LPS"],
        "Accum",
        None,
        vec![Outcome::Pending {
            horizon: 20,
            bars_after: 3,
        }],
    )]);
    assert!(
        only_pending
            .iter()
            .all(|r| r.signals == 0 && r.pending == 1 && r.hit_rate_pct.is_none())
    );
    let mean = rates
        .iter()
        .find(|r| r.group == GroupBy::All && r.horizon == 1)
        .and_then(|r| r.mean_net_return_pct);
    assert_eq!(mean, Some((2.0 - 1.0 + 1.0) / 3.0));
}

#[test]
fn no_entry_at_a_limit_up_open_as_the_backtest() {
    // Previous close 10.00: limit-up 11.00 on the main board, 10.50 for an ST name, 12.00
    // on ChiNext (20 % from 2020-08-24).
    let bars = |open: f64| {
        vec![
            bar(20240102, 10.0, 10.0, 10.0, 10.0),
            bar(20240103, open, open, open - 0.5, open),
        ]
    };
    let no_entry = |o: &[Outcome]| {
        matches!(
            o,
            [Outcome::NoEntry {
                horizon: 1,
                entry_date: 20240103
            }]
        )
    };
    let cases = [
        (11.0, Board::Main, false, true),
        (10.99, Board::Main, false, false),
        (10.5, Board::Main, true, true),
        (10.49, Board::Main, true, false),
        (11.5, Board::Chinext, false, false),
        (12.0, Board::Chinext, false, true),
    ];
    for (open, board, st, blocked) in cases {
        let out = follow(&bars(open), 20240102, None, &[1], board, st);
        assert_eq!(no_entry(&out), blocked, "{open} {board:?} st={st}: {out:?}");
    }
    // Not a hit, not a miss, not pending.
    let rates = hit_rates(&[signal(
        &["SOS"],
        "Trend",
        None,
        follow(&bars(11.0), 20240102, None, &[1], Board::Main, false),
    )]);
    assert!(
        rates
            .iter()
            .all(|r| r.signals == 0 && r.pending == 0 && r.hit_rate_pct.is_none())
    );
}

/// A main-board stock screened on 2024-01-03: bought at the open of 01-04, a limit-down
/// close on 01-08 (10 % under 01-05's close), suspended on 01-10 (no bar).
fn held_series() -> Vec<Bar> {
    vec![
        bar(20240102, 10.0, 10.1, 9.9, 10.0),
        // screen day
        bar(20240103, 10.0, 10.1, 9.9, 10.0),
        // entry day: its close is no selling day (T+1)
        bar(20240104, 10.2, 11.0, 10.1, 10.4),
        bar(20240105, 10.4, 10.8, 10.3, 10.6),
        // limit-down close: 10.60 × 0.9 = 9.54
        bar(20240108, 10.0, 10.2, 9.54, 9.54),
        bar(20240109, 9.5, 9.6, 8.9, 9.0),
        bar(20240111, 9.1, 9.3, 9.0, 9.2),
        bar(20240112, 9.2, 9.6, 9.1, 9.5),
    ]
}

#[test]
fn a_horizon_sells_at_the_close_of_its_nth_trading_day_after_the_entry_day() {
    let bars = held_series();
    // 25,000 CNY at 10.20 buys 24 lots.
    let shares = 2400.0;
    // (horizon, exit date, exit close, highest high and lowest low of the days it could
    // have been sold: after the entry day up to the exit)
    let table = [
        // T+1: one day on is the next trading day's close, not the entry day's.
        (1, 20240105, 10.6, 10.8, 10.3),
        // Due on 01-08's limit-down close: carried to the next close.
        (2, 20240109, 9.0, 10.8, 8.9),
        (3, 20240109, 9.0, 10.8, 8.9),
        // 01-10 is a suspension: no day held.
        (4, 20240111, 9.2, 10.8, 8.9),
        (5, 20240112, 9.5, 10.8, 8.9),
    ];
    let horizons: Vec<u32> = table.iter().map(|r| r.0).chain([6]).collect();
    let out = follow(
        &bars,
        20240103,
        Some(20240104),
        &horizons,
        Board::Main,
        false,
    );
    for ((h, exit, close, hi, lo), o) in table.iter().zip(&out) {
        let (pnl, pct) = expected(shares, 10.2, *close, *exit);
        let (_, mfe) = expected(shares, 10.2, *hi, *exit);
        let (_, mae) = expected(shares, 10.2, *lo, *exit);
        match o {
            Outcome::Done {
                horizon,
                entry_date,
                entry_price,
                exit_date,
                exit_price,
                shares: got_shares,
                pnl: got_pnl,
                net_return_pct,
                mfe_pct,
                mae_pct,
                ..
            } => {
                assert_eq!(
                    (*horizon, *entry_date, *exit_date),
                    (*h, 20240104, *exit),
                    "h{h}"
                );
                assert_eq!((*entry_price, *exit_price), (10.2, *close), "h{h}");
                assert_eq!(f64::from(*got_shares), shares);
                assert_eq!(*got_pnl, pnl, "h{h}");
                assert!((net_return_pct - pct).abs() < 1e-9, "h{h}");
                assert!((mfe_pct - mfe).abs() < 1e-9, "h{h} mfe");
                assert!((mae_pct - mae).abs() < 1e-9, "h{h} mae");
            }
            other => panic!("h{h}: {other:?}"),
        }
    }
    // Five days held of six: pending.
    assert_eq!(
        out[5],
        Outcome::Pending {
            horizon: 6,
            bars_after: 5
        }
    );
    // Only the entry day cached: nothing held yet, even at one day.
    assert_eq!(
        follow(&bars[..3], 20240103, None, &[1], Board::Main, false),
        [Outcome::Pending {
            horizon: 1,
            bars_after: 0
        }]
    );
    // Due on the limit-down close with nothing after it: pending, not sold there.
    assert_eq!(
        follow(&bars[..5], 20240103, None, &[2], Board::Main, false),
        [Outcome::Pending {
            horizon: 2,
            bars_after: 2
        }]
    );
}

#[test]
fn a_stock_suspended_on_the_next_trading_day_is_not_bought() {
    // The market's next trading day after 01-03 is 01-04; the stock trades again only on
    // 01-05. The backtest skips the pick rather than buying it late.
    let bars = vec![
        bar(20240103, 10.0, 10.1, 9.9, 10.0),
        bar(20240105, 10.0, 10.2, 9.9, 10.1),
        bar(20240108, 10.1, 10.3, 10.0, 10.2),
    ];
    let table = [
        // (next trading day, what the 1-day horizon is)
        (
            Some(20240104),
            Outcome::NoEntry {
                horizon: 1,
                entry_date: 20240104,
            },
        ),
        // The stock's own next bar is the next trading day: bought, sold a day on.
        (Some(20240105), {
            let o = follow(&bars, 20240103, None, &[1], Board::Main, false);
            assert!(
                matches!(
                    o[0],
                    Outcome::Done {
                        entry_date: 20240105,
                        exit_date: 20240108,
                        ..
                    }
                ),
                "{o:?}"
            );
            o[0].clone()
        }),
        // A calendar later than the stock's own bar is wrong about that day.
        (
            Some(20240108),
            follow(&bars, 20240103, None, &[1], Board::Main, false)[0].clone(),
        ),
    ];
    for (next, want) in table {
        assert_eq!(
            follow(&bars, 20240103, next, &[1], Board::Main, false),
            [want],
            "{next:?}"
        );
    }
}
