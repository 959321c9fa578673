//! `alerts check` at full-market scale (a bench binary: `cargo bench -p wyckoff-alerts`):
//! a synthetic 5,000-stock × 500-bar market (wyckoff-engine feature `synthetic`: made-up
//! test data, never shipped) in a real `wyckoff.db`, every stock in the watchlist, and ten
//! rules on the watchlist — 50,000 rule evaluations from the cache, end to end (rules,
//! targets, bars, the engine, cooldowns, recording what fired). The market is in the
//! screen's tail cache too, as an import or a whole-market sync leaves it, so a check of
//! the latest close reads its bars from there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::Instant;

use chrono::Utc;
use wyckoff_alerts::{AlertStore, NewRule, check};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData, StockCode};
use wyckoff_protocol::{AlertCondition, AlertTarget};

fn main() {
    let shape = MarketShape {
        stocks: 5_000,
        ..MarketShape::full_market()
    };
    let home = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let md = MarketData::open_with(MarketConfig::offline(home.path()))
            .await
            .unwrap();
        let t = Instant::now();
        let synthetic = market(shape);
        let batch: Vec<(String, Vec<wyckoff_engine::Bar>)> = synthetic
            .stocks
            .iter()
            .filter_map(|s| {
                StockCode::parse(&s.code)
                    .ok()
                    .map(|c| (c.symbol().key(), s.bars.clone()))
            })
            .collect();
        md.store()
            .upsert_many(BarTable::Stocks, &batch, "synthetic", true, Utc::now())
            .await
            .unwrap();
        // as an import or a whole-market sync leaves it: the screen's tail cache in step
        md.refresh_tail_cache().await;
        let watch = WatchlistStore::new(md.pool().clone());
        for s in &synthetic.stocks {
            watch.add(&s.code, Utc::now()).await.unwrap();
        }
        let store = AlertStore::new(md.pool().clone()).await.unwrap();
        let rules = [
            AlertCondition::PriceAbove { level: 50.0 },
            AlertCondition::PriceBelow { level: 5.0 },
            AlertCondition::ChangeAbove { pct: 5.0 },
            AlertCondition::ChangeBelow { pct: -5.0 },
            AlertCondition::VolumeRatio { k: 2.0 },
            AlertCondition::Event { event: None },
            AlertCondition::Event {
                event: Some("Spring".into()),
            },
            AlertCondition::PhaseChange,
            AlertCondition::HealthChange,
            AlertCondition::PriceAbove { level: 20.0 },
        ];
        for condition in rules {
            let rule = NewRule {
                target: AlertTarget::Watchlist,
                condition,
                cooldown_days: 1,
            };
            store.add_rule(&rule, Utc::now()).await.unwrap();
        }
        println!(
            "setup: {} stocks × {} bars in the cache and the watchlist, 10 rules, in {:.2?}",
            batch.len(),
            shape.bars,
            t.elapsed()
        );
        for run in 1..=3 {
            let t = Instant::now();
            let r = check(&md, &store, None, Utc::now()).await.unwrap();
            println!(
                "check #{run}: {} rules × {} stocks in {:.2?}: {} fired, {} held back, {} not evaluated",
                r.rules,
                r.stocks,
                t.elapsed(),
                r.fired.len(),
                r.suppressed.len(),
                r.unevaluated.len()
            );
        }
    });
}
