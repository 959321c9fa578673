//! WebDriver test of the stock page's minute periods in the real app. 000001's 60-minute
//! bars are put in the data home by `wyckoff data sync 000001 --period 60m` against a local
//! server speaking Tencent's `mkline` format (`WYCKOFF_TENCENT_KLINE_URL`) — and Eastmoney's
//! `klt` for the app (`WYCKOFF_EASTMONEY_URL`); the page's 60m
//! switch then draws every cached bar with the notes on what is daily-only. 5m has nothing
//! cached: the page offers to sync it, shows the progress, and draws the bars it got. Back
//! on "day" the daily chart returns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};
use wyckoff_e2e::{show, wyckoff_cli};
use wyckoff_market::{MarketConfig, MarketData};

/// Bars of 2020-06-15 and 2020-06-16 in Tencent's row format ending at the period's times,
/// around `close` (test data, not market prices).
fn rows(minutes: u32, close: f64) -> Vec<serde_json::Value> {
    let mut ends = Vec::new();
    let mut m = 9 * 60 + 30 + minutes;
    while m <= 11 * 60 + 30 {
        ends.push(m);
        m += minutes;
    }
    let mut m = 13 * 60 + minutes;
    while m <= 15 * 60 {
        ends.push(m);
        m += minutes;
    }
    let mut out = Vec::new();
    let mut price = close;
    for day in ["20200615", "20200616"] {
        for (i, e) in ends.iter().enumerate() {
            let open = price;
            let next = if i % 2 == 0 { open + 0.03 } else { open - 0.02 };
            out.push(json!([
                format!("{day}{:02}{:02}", e / 60, e % 60),
                format!("{open:.2}"),
                format!("{next:.2}"),
                format!("{:.2}", open.max(next) + 0.02),
                format!("{:.2}", open.min(next) - 0.02),
                "1200.00",
                {},
                "0.01"
            ]));
            price = next;
        }
    }
    out
}

/// Tencent's `mkline` for sz000001 at m60 and m5; anything else has no bars.
async fn tencent(close: f64) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&got).to_string();
            let line = head.lines().next().unwrap_or("").replace("%2C", ",");
            // Eastmoney's klt=5 for 0.000001 (the app's 5m sync); its daily kline has nothing
            if line.contains("/api/qt/stock/kline/get") {
                let body = if line.contains("klt=5&") && line.contains("secid=0.000001") {
                    let klines: Vec<String> = rows(5, close)
                        .iter()
                        .map(|r| {
                            let t = r[0].as_str().unwrap();
                            let f = |i: usize| r[i].as_str().unwrap().to_owned();
                            format!(
                                "{}-{}-{} {}:{},{},{},{},{},1200,{:.2},0,0,0,0.01",
                                &t[..4],
                                &t[4..6],
                                &t[6..8],
                                &t[8..10],
                                &t[10..12],
                                f(1),
                                f(2),
                                f(3),
                                f(4),
                                120_000.0 * f(2).parse::<f64>().unwrap()
                            )
                        })
                        .collect();
                    json!({"rc": 0, "data": {"code": "000001", "klines": klines}})
                } else {
                    json!({"rc": 0, "data": null})
                }
                .to_string();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
                continue;
            }
            let body = match ["m60", "m5,"]
                .iter()
                .find(|k| line.contains(&format!("sz000001,{k}")))
            {
                Some(k) if line.contains("mkline") => {
                    let key = k.trim_end_matches(',');
                    let minutes = key[1..].parse().unwrap();
                    json!({"code": 0, "msg": "", "data": {"sz000001": {key: rows(minutes, close)}}})
                }
                _ => json!({"code": 0, "msg": "", "data": {}}),
            }
            .to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    base
}

async fn bars_drawn(d: &WebDriver) -> usize {
    let chart = wait_for(d, By::Id("minute-chart")).await;
    chart
        .attr("data-bars")
        .await
        .unwrap()
        .unwrap_or_default()
        .parse()
        .unwrap()
}

async fn scenario(d: WebDriver) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Id("drawn-ms")).await;

    // 60m: the eight bars the CLI synced into the home, each drawn
    click(&d, By::Id("period-60m")).await;
    assert_eq!(bars_drawn(&d).await, 8);
    let candles = d.find_all(By::Css("#minute-chart .candle")).await.unwrap();
    assert_eq!(candles.len(), 8);
    assert_eq!(
        candles[0].attr("data-time").await.unwrap().as_deref(),
        Some("202006151030")
    );
    let facts = wait_for(&d, By::Id("minute-facts"))
        .await
        .text()
        .await
        .unwrap();
    assert!(facts.contains("2020-06-16 15:00"), "{facts}");
    assert!(facts.contains("tencent"), "{facts}");
    // the daily chart is gone while a minute period is shown
    assert!(d.find(By::Id("drawn-ms")).await.is_err());
    shot(&d, "minute-60m.png").await;

    // 5m: nothing cached, so the page offers to sync it and shows how it went
    click(&d, By::Id("period-5m")).await;
    wait_for(&d, By::Id("minute-empty")).await;
    click(&d, By::Id("minute-sync")).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(c) = d.find(By::Id("minute-chart")).await
            && c.attr("data-bars").await.unwrap().as_deref() == Some("96")
        {
            break;
        }
        if Instant::now() > deadline {
            let said = d
                .find(By::Id("minute-panel"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            panic!("the 5m sync never drew its bars: {said}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let progress = wait_for(&d, By::Id("minute-progress"))
        .await
        .text()
        .await
        .unwrap();
    assert!(progress.contains("96"), "{progress}");
    assert!(progress.contains("eastmoney"), "{progress}");
    shot(&d, "minute-5m-synced.png").await;

    // back to the daily chart
    click(&d, By::Id("period-day")).await;
    wait_for(&d, By::Id("drawn-ms")).await;
    assert!(d.find(By::Id("minute-panel")).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_60m_chart_renders_from_cached_minute_bars_and_5m_syncs_on_offer() {
    let bundled = tempfile::tempdir().unwrap();
    let close = MarketData::open_with(MarketConfig::offline(bundled.path()))
        .await
        .unwrap()
        .daily_bars("000001", None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .close;
    let base = tencent(close).await;
    let home = tempfile::tempdir().unwrap();
    let mut sync = wyckoff_cli(home.path());
    sync.env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "tencent")
        .env("WYCKOFF_TENCENT_KLINE_URL", &base)
        .args(["data", "sync", "000001", "--period", "60m"]);
    let out = tokio::task::spawn_blocking(move || sync.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        // the app asks Eastmoney (served here) for its daily and 5m bars; the daily Tencent
        // endpoint is not served, and its breaker would be the minute one's too
        &[
            ("WYCKOFF_DATA_SOURCES", "eastmoney"),
            ("WYCKOFF_EASTMONEY_URL", base.as_str()),
            ("WYCKOFF_TENCENT_KLINE_URL", base.as_str()),
        ],
    );
    run_scenario(&driver, "minute-chart", scenario).await;
}
