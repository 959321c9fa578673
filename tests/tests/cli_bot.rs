//! End-to-end: the Telegram bot through the real `wyckoff` binary (`wyckoff bot run`)
//! against a local fake Telegram Bot API speaking its documented JSON (`getUpdates` with
//! `update_id`/`message{message_id, from{id}, chat{id,type}, text}`, `sendMessage`) and
//! the mock model vendor. An unknown sender gets a pairing code and the model hears
//! nothing; once the owner pairs it, "分析 000001" goes through the pipeline with the
//! app's tools minus the writers; a call of `update_portfolio` waits in the inbox and is
//! decided only by an approver with the one-time code; the budget and the rate limit hold
//! at their limits; dropped connections are retried with a growing wait and a redelivered
//! update is answered once; the token is in neither the database nor the audit logs.
//! Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use bots::{FakeTelegram, KEY, Running, WRITERS, code_in, offered};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::{free_cash, set_cash_call, tool_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const TOKEN: &str = "987654321:AAE-bot-e2e-SECRET-token";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_TG";
const ENV: [(&str, &str); 2] = [KEY, (TOKEN_VAR, TOKEN)];

async fn wyckoff(home: &Path, args: &[&str]) -> std::process::Output {
    bots::wyckoff(home, &ENV, args).await
}

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

async fn assert_no_secret(home: &Path) {
    bots::assert_no_secret(home, &ENV, TOKEN, "SECRET-token").await;
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_sender_gets_a_code_and_only_a_paired_one_reaches_the_model_with_no_writer() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();

    // What the app's model is offered: a plain turn's tools.
    server.push(Route::Openai, OpenAiStream::text_response(&["好的。"]));
    ok(h, &["run", "--json", "你好"]).await;
    let app_tools = offered(&server.requests_to(Route::Openai)[0]);
    for writer in WRITERS {
        assert!(
            app_tools.contains(writer),
            "the app offers {writer}: {app_tools:?}"
        );
    }
    server.clear_requests();

    let _bot = Running::start(h, &ENV);
    // A stranger, whose message even carries the bot's token.
    tg.message(42, 42, "private", &format!("分析 000001 token {TOKEN}"));
    let sent = tg.wait_sent(42, 1).await;
    let code = code_in(&sent[0]);
    assert_eq!(code.len(), 8);
    assert!(
        code.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "{code}"
    );
    assert!(
        sent[0].contains(&format!("wyckoff bot pair {code}")),
        "{}",
        sent[0]
    );
    // Another message while unpaired: the same code again, still no model.
    tg.message(42, 42, "private", "在吗");
    let sent = tg.wait_sent(42, 2).await;
    assert_eq!(code_in(&sent[1]), code);
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    let listed: Value = serde_json::from_str(&ok(h, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["pending_pairings"][0]["code"], code.as_str());
    assert_eq!(listed["bots"][0]["token_set"], true);

    // A wrong code pairs nobody.
    let out = wyckoff(h, &["bot", "pair", "ZZZZZZZZ"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", wyckoff_e2e::show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ZZZZZZZZ"));

    ok(h, &["bot", "pair", &code.to_lowercase()]).await;
    server.push(
        Route::Openai,
        tool_call("call_an_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["**平安银行**：处于吸筹阶段。"]),
    );
    tg.message(42, 42, "private", "分析 000001");
    let sent = tg.wait_sent(42, 3).await;
    let answer = &sent[2];
    assert!(answer.contains("*平安银行*：处于吸筹阶段。"), "{answer}");
    assert!(answer.contains("analyze_stock"), "no tool line: {answer}");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2, "one tool round and the answer");
    assert!(
        requests[0]
            .last_user_text()
            .unwrap()
            .contains("分析 000001")
    );
    let expected: BTreeSet<String> = app_tools
        .iter()
        .filter(|t| !WRITERS.contains(&t.as_str()))
        .cloned()
        .collect();
    assert_eq!(offered(&requests[0]), expected);

    // The chat's conversation is a conversation like the app's.
    let conversations: Value =
        serde_json::from_str(&ok(h, &["conversations", "list", "--json"]).await).unwrap();
    assert!(
        conversations.as_array().unwrap().iter().any(|c| c["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("telegram · tg")),
        "{conversations}"
    );
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let kinds: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    for kind in ["inbound", "pairing_code", "paired"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| **k == "inbound").count(), 3);
    assert_no_secret(h).await;
    assert_eq!(tg.state.lock().unwrap().bad_token, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_waits_in_the_inbox_and_only_an_approver_with_its_code_decides_it() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;

    server.push(Route::Openai, set_cash_call("call_cash_1", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    tg.message(7, 7, "private", "把现金设为 5000");
    let sent = tg.wait_sent(7, 2).await;
    let ask = &sent[1];
    assert_eq!(
        free_cash(h).await,
        None,
        "the portfolio changed before approval"
    );
    let inbox: Value =
        serde_json::from_str(&ok(h, &["approvals", "list", "--json"]).await).unwrap();
    let requests = inbox.as_array().unwrap();
    assert_eq!(requests.len(), 1, "{inbox}");
    assert_eq!(requests[0]["tool"], "update_portfolio");
    assert_eq!(requests[0]["status"], "pending");
    assert_eq!(requests[0]["requested_by"], "bot:tg");
    let id = requests[0]["id"].as_str().unwrap().to_owned();
    let pattern = format!("/approve {id} ");
    let code: String = ask
        .split(&pattern)
        .nth(1)
        .unwrap_or_else(|| panic!("no approval code: {ask}"))
        .chars()
        .take(6)
        .collect();

    // Paired but not an approver: refused, still pending.
    tg.message(7, 7, "private", &format!("/approve {id} {code}"));
    let sent = tg.wait_sent(7, 3).await;
    assert!(sent[2].contains("审批人"), "{}", sent[2]);
    ok(h, &["bot", "approver", "tg", "7"]).await;
    // An approver with a wrong code: refused.
    tg.message(7, 7, "private", &format!("/approve {id} WRONG1"));
    let sent = tg.wait_sent(7, 4).await;
    assert!(sent[3].contains("审批码不对"), "{}", sent[3]);
    let still: Value =
        serde_json::from_str(&ok(h, &["approvals", "list", "--json"]).await).unwrap();
    assert_eq!(still[0]["status"], "pending");
    assert_eq!(free_cash(h).await, None);

    // The approver with the one-time code: allowed and run; the conversation is told.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已批准：现金已设为 5000。"]),
    );
    tg.message(7, 7, "private", &format!("/approve {id} {code}"));
    let sent = tg.wait_sent(7, 5).await;
    assert!(
        sent[4].contains(&format!("已批准 {id}，已执行。")),
        "{}",
        sent[4]
    );
    // The conversation's answer to the decision comes with it.
    assert!(sent[4].contains("已批准：现金已设为 5000。"), "{}", sent[4]);
    assert_eq!(free_cash(h).await, Some(5000.0));
    // The code was used once.
    tg.message(7, 7, "private", &format!("/deny {id} {code}"));
    let sent = tg.wait_sent(7, 6).await;
    assert!(sent[5].contains("审批码不对"), "{}", sent[5]);

    let audit: Value = serde_json::from_str(&ok(h, &["approvals", "log", "--json"]).await).unwrap();
    let decisions: Vec<(&str, &str)> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["decision"].as_str().unwrap(), e["tool"].as_str().unwrap()))
        .collect();
    assert!(
        decisions.contains(&("queued", "update_portfolio")),
        "{decisions:?}"
    );
    assert!(
        decisions.contains(&("allowed", "update_portfolio")),
        "{decisions:?}"
    );
    let log = ok(h, &["bot", "log", "--json"]).await;
    assert!(
        log.contains("decision_refused") && log.contains("\"decision\""),
        "{log}"
    );
    assert_no_secret(h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_rate_limit_holds_at_its_limit_and_says_so() {
    let (home, server, tg) = setup(&["--per-minute", "2"]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 9, 9, "private").await;
    for answer in ["一", "二"] {
        server.push(Route::Openai, OpenAiStream::text_response(&[answer]));
    }
    for (n, text) in ["第一问", "第二问", "第三问"].into_iter().enumerate() {
        tg.message(9, 9, "private", text);
        tg.wait_sent(9, n + 2).await;
    }
    let sent = tg.sent_to(9);
    assert_eq!(&sent[1..3], ["一", "二"]);
    assert_eq!(sent[3], "发送太频繁：每分钟最多 2 条，请稍后再试。");
    assert_eq!(server.requests_to(Route::Openai).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daily_budget_holds_at_its_limit_and_says_so() {
    // One answer of the mock vendor costs 10 + 5 tokens: exactly the budget.
    let (home, server, tg) = setup(&["--daily-tokens", "15"]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 11, -100, "group").await;
    server.push(Route::Openai, OpenAiStream::text_response(&["第一答"]));
    server.push(Route::Openai, OpenAiStream::text_response(&["不该出现"]));
    tg.message(11, -100, "group", "第一问");
    let sent = tg.wait_sent(-100, 2).await;
    assert_eq!(sent[1], "第一答");
    tg.message(11, -100, "group", "第二问");
    let sent = tg.wait_sent(-100, 3).await;
    assert!(
        sent[2].contains("今日额度已用完") && sent[2].contains("15 / 15"),
        "{}",
        sent[2]
    );
    assert_eq!(server.requests_to(Route::Openai).len(), 1);

    // In a group the chat is never paired as a whole: another member gets a code.
    tg.message(12, -100, "group", "我也要问");
    let sent = tg.wait_sent(-100, 4).await;
    assert!(sent[3].contains("配对码"), "{}", sent[3]);
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn dropped_connections_are_retried_with_backoff_and_no_update_is_answered_twice() {
    let (home, _server, tg) = setup(&[]).await;
    let h = home.path();
    tg.state.lock().unwrap().drop_next = 3;
    let _bot = Running::start(h, &ENV);
    tg.message(5, 5, "private", "hello");
    tg.wait_sent(5, 1).await;
    let polls: Vec<(Instant, bool)> = tg.state.lock().unwrap().polls.clone();
    assert!(polls[..3].iter().all(|(_, dropped)| *dropped), "{polls:?}");
    // 200 ms, then 400 ms, then 800 ms between the attempts.
    let gaps: Vec<Duration> = polls.windows(2).take(3).map(|w| w[1].0 - w[0].0).collect();
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }
    assert!(gaps[2] > gaps[0], "{gaps:?}");

    // The API hands every update over again: none is answered a second time.
    tg.state.lock().unwrap().redeliver = true;
    tg.message(5, 5, "private", "again");
    tg.wait_sent(5, 2).await;
    let redelivered = {
        let s = tg.state.lock().unwrap();
        s.polls.len()
    };
    // A few more polls go by with nothing new to answer.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tg.state.lock().unwrap().polls.len() < redelivered + 3 {
        assert!(Instant::now() < deadline, "the bot stopped polling");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tg.sent_to(5).len(), 2, "{:?}", tg.sent_to(5));
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);
    assert_no_secret(h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_checks_the_token_and_a_wrong_one_is_refused() {
    let (home, _server, tg) = setup(&[]).await;
    let h = home.path();
    let out = ok(h, &["bot", "test", "tg"]).await;
    assert!(out.contains("wyckoff_desk_bot"), "{out}");
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "tg"]).env(TOKEN_VAR, "1:wrong");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401") && !err.contains("1:wrong"), "{err}");
    assert_eq!(tg.state.lock().unwrap().bad_token, 1);
}
