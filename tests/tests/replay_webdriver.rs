//! WebDriver test of replay on the stock page in the real app with no
//! model: start at the bar of a mark the engine could only place bars later, label it in
//! training, step with → — the mark is listed exactly from its known-on close, not a bar
//! before — and the training score turns from pending to a hit there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use thirtyfour::prelude::*;
use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_e2e::webdriver::{TauriDriver, click, fill, run_scenario, shot, wait_attr, wait_for};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_time::iso;

/// A mark of 000001's daily chart placed after its own bar: label, bar date, the dates of
/// the bars from it to its known-on close (both included).
struct Late {
    label: String,
    date: u32,
    steps: Vec<u32>,
}

async fn late_mark() -> Late {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let chart = build_chart(&md, "000001", Period::Day).await.unwrap();
    let dates = &chart.bars.dates;
    let e = chart
        .reading
        .known_events
        .iter()
        // Known 2–10 bars after its bar, and the only mark on that bar.
        .find(|e| {
            let (Some(k), Some(at)) = (e.known_on, dates.iter().position(|d| *d == e.date)) else {
                return false;
            };
            let known_at = dates.iter().position(|d| *d == k).unwrap_or(0);
            let alone = chart
                .reading
                .known_events
                .iter()
                .filter(|o| o.date == e.date)
                .count()
                == 1;
            (2..=10).contains(&(known_at - at)) && alone
        })
        .expect("000001 has a mark known a few bars after its own");
    let from = dates.iter().position(|d| *d == e.date).unwrap();
    let to = dates.iter().position(|d| Some(*d) == e.known_on).unwrap();
    Late {
        label: e.label.clone(),
        date: e.date,
        steps: dates[from..=to].to_vec(),
    }
}

async fn wait_text(d: &WebDriver, id: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = wait_for(d, By::Id(id))
            .await
            .text()
            .await
            .unwrap_or_default();
        if text == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "#{id} shows {text:?}, not {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn listed(d: &WebDriver, mark: &Late) -> bool {
    let css = format!(
        "#event-list li.event[data-label='{}'][data-date='{}']",
        mark.label, mark.date
    );
    !d.find_all(By::Css(css)).await.unwrap().is_empty()
}

async fn scenario(d: WebDriver, mark: Late) {
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;

    fill(&d, By::Id("replay-start"), &iso(mark.date)).await;
    click(&d, By::Id("replay-begin")).await;
    let first = mark.steps[0].to_string();
    wait_attr(&d, By::Id("replay-bar"), "data-cursor", &first).await;
    wait_text(&d, "as-of", &iso(mark.steps[0])).await;
    click(&d, By::Id("replay-training")).await;
    click(
        &d,
        By::Css(format!(".replay-label[data-label='{}']", mark.label)),
    )
    .await;
    wait_attr(&d, By::Id("replay-score"), "data-pending", "1").await;
    shot(&d, "86-replay-start.png").await;

    let body = wait_for(&d, By::Tag("body")).await;
    for (i, date) in mark.steps.iter().enumerate() {
        let known = i == mark.steps.len() - 1;
        if i > 0 {
            body.send_keys(Key::Right).await.unwrap();
            wait_attr(&d, By::Id("replay-bar"), "data-cursor", &date.to_string()).await;
        }
        // The page shows that close's data before its list is read.
        wait_text(&d, "as-of", &iso(*date)).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while listed(&d, &mark).await != known {
            assert!(
                Instant::now() < deadline,
                "{} of {} listed={} on {date}",
                mark.label,
                mark.date,
                !known
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let want = if known { ("1", "0") } else { ("0", "1") };
        let score = wait_for(&d, By::Id("replay-score")).await;
        assert_eq!(
            (
                score.attr("data-hits").await.unwrap().unwrap_or_default(),
                score
                    .attr("data-pending")
                    .await
                    .unwrap()
                    .unwrap_or_default()
            ),
            (want.0.to_owned(), want.1.to_owned()),
            "on {date}"
        );
    }
    shot(&d, "87-replay-mark-known.png").await;

    click(&d, By::Id("replay-exit")).await;
    wait_for(&d, By::Id("replay-form")).await;
    // The session was kept: starting again shows it.
    // (training stays on between replays)
    click(&d, By::Id("replay-begin")).await;
    let past = wait_for(&d, By::Id("replay-past")).await;
    assert!(past.text().await.unwrap().contains("000001 1/1"));
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn replay_shows_a_mark_only_from_its_known_on_close_and_scores_training() {
    let mark = late_mark().await;
    let home = tempfile::tempdir().unwrap();
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "replay", move |d| scenario(d, mark)).await;
}
