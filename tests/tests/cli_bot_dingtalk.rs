//! End-to-end: a DingTalk Stream bot through the real `wyckoff` binary (`wyckoff bot run`)
//! against a local fake DingTalk: `POST /v1.0/gateway/connections/open` checks the client
//! id and secret and hands out a WebSocket endpoint with a one-time ticket; the socket
//! sends frames `{specVersion, type, headers{topic, messageId, ...}, data}` and expects an
//! ACK `{code, headers{contentType, messageId}, message, data}` for each; a robot message
//! (`/v1.0/im/bot/messages/get`) carries its chat's `sessionWebhook`, where the answer is
//! POSTed. An unknown sender gets a pairing code and the model hears nothing; once the
//! owner pairs it, "分析 000001" goes through the pipeline with no writer offered; a
//! dropped socket is reopened with a doubling wait, and a message delivered again on the
//! new socket is not answered twice. The app secret is in neither the database nor the
//! logs. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/dingtalk.rs"]
mod dingtalk;

use std::path::Path;
use std::time::{Duration, Instant};

use bots::{Running, WRITERS, code_in, offered, ok};
use dingtalk::{CLIENT_ID, CLIENT_SECRET, ENV, FakeDingtalk, TOKEN_VAR};
use serde_json::{Value, json};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

async fn setup() -> (tempfile::TempDir, MockServer, FakeDingtalk) {
    let dt = FakeDingtalk::start().await;
    let (home, server) = bots::setup_bot(&ENV, "dt", "dingtalk", &dt.url, &[]).await;
    (home, server, dt)
}

/// The text of a webhook post (a text or a Markdown message).
fn text_of(post: &Value) -> String {
    match post["msgtype"].as_str().unwrap() {
        "text" => post["text"]["content"].as_str().unwrap().to_owned(),
        "markdown" => {
            assert!(
                !post["markdown"]["title"].as_str().unwrap().is_empty(),
                "{post}"
            );
            post["markdown"]["text"].as_str().unwrap().to_owned()
        }
        other => panic!("unexpected msgtype {other}"),
    }
}

/// The app secret is nowhere in the database files nor the audit logs.
async fn assert_no_secret(home: &Path) {
    bots::assert_no_secret(home, &ENV, CLIENT_SECRET, &CLIENT_SECRET[5..]).await;
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_dingtalk_sender_gets_a_code_and_a_paired_one_is_answered_through_the_pipeline()
{
    let (home, server, dt) = setup().await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);

    // DingTalk's keep-alive: the ACK carries the ping's data back.
    let ping = dt.system("ping", "{\"opaque\":\"p-1\"}");
    dt.wait_acks(&ping, 1).await;
    let ack = dt.ack_of(&ping).unwrap();
    assert_eq!(ack["code"], 200, "{ack}");
    assert_eq!(ack["headers"]["contentType"], "application/json");
    assert_eq!(ack["data"], "{\"opaque\":\"p-1\"}");

    // A stranger, whose message even carries the app secret.
    let first = dt.message(
        "u42",
        "cidP42",
        "1",
        &format!("分析 000001 {CLIENT_SECRET}"),
    );
    let posts = dt.wait_posts("cidP42", 1).await;
    let code = code_in(&text_of(&posts[0]));
    assert_eq!(code.len(), 8);
    assert!(text_of(&posts[0]).contains(&format!("wyckoff bot pair {code}")));
    dt.wait_acks(&first, 1).await;
    assert_eq!(dt.ack_of(&first).unwrap()["code"], 200);
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    let listed: Value =
        serde_json::from_str(&ok(h, &ENV, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["pending_pairings"][0]["code"], code.as_str());
    assert_eq!(listed["pending_pairings"][0]["sender_id"], "u42");
    assert_eq!(listed["bots"][0]["kind"], "dingtalk");
    assert_eq!(listed["bots"][0]["token_set"], true);

    ok(h, &ENV, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        tool_call("call_dt_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["## 结论\n**平安银行**：处于吸筹阶段。"]),
    );
    dt.message("u42", "cidP42", "1", " 分析 000001 ");
    let posts = dt.wait_posts("cidP42", 2).await;
    assert_eq!(posts[1]["msgtype"], "markdown", "{}", posts[1]);
    let answer = text_of(&posts[1]);
    assert!(answer.contains("**平安银行**：处于吸筹阶段。"), "{answer}");
    assert!(answer.contains("analyze_stock"), "no tool line: {answer}");
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2, "one tool round and the answer");
    // The text as typed, trimmed (the desk adds the time on a line of its own).
    let asked = requests[0].last_user_text().unwrap();
    assert_eq!(asked.lines().next(), Some("分析 000001"), "{asked}");
    let tools = offered(&requests[0]);
    assert!(tools.contains("analyze_stock"), "{tools:?}");
    for writer in WRITERS {
        assert!(
            !tools.contains(writer),
            "a bot's model was offered {writer}"
        );
    }

    let conversations: Value =
        serde_json::from_str(&ok(h, &ENV, &["conversations", "list", "--json"]).await).unwrap();
    assert!(
        conversations.as_array().unwrap().iter().any(|c| c["title"]
            .as_str()
            .unwrap_or_default()
            .starts_with("dingtalk · dt · 员工u42")),
        "{conversations}"
    );
    let log: Value = serde_json::from_str(&ok(h, &ENV, &["bot", "log", "--json"]).await).unwrap();
    let kinds: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "inbound").count(), 2);
    for kind in ["pairing_code", "paired"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    assert_no_secret(h).await;
    let s = dt.state.lock().unwrap();
    assert_eq!((s.bad_secret, s.bad_tickets), (0, 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_stream_reconnects_with_backoff_and_no_message_is_answered_twice() {
    let (home, _server, dt) = setup().await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);
    let first = dt.message("u5", "cid5", "1", "hello");
    dt.wait_posts("cid5", 1).await;
    dt.wait_acks(&first, 1).await;

    // The socket goes away; the next two connection requests are refused.
    {
        let mut s = dt.state.lock().unwrap();
        s.fail_opens = 2;
        s.redeliver = true;
        s.drop_socket = Some(s.sockets);
    }
    // On the new socket DingTalk sends the first message again, and a new one.
    let second = dt.message("u5", "cid5", "1", "again");
    dt.wait_posts("cid5", 2).await;
    dt.wait_acks(&first, 2).await;
    dt.wait_acks(&second, 1).await;

    let (opens, dropped_at, sockets) = {
        let s = dt.state.lock().unwrap();
        (s.opens.clone(), s.dropped_at.unwrap(), s.sockets)
    };
    assert_eq!(sockets, 2);
    assert_eq!(opens.len(), 4, "{opens:?}");
    assert!(opens[1].1 && opens[2].1 && !opens[3].1, "{opens:?}");
    // 200 ms after the drop, then 400 ms, then 800 ms between the attempts.
    let gaps = [
        opens[1].0 - dropped_at,
        opens[2].0 - opens[1].0,
        opens[3].0 - opens[2].0,
    ];
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }

    // A while later still: the redelivered message got no second answer.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let posts = dt.posts_to("cid5");
    assert_eq!(posts.len(), 2, "{posts:?}");
    let log: Value = serde_json::from_str(&ok(h, &ENV, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);

    // DingTalk announcing a disconnect: a new connection at once, with no wait.
    let bye = dt.system("disconnect", "{\"reason\":\"upgrade\"}");
    dt.wait_acks(&bye, 1).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while dt.state.lock().unwrap().sockets < 3 {
        assert!(
            Instant::now() < deadline,
            "no new socket after a disconnect"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(dt.state.lock().unwrap().bad_tickets, 0);
    assert_no_secret(h).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_opens_a_connection_and_a_wrong_secret_is_refused_without_showing_it() {
    let (home, _server, dt) = setup().await;
    let h = home.path();
    let out = ok(h, &ENV, &["bot", "test", "dt"]).await;
    assert!(out.contains(CLIENT_ID), "{out}");

    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "dt"])
        .env(TOKEN_VAR, format!("{CLIENT_ID}:wrong-secret-value"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused") && !err.contains("wrong-secret-value"),
        "{err}"
    );
    assert_eq!(dt.state.lock().unwrap().bad_secret, 1);

    // A secret that is not CLIENT_ID:CLIENT_SECRET says how it should look.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "dt"])
        .env(TOKEN_VAR, "only-a-secret");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("CLIENT_ID:CLIENT_SECRET"), "{err}");
}
