//! The source chain (failover, retries, breaker, pacing) and incremental sync, against the
//! local fixture server over real HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use common::{FixtureServer, Recorded};
use wyckoff_market::breaker::BreakerConfig;
use wyckoff_market::sources::eastmoney::{Eastmoney, EastmoneyConfig};
use wyckoff_market::sources::tencent::{Tencent, TencentConfig};
use wyckoff_market::sources::tickflow::{TickFlow, TickFlowConfig};
use wyckoff_market::sources::{Adjust, BarRequest, SourceChain, SourcePolicy, http};
use wyckoff_market::{
    Clock, DataStatus, Freshness, ManualClock, MarketConfig, MarketData, SourceSpec, StockCode,
    SyncStatus, SyncTarget, SystemClock,
};

fn fast(max_retries: u32) -> SourcePolicy {
    SourcePolicy {
        min_interval: Duration::ZERO,
        max_retries,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(20),
        breaker: BreakerConfig {
            failure_threshold: 2,
            cooldown: Duration::from_secs(60),
        },
    }
}

fn em_cfg(srv: &FixtureServer, scenario: &str) -> EastmoneyConfig {
    EastmoneyConfig {
        kline_base: srv.base("eastmoney", scenario),
        list_base: srv.base("eastmoney", scenario),
        page_interval: Duration::ZERO,
        page_size: 100,
    }
}

fn em(srv: &FixtureServer, scenario: &str) -> Arc<Eastmoney> {
    Arc::new(Eastmoney::new(
        em_cfg(srv, scenario),
        http::client(Duration::from_secs(5)),
    ))
}

fn req() -> BarRequest {
    BarRequest {
        symbol: StockCode::parse("600519").unwrap().symbol(),
        start: 20240101,
        end: 20240131,
        adjust: Adjust::Forward,
    }
}

fn manual() -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2024, 2, 1)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ))
}

#[tokio::test]
async fn fails_over_to_the_next_source() {
    let srv = FixtureServer::start().await;
    let mut chain = SourceChain::new(manual());
    chain.push(em(&srv, "html_error"), fast(0));
    let tencent = Tencent::new(
        TencentConfig {
            base: srv.base("tencent", "ok"),
            ..TencentConfig::default()
        },
        http::client(Duration::from_secs(5)),
    );
    chain.push(Arc::new(tencent), fast(0));
    let got = chain.daily_bars(&req()).await.unwrap();
    assert_eq!(got.source, "tencent");
    assert_eq!(got.value.bars.len(), 4);
    assert_eq!(got.failed_before.len(), 1);
    assert_eq!(got.failed_before[0].source, "eastmoney");
    assert!(
        got.failed_before[0].error.contains("HTML"),
        "{:?}",
        got.failed_before
    );
}

#[tokio::test]
async fn retries_a_transient_5xx() {
    let srv = FixtureServer::start().await;
    let mut chain = SourceChain::new(manual());
    chain.push(em(&srv, "flaky_502"), fast(2));
    let got = chain.daily_bars(&req()).await.unwrap();
    assert_eq!(got.value.bars.len(), 4);
    assert_eq!(srv.requests_to("eastmoney", "flaky_502").len(), 2);
}

#[tokio::test]
async fn breaker_opens_then_probes_after_cooldown() {
    let srv = FixtureServer::start().await;
    let clock = manual();
    let mut chain = SourceChain::new(clock.clone());
    chain.push(em(&srv, "down_502"), fast(0));
    for _ in 0..2 {
        let e = chain.daily_bars(&req()).await.unwrap_err();
        assert!(e.attempts[0].error.contains("HTTP 502"), "{e}");
    }
    let e = chain.daily_bars(&req()).await.unwrap_err();
    assert!(e.attempts[0].error.contains("circuit open"), "{e}");
    assert_eq!(
        srv.requests_to("eastmoney", "down_502").len(),
        2,
        "no request while open"
    );
    clock.advance(Duration::from_secs(61));
    chain.daily_bars(&req()).await.unwrap_err();
    assert_eq!(
        srv.requests_to("eastmoney", "down_502").len(),
        3,
        "one probe after cooldown"
    );
}

#[tokio::test]
async fn unknown_code_is_not_a_source_failure() {
    let srv = FixtureServer::start().await;
    let mut chain = SourceChain::new(manual());
    let t = Tencent::new(
        TencentConfig {
            base: srv.base("tencent", "unknown"),
            ..TencentConfig::default()
        },
        http::client(Duration::from_secs(5)),
    );
    chain.push(Arc::new(t), fast(3));
    for _ in 0..4 {
        let e = chain.daily_bars(&req()).await.unwrap_err();
        assert!(e.all_unknown_code(), "{e}");
    }
    // never retried, never tripped the breaker
    assert_eq!(srv.requests_to("tencent", "unknown").len(), 4);
}

#[tokio::test]
async fn rate_limit_reply_is_retried_then_reported() {
    let srv = FixtureServer::start().await;
    let mut chain = SourceChain::new(manual());
    let tf = TickFlow::new(
        TickFlowConfig {
            base: Some(srv.base("tickflow", "rate_limited_429")),
            api_key: None,
        },
        http::client(Duration::from_secs(5)),
    );
    chain.push(Arc::new(tf), fast(1));
    let e = chain.daily_bars(&req()).await.unwrap_err();
    assert!(e.attempts[0].error.starts_with("rate limited"), "{e}");
    assert_eq!(srv.requests_to("tickflow", "rate_limited_429").len(), 2);
}

#[tokio::test]
async fn requests_are_paced_per_source() {
    let srv = FixtureServer::start().await;
    let mut chain = SourceChain::new(Arc::new(SystemClock));
    chain.push(
        em(&srv, "ok"),
        SourcePolicy {
            min_interval: Duration::from_millis(300),
            ..fast(0)
        },
    );
    let t = Instant::now();
    chain.daily_bars(&req()).await.unwrap();
    chain.daily_bars(&req()).await.unwrap();
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
}

// ---------- incremental sync through MarketData ----------

/// A fake Eastmoney that serves a bar for every trading day in [beg, end]: unadjusted
/// (`fqt=0`) priced from the bundled closes (or 10.0), forward-adjusted (`fqt=1`) at
/// those times a factor the test can change (a qfq re-base).
fn live_eastmoney(srv: &FixtureServer, factor: Arc<Mutex<f64>>) {
    let cal = wyckoff_market::bundled::calendar().unwrap();
    let mut closes: HashMap<(String, u32), f64> = HashMap::new();
    for s in wyckoff_market::bundled::daily_bars().unwrap() {
        for b in s.bars {
            closes.insert((s.code.digits().to_string(), b.date), b.close);
        }
    }
    srv.set_dynamic(Arc::new(move |r: &Recorded| {
        if !r.path.starts_with("/eastmoney/live/") {
            return None;
        }
        let secid = r.param("secid")?;
        let code = secid.split('.').nth(1)?.to_string();
        let beg: u32 = r.param("beg")?.parse().ok()?;
        let end: u32 = r.param("end")?.parse().ok()?;
        let f = match r.param("fqt").as_deref() {
            Some("0") => 1.0,
            _ => *factor.lock().unwrap(),
        };
        let lines: Vec<String> = cal
            .trading_days_between(beg, end)
            .iter()
            .map(|d| {
                let c = closes.get(&(code.clone(), *d)).copied().unwrap_or(10.0) * f;
                format!(
                    "{},{c:.4},{c:.4},{:.4},{:.4},1000,{:.2},1.0,0.0,0.0,0.5",
                    wyckoff_market::date::iso(*d),
                    c * 1.01,
                    c * 0.99,
                    c * 100_000.0
                )
            })
            .collect();
        let body = serde_json::json!({"rc": 0, "data": {"code": code, "klines": lines}});
        Some((200, body.to_string()))
    }));
}

async fn open_live(
    home: &std::path::Path,
    srv: &FixtureServer,
    clock: Arc<ManualClock>,
    fetch_on_read: bool,
) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![SourceSpec::Eastmoney(em_cfg(srv, "live"), fast(0))];
    cfg.clock = clock;
    cfg.initial_trading_days = 5;
    cfg.fetch_on_read = fetch_on_read;
    MarketData::open_with(cfg).await.unwrap()
}

fn at(y: i32, m: u32, d: u32, h: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, 0, 0)
            .unwrap(),
    ))
}

#[tokio::test]
async fn sync_fetches_only_what_is_missing_and_handles_rebase() {
    let srv = FixtureServer::start().await;
    let factor = Arc::new(Mutex::new(1.0));
    live_eastmoney(&srv, factor.clone());
    let home = tempfile::tempdir().unwrap();
    let clock = at(2020, 6, 19, 16); // Friday after the close
    let md = open_live(home.path(), &srv, clock.clone(), false).await;
    let bundled_len = md.daily_bars("000001", None).await.unwrap().bars.len();

    let mut events = Vec::new();
    let rep = md
        .sync(SyncTarget::Codes(vec!["000001".into()]), &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
    assert_eq!(rep.updated, 1, "{rep:?}");
    assert_eq!(
        rep.outcomes[0].status,
        SyncStatus::Updated {
            source: "eastmoney".into(),
            new_bars: 3,
            rebased: false,
            repaired_rows: 0,
            rejected_rows: 0,
        }
    );
    assert_eq!(rep.outcomes[0].last_date, Some(20200619));
    assert_eq!(events.len(), 2);
    let reqs = srv.requests_to("eastmoney", "live");
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].param("secid").as_deref(), Some("0.000001"));
    assert_eq!(reqs[0].param("fqt").as_deref(), Some("1"));
    assert_eq!(
        reqs[0].param("beg").as_deref(),
        Some("20200616"),
        "overlaps one cached day"
    );
    assert_eq!(reqs[0].param("end").as_deref(), Some("20200619"));
    // then the unadjusted prices of every day without one: the bundled ones too
    assert_eq!(reqs[1].param("fqt").as_deref(), Some("0"));
    assert_eq!(reqs[1].param("beg").as_deref(), Some("20050104"));
    assert_eq!(reqs[1].param("end").as_deref(), Some("20200619"));

    let r = md.daily_bars("000001", None).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Ok, "{:?}", r.notes);
    assert_eq!(r.as_of, Some(20200619));
    assert_eq!(r.source.as_deref(), Some("eastmoney"));
    assert_eq!(r.bars.len(), bundled_len + 3);
    assert_eq!(r.bars.last().unwrap().turnover, Some(0.5));

    // up to date: no request at all
    let rep = md.sync(SyncTarget::Cached, &mut |_| {}).await.unwrap();
    let pab = rep.outcomes.iter().find(|o| o.code == "000001.SZ").unwrap();
    assert_eq!(pab.status, SyncStatus::UpToDate);
    let after_cached = srv.requests_to("eastmoney", "live").len();
    assert_eq!(
        after_cached,
        2 + 7 * 2,
        "only the 7 other bundled codes were fetched, adjusted and not"
    );

    let st = md.status().await.unwrap();
    let s = st.stocks.iter().find(|s| s.code == "000001").unwrap();
    assert_eq!(s.freshness, Freshness::Fresh { last_bar: 20200619 });
    assert!(
        s.sources
            .iter()
            .any(|e| e.source == "eastmoney" && e.last_date == Some(20200619))
    );

    // the unadjusted closes came with the sync: the fake's are the bundled closes
    let raw_before = md.raw_closes("000001", 0..=20200619).await.unwrap();
    assert!(raw_before.is_exact(), "{}", raw_before.basis);
    assert_eq!(raw_before.closes.len(), r.bars.len());
    for (c, b) in raw_before.closes.iter().zip(&r.bars) {
        assert_eq!(
            (c.date, c.close_e6),
            (b.date, (b.close * 1e6).round() as i64)
        );
    }

    // a dividend re-bases forward adjustment upstream: the whole series is replaced
    let bundled_close = r.bars.iter().find(|b| b.date == 20200616).unwrap().close;
    *factor.lock().unwrap() = 0.9;
    clock.set(at(2020, 6, 23, 16).now());
    let rep = md
        .sync(SyncTarget::Codes(vec!["sz000001".into()]), &mut |_| {})
        .await
        .unwrap();
    match &rep.outcomes[0].status {
        SyncStatus::Updated { rebased, .. } => assert!(rebased, "{rep:?}"),
        other => panic!("{other:?}"),
    }
    let reqs = srv.requests_to("eastmoney", "live");
    let last_three = &reqs[reqs.len() - 3..];
    assert_eq!(last_three[0].param("beg").as_deref(), Some("20200619"));
    assert_eq!(
        last_three[1].param("beg").as_deref(),
        Some("20050104"),
        "full refetch"
    );
    // the past days kept their unadjusted closes: only the days that had none are asked
    // for (the new ones, and the bundled data's gaps the refetch filled)
    let raw = &last_three[2];
    assert_eq!(raw.param("fqt").as_deref(), Some("0"));
    let first_gap = wyckoff_market::bundled::calendar()
        .unwrap()
        .trading_days_between(20050104, 20200619)
        .iter()
        .copied()
        .find(|d| !r.bars.iter().any(|b| b.date == *d))
        .unwrap();
    assert_eq!(
        (raw.param("beg").as_deref(), raw.param("end").as_deref()),
        (Some(first_gap.to_string().as_str()), Some("20200623"))
    );
    let raw_after = md.raw_closes("000001", 0..=20200619).await.unwrap();
    for c in &raw_before.closes {
        assert!(raw_after.closes.contains(c), "{c:?}");
    }
    assert!(raw_after.is_exact(), "{}", raw_after.basis);
    let r = md.daily_bars("000001", None).await.unwrap();
    let c = r.bars.iter().find(|b| b.date == 20200616).unwrap().close;
    assert!(
        (c - bundled_close * 0.9).abs() < 1e-3,
        "{c} vs {bundled_close}"
    );
    assert_eq!(r.as_of, Some(20200623));
    assert!(r.bars.iter().all(|b| b.date >= 20050104));
}

#[tokio::test]
async fn new_code_fetches_initial_history_and_fetch_on_read() {
    let srv = FixtureServer::start().await;
    live_eastmoney(&srv, Arc::new(Mutex::new(1.0)));
    let home = tempfile::tempdir().unwrap();
    let md = open_live(home.path(), &srv, at(2024, 1, 5, 16), true).await;
    let r = md.daily_bars("600519", None).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Ok, "{:?}", r.notes);
    assert_eq!(r.bars.len(), 5, "initial_trading_days = 5");
    assert_eq!(r.as_of, Some(20240105));
    let reqs = srv.requests_to("eastmoney", "live");
    assert_eq!(reqs.len(), 2, "adjusted, then unadjusted");
    for (r, fqt) in reqs.iter().zip(["1", "0"]) {
        assert_eq!(r.param("secid").as_deref(), Some("1.600519"));
        assert_eq!(r.param("beg").as_deref(), Some("20231229"));
        assert_eq!(r.param("fqt").as_deref(), Some(fqt));
    }
    // second read: fresh, no new request
    md.daily_bars("600519", None).await.unwrap();
    assert_eq!(srv.requests_to("eastmoney", "live").len(), 2);
}

#[tokio::test]
async fn index_sync_uses_the_index_table() {
    let srv = FixtureServer::start().await;
    live_eastmoney(&srv, Arc::new(Mutex::new(1.0)));
    let home = tempfile::tempdir().unwrap();
    let md = open_live(home.path(), &srv, at(2024, 1, 5, 16), false).await;
    let rep = md
        .sync(SyncTarget::Codes(vec!["000300.SH".into()]), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(rep.updated, 1, "{rep:?}");
    let r = md.index_bars("csi300", None).await.unwrap();
    assert_eq!(r.data_status, DataStatus::Ok);
    assert_eq!(r.bars.len(), 5);
    let req = &srv.requests_to("eastmoney", "live")[0];
    assert_eq!(req.param("secid").as_deref(), Some("1.000300"));
    assert_eq!(req.param("fqt").as_deref(), Some("0"));
    // the stock 000001 and the index 000001.SH never mix
    assert!(md.index_bars("sse", None).await.unwrap().bars.is_empty());
}

#[tokio::test]
async fn sync_repairs_corrupt_rows_by_replacing_the_series() {
    let srv = FixtureServer::start().await;
    live_eastmoney(&srv, Arc::new(Mutex::new(1.0)));
    let home = tempfile::tempdir().unwrap();
    let md = open_live(home.path(), &srv, at(2020, 6, 16, 16), false).await;
    let mut bad = md.daily_bars("000783", Some(20100104)).await.unwrap().bars;
    let mut b = bad.pop().unwrap();
    assert_eq!(b.date, 20100104);
    b.close = -1.0;
    md.store()
        .upsert_bars(
            wyckoff_market::cache::BarTable::Stocks,
            "000783.SZ",
            &[b],
            "test",
            true,
        )
        .await
        .unwrap();
    assert_eq!(
        md.daily_bars("000783", None)
            .await
            .unwrap()
            .corrupt_rows
            .len(),
        1
    );
    let rep = md
        .sync(SyncTarget::Codes(vec!["000783".into()]), &mut |_| {})
        .await
        .unwrap();
    match &rep.outcomes[0].status {
        SyncStatus::Updated { repaired_rows, .. } => assert_eq!(*repaired_rows, 1),
        other => panic!("{other:?}"),
    }
    let r = md.daily_bars("000783", None).await.unwrap();
    assert!(r.corrupt_rows.is_empty());
    assert_eq!(r.data_status, DataStatus::Ok, "{:?}", r.notes);
    assert!(r.bars.iter().any(|b| b.date == 20100104 && b.close > 0.0));
}

#[tokio::test]
async fn stock_list_refresh_updates_search_and_keeps_listing_dates() {
    let srv = FixtureServer::start().await;
    let home = tempfile::tempdir().unwrap();
    let mut cfg = MarketConfig::offline(home.path());
    cfg.sources = vec![SourceSpec::Eastmoney(
        EastmoneyConfig {
            page_size: 2,
            ..em_cfg(&srv, "list")
        },
        fast(0),
    )];
    let md = MarketData::open_with(cfg).await.unwrap();
    // the 2023 list knows this company under its old BSE code only
    assert!(md.search("纬达光电", 5).iter().all(|h| h.code != "920001"));
    let (n, source) = md.sync_stock_list().await.unwrap();
    assert_eq!((n, source), (3, "eastmoney"));
    let hits = md.search("920001", 5);
    assert_eq!(hits[0].name, "纬达光电");
    assert_eq!(hits[0].board, "bse");
    assert!(md.search("纬达光电", 5).iter().any(|h| h.code == "920001"));
    let moutai = md.stock_info(&StockCode::parse("600519").unwrap()).unwrap();
    assert_eq!(moutai.market_cap, Some(2_089_500_000_000.0));
    assert_eq!(
        moutai.list_date,
        Some(20010827),
        "kept from the bundled list"
    ); // the list's caps are the day's samples of the cap history
    let caps = wyckoff_market::cap_history::CapHistoryStore::new(md.pool().clone());
    let days = caps.recorded_days().await.unwrap();
    assert_eq!(days.len(), 1);
    let today = *days.first().unwrap();
    let samples = caps.load().await.unwrap();
    assert_eq!(samples["600519"].len(), 1);
    assert_eq!(samples["600519"][0].date, today);
    assert_eq!(samples["600519"][0].cap_yi, f64::from(20_895.0f32));
}

#[test]
fn market_data_is_shareable_across_tasks() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MarketData>();
}

#[tokio::test]
async fn daily_bars_future_is_send() {
    let home = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap(),
    );
    let h = tokio::spawn({
        let md = md.clone();
        async move {
            md.daily_bars("000001", Some(20200616))
                .await
                .map(|r| r.bars.len())
        }
    });
    assert!(h.await.unwrap().unwrap() > 3000);
}

#[tokio::test]
async fn unreachable_source_fails_fast_without_retries() {
    // a port that was just free: connection refused
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let cfg = EastmoneyConfig {
        kline_base: format!("http://127.0.0.1:{port}"),
        list_base: format!("http://127.0.0.1:{port}"),
        page_interval: Duration::ZERO,
        page_size: 100,
    };
    let mut chain = SourceChain::new(manual());
    chain.push(
        Arc::new(Eastmoney::new(cfg, http::client(Duration::from_secs(5)))),
        SourcePolicy {
            backoff_base: Duration::from_secs(5),
            ..fast(3)
        },
    );
    let t = Instant::now();
    let e = chain.daily_bars(&req()).await.unwrap_err();
    assert!(e.attempts[0].error.starts_with("cannot connect"), "{e}");
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "no backoff for a refused connection"
    );
}
