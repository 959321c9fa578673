//! A webhook on 127.0.0.1 for push tests: answers each POST with the next scripted status
//! (200 once they run out) and keeps the JSON bodies.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::Value;

pub struct Hook {
    pub url: String,
    pub got: Arc<Mutex<Vec<Value>>>,
}

impl Hook {
    /// The bodies received so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.got.lock().map(|g| g.clone()).unwrap_or_default()
    }
}

pub fn hook(answers: Vec<(u16, &'static str)>) -> Hook {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
    let url = format!(
        "http://{}/hook",
        listener.local_addr().expect("a bound address")
    );
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        let mut answers = answers.into_iter();
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            if let Ok(mut g) = seen.lock() {
                g.push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            }
            let (code, text) = answers.next().unwrap_or((200, "ok"));
            let mut stream = reader.into_inner();
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    Hook { url, got }
}
