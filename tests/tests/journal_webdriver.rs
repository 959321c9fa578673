//! WebDriver test of the account journal on the portfolio page in the
//! real app with no model (offline, bundled bars): record a buy of 000001 with the fees
//! left to the backtest's rules → the positions table shows the shares and the average
//! cost with the fees in it; record a partial sell → the shares drop, the realised P/L
//! appears (checked by hand) and the exit review has the sale; a 交割单 with one bad row
//! names the line and imports nothing.
//!
//! And the ledger from a statement: an 对账单 with a 银行转证券 and a buy, and its
//! 股份余额 / 资金余额 columns, imported through the page's file input → the transfer in
//! the account activity, the cash line, a NAV equal to cash + shares × the cached
//! unadjusted close of the last day (read here from a store holding the same bundled
//! bars), the NAV curve, and a reconciliation table with no difference; then a second
//! statement whose 股份余额 disagrees with the ledger → that difference named by day, code
//! and line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, run_scenario, shot, wait_attr, wait_for};
use wyckoff_market::{MarketConfig, MarketData};

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

/// 000001's last cached close as the journal values money (`YYYYMMDD`, millionths): the
/// unadjusted close where one is stored, else the adjusted one standing in — read from a
/// fresh offline store, which holds the same bundled bars as the app's.
async fn last_raw_close() -> (u32, i64) {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    // the bundled bars are in the store once read
    assert!(!md.daily_bars("000001", None).await.unwrap().bars.is_empty());
    let raw = md.raw_closes("000001", 0..=u32::MAX).await.unwrap();
    let last = raw.closes.last().expect("000001 has cached closes");
    (last.date, last.close_e6)
}

/// `close_e6 × shares` in fen, rounded half away from zero.
fn value_fen(close_e6: i64, shares: i64) -> i64 {
    let e6 = i128::from(close_e6) * i128::from(shares);
    i64::try_from((e6 + 5_000) / 10_000).unwrap()
}

/// Chooses `path` in the import dialog and waits until it says `n` entries came in.
async fn import(d: &WebDriver, path: &str, n: u32) {
    let input = wait_for(d, By::Id("ji-file")).await;
    input.send_keys(path).await.unwrap();
    wait_attr(d, By::Id("ji-done"), "data-imported", &n.to_string()).await;
}

async fn ledger_scenario(d: WebDriver, agrees: String, differs: String) {
    let (last_day, close_e6) = last_raw_close().await;
    let last_iso = format!(
        "{}-{:02}-{:02}",
        last_day / 10_000,
        last_day / 100 % 100,
        last_day % 100
    );
    click(&d, By::Id("nav-portfolio")).await;
    wait_for(&d, By::Id("jr-no-fills")).await;
    wait_for(&d, By::Id("jr-rec-none")).await;

    // 50,000.00 in, then 1000 × 13.00 for 13,005.13 with fees: cash 36,994.87.
    import(&d, &agrees, 2).await;
    let transfer = wait_for(&d, By::Css("tr.jr-activity-row[data-kind='cash_in']")).await;
    let cash_in = transfer.find(By::Css(".jr-activity-cash")).await.unwrap();
    assert_eq!(attr(&cash_in, "data-value").await, "5000000");
    assert_eq!(cash_in.text().await.unwrap(), "+50,000.00");
    assert_eq!(
        d.find_all(By::Css("tr.jr-activity-row"))
            .await
            .unwrap()
            .len(),
        1,
        "the buy is a fill, not account activity"
    );
    wait_text(&d, "tr.jr-fill[data-side='buy'] .jr-fill-shares", "1,000").await;

    let cash = wait_text(&d, "#jr-cash", "36,994.87").await;
    assert_eq!(attr(&cash, "data-value").await, "3699487");
    let asof = wait_for(&d, By::Id("jr-value-asof")).await;
    assert_eq!(attr(&asof, "data-date").await, last_iso);
    let nav = 3_699_487 + value_fen(close_e6, 1000);
    wait_attr(&d, By::Id("jr-nav-value"), "data-value", &nav.to_string()).await;
    // the NAV curve: drawn (the chart library puts its canvas in the box)
    let curve = wait_for(&d, By::Css("#jr-nav-chart #jr-nav-curve")).await;
    assert!(!curve.find_all(By::Css("canvas")).await.unwrap().is_empty());

    // three balances stated (cash on both days, 000001's shares on the second), all agree
    let summary = wait_attr(&d, By::Id("jr-rec-summary"), "data-checked", "3").await;
    assert_eq!(attr(&summary, "data-differences").await, "0");
    assert!(
        d.find_all(By::Css("tr.jr-rec-diff"))
            .await
            .unwrap()
            .is_empty()
    );
    let closing = d.find_all(By::Css("tr.jr-rec-close")).await.unwrap();
    assert_eq!(closing.len(), 2);
    for row in &closing {
        assert_eq!(attr(row, "data-agrees").await, "true");
    }
    let held = wait_for(&d, By::Css("tr.jr-rec-close[data-code='000001']")).await;
    assert_eq!(attr(&held, "data-date").await, "2020-06-02");
    let statement = held.find(By::Css(".jr-rec-statement")).await.unwrap();
    assert_eq!(statement.text().await.unwrap(), "1,000");
    d.execute(
        "document.getElementById('jr-value').scrollIntoView()",
        Vec::new(),
    )
    .await
    .unwrap();
    shot(&d, "76-journal-ledger.png").await;

    // The second statement buys 500 more but states 1,600 held: its cash agrees, the
    // shares do not.
    import(&d, &differs, 1).await;
    let summary = wait_attr(&d, By::Id("jr-rec-summary"), "data-differences", "1").await;
    assert_eq!(attr(&summary, "data-checked").await, "5");
    let diff = wait_for(&d, By::Css("tr.jr-rec-diff")).await;
    assert_eq!(attr(&diff, "data-code").await, "000001");
    assert_eq!(attr(&diff, "data-date").await, "2020-06-03");
    assert_eq!(attr(&diff, "data-line").await, "2");
    let cells: Vec<String> = {
        let mut out = Vec::new();
        for c in diff.find_all(By::Css("td")).await.unwrap() {
            out.push(c.text().await.unwrap());
        }
        out
    };
    assert_eq!(
        cells[..6],
        ["2020-06-03", "000001", "2", "1,600", "1,500", "+100"]
    );
    assert_eq!(
        d.find_all(By::Css("tr.jr-rec-diff")).await.unwrap().len(),
        1
    );
    // the dialog names it too, and the ledger booked the buy as stated
    let named = wait_for(&d, By::Css("#ji-reconcile .ji-difference")).await;
    assert_eq!(attr(&named, "data-line").await, "2");
    wait_text(&d, "#jr-cash", "30,439.80").await;
    let nav = 3_043_980 + value_fen(close_e6, 1500);
    wait_attr(&d, By::Id("jr-nav-value"), "data-value", &nav.to_string()).await;
    d.execute(
        "document.getElementById('jr-rec').scrollIntoView()",
        Vec::new(),
    )
    .await
    .unwrap();
    shot(&d, "77-journal-reconcile-differs.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn import_a_statement_and_see_cash_nav_and_reconciliation() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    // 东方财富-style columns: each row's 发生金额 is its amount and fees, each 资金余额 /
    // 股份余额 follows from the rows before it (the second file's 股份余额 does not).
    let header = "发生日期,业务名称,证券代码,证券名称,成交价格,成交数量,成交金额,股份余额,佣金,印花税,过户费,发生金额,资金余额,委托编号\n";
    let agrees = files.path().join("duizhangdan-1.csv");
    std::fs::write(
        &agrees,
        format!(
            "{header}\
             20200601,银行转证券,,,,0,0.00,,0.00,0.00,0.00,50000.00,50000.00,\n\
             20200602,证券买入,000001,平安银行,13.000,1000,13000.00,1000,5.00,0.00,0.13,-13005.13,36994.87,5001\n"
        ),
    )
    .unwrap();
    let differs = files.path().join("duizhangdan-2.csv");
    std::fs::write(
        &differs,
        format!(
            "{header}\
             20200603,证券买入,000001,平安银行,13.100,500,6550.00,1600,5.00,0.00,0.07,-6555.07,30439.80,5002\n"
        ),
    )
    .unwrap();
    let agrees = agrees.to_str().unwrap().to_owned();
    let differs = differs.to_str().unwrap().to_owned();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "journal-ledger", move |d| {
        ledger_scenario(d, agrees, differs)
    })
    .await;
}
