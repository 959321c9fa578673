//! `web_fetch` over real HTTP against the mock vendor's `/__web/` pages on 127.0.0.1:
//! refused by default (loopback), fetched when private addresses are allowed, redirects
//! checked hop by hop, caps and content types.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::ToolError;
use wyckoff_mock_vendor::MockServer;
use wyckoff_tools::web_fetch::{self, Resolver, WebFetcher};

/// Answers every name with one chosen address (a DNS answer a test controls).
struct FixedResolver(std::net::IpAddr);

#[async_trait]
impl Resolver for FixedResolver {
    async fn resolve(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::new(self.0, port)])
    }
}

async fn fetch(fetcher: &WebFetcher, url: &str) -> Result<Value, ToolError> {
    web_fetch::run(fetcher, &json!({ "url": url }), &CancellationToken::new()).await
}

fn refusal(result: Result<Value, ToolError>) -> String {
    match result {
        Err(ToolError::Failed(m) | ToolError::InvalidArgs(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn loopback_is_refused_by_default_and_nothing_is_sent() {
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher::new(false);
    for url in [
        format!("{}/__web/page", server.url()),
        format!("http://localhost:{}/__web/page", server.addr().port()),
        format!("http://2130706433:{}/__web/page", server.addr().port()),
        format!(
            "http://[::ffff:127.0.0.1]:{}/__web/page",
            server.addr().port()
        ),
    ] {
        let message = refusal(fetch(&fetcher, &url).await);
        assert!(message.contains("loopback"), "{url}: {message}");
        assert!(message.contains("allow private addresses"), "{message}");
    }
    assert!(
        server.requests().is_empty(),
        "a refused fetch reached the server"
    );
}

#[tokio::test]
async fn allowed_private_fetch_returns_readable_text() {
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher::new(true);
    let url = format!("{}/__web/page", server.url());
    let out = fetch(&fetcher, &url).await.unwrap();
    assert_eq!(out["status"], 200);
    assert_eq!(out["final_url"], url);
    assert_eq!(out["content_type"], "text/html; charset=utf-8");
    assert_eq!(out["title"], "平安银行 公告");
    assert_eq!(out["truncated"], false);
    let text = out["text"].as_str().unwrap();
    assert!(text.starts_with("平安银行 2025 年度报告\n"), "{text}");
    assert!(text.contains("营业收入 1,466.95 亿元"), "{text}");
    assert!(
        !text.contains("do-not-show") && !text.contains("color"),
        "{text}"
    );
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert!(sent[0].headers["user-agent"].starts_with("WyckoffDesk/"));
}

#[tokio::test]
async fn gbk_page_declared_in_meta_is_decoded() {
    let server = MockServer::start().await.unwrap();
    let out = fetch(
        &WebFetcher::new(true),
        &format!("{}/__web/gbk", server.url()),
    )
    .await
    .unwrap();
    assert!(out["text"].as_str().unwrap().contains("平安银行"), "{out}");
}

#[tokio::test]
async fn redirects_are_followed_up_to_five_and_listed() {
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher::new(true);
    let out = fetch(&fetcher, &format!("{}/__web/chain/4", server.url()))
        .await
        .unwrap();
    assert_eq!(out["redirects"].as_array().unwrap().len(), 5);
    assert!(out["final_url"].as_str().unwrap().ends_with("/__web/page"));
    assert_eq!(out["title"], "平安银行 公告");

    let message = refusal(fetch(&fetcher, &format!("{}/__web/chain/5", server.url())).await);
    assert!(message.contains("more than 5 times"), "{message}");
}

#[tokio::test]
async fn every_redirect_hop_is_checked() {
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher::new(true);
    let port = server.addr().port();
    // Private addresses allowed, but metadata never: a redirect to it in any spelling stops.
    for target in [
        "http://169.254.169.254/latest/meta-data/".to_string(),
        format!("http://0xa9fea9fe:{port}/x"),
        "http://[::ffff:a9fe:a9fe]/".to_string(),
        "file:///etc/passwd".to_string(),
        "ftp://example.com/x".to_string(),
    ] {
        let url = format!("{}/__web/redirect?to={target}", server.url());
        let message = refusal(fetch(&fetcher, &url).await);
        assert!(
            message.contains("refused redirect 1"),
            "{target}: {message}"
        );
    }
}

#[tokio::test]
async fn a_name_that_resolves_to_a_forbidden_address_is_refused_after_a_redirect() {
    // DNS rebinding through a redirect: the first hop is a literal the policy allows, the
    // redirect names a host whose DNS answer is the metadata address.
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher {
        resolver: Arc::new(FixedResolver("169.254.169.254".parse().unwrap())),
        ..WebFetcher::new(true)
    };
    let url = format!(
        "{}/__web/redirect?to=http://innocent.example/page",
        server.url()
    );
    let message = refusal(fetch(&fetcher, &url).await);
    assert!(
        message.contains("innocent.example resolves to 169.254.169.254")
            && message.contains("cloud metadata"),
        "{message}"
    );
    let sent: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(sent, ["/__web/redirect"], "only the first hop was sent");

    // The same name answering a loopback address is refused by default.
    let default = WebFetcher {
        resolver: Arc::new(FixedResolver("127.0.0.1".parse().unwrap())),
        ..WebFetcher::new(false)
    };
    let message = refusal(fetch(&default, "http://innocent.example/").await);
    assert!(message.contains("resolves to 127.0.0.1"), "{message}");
}

#[tokio::test]
async fn caps_content_types_and_error_pages() {
    let server = MockServer::start().await.unwrap();
    let fetcher = WebFetcher::new(true);

    let big = fetch(&fetcher, &format!("{}/__web/big", server.url()))
        .await
        .unwrap();
    assert_eq!(big["truncated"], true);
    assert_eq!(big["bytes"], web_fetch::MAX_BODY_BYTES);
    assert_eq!(
        big["text"].as_str().unwrap().chars().count(),
        web_fetch::DEFAULT_MAX_CHARS
    );
    let notes = big["notes"].to_string();
    assert!(
        notes.contains("2 MiB") && notes.contains("cut to 20000"),
        "{notes}"
    );

    let message = refusal(fetch(&fetcher, &format!("{}/__web/image", server.url())).await);
    assert!(
        message.contains("image/png") && message.contains("text only"),
        "{message}"
    );

    let missing = fetch(&fetcher, &format!("{}/__web/missing", server.url()))
        .await
        .unwrap();
    assert_eq!(missing["status"], 404);
    assert!(missing["notes"].to_string().contains("HTTP 404"));
    assert!(missing["text"].as_str().unwrap().contains("没有这个页面"));

    for bad in [
        "not a url",
        "javascript:alert(1)",
        "http://user:pw@example.com/",
    ] {
        assert!(
            matches!(fetch(&fetcher, bad).await, Err(ToolError::InvalidArgs(_))),
            "{bad}"
        );
    }
}

#[tokio::test]
async fn a_stalled_server_times_out_and_cancel_stops_the_fetch() {
    // A listener that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let fetcher = WebFetcher {
        timeout: std::time::Duration::from_millis(300),
        ..WebFetcher::new(true)
    };
    let message = refusal(fetch(&fetcher, &format!("http://{addr}/")).await);
    assert!(message.contains("timed out"), "{message}");

    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = web_fetch::run(
        &WebFetcher::new(true),
        &json!({"url": format!("http://{addr}/")}),
        &cancel,
    )
    .await;
    assert!(matches!(out, Err(ToolError::Cancelled)), "{out:?}");
}
