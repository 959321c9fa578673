//! WebDriver test of the market workspace in the real app with no model configured: search
//! 平安 → open 000001 → the chart is drawn with the engine's events (the page's accessible
//! list compared with what `stock_chart` computes over the same bundled bars), a screenshot,
//! the week view lists the same events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use thirtyfour::prelude::*;
use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};
use wyckoff_market::{MarketConfig, MarketData};

/// (label, date) of every event the command returns for 000001 on the daily chart.
async fn expected_events() -> Vec<(String, String)> {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let chart = build_chart(&md, "000001", Period::Day).await.unwrap();
    chart
        .reading
        .events
        .iter()
        .map(|e| (e.label.clone(), e.date.to_string()))
        .collect()
}

async fn market_scenario(d: WebDriver, want: Vec<(String, String)>) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("平安").await.unwrap();
    let clicked = Instant::now();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;

    // The canvas is drawn (lightweight-charts puts its canvases in the container).
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let list = wait_for(&d, By::Id("event-list")).await;
    let drawn = wait_for(&d, By::Id("drawn-ms")).await;
    let page_ms = drawn.attr("data-ms").await.unwrap().unwrap_or_default();
    let wall_ms = clicked.elapsed().as_millis();
    let mut got = Vec::new();
    for li in list.find_all(By::Css("li.event")).await.unwrap() {
        got.push((
            li.attr("data-label").await.unwrap().unwrap_or_default(),
            li.attr("data-date").await.unwrap().unwrap_or_default(),
        ));
    }
    assert!(!want.is_empty());
    assert_eq!(got, want, "the page lists exactly the engine's events");
    let title = wait_for(&d, By::Id("stock-title"))
        .await
        .text()
        .await
        .unwrap();
    assert!(title.contains("平安银行"), "{title}");
    // bundled data ends in 2020: said to be stale
    let fresh = wait_for(&d, By::Id("freshness")).await;
    assert_ne!(
        fresh.attr("data-status").await.unwrap().as_deref(),
        Some("ok")
    );
    shot(&d, "40-stock-page.png").await;
    // a figure for the note, not an assertion: click to drawn, as seen by the page and here
    let _ = std::fs::write(
        wyckoff_e2e::webdriver::screenshot_dir().join("stock-page-timing.txt"),
        format!("page click→drawn {page_ms} ms; webdriver click→list {wall_ms} ms\n"),
    );

    // Week view: a new reading from the command, the same events listed.
    click(&d, By::Id("period-week")).await;
    wait_for(&d, By::Css("#period-week[aria-pressed='true']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let weekly = wait_for(&d, By::Id("event-list"))
        .await
        .find_all(By::Css("li.event"))
        .await
        .unwrap()
        .len();
    assert_eq!(weekly, want.len());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn stock_page_lists_the_engines_events_over_the_drawn_chart() {
    let want = expected_events().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "market", move |d| market_scenario(d, want)).await;
}
