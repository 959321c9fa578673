//! WebDriver test of the session in the real app: started with `WYCKOFF_NOW` at
//! 2020-06-17 10:42 Beijing (a trading morning, the day after the bundled bars end) and
//! Tencent's quote API served locally with the recorded snapshot of that minute
//! (support/tencent_quotes.rs: 000001 at 13.05, previous close 12.89), the stock page
//! draws today's partial candle marked partial with the quote's time and last price, and
//! the diagnosis card's live line gives the quote's price, change and time beside the
//! close the reading is of. The app's own tick checks the alert rules on the quote: the
//! alert centre lists what fired marked 盘中 with the quote's time. The override is
//! warned about in the log, and nothing partial reaches the daily cache.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/tencent_quotes.rs"]
mod tencent_quotes;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};
use wyckoff_e2e::{show, wyckoff_cli};
use wyckoff_market::{MarketConfig, MarketData};

/// Waits until the element's text satisfies `want`, and returns it.
async fn wait_text(d: &WebDriver, by: By, want: impl Fn(&str) -> bool, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut last = String::new();
    loop {
        if let Ok(el) = d.find(by.clone()).await {
            last = el.text().await.unwrap_or_default();
            if want(&last) {
                return last;
            }
        }
        assert!(
            Instant::now() < deadline,
            "never saw {what}; last: {last:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn scenario(d: WebDriver) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Id("drawn-ms")).await;

    // today's candle, marked partial, at the quote's time and last price
    let label = wait_text(
        &d,
        By::Id("live-candle"),
        |t| !t.is_empty(),
        "the partial candle",
    )
    .await;
    assert_eq!(label, "partial · 10:42");
    let candle = d.find(By::Id("live-candle")).await.unwrap();
    assert_eq!(
        candle.attr("data-time").await.unwrap().as_deref(),
        Some("2020-06-17")
    );
    assert_eq!(
        candle.attr("data-close").await.unwrap().as_deref(),
        Some("13.05")
    );

    // the diagnosis' live line: the quote's price and change as of its time, and that
    // the reading is of the close of 06-16
    let line = wait_text(&d, By::Id("live-line"), |t| !t.is_empty(), "the live line").await;
    assert_eq!(
        line,
        "盘中 13.05 +1.24%，截至 10:42（未收盘，partial）— 诊断基于 2020-06-16 收盘"
    );
    assert!(
        d.find(By::Css("#diagnosis-card #live-line")).await.is_ok(),
        "the live line is in the diagnosis card"
    );
    shot(&d, "partial-candle.png").await;

    // the app's tick checked the rule on the 10:42 quote: listed as fired intraday
    let deadline = Instant::now() + Duration::from_secs(60);
    let row = loop {
        click(&d, By::Id("nav-alerts")).await;
        wait_for(&d, By::Id("alerts-check")).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Ok(row) = d
            .find(By::Css(".alert-row[data-code='000001'][data-intraday-at]"))
            .await
        {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "the app's intraday check never fired the rule"
        );
        click(&d, By::Id("nav-stock")).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    assert_eq!(
        row.attr("data-intraday-at").await.unwrap().as_deref(),
        Some("2020-06-17 10:42")
    );
    assert_eq!(
        row.attr("data-bar-date").await.unwrap().as_deref(),
        Some("2020-06-17")
    );
    let badge = row.find(By::Css(".alert-intraday")).await.unwrap();
    assert_eq!(badge.text().await.unwrap(), "盘中 10:42");
    shot(&d, "partial-candle-alert.png").await;
}

/// The newest daily bar of 000001 in the home's cache.
async fn last_cached_day(home: &std::path::Path) -> u32 {
    MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap()
        .daily_bars("000001", None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .date
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_app_at_a_session_time_draws_the_partial_candle_and_the_live_line() {
    let (base, hits) = tencent_quotes::serve();
    let home = tempfile::tempdir().unwrap();
    // Above the close of 06-16 (12.89), below the 10:42 quote (13.05).
    let mut add = wyckoff_cli(home.path());
    add.args(["alerts", "add", "000001", "--price-above", "13.00"]);
    let out = tokio::task::spawn_blocking(move || add.output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));

    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        // Quotes from Tencent (served); the daily bars stay as bundled: at 10:42 on
        // 06-17 the close of 06-16 is the newest there is, so none is fetched.
        &[
            ("WYCKOFF_NOW", "2020-06-17T10:42:00+08:00"),
            ("WYCKOFF_OFFLINE", "0"),
            ("WYCKOFF_DATA_SOURCES", "eastmoney"),
            ("WYCKOFF_EASTMONEY_URL", base.as_str()),
            ("WYCKOFF_TENCENT_URL", base.as_str()),
        ],
    );
    run_scenario(&driver, "partial-candle", scenario).await;
    drop(driver);

    assert!(hits.load(Ordering::SeqCst) >= 1, "Tencent was asked");
    // the partial bar stayed in memory: the cache still ends on the bundled close
    assert_eq!(last_cached_day(home.path()).await, 20200616);
    // the override was warned about at start
    let logs: String = std::fs::read_dir(home.path().join("logs"))
        .unwrap()
        .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
        .collect();
    assert!(
        logs.contains("WYCKOFF_NOW is set: the app's clock starts at this time"),
        "no warning in the log"
    );
}
