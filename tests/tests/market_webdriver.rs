//! WebDriver test of the market workspace in the real app with no model configured: search
//! 平安 → open 000001 → the chart is drawn with the engine's events (the page's accessible
//! list compared with what `stock_chart` computes over the same bundled bars: as known then
//! by default, with hindsight after the toggle), a screenshot, the week view lists the same
//! events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use thirtyfour::prelude::*;
use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_e2e::webdriver::{
    TauriDriver, click, run_scenario, shot, wait_attr, wait_for, wait_gone,
};
use wyckoff_market::{MarketConfig, MarketData};

/// The last bar of 000001 as the watchlist row should show it.
struct LastBar {
    close: String,
    date: String,
}

/// (label, date) of every event the command returns for 000001 on the daily chart, as known
/// then and with hindsight.
struct Expected {
    known: Vec<(String, String)>,
    hindsight: Vec<(String, String)>,
}

/// The events of 000001 on the daily chart, and its last bar.
async fn expected() -> (Expected, LastBar) {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let chart = build_chart(&md, "000001", Period::Day).await.unwrap();
    let r = &chart.reading;
    let events = Expected {
        known: r
            .known_events
            .iter()
            .map(|e| (e.label.clone(), e.date.to_string()))
            .collect(),
        hindsight: r
            .events
            .iter()
            .map(|e| (e.label.clone(), e.date.to_string()))
            .collect(),
    };
    let n = chart.bars.dates.len() - 1;
    let d = chart.bars.dates[n].to_string();
    let last = LastBar {
        close: chart.bars.close[n].to_string(),
        date: format!("{}-{}-{}", &d[..4], &d[4..6], &d[6..]),
    };
    (events, last)
}

/// The chart's canvases were sized to their container and painted: the most painted one
/// (the price pane; its crosshair overlay above it stays empty) is wider than the default
/// and has thousands of non-transparent pixels. A canvas left at the browser's
/// 300×150 default with nothing on it (what WebKitGTK showed with `autoSize`) fails.
async fn assert_chart_painted(d: &WebDriver) {
    // The library sizes and paints on animation frames after the canvases appear: on a
    // loaded machine the first probe can come before them, so look again until a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let probe = d
            .execute(
                r#"return Array.from(document.querySelectorAll('#chart-canvas canvas')).map(c => {
                 const g = c.getContext('2d');
                 if (!g || !c.width || !c.height) return [c.width, c.height, 0];
                 const px = g.getImageData(0, 0, c.width, c.height).data;
                 let n = 0;
                 for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) n++;
                 return [c.width, c.height, n]; });"#,
                vec![],
            )
            .await
            .unwrap();
        let canvases: Vec<[u64; 3]> = probe.convert().unwrap();
        let pane = canvases.iter().max_by_key(|c| c[2]).copied().unwrap();
        if pane[0] > 300 && pane[2] > 5_000 {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the price pane was never sized to its container and painted with candles: {canvases:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// (label, date) of each item of the page's event list.
async fn listed(d: &WebDriver) -> Vec<(String, String)> {
    let list = wait_for(d, By::Id("event-list")).await;
    let mut got = Vec::new();
    for li in list.find_all(By::Css("li.event")).await.unwrap() {
        got.push((
            li.attr("data-label").await.unwrap().unwrap_or_default(),
            li.attr("data-date").await.unwrap().unwrap_or_default(),
        ));
    }
    got
}

async fn market_scenario(d: WebDriver, events: Expected, last: LastBar) {
    let want = &events.known;
    // Keyboard: ? opens the shortcuts help, Esc closes it, Ctrl+K focuses the search.
    let search = wait_for(&d, By::Id("stock-search")).await;
    let body = wait_for(&d, By::Tag("body")).await;
    body.send_keys("?").await.unwrap();
    let help = wait_for(&d, By::Id("shortcuts-help")).await;
    assert!(help.text().await.unwrap().contains("Ctrl+K"));
    // the overlay moved the focus to its close button
    d.active_element()
        .await
        .unwrap()
        .send_keys(Key::Escape)
        .await
        .unwrap();
    wait_gone(&d, By::Id("shortcuts-help")).await;
    body.send_keys(Key::Control + "k").await.unwrap();
    let focused = d.active_element().await.unwrap();
    assert_eq!(focused.id().await.unwrap().as_deref(), Some("stock-search"));
    search.send_keys("平安").await.unwrap();
    let clicked = Instant::now();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;

    // The canvas is drawn (lightweight-charts puts its canvases in the container).
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    wait_for(&d, By::Id("event-list")).await;
    let drawn = wait_for(&d, By::Id("drawn-ms")).await;
    let page_ms = drawn.attr("data-ms").await.unwrap().unwrap_or_default();
    let wall_ms = clicked.elapsed().as_millis();
    let got = listed(&d).await;
    assert!(!want.is_empty());
    assert_eq!(
        &got, want,
        "the page lists exactly the engine's events, as known then by default"
    );
    wait_attr(&d, By::Id("events-view-note"), "data-view", "known").await;
    let title = wait_for(&d, By::Id("stock-title"))
        .await
        .text()
        .await
        .unwrap();
    assert!(title.contains("平安银行"), "{title}");
    // bundled data ends in 2020: said to be stale
    let fresh = wait_for(&d, By::Id("freshness")).await;
    assert_ne!(
        fresh.attr("data-status").await.unwrap().as_deref(),
        Some("ok")
    );
    assert_chart_painted(&d).await;
    shot(&d, "40-stock-page.png").await;
    // a figure for the note, not an assertion: click to drawn, as seen by the page and here
    let _ = std::fs::write(
        wyckoff_e2e::webdriver::screenshot_dir().join("stock-page-timing.txt"),
        format!("page click→drawn {page_ms} ms; webdriver click→list {wall_ms} ms\n"),
    );

    // Week view: a new reading from the command, the same events listed.
    click(&d, By::Id("period-week")).await;
    wait_for(&d, By::Css("#period-week[aria-pressed='true']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let weekly = wait_for(&d, By::Id("event-list"))
        .await
        .find_all(By::Css("li.event"))
        .await
        .unwrap()
        .len();
    assert_eq!(weekly, want.len());

    // With hindsight: the toggle says so and the list is the engine's hindsight reading.
    click(&d, By::Id("events-view-hindsight")).await;
    wait_attr(&d, By::Id("events-view-note"), "data-view", "hindsight").await;
    click(&d, By::Id("period-day")).await;
    wait_for(&d, By::Css("#period-day[aria-pressed='true']")).await;
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    while listed(&d).await != events.hindsight {
        assert!(
            Instant::now() < deadline,
            "the hindsight list never matched: {:?}",
            events.hindsight
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Add to the watchlist: the toggle flips, and the watchlist page has the row with the
    // last close and date of the bundled bars.
    let toggle = wait_for(&d, By::Id("watch-toggle")).await;
    let before = toggle.text().await.unwrap();
    toggle.click().await.unwrap();
    let deadline = Instant::now() + std::time::Duration::from_secs(20);
    while wait_for(&d, By::Id("watch-toggle"))
        .await
        .text()
        .await
        .unwrap()
        == before
    {
        assert!(Instant::now() < deadline, "the watch toggle never flipped");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    click(&d, By::Id("nav-watchlist")).await;
    let row = wait_for(&d, By::Css(".watch-row[data-code='000001']")).await;
    let cells = row.find_all(By::Tag("td")).await.unwrap();
    assert_eq!(cells[2].text().await.unwrap(), last.close, "last close");
    assert!(
        cells[6].text().await.unwrap().contains(&last.date),
        "as-of date"
    );
    shot(&d, "41-watchlist.png").await;

    // Dark theme from Settings: the chart is drawn again in the theme's colours.
    click(&d, By::Id("nav-settings")).await;
    wait_for(&d, By::Id("set-theme"))
        .await
        .send_keys("深色")
        .await
        .unwrap();
    click(&d, By::Id("settings-save")).await;
    wait_attr(&d, By::Tag("html"), "data-theme", "dark").await;
    click(&d, By::Id("nav-watchlist")).await;
    click(&d, By::Css(".watch-row[data-code='000001'] button.link")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    assert_chart_painted(&d).await;
    shot(&d, "42-stock-page-dark.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn stock_page_lists_the_engines_events_over_the_drawn_chart() {
    let (want, last) = expected().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "market", move |d| market_scenario(d, want, last)).await;
}
