//! WebDriver test of the stock page's sync button in the real app, with Eastmoney's kline
//! API served by a local server (`WYCKOFF_EASTMONEY_URL`): 000001 opens on its bundled bars;
//! with two new days published, "sync" says what it is doing and the page reloads with
//! them — the newest date moves, nothing is invented.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_attr, wait_for};
use wyckoff_market::{MarketConfig, MarketData};

fn kline(date: &str, close: f64) -> String {
    format!(
        "{date},{o:.2},{close:.2},{h:.2},{l:.2},100000,150000000.0,2.0,0.5,0.1,0.8",
        o = close - 0.1,
        h = close + 0.2,
        l = close - 0.2
    )
}

/// The mirror's state: how many kline requests for 000001 it answered, and whether the
/// two new days are out yet.
#[derive(Default)]
struct Mirror {
    asked: AtomicUsize,
    published: AtomicBool,
}

/// Answers 000001's kline requests with the cached last day, plus two new days once they
/// are published; anything else (other codes, the stock list) with no data.
async fn eastmoney(last_close: f64) -> (String, Arc<Mirror>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mirror = Arc::new(Mirror::default());
    let state = mirror.clone();
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
            let body = if head.contains("kline") && head.contains("secid=0.000001") {
                let mut days = vec![kline("2020-06-16", last_close)];
                state.asked.fetch_add(1, Ordering::SeqCst);
                if state.published.load(Ordering::SeqCst) {
                    days.push(kline("2020-06-17", last_close + 0.1));
                    days.push(kline("2020-06-18", last_close + 0.2));
                }
                serde_json::json!({"rc": 0, "data": {"code": "000001", "klines": days}})
            } else {
                serde_json::json!({"rc": 0, "data": null})
            }
            .to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    (base, mirror)
}

async fn sync_scenario(d: WebDriver, mirror: Arc<Mirror>) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Id("drawn-ms")).await;
    // The bundled bars end on 2020-06-16 (the mirror has nothing newer yet).
    assert_eq!(
        wait_for(&d, By::Id("as-of")).await.text().await.unwrap(),
        "2020-06-16"
    );

    mirror.published.store(true, Ordering::SeqCst);
    click(&d, By::Id("stock-sync")).await;
    let note = wait_attr(&d, By::Id("stock-sync-note"), "data-ok", "true").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = note.text().await.unwrap_or_default();
        if text.contains("新增 2 根K线") {
            assert!(text.contains("2020-06-18"), "{text}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sync never finished: {text}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // The page reloaded with the new bars.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while wait_for(&d, By::Id("as-of")).await.text().await.unwrap() != "2020-06-18" {
        assert!(std::time::Instant::now() < deadline, "as-of never moved");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        mirror.asked.load(Ordering::SeqCst) >= 1,
        "the sync asked the mirror"
    );
    shot(&d, "stock-synced.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_stock_pages_sync_button_fetches_new_bars_with_progress() {
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
    let (base, mirror) = eastmoney(last_close).await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_DATA_SOURCES", "eastmoney"),
            ("WYCKOFF_EASTMONEY_URL", base.as_str()),
        ],
    );
    run_scenario(&driver, "stock-sync", move |d| sync_scenario(d, mirror)).await;
}
