//! A check of the latest close reads each stock's last bars only (from the screen's tail
//! cache when it stands for the database); a check as of a date reads whole histories.
//! Both must decide the same: every condition and every cooldown, on a synthetic market in
//! real SQLite files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, TimeZone, Utc};
use wyckoff_alerts::{AlertStore, NewRule, check};
use wyckoff_engine::Bar;
use wyckoff_engine::alerts::{AlertInput, CHECK_BARS, evaluate};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::tail_cache;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{IndexCode, MarketConfig, MarketData, StockCode};
use wyckoff_protocol::{AlertCheckReport, AlertCondition, AlertTarget};

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap()
}

/// More bars a stock than a check reads back, and more stocks than a handful.
fn shape() -> MarketShape {
    MarketShape {
        stocks: 160,
        bars: CHECK_BARS + 180,
        ..MarketShape::full_market()
    }
}

fn conditions() -> Vec<AlertCondition> {
    vec![
        AlertCondition::PriceAbove { level: 20.0 },
        AlertCondition::PriceBelow { level: 8.0 },
        AlertCondition::ChangeAbove { pct: 2.0 },
        AlertCondition::ChangeBelow { pct: -2.0 },
        AlertCondition::VolumeRatio { k: 1.3 },
        AlertCondition::Event { event: None },
        AlertCondition::Event {
            event: Some("Spring".into()),
        },
        AlertCondition::PhaseChange,
        AlertCondition::HealthChange,
    ]
}

/// Every condition reads no further back than [`CHECK_BARS`] bars: on a stock's last ones
/// it says what it says on the whole series, on every one of many evaluated days.
#[test]
fn every_condition_reads_no_further_back_than_the_check_bars() {
    let universe = market(shape());
    let bench = universe.benchmarks.sse.clone().unwrap();
    let mut compared = 0;
    for s in universe.stocks.iter().take(60) {
        for end in (CHECK_BARS + 1..=s.bars.len()).step_by(17) {
            let whole = &s.bars[..end];
            let tail = &whole[end - CHECK_BARS..];
            for c in conditions() {
                let on = |bars: &[Bar]| {
                    evaluate(
                        &c,
                        &AlertInput {
                            code: &s.code,
                            name: &s.name,
                            bars,
                            holding: None,
                            stop_loss: None,
                            target: None,
                            bench: Some(&bench),
                        },
                    )
                };
                assert_eq!(on(tail), on(whole), "{} {c:?} on bar {end}", s.code);
                compared += 1;
            }
        }
    }
    assert!(compared > 1000, "{compared}");
}

struct Home {
    _dir: tempfile::TempDir,
    md: MarketData,
    store: AlertStore,
    /// The synthetic market's days, ascending.
    days: Vec<u32>,
}

/// A home with the synthetic market (and its SSE index) in the cache and every stock
/// watched; with `tail_cache`, the screen's tail cache built for it.
async fn home(tail_cache: bool) -> Home {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    let universe = market(shape());
    let batch: Vec<(String, Vec<Bar>)> = universe
        .stocks
        .iter()
        .map(|s| {
            let code = StockCode::parse(&s.code).unwrap();
            (code.symbol().key(), s.bars.clone())
        })
        .collect();
    md.store()
        .upsert_many(BarTable::Stocks, &batch, "synthetic", true, now())
        .await
        .unwrap();
    let sse = IndexCode::parse("sse").unwrap().symbol().key();
    let bench = universe.benchmarks.sse.clone().unwrap();
    md.store()
        .upsert_many(BarTable::Indices, &[(sse, bench)], "synthetic", true, now())
        .await
        .unwrap();
    let watch = WatchlistStore::new(md.pool().clone());
    for s in &universe.stocks {
        watch.add(&s.code, now()).await.unwrap();
    }
    if tail_cache {
        md.refresh_tail_cache().await;
        assert!(dir.path().join(tail_cache::FILE).exists());
    }
    let store = AlertStore::new(md.pool().clone()).await.unwrap();
    let days = universe.stocks[0].bars.iter().map(|b| b.date).collect();
    Home {
        _dir: dir,
        md,
        store,
        days,
    }
}

async fn add(h: &Home, target: AlertTarget, condition: AlertCondition, cooldown_days: u32) -> i64 {
    let rule = NewRule {
        target,
        condition,
        cooldown_days,
    };
    h.store.add_rule(&rule, now()).await.unwrap().id
}

/// What a check decided, in a stable order, without what differs by design (the as-of
/// date asked for, the recorded rows' ids and times).
fn decided(r: &AlertCheckReport) -> String {
    let mut fired: Vec<String> = r
        .fired
        .iter()
        .map(|f| {
            format!(
                "{:?} {} {:?} {} {:?} {:?}",
                f.rule_id, f.code, f.name, f.bar_date, f.condition, f.figures
            )
        })
        .collect();
    let mut held: Vec<String> = r.suppressed.iter().map(|s| format!("{s:?}")).collect();
    let mut missing: Vec<String> = r.unevaluated.iter().map(|u| format!("{u:?}")).collect();
    fired.sort();
    held.sort();
    missing.sort();
    format!(
        "{} stocks, data {:?}\nfired:\n{}\nheld back:\n{}\nnot evaluated:\n{}",
        r.stocks,
        r.data_date,
        fired.join("\n"),
        held.join("\n"),
        missing.join("\n")
    )
}

#[tokio::test]
async fn a_check_of_the_latest_close_on_tails_decides_as_one_on_whole_histories() {
    // on tails from the cache file, on tails from the database, on whole histories
    let homes = [home(true).await, home(false).await, home(false).await];
    let newest = *homes[0].days.last().unwrap();
    for h in &homes {
        for c in conditions() {
            add(h, AlertTarget::Watchlist, c, 1).await;
        }
    }
    let mut reports = Vec::new();
    for (i, h) in homes.iter().enumerate() {
        let as_of = (i == 2).then_some(newest);
        reports.push(check(&h.md, &h.store, as_of, now()).await.unwrap());
    }
    let whole = decided(&reports[2]);
    assert!(reports[2].fired.len() > 100, "{whole}");
    assert_eq!(decided(&reports[0]), whole);
    assert_eq!(decided(&reports[1]), whole);
    // a second check on the same close: every firing held back the same way
    let mut again = Vec::new();
    for (i, h) in homes.iter().enumerate() {
        let as_of = (i == 2).then_some(newest);
        again.push(check(&h.md, &h.store, as_of, now()).await.unwrap());
    }
    assert!(again[2].fired.is_empty());
    assert_eq!(again[2].suppressed.len(), reports[2].fired.len());
    assert_eq!(decided(&again[0]), decided(&again[2]));
    assert_eq!(decided(&again[1]), decided(&again[2]));
}

/// A cooldown longer than the bars a check reads: the earlier firing one cooldown away
/// lets the rule fire again, the one a day nearer holds it back, on tails as on whole
/// histories.
#[tokio::test]
async fn a_cooldown_longer_than_the_check_bars_counts_the_same_trading_days() {
    let cooldown = CHECK_BARS as u32 + 10;
    let homes = [home(true).await, home(false).await];
    let days = homes[0].days.clone();
    let newest = *days.last().unwrap();
    let last = days.len() - 1;
    // A fires on X a whole cooldown before the newest close, B on Y a day later.
    let (x, y) = ("600000", "600001");
    let (far, near) = (
        days[last - cooldown as usize],
        days[last - cooldown as usize + 1],
    );
    let mut reports = Vec::new();
    for (i, h) in homes.iter().enumerate() {
        let every_close = AlertCondition::PriceAbove { level: 0.01 };
        let stock = |code: &str| AlertTarget::Stock { code: code.into() };
        let a = add(h, stock(x), every_close.clone(), cooldown).await;
        let b = add(h, stock(y), every_close, cooldown).await;
        h.store.set_enabled(b, false).await.unwrap();
        let r = check(&h.md, &h.store, Some(far), now()).await.unwrap();
        assert_eq!(r.fired.len(), 1, "{r:?}");
        h.store.set_enabled(b, true).await.unwrap();
        h.store.set_enabled(a, false).await.unwrap();
        let r = check(&h.md, &h.store, Some(near), now()).await.unwrap();
        assert_eq!(r.fired.len(), 1, "{r:?}");
        h.store.set_enabled(a, true).await.unwrap();
        // the first home checks the latest close (tails), the second as of it (whole)
        let as_of = (i == 1).then_some(newest);
        let r = check(&h.md, &h.store, as_of, now()).await.unwrap();
        assert_eq!(
            r.fired.iter().map(|f| f.code.as_str()).collect::<Vec<_>>(),
            vec![x],
            "{r:?}"
        );
        assert_eq!(r.suppressed.len(), 1, "{r:?}");
        assert_eq!(r.suppressed[0].code, y);
        assert_eq!(r.suppressed[0].fired_on, wyckoff_time::iso(near));
        reports.push(r);
    }
    assert_eq!(decided(&reports[0]), decided(&reports[1]));
}

/// The health an alert reads is the diagnosis' own: the same rating and reasons, held or
/// not, on many days of many stocks.
#[test]
fn the_health_an_alert_reads_is_the_diagnosis_health() {
    use wyckoff_engine::diagnosis::{DiagnosisConfig, Holding, diagnose_with, health_with};
    let universe = market(shape());
    let bench = universe.benchmarks.sse.clone().unwrap();
    let cfg = DiagnosisConfig::default();
    let mut compared = 0;
    for s in universe.stocks.iter().take(40) {
        for end in (30..=s.bars.len()).step_by(23) {
            let bars = &s.bars[..end];
            let last = bars[end - 1];
            let holdings = [
                Holding::default(),
                Holding {
                    cost: Some(last.close * 1.1),
                    buy_dt: Some(bars[end / 2].date),
                },
                Holding {
                    cost: Some(last.close * 0.8),
                    buy_dt: Some(bars[end - 5].date),
                },
            ];
            for h in &holdings {
                for bench in [None, Some(bench.as_slice())] {
                    let d = diagnose_with(&s.code, &s.name, bars, h, bench, &cfg);
                    assert_eq!(
                        health_with(&s.code, &s.name, bars, h, bench, &cfg),
                        (d.health, d.health_reasons),
                        "{} on bar {end} held {h:?}",
                        s.code
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000, "{compared}");
}
