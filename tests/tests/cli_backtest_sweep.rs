//! `wyckoff backtest` sweeps end to end, offline on a fresh data home over the bundled real
//! bars: every combination of a sweep is the single backtest with its parameters (each
//! row's metrics, and the best combination's whole run), the text table, the combination
//! cap exactly on its limit, and bad lists or ranges exit 2 saying what is wrong.
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

fn backtest_json(home: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["backtest", "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = wyckoff(home, &args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

const PERIOD: [&str; 4] = ["--start", "2019-06-01", "--end", "2020-06-16"];

#[test]
fn every_combination_of_a_sweep_is_the_single_backtest_with_its_parameters() {
    let home = tempfile::tempdir().unwrap();
    let mut sweep_args = PERIOD.to_vec();
    sweep_args.extend(["--top-n", "2", "--hold-days", "5,10", "--stop-loss", "8,15"]);
    let sweep = backtest_json(home.path(), &sweep_args);
    assert_eq!(sweep["kind"], "sweep");
    assert_eq!(sweep["combinations"], 4);
    assert_eq!(sweep["period"], "2019-06-03 ~ 2020-06-16");
    assert_eq!(
        sweep["swept"],
        serde_json::json!(["hold_days", "stop_loss_pct"])
    );
    let rows = sweep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        let (hold, stop) = (
            row["hold_days"].to_string(),
            row["stop_loss_pct"].as_f64().unwrap().to_string(),
        );
        let mut single_args = PERIOD.to_vec();
        single_args.extend(["--top-n", "2", "--hold-days", &hold, "--stop-loss", &stop]);
        let single = backtest_json(home.path(), &single_args);
        assert_eq!(row["metrics"], single["metrics"], "hold {hold} stop {stop}");
        assert_eq!(row["signal_days"], single["signal_days"], "{hold} {stop}");
        assert_eq!(row["regime_gated_days"], single["regime_gated_days"]);
        assert!(
            single["metrics"]["trades"].as_u64().unwrap() > 0,
            "the cell trades: {single}"
        );
    }
    // The stops give different runs: the sweep is not one run four times.
    assert_ne!(rows[0]["metrics"], rows[1]["metrics"]);
    // The best combination's whole run is exactly its single backtest, trades and curve.
    let best = &rows[sweep["best"].as_u64().unwrap() as usize];
    let mut best_args = PERIOD.to_vec();
    let (hold, stop) = (
        best["hold_days"].to_string(),
        best["stop_loss_pct"].to_string(),
    );
    best_args.extend(["--top-n", "2", "--hold-days", &hold, "--stop-loss", &stop]);
    assert_eq!(sweep["best_run"], backtest_json(home.path(), &best_args));
    // Its Sharpe is the highest of the table (the default --best-by).
    let top = rows
        .iter()
        .filter_map(|r| r["metrics"]["sharpe"].as_f64())
        .fold(f64::MIN, f64::max);
    assert_eq!(best["metrics"]["sharpe"].as_f64(), Some(top));
    // Four cells with two swept axes: the best has two neighbours.
    assert_eq!(
        sweep["stability"]["neighbours"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn a_sweep_prints_a_table_with_the_best_and_its_stability() {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["backtest"];
    args.extend(PERIOD);
    args.extend([
        "--hold-days",
        "5..15:5",
        "--entry",
        "open,close",
        "--best-by",
        "return",
    ]);
    let (code, out, err) = wyckoff(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("6 combinations (hold_days × entry_price_mode)"),
        "{out}"
    );
    assert!(out.contains("fixed: stop% -8"), "{out}");
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with('#'))
        .unwrap();
    for column in ["hold", "entry", "return%", "Sharpe", "PF", "turnover"] {
        assert!(header.contains(column), "{header}");
    }
    // One row per combination, the best marked.
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('#'))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 6, "{out}");
    assert_eq!(rows.iter().filter(|l| l.contains('*')).count(), 1, "{out}");
    assert!(out.contains("best #") && out.contains("by return"), "{out}");
    assert!(out.contains("stability "), "{out}");
}

#[test]
fn the_combination_cap_is_a_thousand_exactly() {
    let home = tempfile::tempdir().unwrap();
    let short = ["--start", "2020-05-06", "--end", "2020-06-16"];
    let mut at_cap = short.to_vec();
    at_cap.extend([
        "--hold-days",
        "1..10:1",
        "--top-n",
        "1..10:1",
        "--take-profit",
        "0..9:1",
    ]);
    let r = backtest_json(home.path(), &at_cap);
    assert_eq!(r["combinations"], 1000);
    assert_eq!(r["rows"].as_array().unwrap().len(), 1000);
    let mut over = short.to_vec();
    over.extend([
        "--hold-days",
        "1..10:1",
        "--top-n",
        "1..10:1",
        "--take-profit",
        "0..10:1",
    ]);
    over.insert(0, "backtest");
    let (code, out, err) = wyckoff(home.path(), &over);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(err.contains("1100") && err.contains("上限 1000"), "{err}");
}

#[test]
fn bad_lists_and_ranges_are_specific_errors() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["--hold-days", "10..5:1"], "起点 10 大于终点 5"),
        (&["--stop-loss", "5..10:0"], "步长必须大于 0"),
        (&["--stop-loss", "-8..-4"], "FROM..TO:STEP"),
        (&["--top-n", "two"], "top_n (--top-n) 的值 'two' 不是数字"),
        (&["--hold-days", "5.5,10"], "不是整数"),
        (&["--hold-days", "50,70"], "70 超出范围"),
        (&["--hold-days", "5,,10"], "有空值"),
        (&["--triggers", "spring+wedge"], "wedge"),
        (&["--best-by", "luck"], "best_by"),
    ];
    for (extra, word) in cases {
        let mut args = vec!["backtest"];
        args.extend_from_slice(extra);
        let (code, out, err) = wyckoff(home.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {out}{err}");
        assert!(err.contains(word), "{args:?}: {err}");
    }
}
