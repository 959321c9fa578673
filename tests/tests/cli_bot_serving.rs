//! End-to-end: who serves a chat bot, and what its chat hears of decisions made
//! elsewhere, through the real `wyckoff` binary against a local fake Telegram Bot API
//! and the mock model vendor. Two `wyckoff bot run` on one data home never poll the bot
//! at once (the real API answers the second poller 409 Conflict): the first serves, the
//! second stands by and takes over when the first is killed. A write a bot's turn queued
//! and the owner allowed with `wyckoff approvals allow` (or denied) is told to the chat
//! once, with the call's result in one line and the conversation's follow-up answer; a
//! decision from the chat is recorded as the bot's sender's, not as a policy.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::path::Path;
use std::time::{Duration, Instant};

use bots::{FakeTelegram, KEY, Running, request_in};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::{free_cash, set_cash_call};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-bot-e2e-SECRET-token";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_TG";
const ENV: [(&str, &str); 2] = [KEY, (TOKEN_VAR, TOKEN)];

async fn ok(home: &Path, args: &[&str]) -> String {
    bots::ok(home, &ENV, args).await
}

async fn setup(bot_args: &[&str]) -> (tempfile::TempDir, MockServer, FakeTelegram) {
    let tg = FakeTelegram::start(TOKEN).await;
    let (home, server) = bots::setup_bot(&ENV, "tg", "telegram", &tg.url, bot_args).await;
    (home, server, tg)
}

async fn pair(home: &Path, tg: &FakeTelegram, from: i64, chat: i64, kind: &str) {
    tg.pair(home, &ENV, from, chat, kind).await;
}

/// A paired sender asks for a write; the bot answers with the request waiting. Its id
/// and code.
async fn queue_write(
    server: &MockServer,
    tg: &FakeTelegram,
    chat: i64,
    call: &str,
) -> (String, String) {
    let before = tg.sent_to(chat).len();
    server.push(Route::Openai, set_cash_call(call, 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    tg.message(chat, chat, "private", "把现金设为 5000");
    let sent = tg.wait_sent(chat, before + 1).await;
    request_in(sent.last().unwrap())
}

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

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn one_process_serves_a_bot_and_the_one_standing_by_takes_over_when_it_dies() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let mut first = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;

    // A second server on the same data home stands by: it never polls beside the first.
    let _second = Running::start(h, &ENV);
    tokio::time::sleep(Duration::from_secs(3)).await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["第一个进程的回答。"]),
    );
    tg.message(7, 7, "private", "在吗");
    let sent = tg.wait_sent(7, 2).await;
    assert!(sent[1].contains("第一个进程的回答。"), "{sent:?}");
    assert_eq!(
        tg.state.lock().unwrap().max_in_flight,
        1,
        "two processes polled at once"
    );
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // The first dies without a word: the second takes the bot over and answers.
    let _ = first.0.kill();
    let _ = first.0.wait();
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["接手后的回答。"]),
    );
    tg.message(7, 7, "private", "还在吗");
    let sent = tg.wait_sent(7, 3).await;
    assert!(sent[2].contains("接手后的回答。"), "{sent:?}");
    assert_eq!(sent.len(), 3, "answered twice: {sent:?}");
    assert_eq!(
        tg.state.lock().unwrap().max_in_flight,
        1,
        "two processes polled at once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_made_outside_the_chat_is_told_there_once_with_the_conversations_answer() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;

    // Allowed with the CLI: the call runs, the conversation answers, the chat hears both.
    let (id, _) = queue_write(&server, &tg, 7, "call_cash_1").await;
    assert_eq!(free_cash(h).await, None);
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金，接下来看什么？"]),
    );
    ok(h, &["approvals", "allow", &id]).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
    let sent = tg.wait_sent(7, 3).await;
    let told = &sent[2];
    // The verdict with the call's result in one line, then the conversation's answer.
    assert_eq!(
        told.lines().next().unwrap(),
        format!("✅ 已批准并执行 调仓操作（{id}）：可用资金已设为 5000"),
        "{told}"
    );
    assert!(
        told.contains("已按你的批准调整好现金，接下来看什么？"),
        "{told}"
    );
    quiet(&tg, 7, 3).await;

    // The conversation goes on in the chat after it.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，继续。"]),
    );
    tg.message(7, 7, "private", "继续");
    let sent = tg.wait_sent(7, 4).await;
    assert!(sent[3].contains("好的，继续。"), "{sent:?}");
    let last = server
        .requests_to(Route::Openai)
        .into_iter()
        .last()
        .unwrap();
    assert!(
        last.body
            .to_string()
            .contains("已按你的批准调整好现金，接下来看什么？"),
        "the follow-up answer is not in the conversation the chat continues"
    );

    // Denied with the CLI: said so, nothing ran.
    let (id, _) = queue_write(&server, &tg, 7, "call_cash_2").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["好的，不调。"]),
    );
    ok(h, &["approvals", "deny", &id, "--reason", "先不动"]).await;
    let sent = tg.wait_sent(7, 6).await;
    assert!(
        sent[5].contains(&format!("已拒绝 调仓操作（{id}）")),
        "{}",
        sent[5]
    );
    assert!(sent[5].contains("好的，不调。"), "{}", sent[5]);
    quiet(&tg, 7, 6).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_from_the_chat_is_the_senders_and_is_not_told_twice() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;
    // Decided from the chat by an approver: answered there once, recorded as the bot's
    // sender's decision.
    ok(h, &["bot", "approver", "tg", "7"]).await;
    let (id, code) = queue_write(&server, &tg, 7, "call_cash_3").await;
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按批准执行。"]),
    );
    tg.message(7, 7, "private", &format!("/approve {id} {code}"));
    let sent = tg.wait_sent(7, 3).await;
    assert!(sent[2].contains(&format!("已批准 {id}")), "{}", sent[2]);
    quiet(&tg, 7, 3).await;
    let log: Value = serde_json::from_str(&ok(h, &["approvals", "log", "--json"]).await).unwrap();
    let by: Vec<&Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["decision"] == "allowed" || e["decision"] == "denied")
        .map(|e| &e["decided_by"])
        .collect();
    assert_eq!(by.len(), 1, "{log}");
    assert_eq!(
        by[0],
        &json!({"type": "bot", "bot": "tg", "sender": "7", "label": "user7"})
    );
    let text = ok(h, &["approvals", "log"]).await;
    assert!(text.contains("bot tg: user7 (7)"), "{text}");
}
