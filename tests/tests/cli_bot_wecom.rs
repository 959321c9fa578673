//! End-to-end: a WeCom 智能机器人 through the real `wyckoff` binary (`wyckoff bot run`)
//! against a local fake of its long connection, speaking the frames of WeCom's
//! documentation and official SDK: the client subscribes with `{"cmd":"aibot_subscribe",
//! "headers":{"req_id"},"body":{"bot_id","secret"}}` and every request is answered with
//! `{"headers":{"req_id"},"errcode","errmsg"}`; a message comes as `aibot_msg_callback`
//! (`msgid`, `chattype`, `from.userid`, `text.content`) and is answered with
//! `aibot_respond_msg` `stream` frames under the callback's `req_id`; decisions made
//! elsewhere come as `aibot_send_msg` Markdown to the chat. An unknown sender gets a
//! pairing code and the model hears nothing; once the owner pairs it, "分析 000001" goes
//! through the pipeline with no writer offered; a write lands in the inbox and does not
//! run until `wyckoff approvals allow`, which the chat is told once; a dropped connection
//! is reopened with a doubling wait, and a message delivered again on the new connection
//! is not answered twice; the connection is pinged 30 s after it subscribed (as WeCom's SDKs
//! do, `{"cmd":"ping","headers":{"req_id"}}`) and kept while pings are answered, and when
//! two go unanswered it is taken as dropped and reopened (that one with a beat of a second,
//! `WYCKOFF_WECOM_HEARTBEAT_MS`); the secret is in neither the database, the audit logs nor
//! the process's log. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/wecom.rs"]
mod wecom;

use std::path::Path;
use std::time::{Duration, Instant};

use bots::{Running, WRITERS, code_in, offered, ok, request_in};
use serde_json::{Value, json};
use wecom::{BOT_ID, ENV, FakeWecom, SECRET, TOKEN_VAR};
use wyckoff_e2e::approvals::{free_cash, set_cash_call, tool_call};
use wyckoff_e2e::wyckoff_cli;
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

// ---------------------------------------------------------------- helpers

async fn setup() -> (tempfile::TempDir, MockServer, FakeWecom) {
    let wc = FakeWecom::start().await;
    let (home, server) = bots::setup_bot(&ENV, "wc", "wecom", &wc.url, &[]).await;
    (home, server, wc)
}

/// The secret is in no database file, audit log, nor the serving process's log.
async fn assert_no_secret(home: &Path, log: &Path) {
    bots::assert_no_secret(home, &ENV, SECRET, &SECRET[6..]).await;
    let text = std::fs::read_to_string(log).unwrap();
    assert!(!text.contains(SECRET), "the log shows the secret");
}

// ---------------------------------------------------------------- the tests

#[tokio::test(flavor = "multi_thread")]
async fn an_unpaired_wecom_sender_gets_a_code_and_a_paired_one_is_answered_and_its_writes_wait() {
    let (home, server, wc) = setup().await;
    let h = home.path();
    let log = h.join("bot-run.log");
    let _bot = Running::start_logging(h, &ENV, Some(&log));

    // A stranger, whose message even carries the secret.
    wc.message("zhangsan", None, &format!("分析 000001 {SECRET}"));
    let said = wc.wait_said("zhangsan", 1).await;
    let code = code_in(&said[0]);
    assert_eq!(code.len(), 8);
    assert!(
        said[0].contains(&format!("wyckoff bot pair {code}")),
        "{said:?}"
    );
    assert!(
        server.requests_to(Route::Openai).is_empty(),
        "the model heard a stranger"
    );
    let listed: Value =
        serde_json::from_str(&ok(h, &ENV, &["bot", "list", "--json"]).await).unwrap();
    assert_eq!(listed["pending_pairings"][0]["code"], code.as_str());
    assert_eq!(listed["pending_pairings"][0]["sender_id"], "zhangsan");
    assert_eq!(listed["bots"][0]["kind"], "wecom");
    assert_eq!(listed["bots"][0]["token_set"], true);

    ok(h, &ENV, &["bot", "pair", &code]).await;
    server.push(
        Route::Openai,
        tool_call("call_wc_1", "analyze_stock", json!({"code": "000001"})),
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["## 结论\n**平安银行**：处于吸筹阶段。"]),
    );
    let asked = wc.message("zhangsan", None, " 分析 000001 ");
    let said = wc.wait_said("zhangsan", 2).await;
    assert!(
        said[1].contains("**平安银行**：处于吸筹阶段。"),
        "{}",
        said[1]
    );
    assert!(
        said[1].contains("analyze_stock"),
        "no tool line: {}",
        said[1]
    );
    // The answer replaced a "thinking" line of the same stream, under the callback's req_id.
    let frames: Vec<Value> = wc
        .received("aibot_respond_msg")
        .into_iter()
        .filter(|f| f["headers"]["req_id"] == asked.as_str())
        .collect();
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[0]["body"]["msgtype"], "stream");
    assert_eq!(frames[0]["body"]["stream"]["finish"], false);
    assert_eq!(frames[1]["body"]["stream"]["finish"], true);
    assert_eq!(
        frames[0]["body"]["stream"]["id"],
        frames[1]["body"]["stream"]["id"]
    );
    let requests = server.requests_to(Route::Openai);
    assert_eq!(requests.len(), 2, "one tool round and the answer");
    let asked_text = requests[0].last_user_text().unwrap();
    assert_eq!(
        asked_text.lines().next(),
        Some("分析 000001"),
        "{asked_text}"
    );
    let tools = offered(&requests[0]);
    assert!(tools.contains("analyze_stock"), "{tools:?}");
    for writer in WRITERS {
        assert!(
            !tools.contains(writer),
            "a bot's model was offered {writer}"
        );
    }

    // A group member is a sender of its own: unpaired, it gets a code in the group.
    wc.message("lisi", Some("wrGroup9"), "@Wyckoff 我的持仓");
    let said = wc.wait_said("wrGroup9", 1).await;
    code_in(&said[0]);
    assert_eq!(server.requests_to(Route::Openai).len(), 2);

    // A write waits in the inbox and does not run; allowed with the CLI, the chat is
    // told once, with the call's result and the conversation's answer.
    server.push(Route::Openai, set_cash_call("call_wc_cash", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    wc.message("zhangsan", None, "把现金设为 5000");
    let said = wc.wait_said("zhangsan", 3).await;
    let (id, _) = request_in(&said[2]);
    let pending: Value =
        serde_json::from_str(&ok(h, &ENV, &["approvals", "list", "--json"]).await).unwrap();
    assert!(pending.to_string().contains(&id), "{pending}");
    assert_eq!(
        free_cash(h).await,
        None,
        "a bot's write ran before it was allowed"
    );
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金。"]),
    );
    ok(h, &ENV, &["approvals", "allow", &id]).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
    let said = wc.wait_said("zhangsan", 4).await;
    assert_eq!(
        said[3].lines().next().unwrap(),
        format!("✅ 已批准并执行 调仓操作（{id}）：可用资金已设为 5000"),
        "{}",
        said[3]
    );
    assert!(said[3].contains("已按你的批准调整好现金。"), "{}", said[3]);
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(wc.said_to("zhangsan").len(), 4, "told twice");

    let log_lines: Value =
        serde_json::from_str(&ok(h, &ENV, &["bot", "log", "--json"]).await).unwrap();
    let kinds: Vec<&str> = log_lines
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "inbound").count(),
        4,
        "{kinds:?}"
    );
    for kind in ["pairing_code", "paired"] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    assert_no_secret(h, &log).await;
    assert_eq!(wc.state.lock().unwrap().bad_secret, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_wecom_connection_reconnects_with_backoff_and_no_message_is_answered_twice() {
    let (home, _server, wc) = setup().await;
    let h = home.path();
    let log = h.join("bot-run.log");
    let _bot = Running::start_logging(h, &ENV, Some(&log));
    wc.message("wangwu", None, "hello");
    wc.wait_said("wangwu", 1).await;

    // The connection goes away; the next two connections are refused.
    {
        let mut s = wc.state.lock().unwrap();
        s.refuse = 2;
        s.redeliver = true;
        s.drop_connection = Some(s.connections.len());
    }
    // On the new connection WeCom sends the first message again (same msgid), and a new one.
    wc.message("wangwu", None, "again");
    let said = wc.wait_said("wangwu", 2).await;
    assert!(said[1].contains("配对码"), "{said:?}");

    let (connections, refused, dropped_at) = {
        let s = wc.state.lock().unwrap();
        (
            s.connections.clone(),
            s.refused.clone(),
            s.dropped_at.unwrap(),
        )
    };
    assert_eq!(connections.len(), 2);
    assert_eq!(refused.len(), 2);
    // 200 ms after the drop, then 400 ms, then 800 ms between the attempts.
    let gaps = [
        refused[0] - dropped_at,
        refused[1] - refused[0],
        connections[1] - refused[1],
    ];
    for (gap, least) in gaps.iter().zip([200, 400, 800]) {
        assert!(*gap >= Duration::from_millis(least), "{gaps:?}");
    }

    // A while later still: the redelivered message got no second answer.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let said = wc.said_to("wangwu");
    assert_eq!(said.len(), 2, "{said:?}");
    let log_lines: Value =
        serde_json::from_str(&ok(h, &ENV, &["bot", "log", "--json"]).await).unwrap();
    let inbound = log_lines
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "inbound")
        .count();
    assert_eq!(inbound, 2);
    // Each connection subscribed once, with the bot's id.
    let subscribes = wc.received("aibot_subscribe");
    assert_eq!(subscribes.len(), 2);
    assert!(subscribes.iter().all(|f| f["body"]["bot_id"] == BOT_ID));
    assert_no_secret(h, &log).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bot_test_subscribes_and_a_wrong_secret_is_refused_without_showing_it() {
    let (home, _server, wc) = setup().await;
    let h = home.path();
    let out = ok(h, &ENV, &["bot", "test", "wc"]).await;
    assert!(out.contains(BOT_ID), "{out}");
    assert_eq!(wc.state.lock().unwrap().connections.len(), 1);

    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "wc"])
        .env(TOKEN_VAR, format!("{BOT_ID}:wrong-secret-value"));
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refused") && err.contains("40058") && !err.contains("wrong-secret-value"),
        "{err}"
    );
    assert_eq!(wc.state.lock().unwrap().bad_secret, 1);

    // Only a WeCom bot's address may be a WebSocket.
    let out = bots::wyckoff(
        h,
        &ENV,
        &[
            "bot",
            "add",
            "tg",
            "--kind",
            "telegram",
            "--api-url",
            "ws://127.0.0.1:9",
        ],
    )
    .await;
    assert!(!out.status.success(), "{}", wyckoff_e2e::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("give an http(s) URL"),
        "{}",
        wyckoff_e2e::show(&out)
    );

    // A secret that is not BOT_ID:SECRET says how it should look.
    let mut cmd = wyckoff_cli(h);
    cmd.args(["bot", "test", "wc"])
        .env(TOKEN_VAR, "only-a-secret");
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", wyckoff_e2e::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BOT_ID:SECRET"), "{err}");
}

/// The instant `n` connections have subscribed.
async fn wait_connections(wc: &FakeWecom, n: usize, within: Duration) -> Vec<Instant> {
    let deadline = Instant::now() + within;
    loop {
        let connections = wc.state.lock().unwrap().connections.clone();
        if connections.len() >= n {
            return connections;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {n} connections",
            connections.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until connection `number` has sent `n` pings; its pings, when and what.
async fn wait_pings(
    wc: &FakeWecom,
    number: usize,
    n: usize,
    within: Duration,
) -> Vec<(Instant, Value)> {
    let deadline = Instant::now() + within;
    loop {
        let pings: Vec<(Instant, Value)> = {
            let s = wc.state.lock().unwrap();
            s.pings
                .iter()
                .filter(|(c, _, _)| *c == number)
                .map(|(_, at, f)| (*at, f.clone()))
                .collect()
        };
        if pings.len() >= n {
            return pings;
        }
        assert!(
            Instant::now() < deadline,
            "connection {number} sent {} of {n} pings",
            pings.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wecom_connection_is_pinged_30_seconds_after_it_subscribed_and_kept_when_answered() {
    let (home, _server, wc) = setup().await;
    let h = home.path();
    let log = h.join("bot-run.log");
    let _bot = Running::start_logging(h, &ENV, Some(&log));
    let subscribed = wait_connections(&wc, 1, Duration::from_secs(30)).await[0];

    // The first ping, at WeCom's SDKs' 30 s (the desk starts counting once the
    // subscription is answered, a moment after the fake saw it).
    let pings = wait_pings(&wc, 1, 1, Duration::from_secs(45)).await;
    let (at, ping) = &pings[0];
    let after = *at - subscribed;
    assert!(
        after >= Duration::from_secs(30) && after < Duration::from_secs(33),
        "the first ping came {after:?} after the subscription"
    );
    // As the SDKs send it: the command and a request id, nothing else.
    let req_id = ping["headers"]["req_id"].as_str().unwrap_or_default();
    assert!(!req_id.is_empty(), "{ping}");
    assert_eq!(ping, &json!({"cmd": "ping", "headers": {"req_id": req_id}}));

    // Answered, the connection is kept: a message on it is answered, and no second
    // connection was opened.
    wc.message("zhaoliu", None, "你好");
    let said = wc.wait_said("zhaoliu", 1).await;
    assert!(said[0].contains("配对码"), "{said:?}");
    let s = wc.state.lock().unwrap();
    assert_eq!(s.connections.len(), 1, "reconnected after an answered ping");
    assert_eq!(s.pings.len(), 1, "pinged again within the interval");
    assert!(s.dropped_at.is_none() && s.refused.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wecom_connection_whose_pings_go_unanswered_is_taken_as_dropped_and_reopened() {
    let (home, _server, wc) = setup().await;
    let h = home.path();
    let log = h.join("bot-run.log");
    // A beat a second instead of 30 s, so three beats pass in seconds.
    let env = [ENV[0], ENV[1], ("WYCKOFF_WECOM_HEARTBEAT_MS", "1000")];
    let _bot = Running::start_logging(h, &env, Some(&log));
    wait_connections(&wc, 1, Duration::from_secs(30)).await;

    // Answered pings, one a beat, keep the connection.
    let pings = wait_pings(&wc, 1, 3, Duration::from_secs(30)).await;
    for pair in pings.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        assert!(gap >= Duration::from_millis(950), "pinged after {gap:?}");
    }
    let ids: std::collections::HashSet<&str> = pings
        .iter()
        .map(|(_, p)| p["headers"]["req_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), pings.len(), "a ping's req_id was used twice");
    assert_eq!(wc.state.lock().unwrap().connections.len(), 1);

    // WeCom stops answering: two pings go unanswered, and at the next beat the desk
    // takes the connection as dropped and opens another (after its first retry wait).
    let muted_from = {
        let mut s = wc.state.lock().unwrap();
        s.mute_pings = true;
        s.pings.len()
    };
    let connections = wait_connections(&wc, 2, Duration::from_secs(20)).await;
    let unanswered: Vec<Instant> = {
        let mut s = wc.state.lock().unwrap();
        s.mute_pings = false;
        s.pings[muted_from..]
            .iter()
            .filter(|(c, _, _)| *c == 1)
            .map(|(_, at, _)| *at)
            .collect()
    };
    assert_eq!(
        unanswered.len(),
        2,
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    let reopened = connections[1] - unanswered[1];
    assert!(
        reopened >= Duration::from_millis(1150) && reopened < Duration::from_secs(5),
        "reopened {reopened:?} after the last unanswered ping"
    );

    // The new connection serves: a message is answered on it, its pings are answered
    // and it is kept.
    wc.message("sunqi", None, "你好");
    let said = wc.wait_said("sunqi", 1).await;
    assert!(said[0].contains("配对码"), "{said:?}");
    wait_pings(&wc, 2, 3, Duration::from_secs(30)).await;
    assert_eq!(wc.state.lock().unwrap().connections.len(), 2);
    let subscribes = wc.received("aibot_subscribe");
    assert_eq!(subscribes.len(), 2);
    assert_no_secret(h, &log).await;
}
