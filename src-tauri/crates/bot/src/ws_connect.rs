//! Opening a bot's WebSocket, through the proxy from Settings when one is set. An
//! `http://` proxy is asked for a tunnel with `CONNECT host:port` (with Basic
//! credentials when its URL carries them), and the WebSocket (TLS for `wss://`) runs
//! inside it. Other proxy schemes are refused by name rather than bypassed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long opening a socket (the proxy's tunnel included) may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, thiserror::Error)]
pub enum WsConnectError {
    /// The network or the proxy failed: worth another try.
    #[error("{0}")]
    Network(String),
    /// The proxy in Settings cannot carry a WebSocket: nothing works until it is changed.
    #[error(
        "the proxy in Settings ({0}) cannot carry the bot's WebSocket: only http:// proxies (CONNECT) can"
    )]
    UnsupportedProxy(String),
    #[error("the WebSocket address is not usable: {0}")]
    BadUrl(String),
}

/// Opens the WebSocket at `url`, through `proxy` when one is set.
pub async fn connect(url: &str, proxy: Option<&str>) -> Result<Socket, WsConnectError> {
    let opening = async {
        match proxy.map(str::trim).filter(|p| !p.is_empty()) {
            None => tokio_tungstenite::connect_async(url)
                .await
                .map(|(socket, _)| socket)
                .map_err(|e| WsConnectError::Network(format!("WebSocket: {}", ws_error(&e)))),
            Some(proxy) => {
                let stream = tunnel(url, proxy).await?;
                tokio_tungstenite::client_async_tls(url, stream)
                    .await
                    .map(|(socket, _)| socket)
                    .map_err(|e| {
                        WsConnectError::Network(format!(
                            "WebSocket via the proxy: {}",
                            ws_error(&e)
                        ))
                    })
            }
        }
    };
    tokio::time::timeout(OPEN_TIMEOUT, opening)
        .await
        .map_err(|_| WsConnectError::Network("the WebSocket did not open in 15 s".into()))?
}

/// A WebSocket error without the URL (its query may hold the connection's ticket); a
/// refused handshake says its status and Feishu's `handshake-status` and `handshake-msg`
/// when it sent them.
fn ws_error(e: &tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::Error;
    match e {
        Error::Http(response) => {
            let header = |k: &str| {
                response
                    .headers()
                    .get(k)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            format!(
                "HTTP {} {} {}",
                response.status().as_u16(),
                header("handshake-status"),
                header("handshake-msg")
            )
            .trim()
            .to_owned()
        }
        Error::Url(_) => "the endpoint URL is not a WebSocket URL".to_owned(),
        other => other.to_string(),
    }
}

/// A TCP stream to `url`'s host through the `http://` proxy's CONNECT tunnel.
async fn tunnel(url: &str, proxy: &str) -> Result<TcpStream, WsConnectError> {
    let target = reqwest::Url::parse(url).map_err(|e| WsConnectError::BadUrl(e.to_string()))?;
    let host = target
        .host_str()
        .ok_or_else(|| WsConnectError::BadUrl("no host".into()))?;
    let port = target
        .port_or_known_default()
        .ok_or_else(|| WsConnectError::BadUrl("no port".into()))?;
    let proxy_url =
        reqwest::Url::parse(proxy).map_err(|_| WsConnectError::UnsupportedProxy(shown(proxy)))?;
    if proxy_url.scheme() != "http" {
        return Err(WsConnectError::UnsupportedProxy(shown(proxy)));
    }
    let proxy_host = proxy_url
        .host_str()
        .ok_or_else(|| WsConnectError::UnsupportedProxy(shown(proxy)))?;
    let proxy_port = proxy_url.port_or_known_default().unwrap_or(80);
    let mut stream = TcpStream::connect((proxy_host, proxy_port))
        .await
        .map_err(|e| WsConnectError::Network(format!("the proxy: {e}")))?;
    let authority = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if !proxy_url.username().is_empty() {
        let user = decode(proxy_url.username());
        let password = decode(proxy_url.password().unwrap_or_default());
        let credentials = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{user}:{password}"),
        );
        request.push_str(&format!("Proxy-Authorization: Basic {credentials}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| WsConnectError::Network(format!("the proxy: {e}")))?;
    // The proxy's answer ends with an empty line; nothing of the tunnel comes before
    // the WebSocket's own handshake, so reading byte by byte takes nothing of it.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 8192 {
            return Err(WsConnectError::Network(
                "the proxy's answer is too long".into(),
            ));
        }
        let n = stream
            .read(&mut byte)
            .await
            .map_err(|e| WsConnectError::Network(format!("the proxy: {e}")))?;
        if n == 0 {
            return Err(WsConnectError::Network(
                "the proxy closed the connection before answering CONNECT".into(),
            ));
        }
        head.push(byte[0]);
    }
    let status_line = String::from_utf8_lossy(&head);
    let status_line = status_line.lines().next().unwrap_or_default();
    let status = status_line.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        return Err(WsConnectError::Network(format!(
            "the proxy refused the tunnel to {authority}: {status_line}"
        )));
    }
    Ok(stream)
}

/// The proxy as said in an error: without its credentials.
fn shown(proxy: &str) -> String {
    match reqwest::Url::parse(proxy) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        Err(_) => "an address that is not a URL".to_owned(),
    }
}

/// Percent-decoding of a URL's user or password.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[test]
    fn a_proxy_is_shown_without_its_credentials() {
        let cases = [
            ("http://u:p%40ss@proxy.lan:3128", "http://proxy.lan:3128/"),
            ("socks5://me:pw@127.0.0.1:1080", "socks5://127.0.0.1:1080"),
            ("not a url", "an address that is not a URL"),
        ];
        for (proxy, want) in cases {
            assert_eq!(shown(proxy), want, "{proxy}");
        }
        assert_eq!(decode("p%40ss%3a"), "p@ss:");
        assert_eq!(decode("100%"), "100%");
    }

    #[tokio::test]
    async fn a_socks_proxy_is_refused_by_name_and_never_bypassed() {
        let err = connect(
            "wss://example.invalid/x",
            Some("socks5://me:pw@127.0.0.1:1"),
        )
        .await
        .err()
        .unwrap();
        assert!(matches!(err, WsConnectError::UnsupportedProxy(_)), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("socks5://127.0.0.1:1") && !text.contains("pw"),
            "{text}"
        );
    }

    /// A proxy that answers CONNECT with `status` and says what it was asked.
    async fn proxy(status: &'static str) -> (String, tokio::task::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://al%40ice:s3cret@{}", listener.local_addr().unwrap());
        let handle = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            let mut b = [0u8; 1];
            while !buf.ends_with(b"\r\n\r\n") {
                s.read_exact(&mut b).await.unwrap();
                buf.push(b[0]);
            }
            s.write_all(format!("HTTP/1.1 {status}\r\n\r\n").as_bytes())
                .await
                .unwrap();
            String::from_utf8(buf).unwrap()
        });
        (url, handle)
    }

    #[tokio::test]
    async fn a_tunnel_is_asked_for_the_target_with_the_proxys_credentials() {
        let (url, asked) = proxy("200 Connection established").await;
        let stream = tunnel("wss://openws.example:443/x", &url).await;
        assert!(stream.is_ok());
        let asked = asked.await.unwrap();
        assert!(
            asked.starts_with("CONNECT openws.example:443 HTTP/1.1\r\n"),
            "{asked}"
        );
        // base64("al@ice:s3cret")
        assert!(
            asked.contains("Proxy-Authorization: Basic YWxAaWNlOnMzY3JldA==\r\n"),
            "{asked}"
        );

        let (url, _) = proxy("407 Proxy Authentication Required").await;
        let err = tunnel("ws://127.0.0.1:9/x", &url).await.err().unwrap();
        assert!(err.to_string().contains("407"), "{err}");
    }
}
