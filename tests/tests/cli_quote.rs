//! Live quotes and intraday alerts through the `wyckoff` binary, against a local server
//! answering Tencent's quote API (`WYCKOFF_TENCENT_URL`, GBK text) and Eastmoney's
//! `ulist.np` (`WYCKOFF_EASTMONEY_URL`) with the recorded replies in
//! `crates/market/tests/fixtures` (a 2020-06-17 10:42 snapshot, the day after the bundled
//! bars end): `wyckoff quote` shows the served prices; a failing Tencent falls back to
//! Eastmoney and, once its breaker opens, is not asked again; a daemon pass inside the
//! session fires an intraday rule once (the cooldown holds the next slot) and pushes it;
//! outside the session no quote is asked for; nothing partial reaches the daily cache.
//! Needs `cargo build -p wyckoff-cli` first (scripts/test builds every binary).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/http.rs"]
mod http;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Reply, Request};
use serde_json::{Value, json};
use wyckoff_e2e::hook::hook;
use wyckoff_e2e::{show, wyckoff_cli};
use wyckoff_market::{MarketConfig, MarketData};

const TENCENT: &[u8] =
    include_bytes!("../../src-tauri/crates/market/tests/fixtures/tencent_quote_gbk.txt");
const EASTMONEY: &str =
    include_str!("../../src-tauri/crates/market/tests/fixtures/eastmoney_ulist.json");

/// Requests each API got.
#[derive(Default)]
struct Hits {
    tencent: AtomicUsize,
    eastmoney: AtomicUsize,
}

/// Tencent's recorded line for each code asked for that it has, `v_pv_none_match` for
/// the rest.
fn tencent_reply(path: &str) -> Vec<u8> {
    let asked = path.trim_start_matches("/q=");
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

/// Eastmoney's recorded rows for the secids asked for; a code it has no row for gets a
/// row of the same shape (so every stock of the bundled set can be quoted).
fn eastmoney_reply(query: &str) -> Vec<u8> {
    let recorded: Value = serde_json::from_str(EASTMONEY).unwrap();
    let rows = recorded["data"]["diff"].as_array().unwrap();
    let secids = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("secids="))
        .unwrap_or_default()
        .replace("%2C", ",");
    let mut diff = Vec::new();
    for secid in secids.split(',').filter(|s| !s.is_empty()) {
        let code = secid.split('.').nth(1).unwrap_or_default();
        if code == "600000" {
            continue;
        }
        let row = rows
            .iter()
            .find(|r| r["f12"] == code)
            .cloned()
            .unwrap_or_else(|| {
                let mut r = rows[0].clone();
                r["f12"] = json!(code);
                r["f14"] = json!("测试");
                r
            });
        diff.push(row);
    }
    json!({"rc": 0, "data": {"total": diff.len(), "diff": diff}})
        .to_string()
        .into_bytes()
}

/// Serves both APIs; `tencent_status` other than 200 makes every Tencent request fail.
fn quote_server(tencent_status: u16) -> (String, Arc<Hits>) {
    quote_server_with(move |target| {
        if tencent_status == 200 {
            Reply::new(200, "text/html; charset=GBK", tencent_reply(target))
        } else {
            Reply::new(tencent_status, "text/html", "<html>bad gateway</html>")
        }
    })
}

/// Eastmoney as recorded; Tencent's reply to a request target is `tencent`'s.
fn quote_server_with(tencent: impl Fn(&str) -> Reply + Send + 'static) -> (String, Arc<Hits>) {
    let hits = Arc::new(Hits::default());
    let counted = hits.clone();
    let base = http::serve(move |req: &Request| {
        let target = req.target();
        if target.starts_with("/q=") {
            counted.tencent.fetch_add(1, Ordering::SeqCst);
            tencent(target)
        } else if target.starts_with("/api/qt/ulist.np/get") {
            counted.eastmoney.fetch_add(1, Ordering::SeqCst);
            Reply::new(200, "application/json", eastmoney_reply(req.query()))
        } else {
            Reply::new(404, "text/plain", "not found")
        }
    });
    (base, hits)
}

fn online(home: &Path, base: &str) -> Command {
    let mut cmd = wyckoff_cli(home);
    cmd.env_remove("WYCKOFF_OFFLINE")
        // daily bars stay as bundled: only the quote APIs are served
        .env("WYCKOFF_DATA_SOURCES", "eastmoney")
        .env("WYCKOFF_EASTMONEY_URL", base)
        .env("WYCKOFF_TENCENT_URL", base);
    cmd
}

fn run(mut cmd: Command, args: &[&str]) -> Output {
    cmd.args(args).output().unwrap()
}

fn ok_json(out: Output) -> Value {
    assert!(out.status.success(), "{}", show(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The newest daily bar of `code` in the home's cache.
async fn last_cached_day(home: &Path, code: &str) -> u32 {
    MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap()
        .daily_bars(code, None)
        .await
        .unwrap()
        .bars
        .last()
        .unwrap()
        .date
}

#[tokio::test]
async fn quote_shows_the_served_prices_and_nothing_partial_reaches_the_daily_cache() {
    let (base, hits) = quote_server(200);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    let v = ok_json(run(
        online(h, &base),
        &["quote", "000001", "601318.SH", "--json"],
    ));
    let quotes = v["quotes"].as_array().unwrap();
    assert_eq!(quotes.len(), 2, "{v}");
    let q = &quotes[0];
    assert_eq!(q["quote"]["code"], "000001");
    assert_eq!(q["quote"]["name"], "平安银行");
    assert_eq!(q["quote"]["last_e6"], 13_050_000);
    assert_eq!(q["quote"]["prev_close_e6"], 12_890_000);
    assert_eq!(q["quote"]["source"], "tencent");
    assert_eq!(q["partial"]["partial"], true);
    assert_eq!(q["partial"]["date"], 20200617);
    assert_eq!(q["partial"]["time"], "10:42");
    assert_eq!(q["partial"]["high_e6"], 13_100_000);
    assert_eq!(quotes[1]["quote"]["last_e6"], 72_100_000);
    assert_eq!(v["failed"], json!([]));
    assert_eq!(
        hits.tencent.load(Ordering::SeqCst),
        1,
        "one request for both codes"
    );

    // text: the served prices, marked partial; a second ask within seconds is cached
    let out = run(online(h, &base), &["quote", "000001"]);
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("000001 平安银行  13.05 +1.24% (prev 12.89)"),
        "{text}"
    );
    assert!(text.contains("partial · 10:42"), "{text}");
    assert_eq!(
        hits.tencent.load(Ordering::SeqCst),
        1,
        "served from the cache"
    );

    // the bundled daily bars still end on 2020-06-16: the quote of 06-17 is not a bar
    assert_eq!(last_cached_day(h, "000001").await, 20200616);
    assert_eq!(last_cached_day(h, "601318").await, 20200616);
}

#[test]
fn unknown_and_bad_codes_and_no_source_are_clear_errors() {
    let (base, _) = quote_server(200);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    let out = run(online(h, &base), &["quote", "000001", "600000"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("13.05"),
        "the known code is still shown: {}",
        show(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no quote source knows 600000"),
        "{}",
        show(&out)
    );

    let out = run(online(h, &base), &["quote", "12345"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"12345\" is not an A-share stock code"),
        "{}",
        show(&out)
    );

    let out = run(wyckoff_cli(h), &["quote", "000001"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("live quotes are off"),
        "{}",
        show(&out)
    );

    // nothing listens on this port: every source fails, and says so
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = run(online(h, &dead), &["quote", "000338"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no quote source answered"), "{err}");
    assert!(err.contains("tencent: cannot connect"), "{err}");
    assert!(err.contains("eastmoney: cannot connect"), "{err}");
}

#[test]
fn a_failing_tencent_falls_back_to_eastmoney_and_is_left_alone_once_its_breaker_opens() {
    let (base, hits) = quote_server(502);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // different stocks each time, so no answer comes from the few-second cache
    for (i, code) in ["000001", "601318", "000338", "000778"].iter().enumerate() {
        let out = run(online(h, &base), &["quote", code, "--json"]);
        assert!(out.status.success(), "{}", show(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["quotes"][0]["quote"]["code"], *code, "{v}");
        assert_eq!(v["quotes"][0]["quote"]["source"], "eastmoney", "{v}");
        let failed = v["failed"][0]["error"].as_str().unwrap();
        if i < 3 {
            assert!(failed.contains("HTTP 502"), "{v}");
        } else {
            assert!(failed.contains("circuit open"), "{v}");
        }
    }
    // three failures open Tencent's breaker (shared through wyckoff.db by every process):
    // the fourth process did not ask it
    assert_eq!(hits.tencent.load(Ordering::SeqCst), 3);
    assert_eq!(hits.eastmoney.load(Ordering::SeqCst), 4);
    let eastmoney: Value = serde_json::from_str(EASTMONEY).unwrap();
    assert_eq!(eastmoney["data"]["diff"][0]["f2"], 13.04);
}

/// The end of Tencent's quote breaker's open period in the home's `wyckoff.db`, ms.
async fn tencent_open_until_ms(home: &Path) -> Option<i64> {
    let url = format!("sqlite://{}?mode=ro", home.join("wyckoff.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let until: Option<Option<i64>> = sqlx::query_scalar(
        "SELECT open_until_ms FROM market_source_breaker WHERE source = 'tencent_quote'",
    )
    .fetch_optional(&pool)
    .await
    .unwrap();
    pool.close().await;
    until.flatten()
}

/// A banning Tencent (403, 418, 451) or one asking us to wait (429 with "请N秒后重试") is
/// not asked again on the next snapshot: the first reply opens its breaker at once — for
/// the breaker's 60 s cooldown, or for the wait it named — and Eastmoney's prices are shown.
#[tokio::test]
async fn a_tencent_that_bans_or_asks_to_wait_is_left_alone_and_eastmoney_answers() {
    let gbk = |s: &str| encoding_rs::GBK.encode(s).0.into_owned();
    let cases: [(u16, Vec<u8>, &str, i64); 5] = [
        (403, gbk("<html>403 Forbidden</html>"), "HTTP 403", 60_000),
        (418, gbk("<html>I'm a teapot</html>"), "HTTP 418", 60_000),
        (451, gbk("<html>unavailable</html>"), "HTTP 451", 60_000),
        (
            429,
            gbk("访问频繁，请300秒后重试"),
            "rate limited: 访问频繁，请300秒后重试",
            300_000,
        ),
        // a 200 page that is a rate limit, not quote lines
        (200, gbk("访问频繁，请120秒后重试"), "rate limited", 120_000),
    ];
    for (status, body, said, open_ms) in cases {
        let (base, hits) =
            quote_server_with(move |_| Reply::new(status, "text/html; charset=GBK", body.clone()));
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let before = chrono::Utc::now().timestamp_millis();
        // different stocks each time, so no answer comes from the few-second cache
        for (i, code) in ["000001", "601318", "000338"].iter().enumerate() {
            let v = ok_json(run(online(h, &base), &["quote", code, "--json"]));
            let q = &v["quotes"][0]["quote"];
            assert_eq!(q["code"], *code, "{status}: {v}");
            assert_eq!(q["source"], "eastmoney", "{status}: {v}");
            let failed = v["failed"][0]["error"].as_str().unwrap();
            let want = if i == 0 { said } else { "circuit open" };
            assert!(failed.contains(want), "{status} call {i}: {v}");
            if i == 0 {
                // Eastmoney's recorded price for 000001, not Tencent's 13.05
                assert_eq!(q["last_e6"], 13_040_000, "{status}: {v}");
            }
        }
        let after = chrono::Utc::now().timestamp_millis();
        assert_eq!(hits.tencent.load(Ordering::SeqCst), 1, "{status}");
        assert_eq!(hits.eastmoney.load(Ordering::SeqCst), 3, "{status}");
        // left alone for the breaker's cooldown or the wait asked, counted from the reply
        let until = tencent_open_until_ms(h).await.unwrap();
        assert!(
            (before + open_ms..=after + open_ms).contains(&until),
            "{status}: open until {until}, asked between {before} and {after}"
        );
    }
}

/// The `{"intraday": …}` line of a daemon pass, if it printed one.
fn intraday_line(out: &Output) -> Option<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v.get("intraday").cloned())
}

fn daemon_at(h: &Path, base: &str, now: &str) -> Output {
    run(online(h, base), &["daemon", "--now", now, "--json"])
}

#[tokio::test]
async fn an_intraday_rule_fires_once_is_pushed_and_no_check_runs_outside_the_session() {
    let (base, hits) = quote_server(200);
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let webhook = hook(vec![]);
    ok_json(run(
        wyckoff_cli(h),
        &[
            "push",
            "add",
            "desk",
            "--kind",
            "webhook",
            "--url",
            &webhook.url,
            "--allow-private",
            "--json",
        ],
    ));
    // Above the bundled close of 06-16 (12.89), below the 10:42 quote (13.05).
    ok_json(run(
        wyckoff_cli(h),
        &[
            "alerts",
            "add",
            "000001",
            "--price-above",
            "13.00",
            "--json",
        ],
    ));
    // 61.2 M shares by 10:42 (72 minutes) is a pace of 204 M: about 3× the 20-day mean.
    ok_json(run(
        wyckoff_cli(h),
        &["alerts", "add", "000001", "--volume-ratio", "2", "--json"],
    ));

    // Lunch, a Saturday, the Dragon Boat Festival and after the close: no check, no quote.
    for now in [
        "2020-06-17 12:00",
        "2020-06-20 10:42",
        "2020-06-25 10:42",
        "2020-06-17 15:30",
    ] {
        let out = daemon_at(h, &base, now);
        assert!(out.status.success(), "{now}: {}", show(&out));
        assert_eq!(intraday_line(&out), None, "{now}: {}", show(&out));
    }
    assert_eq!(hits.tencent.load(Ordering::SeqCst), 0);
    assert_eq!(hits.eastmoney.load(Ordering::SeqCst), 0);

    let out = daemon_at(h, &base, "2020-06-17 10:42");
    assert!(out.status.success(), "{}", show(&out));
    let run1 = intraday_line(&out).unwrap_or_else(|| panic!("{}", show(&out)));
    assert_eq!(run1["at"], "2020-06-17 10:42", "{run1}");
    let fired = run1["report"]["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 2, "{run1}");
    for alert in fired {
        assert_eq!(alert["code"], "000001");
        assert_eq!(alert["bar_date"], "2020-06-17");
        assert_eq!(alert["intraday_at"], "2020-06-17 10:42");
        assert_eq!(alert["delivery"], "delivered", "{run1}");
    }
    let price = fired
        .iter()
        .find(|a| a["condition"]["type"] == "price_above")
        .unwrap();
    assert_eq!(price["figures"]["close"], 13.05);
    let volume = fired
        .iter()
        .find(|a| a["condition"]["type"] == "volume_ratio")
        .unwrap();
    // the pace: 61,234,500 × 240 / 72
    assert_eq!(volume["figures"]["volume"], 204_115_000.0, "{volume}");
    let bodies = webhook.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert!(
        bodies[0]["text"]
            .as_str()
            .unwrap()
            .contains("盘中 intraday, live quote at 2020-06-17 10:42"),
        "{bodies:?}"
    );

    // The same slot again claims nothing; the next slot checks and the cooldown holds.
    let out = daemon_at(h, &base, "2020-06-17 10:43");
    assert_eq!(intraday_line(&out), None, "{}", show(&out));
    let out = daemon_at(h, &base, "2020-06-17 10:47");
    let run2 = intraday_line(&out).unwrap_or_else(|| panic!("{}", show(&out)));
    assert_eq!(run2["report"]["fired"], json!([]), "{run2}");
    assert_eq!(
        run2["report"]["suppressed"].as_array().unwrap().len(),
        2,
        "{run2}"
    );
    assert_eq!(webhook.bodies().len(), 2, "pushed once");

    let history = ok_json(run(wyckoff_cli(h), &["alerts", "history", "--json"]));
    let history = history.as_array().unwrap_or_else(|| panic!("{history}"));
    assert_eq!(history.len(), 2);
    assert!(
        history
            .iter()
            .all(|a| a["intraday_at"] == "2020-06-17 10:42")
    );

    // the partial bar stayed in memory
    assert_eq!(last_cached_day(h, "000001").await, 20200616);
}

/// Tencent's line for a stock quoted at 10:42:03 of `bar`'s day, from that day's bundled
/// bar: 72 of the session's 240 minutes gone, so 72/240 of the day's volume, which the
/// check reads back at the day's pace.
fn tencent_line_from(symbol: &str, bar: &wyckoff_market::Bar, prev_close: f64) -> Vec<u8> {
    let lots = (bar.volume * 72.0 / 240.0 / 100.0).round();
    let amount = (bar.amount * 72.0 / 240.0).round();
    let mut f = vec![String::new(); 50];
    f[0] = "1".into();
    f[1] = "潍柴动力".into();
    f[2] = symbol[2..].into();
    f[3] = format!("{:.2}", bar.close);
    f[4] = format!("{prev_close:.2}");
    f[5] = format!("{:.2}", bar.open);
    f[6] = lots.to_string();
    f[30] = format!("{}104203", bar.date);
    f[33] = format!("{:.2}", bar.high);
    f[34] = format!("{:.2}", bar.low);
    f[35] = format!("{:.2}/{lots}/{amount}", bar.close);
    f[36] = lots.to_string();
    f[37] = format!("{:.0}", amount / 10_000.0);
    let line = format!("v_{symbol}=\"{}\";\n", f.join("~"));
    encoding_rs::GBK.encode(&line).0.into_owned()
}

/// The engine places an AR of a distribution on 潍柴动力's bar of 2020-03-19 when that bar
/// is the last one (the alerts crate's intraday test finds it by replaying the bundled
/// bars): a daemon pass at 10:42 that day, quoted that bar so far, fires the event rule on
/// the partial bar, stamped intraday, and the daily cache keeps its bars.
#[tokio::test]
async fn an_event_the_engine_places_on_the_partial_bar_fires_through_the_daemon() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let bars = MarketData::open_with(MarketConfig::offline(h))
        .await
        .unwrap()
        .daily_bars("000338", None)
        .await
        .unwrap()
        .bars;
    let i = bars.partition_point(|b| b.date < 20200319);
    let (today, prev) = (bars[i], bars[i - 1]);
    assert_eq!(today.date, 20200319);
    let line = tencent_line_from("sz000338", &today, prev.close);
    let (base, hits) =
        quote_server_with(move |_| Reply::new(200, "text/html; charset=GBK", line.clone()));
    ok_json(run(
        wyckoff_cli(h),
        &["alerts", "add", "000338", "--event", "ar", "--json"],
    ));

    let out = daemon_at(h, &base, "2020-03-19 10:42");
    assert!(out.status.success(), "{}", show(&out));
    let pass = intraday_line(&out).unwrap_or_else(|| panic!("{}", show(&out)));
    assert_eq!(hits.tencent.load(Ordering::SeqCst), 1);
    let fired = pass["report"]["fired"].as_array().unwrap();
    assert_eq!(fired.len(), 1, "{pass}");
    let alert = &fired[0];
    assert_eq!(alert["code"], "000338");
    assert_eq!(alert["bar_date"], "2020-03-19");
    assert_eq!(alert["intraday_at"], "2020-03-19 10:42");
    let events = alert["figures"]["events"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e["event"] == "AR"
            && e["bar_date"] == "2020-03-19"
            && e["known_on"] == "2020-03-19"),
        "{alert}"
    );

    let after = MarketData::open_with(MarketConfig::offline(h))
        .await
        .unwrap()
        .daily_bars("000338", None)
        .await
        .unwrap()
        .bars;
    assert_eq!(after.len(), bars.len());
    assert_eq!(after[i], today);
}
