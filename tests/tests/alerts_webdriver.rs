//! WebDriver test of the alert centre in the real app with no model: from a
//! stock page, "alert…" opens the centre with the stock in the form; a rule on the close
//! is added (a bad code is refused in words, nothing stored); "check now" runs the alerts
//! job and the alert fired on the bundled last bar is listed with its figures; opening it
//! shows the stock page at that bar.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_e2e::webdriver::{TauriDriver, click, fill, run_scenario, shot, wait_for};
use wyckoff_market::{MarketConfig, MarketData};

/// 000001's last bundled bar: its date (YYYY-MM-DD) and close.
async fn last_bar() -> (String, f64) {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let chart = build_chart(&md, "000001", Period::Day).await.unwrap();
    let n = chart.bars.dates.len() - 1;
    let d = chart.bars.dates[n];
    (
        format!("{}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100),
        chart.bars.close[n],
    )
}

async fn wait_text(d: &WebDriver, by: By, want: impl Fn(&str) -> bool, what: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(el) = d.find(by.clone()).await {
            let text = el.text().await.unwrap_or_default();
            if want(&text) {
                return text;
            }
        }
        assert!(Instant::now() < deadline, "never saw {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn scenario(d: WebDriver, (date, close): (String, f64)) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    click(&d, By::Id("stock-alert")).await;
    let code = wait_for(&d, By::Id("alert-code")).await;
    assert_eq!(code.prop("value").await.unwrap().as_deref(), Some("000001"));

    // A code not in the stock list: refused in words, nothing stored.
    fill(&d, By::Id("alert-code"), "688999").await;
    fill(&d, By::Id("alert-value"), "1").await;
    click(&d, By::Id("alert-add")).await;
    let refused = wait_text(
        &d,
        By::Id("alert-note"),
        |t| t.starts_with("未添加"),
        "the refusal",
    )
    .await;
    assert!(refused.contains("688999"), "{refused}");
    assert!(d.find(By::Id("alert-rules")).await.is_err());

    // Close at or above half the last close: fires on the last bar, with its real close.
    let level = format!("{:.2}", close / 2.0);
    fill(&d, By::Id("alert-code"), "000001").await;
    fill(&d, By::Id("alert-value"), &level).await;
    click(&d, By::Id("alert-add")).await;
    wait_text(
        &d,
        By::Id("alert-note"),
        |t| t.starts_with("已添加规则"),
        "the rule added",
    )
    .await;
    wait_for(&d, By::Css("#alert-rules .alert-rule[data-enabled='true']")).await;

    click(&d, By::Id("alerts-check")).await;
    let checked = wait_text(
        &d,
        By::Id("alerts-checked"),
        |t| t.contains("触发"),
        "the check's line",
    )
    .await;
    assert!(checked.contains(&format!("数据日期 {date}")), "{checked}");
    assert!(checked.contains("触发 1 条"), "{checked}");
    let row = wait_for(&d, By::Css(".alert-row[data-code='000001']")).await;
    assert_eq!(
        row.attr("data-bar-date").await.unwrap().as_deref(),
        Some(date.as_str())
    );
    assert_eq!(
        row.attr("data-delivery").await.unwrap().as_deref(),
        Some("recorded")
    );
    let figures = row
        .find(By::Css(".alert-figures"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        figures.starts_with(&format!("收盘 {close:.2}，阈值")),
        "{figures}"
    );
    // Seen here: no badge.
    assert!(d.find(By::Id("alerts-badge")).await.is_err());
    shot(&d, "88-alerts.png").await;

    // A second check on the same close fires nothing new (once per trading day).
    click(&d, By::Id("alerts-check")).await;
    wait_text(
        &d,
        By::Id("alerts-checked"),
        |t| t.contains("触发 0 条"),
        "no second firing",
    )
    .await;
    assert_eq!(d.find_all(By::Css(".alert-row")).await.unwrap().len(), 1);

    click(&d, By::Css(".alert-row[data-code='000001'] .alert-open")).await;
    wait_text(
        &d,
        By::Id("as-of"),
        |t| t == date,
        "the stock page at the alert's bar",
    )
    .await;
    let title = wait_for(&d, By::Id("stock-title"))
        .await
        .text()
        .await
        .unwrap();
    assert!(title.contains("000001"), "{title}");

    // From the watchlist: a rule on every stock in it.
    click(&d, By::Id("nav-watchlist")).await;
    click(&d, By::Id("watch-alert")).await;
    let on = wait_for(&d, By::Id("alert-target-watchlist")).await;
    assert!(on.is_selected().await.unwrap());
    assert!(d.find(By::Id("alert-code")).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn an_alert_added_in_the_window_fires_on_check_and_opens_its_bar() {
    let bar = last_bar().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "alerts", move |d| scenario(d, bar)).await;
}
