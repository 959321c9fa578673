//! The one shared HTTP client: proxy from settings or the environment, never for
//! localhost; plus what providers learn about endpoints (OpenAI-compatible quirks).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{ACCEPT, ACCEPT_ENCODING, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use wyckoff_protocol::ErrorKind;

use crate::stream::{Decoder, sse_stream};
use crate::{ChunkStream, LlmError, ProviderConfig, classify};

/// Hosts that never go through a proxy, whatever the settings say.
const ALWAYS_DIRECT: &str = "localhost,127.0.0.1,::1";

/// Network settings from the app's settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSettings {
    /// Proxy URL (`http://…`, `socks5://…` is not supported); `None` = use
    /// `HTTPS_PROXY`/`ALL_PROXY`/`HTTP_PROXY` from the environment, if set.
    pub proxy: Option<String>,
    pub connect_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            proxy: None,
            connect_timeout: Duration::from_secs(30),
        }
    }
}

/// Shared by every provider of the process (cheap to clone).
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    /// Per-endpoint flags learnt at run time (e.g. parameters an endpoint rejects).
    endpoint_flags: Arc<Mutex<HashMap<String, u32>>>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient").finish_non_exhaustive()
    }
}

/// The first proxy variable set in the environment (HTTPS first: all vendors use TLS).
pub fn env_proxy(get: impl Fn(&str) -> Option<String>) -> Option<String> {
    [
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
    ]
    .iter()
    .find_map(|k| get(k).filter(|v| !v.trim().is_empty()))
}

/// The bypass list: localhost always, plus the user's `NO_PROXY`.
pub fn no_proxy_list(env_no_proxy: Option<String>) -> String {
    match env_no_proxy.filter(|v| !v.trim().is_empty()) {
        Some(extra) => format!("{ALWAYS_DIRECT},{extra}"),
        None => ALWAYS_DIRECT.to_string(),
    }
}

impl HttpClient {
    pub fn new(settings: &HttpSettings) -> Result<HttpClient, LlmError> {
        let env = |k: &str| std::env::var(k).ok();
        let proxy = settings
            .proxy
            .clone()
            .filter(|p| !p.trim().is_empty())
            .or_else(|| env_proxy(env));
        // Automatic system proxy detection is off so that the localhost bypass below
        // always applies (an env NO_PROXY without localhost would otherwise proxy Ollama).
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(settings.connect_timeout)
            .tcp_keepalive(Duration::from_secs(30))
            .pool_idle_timeout(Duration::from_secs(90));
        if let Some(url) = proxy {
            let bypass = no_proxy_list(env("NO_PROXY").or_else(|| env("no_proxy")));
            let proxy = reqwest::Proxy::all(url.trim())
                .map_err(|e| {
                    LlmError::new(
                        ErrorKind::InvalidRequest,
                        "http",
                        format!("The proxy setting is not a valid URL ({e}): fix it in Settings or unset HTTPS_PROXY."),
                    )
                })?
                .no_proxy(reqwest::NoProxy::from_string(&bypass));
            builder = builder.proxy(proxy);
        }
        let client = builder.build().map_err(|e| {
            LlmError::new(
                ErrorKind::Internal,
                "http",
                format!("Could not create the HTTP client: {e}"),
            )
        })?;
        Ok(HttpClient {
            client,
            endpoint_flags: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Default settings: proxy from the environment.
    pub fn from_env() -> Result<HttpClient, LlmError> {
        HttpClient::new(&HttpSettings::default())
    }

    pub fn reqwest(&self) -> &reqwest::Client {
        &self.client
    }

    pub(crate) fn flags(&self, endpoint: &str) -> u32 {
        let map = self
            .endpoint_flags
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.get(endpoint).copied().unwrap_or(0)
    }

    pub(crate) fn remember_flags(&self, endpoint: &str, flags: u32) {
        let mut map = self
            .endpoint_flags
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.insert(endpoint.to_string(), flags);
    }

    /// POSTs a JSON body for a streamed answer. Waiting for the response head counts
    /// against `timeout` too (a peer can hang before sending headers). Returns the
    /// response whatever its status.
    pub(crate) async fn post_stream(
        &self,
        url: &str,
        headers: &[(&'static str, String)],
        body: &Value,
        timeout: Duration,
        provider: &str,
        secret: Option<&str>,
    ) -> Result<reqwest::Response, LlmError> {
        let mut map = HeaderMap::new();
        map.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        map.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        // Compressed SSE would be buffered by the decoder; identity keeps it incremental.
        map.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        for (name, value) in headers {
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                LlmError::new(
                    ErrorKind::InvalidRequest,
                    provider,
                    format!("The {name} header value contains invalid characters: check the API key for stray spaces or line breaks."),
                )
            })?;
            if name.eq_ignore_ascii_case("authorization") || name.contains("key") {
                v.set_sensitive(true);
            }
            map.insert(HeaderName::from_static(name), v);
        }
        let bytes = serde_json::to_vec(body).map_err(|e| {
            LlmError::new(
                ErrorKind::Internal,
                provider,
                format!("Could not encode the request: {e}"),
            )
        })?;
        let send = self.client.post(url).headers(map).body(bytes).send();
        match tokio::time::timeout(timeout, send).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(classify::from_transport(provider, e, secret)),
            Err(_) => Err(classify::idle_timeout(provider, timeout)),
        }
    }
}

/// One streamed model call as every provider makes it: where, with which headers, and
/// what to name (and mask) in errors.
pub(crate) struct SseCall<'a> {
    pub url: &'a str,
    pub headers: &'a [(&'static str, String)],
    pub provider: &'a str,
    pub secret: Option<&'a str>,
    /// Allowed between two chunks, and for the response head.
    pub idle_timeout: Duration,
}

impl ProviderConfig {
    /// A streamed call to `url` as this endpoint.
    pub(crate) fn sse_call<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(&'static str, String)],
    ) -> SseCall<'a> {
        SseCall {
            url,
            headers,
            provider: &self.name,
            secret: self.secret(),
            idle_timeout: self.idle_timeout,
        }
    }
}

/// What a streamed call opened.
pub(crate) enum Opened {
    /// A 2xx answer, decoded as SSE, with the idle timeout between chunks.
    Stream(ChunkStream),
    /// An error answer, classified; the status and body are kept for callers that
    /// retry differently (OpenAI-compatible degradation).
    Rejected {
        error: LlmError,
        status: u16,
        body: String,
    },
}

impl Opened {
    /// The stream, or the classified error.
    pub(crate) fn into_result(self) -> Result<ChunkStream, LlmError> {
        match self {
            Opened::Stream(s) => Ok(s),
            Opened::Rejected { error, .. } => Err(error),
        }
    }
}

impl HttpClient {
    /// POSTs `body` and opens the answer with `decoder`. Transport failures (refused,
    /// no response head in time) are errors; HTTP error answers are [`Opened::Rejected`].
    pub(crate) async fn open_sse<D: Decoder>(
        &self,
        call: &SseCall<'_>,
        body: &Value,
        decoder: D,
    ) -> Result<Opened, LlmError> {
        let resp = self
            .post_stream(
                call.url,
                call.headers,
                body,
                call.idle_timeout,
                call.provider,
                call.secret,
            )
            .await?;
        if !resp.status().is_success() {
            let status = resp.status().as_u16();
            let (error, body) =
                error_from_response(resp, call.idle_timeout, call.provider, call.secret).await;
            return Ok(Opened::Rejected {
                error,
                status,
                body,
            });
        }
        Ok(Opened::Stream(sse_stream(
            Box::pin(resp.bytes_stream()),
            decoder,
            call.provider.to_owned(),
            call.secret.map(str::to_owned),
            Some(call.idle_timeout),
        )))
    }
}

/// Reads an error response and classifies it.
async fn error_from_response(
    resp: reqwest::Response,
    timeout: Duration,
    provider: &str,
    secret: Option<&str>,
) -> (LlmError, String) {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = match tokio::time::timeout(timeout, resp.text()).await {
        Ok(Ok(t)) => t,
        _ => String::new(),
    };
    (
        classify::from_http(provider, status, &headers, &body, secret),
        body,
    )
}

/// True for hosts on this machine or a private network, where servers often need no key.
pub fn is_local_url(url: &str) -> bool {
    let rest = url.split("://").nth(1).unwrap_or(url);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(h) = host.strip_prefix('[') {
        h.split(']').next().unwrap_or("")
    } else {
        host.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_unspecified(),
        Ok(std::net::IpAddr::V6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_env_order_and_localhost_bypass() {
        let env = |k: &str| match k {
            "HTTP_PROXY" => Some("http://h:1".to_string()),
            "HTTPS_PROXY" => Some("http://s:2".to_string()),
            _ => None,
        };
        assert_eq!(env_proxy(env).as_deref(), Some("http://s:2"));
        assert_eq!(env_proxy(|_| Some(" ".into())), None);
        assert_eq!(no_proxy_list(None), "localhost,127.0.0.1,::1");
        assert_eq!(
            no_proxy_list(Some("corp.example".into())),
            "localhost,127.0.0.1,::1,corp.example"
        );
    }

    #[test]
    fn local_urls() {
        for u in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080",
            "http://[::1]:1234/v1",
            "http://192.168.1.5:1234/v1",
            "http://mybox.local/v1",
        ] {
            assert!(is_local_url(u), "{u}");
        }
        for u in [
            "https://api.deepseek.com",
            "https://8.8.8.8/v1",
            "https://user@api.openai.com/v1",
        ] {
            assert!(!is_local_url(u), "{u}");
        }
    }

    #[tokio::test]
    async fn localhost_is_never_proxied() {
        // A proxy that does not exist: if it were used, the request would fail.
        let settings = HttpSettings {
            proxy: Some("http://127.0.0.1:9".into()),
            ..HttpSettings::default()
        };
        let client = HttpClient::new(&settings).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 1024];
            let _ = s.read(&mut buf).await;
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                .await;
        });
        let resp = client
            .reqwest()
            .get(format!("http://{addr}/"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.text().await.unwrap(), "ok");
    }

    #[tokio::test]
    async fn remote_hosts_go_through_the_configured_proxy() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = proxy.local_addr().unwrap();
        let seen = tokio::spawn(async move {
            let (mut s, _) = proxy.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let n = s.read(&mut buf).await.unwrap();
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nproxied")
                .await;
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        let settings = HttpSettings {
            proxy: Some(format!("http://{addr}")),
            ..HttpSettings::default()
        };
        let client = HttpClient::new(&settings).unwrap();
        let resp = client
            .reqwest()
            .get("http://models.example.invalid/v1/models")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.text().await.unwrap(), "proxied");
        let request = seen.await.unwrap();
        assert!(
            request.starts_with("GET http://models.example.invalid/v1/models HTTP/1.1"),
            "{request}"
        );
    }

    #[test]
    fn bad_proxy_is_a_clear_error() {
        let settings = HttpSettings {
            proxy: Some("not a url at all".into()),
            ..HttpSettings::default()
        };
        let err = HttpClient::new(&settings).unwrap_err();
        assert!(err.message.contains("proxy"), "{}", err.message);
    }
}
