//! DingTalk's robot API, the way a decision reaches a chat whose session webhook expired,
//! against a local fake `api.dingtalk.com`: the app access token from
//! `POST /v1.0/oauth2/accessToken` (asked once, kept, asked again after DingTalk refuses
//! it), then `oToMessages/batchSend` to a person by staff id or `groupMessages/send` to
//! a group, each a `sampleMarkdown` with the token in `x-acs-dingtalk-access-token`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_bot::dingtalk::{DingtalkClient, DingtalkError, RobotTarget};

/// Each request the fake got: its path, its token header and its body.
#[derive(Default)]
struct Seen {
    requests: Vec<(String, Option<String>, Value)>,
    tokens_given: usize,
    /// Sends still to refuse with 401 (a token DingTalk no longer takes).
    refuse_token: usize,
    /// Staff ids the one-to-one send says it cannot reach.
    invalid: Vec<String>,
}

type State = Arc<Mutex<Seen>>;

async fn fake_dingtalk() -> (String, State) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let state = State::default();
    let served = state.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(stream, served.clone()));
        }
    });
    (base, state)
}

async fn serve(stream: TcpStream, state: State) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let (mut length, mut token) = (0usize, None);
        loop {
            let mut header = String::new();
            stream.read_line(&mut header).await.unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap();
                }
                if k.eq_ignore_ascii_case("x-acs-dingtalk-access-token") {
                    token = Some(v.trim().to_owned());
                }
            }
        }
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        let (status, answer) = {
            let mut s = state.lock().unwrap();
            s.requests.push((path.clone(), token.clone(), body.clone()));
            match path.as_str() {
                "/v1.0/oauth2/accessToken" if body["appSecret"] == "s3cret" => {
                    s.tokens_given += 1;
                    let n = s.tokens_given;
                    (
                        200,
                        json!({"accessToken": format!("tok{n}"), "expireIn": 7200}),
                    )
                }
                "/v1.0/oauth2/accessToken" => (
                    400,
                    json!({"code": "invalidClientSecret", "message": "bad secret"}),
                ),
                _ if s.refuse_token > 0 => {
                    s.refuse_token -= 1;
                    (
                        401,
                        json!({"code": "InvalidAuthentication", "message": "token expired"}),
                    )
                }
                _ if token != Some(format!("tok{}", s.tokens_given)) => (
                    401,
                    json!({"code": "InvalidAuthentication", "message": "?"}),
                ),
                "/v1.0/robot/oToMessages/batchSend" => {
                    let invalid: Vec<&String> = s
                        .invalid
                        .iter()
                        .filter(|id| body["userIds"].as_array().unwrap().contains(&json!(id)))
                        .collect();
                    (
                        200,
                        json!({"processQueryKey": "q1", "invalidStaffIdList": invalid,
                               "flowControlledStaffIdList": []}),
                    )
                }
                "/v1.0/robot/groupMessages/send" => (200, json!({"processQueryKey": "q2"})),
                _ => (404, json!({"code": "notFound", "message": path})),
            }
        };
        let text = answer.to_string();
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        let out = stream.get_mut();
        out.write_all(head.as_bytes()).await.unwrap();
        out.write_all(text.as_bytes()).await.unwrap();
    }
}

fn param(body: &Value) -> Value {
    assert_eq!(body["msgKey"], "sampleMarkdown");
    serde_json::from_str(body["msgParam"].as_str().unwrap()).unwrap()
}

#[tokio::test]
async fn a_decision_goes_to_the_person_or_the_group_with_one_kept_token() {
    let (base, state) = fake_dingtalk().await;
    let client = DingtalkClient::new(Some(&base), "ding_app:s3cret", None).unwrap();
    let person = RobotTarget::User {
        robot_code: "ding_app".into(),
        staff_id: "manager7".into(),
    };
    let group = RobotTarget::Group {
        robot_code: "ding_app".into(),
        conversation_id: "cidG==".into(),
    };
    client
        .send_robot(&person, "**已批准** update_portfolio\n结果：已记录")
        .await
        .unwrap();
    client
        .send_robot(&group, "已拒绝 record_fill")
        .await
        .unwrap();
    {
        let s = state.lock().unwrap();
        let paths: Vec<&str> = s.requests.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/v1.0/oauth2/accessToken",
                "/v1.0/robot/oToMessages/batchSend",
                "/v1.0/robot/groupMessages/send"
            ]
        );
        assert_eq!(
            s.requests[0].2,
            json!({"appKey": "ding_app", "appSecret": "s3cret"})
        );
        let (_, token, body) = &s.requests[1];
        assert_eq!(token.as_deref(), Some("tok1"));
        assert_eq!(body["robotCode"], "ding_app");
        assert_eq!(body["userIds"], json!(["manager7"]));
        let p = param(body);
        assert_eq!(p["title"], "已批准 update_portfolio");
        assert_eq!(p["text"], "**已批准** update_portfolio\n结果：已记录");
        let (_, token, body) = &s.requests[2];
        assert_eq!(token.as_deref(), Some("tok1"));
        assert_eq!(body["openConversationId"], "cidG==");
        assert_eq!(param(body)["text"], "已拒绝 record_fill");
    }

    // DingTalk no longer takes the token: that send fails, the next asks for a new one.
    state.lock().unwrap().refuse_token = 1;
    let err = client.send_robot(&group, "again").await.unwrap_err();
    assert!(
        matches!(err, DingtalkError::Api { status: 401, .. }),
        "{err}"
    );
    client.send_robot(&group, "again").await.unwrap();
    {
        let s = state.lock().unwrap();
        assert_eq!(s.tokens_given, 2);
        assert_eq!(s.requests.last().unwrap().1.as_deref(), Some("tok2"));
    }

    // A person the API cannot reach is an error (the decision stays untold).
    state.lock().unwrap().invalid = vec!["manager7".into()];
    let err = client.send_robot(&person, "x").await.unwrap_err();
    assert!(
        err.to_string().contains("invalidStaffIdList") && err.to_string().contains("manager7"),
        "{err}"
    );
}

#[tokio::test]
async fn a_refused_app_secret_is_said_and_never_shown() {
    let (base, _state) = fake_dingtalk().await;
    let client = DingtalkClient::new(Some(&base), "ding_app:wr0ng-secret", None).unwrap();
    let group = RobotTarget::Group {
        robot_code: "ding_app".into(),
        conversation_id: "cidG==".into(),
    };
    let err = client.send_robot(&group, "x").await.unwrap_err();
    assert!(matches!(err, DingtalkError::Unauthorized(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("invalidClientSecret"), "{text}");
    assert!(!text.contains("wr0ng-secret"), "{text}");
}
