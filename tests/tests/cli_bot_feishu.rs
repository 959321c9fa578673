//! End-to-end: a Feishu bot over its long connection through the real `wyckoff` binary
//! (`wyckoff bot run`) against a local fake Feishu: `POST /open-apis/auth/v3/
//! tenant_access_token/internal` and `POST /callback/ws/endpoint` check the app id and
//! secret, the endpoint hands out a WebSocket URL (with `device_id`/`service_id`) and a
//! `ClientConfig`; the socket speaks protobuf `pbbp2.Frame`s, encoded and decoded here by
//! the official Python SDK's generated module (lark-oapi, tests/feishu/frames.py in
//! target/lark-venv, installed by scripts/setup), so the desk's frames are checked against
//! Feishu's own definition: events (`im.message.receive_v1`, one of them split in two
//! parts) go out as data frames, each must come back with `{"code":200}` and `biz_rt`,
//! and pings must come at the `PingInterval` with the endpoint's service id. Answers are
//! `POST /open-apis/im/v1/messages?receive_id_type=chat_id` with the tenant token.
//! An unknown sender gets a pairing code and the model hears nothing; once the owner
//! pairs it, "分析 000001" goes through the pipeline with no writer offered and comes
//! back as a Markdown card; a write waits in the inbox; a dropped socket is reopened with
//! a doubling wait and a message delivered again is answered once. The app secret is in
//! neither the database, the audit logs nor the bot's own log. Needs
//! `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/feishu.rs"]
mod feishu;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use bots::{Running, WRITERS, code_in, offered, request_in};
use feishu::{APP_ID, APP_SECRET, ENV, FakeFeishu, SERVICE, TOKEN, TOKEN_VAR, header};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::{free_cash, set_cash_call, tool_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn ok(home: &Path, args: &[&str]) -> String {
    bots::ok(home, &ENV, args).await
}

// ---------------------------------------------------------------- the binary

struct Bot {
    _running: Running,
    log: tempfile::NamedTempFile,
}

fn run_bot(home: &Path) -> Bot {
    let log = tempfile::NamedTempFile::new().unwrap();
    let running = Running::start_logging(home, &ENV, Some(log.path()));
    Bot {
        _running: running,
        log,
    }
}

async fn setup() -> (tempfile::TempDir, MockServer, FakeFeishu) {
    let fs = FakeFeishu::start().await;
    let (home, server) = bots::setup_bot(&ENV, "fs", "feishu", &fs.url, &[]).await;
    (home, server, fs)
}

/// The secret is in no database file, audit log, nor the bot's own log.
async fn assert_no_secret(home: &Path, bot: &Bot) {
    bots::assert_no_secret(home, &ENV, TOKEN, APP_SECRET).await;
    let log = std::fs::read_to_string(bot.log.path()).unwrap();
    assert!(!log.contains(APP_SECRET), "the bot's log shows the secret");
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_feishu_sender_gets_a_code_and_a_paired_one_is_answered_through_the_pipeline() {
    let (home, server, fs) = setup().await;
    let h = home.path();

    // What the app's model is offered: a plain turn's tools.
    server.push(Route::Openai, OpenAiStream::text_response(&["好的。"]));
    ok(h, &["run", "--json", "你好"]).await;
    let app_tools = offered(&server.requests_to(Route::Openai)[0]);
    server.clear_requests();

    let bot = run_bot(h);
    // A stranger, whose message even carries the app secret.
    fs.message(
        "ou_stranger",
        "oc_p2p1",
        "p2p",
        &format!("分析 000001 {APP_SECRET}"),
        1,
    );
    let sent = fs.wait_sent("oc_p2p1", 1).await;
    assert_eq!(sent[0].msg_type, "text", "{sent:?}");
    let code = code_in(&sent[0].text);
    assert!(
        sent[0].text.contains(&format!("wyckoff bot pair {code}")),
        "{sent:?}"
    );
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    // The frame was answered as the SDK answers one: itself, `biz_rt`, {"code":200}.
    let acks = fs.wait_acks(0, 1).await;
    let ack = &acks[0];
    assert_eq!(ack["method"], 1);
    assert_eq!(ack["service"], SERVICE);
    assert_eq!(
        (ack["SeqID"].as_u64(), ack["LogID"].as_u64()),
        (Some(1), Some(1000))
    );
    assert_eq!(header(ack, "type"), Some("event"));
    assert_eq!(header(ack, "trace_id"), Some("trace-0"));
    assert!(
        header(ack, "biz_rt").unwrap().parse::<u64>().is_ok(),
        "{ack}"
    );
    let payload: Value = serde_json::from_str(ack["payload"].as_str().unwrap()).unwrap();
    assert_eq!(payload, json!({"code": 200}));

    ok(h, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        tool_call("call_an_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["**平安银行**：处于吸筹阶段。\n\n- 量能收缩"]),
    );
    // Split in two frames, the last part first: joined, it is one message.
    fs.message("ou_stranger", "oc_p2p1", "p2p", "分析 000001", 2);
    // The answer, then the stock's daily chart: uploaded for an image key (a PNG in a
    // multipart form), sent as an image message, its caption as text after it.
    let sent = fs.wait_sent("oc_p2p1", 4).await;
    let images = fs.state.lock().unwrap().images.clone();
    assert_eq!(images.len(), 1, "{images:?}");
    assert_eq!(sent[2].msg_type, "image", "{sent:?}");
    assert_eq!(sent[2].text, images[0].0);
    assert_eq!(sent[3].msg_type, "text", "{sent:?}");
    assert!(sent[3].text.contains("000001"), "{sent:?}");
    let answer = &sent[1];
    assert_eq!(answer.msg_type, "interactive", "{answer:?}");
    assert_eq!(answer.content["elements"][0]["tag"], "markdown");
    assert!(
        answer.text.contains("**平安银行**：处于吸筹阶段。"),
        "{answer:?}"
    );
    assert!(answer.text.contains("- 量能收缩"), "{answer:?}");
    assert!(
        answer.text.contains("analyze_stock"),
        "no tool line: {answer:?}"
    );
    assert_eq!(fs.wait_acks(1, 2).await.len(), 2, "each part is answered");
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

    // A write waits in the inbox, and the chat is told how an approver decides it.
    server.push(Route::Openai, set_cash_call("call_cash_1", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    fs.message("ou_stranger", "oc_p2p1", "p2p", "把现金设为 5000", 1);
    let sent = fs.wait_sent("oc_p2p1", 5).await;
    let (id, _) = request_in(&sent[4].text);
    assert_eq!(
        free_cash(h).await,
        None,
        "the portfolio changed before approval"
    );
    let inbox: Value =
        serde_json::from_str(&ok(h, &["approvals", "list", "--json"]).await).unwrap();
    let requests = inbox.as_array().unwrap();
    assert_eq!(requests.len(), 1, "{inbox}");
    assert_eq!(requests[0]["id"], id.as_str());
    assert_eq!(requests[0]["tool"], "update_portfolio");
    assert_eq!(requests[0]["status"], "pending");
    assert_eq!(requests[0]["requested_by"], "bot:fs");

    // In a group the bot's @mention is left out, and a member who is not paired gets a
    // code of their own: the group is never paired as a whole.
    fs.message("ou_member", "oc_group1", "group", "我也要问", 1);
    let sent = fs.wait_sent("oc_group1", 1).await;
    assert!(sent[0].text.contains("配对码"), "{sent:?}");
    assert_eq!(server.requests_to(Route::Openai).len(), 4);

    // Pings come at the interval the endpoint set (1 s), on the endpoint's service.
    let deadline = Instant::now() + Duration::from_secs(20);
    while fs.state.lock().unwrap().pings.len() < 3 {
        assert!(Instant::now() < deadline, "the desk stopped pinging");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (pings, unreadable) = {
        let s = fs.state.lock().unwrap();
        (s.pings.clone(), s.unreadable.clone())
    };
    assert!(
        unreadable.is_empty(),
        "frames the SDK could not read: {unreadable:?}"
    );
    for (_, ping) in &pings {
        assert_eq!(ping["service"], SERVICE);
        assert_eq!(ping["method"], 0);
    }
    for pair in pings.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(900), "pinged after {gap:?}");
    }
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
    assert_eq!(kinds.iter().filter(|k| **k == "inbound").count(), 4);
    let conversations: Value =
        serde_json::from_str(&ok(h, &["conversations", "list", "--json"]).await).unwrap();
    assert!(
        conversations.as_array().unwrap().iter().any(|c| c["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("feishu · fs")),
        "{conversations}"
    );
    assert_no_secret(h, &bot).await;
    let s = fs.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_token, s.bad_tickets), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_connection_reconnects_with_backoff_and_a_redelivered_message_is_answered_once() {
    let (home, _server, fs) = setup().await;
    let h = home.path();
    let bot = run_bot(h);
    fs.message("ou_u5", "oc_5", "p2p", "hello", 1);
    fs.wait_sent("oc_5", 1).await;
    fs.wait_acks(0, 1).await;

    // The socket goes away; the next two endpoint requests are refused as busy.
    {
        let mut s = fs.state.lock().unwrap();
        s.fail_endpoints = 2;
        s.redeliver = true;
        s.drop_socket = Some(s.sockets);
    }
    // On the new socket Feishu sends the first message again, and a new one.
    fs.message("ou_u5", "oc_5", "p2p", "again", 1);
    fs.wait_sent("oc_5", 2).await;
    fs.wait_acks(0, 2).await;
    fs.wait_acks(1, 1).await;

    let (endpoints, dropped_at, sockets) = {
        let s = fs.state.lock().unwrap();
        (s.endpoints.clone(), s.dropped_at.unwrap(), s.sockets)
    };
    assert_eq!(
        sockets,
        2,
        "{}",
        std::fs::read_to_string(bot.log.path()).unwrap()
    );
    assert_eq!(endpoints.len(), 4, "{endpoints:?}");
    assert!(
        endpoints[1].1 && endpoints[2].1 && !endpoints[3].1,
        "{endpoints:?}"
    );
    // 200 ms after the drop, then 400 ms, then 800 ms between the attempts.
    let gaps = [
        endpoints[1].0 - dropped_at,
        endpoints[2].0 - endpoints[1].0,
        endpoints[3].0 - endpoints[2].0,
    ];
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }

    // A while later still: the redelivered message got no second answer.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let sent = fs.sent_to("oc_5");
    assert_eq!(sent.len(), 2, "{sent:?}");
    let log: Value = serde_json::from_str(&ok(h, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);
    assert_no_secret(h, &bot).await;
    let s = fs.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_tickets), (0, 0));
    assert!(s.unreadable.is_empty(), "{:?}", s.unreadable);
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_names_the_app_and_a_wrong_secret_is_refused_without_showing_it() {
    let (home, _server, fs) = setup().await;
    let h = home.path();
    let out = ok(h, &["bot", "test", "fs"]).await;
    assert!(out.contains("威科夫桌面"), "{out}");

    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "fs"])
        .env(TOKEN_VAR, format!("{APP_ID}:wrong-secret-value"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused") && err.contains("10014") && !err.contains("wrong-secret-value"),
        "{err}"
    );
    assert_eq!(fs.state.lock().unwrap().bad_secret, 1);

    // A secret that is not APP_ID:APP_SECRET says how it should look.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "fs"])
        .env(TOKEN_VAR, "only-a-secret");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("APP_ID:APP_SECRET"), "{err}");
}
