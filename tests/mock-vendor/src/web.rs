//! Plain web pages for `web_fetch` tests, under `/__web/`: an HTML page, a GBK page that
//! declares its charset only in a meta tag, redirects (one to any URL, or a chain of n),
//! a body larger than the fetch cap, an image and a 404 page.

use axum::Router;
use axum::extract::{Path, Query};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

/// The page's text, asserted by tests.
pub const PAGE_HTML: &str = r#"<!doctype html>
<html><head><title>平安银行 公告</title>
<style>body { color: red }</style>
<script>window.secret = "do-not-show";</script></head>
<body><h1>平安银行 2025 年度报告</h1>
<p>营业收入 <b>1,466.95</b> 亿元。</p>
<ul><li>资产质量稳定</li><li>分红方案</li></ul>
<script>alert("do-not-show")</script></body></html>"#;

/// "平安银行" in GBK.
const PING_AN_GBK: &[u8] = &[0xc6, 0xbd, 0xb0, 0xb2, 0xd2, 0xf8, 0xd0, 0xd0];

/// Larger than `web_fetch`'s 2 MiB body cap.
const BIG_BYTES: usize = 3 * 1024 * 1024;

#[derive(Deserialize)]
struct To {
    to: String,
}

fn with_type(content_type: &'static str, body: impl Into<axum::body::Body>) -> Response {
    let mut response = Response::new(body.into());
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn redirect(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => {
            let mut response = StatusCode::FOUND.into_response();
            response.headers_mut().insert(header::LOCATION, value);
            response
        }
        Err(_) => (StatusCode::BAD_REQUEST, "bad location").into_response(),
    }
}

pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/__web/page",
            get(|| async { with_type("text/html; charset=utf-8", PAGE_HTML) }),
        )
        .route(
            "/__web/gbk",
            get(|| async {
                let body = [
                    b"<html><head><meta charset=\"gbk\"><title>gbk</title></head><body><p>"
                        .as_slice(),
                    PING_AN_GBK,
                    b"</p></body></html>",
                ]
                .concat();
                with_type("text/html", body)
            }),
        )
        .route(
            "/__web/redirect",
            get(|Query(q): Query<To>| async move { redirect(&q.to) }),
        )
        .route(
            "/__web/chain/{n}",
            get(|Path(n): Path<u32>| async move {
                if n == 0 {
                    redirect("/__web/page")
                } else {
                    redirect(&format!("/__web/chain/{}", n - 1))
                }
            }),
        )
        .route(
            "/__web/big",
            get(|| async { with_type("text/plain", "x".repeat(BIG_BYTES)) }),
        )
        .route(
            "/__web/image",
            get(|| async { with_type("image/png", b"\x89PNG\r\n\x1a\n".to_vec()) }),
        )
        .route(
            "/__web/missing",
            get(|| async {
                let mut r = with_type(
                    "text/html",
                    "<html><body><h1>没有这个页面</h1></body></html>",
                );
                *r.status_mut() = StatusCode::NOT_FOUND;
                r
            }),
        )
}
