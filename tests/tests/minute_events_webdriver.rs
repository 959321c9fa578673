//! WebDriver test of the Wyckoff events the engine reads on 60-minute bars, drawn on the real
//! app's 60m chart. The engine's 60-minute fixture (test data shaped on the accumulation
//! rules: a decline, a climactic bar, a rally, tests and a spring) is put in the data home by
//! `wyckoff data sync 000001 --period 60m` against a local server speaking Eastmoney's `klt`
//! format; `wyckoff events 000001 --period 60m --json` says which events the engine read;
//! the stock page's 60m chart then marks each of them — the selling climax and the spring
//! among them — on its own bar at its price, in the minute period's colour.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};
use wyckoff_e2e::{show, wyckoff_cli};

const FIXTURE: &str =
    include_str!("../../src-tauri/crates/engine/tests/data/minute_60m_accumulation.csv");

/// The fixture as Eastmoney's `klt=60` lines (open, close, high, low, volume in lots, amount).
fn klines() -> Vec<String> {
    FIXTURE
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<f64>().unwrap();
            let t = f[0];
            format!(
                "{}-{}-{} {}:{},{:.2},{:.2},{:.2},{:.2},{:.0},{:.2},0,0,0,0.1",
                &t[..4],
                &t[4..6],
                &t[6..8],
                &t[8..10],
                &t[10..12],
                n(1),
                n(4),
                n(2),
                n(3),
                n(5) / 100.0,
                n(5) * n(4)
            )
        })
        .collect()
}

/// Serves the fixture for 000001 at `klt=60`; nothing for anything else.
async fn eastmoney() -> String {
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
            let line = head.lines().next().unwrap_or("").to_owned();
            let body = if line.contains("klt=60&") && line.contains("secid=0.000001") {
                json!({"rc": 0, "data": {"code": "000001", "klines": klines()}})
            } else {
                json!({"rc": 0, "data": null})
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

async fn num_attr(e: &WebElement, name: &str) -> f64 {
    e.attr(name)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

async fn scenario(d: WebDriver, events: Vec<Value>) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Id("drawn-ms")).await;
    click(&d, By::Id("period-60m")).await;
    let chart = wait_for(&d, By::Id("minute-chart")).await;
    let bars = FIXTURE.lines().count() - 1;
    assert_eq!(
        chart.attr("data-bars").await.unwrap().as_deref(),
        Some(bars.to_string().as_str())
    );
    // every event the engine read on these bars is marked, and nothing else of the 60m period
    let drawn = d
        .find_all(By::XPath(
            "//*[@id='minute-chart']//*[contains(@class,'minute-mark') and @data-timeframe='60m']",
        ))
        .await
        .unwrap();
    assert_eq!(drawn.len(), events.len(), "{events:?}");
    for e in &events {
        let time = e["bar_time"].as_u64().unwrap();
        let label = format!("{} 60m", e["event"].as_str().unwrap());
        let mark = d
            .find(By::XPath(format!(
                "//*[@id='minute-chart']//*[contains(@class,'minute-mark') and @data-timeframe='60m' and @data-time='{time}' and @data-label='{label}']"
            )))
            .await
            .unwrap_or_else(|_| panic!("no mark {label} at {time}"));
        // on its own bar: the circle at the candle's centre, within the bar's high and low
        let circle = mark
            .find(By::XPath("./*[local-name()='circle']"))
            .await
            .unwrap();
        let wick = d
            .find(By::XPath(format!(
                "//*[@id='minute-chart']//*[contains(@class,'candle') and @data-time='{time}']/*[local-name()='line']"
            )))
            .await
            .unwrap();
        let (cx, cy) = (num_attr(&circle, "cx").await, num_attr(&circle, "cy").await);
        assert!(
            (cx - num_attr(&wick, "x1").await).abs() < 0.01,
            "{label} at {time}"
        );
        let (y_high, y_low) = (num_attr(&wick, "y1").await, num_attr(&wick, "y2").await);
        assert!(
            cy >= y_high - 0.5 && cy <= y_low + 0.5,
            "{label}: {cy} outside {y_high}..{y_low}"
        );
    }
    for must in ["SC 60m", "Spring 60m"] {
        assert!(
            d.find(By::XPath(format!(
                "//*[@id='minute-chart']//*[contains(@class,'minute-mark') and @data-label='{must}']"
            )))
            .await
            .is_ok(),
            "{must}"
        );
    }
    shot(&d, "minute-60m-events.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_60m_chart_marks_the_events_the_engine_reads_on_the_minute_bars() {
    let base = eastmoney().await;
    let home = tempfile::tempdir().unwrap();
    let mut sync = wyckoff_cli(home.path());
    sync.env_remove("WYCKOFF_OFFLINE")
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", &base)
        .args(["data", "sync", "000001", "--period", "60m"]);
    let out = tokio::task::spawn_blocking(move || sync.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let mut ask = wyckoff_cli(home.path());
    ask.args(["events", "000001", "--period", "60m", "--json"]);
    let out = tokio::task::spawn_blocking(move || ask.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = v["events"].as_array().unwrap().clone();
    assert!(!events.is_empty(), "{v}");
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_DATA_SOURCES", "eastmoney"),
            ("WYCKOFF_EASTMONEY_URL", base.as_str()),
        ],
    );
    run_scenario(&driver, "minute-events", move |d| scenario(d, events)).await;
}
