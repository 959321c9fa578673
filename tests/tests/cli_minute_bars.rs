//! Minute bars through the real `wyckoff` binary against a local server speaking Tencent's
//! `mkline` and Eastmoney's `klt` kline formats (`WYCKOFF_TENCENT_KLINE_URL`,
//! `WYCKOFF_EASTMONEY_URL`): `data sync CODE --period 60m` stores what the source served,
//! `data status` says what is cached and how far back each source reached, a failing source
//! falls back to the next; `backtest --entry 1455` refuses without minute bars, naming the
//! picks, and buys at the 14:55 price once they are cached.
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/http.rs"]
mod http;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use http::{Reply, Request};
use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../src-tauri/crates/market/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// 5-minute bars of every weekday in `from..=to`: flat at 10.00 but the 14:55 bar closing
/// at 9.90 and the 15:00 one back at 10.00 (test data in Eastmoney's line format).
fn five_minute_lines(from: chrono::NaiveDate, to: chrono::NaiveDate) -> Vec<String> {
    use chrono::Datelike;
    let mut ends = Vec::new();
    let mut m = 9 * 60 + 35;
    while m <= 11 * 60 + 30 {
        ends.push(m);
        m += 5;
    }
    let mut m = 13 * 60 + 5;
    while m <= 15 * 60 {
        ends.push(m);
        m += 5;
    }
    let mut out = Vec::new();
    let mut day = from;
    while day <= to {
        if day.weekday().number_from_monday() <= 5 {
            for &e in &ends {
                let (o, c, h, l) = match e {
                    895 => (10.0, 9.9, 10.0, 9.9),
                    900 => (9.9, 10.0, 10.0, 9.9),
                    _ => (10.0, 10.0, 10.0, 10.0),
                };
                out.push(format!(
                    "{} {:02}:{:02},{o:.2},{c:.2},{h:.2},{l:.2},100,100000.00,0.00,0.00,0.00,0.01",
                    day.format("%Y-%m-%d"),
                    e / 60,
                    e % 60
                ));
            }
        }
        day = day.succ_opt().unwrap();
    }
    out
}

/// The vendor-format server; `tencent_fails` makes every Tencent request an HTTP 500.
/// Returns its base URL and the request lines it saw.
fn server(tencent_fails: bool) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (tencent, eastmoney) = (
        fixture("tencent_mkline_m60.json"),
        fixture("eastmoney_klt60.json"),
    );
    let from = chrono::NaiveDate::from_ymd_opt(2019, 12, 30).unwrap();
    let to = chrono::NaiveDate::from_ymd_opt(2020, 6, 19).unwrap();
    let five = five_minute_lines(from, to);
    let base = http::serve(move |req: &Request| {
        let line = &req.line;
        log.lock().unwrap().push(line.clone());
        if line.contains("/appstock/app/kline/mkline") {
            if tencent_fails {
                Reply::new(500, "text/html", "<html>busy</html>")
            } else if line.contains("sh600519%2Cm60") || line.contains("sh600519,m60") {
                Reply::json(&tencent)
            } else {
                Reply::json(json!({"code": 0, "msg": "", "data": {}}))
            }
        } else if line.contains("/api/qt/stock/kline/get") {
            let secid = req.param("secid").unwrap_or("");
            if line.contains("klt=60") && secid == "1.600519" {
                Reply::json(&eastmoney)
            } else if line.contains("klt=5&") {
                let code = secid.split('.').nth(1).unwrap_or("");
                Reply::json(json!({"rc": 0, "data": {"code": code, "klines": five}}))
            } else {
                Reply::json(json!({"rc": 0, "data": null}))
            }
        } else {
            Reply::new(404, "application/json", "{}")
        }
    });
    (base, seen)
}

fn online(home: &Path, base: &str, sources: &str) -> Command {
    let mut cmd = wyckoff_cli(home);
    cmd.env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", sources)
        .env("WYCKOFF_EASTMONEY_URL", base)
        .env("WYCKOFF_TENCENT_KLINE_URL", base);
    cmd
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn ok_json(out: Output) -> Value {
    assert!(out.status.success(), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn series<'a>(status: &'a Value, code: &str, period: &str) -> &'a Value {
    status["minute"]["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["code"] == code && s["period"] == period)
        .unwrap_or_else(|| panic!("no {code} {period} in {status}"))
}

#[test]
fn sync_60m_from_tencent_then_eastmoney_and_fall_back() {
    let (base, seen) = server(false);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    // nothing cached yet, and said so
    let out = run(wyckoff_cli(h), &["data", "status"]);
    assert!(out.status.success(), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("minute bars: none cached"),
        "{}",
        show(&out)
    );

    let synced = ok_json(run(
        online(h, &base, "tencent"),
        &["data", "sync", "600519", "--period", "60m", "--json"],
    ));
    let o = &synced["outcomes"][0];
    assert_eq!(o["status"]["type"], "updated", "{synced}");
    assert_eq!(o["status"]["source"], "tencent");
    assert_eq!(o["status"]["new_bars"], 8);
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("mkline") && l.contains("sh600519")),
        "{:?}",
        seen.lock().unwrap()
    );

    let status = ok_json(run(wyckoff_cli(h), &["data", "status", "--json"]));
    let s = series(&status, "600519", "60m");
    assert_eq!(s["bars"], 8, "{status}");
    assert_eq!(s["first_time"], 202_412_021_030u64);
    assert_eq!(s["last_time"], 202_412_031_500u64);
    assert!(s["bytes"].as_u64().unwrap() <= 8 * 20, "{s}");
    let reach = &status["minute"]["reach"][0];
    assert_eq!(
        (reach["source"].as_str(), reach["period"].as_str()),
        (Some("tencent"), Some("60m"))
    );
    assert_eq!(reach["earliest"], 202_412_021_030u64);

    // Eastmoney serves the same hours (and one broken row, refused by name): nothing new
    let synced = ok_json(run(
        online(h, &base, "eastmoney"),
        &["data", "sync", "600519", "--period", "60m", "--json"],
    ));
    let st = &synced["outcomes"][0]["status"];
    assert_eq!(st["source"], "eastmoney", "{synced}");
    assert_eq!(st["new_bars"], 0);
    assert_eq!(st["fetched"], 8);
    assert!(
        st["rejected"][0]
            .as_str()
            .unwrap()
            .contains("2024-12-03 14:00"),
        "{st}"
    );

    // Tencent failing: the sync falls back to Eastmoney and says what failed first
    let (failing, _) = server(true);
    let out = run(
        online(h, &failing, "tencent,eastmoney"),
        &["data", "sync", "600519", "--period", "60m"],
    );
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("from eastmoney"), "{text}");
    assert!(text.contains("before it tencent: HTTP 500"), "{text}");

    // text status names the series and the reach
    let out = run(wyckoff_cli(h), &["data", "status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("600519   60m  2024-12-02 10:30 .. 2024-12-03 15:00"),
        "{text}"
    );
    assert!(
        text.contains("eastmoney 60m reaches back to 2024-12-02 10:30"),
        "{text}"
    );

    // a bad period and a period without codes are refused before anything is fetched
    let out = run(
        wyckoff_cli(h),
        &["data", "sync", "600519", "--period", "2h"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("60m, 30m, 15m or 5m"));
    let out = run(wyckoff_cli(h), &["data", "sync", "--period", "60m"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

#[test]
fn backtest_at_1455_refuses_without_minute_bars_and_buys_at_1455_with_them() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let period = ["--start", "2020-01-02", "--end", "2020-06-16"];
    let bt = |entry: &str| {
        let mut args = vec!["backtest"];
        args.extend(period);
        args.extend(["--entry", entry, "--json"]);
        run(wyckoff_cli(h), &args)
    };
    let close = ok_json(bt("close"));
    let close_trades = close["trades"].as_array().unwrap().clone();
    assert!(
        !close_trades.is_empty(),
        "the bundled data gives picks: {close}"
    );

    // no minute bars: refused, naming the first pick (the close run's first trade)
    let out = bt("1455");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let first = &close_trades[0];
    let named = format!(
        "{} {}",
        first["code"].as_str().unwrap(),
        first["signal_date"].as_str().unwrap()
    );
    assert!(err.contains(&named), "{named} not in: {err}");
    assert!(err.contains("--period 5m"), "{err}");

    // 5-minute bars of every bundled stock, synced through the binary
    let (base, _) = server(false);
    let status = ok_json(run(wyckoff_cli(h), &["data", "status", "--json"]));
    let codes: Vec<String> = status["stocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["code"].as_str().unwrap().to_owned())
        .collect();
    let mut args = vec!["data", "sync"];
    args.extend(codes.iter().map(String::as_str));
    args.extend(["--period", "5m", "--json"]);
    let synced = ok_json(run(online(h, &base, "eastmoney"), &args));
    assert_eq!(synced["failed"], 0, "{synced}");

    let at = ok_json(bt("1455"));
    assert_eq!(at["args"]["entry_price_mode"], "1455");
    let trades = at["trades"].as_array().unwrap();
    assert!(!trades.is_empty(), "{at}");
    let mut compared = 0;
    for t in trades {
        assert_eq!(
            t["entry_date"], t["signal_date"],
            "bought on the signal day: {t}"
        );
        // the same pick in the close run: its entry is that day's daily close
        if let Some(c) = close_trades
            .iter()
            .find(|c| c["code"] == t["code"] && c["signal_date"] == t["signal_date"])
        {
            let (p, close) = (
                t["entry_price"].as_f64().unwrap(),
                c["entry_price"].as_f64().unwrap(),
            );
            // 14:55 at 9.90 against 15:00 at 10.00: 1 % under the close
            assert!(
                (p - close * 0.99).abs() < 0.006,
                "{p} vs close {close}: {t}"
            );
            compared += 1;
        }
    }
    assert!(compared > 0, "no pick in both runs: {at}");
    let notes = at["notes"].to_string();
    assert!(notes.contains("5m 1455"), "{notes}");

    // the diagnosis reads the weekly structure as context, saying it is the weekly's
    let a = ok_json(run(wyckoff_cli(h), &["analyze", "000001", "--json"]));
    let lines = a["timeframes"]["lines"].as_array().unwrap();
    let weekly = lines.iter().find(|l| l["timeframe"] == "weekly").unwrap();
    assert!(
        weekly["en"].as_str().unwrap().starts_with("weekly: trend "),
        "{a}"
    );
    let w = &a["timeframes"]["weekly"];
    assert!(
        w["range_low"].as_f64().unwrap() <= w["range_high"].as_f64().unwrap(),
        "{w}"
    );
}
