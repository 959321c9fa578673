//! WebDriver test of the research page in the real app with no model (offline,
//! bundled bars): a small sweep started from the window runs as a background task, its
//! heatmap appears with one cell per combination, the stored result is listed, and a
//! clicked cell runs that combination and shows its equity curve and trades.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};

async fn retype(d: &WebDriver, id: &str, value: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(value).await.unwrap();
}

/// Polls `by` until `ok` holds for its text (up to `secs`).
async fn wait_text(d: &WebDriver, by: By, secs: u64, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(e) = d.find(by.clone()).await {
            let t = e.text().await.unwrap_or_default();
            if ok(&t) {
                return t;
            }
            assert!(Instant::now() < deadline, "timed out; last text: {t}");
        } else {
            assert!(Instant::now() < deadline, "timed out waiting for {by:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

async fn research_scenario(d: WebDriver) {
    wait_for(&d, By::Id("no-model")).await;
    click(&d, By::Id("nav-research")).await;
    wait_for(&d, By::Id("research-page")).await;
    retype(&d, "research-start", "2020-04-01").await;
    retype(&d, "research-end", "2020-06-16").await;
    retype(&d, "research-hold_days", "3,5").await;
    retype(&d, "research-stop_loss_pct", "5,8").await;
    // The backend's plan, parsed by the CLI's rules.
    wait_text(&d, By::Id("research-plan"), 10, |t| {
        t.contains("共 4 个组合")
    })
    .await;
    click(&d, By::Id("research-run")).await;

    // Finished: the heatmap of the default metric over hold days × stop-loss.
    wait_text(&d, By::Id("sweep-best"), 120, |t| !t.is_empty()).await;
    let cells = d.find_all(By::Css("#heatmap .heat-cell")).await.unwrap();
    assert_eq!(cells.len(), 4);
    let listed = d
        .find_all(By::Css("#research-runs li[data-kind='sweep']"))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    shot(&d, "90-research-heatmap.png").await;

    // Another metric re-colours the same cells.
    let metric = wait_for(&d, By::Id("heat-metric")).await;
    metric
        .find(By::Css("option[value='total_return_pct']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let first = wait_text(&d, By::Css("#heatmap .heat-cell[data-row='0']"), 5, |t| {
        t.contains('.')
    })
    .await;
    assert!(first.parse::<f64>().is_ok(), "{first}");

    // A cell opens its run: equity curve and trades.
    click(&d, By::Css("#heatmap .heat-cell[data-row='0']")).await;
    wait_for(&d, By::Id("cell-detail")).await;
    wait_for(&d, By::Css("#cell-run #cell-equity canvas")).await;
    wait_for(&d, By::Id("cell-trades")).await;
    // The run's total return is the cell's (the single backtest equals the sweep's cell).
    let ret = wait_text(
        &d,
        By::Css("#cell-run .metric[data-metric='total_return_pct']"),
        60,
        |t| !t.is_empty(),
    )
    .await;
    assert!(ret.ends_with(&first), "cell {first}, run {ret}");
    d.execute(
        "document.getElementById('cell-run').scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    shot(&d, "91-research-cell.png").await;

    // A walk-forward of the same grid: 51 trading days in windows of 20 + 10 (step 10) are
    // 4 windows; each listed with its choice, and the verdict said.
    d.execute("document.querySelector('.content').scrollTop = 0", vec![])
        .await
        .unwrap();
    let mode = wait_for(&d, By::Id("research-mode")).await;
    mode.find(By::Css("option[value='walk']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    retype(&d, "research-in_sample", "20").await;
    retype(&d, "research-out_of_sample", "10").await;
    wait_text(&d, By::Id("research-plan"), 10, |t| {
        t.contains("共 4 个组合")
    })
    .await;
    click(&d, By::Id("research-run")).await;
    // The engine's verdict, as it words it (the grid is too small to promise which one).
    let verdict = wait_text(&d, By::Id("wf-verdict"), 120, |t| !t.is_empty()).await;
    assert!(verdict.contains("样本外"), "{verdict}");
    let windows = d.find_all(By::Css("#wf-windows tbody tr")).await.unwrap();
    assert_eq!(windows.len(), 4);
    wait_for(&d, By::Css("#wf-oos-curve canvas")).await;
    wait_for(&d, By::Css("#wf-is-curve canvas")).await;
    let listed = d.find_all(By::Css("#research-runs li")).await.unwrap();
    assert_eq!(listed.len(), 2);
    d.execute(
        "document.getElementById('wf-verdict').scrollIntoView()",
        vec![],
    )
    .await
    .unwrap();
    shot(&d, "92-research-walk-forward.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn research_page_runs_a_sweep_shows_its_heatmap_and_opens_a_cell() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "research", research_scenario).await;
}
