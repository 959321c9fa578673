//! `web_fetch`: one page over http(s) as readable text.
//!
//! Every hop (the first request and each of at most [`MAX_REDIRECTS`] redirects) is
//! checked before anything is sent: the scheme, then the addresses the host resolves to
//! (all of them must pass [`address::AddressKind::allowed`]), and the client is pinned to
//! the address that was checked — so a DNS answer that changes between the check and the
//! connection (rebinding) cannot reach a private address. Redirects are followed by hand
//! for that reason. No proxy is used: a proxy would resolve the name itself, unchecked.

pub mod address;
pub mod text;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::Url;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::ToolError;

use address::{AddressKind, classify, parse_host_literal};
use text::{BodyKind, Page, body_kind, decode, html_to_page};

pub const NAME: &str = "web_fetch";
pub const DISPLAY_NAME: &str = "网页抓取";
pub const DESCRIPTION: &str = "抓取一个 http(s) 网页并转成可读文本，返回最终地址、状态码、内容类型、标题、正文和页面中的链接；正文过长会截断并注明。最多跟随 5 次重定向；不访问本机、内网和云元数据地址（除非用户在设置中允许内网地址）。只返回文本：图片、PDF 等会被拒绝。";

pub const MAX_REDIRECTS: usize = 5;
/// Bytes of body read at most; the rest is not downloaded.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
pub const DEFAULT_MAX_CHARS: usize = 20_000;
pub const MAX_CHARS_LIMIT: usize = 100_000;
/// The whole fetch, every hop included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(20);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const USER_AGENT: &str = concat!("WyckoffDesk/", env!("CARGO_PKG_VERSION"), " (web_fetch)");

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "http:// 或 https:// 地址"},
            "max_chars": {"type": "integer", "description": "正文最多返回的字符数，默认 20000，范围 1000–100000"}
        },
        "required": ["url"]
    })
}

/// Name resolution, injectable so tests can make a name answer a chosen address.
#[async_trait]
pub trait Resolver: Send + Sync {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The operating system's resolver.
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// The fetcher with its policy.
#[derive(Clone)]
pub struct WebFetcher {
    /// Settings: private, loopback and link-local addresses may be fetched.
    pub allow_private: bool,
    pub resolver: Arc<dyn Resolver>,
    pub timeout: Duration,
}

impl WebFetcher {
    pub fn new(allow_private: bool) -> Self {
        WebFetcher {
            allow_private,
            resolver: Arc::new(SystemResolver),
            timeout: FETCH_TIMEOUT,
        }
    }
}

/// Why a URL may not be fetched at all (before any name is resolved).
pub fn check_url(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "scheme {other}: is not fetched (http and https only)"
            ));
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("URLs with a user name or password are not fetched".into());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    Ok(())
}

/// The address to connect to for `host`, given what it resolved to: every address must
/// be allowed (a mixed answer is refused, since the client could pick any of them).
pub fn pick_address(
    host: &str,
    addrs: &[SocketAddr],
    allow_private: bool,
) -> Result<SocketAddr, String> {
    let first = addrs
        .first()
        .ok_or_else(|| format!("{host} resolves to no address"))?;
    for addr in addrs {
        let kind = classify(addr.ip());
        if !kind.allowed(allow_private) {
            let resolved = if parse_host_literal(host).is_some() {
                String::new()
            } else {
                format!(" resolves to {}, which", addr.ip())
            };
            let hint = match kind {
                AddressKind::Loopback
                | AddressKind::Private
                | AddressKind::UniqueLocal
                | AddressKind::LinkLocal
                | AddressKind::Cgnat => {
                    " (Settings → Local tools → allow private addresses, if you mean it)"
                }
                _ => " (never fetched)",
            };
            return Err(format!(
                "{host}{resolved} is a {} address{hint}",
                kind.label()
            ));
        }
    }
    Ok(*first)
}

impl WebFetcher {
    /// Checks one hop and returns the address the client must connect to.
    async fn plan_hop(&self, url: &Url) -> Result<SocketAddr, String> {
        check_url(url)?;
        let port = url
            .port_or_known_default()
            .ok_or_else(|| "the URL has no port".to_string())?;
        let host = url.host_str().unwrap_or_default();
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => parse_host_literal(host),
        };
        let addrs = match literal {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => self
                .resolver
                .resolve(host, port)
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?,
        };
        pick_address(host, &addrs, self.allow_private)
    }

    /// Fetches `raw_url` (see the module docs); `max_chars` caps the returned text.
    pub async fn fetch(
        &self,
        raw_url: &str,
        max_chars: usize,
        cancel: &CancellationToken,
    ) -> Result<Value, ToolError> {
        let url = Url::parse(raw_url.trim())
            .map_err(|e| ToolError::InvalidArgs(format!("url {raw_url:?} is not a URL: {e}")))?;
        check_url(&url).map_err(|e| ToolError::InvalidArgs(format!("url {url}: {e}")))?;
        tokio::select! {
            () = cancel.cancelled() => Err(ToolError::Cancelled),
            result = tokio::time::timeout(self.timeout, self.follow(url, max_chars)) => {
                result.unwrap_or_else(|_| Err(ToolError::Failed(format!(
                    "web_fetch timed out after {} s", self.timeout.as_secs()
                ))))
            }
        }
    }

    async fn follow(&self, start: Url, max_chars: usize) -> Result<Value, ToolError> {
        let mut url = start.clone();
        let mut redirects: Vec<String> = Vec::new();
        loop {
            let hop = |what: String| {
                if redirects.is_empty() {
                    format!("refused {url}: {what}")
                } else {
                    format!("refused redirect {} to {url}: {what}", redirects.len())
                }
            };
            let addr = self
                .plan_hop(&url)
                .await
                .map_err(|e| ToolError::Failed(hop(e)))?;
            let mut builder = reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(CONNECT_TIMEOUT)
                .user_agent(USER_AGENT);
            if let Some(url::Host::Domain(domain)) = url.host() {
                builder = builder.resolve(domain, addr);
            }
            let client = builder
                .build()
                .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))?;
            let response = client
                .get(url.clone())
                .header(
                    ACCEPT,
                    "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1",
                )
                .send()
                .await
                .map_err(|e| ToolError::Failed(format!("fetching {url}: {e}")))?;
            let status = response.status();
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if let (true, Some(location)) = (status.is_redirection(), location) {
                if redirects.len() >= MAX_REDIRECTS {
                    return Err(ToolError::Failed(format!(
                        "{start} redirects more than {MAX_REDIRECTS} times (last to {location}); not followed"
                    )));
                }
                let next = url.join(&location).map_err(|e| {
                    ToolError::Failed(format!("{url} redirects to {location:?}, not a URL: {e}"))
                })?;
                redirects.push(next.to_string());
                url = next;
                continue;
            }
            return read_page(start, url, redirects, response, max_chars).await;
        }
    }
}

async fn read_page(
    requested: Url,
    final_url: Url,
    redirects: Vec<String>,
    mut response: reqwest::Response,
    max_chars: usize,
) -> Result<Value, ToolError> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let Some(kind) = body_kind(&content_type) else {
        return Err(ToolError::Failed(format!(
            "{final_url} is {content_type} (HTTP {}); web_fetch returns text only",
            status.as_u16()
        )));
    };
    let mut body = Vec::new();
    let mut body_cut = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| ToolError::Failed(format!("reading {final_url}: {e}")))?
    {
        let room = MAX_BODY_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            body_cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let decoded = decode(&body, &content_type, kind);
    let page = match kind {
        BodyKind::Html => html_to_page(&decoded, &final_url),
        BodyKind::Text => Page {
            title: None,
            text: decoded,
            links: Vec::new(),
        },
    };
    let full_text = page.text;
    let total_chars = full_text.chars().count();
    let text: String = full_text.chars().take(max_chars).collect();
    let text_cut = total_chars > max_chars;
    let mut notes = Vec::new();
    if body_cut {
        notes.push(format!(
            "only the first {} MiB of the body were downloaded",
            MAX_BODY_BYTES / (1024 * 1024)
        ));
    }
    if text_cut {
        notes.push(format!(
            "text cut to {max_chars} of {total_chars} characters"
        ));
    }
    if !status.is_success() {
        notes.push(format!(
            "the server answered HTTP {}: the text is its error page",
            status.as_u16()
        ));
    }
    Ok(json!({
        "url": requested.as_str(),
        "final_url": final_url.as_str(),
        "redirects": redirects,
        "status": status.as_u16(),
        "content_type": content_type,
        "title": page.title,
        "text": text,
        "links": page
            .links
            .into_iter()
            .map(|(text, url)| json!({ "text": text, "url": url }))
            .collect::<Vec<_>>(),
        "truncated": body_cut || text_cut,
        "bytes": body.len(),
        "notes": notes,
    }))
}

/// `max_chars` argument → characters, clamped to 1,000–100,000.
pub fn max_chars(args: &Value) -> Result<usize, ToolError> {
    match args.get("max_chars") {
        None | Some(Value::Null) => Ok(DEFAULT_MAX_CHARS),
        Some(v) => {
            let n = v.as_f64().filter(|n| n.is_finite()).ok_or_else(|| {
                ToolError::InvalidArgs(format!("max_chars must be a number, got {v}"))
            })?;
            Ok((n.max(1_000.0) as usize).min(MAX_CHARS_LIMIT))
        }
    }
}

/// The tool's entry point.
pub async fn run(
    fetcher: &WebFetcher,
    args: &Value,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let url = args
        .get("url")
        .and_then(Value::as_str)
        .filter(|u| !u.trim().is_empty())
        .ok_or_else(|| ToolError::InvalidArgs("url must be a non-empty string".into()))?;
    fetcher.fetch(url, max_chars(args)?, cancel).await
}
