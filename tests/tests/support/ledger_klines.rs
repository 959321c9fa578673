//! For the ledger's CLI tests: a local server speaking Eastmoney's kline format from a
//! fixed table of closes (each fund's or bond's `secid` and day), logging every request
//! line; the `wyckoff` runs against it (or offline) that print JSON; and a holding's line
//! by code. Included with `#[path]` by the tests that need it (it brings `http.rs` along).

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use wyckoff_e2e::{show, wyckoff_cli};

#[path = "http.rs"]
mod http;
use self::http::{Reply, Request};

/// One close served: (secid such as `1.510300`, `YYYY-MM-DD`, close).
pub type Close = (&'static str, &'static str, f64);

/// Starts the server answering kline requests from `closes` (an unknown `secid` gets
/// Eastmoney's empty answer, `data: null`); returns its base URL and the request lines it
/// has seen.
pub fn serve(closes: &'static [Close]) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let base = self::http::serve(move |req: &Request| {
        log.lock().unwrap().push(req.line.clone());
        let secid = req.param("secid").unwrap_or("");
        let klines: Vec<String> = closes
            .iter()
            .filter(|(s, _, _)| *s == secid)
            .map(|(_, d, c)| {
                format!(
                    "{d},{c},{c},{c},{c},1200,{},0.5,0.1,0.01,0.2",
                    c * 120_000.0
                )
            })
            .collect();
        Reply::json(if klines.is_empty() {
            json!({"rc": 0, "data": null})
        } else {
            json!({"rc": 0, "data": {"code": secid, "klines": klines}})
        })
    });
    (base, seen)
}

/// Runs `wyckoff ARGS` on `home` (against the server at `online`, Eastmoney the only
/// source, or offline), asserts it succeeded and returns its stdout as JSON.
pub fn run(home: &Path, online: Option<&str>, args: &[&str]) -> Value {
    let mut cmd = wyckoff_cli(home);
    if let Some(base) = online {
        cmd.env_remove("WYCKOFF_OFFLINE")
            .env("WYCKOFF_DATA_SOURCES", "eastmoney")
            .env("WYCKOFF_EASTMONEY_URL", base);
    }
    let out = cmd.args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The holding of `code` among `holdings` (a JSON array).
pub fn line<'a>(holdings: &'a Value, code: &str) -> &'a Value {
    holdings
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {holdings}"))
}
