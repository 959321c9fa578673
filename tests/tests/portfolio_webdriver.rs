//! WebDriver test of the portfolio page in the real app with no model configured
//! (offline, bundled bars): add 000001 × 1000 @ 12.5 → the row shows the last close and
//! date of the bundled bars and the P/L they give (computed here from the same bars);
//! edit; a stop-loss and target set while editing are kept (a target under the stop is
//! refused with the backend's reason); a refused entry shows the backend's reason and changes nothing; the code opens
//! the stock page, whose sync button says plainly that the app is offline; remove.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_attr, wait_for};
use wyckoff_market::portfolio::ERR_COST;
use wyckoff_market::{MarketConfig, MarketData};

/// The last bar of 000001 in the bundled data: (close, YYYY-MM-DD).
async fn last_bar() -> (f64, String) {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let bars = md.daily_bars("000001", None).await.unwrap().bars;
    let last = bars.last().unwrap();
    (last.close, wyckoff_market::date::iso(last.date))
}

/// Replaces a controlled input's text the way a user does (select all, type).
async fn retype(d: &WebDriver, id: &str, text: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(text).await.unwrap();
}

async fn number(row: &WebElement, css: &str) -> f64 {
    let cell = row.find(By::Css(css)).await.unwrap();
    let v = cell.attr("data-value").await.unwrap().unwrap_or_default();
    v.parse()
        .unwrap_or_else(|_| panic!("{css} has no number: {v:?}"))
}

/// Waits until the row's shares cell reads `want`.
async fn wait_shares(d: &WebDriver, want: &str) -> WebElement {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let row = wait_for(d, By::Css(".pf-row[data-code='000001']")).await;
        if row
            .find(By::Css(".pf-shares"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
            == want
        {
            return row;
        }
        assert!(Instant::now() < deadline, "shares never became {want}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn close_to(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 0.01, "{what}: {got} vs {want}");
}

async fn portfolio_scenario(d: WebDriver, close: f64, date: String) {
    click(&d, By::Id("nav-portfolio")).await;
    wait_for(&d, By::Id("pf-empty")).await;

    // Add: the row has the bundled last close, its date, and the P/L over those bars.
    retype(&d, "pf-code", "000001").await;
    retype(&d, "pf-shares-input", "1000").await;
    retype(&d, "pf-cost-input", "12.5").await;
    retype(&d, "pf-buy-date", "2020-01-02").await;
    click(&d, By::Id("pf-submit")).await;
    let row = wait_shares(&d, "1,000").await;
    close_to(number(&row, ".pf-last").await, close, "last");
    let shown_date = row
        .find(By::Css(".pf-date"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(shown_date.starts_with(&date), "{shown_date} vs {date}");
    assert!(
        shown_date.contains("陈旧"),
        "2020 bars are stale: {shown_date}"
    );
    close_to(
        number(&row, ".pf-pnl").await,
        (close - 12.5) * 1000.0,
        "P/L",
    );
    close_to(
        number(&row, ".pf-pnl-pct").await,
        (close / 12.5 - 1.0) * 100.0,
        "P/L %",
    );
    let weight = row.find(By::Css(".pf-weight")).await.unwrap();
    assert_eq!(weight.text().await.unwrap(), "100.00%");
    let verdict = row.find(By::Css(".pf-verdict")).await.unwrap();
    assert_ne!(verdict.text().await.unwrap(), "—", "the engine's verdict");

    // Edit the shares: the P/L follows.
    row.find(By::Css(".pf-edit"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_attr(&d, By::Id("pf-code"), "disabled", "true").await;
    retype(&d, "pf-shares-input", "1500").await;
    click(&d, By::Id("pf-submit")).await;
    let row = wait_shares(&d, "1,500").await;
    close_to(
        number(&row, ".pf-pnl").await,
        (close - 12.5) * 1500.0,
        "P/L after the edit",
    );

    // While editing: a stop-loss and a target; a target under the stop is refused.
    let edit = |d: WebDriver| async move {
        click(&d, By::Css(".pf-row[data-code='000001'] .pf-edit")).await;
        wait_for(&d, By::Id("pf-levels")).await;
    };
    edit(d.clone()).await;
    retype(&d, "pf-stop-input", "11.5").await;
    retype(&d, "pf-target-input", "13.5").await;
    click(&d, By::Id("pf-levels-save")).await;
    let saved = wait_for(&d, By::Css("#pf-levels-note.ok")).await;
    assert_eq!(saved.text().await.unwrap(), "已保存");
    retype(&d, "pf-target-input", "11").await;
    click(&d, By::Id("pf-levels-save")).await;
    let refused = wait_for(&d, By::Css("#pf-levels-note.error")).await;
    assert_eq!(refused.text().await.unwrap(), "目标价必须高于止损价");
    click(&d, By::Id("pf-cancel")).await;
    edit(d.clone()).await;
    let value = |id: &'static str| {
        let d = d.clone();
        async move {
            d.find(By::Id(id))
                .await
                .unwrap()
                .prop("value")
                .await
                .unwrap()
        }
    };
    assert_eq!(value("pf-stop-input").await.as_deref(), Some("11.5"));
    assert_eq!(value("pf-target-input").await.as_deref(), Some("13.5"));
    click(&d, By::Id("pf-cancel")).await;

    // A negative cost: the backend's reason beside the form, nothing written.
    retype(&d, "pf-code", "000338").await;
    retype(&d, "pf-shares-input", "100").await;
    retype(&d, "pf-cost-input", "-1").await;
    click(&d, By::Id("pf-submit")).await;
    let error = wait_for(&d, By::Id("pf-error")).await;
    assert_eq!(error.text().await.unwrap(), ERR_COST);
    assert_eq!(d.find_all(By::Css(".pf-row")).await.unwrap().len(), 1);
    shot(&d, "70-portfolio-page.png").await;

    // The code opens the stock page; its sync button says the app is offline.
    click(&d, By::Css(".pf-row[data-code='000001'] .pf-open")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    click(&d, By::Id("stock-sync")).await;
    let note = wait_attr(&d, By::Id("stock-sync-note"), "data-ok", "false").await;
    let text = note.text().await.unwrap();
    assert!(
        text.contains("离线") && text.contains("WYCKOFF_OFFLINE"),
        "{text}"
    );
    shot(&d, "73-stock-sync-offline.png").await;

    // Remove.
    click(&d, By::Id("nav-portfolio")).await;
    click(&d, By::Css(".pf-row[data-code='000001'] .pf-remove")).await;
    wait_for(&d, By::Id("pf-empty")).await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn portfolio_page_adds_edits_refuses_and_removes_a_position() {
    let (close, date) = last_bar().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "portfolio", move |d| {
        portfolio_scenario(d, close, date)
    })
    .await;
}
