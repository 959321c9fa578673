//! End-to-end: a Telegram chat asking the desk to analyse one stock gets the answer and
//! then the stock's daily chart as a photo, through the real `wyckoff` binary (`wyckoff
//! bot run`) against a local fake Telegram Bot API that takes `sendPhoto` as
//! multipart/form-data (`chat_id`, `caption`, the `photo` file) and the mock model vendor.
//! The photo is a PNG that decodes, sent to the asking chat, its caption naming the code
//! and the date of the newest cached bar (read from the cache here, not from the bot); an
//! unknown code gets the answer and a line saying there is no chart, and no photo; a
//! question that is not one stock's analysis gets text only; a stock the engine reads a
//! schematic on has every label `wyckoff events` lists on the bars drawn in its caption and
//! a mark in the picture. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::path::Path;
use std::time::Duration;

use bots::{FakeTelegram, KEY, Running};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_market::cache::BarTable;
use wyckoff_market::{MarketConfig, MarketData, StockCode};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "123456789:AAE-bot-images-token";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_TG";
const ENV: [(&str, &str); 2] = [KEY, (TOKEN_VAR, TOKEN)];

async fn ok(home: &Path, args: &[&str]) -> String {
    bots::ok(home, &ENV, args).await
}

/// The dates of `code`'s cached daily bars in the home, oldest first.
async fn cached_dates(home: &Path, code: &str) -> Vec<u32> {
    let md = MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap();
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
        .iter()
        .map(|b| b.date)
        .collect()
}

/// The newest cached daily bar of `code` in the home, as the cache holds it.
async fn last_cached_date(home: &Path, code: &str) -> u32 {
    let md = MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap();
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
        .last()
        .expect("bundled bars")
        .date
}

/// The decoded RGB pixels.
fn png_pixels(bytes: &[u8]) -> Vec<u8> {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    px.truncate(info.buffer_size());
    px
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    (info.width, info.height)
}

/// The model's turn for one stock's analysis: `analyze_stock` first (the desk insists on
/// real data before an answer about a stock), then `answer`.
fn analysis(server: &MockServer, code: &str, answer: &str) {
    server.push(
        Route::Openai,
        tool_call(
            &format!("call_{code}"),
            "analyze_stock",
            json!({"code": code}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&[answer]));
}

// ---------------------------------------------------------------- the test

#[tokio::test(flavor = "multi_thread")]
async fn analysing_a_stock_sends_its_daily_chart_as_a_photo_and_an_unknown_code_says_there_is_none()
{
    let tg = FakeTelegram::start(TOKEN).await;
    let (home, server) = bots::setup_bot(&ENV, "tg", "telegram", &tg.url, &[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);

    // Pair sender 42.
    tg.pair(h, &ENV, 42, 42, "private").await;
    // The bot opened the data home, so the bundled bars are in its cache.
    let last = last_cached_date(h, "000001").await;
    let last_iso = format!(
        "{:04}-{:02}-{:02}",
        last / 10000,
        (last / 100) % 100,
        last % 100
    );

    // `/analyze 000001`: the answer, then the chart.
    analysis(&server, "000001", "平安银行：吸筹阶段。");
    tg.message(42, 42, "private", "/analyze 000001");
    let photos = tg.wait_photos(1).await;
    let sent = tg.wait_sent(42, 2).await;
    assert!(sent[1].ends_with("平安银行：吸筹阶段。"), "{}", sent[1]);
    let photo = &photos[0];
    assert_eq!(photo.chat_id, "42");
    assert_eq!(photo.content_type, "image/png");
    assert_eq!(photo.file_name, format!("000001-{last}.png"));
    assert_eq!(png_size(&photo.bytes), (960, 540), "the photo decodes");
    assert!(photo.caption.contains("000001"), "{}", photo.caption);
    assert!(
        photo.caption.contains(&format!("最后一根 {last_iso}")),
        "the caption names the last bar {last_iso}: {}",
        photo.caption
    );
    // The bundled bars end years ago: the caption says they are stale.
    assert!(photo.caption.contains("数据陈旧"), "{}", photo.caption);
    assert!(photo.caption.chars().count() <= 1024);
    {
        let s = tg.state.lock().unwrap();
        let answer_at = s.calls.iter().rposition(|c| c == "sendMessage").unwrap();
        let photo_at = s.calls.iter().position(|c| c == "sendPhoto").unwrap();
        assert!(
            answer_at < photo_at,
            "the photo after the answer: {:?}",
            s.calls
        );
    }

    // "分析 000001" as typed carries the chart too.
    analysis(&server, "000001", "再看一次。");
    tg.message(42, 42, "private", "分析 000001");
    let photos = tg.wait_photos(2).await;
    assert_eq!(photos[1].chat_id, "42");
    assert_eq!(
        photos[1].bytes, photo.bytes,
        "the same bars, the same picture"
    );

    // A stock that is nowhere, in a fresh conversation (a third turn would have the
    // desk compact this one, asking the model first): the answer, and a line saying
    // there is no chart.
    tg.message(42, 42, "private", "/new");
    tg.wait_sent(42, 4).await;
    analysis(&server, "688999", "找不到这只股票。");
    tg.message(42, 42, "private", "/analyze 688999");
    let sent = tg.wait_sent(42, 6).await;
    assert!(sent[4].ends_with("找不到这只股票。"), "{}", sent[4]);
    assert_eq!(
        sent[5],
        "没有 688999 的日线图：股票列表和本地缓存里都没有这个代码。"
    );

    // A question that is not one stock's analysis: text only.
    server.push(Route::Openai, OpenAiStream::text_response(&["你好！"]));
    tg.message(42, 42, "private", "你好");
    let sent = tg.wait_sent(42, 7).await;
    assert!(sent[6].ends_with("你好！"), "{}", sent[6]);
    // Give a stray photo time to arrive.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        tg.state.lock().unwrap().photos.len(),
        2,
        "no photo without a chart"
    );
    assert_eq!(tg.sent_to(42).len(), 7);

    // A stock the engine reads a schematic on: the caption lists every label the engine
    // placed on the bars drawn (as `wyckoff events` lists them) and the picture has the
    // orange mark of a label over a high.
    tg.message(42, 42, "private", "/new");
    tg.wait_sent(42, 8).await;
    analysis(&server, "300027", "华谊兄弟：派发。");
    tg.message(42, 42, "private", "/analyze 300027");
    let photos = tg.wait_photos(3).await;
    let caption = &photos[2].caption;
    assert!(caption.contains("结构：派发"), "{caption}");
    let first_drawn = cached_dates(h, "300027").await;
    let first_drawn = first_drawn[first_drawn.len() - 120];
    let events: Value =
        serde_json::from_str(&ok(h, &["events", "300027", "--json"]).await).unwrap();
    let labels: Vec<String> = events["marks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["mark"]["type"] == "event" && k["since"] == k["known_on"])
        .filter(|k| k["bar_date"].as_u64().unwrap() >= u64::from(first_drawn))
        .map(|k| {
            let d = k["bar_date"].as_u64().unwrap();
            format!(
                "{} {:04}-{:02}-{:02}",
                k["mark"]["event"].as_str().unwrap(),
                d / 10000,
                (d / 100) % 100,
                d % 100
            )
        })
        .collect();
    assert!(
        !labels.is_empty(),
        "the engine reads labels on 300027's last bars"
    );
    for label in &labels {
        assert!(caption.contains(label.as_str()), "{label} not in {caption}");
    }
    let orange = [0xc2, 0x41, 0x0c];
    assert!(
        png_pixels(&photos[2].bytes).chunks(3).any(|p| p == orange),
        "no label over a high drawn"
    );
}
