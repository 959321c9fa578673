//! Test scaffolding, built only with the `test-support` feature (never shipped): a local
//! server that answers as Eastmoney's kline endpoint does, the Eastmoney source pointed at
//! it without pacing or retries, and a clock on a fixed day the bundled bars lag behind.
//! The market's, the tools' and the app's sync tests share it.

use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::NaiveDate;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::breaker::BreakerConfig;
use crate::sources::SourcePolicy;
use crate::sources::eastmoney::EastmoneyConfig;
use crate::{ManualClock, MarketConfig, SourceSpec};

/// A local HTTP server answering every request with one status and body (Eastmoney's
/// kline JSON, or an error page), after a delay (a slow vendor), recording each request
/// line. It serves until the test's runtime ends.
pub struct EastmoneyStub {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl EastmoneyStub {
    /// Answers `status` with `body` at once.
    pub async fn start(status: u16, body: String) -> io::Result<Self> {
        Self::start_after(Duration::ZERO, status, body).await
    }

    /// Answers `status` with `body`, each after `delay`.
    pub async fn start_after(delay: Duration, status: u16, body: String) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                let head = String::from_utf8_lossy(&got);
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(head.lines().next().unwrap_or("").to_owned());
                tokio::time::sleep(delay).await;
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(reply.as_bytes()).await;
            }
        });
        Ok(EastmoneyStub { base, requests })
    }

    /// `http://127.0.0.1:{port}`: the kline and the stock list base alike.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The request lines so far (`GET /…?secid=0.000001&… HTTP/1.1`), oldest first.
    pub fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One line of Eastmoney's `klines` for `date` (YYYY-MM-DD) closing at `close`: open 0.1
/// below, high and low 0.2 either side, a fixed volume and amount.
pub fn kline(date: &str, close: f64) -> String {
    format!(
        "{date},{o:.2},{close:.2},{h:.2},{l:.2},100000,150000000.0,2.0,0.5,0.1,0.8",
        o = close - 0.1,
        h = close + 0.2,
        l = close - 0.2
    )
}

/// Eastmoney at `base` with no pacing and no retries; the breaker opens after
/// `failure_threshold` failures in a row.
pub fn eastmoney_at(base: &str, failure_threshold: u32) -> SourceSpec {
    SourceSpec::Eastmoney(
        EastmoneyConfig {
            kline_base: base.to_owned(),
            list_base: base.to_owned(),
            page_interval: Duration::ZERO,
            page_size: 100,
        },
        SourcePolicy {
            min_interval: Duration::ZERO,
            max_retries: 0,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(5),
            breaker: BreakerConfig {
                failure_threshold,
                cooldown: Duration::from_secs(60),
            },
        },
    )
}

/// Friday 2020-06-19 at 16:00 in Beijing, after the close: the bundled bars end on the
/// Tuesday before, so three trading days are missing.
pub fn friday_after_close() -> Arc<ManualClock> {
    let at = NaiveDate::from_ymd_opt(2020, 6, 19).and_then(|d| d.and_hms_opt(16, 0, 0));
    Arc::new(ManualClock::at_beijing(at.unwrap_or_default()))
}

/// The offline data home `home` whose only live source is Eastmoney at `base` (breaker
/// after 5 failures), on [`friday_after_close`].
pub fn online_config(home: &Path, base: &str) -> MarketConfig {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![eastmoney_at(base, 5)];
    cfg.clock = friday_after_close();
    cfg
}

/// A local HTTP server speaking Tushare Pro's wire (`POST {api_name, token, params,
/// fields}`, reply `{code, msg, data: {fields, items, has_more}}`). `answer` gets the API
/// name and the whole request and returns the rows as objects keyed by field; the server
/// sends back the fields the request asked for, in its order (an empty table when
/// `answer` has none). Every request body is recorded. It runs on its own thread, so a
/// test may block on a child process while the server answers.
pub struct TushareStub {
    base: String,
    requests: Arc<Mutex<Vec<serde_json::Value>>>,
}

type TushareAnswer = dyn Fn(&str, &serde_json::Value) -> Vec<serde_json::Value> + Send;

impl TushareStub {
    pub fn start(
        answer: impl Fn(&str, &serde_json::Value) -> Vec<serde_json::Value> + Send + 'static,
    ) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let base = format!("http://{}", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let answer: Box<TushareAnswer> = Box::new(answer);
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(mut sock) = sock else { return };
                let Some(body) = read_request_body(&mut sock) else {
                    continue;
                };
                let request: serde_json::Value =
                    serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                let api = request["api_name"].as_str().unwrap_or("").to_owned();
                let rows = answer(&api, &request);
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(request.clone());
                let fields: Vec<&str> = request["fields"]
                    .as_str()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .collect();
                let items: Vec<serde_json::Value> = rows
                    .iter()
                    .map(|r| fields.iter().map(|f| r[*f].clone()).collect())
                    .collect();
                let reply = serde_json::json!({
                    "request_id": "stub",
                    "code": 0,
                    "msg": "",
                    "data": {"fields": fields, "items": items, "has_more": false},
                })
                .to_string();
                let _ = std::io::Write::write_all(
                    &mut sock,
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                        reply.len()
                    )
                    .as_bytes(),
                );
            }
        });
        Ok(TushareStub { base, requests })
    }

    /// `http://127.0.0.1:{port}`: Tushare's whole API is one URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The request bodies so far, oldest first.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The API names asked for so far, oldest first.
    pub fn apis(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| r["api_name"].as_str().unwrap_or("").to_owned())
            .collect()
    }
}

/// The body of one HTTP request (by its Content-Length); `None` when the peer hung up.
fn read_request_body(sock: &mut std::net::TcpStream) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = std::io::Read::read(sock, &mut buf).ok()?;
        if n == 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while got.len() < head_end + len {
        let n = std::io::Read::read(sock, &mut buf).ok()?;
        if n == 0 {
            return None;
        }
        got.extend_from_slice(&buf[..n]);
    }
    Some(got[head_end..head_end + len].to_vec())
}

/// A small market's history as Tushare gives it: 000005 named 世纪星源 from its listing and
/// ST星源 from 2021-05-01; 600519 贵州茅台 throughout; 600087 *ST长油 from 2013-05-07,
/// delisted after 2014-06-05 as 退市长油. The stock list (`stock_basic`, L) names the two
/// listed stocks; any other API (bars) has no rows.
pub fn tushare_small_market(api: &str, request: &serde_json::Value) -> Vec<serde_json::Value> {
    use serde_json::json;
    let stock = |ts: &str, name: &str, status: &str, list: &str, delist: Option<&str>| {
        json!({
            "ts_code": ts, "symbol": &ts[..6], "name": name, "list_status": status,
            "list_date": list, "delist_date": delist, "industry": "测试",
        })
    };
    let name = |ts: &str, name: &str, start: &str, end: Option<&str>| {
        json!({
            "ts_code": ts, "name": name, "start_date": start, "end_date": end,
            "ann_date": start, "change_reason": "",
        })
    };
    // one page: a request past the first row reads nothing more
    if request["params"]["offset"].as_u64().unwrap_or(0) > 0 {
        return Vec::new();
    }
    match api {
        "stock_basic" => match request["params"]["list_status"].as_str() {
            Some("L") => vec![
                stock("000005.SZ", "ST星源", "L", "19901210", None),
                stock("600519.SH", "贵州茅台", "L", "20010827", None),
            ],
            Some("D") => vec![stock(
                "600087.SH",
                "退市长油",
                "D",
                "19970611",
                Some("20140605"),
            )],
            _ => Vec::new(),
        },
        "namechange" => vec![
            name("000005.SZ", "世纪星源", "19901210", Some("20210430")),
            name("000005.SZ", "ST星源", "20210501", None),
            name("600519.SH", "贵州茅台", "20010827", None),
            name("600087.SH", "*ST长油", "20130507", Some("20140604")),
            name("600087.SH", "退市长油", "20140605", None),
        ],
        _ => Vec::new(),
    }
}

/// Tushare at `base` with a token, no pacing and no retries.
pub fn tushare_at(base: &str) -> SourceSpec {
    SourceSpec::Tushare(
        crate::sources::tushare::TushareConfig {
            base: base.to_owned(),
            token: "test-token".into(),
        },
        SourcePolicy {
            min_interval: Duration::ZERO,
            max_retries: 0,
            backoff_base: Duration::from_millis(1),
            backoff_max: Duration::from_millis(5),
            breaker: BreakerConfig {
                failure_threshold: 5,
                cooldown: Duration::from_secs(60),
            },
        },
    )
}
