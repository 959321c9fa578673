//! `wyckoff backtest --walk-forward` end to end, offline on a fresh data home over the
//! bundled real bars: each window's choice is the in-sample sweep's best over its in-sample
//! days, its out-of-sample result is the single backtest of that choice over its
//! out-of-sample days, the chained curve compounds them, the text table and verdict, and bad
//! windows exit 2 saying what is wrong. Needs `cargo build -p wyckoff-cli` first.

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
    assert_eq!(code, Some(0), "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// 353 trading days of the bundled data: 120 in sample / 40 out → six windows, the last
/// one 33 days.
const ARGS: [&str; 12] = [
    "--start",
    "2019-01-01",
    "--end",
    "2020-06-16",
    "--top-n",
    "2",
    "--hold-days",
    "5,10",
    "--stop-loss",
    "8,15",
    "--best-by",
    "return",
];

fn number(v: &Value) -> String {
    v.as_f64().unwrap().to_string()
}

#[test]
fn each_window_runs_its_in_sample_best_out_of_sample() {
    let home = tempfile::tempdir().unwrap();
    let mut args = ARGS.to_vec();
    args.extend(["--walk-forward", "120,40"]);
    let r = backtest_json(home.path(), &args);
    assert_eq!(r["kind"], "walk_forward");
    assert_eq!(r["period"], "2019-01-02 ~ 2020-06-16");
    assert_eq!(r["trading_days"], 353);
    assert_eq!(
        r["spec"],
        serde_json::json!({"in_sample": 120, "out_of_sample": 40, "step": 40})
    );
    let windows = r["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 6);
    assert_eq!(windows[0]["in_sample_start"], "2019-01-02");
    assert_eq!(windows[5]["out_of_sample_end"], "2020-06-16");
    assert_eq!(windows[5]["out_of_sample_days"], 33);
    assert_eq!(windows[5]["partial"], true);
    let mut chained = 100_000.0;
    for w in windows {
        let s = |k: &str| w[k].as_str().unwrap().to_owned();
        // The choice: the sweep's best by return over the in-sample days.
        let sweep = backtest_json(
            home.path(),
            &[
                "--start",
                &s("in_sample_start"),
                "--end",
                &s("in_sample_end"),
                "--top-n",
                "2",
                "--hold-days",
                "5,10",
                "--stop-loss",
                "8,15",
                "--best-by",
                "return",
            ],
        );
        let best = &sweep["rows"][sweep["best"].as_u64().unwrap() as usize];
        let chosen = &w["chosen"];
        assert_eq!(
            chosen["hold_days"], best["hold_days"],
            "window {}",
            w["index"]
        );
        assert_eq!(chosen["stop_loss_pct"], best["stop_loss_pct"]);
        assert_eq!(
            w["in_sample"]["total_return_pct"],
            best["metrics"]["total_return_pct"]
        );
        // Its out-of-sample result: the single backtest of the choice.
        let single = backtest_json(
            home.path(),
            &[
                "--start",
                &s("out_of_sample_start"),
                "--end",
                &s("out_of_sample_end"),
                "--top-n",
                "2",
                "--hold-days",
                &chosen["hold_days"].to_string(),
                "--stop-loss",
                &number(&chosen["stop_loss_pct"]),
            ],
        );
        assert_eq!(
            w["out_of_sample"], single["metrics"],
            "window {}",
            w["index"]
        );
        chained *= 1.0 + single["metrics"]["total_return_pct"].as_f64().unwrap() / 100.0;
    }
    // The chained out-of-sample curve compounds the windows (to the fen, rounded output).
    let curve = r["out_of_sample_curve"].as_array().unwrap();
    assert_eq!(curve.len(), 5 * 40 + 33);
    let last = curve.last().unwrap()["equity"].as_f64().unwrap();
    assert!((last - chained).abs() < 1.0, "{last} vs {chained}");
    assert_eq!(r["in_sample_curve"].as_array().unwrap().len(), 6 * 120);
    let v = &r["verdict"];
    assert_eq!(v["windows_run"], 6);
    let positive = windows
        .iter()
        .filter(|w| w["out_of_sample"]["total_return_pct"].as_f64().unwrap() > 0.0)
        .count();
    assert_eq!(v["positive_windows"], positive);
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains(&format!("{positive}/6 个测试窗口为正")),
        "{v}"
    );
}

#[test]
fn a_walk_forward_prints_a_table_of_windows_and_the_verdict() {
    let home = tempfile::tempdir().unwrap();
    let mut args = vec!["backtest"];
    args.extend(ARGS);
    args.extend(["--walk-forward", "120,40,80"]);
    let (code, out, err) = wyckoff(home.path(), &args);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("walk-forward in-sample 120 / out-of-sample 40 / step 80"),
        "{out}"
    );
    let header = out
        .lines()
        .find(|l| l.trim_start().starts_with('#'))
        .unwrap();
    for column in ["in sample", "out of sample", "hold", "stop%", "OOS return%"] {
        assert!(header.contains(column), "{header}");
    }
    // A step of 80 over 353 days: windows at 0, 80, 160 (its test ends at day 320).
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.trim_start().starts_with('#'))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(rows[0].contains("2019-01-02~"), "{out}");
    assert!(out.contains("out of sample chained: return "), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("verdict: ") && l.contains("个测试窗口为正")),
        "{out}"
    );
}

#[test]
fn bad_walk_forward_values_exit_2_saying_what_is_wrong() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 6] = [
        ("120", "IS,OOS[,STEP]"),
        ("120,40,60,1", "IS,OOS[,STEP]"),
        ("a,b", "IS,OOS[,STEP]"),
        ("0,40", "样本内长度"),
        ("120,40,20", "步长 20 小于样本外长度 40"),
        // 353 trading days: 300 + 54 is one too many.
        ("300,54", "区间只有 353 个交易日"),
    ];
    for (spec, word) in cases {
        let mut args = vec!["backtest"];
        args.extend(["--start", "2019-01-01", "--end", "2020-06-16"]);
        args.extend(["--walk-forward", spec]);
        let (code, out, err) = wyckoff(home.path(), &args);
        assert_eq!(code, Some(2), "{spec}: {out}{err}");
        assert!(err.contains(word), "{spec}: {err}");
    }
    // Exactly on the limit: 300 + 53 = 353 days is one window.
    let r = backtest_json(
        home.path(),
        &[
            "--start",
            "2019-01-01",
            "--end",
            "2020-06-16",
            "--walk-forward",
            "300,53",
        ],
    );
    assert_eq!(r["windows"].as_array().unwrap().len(), 1);
    assert_eq!(r["windows"][0]["partial"], false);
}
