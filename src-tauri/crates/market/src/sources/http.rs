//! Shared HTTP plumbing: one place that turns transport problems, HTML error pages,
//! truncated bodies and rate-limit replies into `SourceError`s.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use regex::Regex;
use reqwest::{RequestBuilder, StatusCode};
use serde_json::Value;

use super::SourceError;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(12);
const UA: &str = concat!("wyckoff-desk/", env!("CARGO_PKG_VERSION"));

pub fn client(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(timeout)
        // offline machines should fail fast rather than wait out the whole timeout
        .connect_timeout(timeout.min(Duration::from_secs(5)))
        .user_agent(UA)
        .build()
        // the builder only fails on TLS backend init; a default client is the best fallback
        .unwrap_or_default()
}

/// A client built when the first request needs it: building one loads the system's TLS
/// roots (tens of milliseconds), which a command that reads only the cache never pays.
/// Clones share the one client.
#[derive(Clone, Debug)]
pub struct LazyClient {
    timeout: Duration,
    built: Arc<OnceLock<reqwest::Client>>,
}

impl LazyClient {
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            built: Arc::default(),
        }
    }

    /// The client, built on the first call.
    pub fn http(&self) -> &reqwest::Client {
        self.built.get_or_init(|| client(self.timeout))
    }
}

/// A client built already (tests, or a caller with its own settings).
impl From<reqwest::Client> for LazyClient {
    fn from(client: reqwest::Client) -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            built: Arc::new(OnceLock::from(client)),
        }
    }
}

fn snippet(s: &str) -> String {
    let t: String = s.trim().chars().take(160).collect();
    t.replace(['\n', '\r'], " ")
}

/// "请 30 秒后重试" / "retry after 30 seconds" → 30 s.
pub fn parse_wait_hint(text: &str) -> Option<Duration> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| Regex::new(r"(?i)(?:请\s*(\d+)\s*秒后|retry\s+after\s+(\d+)\s*s)").ok())
        .as_ref()?;
    let caps = re.captures(text)?;
    let n: u64 = caps.get(1).or_else(|| caps.get(2))?.as_str().parse().ok()?;
    Some(Duration::from_secs(n))
}

/// Text that vendors put in rate-limit replies.
pub fn looks_rate_limited(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "访问频繁",
        "频率",
        "最多访问",
        "too many requests",
        "rate limit",
        "秒后重试",
    ]
    .iter()
    .any(|k| lower.contains(k))
}

/// `base` + query string; a bad configured base URL is reported, not panicked on.
pub fn url_with(base: &str, params: &[(&str, &str)]) -> Result<reqwest::Url, SourceError> {
    reqwest::Url::parse_with_params(base, params)
        .map_err(|e| SourceError::Network(format!("invalid URL {base:?}: {e}")))
}

/// Sends the request and returns the parsed JSON body, or a classified error.
pub async fn send_json(req: RequestBuilder) -> Result<Value, SourceError> {
    let resp = req.send().await.map_err(|e| {
        if e.is_connect() {
            SourceError::Connect(e.to_string())
        } else if e.is_timeout() {
            SourceError::Timeout
        } else {
            SourceError::Network(e.to_string())
        }
    })?;
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = resp.text().await.map_err(|e| {
        if e.is_timeout() {
            SourceError::Timeout
        } else {
            // the connection dropped mid-body: same as a truncated reply
            SourceError::Truncated(e.to_string())
        }
    })?;
    classify_body(status, retry_after, &body)
}

/// Pure classification of a reply (status + body), separated for unit tests.
pub fn classify_body(
    status: StatusCode,
    retry_after: Option<Duration>,
    body: &str,
) -> Result<Value, SourceError> {
    if status == StatusCode::TOO_MANY_REQUESTS || (!status.is_success() && looks_rate_limited(body))
    {
        return Err(SourceError::RateLimited {
            retry_after: retry_after.or_else(|| parse_wait_hint(body)),
            message: snippet(body),
        });
    }
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Err(SourceError::Auth(format!(
            "HTTP {}: {}",
            status.as_u16(),
            snippet(body)
        )));
    }
    let trimmed = body.trim_start();
    if !status.is_success() {
        return Err(SourceError::Http {
            status: status.as_u16(),
            snippet: snippet(body),
        });
    }
    if trimmed.starts_with('<') {
        return Err(SourceError::Html {
            snippet: snippet(body),
        });
    }
    if trimmed.is_empty() {
        return Err(SourceError::Truncated("empty body".into()));
    }
    serde_json::from_str(trimmed).map_err(|e| {
        if e.is_eof() {
            SourceError::Truncated(e.to_string())
        } else {
            SourceError::Malformed(format!("{e}: {}", snippet(body)))
        }
    })
}

/// JSON number or numeric string as f64 (vendors use both).
pub fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lazy_client_is_built_by_its_first_use_once_for_every_clone() {
        let lazy = LazyClient::new(Duration::from_secs(3));
        let clone = lazy.clone();
        assert!(lazy.built.get().is_none(), "nothing built before a request");
        let first: *const reqwest::Client = lazy.http();
        assert!(clone.built.get().is_some(), "clones share the client");
        assert!(std::ptr::eq(first, clone.http()));
        let prebuilt = LazyClient::from(reqwest::Client::new());
        assert!(prebuilt.built.get().is_some());
    }

    #[test]
    fn classify_table() {
        let ok = StatusCode::OK;
        assert!(classify_body(ok, None, r#"{"a":1}"#).is_ok());
        assert!(matches!(
            classify_body(ok, None, "<!DOCTYPE html><html>502</html>"),
            Err(SourceError::Html { .. })
        ));
        assert!(matches!(
            classify_body(ok, None, r#"{"data":{"klines":["2024"#),
            Err(SourceError::Truncated(_))
        ));
        assert!(matches!(
            classify_body(ok, None, ""),
            Err(SourceError::Truncated(_))
        ));
        assert!(matches!(
            classify_body(ok, None, "{]"),
            Err(SourceError::Malformed(_))
        ));
        assert_eq!(
            classify_body(StatusCode::TOO_MANY_REQUESTS, None, "请 7 秒后重试"),
            Err(SourceError::RateLimited {
                retry_after: Some(Duration::from_secs(7)),
                message: "请 7 秒后重试".into()
            })
        );
        assert!(matches!(
            classify_body(StatusCode::TOO_MANY_REQUESTS, Some(Duration::from_secs(3)), ""),
            Err(SourceError::RateLimited { retry_after: Some(d), .. }) if d == Duration::from_secs(3)
        ));
        assert!(matches!(
            classify_body(StatusCode::BAD_GATEWAY, None, "<html>bad gateway</html>"),
            Err(SourceError::Http { status: 502, .. })
        ));
        assert!(matches!(
            classify_body(StatusCode::FORBIDDEN, None, "{}"),
            Err(SourceError::Auth(_))
        ));
    }

    #[test]
    fn wait_hints() {
        assert_eq!(
            parse_wait_hint("访问过快，请 30 秒后重试"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(parse_wait_hint("请5秒后重试"), Some(Duration::from_secs(5)));
        assert_eq!(
            parse_wait_hint("Retry after 12 s"),
            Some(Duration::from_secs(12))
        );
        assert_eq!(parse_wait_hint("slow down"), None);
    }
}
