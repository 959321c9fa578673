//! `wyckoff backtest` end to end, offline on a fresh data home over the bundled real bars:
//! every trade checked by hand — T+1, whole lots, fees to the fen, P/L from the prices —
//! and a real limit-down (2020-02-03, the bundled 603220 opened and closed at −10 %)
//! holds a stopped-out position until the next day it can be sold. Bad input exits 2.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::Value;

fn wyckoff(home: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn backtest(home: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["backtest", "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = wyckoff(home, &args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

fn fen(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The fee schedule, written out again independently of the engine.
fn hand_fees(amount: f64, sell: bool, date: &str) -> f64 {
    let commission = fen((amount * 0.000_25).max(5.0));
    let transfer = fen(amount * 0.000_01);
    let stamp = match (sell, date >= "2023-08-28") {
        (false, _) => 0.0,
        (true, false) => fen(amount * 0.001),
        (true, true) => fen(amount * 0.0005),
    };
    commission + transfer + stamp
}

#[test]
fn every_trade_obeys_t_plus_1_lots_and_the_fee_schedule() {
    let home = tempfile::tempdir().unwrap();
    let r = backtest(
        home.path(),
        &[
            "--start",
            "2019-06-01",
            "--end",
            "2020-06-16",
            "--hold-days",
            "5",
            "--top-n",
            "2",
        ],
    );
    assert_eq!(r["period"], "2019-06-03 ~ 2020-06-16");
    let trades = r["trades"].as_array().unwrap();
    assert!(trades.len() >= 5, "{}", trades.len());
    for t in trades {
        let (signal, entry, exit) = (
            t["signal_date"].as_str().unwrap(),
            t["entry_date"].as_str().unwrap(),
            t["exit_date"].as_str().unwrap(),
        );
        // Open entry: bought the trading day after the signal, sold no earlier than T+1.
        assert!(signal < entry && entry < exit, "{t}");
        let shares = t["shares"].as_f64().unwrap();
        assert_eq!(shares % 100.0, 0.0, "{t}");
        let (p_in, p_out) = (
            t["entry_price"].as_f64().unwrap(),
            t["exit_price"].as_f64().unwrap(),
        );
        let fees = hand_fees(p_in * shares, false, entry) + hand_fees(p_out * shares, true, exit);
        assert!(
            (t["fees"].as_f64().unwrap() - fen(fees)).abs() < 0.005,
            "{t}: fees {fees}"
        );
        let pnl = fen((p_out - p_in) * shares - fees);
        assert!(
            (t["pnl"].as_f64().unwrap() - pnl).abs() < 0.015,
            "{t}: pnl {pnl}"
        );
    }
    // The equity curve ends where the metrics say, and the cash adds up.
    let curve = r["equity_curve"].as_array().unwrap();
    assert_eq!(curve.len() as u64, r["trading_days"].as_u64().unwrap());
    let last = curve.last().unwrap();
    assert_eq!(last["equity"], r["metrics"]["final_equity"]);
    let realised: f64 = trades.iter().map(|t| t["pnl"].as_f64().unwrap()).sum();
    assert!((last["equity"].as_f64().unwrap() - (100_000.0 + realised)).abs() < 0.05);
    // No index bars offline: no benchmark figure, and it says why.
    assert!(r["benchmark"]["return_pct"].is_null());
    assert!(r["benchmark"]["note"].as_str().unwrap().contains("沪深300"));
    // Same cache, same arguments, same result.
    assert_eq!(
        backtest(
            home.path(),
            &[
                "--start",
                "2019-06-01",
                "--end",
                "2020-06-16",
                "--hold-days",
                "5",
                "--top-n",
                "2"
            ],
        ),
        r
    );
}

#[test]
fn a_limit_down_holds_the_stopped_position_until_it_can_be_sold() {
    let home = tempfile::tempdir().unwrap();
    let r = backtest(
        home.path(),
        &[
            "--start",
            "2019-12-01",
            "--end",
            "2020-03-31",
            "--hold-days",
            "20",
            "--stop-loss",
            "-15",
        ],
    );
    let t = r["trades"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["code"] == "603220" && t["entry_date"] == "2020-01-07")
        .expect("the 603220 trade of January 2020");
    // 2020-02-03: one price at 18.43, −10 % from 20.48 — the stop (−15 % from 22.71) is
    // hit, but nobody buys at the limit; sold at the next close, 17.04.
    assert_eq!(t["exit_reason"], "stop_loss");
    assert_eq!(t["limit_down_days"], 1);
    assert_eq!(t["exit_date"], "2020-02-04");
    assert_eq!(t["exit_price"], 17.04);
}

#[test]
fn bad_input_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["backtest", "--start", "2020-03-01", "--end", "2020-01-01"],
            "晚于",
        ),
        (&["backtest", "--board", "nasdaq"], "board"),
        (&["backtest", "--entry", "midday"], "entry_price_mode"),
        (
            &["backtest", "--start", "2030-01-01", "--end", "2030-02-01"],
            "没有任何交易日",
        ),
    ];
    for (args, word) in cases {
        let (code, out, err) = wyckoff(home.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(word), "{args:?}: {err}");
    }
}
