//! `wyckoff data sync` runs the alerts check once it has new bars, against Eastmoney's
//! kline API served by a local mirror
//! (`WYCKOFF_EASTMONEY_URL`): a rule whose level the bundled close does not reach stays
//! quiet on `alerts check`; the sync brings two new days whose close does, and its report
//! says the alert fired on the new bar and was pushed to the webhook channel.
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/http.rs"]
mod http;

use std::path::Path;
use std::process::{Command, Output};

use http::{Reply, Request};
use serde_json::{Value, json};
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::wyckoff_cli;
use wyckoff_market::{MarketConfig, MarketData};

fn kline(date: &str, close: f64) -> String {
    format!(
        "{date},{o:.2},{close:.2},{h:.2},{l:.2},100000,150000000.0,2.0,0.5,0.1,0.8",
        o = close - 0.1,
        h = close + 0.2,
        l = close - 0.2
    )
}

/// Answers 000001's kline requests with the cached last day and two new ones; anything
/// else with no data.
fn eastmoney(last_close: f64) -> String {
    http::serve(move |req: &Request| {
        Reply::json(
            if req.line.contains("kline") && req.param("secid") == Some("0.000001") {
                let days = vec![
                    kline("2020-06-16", last_close),
                    kline("2020-06-17", last_close + 0.1),
                    kline("2020-06-18", last_close + 0.2),
                ];
                json!({"rc": 0, "data": {"code": "000001", "klines": days}})
            } else {
                json!({"rc": 0, "data": null})
            },
        )
    })
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn ok_json(out: Output) -> Value {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn online(home: &Path, base: &str) -> Command {
    let mut cmd = wyckoff_cli(home);
    cmd.env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", base);
    cmd
}

#[tokio::test]
async fn a_sync_with_new_bars_checks_the_rules_records_and_pushes() {
    let bundled = tempfile::tempdir().unwrap();
    let last_close = MarketData::open_with(MarketConfig::offline(bundled.path()))
        .await
        .unwrap()
        .daily_bars("000001", None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .close;
    let base = eastmoney(last_close);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let webhook = hook(vec![]);
    ok_json(run(
        wyckoff_cli(h),
        &[
            "push",
            "add",
            "desk",
            "--kind",
            "webhook",
            "--url",
            &webhook.url,
            "--allow-private",
            "--json",
        ],
    ));
    // Above the bundled close (2020-06-16), below the mirror's 2020-06-18 close.
    let level = format!("{:.2}", last_close + 0.15);
    ok_json(run(
        wyckoff_cli(h),
        &["alerts", "add", "000001", "--price-above", &level, "--json"],
    ));
    let before = ok_json(run(wyckoff_cli(h), &["alerts", "check", "--json"]));
    assert_eq!(before["fired"], json!([]), "{before}");

    let synced = ok_json(run(online(h, &base), &["data", "sync", "000001", "--json"]));
    assert_eq!(synced["updated"], 1, "{synced}");
    let alerts = &synced["alerts"];
    assert_eq!(alerts["data_date"], "2020-06-18", "{alerts}");
    let fired = alerts["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 1, "{alerts}");
    assert_eq!(fired[0]["code"], "000001");
    assert_eq!(fired[0]["bar_date"], "2020-06-18");
    assert_eq!(fired[0]["delivery"], "delivered", "{alerts}");
    assert_eq!(alerts["deliveries"][0]["status"], "sent", "{alerts}");
    let bodies = webhook.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(bodies[0]["data_date"], "2020-06-18");
    assert_eq!(
        ok_json(run(wyckoff_cli(h), &["alerts", "history", "--json"]))
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The words say so too; the same close again fires nothing new.
    let out = run(online(h, &base), &["data", "sync", "000001"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("checked 1 rule(s) on 1 stock(s)") && text.contains("0 fired"),
        "{text}"
    );
    assert_eq!(webhook.bodies().len(), 1);
}

#[test]
fn a_sync_with_nothing_to_check_runs_no_check() {
    let home = tempfile::tempdir().unwrap();
    let base = eastmoney(10.0);
    let synced = ok_json(run(
        online(home.path(), &base),
        &["data", "sync", "000001", "--json"],
    ));
    assert_eq!(synced["alerts"], Value::Null, "{synced}");
}
