//! WebDriver test of the overview (概览) in the real app with no model configured
//! (offline, bundled bars): indices and breadth said unavailable, the data status counts
//! equal to what `MarketData::status` reports over the same bundled data, the full-market
//! sync refused as offline, then "run screen" completes in the task panel and its result
//! table opens, "run backtest" over a short span shows metrics and the equity curve, and
//! a CSV folder imported from the data card adds its stock to the counts (its rejected
//! file listed with why).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_attr, wait_for, wait_gone,
};
use wyckoff_market::{Freshness, MarketConfig, MarketData};

/// What the status page should say: (stocks cached, stale, newest date).
async fn expected_status() -> (usize, usize, String) {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let s = md.status().await.unwrap();
    let stale = s
        .stocks
        .iter()
        .filter(|c| !matches!(c.freshness, Freshness::Fresh { .. }))
        .count();
    let newest = s.stocks.iter().map(|c| c.last_date).max().unwrap();
    (s.stocks.len(), stale, wyckoff_market::date::iso(newest))
}

async fn text(d: &WebDriver, id: &str) -> String {
    wait_for(d, By::Id(id)).await.text().await.unwrap()
}

async fn retype(d: &WebDriver, id: &str, value: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(value).await.unwrap();
}

/// Waits for the panel's row of the newest `tool` task to complete, then opens it.
async fn open_when_done(d: &WebDriver, tool: &str) {
    let row = format!(".task-row[data-tool='{tool}']");
    wait_for(d, By::Css(&row)).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let first = d.find(By::Css(&row)).await.unwrap();
        match first.attr("data-status").await.unwrap().as_deref() {
            Some("completed") => break,
            Some("running" | "queued") => {}
            other => panic!(
                "{tool} ended {other:?}: {}",
                first.text().await.unwrap_or_default()
            ),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{tool} never completed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    click(d, By::Css(format!("{row} .task-open"))).await;
}

async fn overview_scenario(
    d: WebDriver,
    stocks: usize,
    stale: usize,
    newest: String,
    csv_dir: std::path::PathBuf,
) {
    // No model: the overview opens first, with the pointer to Settings as a notice.
    wait_for(&d, By::Id("no-model")).await;
    wait_for(&d, By::Id("ov-indices-missing")).await;
    wait_for(&d, By::Id("ov-breadth-missing")).await;
    wait_attr(&d, By::Id("ov-regime"), "data-regime", "UNKNOWN").await;
    assert_eq!(text(&d, "ov-stocks").await, stocks.to_string());
    assert_eq!(text(&d, "ov-stale").await, stale.to_string());
    assert_eq!(text(&d, "ov-newest").await, newest);
    assert_eq!(text(&d, "ov-damaged").await, "0");
    assert_eq!(text(&d, "ov-indices-cached").await, "0");

    // The full-market sync offline: said plainly, nothing started.
    click(&d, By::Id("ov-sync-all")).await;
    let note = wait_attr(&d, By::Id("ov-sync-note"), "data-ok", "false").await;
    assert!(note.text().await.unwrap().contains("离线"));
    assert!(d.find(By::Css(".task-row")).await.is_err());

    // Run screen: a background task in the panel, its result table opens.
    click(&d, By::Id("ov-run-screen")).await;
    wait_attr(&d, By::Id("ov-task-note"), "data-ok", "true").await;
    open_when_done(&d, "screen_stocks").await;
    wait_for(&d, By::Css(".task-result .screen-table")).await;
    click(&d, By::Css(".task-result-close")).await;
    wait_gone(&d, By::Css(".task-result")).await;
    d.execute("document.querySelector('.content').scrollTop = 0", vec![])
        .await
        .unwrap();
    shot(&d, "71-overview.png").await;
    click(
        &d,
        By::Css(".task-row[data-tool='screen_stocks'] .task-open"),
    )
    .await;
    wait_for(&d, By::Css(".task-result .screen-table")).await;
    click(&d, By::Css(".task-result-close")).await;
    wait_gone(&d, By::Css(".task-result")).await;
    // the overview links the newest screen too
    click(&d, By::Id("ov-open-screen")).await;
    wait_for(&d, By::Css(".task-result .screen-table")).await;
    shot(&d, "71-overview-screen-result.png").await;
    click(&d, By::Css(".task-result-close")).await;
    wait_gone(&d, By::Css(".task-result")).await;

    // Run backtest over a short span of the bundled data.
    retype(&d, "bt-start", "2020-03-02").await;
    retype(&d, "bt-end", &newest).await;
    retype(&d, "bt-hold", "5").await;
    retype(&d, "bt-top", "2").await;
    click(&d, By::Id("ov-run-backtest")).await;
    open_when_done(&d, "run_backtest").await;
    let result = wait_for(&d, By::Css(".task-result .backtest-result")).await;
    let metrics = result.find_all(By::Css(".metric")).await.unwrap();
    assert!(metrics.len() >= 7, "{} metrics", metrics.len());
    let total = result
        .find(By::Css(".metric[data-metric='totalReturn'] .metric-value"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(total.ends_with('%') && total != "—%", "{total}");
    let curve = wait_for(&d, By::Css(".task-result svg.equity-curve polyline")).await;
    let points = curve.attr("points").await.unwrap().unwrap_or_default();
    assert!(points.split(' ').count() > 2, "{points}");
    shot(&d, "72-backtest-result.png").await;
    click(&d, By::Css(".task-result-close")).await;
    wait_gone(&d, By::Css(".task-result")).await;

    // Import a folder of CSV files: one good (600519, not in the bundled bars), one broken.
    click(&d, By::Id("ov-import")).await;
    wait_attr(&d, By::Id("ov-import-note"), "data-ok", "false").await;
    retype(&d, "ov-import-path", &csv_dir.display().to_string()).await;
    click(&d, By::Id("ov-import")).await;
    wait_attr(&d, By::Id("ov-import-note"), "data-ok", "true").await;
    open_when_done(&d, "import_bars").await;
    let summary = text(&d, "import-summary").await;
    assert_eq!(summary, "导入了 1 个文件：1 只股票、2 根K线");
    wait_for(&d, By::Css("#import-rejected li code")).await;
    let rejected = text(&d, "import-rejected").await;
    assert!(rejected.contains("broken.csv"), "{rejected}");
    // The backend's problem code worded in the window's language, with its figures.
    assert!(
        rejected.contains("第 1 行: 表头缺少列：open, high, low, close, volume"),
        "{rejected}"
    );
    shot(&d, "73-import-result.png").await;
    click(&d, By::Css(".task-result-close")).await;
    // The data card counts the imported stock.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while text(&d, "ov-stocks").await != (stocks + 1).to_string() {
        assert!(
            std::time::Instant::now() < deadline,
            "the count never changed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn overview_without_a_model_screens_backtests_and_says_what_is_missing() {
    let (stocks, stale, newest) = expected_status().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let csv = tempfile::tempdir().unwrap();
    std::fs::write(
        csv.path().join("moutai.csv"),
        "date,code,open,high,low,close,volume,amount\n\
         2020-06-15,600519,1400,1420,1390,1410,1000,1410000\n\
         2020-06-16,600519,1410,1430,1400,1425,1200,1710000\n",
    )
    .unwrap();
    std::fs::write(
        csv.path().join("broken.csv"),
        "date,code\nnot-a-date,600519\n",
    )
    .unwrap();
    let csv_dir = csv.path().to_path_buf();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "overview", move |d| {
        overview_scenario(d, stocks, stale, newest, csv_dir)
    })
    .await;
}
