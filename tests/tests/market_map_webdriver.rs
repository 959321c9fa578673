//! WebDriver test of the market map in the real app (offline, the bundled bars, no model):
//! the overview's mood line and the limit counts its 水温 line cites are the figures
//! `wyckoff market map --json` gives for the same data home; the map page without industries
//! says how to get them, a small industry CSV imported from it draws the treemap, a click on
//! an industry lists its members, and a click on a member opens its stock page. Concept
//! blocks imported then (a TDX block_gn.dat through the CLI): the map's 概念 switch lists
//! each block with the figures `wyckoff data industries concepts --json` gives, saying
//! today's blocks stand in for the map's day, and a member's stock page lists its concepts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{TauriDriver, click, fill, run_scenario, shot, wait_attr, wait_for};

/// The bundled stocks in three industries.
const CSV: &str = "code,industry\n000001,金融\n601318,金融\n000783,金融\n000338,制造\n000778,制造\n603220,制造\n002572,消费\n300027,消费\n";

/// A TDX block file: a 384-byte header, a u16 block count, then per block 9 bytes of GBK
/// name, u16 stock count, u16 type and 400 slots of 7 bytes.
fn block_file(blocks: &[(&str, &[&str])]) -> Vec<u8> {
    let mut out = vec![0u8; 384];
    out.extend((blocks.len() as u16).to_le_bytes());
    for (name, codes) in blocks {
        let mut rec = vec![0u8; 9 + 4 + 400 * 7];
        let n = encoding_rs::GBK.encode(name).0;
        rec[..n.len()].copy_from_slice(&n);
        rec[9..11].copy_from_slice(&(codes.len() as u16).to_le_bytes());
        rec[11..13].copy_from_slice(&2u16.to_le_bytes());
        for (i, c) in codes.iter().enumerate() {
            rec[13 + i * 7..13 + i * 7 + 6].copy_from_slice(c.as_bytes());
        }
        out.extend(rec);
    }
    out
}

/// The `wyckoff` binary's JSON answer over `home`.
fn cli_json(home: &Path, args: &[&str]) -> Value {
    let out = wyckoff_e2e::wyckoff_cli(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        wyckoff_e2e::show(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

async fn text(d: &WebDriver, by: By) -> String {
    wait_for(d, by).await.text().await.unwrap()
}

/// Waits until `css` matches `n` elements.
async fn wait_count(d: &WebDriver, css: &str, n: usize) -> Vec<WebElement> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = d.find_all(By::Css(css)).await.unwrap();
        if found.len() == n {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{css}: {} elements, want {n}",
            found.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn map_scenario(d: WebDriver, csv: String, cli: Value, home: PathBuf, blocks: PathBuf) {
    let limits = &cli["limits"];
    let day = cli["trade_date"].as_str().unwrap().to_string();
    let n = |k: &str| limits[k].as_u64().unwrap();

    // the overview: the mood line of the newest day, the figures the CLI counts
    let mood = wait_attr(&d, By::Id("ov-mood"), "data-date", &day).await;
    for (id, key) in [
        ("ov-mood-limit-up", "limit_up"),
        ("ov-mood-limit-down", "limit_down"),
        ("ov-mood-failed", "failed"),
        ("ov-mood-highest-board", "highest_board"),
    ] {
        let el = wait_for(&d, By::Id(id)).await;
        assert_eq!(
            el.attr("data-value").await.unwrap(),
            Some(n(key).to_string()),
            "{id}"
        );
    }
    let line = mood.text().await.unwrap();
    assert!(
        line.starts_with(&format!(
            "截至 {day} · 涨停 {} · 跌停 {} · 炸板 {}",
            n("limit_up"),
            n("limit_down"),
            n("failed")
        )),
        "{line}"
    );
    // the ladder: each stock the CLI lists, or the day had none
    let ladder = limits["ladder"].as_array().unwrap();
    if ladder.is_empty() {
        assert_eq!(text(&d, By::Id("ov-ladder-empty")).await, "当日没有涨停股");
    } else {
        let shown = wait_count(&d, ".ov-ladder-stock", ladder.len()).await;
        let mut codes = Vec::new();
        for s in shown {
            codes.push(s.attr("data-code").await.unwrap().unwrap());
        }
        let want: Vec<String> = ladder
            .iter()
            .map(|s| s["code"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(codes, want);
    }
    // the 水温 line cites the same counts
    assert_eq!(
        text(&d, By::Id("ov-regime-limits")).await,
        format!(
            "— 当日涨停 {}、跌停 {}、炸板 {}（{day}）",
            n("limit_up"),
            n("limit_down"),
            n("failed")
        )
    );
    shot(&d, "market-map-overview.png").await;

    // the map page without industries: how to get them
    click(&d, By::Id("nav-map")).await;
    let how = text(&d, By::Id("map-no-industries-text")).await;
    assert!(how.contains("wyckoff data industries import PATH"), "{how}");
    assert!(d.find_all(By::Id("map-treemap")).await.unwrap().is_empty());
    // the limit figures of the last days end with the overview's day
    let days = wait_count(&d, "#map-limit-series .map-limit-day", 20).await;
    assert_eq!(days[0].attr("data-date").await.unwrap(), Some(day.clone()));

    // a small industry file imported from the page: the treemap, a cell per industry
    fill(&d, By::Id("map-import-path"), &csv).await;
    click(&d, By::Id("map-import")).await;
    let note = wait_attr(&d, By::Id("map-import-note"), "data-ok", "true").await;
    let said = note.text().await.unwrap();
    assert!(said.starts_with("已导入 8 只股票、3 个行业"), "{said}");
    let cells = wait_count(&d, "#map-treemap .map-cell", 3).await;
    let mut industries = BTreeSet::new();
    for c in &cells {
        industries.insert(c.attr("data-industry").await.unwrap().unwrap());
    }
    assert_eq!(
        industries,
        BTreeSet::from(["制造".to_string(), "消费".to_string(), "金融".to_string()])
    );
    // the rotation chart draws its quadrants and a trail per industry with history
    wait_for(&d, By::Id("map-rotation")).await;
    assert_eq!(
        wait_count(&d, "#map-rotation .quadrant-label", 4)
            .await
            .len(),
        4
    );
    assert!(
        !d.find_all(By::Css("#map-rotation .map-trail"))
            .await
            .unwrap()
            .is_empty()
    );
    shot(&d, "market-map-treemap.png").await;

    // an industry's members on a click
    click(&d, By::Css(".map-cell[data-industry='金融']")).await;
    wait_attr(&d, By::Id("map-members"), "data-industry", "金融").await;
    let rows = wait_count(&d, "#map-members .map-member", 3).await;
    let mut codes = BTreeSet::new();
    for r in rows {
        codes.insert(r.attr("data-code").await.unwrap().unwrap());
    }
    assert_eq!(
        codes,
        BTreeSet::from([
            "000001".to_string(),
            "000783".to_string(),
            "601318".to_string()
        ])
    );
    shot(&d, "market-map-members.png").await;

    // a member opens its stock page
    click(&d, By::Css(".map-member-open[data-code='601318']")).await;
    let title = text(&d, By::Id("stock-title")).await;
    assert!(title.starts_with("601318"), "{title}");
    wait_for(&d, By::Css("#chart-canvas canvas")).await;

    // concept blocks imported while the app is open (through the CLI, on the same data home)
    cli_json(
        &home,
        &["data", "industries", "import", blocks.to_str().unwrap()],
    );
    let want = cli_json(
        &home,
        &["data", "industries", "concepts", "--as-of", &day, "--json"],
    );
    let want_rows = want["table"]["rows"].as_array().unwrap().clone();
    assert_eq!(want_rows.len(), 2, "{want}");

    // the map's 概念 switch: a row per block with a figure, as the CLI gives them, in order
    click(&d, By::Id("nav-map")).await;
    click(&d, By::Id("map-view-concepts")).await;
    let rows = wait_count(&d, "#concept-table .concept-row", want_rows.len()).await;
    for (row, w) in rows.iter().zip(&want_rows) {
        assert_eq!(
            row.attr("data-concept").await.unwrap().as_deref(),
            w["concept"].as_str()
        );
        let shown: f64 = row
            .attr("data-relative")
            .await
            .unwrap()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (shown - w["relative_5d_pct"].as_f64().unwrap()).abs() < 1e-9,
            "{shown} vs {w}"
        );
    }
    assert!(d.find_all(By::Id("map-treemap")).await.unwrap().is_empty());
    // imported today, after the bundled bars: today's blocks stand in, and the page says so
    let later = text(&d, By::Css("#concept-notes [data-note='later-load']")).await;
    assert!(later.contains(&format!("代替 {day}")), "{later}");
    shot(&d, "market-map-concepts.png").await;

    // back to 行业, a member's stock page lists its concepts
    click(&d, By::Id("map-view-industries")).await;
    click(&d, By::Css(".map-cell[data-industry='金融']")).await;
    wait_attr(&d, By::Id("map-members"), "data-industry", "金融").await;
    click(&d, By::Css(".map-member-open[data-code='000001']")).await;
    wait_attr(&d, By::Id("stock-blocks"), "data-code", "000001").await;
    assert_eq!(
        text(&d, By::Id("stock-concepts")).await,
        "概念：制造、大金融"
    );
    let industry = text(&d, By::Id("stock-industry")).await;
    assert!(industry.starts_with("行业：金融（"), "{industry}");
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_market_map_page_draws_industries_and_opens_members_and_the_overview_shows_the_mood() {
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let csv = files.path().join("industries.csv");
    std::fs::write(&csv, CSV).unwrap();
    // the CLI's figures for the same data home, before the app opens it
    let out = wyckoff_e2e::wyckoff_cli(home.path())
        .args(["market", "map", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", wyckoff_e2e::show(&out));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let csv = csv.display().to_string();
    let cache = files.path().join("tdx").join("T0002").join("hq_cache");
    std::fs::create_dir_all(&cache).unwrap();
    let blocks = cache.join("block_gn.dat");
    let finance: &[&str] = &["000001", "601318", "000783"];
    let makers: &[&str] = &["000338", "000778", "603220", "000001"];
    std::fs::write(
        &blocks,
        block_file(&[("大金融", finance), ("制造", makers)]),
    )
    .unwrap();
    let data_home = home.path().to_path_buf();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "market-map", move |d| {
        map_scenario(d, csv, cli, data_home, blocks)
    })
    .await;
}
