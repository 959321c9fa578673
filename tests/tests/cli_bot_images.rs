//! End-to-end: a Telegram chat asking the desk to analyse one stock gets the answer and
//! then the stock's daily chart as a photo, through the real `wyckoff` binary (`wyckoff
//! bot run`) against a local fake Telegram Bot API that takes `sendPhoto` as
//! multipart/form-data (`chat_id`, `caption`, the `photo` file) and the mock model vendor.
//! The photo is a PNG that decodes, sent to the asking chat, its caption naming the code
//! and the date of the newest cached bar (read from the cache here, not from the bot); an
//! unknown code gets the answer and a line saying there is no chart, and no photo; a
//! question that is not one stock's analysis gets text only; a stock the engine reads a
//! schematic on has every label `wyckoff events` lists on the bars drawn in its caption and
//! a mark in the picture. Needs `cargo build -p wyckoff-cli` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use wyckoff_e2e::approvals::tool_call;
use wyckoff_e2e::wyckoff_cli;
use wyckoff_market::cache::BarTable;
use wyckoff_market::{MarketConfig, MarketData, StockCode};
use wyckoff_mock_vendor::{MockServer, OpenAiStream, Route};

const KEY: (&str, &str) = ("WYCKOFF_KEY_MOCK", "sk-bot-images-123456");
const TOKEN: &str = "123456789:AAE-bot-images-token";
const TOKEN_VAR: &str = "WYCKOFF_BOT_TOKEN_TG";

// ---------------------------------------------------------------- the fake Bot API

/// One `sendPhoto` as received: the form's parts by name.
#[derive(Debug, Clone)]
struct Photo {
    chat_id: String,
    caption: String,
    file_name: String,
    content_type: String,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct TgState {
    updates: Vec<Value>,
    /// sendMessage calls: (chat id, text).
    sent: Vec<(i64, String)>,
    photos: Vec<Photo>,
    /// Every method called, in order (sendPhoto after the answer's sendMessage).
    calls: Vec<String>,
}

#[derive(Clone)]
struct FakeTelegram {
    url: String,
    state: Arc<Mutex<TgState>>,
}

impl FakeTelegram {
    async fn start() -> FakeTelegram {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(TgState::default()));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let state = shared.clone();
                tokio::spawn(async move { serve(socket, state).await });
            }
        });
        FakeTelegram { url, state }
    }

    fn message(&self, from: i64, text: &str) {
        let mut s = self.state.lock().unwrap();
        let id = 1000 + i64::try_from(s.updates.len()).unwrap();
        s.updates.push(json!({
            "update_id": id,
            "message": {
                "message_id": id * 10,
                "from": {"id": from, "is_bot": false, "first_name": format!("user{from}")},
                "chat": {"id": from, "type": "private"},
                "date": 1_765_000_000,
                "text": text,
            }
        }));
    }

    fn sent_to(&self, chat: i64) -> Vec<String> {
        let s = self.state.lock().unwrap();
        s.sent
            .iter()
            .filter(|(c, _)| *c == chat)
            .map(|(_, t)| t.clone())
            .collect()
    }

    async fn wait_sent(&self, chat: i64, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let sent = self.sent_to(chat);
            if sent.len() >= n {
                return sent;
            }
            assert!(
                Instant::now() < deadline,
                "chat {chat} got {} of {n} messages: {sent:?}",
                sent.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn wait_photos(&self, n: usize) -> Vec<Photo> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let photos = self.state.lock().unwrap().photos.clone();
            if photos.len() >= n {
                return photos;
            }
            assert!(
                Instant::now() < deadline,
                "{} of {n} photos; messages {:?}",
                photos.len(),
                self.state.lock().unwrap().sent
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

struct Request {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    let header_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).into_owned();
    let path = head.split_whitespace().nth(1)?.to_owned();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(Request {
        path,
        content_type: header("content-type").unwrap_or_default(),
        body: buf[header_end..header_end + length].to_vec(),
    })
}

/// The parts of a multipart/form-data body: (name, filename, content type, bytes).
fn form_parts(content_type: &str, body: &[u8]) -> Vec<(String, String, String, Vec<u8>)> {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap_or_else(|| panic!("no boundary in {content_type}"))
        .trim_matches('"');
    let delimiter = format!("--{boundary}");
    let d = delimiter.as_bytes();
    let mut starts: Vec<usize> = body
        .windows(d.len())
        .enumerate()
        .filter(|(_, w)| *w == d)
        .map(|(i, _)| i)
        .collect();
    assert!(starts.len() >= 2, "no parts in the form");
    let mut parts = Vec::new();
    let last = starts.pop().unwrap();
    assert_eq!(
        &body[last + d.len()..last + d.len() + 2],
        b"--",
        "unclosed form"
    );
    starts.push(last);
    for w in starts.windows(2) {
        let part = &body[w[0] + d.len()..w[1]];
        let part = part
            .strip_prefix(b"\r\n")
            .expect("a part starts on a new line");
        let part = part.strip_suffix(b"\r\n").expect("a part ends with CRLF");
        let split = part.windows(4).position(|x| x == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&part[..split]).into_owned();
        let field = |key: &str| {
            head.split(';')
                .find_map(|p| p.trim().strip_prefix(&format!("{key}=\"")))
                .and_then(|v| v.split('"').next())
                .unwrap_or_default()
                .to_owned()
        };
        let ctype = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Type: "))
            .unwrap_or_default()
            .to_owned();
        parts.push((
            field("name"),
            field("filename"),
            ctype,
            part[split + 4..].to_vec(),
        ));
    }
    parts
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<TgState>>) {
    let Some(req) = read_request(&mut socket).await else {
        return;
    };
    let prefix = format!("/bot{TOKEN}/");
    let Some(method) = req.path.strip_prefix(&prefix).map(str::to_owned) else {
        let body = json!({"ok": false, "error_code": 401, "description": "Unauthorized"});
        respond(&mut socket, 401, &body).await;
        return;
    };
    state.lock().unwrap().calls.push(method.clone());
    let json_body = || serde_json::from_slice::<Value>(&req.body).unwrap_or(Value::Null);
    let answer = match method.as_str() {
        "getUpdates" => {
            let offset = json_body()["offset"].as_i64().unwrap_or(0);
            let deadline = Instant::now() + Duration::from_millis(300);
            loop {
                let ready: Vec<Value> = {
                    let s = state.lock().unwrap();
                    s.updates
                        .iter()
                        .filter(|u| u["update_id"].as_i64().unwrap() >= offset)
                        .cloned()
                        .collect()
                };
                if !ready.is_empty() || Instant::now() >= deadline {
                    break json!({"ok": true, "result": ready});
                }
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        }
        "sendMessage" => {
            let body = json_body();
            let chat = body["chat_id"].as_i64().unwrap();
            let text = body["text"].as_str().unwrap().to_owned();
            state.lock().unwrap().sent.push((chat, text));
            json!({"ok": true, "result": {"message_id": 1, "chat": {"id": chat, "type": "private"}, "date": 0}})
        }
        "sendPhoto" => {
            assert!(
                req.content_type.starts_with("multipart/form-data"),
                "sendPhoto as {}",
                req.content_type
            );
            let parts = form_parts(&req.content_type, &req.body);
            let text = |name: &str| {
                parts
                    .iter()
                    .find(|p| p.0 == name)
                    .map(|p| String::from_utf8(p.3.clone()).unwrap())
                    .unwrap_or_default()
            };
            let file = parts.iter().find(|p| p.0 == "photo").expect("a photo part");
            let photo = Photo {
                chat_id: text("chat_id"),
                caption: text("caption"),
                file_name: file.1.clone(),
                content_type: file.2.clone(),
                bytes: file.3.clone(),
            };
            state.lock().unwrap().photos.push(photo);
            json!({"ok": true, "result": {"message_id": 2, "chat": {"id": 0, "type": "private"}, "date": 0, "photo": []}})
        }
        "sendChatAction" => json!({"ok": true, "result": true}),
        _ => json!({"ok": false, "error_code": 404, "description": "Not Found"}),
    };
    respond(&mut socket, 200, &answer).await;
}

async fn respond(socket: &mut TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(body.as_bytes()).await;
    let _ = socket.shutdown().await;
}

// ---------------------------------------------------------------- the binary

async fn ok(home: &Path, args: &[&str]) -> String {
    let mut cmd = wyckoff_cli(home);
    cmd.args(args).env(KEY.0, KEY.1).env(TOKEN_VAR, TOKEN);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        wyckoff_e2e::show(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run_bot(home: &Path) -> Running {
    let child = wyckoff_cli(home)
        .args(["bot", "run", "--poll-timeout", "1", "--retry-ms", "200"])
        .env(KEY.0, KEY.1)
        .env(TOKEN_VAR, TOKEN)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    Running(child)
}

/// The dates of `code`'s cached daily bars in the home, oldest first.
async fn cached_dates(home: &Path, code: &str) -> Vec<u32> {
    let md = MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap();
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
        .iter()
        .map(|b| b.date)
        .collect()
}

/// The newest cached daily bar of `code` in the home, as the cache holds it.
async fn last_cached_date(home: &Path, code: &str) -> u32 {
    let md = MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap();
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
        .last()
        .expect("bundled bars")
        .date
}

/// The decoded RGB pixels.
fn png_pixels(bytes: &[u8]) -> Vec<u8> {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    px.truncate(info.buffer_size());
    px
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut px = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut px).unwrap();
    (info.width, info.height)
}

/// The model's turn for one stock's analysis: `analyze_stock` first (the desk insists on
/// real data before an answer about a stock), then `answer`.
fn analysis(server: &MockServer, code: &str, answer: &str) {
    server.push(
        Route::Openai,
        tool_call(
            &format!("call_{code}"),
            "analyze_stock",
            json!({"code": code}),
        ),
    );
    server.push(Route::Openai, OpenAiStream::text_response(&[answer]));
}

// ---------------------------------------------------------------- the test

#[tokio::test(flavor = "multi_thread")]
async fn analysing_a_stock_sends_its_daily_chart_as_a_photo_and_an_unknown_code_says_there_is_none()
{
    let server = MockServer::start().await.unwrap();
    let tg = FakeTelegram::start().await;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    wyckoff_e2e::webdriver::mock_model_settings(h, &format!("{}/v1", server.url()));
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
    let _bot = run_bot(h);

    // Pair sender 42.
    tg.message(42, "你好");
    let sent = tg.wait_sent(42, 1).await;
    let code: String = sent[0]
        .split("配对码：")
        .nth(1)
        .unwrap_or_else(|| panic!("no code: {}", sent[0]))
        .chars()
        .take(8)
        .collect();
    ok(h, &["bot", "pair", &code]).await;
    // The bot opened the data home, so the bundled bars are in its cache.
    let last = last_cached_date(h, "000001").await;
    let last_iso = format!(
        "{:04}-{:02}-{:02}",
        last / 10000,
        (last / 100) % 100,
        last % 100
    );

    // `/analyze 000001`: the answer, then the chart.
    analysis(&server, "000001", "平安银行：吸筹阶段。");
    tg.message(42, "/analyze 000001");
    let photos = tg.wait_photos(1).await;
    let sent = tg.wait_sent(42, 2).await;
    assert!(sent[1].ends_with("平安银行：吸筹阶段。"), "{}", sent[1]);
    let photo = &photos[0];
    assert_eq!(photo.chat_id, "42");
    assert_eq!(photo.content_type, "image/png");
    assert_eq!(photo.file_name, format!("000001-{last}.png"));
    assert_eq!(png_size(&photo.bytes), (960, 540), "the photo decodes");
    assert!(photo.caption.contains("000001"), "{}", photo.caption);
    assert!(
        photo.caption.contains(&format!("最后一根 {last_iso}")),
        "the caption names the last bar {last_iso}: {}",
        photo.caption
    );
    // The bundled bars end years ago: the caption says they are stale.
    assert!(photo.caption.contains("数据陈旧"), "{}", photo.caption);
    assert!(photo.caption.chars().count() <= 1024);
    {
        let s = tg.state.lock().unwrap();
        let answer_at = s.calls.iter().rposition(|c| c == "sendMessage").unwrap();
        let photo_at = s.calls.iter().position(|c| c == "sendPhoto").unwrap();
        assert!(
            answer_at < photo_at,
            "the photo after the answer: {:?}",
            s.calls
        );
    }

    // "分析 000001" as typed carries the chart too.
    analysis(&server, "000001", "再看一次。");
    tg.message(42, "分析 000001");
    let photos = tg.wait_photos(2).await;
    assert_eq!(photos[1].chat_id, "42");
    assert_eq!(
        photos[1].bytes, photo.bytes,
        "the same bars, the same picture"
    );

    // A stock that is nowhere, in a fresh conversation (a third turn would have the
    // desk compact this one, asking the model first): the answer, and a line saying
    // there is no chart.
    tg.message(42, "/new");
    tg.wait_sent(42, 4).await;
    analysis(&server, "688999", "找不到这只股票。");
    tg.message(42, "/analyze 688999");
    let sent = tg.wait_sent(42, 6).await;
    assert!(sent[4].ends_with("找不到这只股票。"), "{}", sent[4]);
    assert_eq!(
        sent[5],
        "没有 688999 的日线图：股票列表和本地缓存里都没有这个代码。"
    );

    // A question that is not one stock's analysis: text only.
    server.push(Route::Openai, OpenAiStream::text_response(&["你好！"]));
    tg.message(42, "你好");
    let sent = tg.wait_sent(42, 7).await;
    assert!(sent[6].ends_with("你好！"), "{}", sent[6]);
    // Give a stray photo time to arrive.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        tg.state.lock().unwrap().photos.len(),
        2,
        "no photo without a chart"
    );
    assert_eq!(tg.sent_to(42).len(), 7);

    // A stock the engine reads a schematic on: the caption lists every label the engine
    // placed on the bars drawn (as `wyckoff events` lists them) and the picture has the
    // orange mark of a label over a high.
    tg.message(42, "/new");
    tg.wait_sent(42, 8).await;
    analysis(&server, "300027", "华谊兄弟：派发。");
    tg.message(42, "/analyze 300027");
    let photos = tg.wait_photos(3).await;
    let caption = &photos[2].caption;
    assert!(caption.contains("结构：派发"), "{caption}");
    let first_drawn = cached_dates(h, "300027").await;
    let first_drawn = first_drawn[first_drawn.len() - 120];
    let events: Value =
        serde_json::from_str(&ok(h, &["events", "300027", "--json"]).await).unwrap();
    let labels: Vec<String> = events["marks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["mark"]["type"] == "event" && k["since"] == k["known_on"])
        .filter(|k| k["bar_date"].as_u64().unwrap() >= u64::from(first_drawn))
        .map(|k| {
            let d = k["bar_date"].as_u64().unwrap();
            format!(
                "{} {:04}-{:02}-{:02}",
                k["mark"]["event"].as_str().unwrap(),
                d / 10000,
                (d / 100) % 100,
                d % 100
            )
        })
        .collect();
    assert!(
        !labels.is_empty(),
        "the engine reads labels on 300027's last bars"
    );
    for label in &labels {
        assert!(caption.contains(label.as_str()), "{label} not in {caption}");
    }
    let orange = [0xc2, 0x41, 0x0c];
    assert!(
        png_pixels(&photos[2].bytes).chunks(3).any(|p| p == orange),
        "no label over a high drawn"
    );
}
