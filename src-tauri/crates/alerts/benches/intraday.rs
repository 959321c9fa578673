//! One intraday alerts pass on a 300-stock snapshot, network excluded (target < 20 ms):
//! Tencent's GBK reply for 300 codes decoded and parsed, each stock's partial bar built
//! and read at its volume pace, and four rules on the watchlist (price, change, volume
//! pace, any Wyckoff event placed by the engine on the partial bar) evaluated over
//! 500 cached daily bars each from a real `wyckoff.db`, with cooldowns and recording.
//! The bars are the engine's synthetic market (made-up test data, never shipped).

// A benchmark harness: setup failures abort loudly; the pass's counts go to stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use wyckoff_alerts::intraday::check_snapshot;
use wyckoff_alerts::{AlertStore, NewRule};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::date::from_yyyymmdd;
use wyckoff_market::quote::QuoteSnapshot;
use wyckoff_market::sources::tencent_quote;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData, StockCode};
use wyckoff_protocol::{AlertCondition, AlertTarget};
use wyckoff_push::Outbox;

const STOCKS: usize = 300;
/// Single passes timed for the low, median and high.
const RUNS: usize = 51;

/// A Tencent reply line in the API's layout for a stock whose last close was `prev`.
fn line(code: &StockCode, prev: f64, day: u32, i: usize) -> String {
    let last = prev * (1.0 + ((i % 13) as f64 - 6.0) / 100.0);
    let lots = 50_000 + 1_000 * (i % 40);
    let amount = (last * lots as f64 * 100.0).round();
    let mut f = vec![String::new(); 50];
    f[0] = "1".into();
    f[1] = "测试".into();
    f[2] = code.digits().into();
    f[3] = format!("{last:.2}");
    f[4] = format!("{prev:.2}");
    f[5] = format!("{prev:.2}");
    f[6] = lots.to_string();
    f[30] = format!("{day}104203");
    f[33] = format!("{:.2}", last.max(prev) * 1.01);
    f[34] = format!("{:.2}", last.min(prev) * 0.99);
    f[35] = format!("{last:.2}/{lots}/{amount}");
    f[36] = lots.to_string();
    f[37] = format!("{:.0}", amount / 10_000.0);
    format!("v_{}=\"{}\";\n", code.symbol().tencent(), f.join("~"))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let shape = MarketShape {
        stocks: STOCKS,
        ..MarketShape::full_market()
    };
    let (md, store, outbox, reply, codes, now, calendar) = rt.block_on(async {
        let md = MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap();
        let synthetic = market(shape);
        let mut batch = Vec::new();
        let mut codes = Vec::new();
        let mut last_day = 0;
        for s in &synthetic.stocks {
            let Ok(code) = StockCode::parse(&s.code) else {
                continue;
            };
            last_day = last_day.max(s.bars.last().unwrap().date);
            batch.push((code.symbol().key(), s.bars.clone()));
            codes.push((code, s.bars.last().unwrap().close));
        }
        md.store()
            .upsert_many(BarTable::Stocks, &batch, "synthetic", true, Utc::now())
            .await
            .unwrap();
        let watch = WatchlistStore::new(md.pool().clone());
        for (code, _) in &codes {
            watch.add(code.digits(), Utc::now()).await.unwrap();
        }
        let store = AlertStore::new(md.pool().clone()).await.unwrap();
        for condition in [
            AlertCondition::PriceAbove { level: 30.0 },
            AlertCondition::ChangeAbove { pct: 4.0 },
            AlertCondition::VolumeRatio { k: 2.0 },
            AlertCondition::Event { event: None },
        ] {
            let rule = NewRule {
                target: AlertTarget::Watchlist,
                condition,
                cooldown_days: 1,
            };
            store.add_rule(&rule, Utc::now()).await.unwrap();
        }
        let outbox = Outbox::new(md.pool().clone(), Duration::from_secs(5))
            .await
            .unwrap();
        // the session of the trading day after the synthetic bars end, at 10:42
        let (calendar, _) = md.current_calendar().await.unwrap();
        let day = calendar.next_trading_day(last_day).unwrap();
        let local = from_yyyymmdd(day).unwrap().and_hms_opt(10, 42, 3).unwrap();
        let now = wyckoff_time::from_beijing(local);
        let text: String = codes
            .iter()
            .enumerate()
            .map(|(i, (code, prev))| line(code, *prev, day, i))
            .collect();
        let (reply, _, _) = encoding_rs::GBK.encode(&text);
        let codes: Vec<StockCode> = codes.into_iter().map(|(c, _)| c).collect();
        (md, store, outbox, reply.into_owned(), codes, now, calendar)
    });
    assert_eq!(codes.len(), STOCKS);

    let pass = || {
        rt.block_on(async {
            let text = tencent_quote::decode(&reply);
            let parsed = tencent_quote::parse(&text, &codes).unwrap();
            let snapshot = QuoteSnapshot {
                quotes: parsed.quotes,
                unknown: parsed.unknown,
                failed: Vec::new(),
                cached: 0,
            };
            check_snapshot(&md, &store, &outbox, &snapshot, now, &calendar)
                .await
                .unwrap()
        })
    };
    let first = pass();
    assert_eq!(first.quoted.len(), STOCKS);
    assert!(first.not_live.is_empty());
    assert!(
        first.report.unevaluated.is_empty(),
        "{:?}",
        first.report.unevaluated.first()
    );
    eprintln!(
        "intraday pass: {} stocks quoted, {} rule evaluations, {} fired",
        first.quoted.len(),
        first.report.stocks * 4,
        first.report.fired.len()
    );
    // low, median and high of single passes, the line scripts/bench-baselines reads
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(pass());
            start.elapsed()
        })
        .collect();
    times.sort();
    eprintln!(
        "intraday pass, {STOCKS} codes: low {:.2?}, median {:.2?}, high {:.2?} over {RUNS} runs",
        times[0],
        times[RUNS / 2],
        times[RUNS - 1]
    );
    c.bench_function("intraday_300_codes_parse_and_evaluate", |b| {
        b.iter(|| black_box(pass()))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
