//! Feishu's long connection against a local fake: `POST /callback/ws/endpoint` gives a
//! WebSocket URL and a `ClientConfig`; the socket speaks `pbbp2.Frame`s. The client's
//! loop ([`wyckoff_bot::serve_feishu::listen`], what `wyckoff bot run` serves a Feishu bot
//! with) must open the socket through the proxy from Settings as its HTTP calls go, and
//! follow the server's `PingInterval` and `ReconnectInterval`, also when a pong changes them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;
use wyckoff_bot::ServeOptions;
use wyckoff_bot::feishu::{CONTROL, DATA, FeishuClient, Frame, Header, MESSAGE_EVENT};
use wyckoff_bot::serve_feishu::listen;

/// What the fake Feishu saw, and what it is told to do.
#[derive(Default)]
struct Seen {
    /// Each endpoint request: when, and its request target as it came (absolute-form
    /// `http://host/...` through a proxy, `/...` straight).
    endpoints: Vec<(Instant, String)>,
    /// Endpoint requests still to refuse as busy (`code` 1).
    refuse: usize,
    /// Sockets opened.
    sockets: usize,
    /// Pings on the first socket: when, and their service.
    pings: Vec<(Instant, i32)>,
    /// When the first socket was closed by the fake.
    dropped_at: Option<Instant>,
    /// Answers to data frames: the frame's message id and its payload.
    answers: Vec<(String, Value)>,
}

type State = Arc<Mutex<Seen>>;

/// How the fake's first socket behaves.
#[derive(Clone, Copy)]
enum Script {
    /// After the first ping, one message to the bot; kept open.
    OneMessage,
    /// Pongs that change the intervals; closed after the third ping.
    DropAfterThreePings,
}

struct FakeFeishu {
    base: String,
    /// The WebSocket's `host:port`.
    ws: String,
    state: State,
}

/// The endpoint's `ClientConfig` and a pong's payload in the fake.
fn endpoint_config() -> Value {
    json!({"ReconnectCount": -1, "ReconnectInterval": 5, "ReconnectNonce": 30, "PingInterval": 1})
}
fn pong_config() -> Value {
    json!({"ReconnectCount": -1, "ReconnectInterval": 1, "ReconnectNonce": 30, "PingInterval": 2})
}

const SERVICE: i32 = 7;

async fn fake_feishu(script: Script) -> FakeFeishu {
    let state = State::default();
    let ws = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ws_authority = ws.local_addr().unwrap().to_string();
    let ws_url = format!("ws://{ws_authority}/ws?device_id=d1&service_id={SERVICE}&ticket=t1");
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", http.local_addr().unwrap());
    {
        let state = state.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = http.accept().await.unwrap();
                tokio::spawn(serve_http(stream, state.clone(), ws_url.clone()));
            }
        });
    }
    {
        let state = state.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = ws.accept().await.unwrap();
                let first = {
                    let mut s = state.lock().unwrap();
                    s.sockets += 1;
                    s.sockets == 1
                };
                let state = state.clone();
                tokio::spawn(async move {
                    let socket = tokio_tungstenite::accept_async(stream).await.unwrap();
                    if first {
                        serve_socket(socket, state, script).await;
                    } else {
                        // Later sockets: held open, pings answered, until the client goes.
                        let (mut sink, mut source) = socket.split();
                        while let Some(Ok(m)) = source.next().await {
                            if let Message::Binary(b) = m {
                                let f = Frame::decode_bytes(&b).unwrap();
                                if f.header("type") == Some("ping") {
                                    let _ = sink.send(pong(None)).await;
                                }
                            }
                        }
                    }
                });
            }
        });
    }
    FakeFeishu {
        base,
        ws: ws_authority,
        state,
    }
}

/// The fake's HTTP side: the endpoint (refused as busy while told to), one request after
/// another on a kept-alive connection.
async fn serve_http(stream: TcpStream, state: State, ws_url: String) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let target = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            stream.read_line(&mut header).await.unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        let answer = if target.ends_with("/callback/ws/endpoint") {
            let asked: Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(asked["AppID"], "cli_app");
            let mut s = state.lock().unwrap();
            s.endpoints.push((Instant::now(), target.clone()));
            if s.refuse > 0 {
                s.refuse -= 1;
                json!({"code": 1, "msg": "system busy"})
            } else {
                json!({"code": 0, "msg": "ok", "data": {"URL": ws_url, "ClientConfig": endpoint_config()}})
            }
        } else {
            json!({"code": 404, "msg": format!("no {target}")})
        };
        let text = answer.to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            text.len()
        );
        let out = stream.get_mut();
        out.write_all(head.as_bytes()).await.unwrap();
        out.write_all(text.as_bytes()).await.unwrap();
    }
}

fn pong(config: Option<Value>) -> Message {
    let frame = Frame {
        service: SERVICE,
        method: CONTROL,
        headers: vec![header("type", "pong")],
        payload: config.map(|c| c.to_string().into_bytes()),
        ..Frame::default()
    };
    Message::Binary(frame.to_bytes().into())
}

fn header(key: &str, value: &str) -> Header {
    Header {
        key: key.into(),
        value: value.into(),
    }
}

/// `im.message.receive_v1` from `ou_u1` in a one-to-one chat, as a data frame.
fn message_frame(message_id: &str, text: &str) -> Message {
    let payload = json!({
        "schema": "2.0",
        "header": {"event_id": "ev1", "event_type": MESSAGE_EVENT, "app_id": "cli_app"},
        "event": {
            "sender": {"sender_id": {"open_id": "ou_u1"}, "sender_type": "user"},
            "message": {"message_id": "om_1", "chat_id": "oc_1", "chat_type": "p2p",
                        "message_type": "text", "content": json!({"text": text}).to_string()},
        },
    });
    let frame = Frame {
        seq_id: 1,
        log_id: 2,
        service: SERVICE,
        method: DATA,
        headers: vec![
            header("type", "event"),
            header("message_id", message_id),
            header("sum", "1"),
            header("seq", "0"),
            header("trace_id", "tr1"),
        ],
        payload: Some(payload.to_string().into_bytes()),
        ..Frame::default()
    };
    Message::Binary(frame.to_bytes().into())
}

async fn serve_socket(
    socket: tokio_tungstenite::WebSocketStream<TcpStream>,
    state: State,
    script: Script,
) {
    let (mut sink, mut source) = socket.split();
    while let Some(Ok(m)) = source.next().await {
        let Message::Binary(bytes) = m else { continue };
        let frame = Frame::decode_bytes(&bytes).unwrap();
        if frame.method == DATA {
            let payload = serde_json::from_slice(frame.payload.as_deref().unwrap()).unwrap();
            let id = frame.header("message_id").unwrap_or_default().to_owned();
            state.lock().unwrap().answers.push((id, payload));
            continue;
        }
        if frame.header("type") != Some("ping") {
            continue;
        }
        let pings = {
            let mut s = state.lock().unwrap();
            s.pings.push((Instant::now(), frame.service));
            s.pings.len()
        };
        match script {
            Script::OneMessage => {
                sink.send(pong(None)).await.unwrap();
                if pings == 1 {
                    sink.send(message_frame("frame-1", "分析 000001"))
                        .await
                        .unwrap();
                }
            }
            Script::DropAfterThreePings => {
                if pings == 3 {
                    state.lock().unwrap().dropped_at = Some(Instant::now());
                    let _ = sink.close().await;
                    return;
                }
                sink.send(pong(Some(pong_config()))).await.unwrap();
            }
        }
    }
}

/// An http:// proxy: `CONNECT host:port` tunnels, an absolute-form request is passed on
/// to its host. Each connection's first request line is logged.
async fn connect_proxy() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let logged = log.clone();
    tokio::spawn(async move {
        loop {
            let (mut client, _) = listener.accept().await.unwrap();
            let log = logged.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut b).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let line = text.lines().next().unwrap_or_default().to_owned();
                log.lock().unwrap().push(line.clone());
                let target = line.split_whitespace().nth(1).unwrap_or_default();
                let mut upstream = if line.starts_with("CONNECT ") {
                    let upstream = TcpStream::connect(target).await.unwrap();
                    client
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await
                        .unwrap();
                    upstream
                } else {
                    let authority = target
                        .strip_prefix("http://")
                        .and_then(|r| r.split('/').next())
                        .unwrap();
                    let mut upstream = TcpStream::connect(authority).await.unwrap();
                    upstream.write_all(&head).await.unwrap();
                    upstream
                };
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (url, log)
}

fn options(retry_base_ms: u64) -> ServeOptions {
    ServeOptions {
        retry_base: Duration::from_millis(retry_base_ms),
        retry_max: Duration::from_secs(60),
        ..ServeOptions::default()
    }
}

/// Waits until `done` holds of the fake's state, at most `secs`.
async fn wait_for(state: &State, secs: u64, what: &str, done: impl Fn(&Seen) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done(&state.lock().unwrap()) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_websocket_goes_through_the_settings_proxy_as_the_http_calls_do() {
    let fake = fake_feishu(Script::OneMessage).await;
    let (proxy, proxied) = connect_proxy().await;
    let client = FeishuClient::new(Some(&fake.base), "cli_app:s3cret", Some(&proxy)).unwrap();
    let (tx, mut events) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    let serving = {
        let (client, stop) = (client.clone(), stop.clone());
        tokio::spawn(async move { listen(&client, &options(200), &stop, &tx).await })
    };

    let (frame_id, event) = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("no message came through the proxied socket")
        .unwrap();
    assert_eq!(frame_id, "frame-1");
    assert_eq!(event.text(), "分析 000001");
    assert_eq!(event.message.chat_id, "oc_1");
    wait_for(&fake.state, 5, "the frame's answer", |s| {
        !s.answers.is_empty()
    })
    .await;
    stop.cancel();
    serving.await.unwrap();

    {
        let s = fake.state.lock().unwrap();
        assert_eq!(s.answers[0].0, "frame-1");
        assert_eq!(s.answers[0].1["code"], 200);
        assert_eq!(s.pings[0].1, SERVICE);
        assert_eq!(s.sockets, 1);
        // The endpoint was asked through the proxy (absolute-form), never straight.
        assert!(!s.endpoints.is_empty());
        for (_, target) in &s.endpoints {
            assert_eq!(target, &format!("{}/callback/ws/endpoint", fake.base));
        }
    }
    let lines = proxied.lock().unwrap().clone();
    let tunnels: Vec<&String> = lines.iter().filter(|l| l.starts_with("CONNECT ")).collect();
    // One tunnel, asked for the socket's host and port alone: the ticket stays inside it.
    assert_eq!(
        tunnels,
        [&format!("CONNECT {} HTTP/1.1", fake.ws)],
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("POST {}/callback/ws/endpoint", fake.base))),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_ping_and_reconnect_intervals_are_followed_also_when_a_pong_changes_them() {
    let fake = fake_feishu(Script::DropAfterThreePings).await;
    let client = FeishuClient::new(Some(&fake.base), "cli_app:s3cret", None).unwrap();
    let (tx, _events) = mpsc::unbounded_channel();
    let stop = CancellationToken::new();
    // After the drop the endpoint is refused three times: the waits double from 400 ms
    // (400, 800) up to the 1 s the last pong named — not to the endpoint's 5 s, nor the
    // desk's own minute (1600, 3200).
    let serving = {
        let (client, stop) = (client.clone(), stop.clone());
        tokio::spawn(async move { listen(&client, &options(400), &stop, &tx).await })
    };
    wait_for(&fake.state, 10, "the first pings", |s| !s.pings.is_empty()).await;
    fake.state.lock().unwrap().refuse = 3;
    wait_for(&fake.state, 20, "the second socket", |s| s.sockets >= 2).await;
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the loop did not stop")
        .unwrap();

    let s = fake.state.lock().unwrap();
    let ms = |d: Duration| d.as_millis();
    // Pings: at once, then after the endpoint's 1 s, then after the pong's 2 s.
    let pings: Vec<Instant> = s.pings.iter().map(|p| p.0).collect();
    assert_eq!(pings.len(), 3, "{:?}", s.pings);
    let ping_gaps = [ms(pings[1] - pings[0]), ms(pings[2] - pings[1])];
    assert!(
        (1000..1700).contains(&ping_gaps[0]) && (2000..2700).contains(&ping_gaps[1]),
        "{ping_gaps:?}"
    );
    // Endpoints: the first, then four after the drop (three refused, the last opened).
    assert_eq!(s.endpoints.len(), 5, "{:?}", s.endpoints.len());
    let dropped = s.dropped_at.unwrap();
    let at: Vec<Instant> = s.endpoints.iter().map(|e| e.0).collect();
    let gaps = [
        ms(at[1] - dropped),
        ms(at[2] - at[1]),
        ms(at[3] - at[2]),
        ms(at[4] - at[3]),
    ];
    let within = [(400, 900), (800, 1300), (1000, 1500), (1000, 1500)];
    for (gap, (least, most)) in gaps.iter().zip(within) {
        assert!((least..most).contains(gap), "{gaps:?}");
    }
    // Straight, no proxy set: origin-form requests.
    assert!(s.endpoints.iter().all(|e| e.1 == "/callback/ws/endpoint"));
}
