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
