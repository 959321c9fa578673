//! WebDriver test of the portfolio page's "refresh closes" button in the real app. The
//! home's ledger (imported with the `wyckoff` binary before the app starts) records a bank
//! transfer (银证转账) and holds 10,000 units of 510300. The page shows the cash once, from
//! the ledger (来自账本), with no stated-cash form; the ETF has no close yet. The button
//! starts a background task against a local server speaking Eastmoney's kline format
//! (`WYCKOFF_EASTMONEY_URL`), which answers slowly so the task's progress is seen on the
//! page and in the task panel; then the ledger shows the served close with its day, and
//! NAV = cash + units × close to the fen.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_attr, wait_for, wait_layout_settled,
};
use wyckoff_e2e::{show, wyckoff_cli};

/// Cash in 100,000.00; 10,000 units of 510300 at 3.400 (34,000.00 + 5.00 fees).
const STATEMENT: &str = "成交日期,业务名称,证券代码,证券名称,成交数量,成交价格,成交金额,手续费,印花税,过户费,发生金额,资金余额,股份余额
20240805,银行转证券,,,,,,,,,100000.00,100000.00,
20240805,证券买入,510300,沪深300ETF,10000,3.400,34000.00,5.00,0.00,0.00,-34005.00,65995.00,10000
";
const UNITS: i64 = 10_000;
/// The ledger's cash after the statement, in fen.
const CASH_FEN: i64 = 10_000_000 - 3_400_500;

/// The ETF's closes the server publishes, (date, close in thousandths of a yuan).
const CLOSES: &[(&str, i64)] = &[
    ("2024-08-05", 3_401),
    ("2024-08-08", 3_420),
    ("2024-08-09", 3_455),
];

/// How long the server holds a kline answer: the task runs over a second, as a real fetch
/// of a few codes does, so its progress is on screen to be seen.
const SLOW: Duration = Duration::from_secs(3);

/// Answers 510300's kline requests (after [`SLOW`]) with [`CLOSES`], anything else with
/// no data; logs the request lines.
async fn eastmoney() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                let head = String::from_utf8_lossy(&got).to_string();
                let line = head.lines().next().unwrap_or("").to_owned();
                let body = if line.contains("kline") && line.contains("secid=1.510300") {
                    log.lock().unwrap().push(line);
                    tokio::time::sleep(SLOW).await;
                    let klines: Vec<String> = CLOSES
                        .iter()
                        .map(|(d, c)| {
                            let c = *c as f64 / 1000.0;
                            format!(
                                "{d},{c:.3},{c:.3},{c:.3},{c:.3},1200,{},0.5,0.1,0.01,0.2",
                                c * 120_000.0
                            )
                        })
                        .collect();
                    serde_json::json!({"rc": 0, "data": {"code": "510300", "klines": klines}})
                } else {
                    serde_json::json!({"rc": 0, "data": null})
                }
                .to_string();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (base, seen)
}

/// "65,995.00" for 6,599,500 fen (the page's money format).
fn yuan(fen: i64) -> String {
    let s = (fen / 100).to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    format!("{out}.{:02}", fen % 100)
}

async fn text(e: &WebElement) -> String {
    e.text().await.unwrap_or_default()
}

async fn refresh_scenario(d: WebDriver, seen: Arc<Mutex<Vec<String>>>) {
    click(&d, By::Id("nav-portfolio")).await;
    // The cash once, from the ledger, and no stated-cash form.
    let cash = wait_attr(&d, By::Id("pf-cash"), "data-source", "ledger").await;
    let cash_text = text(&cash).await;
    assert!(cash_text.contains(&yuan(CASH_FEN)), "{cash_text}");
    assert!(cash_text.contains("来自账本"), "{cash_text}");
    assert_eq!(d.find_all(By::Id("pf-cash")).await.unwrap().len(), 1);
    assert!(
        d.find_all(By::Id("pf-cash-input"))
            .await
            .unwrap()
            .is_empty(),
        "no cash form"
    );

    // Nothing synced: the ETF has no close, and its line says it is not valued.
    wait_for(&d, By::Id("jr-sync-closes")).await;
    let before = wait_attr(
        &d,
        By::Css("#jr-lines li[data-code='510300']"),
        "data-valuation",
        "unvalued",
    )
    .await;
    assert!(
        text(&before).await.contains("portfolio sync"),
        "{}",
        text(&before).await
    );
    wait_layout_settled(&d).await;

    click(&d, By::Id("jr-sync-closes")).await;
    // Progress while the source answers: on the page and in the task panel.
    let progress = wait_attr(&d, By::Id("jr-sync-progress"), "data-status", "running").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let t = text(&progress).await;
        if t.contains("510300") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "progress never named the code: {t}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    progress
        .find(By::Css("[role='progressbar']"))
        .await
        .unwrap();
    wait_for(
        &d,
        By::Css(
            ".task-row[data-tool='sync_ledger_closes'][data-status='running'] [role='progressbar']",
        ),
    )
    .await;
    let button = d.find(By::Id("jr-sync-closes")).await.unwrap();
    assert_eq!(
        button.attr("disabled").await.unwrap().as_deref(),
        Some("true")
    );
    shot(&d, "ledger-closes-progress.png").await;

    // Done: the outcome names the code and the day its closes reach.
    let (last_day, last_close) = *CLOSES.last().unwrap();
    let outcome = wait_for(&d, By::Css("#jr-sync-done li[data-code='510300']")).await;
    assert_eq!(
        outcome.attr("data-status").await.unwrap().as_deref(),
        Some("updated")
    );
    assert_eq!(
        outcome.attr("data-last-close").await.unwrap().as_deref(),
        Some(last_day)
    );
    wait_attr(
        &d,
        By::Css(".task-row[data-tool='sync_ledger_closes']"),
        "data-status",
        "completed",
    )
    .await;
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("fqt=0"), "unadjusted: {asked:?}");

    // The ledger reloaded: the line at the served close and its day; NAV to the fen.
    let line = wait_attr(
        &d,
        By::Css("#jr-lines li[data-code='510300']"),
        "data-valuation",
        "close",
    )
    .await;
    let line_text = text(&line).await;
    let close_text = format!("{}.{:03}", last_close / 1000, last_close % 1000);
    assert!(line_text.contains(&close_text), "{line_text}");
    assert!(line_text.contains(last_day), "{line_text}");
    let value_fen = UNITS * last_close / 10;
    assert_eq!(
        line.attr("data-value").await.unwrap(),
        Some(value_fen.to_string())
    );
    let nav = wait_for(&d, By::Id("jr-nav-value")).await;
    assert_eq!(
        nav.attr("data-value").await.unwrap(),
        Some((CASH_FEN + value_fen).to_string()),
        "NAV = cash + {UNITS} × {close_text}"
    );
    assert_eq!(text(&nav).await, yuan(CASH_FEN + value_fen));
    let jr_cash = d.find(By::Id("jr-cash")).await.unwrap();
    assert_eq!(
        jr_cash.attr("data-value").await.unwrap(),
        Some(CASH_FEN.to_string())
    );
    shot(&d, "ledger-closes-done.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_ledgers_refresh_button_fetches_the_etfs_close_with_progress_and_values_it() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("statement.csv");
    std::fs::write(&path, STATEMENT).unwrap();
    let out = wyckoff_cli(home.path())
        .args(["portfolio", "import", path.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));

    let (base, seen) = eastmoney().await;
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(
        home.path(),
        xdg.path(),
        &[
            ("WYCKOFF_DATA_SOURCES", "eastmoney"),
            ("WYCKOFF_EASTMONEY_URL", base.as_str()),
        ],
    );
    run_scenario(&driver, "ledger-closes", move |d| refresh_scenario(d, seen)).await;
}
