//! WebDriver test of the name history in the real app (offline, bundled bars, no model):
//! the overview's data card says no history is recorded; a names file with bad lines is
//! refused with each line named and nothing stored; the good file imports, the report says
//! what was added, the counts follow, and the same file again adds nothing and says so;
//! then 000001's page lists the names it carried under its header.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_attr, wait_for};

async fn text(d: &WebDriver, by: By) -> String {
    wait_for(d, by).await.text().await.unwrap()
}

async fn retype(d: &WebDriver, id: &str, value: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(value).await.unwrap();
}

/// Waits until the element's text is `want`.
async fn wait_text(d: &WebDriver, by: By, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = text(d, by.clone()).await;
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{by:?}: {got:?}, want {want:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn names_scenario(d: WebDriver, good: String, bad: String) {
    wait_for(&d, By::Id("ov-data")).await;
    wait_text(
        &d,
        By::Id("ov-history"),
        "没有名称历史：历史选股按今天的名称判断 ST，今天已退市的股票不在其中",
    )
    .await;

    // no path: said inline, nothing asked of the backend
    click(&d, By::Id("ov-names-import")).await;
    wait_text(&d, By::Id("ov-names-error"), "请填写名称 CSV 文件的路径").await;

    // a file with bad lines: nothing imported, each line named
    retype(&d, "ov-names-path", &bad).await;
    click(&d, By::Id("ov-names-import")).await;
    wait_attr(&d, By::Id("ov-names-report"), "data-status", "rejected").await;
    assert_eq!(
        text(&d, By::Id("ov-names-headline")).await,
        "bad.csv 未导入任何内容：2 行有错误"
    );
    let mut lines = Vec::new();
    for li in d.find_all(By::Css(".ov-names-bad")).await.unwrap() {
        lines.push((
            li.attr("data-line").await.unwrap().unwrap_or_default(),
            li.text().await.unwrap(),
        ));
    }
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0].0, "3");
    assert_eq!(
        lines[0].1,
        "第 3 行：日期 \"2020-02-30\" 不是 YYYYMMDD 或 YYYY-MM-DD"
    );
    assert_eq!(lines[1].0, "4");
    assert!(
        lines[1].1.starts_with("第 4 行：未知代码 \"510300\""),
        "{lines:?}"
    );
    shot(&d, "names-import-rejected.png").await;
    // its good lines were not stored
    assert_eq!(
        wait_for(&d, By::Id("ov-history"))
            .await
            .attr("data-spans")
            .await
            .unwrap()
            .as_deref(),
        Some("0")
    );

    // the good file imports and the counts follow
    retype(&d, "ov-names-path", &good).await;
    click(&d, By::Id("ov-names-import")).await;
    wait_attr(&d, By::Id("ov-names-report"), "data-status", "imported").await;
    assert_eq!(
        text(&d, By::Id("ov-names-headline")).await,
        "已导入 names.csv：3 条名称（2 只股票）：新增 3，更正 0，已有 0"
    );
    wait_attr(&d, By::Id("ov-history"), "data-spans", "3").await;
    assert_eq!(
        text(&d, By::Id("ov-history")).await,
        "2 只股票 · 3 段名称（0 段为同步首次见到）· 上市信息 0（退市 0）· 股票列表快照 0"
    );
    shot(&d, "names-import-imported.png").await;

    // the same file again: nothing new, and the report says it was all there
    click(&d, By::Id("ov-names-import")).await;
    wait_text(
        &d,
        By::Id("ov-names-headline"),
        "没有新内容：names.csv 中的 3 条名称（2 只股票）都已记录",
    )
    .await;

    // 000001's page lists its names under the header
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Id("stock-title")).await;
    let list = wait_for(&d, By::Id("name-history-list")).await;
    let mut names = Vec::new();
    for li in list.find_all(By::Css("li")).await.unwrap() {
        names.push((
            li.attr("data-first-seen")
                .await
                .unwrap()
                .unwrap_or_default(),
            li.text().await.unwrap(),
        ));
    }
    assert_eq!(
        names,
        [
            // the file's full-width Ａ stored as the stock lists spell it
            ("false".to_owned(), "1991-04-03 → 深发展A".to_owned()),
            ("false".to_owned(), "2012-08-02 → 平安银行".to_owned()),
        ]
    );
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    shot(&d, "names-stock-page.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn a_names_file_imports_from_the_overview_and_the_stock_page_lists_the_names() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let good = files.path().join("names.csv");
    std::fs::write(
        &good,
        "date,code,name\n1991-04-03,000001,深发展Ａ\n2012-08-02,000001,平安银行\n20210501,000005,ST星源\n",
    )
    .unwrap();
    let bad = files.path().join("bad.csv");
    std::fs::write(
        &bad,
        "20200101,000001,平安银行\n20200101,000002,万科A\n2020-02-30,000004,国华网安\n20200101,510300,沪深300ETF\n",
    )
    .unwrap();
    let (good, bad) = (good.display().to_string(), bad.display().to_string());
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "names", move |d| names_scenario(d, good, bad)).await;
}
