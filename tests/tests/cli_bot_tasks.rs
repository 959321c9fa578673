//! End-to-end: a background task a chat bot's turn starts (`/screen` runs the funnel in
//! the background) sends its result back to the chat when it finishes, through the real
//! `wyckoff bot run` against a local fake Telegram Bot API and the mock model vendor over
//! a fresh data home's bundled bars. The chat gets the turn's answer at once, then, once,
//! the task's line with the conversation's answer to its completion; nothing is sent
//! twice in the polls after.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::time::{Duration, Instant};

use bots::{FakeTelegram, KEY, Running};
use serde_json::json;
use wyckoff_mock_vendor::{OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-bot-e2e-SECRET-token";
const ENV: [(&str, &str); 2] = [KEY, ("WYCKOFF_BOT_TOKEN_TG", TOKEN)];

/// No message reaches `chat` for a few polls more.
async fn quiet(tg: &FakeTelegram, chat: i64, had: usize) {
    let polls = tg.state.lock().unwrap().answered;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tg.state.lock().unwrap().answered < polls + 4 {
        assert!(Instant::now() < deadline, "the bot stopped polling");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tg.sent_to(chat).len(), had, "{:?}", tg.sent_to(chat));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_screen_from_the_chat_sends_its_result_when_the_task_finishes() {
    let tg = FakeTelegram::start(TOKEN).await;
    let (home, server) = bots::setup_bot(&ENV, "tg", "telegram", &tg.url, &[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    tg.pair(h, &ENV, 7, 7, "private").await;

    // Each answer goes to the request it is meant for: the turn's next round says the
    // screen started; the completion's turn reads its result. Its words quote no code or
    // figure, which the grounding check would hold against the screen's result.
    server.push(
        Route::Openai,
        OpenAiStream::tool_call_response("c_scr", "screen_stocks", &json!({"as_of": "2019-01-31"}))
            .when_body_contains("用威科夫漏斗筛选全市场"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已开始筛选，完成后告诉你。"])
            .when_body_contains("全市场扫描已提交后台执行"),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["筛选完成，候选股和理由都在结果里。"])
            .when_body_contains("<tool-name>screen_stocks</tool-name>"),
    );
    tg.message(7, 7, "private", "/screen");

    // The turn's own answer at once: the task submitted, the model's words.
    let sent = tg.wait_sent(7, 2).await;
    let answer = &sent[1];
    assert!(answer.contains("🔧 screen_stocks ✓"), "{answer}");
    assert!(answer.contains("已开始筛选，完成后告诉你。"), "{answer}");
    assert!(!answer.contains("筛选完成"), "{answer}");

    // Then, once the screen finished and its completion was answered, that answer.
    let sent = tg.wait_sent(7, 3).await;
    let told = &sent[2];
    let mut lines = told.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("✅ 后台任务完成：全市场扫描（"), "{told}");
    assert!(
        told.contains("筛选完成，候选股和理由都在结果里。"),
        "{told}"
    );
    // The completion's turn saw the task's result.
    let requests = server.requests_to(Route::Openai);
    assert_eq!(
        requests.len(),
        3,
        "one turn of two rounds, one completion turn"
    );
    assert!(
        requests[2]
            .raw_body
            .contains("<tool-name>screen_stocks</tool-name>")
    );

    // Told once: the polls after send nothing more.
    quiet(&tg, 7, 3).await;
    assert_eq!(server.requests_to(Route::Openai).len(), 3);
}
