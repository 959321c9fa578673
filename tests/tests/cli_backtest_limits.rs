//! `wyckoff backtest --sizing risk` under the account limits in the user's Settings, end to
//! end through the real binary over the bundled bars (offline, a fresh data home): the
//! result says the limits came from Settings and which; changing a limit in
//! `settings.json` changes the run; the stop-out brake holds buys back after losing sales
//! within its window (checked against the run's own trades); the risk per trade defaults
//! to the Settings'; sweeps and walk-forwards size by risk under the same limits and report
//! the picks each combination's limits held back. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use wyckoff_e2e::CliHome;

const PERIOD: [&str; 6] = [
    "--start",
    "2019-06-01",
    "--end",
    "2020-06-16",
    "--hold-days",
    "5",
];

fn backtest(h: &CliHome, extra: &[&str]) -> Value {
    let mut args = vec!["backtest", "--json"];
    args.extend_from_slice(&PERIOD);
    args.extend_from_slice(extra);
    h.json(&args)
}

/// Writes the risk section of the home's settings (the rest left at its defaults).
fn set_risk(h: &CliHome, risk: Value) {
    let path = h.path().join("settings.json");
    let mut s: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    s["risk"] = risk;
    std::fs::write(&path, s.to_string()).unwrap();
}

/// Days since 1970-01-01 of a `YYYY-MM-DD`.
fn day(iso: &str) -> i64 {
    let d = chrono::NaiveDate::parse_from_str(iso, "%Y-%m-%d").unwrap();
    d.signed_duration_since(chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap())
        .num_days()
}

fn skipped(r: &Value, why: &str) -> u64 {
    r["skipped_entries"][why].as_u64().unwrap_or(0)
}

const RISK: [&str; 6] = ["--sizing", "risk", "--risk-pct", "2", "--top-n", "5"];

#[test]
fn the_backtest_runs_under_the_limits_in_settings() {
    let h = CliHome::new();
    // Settings' defaults are the limits until the user changes them.
    let r = backtest(&h, &RISK);
    let sizing = &r["args"]["sizing"];
    assert_eq!(sizing["limits_from"], "settings", "{sizing}");
    assert_eq!(
        sizing["limits"],
        json!({"max_heat_bp": 600, "max_industry_bp": 3000, "max_positions": 8,
               "drawdown_brake_bp": 1500, "max_stop_outs": 3, "stop_out_days": 10})
    );
    assert_eq!(sizing["risk_bp"], 200);

    // Two positions at most, the rest off: the positions limit holds picks back, and the
    // run is a different run.
    set_risk(
        &h,
        json!({"max_positions": 2, "max_heat_pct": 0, "drawdown_brake_pct": 0, "max_stop_outs": 0}),
    );
    let two = backtest(&h, &RISK);
    assert_eq!(two["args"]["sizing"]["limits"]["max_positions"], 2);
    assert_eq!(two["args"]["sizing"]["limits"]["max_heat_bp"], 0);
    assert!(
        skipped(&two, "positions_limit") > 0,
        "{}",
        two["skipped_entries"]
    );
    assert_ne!(two["trades"], r["trades"]);
    let trades = two["trades"].as_array().unwrap();
    for t in trades {
        let (a, b) = (
            t["entry_date"].as_str().unwrap(),
            t["exit_date"].as_str().unwrap(),
        );
        // Never three open at once: at each entry fewer than two others were held.
        let open = trades
            .iter()
            .filter(|o| {
                let (oa, ob) = (
                    o["entry_date"].as_str().unwrap(),
                    o["exit_date"].as_str().unwrap(),
                );
                oa <= a && a < ob && o != &t
            })
            .count();
        assert!(
            open < 2,
            "{open} already open when {t} was bought ({a}–{b})"
        );
    }
    // The text says where the limits came from and what they held back.
    let mut args = vec!["backtest"];
    args.extend_from_slice(&PERIOD);
    args.extend_from_slice(&RISK);
    let text = h.text(&args);
    assert!(
        text.contains("limits (from Settings): heat 0%, positions 2"),
        "{text}"
    );
    assert!(text.contains("held back: positions_limit"), "{text}");
    assert!(text.contains("账户限制（取自设置）"), "{text}");
}

#[test]
fn the_stop_out_brake_holds_buys_after_losing_sales_in_its_window() {
    let h = CliHome::new();
    let off =
        json!({"max_heat_pct": 0, "max_positions": 0, "drawdown_brake_pct": 0, "max_stop_outs": 0});
    set_risk(&h, off.clone());
    let free = backtest(&h, &RISK);
    let losses = |r: &Value| -> Vec<i64> {
        r["trades"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["pnl"].as_f64().unwrap() < 0.0)
            .map(|t| day(t["exit_date"].as_str().unwrap()))
            .collect()
    };
    assert!(losses(&free).len() >= 2, "the period has losing sales");
    assert_eq!(skipped(&free, "stop_out_brake"), 0);

    let mut brake = off;
    brake["max_stop_outs"] = json!(1);
    brake["stop_out_days"] = json!(30);
    set_risk(&h, brake);
    let braked = backtest(&h, &RISK);
    assert_eq!(braked["args"]["sizing"]["limits"]["max_stop_outs"], 1);
    assert!(
        skipped(&braked, "stop_out_brake") > 0,
        "{}",
        braked["skipped_entries"]
    );
    assert!(braked["trades"].as_array().unwrap().len() < free["trades"].as_array().unwrap().len());
    // No entry within 30 days of a losing sale before it (entries are at the open, before
    // that day's sales).
    let sales = losses(&braked);
    for t in braked["trades"].as_array().unwrap() {
        let entry = day(t["entry_date"].as_str().unwrap());
        let recent: Vec<&i64> = sales
            .iter()
            .filter(|&&s| s < entry && entry - s < 30)
            .collect();
        assert!(recent.is_empty(), "{t} bought {recent:?} days after a loss");
    }
}

#[test]
fn the_risk_per_trade_defaults_to_the_settings() {
    let h = CliHome::new();
    set_risk(&h, json!({"risk_per_trade_pct": 0.5}));
    let r = backtest(&h, &["--sizing", "risk", "--top-n", "1"]);
    assert_eq!(r["args"]["sizing"]["risk_bp"], 50);
    for t in r["trades"].as_array().unwrap() {
        let at = &t["entry_risk"];
        assert!(
            at["risk"].as_f64().unwrap() <= at["equity"].as_f64().unwrap() * 0.005 + 0.01,
            "{t}"
        );
    }
    // Given on the command line, it wins.
    let r = backtest(
        &h,
        &["--sizing", "risk", "--risk-pct", "1.5", "--top-n", "1"],
    );
    assert_eq!(r["args"]["sizing"]["risk_bp"], 150);
    // Equal slots apply no limits and record none.
    let equal = backtest(&h, &["--top-n", "1"]);
    assert!(equal["args"].get("sizing").is_none());
}

#[test]
fn sweeps_and_walk_forwards_size_by_risk_under_the_settings() {
    let h = CliHome::new();
    set_risk(
        &h,
        json!({"max_positions": 2, "max_heat_pct": 0, "drawdown_brake_pct": 0, "max_stop_outs": 0}),
    );
    let sweep = backtest(
        &h,
        &["--sizing", "risk", "--risk-pct", "1", "--top-n", "1,5"],
    );
    assert_eq!(sweep["kind"], "sweep");
    assert_eq!(sweep["grid"]["sizing"]["limits_from"], "settings");
    assert_eq!(sweep["grid"]["sizing"]["limits"]["max_positions"], 2);
    let rows = sweep["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // Top 1 never meets the 2-position limit; top 5 does.
    assert!(
        rows[0]
            .get("skipped_entries")
            .is_none_or(|s| s.get("positions_limit").is_none())
    );
    assert!(
        rows[1]["skipped_entries"]["positions_limit"]
            .as_u64()
            .unwrap()
            > 0,
        "{}",
        rows[1]
    );
    // The best run is the single backtest of its combination, risk-sized.
    let best = sweep["best_run"]["args"]["sizing"].clone();
    assert_eq!(best["type"], "risk");
    let notes: Vec<&str> = sweep["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("按风险定仓（每个组合）")),
        "{notes:?}"
    );

    // The same grid with equal slots is another sweep.
    let equal = backtest(&h, &["--top-n", "1,5"]);
    assert!(equal["grid"].get("sizing").is_none());
    assert_ne!(equal["rows"][1]["metrics"], rows[1]["metrics"]);

    let mut args = vec![
        "backtest",
        "--json",
        "--start",
        "2019-06-01",
        "--end",
        "2020-06-16",
    ];
    args.extend_from_slice(&["--hold-days", "3,5", "--top-n", "5", "--sizing", "risk"]);
    args.extend_from_slice(&["--walk-forward", "120,60"]);
    let wf = h.json(&args);
    assert_eq!(wf["kind"], "walk_forward");
    assert_eq!(wf["grid"]["sizing"]["limits"]["max_positions"], 2);
    let held: u64 = wf["windows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["out_of_sample_skipped"]["positions_limit"].as_u64())
        .sum();
    assert!(
        held > 0,
        "five slots under a two-position limit: {}",
        wf["windows"]
    );

    // Without a stop-loss a combination cannot be sized by risk: refused, naming it.
    let out = h.run(&[
        "backtest",
        "--sizing",
        "risk",
        "--stop-loss",
        "0,8",
        "--start",
        "2020-01-01",
        "--end",
        "2020-06-16",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", wyckoff_e2e::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("stop_loss_pct 不能为 0"),
        "{}",
        wyckoff_e2e::show(&out)
    );
}
