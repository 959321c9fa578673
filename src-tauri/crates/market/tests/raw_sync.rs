//! Unadjusted closes through a sync, over real HTTP against a local server that answers in
//! each vendor's wire format (Eastmoney `fqt=0/1`, Tencent `day`/`qfqday`, Tushare `daily`
//! with `adj_factor`): the raw closes are stored beside the forward-adjusted bars, stay the
//! same when a dividend re-bases every past adjusted price, and are what
//! `MarketData::raw_closes` hands out while charts keep the adjusted bars.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::NaiveDate;
use common::{FixtureServer, Recorded};
use serde_json::{Value, json};
use wyckoff_market::breaker::BreakerConfig;
use wyckoff_market::sources::SourcePolicy;
use wyckoff_market::sources::eastmoney::EastmoneyConfig;
use wyckoff_market::sources::tencent::TencentConfig;
use wyckoff_market::sources::tushare::TushareConfig;
use wyckoff_market::{
    Clock, ManualClock, MarketConfig, MarketData, RawBasis, RawGapReason, SourceSpec, SyncStatus,
    SyncTarget, price_e6,
};

fn fast() -> SourcePolicy {
    SourcePolicy {
        min_interval: Duration::ZERO,
        max_retries: 0,
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(5),
        breaker: BreakerConfig {
            failure_threshold: 50,
            cooldown: Duration::from_secs(60),
        },
    }
}

fn at(y: i32, m: u32, d: u32) -> Arc<ManualClock> {
    Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One day's real (unadjusted) prices.
#[derive(Debug, Clone, Copy)]
struct Day {
    open: f64,
    high: f64,
    low: f64,
    close: f64,
}

/// What the fake vendors know of one stock: its real prices and its dividends, each an
/// ex-date and the multiplier forward adjustment applies to every day before it. Each
/// vendor derives its forward-adjusted prices from these as of its reply, so a dividend
/// added later re-bases every earlier adjusted price while the raw ones stay.
#[derive(Debug, Default)]
struct Stock {
    days: BTreeMap<u32, Day>,
    dividends: Vec<(u32, f64)>,
    /// Days before this have no unadjusted prices at the vendor.
    raw_from: u32,
    /// Requests for unadjusted prices are answered with HTTP 502.
    raw_down: bool,
}

impl Stock {
    /// Forward-adjustment factor of `date`: adjusted = raw × factor.
    fn factor(&self, date: u32) -> f64 {
        self.dividends
            .iter()
            .filter(|(ex, _)| *ex > date)
            .map(|(_, m)| m)
            .product()
    }

    /// Tushare's cumulative `adj_factor`: grows at each ex-date, never changes for a past day.
    fn adj_factor(&self, date: u32) -> f64 {
        let mut f = 7.5;
        for (ex, m) in &self.dividends {
            if *ex <= date {
                f /= m;
            }
        }
        (f * 1e6).round() / 1e6
    }

    fn in_range(&self, beg: u32, end: u32) -> Vec<(u32, Day)> {
        self.days
            .range(beg..=end)
            .map(|(d, day)| (*d, *day))
            .collect()
    }

    /// The day as a vendor sends it: raw, or forward-adjusted to 2 decimals.
    fn priced(&self, date: u32, day: Day, adjusted: bool) -> Day {
        let k = if adjusted { self.factor(date) } else { 1.0 };
        Day {
            open: round2(day.open * k),
            high: round2(day.high * k),
            low: round2(day.low * k),
            close: round2(day.close * k),
        }
    }
}

type Market = Arc<Mutex<BTreeMap<String, Stock>>>;

fn iso(d: u32) -> String {
    wyckoff_market::date::iso(d)
}

fn eastmoney_reply(m: &BTreeMap<String, Stock>, r: &Recorded) -> Option<(u16, String)> {
    let code = r.param("secid")?.split('.').nth(1)?.to_string();
    let stock = m.get(&code)?;
    let raw = r.param("fqt").as_deref() == Some("0");
    if raw && stock.raw_down {
        return Some((502, "<html>502 Bad Gateway</html>".into()));
    }
    let (beg, end) = (r.param("beg")?.parse().ok()?, r.param("end")?.parse().ok()?);
    let lines: Vec<String> = stock
        .in_range(beg, end)
        .into_iter()
        .filter(|(d, _)| !raw || *d >= stock.raw_from)
        .map(|(d, day)| {
            let p = stock.priced(d, day, !raw);
            format!(
                "{},{:.2},{:.2},{:.2},{:.2},1000,{:.2},1.0,0.0,0.0,0.5",
                iso(d),
                p.open,
                p.close,
                p.high,
                p.low,
                day.close * 100_000.0
            )
        })
        .collect();
    let body = json!({"rc": 0, "data": {"code": code, "decimal": 2, "klines": lines}});
    Some((200, body.to_string()))
}

fn tencent_reply(m: &BTreeMap<String, Stock>, r: &Recorded) -> Option<(u16, String)> {
    // sh600519,day,2024-01-01,2024-01-31,31,qfq
    let param = r.param("param")?;
    let f: Vec<&str> = param.split(',').collect();
    let sym = f[0].to_string();
    let stock = m.get(&sym[2..])?;
    let raw = f.get(5).copied() != Some("qfq");
    let d = |s: &str| s.replace('-', "").parse::<u32>().ok();
    let (beg, end, count) = (d(f[2])?, d(f[3])?, f[4].parse::<usize>().ok()?);
    let mut rows: Vec<Value> = stock
        .in_range(beg, end)
        .into_iter()
        .filter(|(d, _)| !raw || *d >= stock.raw_from)
        .map(|(d, day)| {
            let p = stock.priced(d, day, !raw);
            json!([
                iso(d),
                format!("{:.3}", p.open),
                format!("{:.3}", p.close),
                format!("{:.3}", p.high),
                format!("{:.3}", p.low),
                "10.000"
            ])
        })
        .collect();
    // Tencent answers at most `count` bars: the last ones
    let skip = rows.len().saturating_sub(count);
    rows.drain(..skip);
    let key = if raw { "day" } else { "qfqday" };
    let body = json!({"code": 0, "msg": "", "data": {sym.clone(): {key: rows}}});
    Some((200, body.to_string()))
}

fn tushare_reply(m: &BTreeMap<String, Stock>, r: &Recorded) -> Option<(u16, String)> {
    let v: Value = serde_json::from_str(&r.body).ok()?;
    let api = v["api_name"].as_str()?;
    let ts_code = v["params"]["ts_code"].as_str()?.to_string();
    let stock = m.get(ts_code.split('.').next()?)?;
    let d = |k: &str| v["params"][k].as_str()?.parse::<u32>().ok();
    let days = stock.in_range(d("start_date")?, d("end_date")?);
    let (fields, items): (Value, Vec<Value>) = match api {
        "daily" => (
            json!([
                "ts_code",
                "trade_date",
                "open",
                "high",
                "low",
                "close",
                "vol",
                "amount"
            ]),
            days.iter()
                .rev()
                .map(|(d, p)| {
                    json!([
                        ts_code,
                        d.to_string(),
                        p.open,
                        p.high,
                        p.low,
                        p.close,
                        10.0,
                        p.close
                    ])
                })
                .collect(),
        ),
        "adj_factor" => (
            json!(["ts_code", "trade_date", "adj_factor"]),
            days.iter()
                .rev()
                .map(|(d, _)| json!([ts_code, d.to_string(), stock.adj_factor(*d)]))
                .collect(),
        ),
        _ => return None,
    };
    let body = json!({"code": 0, "msg": "", "data": {"fields": fields, "items": items}});
    Some((200, body.to_string()))
}

/// Serves every vendor under `/{vendor}/live/…` from `market`.
fn serve(srv: &FixtureServer, market: Market) {
    srv.set_dynamic(Arc::new(move |r: &Recorded| {
        let m = market.lock().unwrap();
        if r.path.starts_with("/eastmoney/live/") {
            eastmoney_reply(&m, r)
        } else if r.path.starts_with("/tencent/live") {
            tencent_reply(&m, r)
        } else if r.path.starts_with("/tushare/live") {
            tushare_reply(&m, r)
        } else {
            None
        }
    }));
}

fn spec(srv: &FixtureServer, vendor: &str) -> SourceSpec {
    match vendor {
        "eastmoney" => SourceSpec::Eastmoney(
            EastmoneyConfig {
                kline_base: srv.base("eastmoney", "live"),
                list_base: srv.base("eastmoney", "live"),
                page_interval: Duration::ZERO,
                page_size: 100,
            },
            fast(),
        ),
        "tencent" => SourceSpec::Tencent(
            TencentConfig {
                base: srv.base("tencent", "live"),
                ..TencentConfig::default()
            },
            fast(),
        ),
        "tushare" => SourceSpec::Tushare(
            TushareConfig {
                base: srv.base("tushare", "live"),
                token: "t0ken".into(),
            },
            fast(),
        ),
        other => panic!("{other}"),
    }
}

async fn open(home: &std::path::Path, source: SourceSpec, clock: Arc<ManualClock>) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.sources = vec![source];
    cfg.clock = clock;
    cfg.initial_trading_days = 12;
    MarketData::open_with(cfg).await.unwrap()
}

/// Real prices of a stock on every trading day from `from` to `to`, moving a little each day.
fn synthetic_days(from: u32, to: u32) -> BTreeMap<u32, Day> {
    let cal = wyckoff_market::bundled::calendar().unwrap();
    cal.trading_days_between(from, to)
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let close = 1600.0 + (i % 9) as f64 * 7.35;
            let day = Day {
                open: close - 5.0,
                high: close + 11.0,
                low: close - 12.0,
                close,
            };
            (*d, day)
        })
        .collect()
}

async fn sync(md: &MarketData, code: &str) -> SyncStatus {
    let rep = md
        .sync(SyncTarget::Codes(vec![code.into()]), &mut |_| {})
        .await
        .unwrap();
    rep.outcomes[0].status.clone()
}

/// The scenario every vendor goes through: a first sync brings adjusted and raw prices;
/// a dividend then re-bases the adjusted prices of every past day; the raw ones stay.
async fn raw_closes_survive_a_rebase(vendor: &str) -> Vec<Recorded> {
    let srv = FixtureServer::start().await;
    let stock = Stock {
        days: synthetic_days(20231201, 20240131),
        // a dividend inside the first window: the days before it differ raw and adjusted
        dividends: vec![(20240103, 0.97)],
        ..Stock::default()
    };
    let market: Market = Arc::new(Mutex::new(BTreeMap::from([("600519".to_string(), stock)])));
    serve(&srv, market.clone());
    let home = tempfile::tempdir().unwrap();
    let clock = at(2024, 1, 5);
    let md = open(home.path(), spec(&srv, vendor), clock.clone()).await;

    let status = sync(&md, "600519").await;
    assert!(
        matches!(&status, SyncStatus::Updated { source, rebased: false, .. } if source == vendor),
        "{status:?}"
    );
    let adjusted = md.daily_bars("600519", None).await.unwrap();
    assert_eq!(adjusted.bars.len(), 12, "{:?}", adjusted.notes);
    let raw = md.raw_closes("600519", 0..=u32::MAX).await.unwrap();
    assert_eq!(raw.basis, RawBasis::Exact, "{vendor}: {}", raw.basis);
    let truth = market.lock().unwrap()["600519"].days.clone();
    assert_eq!(raw.closes.len(), adjusted.bars.len());
    for (c, b) in raw.closes.iter().zip(&adjusted.bars) {
        let real = truth[&c.date].close;
        assert_eq!((c.date, c.close_e6), (b.date, price_e6(real).unwrap()));
        // charts keep the adjusted close: below the raw one before the ex-date
        let k = if b.date < 20240103 { 0.97 } else { 1.0 };
        assert!(
            (b.close - real * k).abs() < 0.011,
            "{vendor} {b:?} vs {real}"
        );
        assert!(c.exact);
    }
    assert!(adjusted.bars[0].close < truth[&adjusted.bars[0].date].close * 0.98);

    // a dividend on 2024-01-09: every adjusted price before it moves, the raw ones do not
    market
        .lock()
        .unwrap()
        .get_mut("600519")
        .unwrap()
        .dividends
        .push((20240109, 0.95));
    clock.set(at(2024, 1, 10).now());
    let status = sync(&md, "600519").await;
    assert!(
        matches!(&status, SyncStatus::Updated { rebased: true, .. }),
        "{vendor}: {status:?}"
    );
    let rebased = md.daily_bars("600519", None).await.unwrap();
    let before = |d: u32| adjusted.bars.iter().find(|b| b.date == d).unwrap().close;
    let after = |d: u32| rebased.bars.iter().find(|b| b.date == d).unwrap().close;
    for d in [20231220, 20240104, 20240105] {
        assert!(
            (after(d) - before(d) * 0.95).abs() < 0.011,
            "{vendor} {d}: {} then {}",
            before(d),
            after(d)
        );
    }
    let raw_after = md.raw_closes("600519", 0..=u32::MAX).await.unwrap();
    assert_eq!(
        raw_after.basis,
        RawBasis::Exact,
        "{vendor}: {}",
        raw_after.basis
    );
    assert_eq!(
        raw_after.closes[..raw.closes.len()],
        raw.closes[..],
        "{vendor}: the past raw closes are unchanged"
    );
    let new: Vec<(u32, i64)> = raw_after.closes[raw.closes.len()..]
        .iter()
        .map(|c| (c.date, c.close_e6))
        .collect();
    let want: Vec<(u32, i64)> = [20240108, 20240109, 20240110]
        .iter()
        .map(|d| (*d, price_e6(truth[d].close).unwrap()))
        .collect();
    assert_eq!(new, want, "{vendor}");
    srv.requests()
}

#[tokio::test]
async fn eastmoney_raw_closes_come_with_fqt_0_and_survive_a_rebase() {
    let reqs = raw_closes_survive_a_rebase("eastmoney").await;
    let asked: Vec<(String, String, String)> = reqs
        .iter()
        .map(|r| {
            (
                r.param("fqt").unwrap(),
                r.param("beg").unwrap(),
                r.param("end").unwrap(),
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        asked,
        [
            // first sync: adjusted, then raw over the same days
            (s("1"), s("20231220"), s("20240105")),
            (s("0"), s("20231220"), s("20240105")),
            // the overlap day shows the re-base, the whole series is fetched again, and
            // raw prices only for the days that have none
            (s("1"), s("20240105"), s("20240110")),
            (s("1"), s("20231220"), s("20240110")),
            (s("0"), s("20240108"), s("20240110")),
        ]
    );
}

#[tokio::test]
async fn tencent_raw_closes_come_from_its_day_rows_and_survive_a_rebase() {
    let reqs = raw_closes_survive_a_rebase("tencent").await;
    let fq: Vec<String> = reqs
        .iter()
        .map(|r| {
            r.param("param")
                .unwrap()
                .rsplit(',')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(fq, ["qfq", "", "qfq", "qfq", ""]);
}

#[tokio::test]
async fn tushare_raw_closes_come_with_daily_beside_adj_factor_in_one_fetch() {
    let reqs = raw_closes_survive_a_rebase("tushare").await;
    let apis: Vec<String> = reqs
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(&r.body).unwrap();
            v["api_name"].as_str().unwrap().to_string()
        })
        .collect();
    // `daily` is the raw prices: no request beyond the adjusted fetch
    assert_eq!(
        apis,
        [
            "daily",
            "adj_factor",
            "daily",
            "adj_factor",
            "daily",
            "adj_factor"
        ]
    );
}

/// The bundled zvt bars of 601318 are forward-adjusted as of 2020-06-16 and carry no
/// factor. Their amount / volume (not adjusted: the day's real average price) runs about
/// 1.8% above the adjusted prices until 2019-11-05 and level with them after: one re-basing
/// step of that size. The fake vendor's real prices are built from that (adjusted / factor)
/// and it sends the bundled adjusted prices back, so a sync sees no re-base and only fills
/// in the raw closes; `raw_closes` then answers the real close of 2019-01-02, not 52.99.
#[tokio::test]
async fn the_bundled_601318_series_gets_its_raw_closes_from_a_sync() {
    let bundled = wyckoff_market::bundled::daily_bars()
        .unwrap()
        .into_iter()
        .find(|s| s.code.digits() == "601318")
        .unwrap()
        .bars;
    let mut ratios: Vec<f64> = bundled
        .iter()
        .filter(|b| (20190102..20191101).contains(&b.date))
        .map(|b| (b.amount / b.volume) / ((b.high + b.low + b.close) / 3.0))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let step = 1.0 / ratios[ratios.len() / 2];
    assert!((0.97..0.99).contains(&step), "{step}");
    let ex_date = 20191106;
    let k = |d: u32| if d < ex_date { step } else { 1.0 };
    let mut days: BTreeMap<u32, Day> = bundled
        .iter()
        .map(|b| {
            let real = Day {
                open: round2(b.open / k(b.date)),
                high: round2(b.high / k(b.date)),
                low: round2(b.low / k(b.date)),
                close: round2(b.close / k(b.date)),
            };
            (b.date, real)
        })
        .collect();
    let last = *days.values().last().unwrap();
    for d in [20200617, 20200618, 20200619, 20200622, 20200623, 20200624] {
        days.insert(d, last);
    }
    let stock = Stock {
        days,
        dividends: vec![(ex_date, step)],
        // the vendor has no raw prices for 2007
        raw_from: 20080101,
        raw_down: false,
    };
    let market: Market = Arc::new(Mutex::new(BTreeMap::from([("601318".to_string(), stock)])));
    let srv = FixtureServer::start().await;
    serve(&srv, market.clone());
    let home = tempfile::tempdir().unwrap();
    let clock = at(2020, 6, 19);
    let md = open(home.path(), spec(&srv, "eastmoney"), clock.clone()).await;

    // before any sync: the bundled close stands in, and says so
    let before = md.raw_closes("601318", 20190102..=20190102).await.unwrap();
    assert_eq!(before.closes[0].close_e6, 52_990_000);
    assert!(!before.closes[0].exact);

    let status = sync(&md, "601318").await;
    assert!(
        matches!(
            &status,
            SyncStatus::Updated {
                rebased: false,
                new_bars: 3,
                ..
            }
        ),
        "{status:?}"
    );
    let r = md.raw_closes("601318", 20190102..=20190102).await.unwrap();
    assert_eq!(r.basis, RawBasis::Exact, "{}", r.basis);
    let real = market.lock().unwrap()["601318"].days[&20190102];
    assert_eq!(
        r.closes[0].close_e6,
        price_e6(round2(52.99 / step)).unwrap()
    );
    assert_eq!(r.closes[0].close_e6, price_e6(real.close).unwrap());
    assert!(r.closes[0].exact);
    // the real average price of the day lies within the real range, not the adjusted one
    let b = bundled.iter().find(|b| b.date == 20190102).unwrap();
    let vwap = b.amount / b.volume;
    assert!((real.low..=real.high).contains(&vwap), "{vwap} in {real:?}");
    assert!(!(b.low..=b.high).contains(&vwap));
    // charts keep the bundled adjusted bar
    let chart = md.daily_bars("601318", Some(20190102)).await.unwrap();
    assert_eq!(chart.bars.last().unwrap().close, 52.99);

    // the days the vendor has no raw price for stay named, as bundled
    let all = md.raw_closes("601318", 0..=u32::MAX).await.unwrap();
    let RawBasis::Approximate { gaps } = &all.basis else {
        panic!("{}", all.basis);
    };
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(
        (gaps[0].reason, gaps[0].first_date, gaps[0].last_date),
        (RawGapReason::Bundled, 20070301, 20071228)
    );
    let exact_from_2008 = all.closes.iter().filter(|c| c.date >= 20080101);
    assert!(exact_from_2008.clone().all(|c| c.exact));
    assert_eq!(
        exact_from_2008.count(),
        bundled.iter().filter(|b| b.date >= 20080101).count() + 3
    );

    // the next sync does not ask for 2007 again: only the new day's raw price
    let fqt0 = |srv: &FixtureServer| -> Vec<(String, String)> {
        srv.requests()
            .iter()
            .filter(|r| r.param("fqt").as_deref() == Some("0"))
            .map(|r| (r.param("beg").unwrap(), r.param("end").unwrap()))
            .collect()
    };
    clock.set(at(2020, 6, 22).now());
    sync(&md, "601318").await;
    let s = |x: &str| x.to_string();
    assert_eq!(
        fqt0(&srv),
        [
            (s("20070301"), s("20200619")),
            (s("20200622"), s("20200622"))
        ]
    );

    // the raw fetch fails: the adjusted bar is stored, its day named as not fetched …
    market.lock().unwrap().get_mut("601318").unwrap().raw_down = true;
    clock.set(at(2020, 6, 23).now());
    let status = sync(&md, "601318").await;
    assert!(
        matches!(&status, SyncStatus::Updated { new_bars: 1, .. }),
        "{status:?}"
    );
    let r = md.raw_closes("601318", 20200622..=20200623).await.unwrap();
    assert_eq!(
        r.closes.iter().map(|c| c.exact).collect::<Vec<_>>(),
        [true, false]
    );
    let RawBasis::Approximate { gaps } = &r.basis else {
        panic!("{}", r.basis);
    };
    assert_eq!(
        (gaps[0].source.as_str(), gaps[0].reason, gaps[0].days),
        ("eastmoney", RawGapReason::NotFetched, 1)
    );
    // … and the next sync asks for it again
    market.lock().unwrap().get_mut("601318").unwrap().raw_down = false;
    clock.set(at(2020, 6, 24).now());
    sync(&md, "601318").await;
    assert_eq!(
        fqt0(&srv)[2..],
        [
            (s("20200623"), s("20200623")),
            (s("20200623"), s("20200624"))
        ]
    );
    let r = md.raw_closes("601318", 20080101..=20200624).await.unwrap();
    assert_eq!(r.basis, RawBasis::Exact, "{}", r.basis);
}

/// A TDX install's `.day` file: 32-byte records of date, open/high/low/close in fen,
/// f32 amount, volume and a reserved word.
fn tdx_install(root: &std::path::Path, code: &str, days: &BTreeMap<u32, Day>) {
    let dir = root.join("vipdoc").join("sh").join("lday");
    std::fs::create_dir_all(&dir).unwrap();
    let fen = |p: f64| (p * 100.0).round() as u32;
    let mut bytes = Vec::new();
    for (date, d) in days {
        for v in [*date, fen(d.open), fen(d.high), fen(d.low), fen(d.close)] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        bytes.extend_from_slice(&1.0e6f32.to_le_bytes());
        bytes.extend_from_slice(&10_000u32.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
    }
    std::fs::write(dir.join(format!("sh{code}.day")), bytes).unwrap();
}

#[tokio::test]
async fn tdx_bars_are_unadjusted_until_a_sync_replaces_them_keeping_their_real_closes() {
    let srv = FixtureServer::start().await;
    let stock = Stock {
        days: synthetic_days(20231201, 20240131),
        dividends: vec![(20240103, 0.97)],
        ..Stock::default()
    };
    let truth = stock.days.clone();
    let market: Market = Arc::new(Mutex::new(BTreeMap::from([("600519".to_string(), stock)])));
    serve(&srv, market.clone());
    let home = tempfile::tempdir().unwrap();
    let clock = at(2024, 1, 5);
    let md = open(home.path(), spec(&srv, "eastmoney"), clock.clone()).await;
    // the install holds the real prices up to the day before
    let tdx = tempfile::tempdir().unwrap();
    let held: BTreeMap<u32, Day> = truth.range(..=20240104).map(|(d, x)| (*d, *x)).collect();
    tdx_install(tdx.path(), "600519", &held);
    let r = md.import_tdx(tdx.path(), &mut |_| {}).await.unwrap();
    assert_eq!(r.bars_added as usize, held.len());

    let imported = md.daily_bars("600519", None).await.unwrap();
    assert!(
        imported
            .notes
            .iter()
            .any(|n| n.to_string().contains("unadjusted")),
        "{:?}",
        imported.notes
    );
    // before the ex-date the stored closes are the real ones, not adjusted
    assert_eq!(imported.bars[0].close, truth[&imported.bars[0].date].close);

    // a sync replaces the whole series with the adjusted history
    let status = sync(&md, "600519").await;
    assert!(matches!(&status, SyncStatus::Updated { .. }), "{status:?}");
    let synced = md.daily_bars("600519", None).await.unwrap();
    assert!(
        !synced
            .notes
            .iter()
            .any(|n| n.to_string().contains("unadjusted")),
        "{:?}",
        synced.notes
    );
    assert_eq!(synced.bars.first().map(|b| b.date), Some(20231201));
    for b in &synced.bars {
        let k = if b.date < 20240103 { 0.97 } else { 1.0 };
        assert!((b.close - truth[&b.date].close * k).abs() < 0.011, "{b:?}");
    }
    // and the real closes TDX gave stay as the unadjusted ones
    let raw = md.raw_closes("600519", 0..=u32::MAX).await.unwrap();
    assert_eq!(raw.basis, RawBasis::Exact, "{}", raw.basis);
    for c in &raw.closes {
        assert_eq!(
            c.close_e6,
            price_e6(truth[&c.date].close).unwrap(),
            "{}",
            c.date
        );
    }
    // nothing from TDX is left to mix in: the next sync has nothing to do
    let again = sync(&md, "600519").await;
    assert!(matches!(again, SyncStatus::UpToDate), "{again:?}");
}
