//! A local server answering Tencent's quote API (`WYCKOFF_TENCENT_URL`, GBK text) with the
//! recorded 2020-06-17 10:42 snapshot in `crates/market/tests/fixtures` (000001 at 13.05
//! against a close of 12.89), counting its requests. Anything else gets 404, so a test
//! sees when another source was asked. Included with `#[path]` by the tests that need it (it
//! brings `http.rs` along).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[path = "http.rs"]
mod http;
use self::http::{Reply, Request};

const TENCENT: &[u8] =
    include_bytes!("../../../src-tauri/crates/market/tests/fixtures/tencent_quote_gbk.txt");

/// The recorded line of each code asked for (`/q=sz000001,sh601318`), then
/// `v_pv_none_match` when one is not in the recording.
fn reply(target: &str) -> Vec<u8> {
    let asked = target.trim_start_matches("/q=");
    let mut out = Vec::new();
    let mut unknown = false;
    for sym in asked.split(',') {
        let prefix = format!("v_{sym}=");
        match TENCENT
            .split(|b| *b == b'\n')
            .find(|l| l.starts_with(prefix.as_bytes()))
        {
            Some(line) => {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            None => unknown = true,
        }
    }
    if unknown {
        out.extend_from_slice(b"v_pv_none_match=\"1\";\n");
    }
    out
}

/// The server's base URL and how many quote requests it answered.
pub fn serve() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let base = self::http::serve(move |req: &Request| {
        let target = req.target();
        if target.starts_with("/q=") {
            counted.fetch_add(1, Ordering::SeqCst);
            Reply::new(200, "text/html; charset=GBK", reply(target))
        } else {
            Reply::new(404, "text/plain", "not found")
        }
    });
    (base, hits)
}
