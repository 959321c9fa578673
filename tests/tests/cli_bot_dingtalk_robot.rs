//! End-to-end: a decision made outside a DingTalk chat whose session webhook has expired
//! reaches the chat through DingTalk's robot API, through the real `wyckoff` binary
//! (`wyckoff bot run`) against the local fake DingTalk (`support/dingtalk.rs`) with the
//! robot API in front of it: `POST /v1.0/oauth2/accessToken` gives the app access token,
//! `POST /v1.0/robot/oToMessages/batchSend` (the token in `x-acs-dingtalk-access-token`)
//! takes a `sampleMarkdown` to the person by staff id. The chat's answer to the message
//! itself still goes to the message's session webhook. Needs `cargo build -p wyckoff-cli`
//! first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/bots.rs"]
mod bots;
#[path = "support/dingtalk.rs"]
mod dingtalk;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bots::{Running, code_in, ok, read_http, request_in, respond};
use dingtalk::{CLIENT_ID, CLIENT_SECRET, ENV, FakeDingtalk, ROBOT_TOPIC};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::approvals::{free_cash, set_cash_call};
use wyckoff_mock_vendor::{OpenAiStream, Route};

/// What the robot API in front of the fake was asked: (path, token header, body).
type Asked = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// The robot API, every other request passed on to the fake DingTalk behind it.
async fn robot_api(behind: &str) -> (String, Asked) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let behind = behind.trim_start_matches("http://").to_owned();
    let asked = Asked::default();
    let seen = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (behind, seen) = (behind.clone(), seen.clone());
            tokio::spawn(async move {
                let Some(req) = read_http(&mut socket).await else {
                    return;
                };
                let token = req.header("x-acs-dingtalk-access-token").map(str::to_owned);
                let answer = match req.path.as_str() {
                    "/v1.0/oauth2/accessToken" => {
                        assert_eq!(req.body["appKey"], CLIENT_ID);
                        assert_eq!(req.body["appSecret"], CLIENT_SECRET);
                        Some(json!({"accessToken": "app-token-1", "expireIn": 7200}))
                    }
                    "/v1.0/robot/oToMessages/batchSend" => Some(json!({
                        "processQueryKey": "q1", "invalidStaffIdList": [],
                        "flowControlledStaffIdList": []
                    })),
                    _ => None,
                };
                match answer {
                    Some(answer) => {
                        seen.lock().unwrap().push((req.path, token, req.body));
                        respond(&mut socket, 200, &answer).await;
                    }
                    None => {
                        // The fake answers and closes: its whole answer goes back.
                        let mut upstream = TcpStream::connect(&behind).await.unwrap();
                        upstream.write_all(req.head.as_bytes()).await.unwrap();
                        upstream.write_all(&req.raw).await.unwrap();
                        let mut answer = Vec::new();
                        let _ = upstream.read_to_end(&mut answer).await;
                        let _ = socket.write_all(&answer).await;
                    }
                }
            });
        }
    });
    (url, asked)
}

fn text_of(post: &Value) -> String {
    match post["msgtype"].as_str().unwrap() {
        "text" => post["text"]["content"].as_str().unwrap().to_owned(),
        "markdown" => post["markdown"]["text"].as_str().unwrap().to_owned(),
        other => panic!("unexpected msgtype {other}"),
    }
}

/// A one-to-one message from `staff` in `cid` whose session webhook expired at once.
fn message_with_expired_webhook(dt: &FakeDingtalk, staff: &str, cid: &str, text: &str) {
    let mut s = dt.state.lock().unwrap();
    let n = s.frames.len();
    let data = json!({
        "conversationId": cid, "conversationType": "1", "msgId": format!("msg-x{n:04}"),
        "senderNick": format!("员工{staff}"), "senderStaffId": staff,
        "senderId": format!("$:LWCP_v1:${staff}"), "robotCode": CLIENT_ID,
        // Expired long ago: only the robot API reaches the chat later.
        "sessionWebhookExpiredTime": 1_000_i64,
        "sessionWebhook": format!("{}/robot/sendBySession/{cid}?session=x{n}", dt.url),
        "msgtype": "text", "text": {"content": text},
    });
    s.frames.push((
        json!({
            "specVersion": "1.0", "type": "CALLBACK",
            "headers": {"appId": "app1", "connectionId": "c1", "contentType": "application/json",
                        "messageId": format!("frame-x{n:04}"), "time": "1765000000000",
                        "topic": ROBOT_TOPIC},
            "data": data.to_string(),
        }),
        false,
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_decision_reaches_a_chat_whose_webhook_expired_through_the_robot_api_once() {
    let dt = FakeDingtalk::start().await;
    let (api, asked) = robot_api(&dt.url).await;
    let (home, server) = bots::setup_bot(&ENV, "dt", "dingtalk", &api, &[]).await;
    let h = home.path();
    let _bot = Running::start(h, &ENV);

    // Pairing, through the message's webhook.
    dt.message("u9", "cid9", "1", "你好");
    let posts = dt.wait_posts("cid9", 1).await;
    ok(h, &ENV, &["bot", "pair", &code_in(&text_of(&posts[0]))]).await;

    // A write asked for in a message whose webhook expired: the answer still goes to it.
    server.push(Route::Openai, set_cash_call("call_cash_9", 5000));
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["调仓在等待主人批准。"]),
    );
    message_with_expired_webhook(&dt, "u9", "cid9", "把现金设为 5000");
    let posts = dt.wait_posts("cid9", 2).await;
    let id = request_in(&text_of(&posts[1])).0;
    assert!(
        asked.lock().unwrap().is_empty(),
        "{:?}",
        asked.lock().unwrap()
    );

    // Allowed with the CLI: told through the robot API, to the person, once.
    server.push(
        Route::Openai,
        OpenAiStream::text_response(&["已按你的批准调整好现金。"]),
    );
    ok(h, &ENV, &["approvals", "allow", &id]).await;
    assert_eq!(free_cash(h).await, Some(5000.0));
    let deadline = Instant::now() + Duration::from_secs(60);
    while asked.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "{:?}", asked.lock().unwrap());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Several of the loop's follow-up rounds later: nothing more, and no webhook post.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let asked = asked.lock().unwrap().clone();
    let paths: Vec<&str> = asked.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/v1.0/oauth2/accessToken",
            "/v1.0/robot/oToMessages/batchSend"
        ],
        "{asked:?}"
    );
    let (_, token, body) = &asked[1];
    assert_eq!(token.as_deref(), Some("app-token-1"));
    assert_eq!(body["robotCode"], CLIENT_ID);
    assert_eq!(body["userIds"], json!(["u9"]));
    assert_eq!(body["msgKey"], "sampleMarkdown");
    let param: Value = serde_json::from_str(body["msgParam"].as_str().unwrap()).unwrap();
    let told = param["text"].as_str().unwrap();
    assert!(
        told.starts_with(&format!("✅ 已批准并执行 调仓操作（{id}）")),
        "{told}"
    );
    assert!(told.contains("已按你的批准调整好现金。"), "{told}");
    assert_eq!(dt.posts_to("cid9").len(), 2);
}
