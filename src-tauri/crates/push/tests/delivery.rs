//! What a send carries and what is kept of its answer, over a real SQLite file and a local
//! HTTP server that records every request whole (its headers too): each message carries a
//! stable delivery id, a send cut off mid-way is marked in flight and repeated under the
//! same id, a webhook's secret goes where the channel says, a pasted key never reaches the
//! stored URL, echoed secrets are masked, an endless answer is read only in part, and a
//! damaged channel row stops no other channel.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use serde_json::{Value, json};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;
use wyckoff_push::{
    ChannelKind, ChannelSecrets, DELIVERY_HEADER, Outbox, OutboxStatus, PushError, PushEvent,
    SecretIn,
};

/// One request as it arrived.
#[derive(Debug, Clone)]
struct Got {
    target: String,
    headers: HashMap<String, String>,
    body: Value,
}

#[derive(Clone)]
enum Answer {
    Reply(u16, String),
    /// Read the request, answer nothing, keep the connection open.
    Stall,
    /// Claim a body of a gigabyte, send a mebibyte of it, then nothing more.
    Endless,
}

#[derive(Clone, Default)]
struct Server {
    got: Arc<Mutex<Vec<Got>>>,
    arrived: Arc<Notify>,
}

impl Server {
    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }
}

/// A server on 127.0.0.1 answering each request with the next of `answers` (200 "ok" once
/// they run out).
async fn server(answers: Vec<Answer>) -> (String, Server) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let s = Server::default();
    let seen = s.clone();
    let answers = Arc::new(Mutex::new(answers));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let seen = seen.clone();
            let answer = {
                let mut a = answers.lock().unwrap();
                if a.is_empty() {
                    Answer::Reply(200, "ok".into())
                } else {
                    a.remove(0)
                }
            };
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                let mut first = String::new();
                reader.read_line(&mut first).await.unwrap();
                let target = first.split(' ').nth(1).unwrap_or_default().to_owned();
                let mut headers = HashMap::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':') {
                        headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
                    }
                }
                let length: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; length];
                reader.read_exact(&mut body).await.unwrap();
                seen.got.lock().unwrap().push(Got {
                    target,
                    headers,
                    body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                });
                seen.arrived.notify_one();
                let mut stream = reader.into_inner();
                match answer {
                    Answer::Reply(code, text) => {
                        let _ = stream
                            .write_all(
                                format!(
                                    "HTTP/1.1 {code} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                                    text.len()
                                )
                                .as_bytes(),
                            )
                            .await;
                    }
                    Answer::Stall => {
                        std::future::pending::<()>().await;
                    }
                    Answer::Endless => {
                        let _ = stream
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\n\r\n")
                            .await;
                        let chunk = vec![b'x'; 64 * 1024];
                        for _ in 0..16 {
                            if stream.write_all(&chunk).await.is_err() {
                                return;
                            }
                        }
                        std::future::pending::<()>().await;
                    }
                }
            });
        }
    });
    (base, s)
}

async fn pool(db: &Path) -> sqlx::SqlitePool {
    SqlitePoolOptions::new()
        .connect_with(
            SqliteConnectOptions::new()
                .filename(db)
                .create_if_missing(true),
        )
        .await
        .unwrap()
}

async fn outbox(db: &Path, timeout: Duration) -> Outbox {
    Outbox::new(pool(db).await, timeout).await.unwrap()
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 7, 0, 0).unwrap()
}

/// Every channel's token is `tok-<name>-+/=`; no signing secret.
struct Tokens;

impl ChannelSecrets for Tokens {
    fn token(&self, channel: &str) -> Option<String> {
        Some(format!("tok-{channel}-+/="))
    }
    fn sign_secret(&self, _channel: &str) -> Option<String> {
        None
    }
}

fn msg(text: &str) -> Value {
    json!({"type": "alert", "title": "提醒", "text": text})
}

#[tokio::test]
async fn a_send_cut_off_midway_is_marked_in_flight_and_repeated_under_the_same_id() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(30)).await;
    let (base, s) = server(vec![Answer::Stall]).await;
    o.add_channel(
        "hook",
        ChannelKind::Webhook,
        Some(&format!("{base}/hook")),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    o.enqueue_all(Some(7), &msg("000001 fired"), t0())
        .await
        .unwrap();
    let queued = o.rows().await.unwrap();
    let id = queued[0].delivery_id.clone();
    assert_eq!(id.len(), 32, "{id}");
    assert_eq!(queued[0].in_flight_since, None);

    // The process dies while the channel holds the request.
    let sending = {
        let o = o.clone();
        tokio::spawn(async move { o.deliver_due(t0()).await })
    };
    s.arrived.notified().await;
    sending.abort();
    let _ = sending.await;
    let row = &o.rows().await.unwrap()[0];
    assert_eq!(row.status, OutboxStatus::Pending);
    assert_eq!(row.in_flight_since.as_deref(), Some("2026-12-05T07:00:00Z"));

    // A later run sends it again under the same id, and says it is a repeat.
    let later = t0() + TimeDelta::minutes(5);
    let d = o.deliver_due(later).await.unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].status, d[0].repeat), (OutboxStatus::Sent, true));
    assert_eq!(d[0].delivery_id, id);
    let got = s.got();
    assert_eq!(got.len(), 2);
    for g in &got {
        assert_eq!(g.headers.get("x-wyckoff-delivery"), Some(&id), "{g:?}");
        assert_eq!(g.body["delivery_id"], id.as_str());
    }
    let row = &o.rows().await.unwrap()[0];
    assert_eq!(
        (row.status, row.in_flight_since.as_deref()),
        (OutboxStatus::Sent, None)
    );
    assert_eq!(DELIVERY_HEADER, "X-Wyckoff-Delivery");
}

#[tokio::test]
async fn a_robots_text_carries_the_delivery_id_in_its_footer() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(5))
        .await
        .with_secrets(Arc::new(Tokens));
    let (base, s) = server(vec![Answer::Reply(200, r#"{"errcode":0}"#.into())]).await;
    o.add_channel(
        "team",
        ChannelKind::Wecom,
        Some(&format!("{base}/send")),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    o.enqueue_all(Some(1), &msg("000001 fired"), t0())
        .await
        .unwrap();
    let id = o.rows().await.unwrap()[0].delivery_id.clone();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent, "{d:?}");
    let got = &s.got()[0];
    assert_eq!(
        got.body["markdown"]["content"],
        format!("000001 fired\n\nWyckoff delivery {id}")
    );
    assert_eq!(got.headers.get("x-wyckoff-delivery"), Some(&id));
}

#[tokio::test]
async fn a_webhooks_secret_goes_in_its_header_or_query_and_an_echo_of_it_is_masked() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(5))
        .await
        .with_secrets(Arc::new(Tokens));
    let (base, s) = server(vec![
        Answer::Reply(401, "bad X-Token tok-h-+/=".into()),
        Answer::Reply(400, "query said token=tok-q-%2B%2F%3D".into()),
        Answer::Reply(200, "ok".into()),
    ])
    .await;
    for name in ["h", "q", "b"] {
        o.add_channel(
            name,
            ChannelKind::Webhook,
            Some(&format!("{base}/{name}")),
            true,
            None,
            t0(),
        )
        .await
        .unwrap();
    }
    o.set_secret_in("h", Some(SecretIn::Header("X-Token".into())))
        .await
        .unwrap();
    o.set_secret_in("q", Some(SecretIn::Query("token".into())))
        .await
        .unwrap();
    // One at a time, so the answers go in order.
    let db = pool(&dir.path().join("w.db")).await;
    for name in ["h", "q", "b"] {
        let body = msg(name);
        let mut conn = db.acquire().await.unwrap();
        let channel = o.channel(name).await.unwrap();
        Outbox::enqueue_on(&mut conn, &[channel], None, &body, t0())
            .await
            .unwrap();
        drop(conn);
        o.deliver_due(t0()).await.unwrap();
    }
    let got = s.got();
    assert_eq!(
        got[0].headers.get("x-token").map(String::as_str),
        Some("tok-h-+/=")
    );
    assert_eq!(got[1].target, "/q?token=tok-q-%2B%2F%3D");
    assert_eq!(
        got[2].headers.get("authorization").map(String::as_str),
        Some("Bearer tok-b-+/=")
    );
    let rows = o.rows().await.unwrap();
    assert_eq!(
        rows[0].last_error.as_deref(),
        Some("HTTP 401: bad X-Token ***")
    );
    assert_eq!(
        rows[1].last_error.as_deref(),
        Some("HTTP 400: query said token=***")
    );
    assert_eq!(rows[2].status, OutboxStatus::Sent);
    // A placement is only for a webhook; a header must be a header's name.
    let (wecom, _) = server(vec![]).await;
    o.add_channel("r", ChannelKind::Wecom, Some(&wecom), true, None, t0())
        .await
        .unwrap();
    assert!(matches!(
        o.set_secret_in("r", Some(SecretIn::Header("X".into())))
            .await,
        Err(PushError::SecretInNotWebhook)
    ));
    assert!(matches!(
        o.set_secret_in("h", Some(SecretIn::Header("Bad Header".into())))
            .await,
        Err(PushError::BadHeader(_))
    ));
}

#[tokio::test]
async fn an_endless_answer_is_read_only_in_part() {
    let dir = tempfile::tempdir().unwrap();
    // Far longer than the test takes: a send that read the whole answer would end by this
    // timeout, as "no answer", and stay pending.
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(600)).await;
    let (base, _s) = server(vec![Answer::Endless]).await;
    o.add_channel(
        "hook",
        ChannelKind::Webhook,
        Some(&format!("{base}/hook")),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    o.enqueue_event(PushEvent::Alerts, &msg("x"), t0())
        .await
        .unwrap();
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent, "{d:?}");
}

#[tokio::test]
async fn a_robot_url_with_its_key_is_refused_and_clashing_names_too() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(5)).await;
    let pasted = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a-k1";
    assert!(matches!(
        o.add_channel("team", ChannelKind::Wecom, Some(pasted), false, None, t0())
            .await,
        Err(PushError::KeyInUrl)
    ));
    assert!(o.channels().await.unwrap().is_empty());
    let (base, key) = wyckoff_push::split_pasted(ChannelKind::Wecom, pasted, None);
    assert_eq!(key.as_deref(), Some("693a-k1"));
    let c = o
        .add_channel("team", ChannelKind::Wecom, Some(&base), false, None, t0())
        .await
        .unwrap();
    assert_eq!(c.url, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send");

    o.add_channel("a-b", ChannelKind::Wecom, None, false, None, t0())
        .await
        .unwrap();
    for clash in ["a_b", "A-B"] {
        match o
            .add_channel(clash, ChannelKind::Wecom, None, false, None, t0())
            .await
        {
            Err(PushError::EnvClash { other, var, .. }) => {
                assert_eq!(
                    (other.as_str(), var.as_str()),
                    ("a-b", "WYCKOFF_PUSH_TOKEN_A_B")
                );
            }
            other => panic!("{clash}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_damaged_channel_row_is_named_and_stops_no_other_channel() {
    let dir = tempfile::tempdir().unwrap();
    let o = outbox(&dir.path().join("w.db"), Duration::from_secs(5)).await;
    let (base, s) = server(vec![]).await;
    o.add_channel(
        "good",
        ChannelKind::Webhook,
        Some(&format!("{base}/hook")),
        true,
        None,
        t0(),
    )
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO push_channels (name, kind, url, allow_private, email_json, created_at) VALUES ('mail', 'email', 'smtps://x', 0, '{not json', '2026-12-01T00:00:00Z')",
    )
    .execute(&pool(&dir.path().join("w.db")).await)
    .await
    .unwrap();
    let (good, damaged) = o.channels_checked().await.unwrap();
    assert_eq!(good.len(), 1);
    assert_eq!(damaged[0].name, "mail");
    assert!(matches!(
        o.channel("mail").await,
        Err(PushError::Corrupt { .. })
    ));
    let names = o.enqueue_all(Some(3), &msg("fired"), t0()).await.unwrap();
    assert_eq!(names, vec!["good".to_owned()]);
    let d = o.deliver_due(t0()).await.unwrap();
    assert_eq!(d[0].status, OutboxStatus::Sent);
    assert_eq!(s.got().len(), 1);
}
