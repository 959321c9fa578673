//! WebDriver test of the account journal on the portfolio page in the
//! real app with no model (offline, bundled bars): record a buy of 000001 with the fees
//! left to the backtest's rules → the positions table shows the shares and the average
//! cost with the fees in it; record a partial sell → the shares drop, the realised P/L
//! appears (checked by hand) and the exit review has the sale; a 交割单 with one bad row
//! names the line and imports nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_for};

/// Replaces a controlled input's text the way a user does (select all, type).
async fn retype(d: &WebDriver, id: &str, text: &str) {
    let input = wait_for(d, By::Id(id)).await;
    input.send_keys(Key::Control + "a").await.unwrap();
    input.send_keys(Key::Backspace).await.unwrap();
    input.send_keys(text).await.unwrap();
}

/// Polls `css` until its text is `want` (up to 20 s).
async fn wait_text(d: &WebDriver, css: &str, want: &str) -> WebElement {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(e) = d.find(By::Css(css)).await
            && e.text().await.unwrap_or_default() == want
        {
            return e;
        }
        if Instant::now() > deadline {
            let got = match d.find(By::Css(css)).await {
                Ok(e) => e.text().await.unwrap_or_default(),
                Err(_) => "(absent)".into(),
            };
            panic!("{css} never read {want:?}; it reads {got:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn attr(e: &WebElement, name: &str) -> String {
    e.attr(name).await.unwrap().unwrap_or_default()
}

async fn fill(d: &WebDriver, side: &str, date: &str, price: &str, shares: &str) {
    click(d, By::Id(format!("jf-side-{side}"))).await;
    retype(d, "jf-code", "000001").await;
    retype(d, "jf-date", date).await;
    retype(d, "jf-price", price).await;
    retype(d, "jf-shares", shares).await;
    click(d, By::Id("jf-submit")).await;
}

async fn journal_scenario(d: WebDriver, csv: String) {
    click(&d, By::Id("nav-portfolio")).await;
    wait_for(&d, By::Id("pf-empty")).await;
    wait_for(&d, By::Id("jr-no-fills")).await;

    // Buy 1000 × 16.00 on 2020-01-02, fees empty: commission 0.025 % = 4.00 → the
    // 5.00 minimum, transfer 0.001 % = 0.16; cost 16,005.16 → 16.00516 a share.
    fill(&d, "buy", "2020-01-02", "16.00", "1000").await;
    wait_text(&d, ".pf-row[data-code='000001'] .pf-shares", "1,000").await;
    wait_text(&d, ".pf-row[data-code='000001'] .pf-cost", "16.005").await;
    let fees = wait_for(&d, By::Css("tr.jr-fill[data-side='buy'] .jr-fill-fees")).await;
    assert_eq!(attr(&fees, "data-value").await, "516");
    let done = wait_for(&d, By::Id("jf-done")).await.text().await.unwrap();
    assert!(
        done.contains("5.16") && done.contains("按回测费率"),
        "{done}"
    );

    // Sell 400 × 14.00 on 2020-03-02: commission 1.40 → 5.00, stamp 0.1 % = 5.60,
    // transfer 0.056 → 0.06 (fees 10.66); cost 16,005.16 × 400/1000 = 6,402.064;
    // P/L 5,600 − 10.66 − 6,402.064 = −812.724 → −812.72. 600 left at the same cost.
    fill(&d, "sell", "2020-03-02", "14.00", "400").await;
    wait_text(&d, ".pf-row[data-code='000001'] .pf-shares", "600").await;
    wait_text(&d, ".pf-row[data-code='000001'] .pf-cost", "16.005").await;
    let realised = wait_text(&d, "#jr-realised", "-812.72").await;
    assert_eq!(attr(&realised, "data-value").await, "-81272");
    let rows = d.find_all(By::Css("tr.jr-fill")).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(attr(&rows[0], "data-side").await, "sell", "newest first");
    // the review: the bundled bars run to 2020-06-16, so 5, 10 and 20 days are there
    let review = wait_for(&d, By::Css("tr.jr-review-row[data-code='000001']")).await;
    let after = review.find_all(By::Css(".jr-after")).await.unwrap();
    assert_eq!(after.len(), 3);
    for a in &after {
        assert_eq!(attr(a, "data-status").await, "done");
    }
    // the fills and the review in the screenshot, not the positions above them
    d.execute(
        "document.getElementById('jr-fills').scrollIntoView()",
        Vec::new(),
    )
    .await
    .unwrap();
    shot(&d, "74-journal.png").await;

    // A sale beyond the holding: the backend's refusal beside the form, nothing written.
    fill(&d, "sell", "2020-03-03", "14.00", "700").await;
    let error = wait_for(&d, By::Id("jf-error")).await.text().await.unwrap();
    assert!(error.contains("卖出 700 股超过当时持仓 600 股"), "{error}");
    assert_eq!(d.find_all(By::Css("tr.jr-fill")).await.unwrap().len(), 2);

    // A 交割单 whose third line has no price: the line named, nothing imported.
    let input = wait_for(&d, By::Id("ji-file")).await;
    input.send_keys(csv.as_str()).await.unwrap();
    let bad = wait_for(&d, By::Css(".ji-bad-line")).await;
    assert_eq!(attr(&bad, "data-line").await, "3");
    assert_eq!(d.find_all(By::Css(".ji-bad-line")).await.unwrap().len(), 1);
    wait_for(&d, By::Id("ji-nothing")).await;
    assert_eq!(d.find_all(By::Css("tr.jr-fill")).await.unwrap().len(), 2);
    wait_text(&d, ".pf-row[data-code='000001'] .pf-shares", "600").await;
    shot(&d, "75-journal-import-refused.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn record_a_fill_and_see_the_position_change() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let csv = files.path().join("jiaogedan.csv");
    std::fs::write(
        &csv,
        "成交日期,证券代码,证券名称,操作,成交数量,成交均价,成交金额,手续费,印花税,过户费\n\
         20200601,000001,平安银行,证券买入,100,13.00,1300.00,5.00,0.00,0.01\n\
         20200602,000001,平安银行,证券买入,100,abc,,5.00,0.00,0.01\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap().to_owned();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "journal", move |d| journal_scenario(d, csv)).await;
}
