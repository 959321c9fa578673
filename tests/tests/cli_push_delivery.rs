//! `wyckoff push` delivery as a user meets it, against a local HTTP server that records
//! every request whole (headers too): `alerts check` killed (SIGKILL) while the channel
//! holds its request leaves the row marked in flight, and the next `push deliver` repeats
//! it under the same delivery id (header and body); a webhook's secret goes in the header
//! it names and an answer echoing it is masked in the outbox, the output and the data home;
//! a robot URL pasted with its key is stored without it; two names sharing one environment
//! variable are refused; an answer without end is read only in part.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use wyckoff_e2e::show;

type Home = wyckoff_e2e::CliHome;

#[derive(Debug, Clone)]
struct Got {
    target: String,
    headers: HashMap<String, String>,
    body: Value,
}

#[derive(Clone)]
enum Answer {
    Reply(u16, &'static str),
    /// Read the request and answer nothing (the connection stays open).
    Stall,
    /// Claim a gigabyte, send a mebibyte of it, then nothing more.
    Endless,
}

struct Server {
    url: String,
    got: Arc<Mutex<Vec<Got>>>,
    arrived: mpsc::Receiver<()>,
}

/// A server on 127.0.0.1 answering each request with the next of `answers` (200 "ok" once
/// they run out); each request is kept and announced on `arrived`.
fn server(answers: Vec<Answer>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    let (tx, arrived) = mpsc::channel();
    std::thread::spawn(move || {
        let mut answers = answers.into_iter();
        // Connections held open by a stall, so the client sees no end.
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut first = String::new();
            if reader.read_line(&mut first).unwrap_or(0) == 0 {
                continue;
            }
            let target = first.split(' ').nth(1).unwrap_or_default().to_owned();
            let mut headers = HashMap::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
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
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            seen.lock().unwrap().push(Got {
                target,
                headers,
                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            });
            let _ = tx.send(());
            let mut stream = reader.into_inner();
            match answers.next().unwrap_or(Answer::Reply(200, "ok")) {
                Answer::Reply(code, text) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {code} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                        text.len()
                    );
                }
                Answer::Stall => held.push(stream),
                Answer::Endless => {
                    let _ =
                        stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1073741824\r\n\r\n");
                    let chunk = vec![b'x'; 64 * 1024];
                    for _ in 0..16 {
                        if stream.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                    held.push(stream);
                }
            }
        }
    });
    Server { url, got, arrived }
}

impl Server {
    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }
}

fn add_webhook(home: &Home, name: &str, url: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "push",
        "add",
        name,
        "--kind",
        "webhook",
        "--url",
        url,
        "--allow-private",
    ];
    args.extend_from_slice(extra);
    args.push("--json");
    home.json(&args)
}

/// Every byte under the data home.
fn home_bytes(dir: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            all.extend(home_bytes(&p));
        } else {
            all.extend(std::fs::read(p).unwrap_or_default());
        }
    }
    all
}

fn holds(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn a_check_killed_mid_send_leaves_the_row_in_flight_and_the_repeat_carries_the_same_id() {
    let home = Home::new();
    let s = server(vec![Answer::Stall]);
    add_webhook(&home, "desk", &s.url, &[]);
    home.json(&["alerts", "add", "000001", "--price-above", "0.01", "--json"]);

    let mut check = home
        .command(&["alerts", "check", "--json"])
        .spawn()
        .unwrap();
    // The channel holds the request: the check is mid-send. Kill it there.
    s.arrived.recv_timeout(Duration::from_secs(300)).unwrap();
    check.kill().unwrap();
    check.wait().unwrap();

    let rows = home.json(&["push", "outbox", "--json"]);
    assert_eq!(rows.as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows[0]["status"], "pending");
    assert!(rows[0]["in_flight_since"].is_string(), "{rows}");
    let id = rows[0]["delivery_id"].as_str().unwrap().to_owned();
    let text = home.text(&["push", "outbox"]);
    assert!(text.contains("in flight since"), "{text}");

    let later = (chrono::Utc::now() + chrono::TimeDelta::minutes(5)).to_rfc3339();
    let done = home.json(&["push", "deliver", "--now", &later, "--json"]);
    assert_eq!(done[0]["status"], "sent", "{done}");
    assert_eq!(done[0]["repeat"], true, "{done}");
    assert_eq!(done[0]["delivery_id"], id.as_str());
    let got = s.got();
    assert_eq!(got.len(), 2);
    for g in &got {
        assert_eq!(g.headers.get("x-wyckoff-delivery"), Some(&id), "{g:?}");
        assert_eq!(g.body["delivery_id"], id.as_str(), "{g:?}");
    }
    assert_eq!(got[0].body["alert"], got[1].body["alert"]);
    let rows = home.json(&["push", "outbox", "--json"]);
    assert_eq!(rows[0]["status"], "sent");
    assert!(rows[0]["in_flight_since"].is_null(), "{rows}");
}

#[test]
fn a_webhooks_secret_goes_in_its_header_and_an_echo_of_it_is_masked_everywhere() {
    const SECRET: &str = "hook-s3cret-7f1c";
    let home = Home::new();
    let s = server(vec![
        Answer::Reply(401, "refused: X-Token was hook-s3cret-7f1c"),
        Answer::Reply(200, "ok"),
    ]);
    let ch = add_webhook(&home, "desk", &s.url, &["--secret-header", "X-Token"]);
    assert_eq!(
        ch["secret_in"],
        serde_json::json!({"in": "header", "name": "X-Token"})
    );
    home.json(&["alerts", "add", "000001", "--price-above", "0.01", "--json"]);
    let out = home
        .command(&["alerts", "check", "--json"])
        .env("WYCKOFF_PUSH_TOKEN_DESK", SECRET)
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        !holds(&out.stdout, SECRET) && !holds(&out.stderr, SECRET),
        "{}",
        show(&out)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["deliveries"][0]["error"],
        "HTTP 401: refused: X-Token was ***"
    );
    assert_eq!(
        s.got()[0].headers.get("x-token").map(String::as_str),
        Some(SECRET)
    );
    let rows = home.json(&["push", "outbox", "--json"]);
    assert_eq!(rows[0]["last_error"], "HTTP 401: refused: X-Token was ***");
    assert!(!holds(&home_bytes(home.path()), SECRET));
    // The URL shown is the one given: the secret never was in it.
    let list = home.text(&["push", "list"]);
    assert!(!list.contains(SECRET), "{list}");

    // A secret in a query parameter: a URL pasted with it is stored without it, and each
    // send puts it back.
    let q = server(vec![]);
    let pasted = format!("{}?team=a&token=q-s3cret-99", q.url);
    let out = home
        .command(&[
            "push",
            "add",
            "query",
            "--kind",
            "webhook",
            "--url",
            &pasted,
            "--allow-private",
            "--secret-query",
            "token",
            "--json",
        ])
        .env("WYCKOFF_PUSH_TOKEN_QUERY", "q-s3cret-99")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let ch: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ch["url"], format!("{}?team=a", q.url));
    let out = home
        .command(&["push", "test", "query"])
        .env("WYCKOFF_PUSH_TOKEN_QUERY", "q-s3cret-99")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(q.got()[0].target, "/hook?team=a&token=q-s3cret-99");
    assert!(!holds(&home_bytes(home.path()), "q-s3cret-99"));
}

#[test]
fn a_robot_url_pasted_with_its_key_is_split_and_clashing_names_are_refused() {
    const KEY: &str = "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa";
    let home = Home::new();
    let pasted = format!("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={KEY}");
    // No keychain here and no variable: the key has nowhere to go, so nothing is added,
    // and the message says how to go on without repeating the key.
    let out = home.run(&["push", "add", "team", "--kind", "wecom", "--url", &pasted]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("WYCKOFF_PUSH_TOKEN_TEAM"), "{err}");
    assert!(!err.contains(KEY), "{err}");
    assert_eq!(
        home.json(&["push", "list", "--json"]),
        serde_json::json!([])
    );
    // With the key in the environment, the channel keeps the base address only.
    let out = home
        .command(&[
            "push", "add", "team", "--kind", "wecom", "--url", &pasted, "--json",
        ])
        .env("WYCKOFF_PUSH_TOKEN_TEAM", KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let ch: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        ch["url"],
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send"
    );
    assert!(!home.text(&["push", "list"]).contains(KEY));
    assert!(!holds(&home_bytes(home.path()), KEY));

    // `a-b` and `a_b` would read one variable: the second is refused.
    home.json(&["push", "add", "a-b", "--kind", "wecom", "--json"]);
    let out = home.run(&["push", "add", "a_b", "--kind", "wecom"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'a_b' and 'a-b' would share the environment variable WYCKOFF_PUSH_TOKEN_A_B"),
        "{err}"
    );
}

#[test]
fn an_answer_without_end_is_read_only_in_part() {
    let home = Home::new();
    let s = server(vec![Answer::Endless]);
    add_webhook(&home, "desk", &s.url, &[]);
    // Read whole, this answer would never end (the send's time limit would call it "no
    // answer"); read in part, its 200 is all that counts.
    let t = home.json(&["push", "test", "desk", "--json"]);
    assert_eq!(
        (t["ok"].as_bool(), t["http_status"].as_u64()),
        (Some(true), Some(200)),
        "{t}"
    );
    assert_eq!(s.got().len(), 1);
}
