//! For the ledger's CLI tests: a local server speaking Eastmoney's kline format from a
//! fixed table of closes (each fund's or bond's `secid` and day), logging every request
//! line; the `wyckoff` runs against it (or offline) that print JSON; and a holding's line
//! by code. Included with `#[path]` by the tests that need it.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

/// One close served: (secid such as `1.510300`, `YYYY-MM-DD`, close).
pub type Close = (&'static str, &'static str, f64);

/// Starts the server answering kline requests from `closes` (an unknown `secid` gets
/// Eastmoney's empty answer, `data: null`); returns its base URL and the request lines it
/// has seen.
pub fn serve(closes: &'static [Close]) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            let mut buf = [0_u8; 4096];
            let mut got = Vec::new();
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = sock.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            let head = String::from_utf8_lossy(&got).to_string();
            let line = head.lines().next().unwrap_or("").to_owned();
            log.lock().unwrap().push(line.clone());
            let secid = line
                .split(['?', '&', ' '])
                .find_map(|p| p.strip_prefix("secid="))
                .unwrap_or("")
                .to_owned();
            let klines: Vec<String> = closes
                .iter()
                .filter(|(s, _, _)| *s == secid)
                .map(|(_, d, c)| {
                    format!(
                        "{d},{c},{c},{c},{c},1200,{},0.5,0.1,0.01,0.2",
                        c * 120_000.0
                    )
                })
                .collect();
            let body = if klines.is_empty() {
                json!({"rc": 0, "data": null}).to_string()
            } else {
                json!({"rc": 0, "data": {"code": secid, "klines": klines}}).to_string()
            };
            let _ = write!(
                sock,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (base, seen)
}

/// Runs `wyckoff ARGS` on `home` (against the server at `online`, Eastmoney the only
/// source, or offline), asserts it succeeded and returns its stdout as JSON.
pub fn run(home: &Path, online: Option<&str>, args: &[&str]) -> Value {
    let mut cmd = wyckoff_cli(home);
    if let Some(base) = online {
        cmd.env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "eastmoney")
            .env("WYCKOFF_EASTMONEY_URL", base);
    }
    let out = cmd.args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The holding of `code` among `holdings` (a JSON array).
pub fn line<'a>(holdings: &'a Value, code: &str) -> &'a Value {
    holdings
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {holdings}"))
}
