//! WebDriver test of the guided start in the real app: from a fresh data home (bundled
//! bars only, no model, no watchlist) the guide shows above the overview; a TDX folder
//! (written here with the documented `.day` layout, its path typed into the field) is
//! imported with its result shown, the model step is skipped, the watchlist comes from the
//! install's 自选股, and the finished guide leaves a populated overview that counts the
//! imported stocks and says what the desk holds. A restart does not show the guide again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, fill, run_scenario, shot, wait_attr, wait_for, wait_gone,
};
use wyckoff_market::{MarketConfig, MarketData};

/// A 32-byte record: date, open/high/low/close in fen, f32 amount, volume, reserved.
fn record(date: u32, close: u32, volume: u32) -> Vec<u8> {
    let mut r = Vec::with_capacity(32);
    for v in [date, close - 5, close + 10, close - 12, close] {
        r.extend_from_slice(&v.to_le_bytes());
    }
    r.extend_from_slice(&((f64::from(close) / 100.0 * f64::from(volume)) as f32).to_le_bytes());
    r.extend_from_slice(&volume.to_le_bytes());
    r.extend_from_slice(&0u32.to_le_bytes());
    r
}

/// `n` weekdays of bars from 2024-01-02 on.
fn day_file(seed: u32, n: usize) -> Vec<u8> {
    use chrono::Datelike;
    let mut day = chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
    let mut out = Vec::new();
    let mut i = 0u32;
    while (i as usize) < n {
        if day.weekday().number_from_monday() <= 5 {
            let close = 1000 + seed * 100 + (i * 37 + seed) % 90;
            let date = day.year() as u32 * 10_000 + day.month() * 100 + day.day();
            out.extend(record(date, close, 50_000 + i * 10));
            i += 1;
        }
        day = day.succ_opt().unwrap();
    }
    out
}

fn write_install(root: &Path) {
    for (m, code, seed) in [
        ("sh", "600519", 1),
        ("sz", "300750", 2),
        ("bj", "430047", 3),
    ] {
        let dir = root.join("vipdoc").join(m).join("lday");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{m}{code}.day")), day_file(seed, 120)).unwrap();
    }
    // an index: skipped
    std::fs::write(root.join("vipdoc/sh/lday/sh000001.day"), day_file(4, 60)).unwrap();
    let blocks = root.join("T0002").join("blocknew");
    std::fs::create_dir_all(&blocks).unwrap();
    std::fs::write(blocks.join("ZXG.blk"), "\r\n1600519\r\n0300750\r\n").unwrap();
}

async fn bundled_stocks() -> usize {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    md.status().await.unwrap().stocks.len()
}

async fn text(d: &WebDriver, id: &str) -> String {
    wait_for(d, By::Id(id)).await.text().await.unwrap()
}

async fn wait_text(d: &WebDriver, id: &str, want: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let got = text(d, id).await;
        if got.contains(want) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "#{id}: {got:?} never held {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

async fn first_run_scenario(d: WebDriver, install: String, stocks: usize) {
    // a fresh desk: the guide above the overview, the data step open
    wait_for(&d, By::Id("first-run")).await;
    wait_attr(&d, By::Id("fr-step-data"), "data-open", "true").await;
    wait_for(&d, By::Id("ov-stocks")).await;
    wait_text(&d, "ov-stocks", &stocks.to_string()).await;
    // offline: the full sync says it cannot run instead of an estimate
    wait_text(&d, "fr-sync-estimate", "没有启用联网数据源").await;
    shot(&d, "90-first-run.png").await;

    // 1. the TDX folder, its path typed (no native dialog)
    fill(&d, By::Id("fr-tdx-path"), &install).await;
    click(&d, By::Id("fr-tdx-import")).await;
    wait_attr(&d, By::Id("fr-step-data"), "data-state", "done").await;
    let summary = text(&d, "fr-tdx-summary").await;
    assert!(
        summary.contains("读取 3 只股票：新增 360 根K线"),
        "{summary}"
    );
    assert!(
        summary.contains("自选股：2 只股票，新加入自选 2 只"),
        "{summary}"
    );
    // the overview below already counts the imported stocks
    wait_text(&d, "ov-stocks", &(stocks + 3).to_string()).await;

    // 2. no model: skipped, the desk works without one
    wait_attr(&d, By::Id("fr-step-model"), "data-open", "true").await;
    click(&d, By::Id("fr-skip-model")).await;
    wait_attr(&d, By::Id("fr-step-model"), "data-state", "skipped").await;

    // 3. the watchlist from the same install's blocks (the path carried over)
    wait_attr(&d, By::Id("fr-step-watchlist"), "data-open", "true").await;
    wait_text(&d, "fr-wl-count", "自选股现有 2 只").await;
    let carried = wait_for(&d, By::Id("fr-wl-tdx-path")).await;
    assert_eq!(
        carried.value().await.unwrap().as_deref(),
        Some(install.as_str())
    );
    click(&d, By::Id("fr-wl-tdx-import")).await;
    wait_attr(&d, By::Id("fr-step-watchlist"), "data-state", "done").await;
    let done = text(&d, "fr-summary").await;
    assert!(
        done.contains(&format!(
            "桌面现有 {} 只股票的日线（最新 2024-06-17）",
            stocks + 3
        )),
        "{done}"
    );
    assert!(done.contains("自选股 2 只"), "{done}");
    assert!(done.contains("未配置模型"), "{done}");
    shot(&d, "91-first-run-done.png").await;

    // the overview, populated, says what is there
    click(&d, By::Id("fr-finish")).await;
    wait_gone(&d, By::Id("first-run")).await;
    let line = text(&d, "fr-desk-summary").await;
    assert!(line.contains(&format!("{} 只股票", stocks + 3)), "{line}");
    wait_text(&d, "ov-stocks", &(stocks + 3).to_string()).await;
    assert_eq!(text(&d, "ov-newest").await, "2024-06-17");
    shot(&d, "92-first-run-overview.png").await;
}

async fn restart_scenario(d: WebDriver) {
    // finished once: the overview opens without the guide
    wait_for(&d, By::Id("ov-stocks")).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(d.find(By::Id("first-run")).await.is_err());
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_fresh_desk_is_filled_from_a_tdx_folder_through_the_guided_start() {
    let stocks = bundled_stocks().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let tdx = tempfile::tempdir().unwrap();
    write_install(tdx.path());
    let install = tdx.path().display().to_string();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "first-run", move |d| {
        first_run_scenario(d, install, stocks)
    })
    .await;
    run_scenario(&driver, "first-run-restart", restart_scenario).await;
}
