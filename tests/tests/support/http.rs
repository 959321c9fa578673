//! A local HTTP/1.1 server for the CLI tests' fake vendors: it reads each request's head,
//! hands the request line to the test's answer and writes the reply back, one connection
//! at a time (`Connection: close`, as the vendors' clients expect nothing more). Each test
//! keeps only what its fake answers. Included with `#[path]` by the tests and the support
//! modules that need it; each uses a part.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// A request as the fake sees it.
pub struct Request {
    /// The first line: `GET /path?query HTTP/1.1`.
    pub line: String,
}

impl Request {
    /// The request target: `/path?query`.
    pub fn target(&self) -> &str {
        self.line.split_whitespace().nth(1).unwrap_or("/")
    }

    /// The query string after `?` (empty when there is none).
    pub fn query(&self) -> &str {
        self.target().split_once('?').map_or("", |(_, q)| q)
    }

    /// The raw value of the query parameter `key`, if asked for.
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query()
            .split('&')
            .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
    }
}

/// What the fake sends back.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    /// `200` with a JSON body.
    pub fn json(body: impl ToString) -> Reply {
        Reply::new(200, "application/json", body.to_string())
    }

    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status,
            content_type,
            body: body.into(),
        }
    }
}

/// Starts the server on a free local port, answering every request with `answer`;
/// returns its base URL (`http://127.0.0.1:PORT`).
pub fn serve(answer: impl Fn(&Request) -> Reply + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { continue };
            let head = read_head(&mut sock);
            let request = Request {
                line: head.lines().next().unwrap_or("").to_owned(),
            };
            let reply = answer(&request);
            let _ = write!(
                sock,
                "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                reply.status,
                reason(reply.status),
                reply.content_type,
                reply.body.len()
            );
            let _ = sock.write_all(&reply.body);
        }
    });
    base
}

/// The request's head, up to the blank line (or what came before the client stopped).
fn read_head(sock: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0_u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut buf).unwrap_or(0);
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        404 => "Not Found",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        _ => "Status",
    }
}
