//! Each source's parser against recorded replies, over real HTTP from a local server.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::time::Duration;

use common::FixtureServer;
use wyckoff_market::sources::eastmoney::{Eastmoney, EastmoneyConfig};
use wyckoff_market::sources::tencent::{Tencent, TencentConfig};
use wyckoff_market::sources::tickflow::{TickFlow, TickFlowConfig};
use wyckoff_market::sources::tushare::{Tushare, TushareConfig};
use wyckoff_market::sources::{Adjust, BarRequest, DailySource, SourceError, http};
use wyckoff_market::{IndexCode, StockCode};

/// Predicate over the error a scenario must produce.
type Check = fn(&SourceError) -> bool;

fn stock(code: &str) -> BarRequest {
    BarRequest {
        symbol: StockCode::parse(code).unwrap().symbol(),
        start: 20240101,
        end: 20240131,
        adjust: Adjust::Forward,
    }
}

fn index(code: &str) -> BarRequest {
    BarRequest {
        symbol: IndexCode::parse(code).unwrap().symbol(),
        start: 20240101,
        end: 20240131,
        adjust: Adjust::None,
    }
}

fn client() -> reqwest::Client {
    http::client(Duration::from_secs(5))
}

fn eastmoney(srv: &FixtureServer, scenario: &str) -> Eastmoney {
    Eastmoney::new(
        EastmoneyConfig {
            kline_base: srv.base("eastmoney", scenario),
            list_base: srv.base("eastmoney", scenario),
            page_interval: Duration::ZERO,
            page_size: 2,
        },
        client(),
    )
}

fn tencent(srv: &FixtureServer, scenario: &str) -> Tencent {
    Tencent::new(
        TencentConfig {
            base: srv.base("tencent", scenario),
            ..TencentConfig::default()
        },
        client(),
    )
}

fn tickflow(srv: &FixtureServer, scenario: &str, key: Option<&str>) -> TickFlow {
    TickFlow::new(
        TickFlowConfig {
            base: Some(srv.base("tickflow", scenario)),
            api_key: key.map(str::to_string),
        },
        client(),
    )
}

fn tushare(srv: &FixtureServer, scenario: &str) -> Tushare {
    Tushare::new(
        TushareConfig {
            base: srv.base("tushare", scenario),
            token: "t0ken".into(),
        },
        client(),
    )
}

// ---------- Eastmoney ----------

#[tokio::test]
async fn eastmoney_kline_parses_and_sends_documented_params() {
    let srv = FixtureServer::start().await;
    let got = eastmoney(&srv, "ok")
        .daily_bars(&stock("600519"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 4);
    assert!(got.has_amount);
    let b = got.bars[0];
    assert_eq!(b.date, 20240102);
    // date, open, close, high, low: note close comes before high
    assert_eq!(
        (b.open, b.close, b.high, b.low),
        (1715.0, 1685.01, 1718.19, 1678.10)
    );
    assert_eq!(b.volume, 3_215_600.0, "lots of 100 → shares");
    assert_eq!(b.amount, 5_440_082_176.0);
    assert_eq!(b.turnover, Some(0.26));

    let r = &srv.requests_to("eastmoney", "ok")[0];
    assert_eq!(r.path, "/eastmoney/ok/api/qt/stock/kline/get");
    assert_eq!(r.param("secid").as_deref(), Some("1.600519"));
    assert_eq!(r.param("klt").as_deref(), Some("101"));
    assert_eq!(r.param("fqt").as_deref(), Some("1"));
    assert_eq!(r.param("beg").as_deref(), Some("20240101"));
    assert_eq!(r.param("end").as_deref(), Some("20240131"));
    assert_eq!(r.param("fields1").as_deref(), Some("f1,f2,f3,f4,f5,f6"));
    assert_eq!(
        r.param("fields2").as_deref(),
        Some("f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61")
    );
}

#[tokio::test]
async fn eastmoney_secid_for_shenzhen_and_sh_index() {
    let srv = FixtureServer::start().await;
    let em = eastmoney(&srv, "ok");
    em.daily_bars(&stock("000001")).await.unwrap();
    let em_idx = eastmoney(&srv, "index_ok");
    let got = em_idx.daily_bars(&index("sse")).await.unwrap();
    assert_eq!(got.bars.len(), 2);
    let reqs = srv.requests();
    assert_eq!(reqs[0].param("secid").as_deref(), Some("0.000001"));
    assert_eq!(reqs[1].param("secid").as_deref(), Some("1.000001"));
    assert_eq!(
        reqs[1].param("fqt").as_deref(),
        Some("0"),
        "indices are not adjusted"
    );
}

#[tokio::test]
async fn eastmoney_failure_replies() {
    let srv = FixtureServer::start().await;
    let cases: Vec<(&str, Check)> = vec![
        ("data_null", |e| matches!(e, SourceError::DataNull)),
        ("empty", |e| matches!(e, SourceError::Empty)),
        ("html_error", |e| matches!(e, SourceError::Html { .. })),
        ("truncated", |e| matches!(e, SourceError::Truncated(_))),
        (
            "rate_limited_429",
            |e| matches!(e, SourceError::RateLimited { retry_after: Some(d), .. } if *d == Duration::from_secs(1)),
        ),
        ("vendor_error", |e| {
            matches!(e, SourceError::Vendor { code: 102, .. })
        }),
        ("no_such_fixture", |e| {
            matches!(e, SourceError::Http { status: 404, .. })
        }),
    ];
    for (scenario, check) in cases {
        let err = eastmoney(&srv, scenario)
            .daily_bars(&stock("600519"))
            .await
            .unwrap_err();
        assert!(check(&err), "{scenario}: {err:?}");
    }
}

#[tokio::test]
async fn eastmoney_rejects_bad_rows_but_keeps_good_ones() {
    let srv = FixtureServer::start().await;
    let got = eastmoney(&srv, "bad_rows")
        .daily_bars(&stock("600519"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 1);
    assert_eq!(got.rejected.len(), 3, "{:?}", got.rejected);
    assert!(got.rejected.iter().any(|r| r.contains("high below")));
}

#[tokio::test]
async fn eastmoney_stock_list_pages_until_total() {
    let srv = FixtureServer::start().await;
    let list = eastmoney(&srv, "list").stock_list().await.unwrap();
    let codes: Vec<&str> = list.iter().map(|s| s.code.digits()).collect();
    assert_eq!(codes, ["600519", "000001", "920001"]);
    assert_eq!(list[0].name, "贵州茅台");
    assert_eq!(list[0].market_cap, Some(2_089_500_000_000.0));
    assert_eq!(list[2].market_cap, None, "'-' is unknown, not zero");
    let reqs = srv.requests_to("eastmoney", "list");
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].path, "/eastmoney/list/api/qt/clist/get");
    assert_eq!(reqs[1].param("pn").as_deref(), Some("2"));
    assert_eq!(reqs[0].param("fid").as_deref(), Some("f12"));
    assert_eq!(
        reqs[0].param("fs").as_deref(),
        Some("m:0 t:6,m:0 t:80,m:1 t:2,m:1 t:23,m:0 t:81 s:2048")
    );
}

// ---------- Tencent ----------

#[tokio::test]
async fn tencent_qfq_rows_parse() {
    let srv = FixtureServer::start().await;
    let got = tencent(&srv, "ok")
        .daily_bars(&stock("600519"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 4, "the dividend dict in a row is ignored");
    assert!(!got.has_amount, "tencent gives no amount");
    let b = got.bars[0];
    assert_eq!(
        (b.open, b.close, b.high, b.low),
        (1715.0, 1685.01, 1718.19, 1678.10)
    );
    assert_eq!(b.volume, 3_215_500.0);
    let r = &srv.requests_to("tencent", "ok")[0];
    assert_eq!(r.path, "/tencent/ok/appstock/app/fqkline/get");
    assert_eq!(
        r.param("param").as_deref(),
        Some("sh600519,day,2024-01-01,2024-01-31,31,qfq")
    );
}

#[tokio::test]
async fn tencent_index_uses_day_rows() {
    let srv = FixtureServer::start().await;
    let got = tencent(&srv, "index_ok")
        .daily_bars(&index("sse"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 2);
    assert_eq!(got.bars[1].close, 2967.25);
}

#[tokio::test]
async fn tencent_failure_replies() {
    let srv = FixtureServer::start().await;
    let cases: Vec<(&str, Check)> = vec![
        (
            "unknown",
            |e| matches!(e, SourceError::UnknownCode(c) if c == "sh600519"),
        ),
        ("data_null", |e| matches!(e, SourceError::DataNull)),
        ("empty", |e| matches!(e, SourceError::Empty)),
        ("vendor_error", |e| {
            matches!(e, SourceError::Vendor { code: -1, .. })
        }),
        ("truncated", |e| matches!(e, SourceError::Truncated(_))),
        ("html_error", |e| matches!(e, SourceError::Html { .. })),
        ("rate_limited_429", |e| {
            matches!(e, SourceError::RateLimited { .. })
        }),
    ];
    for (scenario, check) in cases {
        let err = tencent(&srv, scenario)
            .daily_bars(&stock("600519"))
            .await
            .unwrap_err();
        assert!(check(&err), "{scenario}: {err:?}");
    }
}

// ---------- TickFlow ----------

#[tokio::test]
async fn tickflow_columns_parse_to_shanghai_dates() {
    let srv = FixtureServer::start().await;
    let got = tickflow(&srv, "ok", None)
        .daily_bars(&stock("600519"))
        .await
        .unwrap();
    let dates: Vec<u32> = got.bars.iter().map(|b| b.date).collect();
    assert_eq!(dates, [20240102, 20240103, 20240104, 20240105]);
    assert_eq!(got.bars[0].close, 1685.01);
    assert_eq!(got.bars[0].amount, 5_440_082_176.0);
    let r = &srv.requests_to("tickflow", "ok")[0];
    assert_eq!(r.path, "/tickflow/ok/v1/klines");
    assert_eq!(r.param("symbol").as_deref(), Some("600519.SH"));
    assert_eq!(r.param("period").as_deref(), Some("1d"));
    assert_eq!(r.param("adjust").as_deref(), Some("forward"));
    assert!(
        r.headers.get("x-api-key").is_none(),
        "free endpoint: no key"
    );
}

#[tokio::test]
async fn tickflow_paid_sends_key_and_bj_symbol() {
    let srv = FixtureServer::start().await;
    let got = tickflow(&srv, "ok", Some("k-123"))
        .daily_bars(&stock("830799"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 4);
    let r = &srv.requests_to("tickflow", "ok")[0];
    assert_eq!(r.headers.get("x-api-key").unwrap(), "k-123");
    assert_eq!(r.param("symbol").as_deref(), Some("830799.BJ"));
}

#[tokio::test]
async fn tickflow_failure_replies() {
    let srv = FixtureServer::start().await;
    let cases: Vec<(&str, Check)> = vec![
        ("unknown_404", |e| matches!(e, SourceError::UnknownCode(_))),
        (
            "rate_limited_429",
            |e| matches!(e, SourceError::RateLimited { retry_after: Some(d), .. } if *d == Duration::from_secs(1)),
        ),
        ("auth_401", |e| matches!(e, SourceError::Auth(_))),
        ("data_null", |e| matches!(e, SourceError::DataNull)),
        ("empty", |e| matches!(e, SourceError::Empty)),
        (
            "mismatch",
            |e| matches!(e, SourceError::Malformed(m) if m.contains("length")),
        ),
        ("truncated", |e| matches!(e, SourceError::Truncated(_))),
        ("html_error", |e| matches!(e, SourceError::Html { .. })),
    ];
    for (scenario, check) in cases {
        let err = tickflow(&srv, scenario, None)
            .daily_bars(&stock("600519"))
            .await
            .unwrap_err();
        assert!(check(&err), "{scenario}: {err:?}");
    }
}

// ---------- Tushare ----------

#[tokio::test]
async fn tushare_daily_is_forward_adjusted_with_units_converted() {
    let srv = FixtureServer::start().await;
    let got = tushare(&srv, "ok")
        .daily_bars(&stock("600519"))
        .await
        .unwrap();
    assert_eq!(got.bars.len(), 4);
    let first = got.bars[0];
    assert_eq!(
        first.date, 20240102,
        "rows come newest-first and are sorted"
    );
    // qfq = raw × factor / latest factor = 1715 × 9 / 10
    assert!((first.open - 1543.5).abs() < 1e-9, "{}", first.open);
    assert_eq!(first.volume, 3_215_600.0, "lots → shares");
    assert!(
        (first.amount - 5_440_082_176.0).abs() < 1e-3,
        "thousand CNY → CNY"
    );
    let last = got.bars[3];
    assert_eq!(last.close, 1663.36, "latest day keeps the raw price");

    let reqs = srv.requests_to("tushare", "ok");
    assert_eq!(reqs.len(), 2);
    let body: serde_json::Value = serde_json::from_str(&reqs[0].body).unwrap();
    assert_eq!(body["api_name"], "daily");
    assert_eq!(body["token"], "t0ken");
    assert_eq!(body["params"]["ts_code"], "600519.SH");
    assert_eq!(body["params"]["start_date"], "20240101");
    let body2: serde_json::Value = serde_json::from_str(&reqs[1].body).unwrap();
    assert_eq!(body2["api_name"], "adj_factor");
}

#[tokio::test]
async fn tushare_index_and_stock_list() {
    let srv = FixtureServer::start().await;
    let ts = tushare(&srv, "ok");
    let got = ts.daily_bars(&index("sse")).await.unwrap();
    assert_eq!(got.bars.len(), 2);
    let list = ts.stock_list().await.unwrap();
    assert_eq!(list.len(), 3);
    assert_eq!(list[1].industry.as_deref(), Some("白酒"));
    assert_eq!(list[1].list_date, Some(20010827));
    assert_eq!(list[2].industry, None);
    let apis: Vec<String> = srv
        .requests_to("tushare", "ok")
        .iter()
        .map(|r| {
            serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["api_name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(apis, ["index_daily", "stock_basic"]);
}

#[tokio::test]
async fn tushare_failure_replies() {
    let srv = FixtureServer::start().await;
    let cases: Vec<(&str, Check)> = vec![
        ("empty", |e| matches!(e, SourceError::Empty)),
        ("data_null", |e| matches!(e, SourceError::DataNull)),
        ("rate_limited", |e| {
            matches!(e, SourceError::RateLimited { .. })
        }),
        ("auth", |e| matches!(e, SourceError::Auth(_))),
        ("truncated", |e| matches!(e, SourceError::Truncated(_))),
        ("html_error", |e| matches!(e, SourceError::Html { .. })),
    ];
    for (scenario, check) in cases {
        let err = tushare(&srv, scenario)
            .daily_bars(&stock("600519"))
            .await
            .unwrap_err();
        assert!(check(&err), "{scenario}: {err:?}");
    }
}
