//! WebDriver test of chart notes and the review page in the real app:
//! the mock model calls `annotate_chart` (no approval asked), the note is listed beside the
//! stock's chart with the agent as author and drawn on the chart (pixels of the agent's
//! colour in the chart's element screenshot), the user removes it (the colour leaves the
//! chart) and draws a line of their own from the Note… form; the review page lists a saved
//! screen's candidate and opens the stock at its signal day. Needs `cargo build -p
//! wyckoff-cli` first (it saves the screen).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)] // the pixel counts go to the log

use serde_json::json;
use thirtyfour::prelude::*;
use wyckoff_e2e::webdriver::{
    TauriDriver, click, mock_model_settings, run_scenario, send, shot, wait_attr, wait_for,
    wait_for_answer,
};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

/// The agent's notes are drawn in this colour (`AGENT_COLOR` in ui/src/pages/chartNotes.ts).
const AGENT_RGB: (u8, u8, u8) = (0xc0, 0x26, 0xd3);

/// Pixels of a PNG near the agent's colour: within 48 of it in RGB, for the stroke's
/// antialiasing. The box's 12 % fill, the violet MA20 line (#8b5cf6, 83 away) and where
/// the lines cross the candles stay out.
fn agent_pixels(png_bytes: &[u8]) -> usize {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("screenshot in {other:?}"),
    };
    let (r, g, b) = AGENT_RGB;
    let near = |c: u8, want: u8| i32::from(c.abs_diff(want)).pow(2);
    buf[..info.buffer_size()]
        .chunks_exact(step)
        .filter(|p| near(p[0], r) + near(p[1], g) + near(p[2], b) <= 48 * 48)
        .count()
}

/// Polls the chart's element screenshot until `ok` holds for its agent-coloured pixel
/// count (the notes are painted a frame after the chart), else fails with the last count.
async fn chart_agent_pixels(d: &WebDriver, what: &str, ok: impl Fn(usize) -> bool) -> usize {
    let mut last = 0;
    for _ in 0..40 {
        let chart = wait_for(d, By::Id("chart-canvas")).await;
        last = agent_pixels(&chart.screenshot_as_png().await.unwrap());
        if ok(last) {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    panic!("{what}: {last} pixels of the agent's colour on the chart");
}

async fn scenario(d: WebDriver) {
    send(&d, "在 000001 的日线上框出 2020 年春的交易区间").await;
    wait_for_answer(&d, "已在图上框出交易区间").await;
    wait_attr(
        &d,
        By::Css(".tool-card[data-tool='annotate_chart']"),
        "data-status",
        "ok",
    )
    .await;

    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys("000001").await.unwrap();
    click(&d, By::Css(".search-hit[data-code='000001']")).await;
    wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let note = wait_for(
        &d,
        By::Css("#chart-notes li.chart-note[data-author='agent'][data-kind='box']"),
    )
    .await;
    let text = note.text().await.unwrap();
    assert!(
        text.contains("区间框 2020-03-02 → 2020-04-30 · 12–14") && text.contains("Agent（对话"),
        "{text}"
    );
    // Drawn: the box (inside the chart's opening view of the last 250 bars) is outlined in
    // the agent's colour, a perimeter of some hundreds of pixels.
    let drawn = chart_agent_pixels(&d, "the agent's box is not drawn", |n| n >= 200).await;
    shot(&d, "95-agent-chart-note.png").await;

    // The user removes the agent's note, and it leaves the chart …
    click(&d, By::Css("#chart-notes li.chart-note .chart-note-remove")).await;
    wait_for(&d, By::Id("no-chart-notes")).await;
    let left = chart_agent_pixels(&d, "the removed box is still drawn", |n| n <= 5).await;
    eprintln!("agent-coloured chart pixels: {drawn} with the note, {left} after removing it");
    // … and draws a line of their own.
    click(&d, By::Id("note-open")).await;
    let price = wait_for(&d, By::Id("note-price")).await;
    price.send_keys("10.5").await.unwrap();
    click(&d, By::Id("note-save")).await;
    let mine = wait_for(
        &d,
        By::Css("#chart-notes li.chart-note[data-author='user'][data-kind='line']"),
    )
    .await;
    assert!(mine.text().await.unwrap().contains("支撑/阻力线 10.5"));
    shot(&d, "96-user-chart-note.png").await;

    // The review page opens the saved screen's candidate at its signal day.
    click(&d, By::Id("nav-review")).await;
    click(
        &d,
        By::Css(".review-row[data-code='000001'][data-day='20190116'] .review-open"),
    )
    .await;
    wait_attr(&d, By::Id("replay-bar"), "data-cursor", "20190116").await;
    shot(&d, "97-review-opens-stock.png").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs Xvfb, tauri-driver, WebKitWebDriver and a session bus"]
async fn the_agents_note_is_drawn_and_removable_and_review_opens_the_stock() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Route::Openai,
        OpenAiStream::new()
            .role()
            .tool_call(
                0,
                "call_note_1",
                "annotate_chart",
                &[json!({"code": "000001", "kind": "box", "from": "2020-03-02", "to": "2020-04-30", "low": 12.0, "high": 14.0}).to_string()],
            )
            .finish("tool_calls")
            .usage(1200, 30, 0)
            .done()
            .response(),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已在图上框出交易区间。"]),
    );

    let home = tempfile::tempdir().unwrap();
    // A saved screen for the review page (000001 is among its candidates).
    let out = wyckoff_e2e::wyckoff_cli(home.path())
        .args(["screen", "--as-of", "2019-01-16", "--save", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    mock_model_settings(home.path(), &format!("{}/v1", server.url()));
    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    run_scenario(&driver, "annotations", scenario).await;
}
