//! A local HTTP server that replays the recorded vendor replies in tests/fixtures.
//!
//! URL layout: `http://addr/{vendor}/{scenario}/…`. The reply is the fixture
//! `fixtures/{vendor}/{scenario}[.{api_name}|.pn{N}].{json|html}`; a scenario ending in
//! `_NNN` is served with HTTP status NNN. `flaky_502` fails once, then serves `ok`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub body: String,
}

impl Recorded {
    pub fn param(&self, name: &str) -> Option<String> {
        self.query.split('&').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k == name).then(|| percent_decode(v))
        })
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(h, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

pub type Dynamic = Arc<dyn Fn(&Recorded) -> Option<(u16, String)> + Send + Sync>;

#[derive(Clone, Default)]
struct AppState {
    requests: Arc<Mutex<Vec<Recorded>>>,
    dynamic: Arc<Mutex<Option<Dynamic>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

pub struct FixtureServer {
    pub addr: SocketAddr,
    state: AppState,
}

impl FixtureServer {
    pub async fn start() -> Self {
        let state = AppState::default();
        let app = Router::new().fallback(handler).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, state }
    }

    pub fn base(&self, vendor: &str, scenario: &str) -> String {
        format!("http://{}/{vendor}/{scenario}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Requests whose path starts with `/{vendor}/{scenario}`.
    pub fn requests_to(&self, vendor: &str, scenario: &str) -> Vec<Recorded> {
        let prefix = format!("/{vendor}/{scenario}");
        self.requests()
            .into_iter()
            .filter(|r| r.path == prefix || r.path.starts_with(&format!("{prefix}/")))
            .collect()
    }

    /// Replies computed by the test (checked before fixtures).
    pub fn set_dynamic(&self, f: Dynamic) {
        *self.state.dynamic.lock().unwrap() = Some(f);
    }
}

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

async fn handler(
    State(st): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let rec = Recorded {
        path: uri.path().to_string(),
        query: uri.query().unwrap_or("").to_string(),
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    };
    st.requests.lock().unwrap().push(rec.clone());
    let dynamic = st.dynamic.lock().unwrap().clone();
    if let Some(f) = dynamic
        && let Some((status, body)) = f(&rec)
    {
        return reply(status, body);
    }
    let mut segs = rec.path.trim_start_matches('/').split('/');
    let vendor = segs.next().unwrap_or("").to_string();
    let mut scenario = segs.next().unwrap_or("").to_string();
    if scenario == "flaky_502" {
        let mut hits = st.hits.lock().unwrap();
        let n = hits.entry(rec.path.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            return reply(502, "<html><body>502 Bad Gateway</body></html>".into());
        }
        scenario = "ok".into();
    }
    let status = scenario
        .rsplit_once('_')
        .and_then(|(_, s)| s.parse::<u16>().ok())
        .unwrap_or(200);
    let dir = fixture_dir().join(&vendor);
    let mut candidates = Vec::new();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&rec.body)
        && let Some(api) = v.get("api_name").and_then(|a| a.as_str())
    {
        candidates.push(format!("{scenario}.{api}.json"));
    }
    if let Some(pn) = rec.param("pn") {
        candidates.push(format!("{scenario}.pn{pn}.json"));
    }
    candidates.push(format!("{scenario}.json"));
    candidates.push(format!("{scenario}.html"));
    for c in candidates {
        if let Ok(text) = std::fs::read_to_string(dir.join(&c)) {
            return reply(status, text);
        }
    }
    reply(404, format!("no fixture for {vendor}/{scenario}"))
}

fn reply(status: u16, body: String) -> Response {
    let ct = if body.trim_start().starts_with('<') {
        "text/html; charset=utf-8"
    } else {
        "application/json; charset=utf-8"
    };
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, ct)],
        body,
    )
        .into_response()
}
