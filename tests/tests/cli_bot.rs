//! End-to-end: the Telegram bot through the real `wyckoff` binary (`wyckoff bot run`)
//! against a local fake Telegram Bot API speaking its documented JSON (`getUpdates` with
//! `update_id`/`message{message_id, from{id}, chat{id,type}, text}`, `sendMessage`) and
//! the mock model vendor. An unknown sender gets a pairing code and the model hears
//! nothing; once the owner pairs it, "分析 000001" goes through the pipeline with the
//! app's tools minus the writers; a call of `update_portfolio` waits in the inbox and is
//! decided only by an approver with the one-time code; the budget and the rate limit hold
//! at their limits; dropped connections are retried with a growing wait and a redelivered
//! update is answered once; the token is in neither the database nor the audit logs.
//! A tool's card is one line; `/portfolio`, `/alerts` and a skill reach the model as
//! their prompts, `/new` starts a conversation with no history; two members of one group
//! have a conversation each; a fourth stranger gets nothing while three codes wait;
//! `bot secret` refuses an empty standard input and (with a Secret Service) keeps the
//! token in the keychain only; `bot remove` forgets the bot and its senders, not its
//! conversations.
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
    // The tool's card is one line: its name, a tick and how long it took.
    let tool_line = answer.lines().next().unwrap();
    assert!(
        tool_line.starts_with("🔧 analyze_stock ✓ (") && tool_line.ends_with(" ms)"),
        "no tool line: {answer}"
    );
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
        ask.lines().next(),
        Some("⏳ update_portfolio: 等待审批"),
        "{ask}"
    );
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

/// The bots' conversations `conversations list --json` shows: their titles.
async fn bot_conversations(home: &Path) -> Vec<String> {
    let listed: Value =
        serde_json::from_str(&ok(home, &["conversations", "list", "--json"]).await).unwrap();
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["title"].as_str())
        .filter(|t| t.starts_with("telegram · tg"))
        .map(str::to_owned)
        .collect()
}

/// The user messages of a model request.
fn user_turns(request: &wyckoff_mock_vendor::RecordedRequest) -> Vec<String> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_secret_refuses_an_empty_stdin_and_says_how_to_pipe_it() {
    let (home, _server, _tg) = setup(&[]).await;
    let h = home.path();
    for stdin in ["", "  \n\t\n"] {
        let mut cmd = wyckoff_cli(h);
        cmd.args(["bot", "secret", "tg"])
            .env_remove(TOKEN_VAR)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let stdin = stdin.to_owned();
        let out = tokio::task::spawn_blocking(move || {
            use std::io::Write;
            let mut child = cmd.spawn().unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(stdin.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        })
        .await
        .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", wyckoff_e2e::show(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no token on stdin: pipe it in")
                && err.contains("wyckoff bot secret tg < token.txt"),
            "{err}"
        );
    }
    // Nothing was stored: without the environment's token the bot still has none.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "list", "--json"]).env_remove(TOKEN_VAR);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["bots"][0]["token_set"], false, "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_remove_forgets_the_bot_and_its_senders_but_keeps_its_conversations() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;
    server.push(Route::Openai, OpenAiStream::text_response(&["在的。"]));
    tg.message(7, 7, "private", "在吗");
    tg.wait_sent(7, 2).await;
    // A stranger's code waits too.
    tg.message(8, 8, "private", "你好");
    tg.wait_sent(8, 1).await;
    drop(bot);

    let out = ok(h, &["bot", "remove", "tg"]).await;
    assert_eq!(out.trim(), "removed bot tg");
    let listed: Value = serde_json::from_str(&ok(h, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed, json!({"bots": [], "pending_pairings": []}));
    // Its conversation stays, with what was said in it.
    let titles = bot_conversations(h).await;
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(titles[0].starts_with("telegram · tg · user7"), "{titles:?}");
    let out = wyckoff(h, &["bot", "run", "--poll-timeout", "1"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no bot to serve"),
        "{}",
        wyckoff_e2e::show(&out)
    );

    // Added again under the same name, it knows nobody: the old sender gets a code.
    ok(
        h,
        &[
            "bot",
            "add",
            "tg",
            "--kind",
            "telegram",
            "--api-url",
            &tg.url,
        ],
    )
    .await;
    let listed: Value = serde_json::from_str(&ok(h, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["bots"][0]["senders"], json!([]), "{listed}");
    let _bot = Running::start(h, &ENV);
    tg.message(7, 7, "private", "还在吗");
    let sent = tg.wait_sent(7, 3).await;
    code_in(&sent[2]);
    assert_eq!(server.requests_to(Route::Openai).len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_and_skills_reach_the_pipeline_and_new_starts_a_fresh_conversation() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let skills = h.join("skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("echo.md"),
        "---\ndescription: test\n---\n请复述：{user_input}（技能模板）",
    )
    .unwrap();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;

    // The commands become their prompts in the chat's conversation. (Diagnosing the
    // portfolio reads it first, as the loop guard asks of any such turn.)
    server.push(
        Route::Openai,
        tool_call("call_pf_1", "portfolio", json!({"mode": "diagnose"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["持仓诊断：空仓。"]),
    );
    tg.message(7, 7, "private", "/portfolio");
    let sent = tg.wait_sent(7, 2).await;
    assert!(
        sent[1].starts_with("🔧 portfolio ✓ (") && sent[1].ends_with("持仓诊断：空仓。"),
        "{}",
        sent[1]
    );
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2);
    let said = requests[0].last_user_text().unwrap();
    assert!(
        said.contains("诊断我的持仓") && !said.contains("/portfolio"),
        "{said}"
    );

    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["没有提醒规则。"]),
    );
    tg.message(7, 7, "private", "/alerts");
    let sent = tg.wait_sent(7, 3).await;
    assert_eq!(sent[2], "没有提醒规则。");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    let said = requests[2].last_user_text().unwrap();
    assert!(
        said.contains("列出我的提醒规则和最近触发的提醒") && !said.contains("/alerts"),
        "{said}"
    );
    let first_turns = user_turns(&requests[0]).len();
    assert!(
        requests[2].raw_body.contains("诊断我的持仓"),
        "the chat's second message is not in the first's conversation"
    );
    assert_eq!(bot_conversations(h).await.len(), 1);

    // /new: the next message starts a conversation of its own.
    tg.message(7, 7, "private", "/new");
    let sent = tg.wait_sent(7, 4).await;
    assert_eq!(sent[3], "好的，下一条消息开始新的对话。");
    assert_eq!(bot_conversations(h).await.len(), 2);
    server.push(Route::Openai, OpenAiStream::text_response(&["新对话。"]));
    tg.message(7, 7, "private", "从头说");
    let sent = tg.wait_sent(7, 5).await;
    assert_eq!(sent[4], "新对话。");
    let fresh = server.requests_to(Route::Openai).pop().unwrap();
    let turns = user_turns(&fresh);
    assert_eq!(turns.len(), first_turns, "{turns:?}");
    assert!(!fresh.raw_body.contains("诊断我的持仓"), "{turns:?}");
    assert!(!fresh.raw_body.contains("没有提醒规则。"), "{turns:?}");
    assert!(fresh.last_user_text().unwrap().contains("从头说"));
    assert_eq!(bot_conversations(h).await.len(), 2);

    // A skill from the chat is expanded as in the app.
    server.push(Route::Openai, OpenAiStream::text_response(&["复述完毕。"]));
    tg.message(7, 7, "private", "/echo 600519 茅台");
    let sent = tg.wait_sent(7, 6).await;
    assert_eq!(sent[5], "复述完毕。");
    let skilled = server.requests_to(Route::Openai).pop().unwrap();
    let said = skilled.last_user_text().unwrap();
    assert!(said.contains("请复述：600519 茅台（技能模板）"), "{said}");

    // An unknown command is the desk's refusal, and no model call.
    let before = server.requests_to(Route::Openai).len();
    tg.message(7, 7, "private", "/nosuch x");
    let sent = tg.wait_sent(7, 7).await;
    assert!(
        sent[6].starts_with("没有完成：") && sent[6].contains("/nosuch"),
        "{}",
        sent[6]
    );
    assert_eq!(server.requests_to(Route::Openai).len(), before);
    let log = ok(h, &["bot", "log", "--json"]).await;
    assert!(log.contains("new_conversation"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_paired_members_of_a_group_have_their_own_conversations() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 11, -100, "group").await;
    pair(h, &tg, 12, -100, "group").await;
    let says = [
        (11, "十一的问题", "答十一"),
        (12, "十二的问题", "答十二"),
        (11, "十一再问", "再答十一"),
    ];
    for (n, (from, text, answer)) in says.into_iter().enumerate() {
        server.push(Route::Openai, OpenAiStream::text_response(&[answer]));
        tg.message(from, -100, "group", text);
        let sent = tg.wait_sent(-100, n + 3).await;
        assert_eq!(sent[n + 2], answer);
    }
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 3);
    // The second member's conversation holds nothing of the first's, and back.
    assert!(requests[1].raw_body.contains("十二的问题"));
    for other in ["十一的问题", "答十一"] {
        assert!(!requests[1].raw_body.contains(other), "12 sees {other}");
    }
    assert!(requests[2].raw_body.contains("十一的问题") && requests[2].raw_body.contains("答十一"));
    for other in ["十二的问题", "答十二"] {
        assert!(!requests[2].raw_body.contains(other), "11 sees {other}");
    }
    let mut titles = bot_conversations(h).await;
    titles.sort();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles[0].starts_with("telegram · tg · user11"),
        "{titles:?}"
    );
    assert!(
        titles[1].starts_with("telegram · tg · user12"),
        "{titles:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fourth_stranger_gets_nothing_while_three_codes_wait() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    let mut codes = Vec::new();
    for stranger in [21, 22, 23] {
        tg.message(stranger, stranger, "private", "你好");
        codes.push(code_in(&tg.wait_sent(stranger, 1).await[0]));
    }
    // The fourth: no code, no answer at all, no model; the refusal is audited.
    tg.message(24, 24, "private", "你好");
    quiet(&tg, 24, 0).await;
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let refused: Vec<&Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "pairing_refused")
        .collect();
    assert_eq!(refused.len(), 1, "{log}");
    assert_eq!(refused[0]["sender_id"], "24");
    let listed: Value = serde_json::from_str(&ok(h, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["pending_pairings"].as_array().unwrap().len(), 3);

    // One code used: there is room again, and the fourth gets one.
    ok(h, &["bot", "pair", &codes[0]]).await;
    tg.message(24, 24, "private", "还在吗");
    let sent = tg.wait_sent(24, 1).await;
    assert_eq!(code_in(&sent[0]).len(), 8);
    assert!(server.requests_to(Route::Openai).is_empty());
}

/// The token given with `bot secret` on standard input goes to the keychain: the bot is
/// served with it, it is in no file of the data home, and `bot remove` deletes it.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a Secret Service (scripts/test runs it under dbus-run-session + gnome-keyring)"]
async fn bot_secret_keeps_the_token_in_the_keychain_only() {
    const KC_TOKEN: &str = "123456789:AAE-keychain-SECRET-token";
    let env = [KEY];
    let tg = FakeTelegram::start(KC_TOKEN).await;
    let (home, server) = bots::setup_bot(&env, "kc", "telegram", &tg.url, &[]).await;
    let h = home.path();
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "secret", "kc"])
        .envs(env)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = cmd.spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{KC_TOKEN}").unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", wyckoff_e2e::show(&out));
    let stored = wyckoff_config::Secrets::system()
        .get_bot(&wyckoff_config::BotSecret("kc".into()))
        .map(|(v, _)| v.expose().to_owned());
    assert_eq!(stored.as_deref(), Some(KC_TOKEN));

    let listed: Value =
        serde_json::from_str(&bots::ok(h, &env, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["bots"][0]["token_set"], true, "{listed}");
    let out = bots::ok(h, &env, &["bot", "test", "kc"]).await;
    assert!(out.contains("wyckoff_desk_bot"), "{out}");
    {
        let _bot = Running::start(h, &env);
        tg.message(42, 42, "private", "你好");
        code_in(&tg.wait_sent(42, 1).await[0]);
    }
    assert_eq!(tg.state.lock().unwrap().bad_token, 0);
    assert!(server.requests_to(Route::Openai).is_empty());
    let mut holding = Vec::new();
    let mut dirs = vec![h.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if std::fs::read(&path)
                .unwrap()
                .windows(KC_TOKEN.len())
                .any(|w| w == KC_TOKEN.as_bytes())
            {
                holding.push(path);
            }
        }
    }
    assert!(holding.is_empty(), "the token is stored in {holding:?}");
    bots::assert_no_secret(h, &env, KC_TOKEN, "keychain-SECRET").await;

    bots::ok(h, &env, &["bot", "remove", "kc"]).await;
    let gone = wyckoff_config::Secrets::system().get_bot(&wyckoff_config::BotSecret("kc".into()));
    assert!(gone.is_none(), "bot remove left the token in the keychain");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_answer_arrives_in_parts_and_a_part_telegram_cannot_parse_as_plain_text() {
    let (home, server, tg) = setup(&[]).await;
    let h = home.path();
    tg.state.lock().unwrap().strict_markdown = true;
    let _bot = Running::start(h, &ENV);
    pair(h, &tg, 7, 7, "private").await;
    // 100 lines of 61 UTF-16 units: more than one message holds; one `_` in the second.
    let answer: Vec<String> = (0..100)
        .map(|i| {
            let word = if i == 80 {
                "snake_case"
            } else {
                "量价关系威科夫阶段"
            };
            format!(
                "第{i:03}行：{word}{}",
                "量".repeat(54 - word.chars().count())
            )
        })
        .collect();
    let answer = answer.join("\n");
    assert!(answer.lines().all(|l| l.encode_utf16().count() == 60));
    server.push(Route::Openai, OpenAiStream::text_response(&[&answer]));
    tg.message(7, 7, "private", "说长一点");
    let sent = tg.wait_sent(7, 3).await;
    // As many lines as fit 4096 units in the first, the rest in the second: nothing lost.
    assert_eq!(sent[1].lines().count(), 4096 / 61, "{}", sent[1].len());
    assert!(sent[1].encode_utf16().count() <= 4096);
    assert_eq!(format!("{}\n{}", sent[1], sent[2]), answer);
    // The part with the lone `_` was refused as Markdown and sent again as plain text.
    assert_eq!(tg.state.lock().unwrap().refused_markdown, 1);
    assert!(sent[2].contains("snake_case"));
    quiet(&tg, 7, 3).await;
}
