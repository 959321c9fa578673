//! The alert store and `check` over a real SQLite file seeded with the bundled real bars:
//! every expected figure is computed here from the bars themselves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{TimeZone, Utc};
use wyckoff_alerts::{AlertStore, NewRule, RuleError, check, has_work, validate};
use wyckoff_engine::Bar;
use wyckoff_engine::L4Config;
use wyckoff_engine::known_on::{Mark, replay};
use wyckoff_market::cache::BarTable;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{MarketConfig, MarketData, PortfolioOp, StockCode};
use wyckoff_protocol::{AlertCondition, AlertFigures, AlertTarget, DeliveryStatus, MissingData};
use wyckoff_time::iso;

/// 平安银行, one of the bundled stocks (2005-01-04 .. 2020-06-16).
const CODE: &str = "000001";

struct Env {
    _dir: tempfile::TempDir,
    md: MarketData,
    store: AlertStore,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    let store = AlertStore::new(md.pool().clone()).await.unwrap();
    Env {
        _dir: dir,
        md,
        store,
    }
}

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap()
}

async fn bars(md: &MarketData, code: &str) -> Vec<Bar> {
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
}

async fn add(e: &Env, target: AlertTarget, condition: AlertCondition, cooldown: u32) -> i64 {
    let rule = validate(
        &e.md,
        NewRule {
            target,
            condition,
            cooldown_days: cooldown,
        },
    )
    .unwrap();
    e.store.add_rule(&rule, now()).await.unwrap().id
}

fn stock(code: &str) -> AlertTarget {
    AlertTarget::Stock { code: code.into() }
}

/// The bar (index ≥ 20) with the highest volume against the mean of the 20 bars before it.
fn biggest_spike(bars: &[Bar]) -> (usize, f64, f64) {
    (20..bars.len())
        .map(|i| {
            let avg = bars[i - 20..i].iter().map(|b| b.volume).sum::<f64>() / 20.0;
            (i, avg, bars[i].volume / avg)
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .unwrap()
}

#[tokio::test]
async fn a_volume_spike_fires_once_with_its_figures_and_the_cooldown_holds_the_same_day() {
    let e = env().await;
    let b = bars(&e.md, CODE).await;
    let (i, avg, ratio) = biggest_spike(&b);
    assert!(ratio > 3.0, "the bundled data has a real spike: {ratio}");
    let k = (ratio * 100.0).floor() / 100.0;
    let id = add(&e, stock(CODE), AlertCondition::VolumeRatio { k }, 1).await;

    let r = check(&e.md, &e.store, Some(b[i].date), now())
        .await
        .unwrap();
    assert_eq!(r.fired.len(), 1, "{r:?}");
    let f = &r.fired[0];
    assert_eq!((f.rule_id, f.code.as_str()), (Some(id), CODE));
    assert_eq!(f.bar_date, iso(b[i].date));
    assert_eq!(f.name.as_deref(), Some("平安银行"));
    assert_eq!(f.delivery, DeliveryStatus::Recorded);
    match &f.figures {
        AlertFigures::VolumeRatio {
            volume,
            avg_volume_20,
            ratio: got,
            k: got_k,
        } => {
            assert_eq!(*volume, b[i].volume);
            assert!((avg_volume_20 - avg).abs() < 1e-6 * avg);
            assert!((got - ratio).abs() < 1e-9 * ratio);
            assert_eq!(*got_k, k);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.data_date, Some(iso(b[i].date)));

    // The same day again: held back by that firing, nothing new stored.
    let again = check(&e.md, &e.store, Some(b[i].date), now())
        .await
        .unwrap();
    assert!(again.fired.is_empty(), "{again:?}");
    assert_eq!(again.suppressed.len(), 1);
    assert_eq!(again.suppressed[0].fired_on, iso(b[i].date));
    assert_eq!(e.store.history(100).await.unwrap().len(), 1);
    // A threshold a hair above the ratio does not fire on that day.
    let hair = add(
        &e,
        stock(CODE),
        AlertCondition::VolumeRatio { k: ratio * 1.0001 },
        1,
    )
    .await;
    let r = check(&e.md, &e.store, Some(b[i].date), now())
        .await
        .unwrap();
    assert!(r.fired.iter().all(|f| f.rule_id != Some(hair)), "{r:?}");
}

#[tokio::test]
async fn the_cooldown_counts_the_stocks_trading_days() {
    let e = env().await;
    let b = bars(&e.md, CODE).await;
    let n = b.len();
    // A level every one of the last 5 closes is above.
    let level = b[n - 5..].iter().map(|x| x.close).fold(f64::MAX, f64::min);
    let daily = add(&e, stock(CODE), AlertCondition::PriceAbove { level }, 1).await;
    let every3 = add(&e, stock(CODE), AlertCondition::PriceAbove { level }, 3).await;
    let fired_by = |r: &wyckoff_protocol::AlertCheckReport, id: i64| {
        r.fired.iter().filter(|f| f.rule_id == Some(id)).count()
    };
    let mut by_day = Vec::new();
    for bar in &b[n - 5..] {
        let r = check(&e.md, &e.store, Some(bar.date), now()).await.unwrap();
        by_day.push((fired_by(&r, daily), fired_by(&r, every3)));
    }
    // Daily fires each trading day; every-3 fires on day 0 and day 3 (exactly 3 away).
    assert_eq!(by_day, vec![(1, 1), (1, 0), (1, 0), (1, 1), (1, 0)]);
    // A weekend date reads as of the Friday before and fires nothing new.
    let r = check(&e.md, &e.store, Some(20200614), now()).await.unwrap();
    assert_eq!(b[n - 3].date, 20200612);
    assert_eq!(r.fired.len(), 0, "{r:?}");
    assert!(r.suppressed.iter().all(|s| s.bar_date == "2020-06-12"));
}

#[tokio::test]
async fn price_and_change_rules_report_the_exact_closes() {
    let e = env().await;
    let b = bars(&e.md, CODE).await;
    let n = b.len();
    let (last, prev) = (b[n - 1], b[n - 2]);
    let change = (last.close / prev.close - 1.0) * 100.0;
    add(
        &e,
        stock("000001.SZ"),
        AlertCondition::PriceBelow { level: last.close },
        1,
    )
    .await;
    let (above, below) = if change >= 0.0 {
        (
            AlertCondition::ChangeAbove { pct: change },
            AlertCondition::ChangeBelow { pct: change - 0.01 },
        )
    } else {
        (
            AlertCondition::ChangeBelow { pct: change },
            AlertCondition::ChangeAbove { pct: change + 0.01 },
        )
    };
    add(&e, stock(CODE), above, 1).await;
    add(&e, stock(CODE), below, 1).await;
    let r = check(&e.md, &e.store, None, now()).await.unwrap();
    assert_eq!(r.fired.len(), 2, "{r:?}");
    assert_eq!(
        r.fired[0].figures,
        AlertFigures::PriceBelow {
            close: last.close,
            level: last.close
        }
    );
    match &r.fired[1].figures {
        AlertFigures::ChangeAbove {
            change_pct,
            close,
            prev_close,
            ..
        }
        | AlertFigures::ChangeBelow {
            change_pct,
            close,
            prev_close,
            ..
        } => {
            assert_eq!((*close, *prev_close), (last.close, prev.close));
            assert!((change_pct - change).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.data_date.as_deref(), Some("2020-06-16"));
}

#[tokio::test]
async fn an_event_fires_on_the_close_the_replay_says_it_became_known() {
    let e = env().await;
    let b = bars(&e.md, "000338").await;
    // The last 400 bars are plenty for the schematic lookback; the replay says which events
    // became known on which close.
    let tail = &b[b.len() - 400..];
    let r = replay(tail, &L4Config::default());
    let known = r
        .marks
        .iter()
        .rev()
        .find(|k| {
            matches!(k.mark, Mark::Event { .. })
                && k.known_on == k.since
                && k.known_on > tail[300].date
        })
        .expect("an event became known in the last 100 bars");
    let Mark::Event { event, date, .. } = &known.mark else {
        unreachable!()
    };
    let name = format!("{event:?}");
    add(
        &e,
        stock("000338"),
        AlertCondition::Event {
            event: Some(name.to_lowercase()),
        },
        1,
    )
    .await;
    let day_before = tail[tail.partition_point(|x| x.date < known.known_on) - 1].date;
    let quiet = check(&e.md, &e.store, Some(day_before), now())
        .await
        .unwrap();
    assert!(
        quiet.fired.iter().all(|f| match &f.figures {
            AlertFigures::Event { events } => events.iter().all(|x| x.bar_date != iso(*date)),
            _ => true,
        }),
        "not known the close before: {quiet:?}"
    );
    let report = check(&e.md, &e.store, Some(known.known_on), now())
        .await
        .unwrap();
    assert_eq!(report.fired.len(), 1, "{report:?}");
    let AlertFigures::Event { events } = &report.fired[0].figures else {
        panic!("{report:?}")
    };
    assert!(
        events.iter().any(|x| x.event == name
            && x.bar_date == iso(*date)
            && x.known_on == iso(known.known_on)),
        "{events:?}"
    );
    assert_eq!(report.fired[0].bar_date, iso(known.known_on));
}

#[tokio::test]
async fn watchlist_and_portfolio_targets_expand_and_every_stop_loss_is_checked() {
    let e = env().await;
    let watch = WatchlistStore::new(e.md.pool().clone());
    watch.add("601318", now()).await.unwrap();
    watch.add("000778", now()).await.unwrap();
    let b = bars(&e.md, "002572").await;
    let last = b[b.len() - 1];
    e.md.portfolio()
        .apply(
            PortfolioOp::Add {
                code: "002572".into(),
                name: "索菲亚".into(),
                shares: 100,
                cost_price: last.close * 1.2,
                buy_dt: Some("2020-01-02".into()),
            },
            now(),
        )
        .await
        .unwrap();
    e.md.portfolio()
        .set_stop_loss("002572", Some(last.close), now())
        .await
        .unwrap();
    assert!(has_work(&e.md, &e.store).await.unwrap(), "a stop is work");
    // Every close is above 0.01: each watched stock fires once.
    add(
        &e,
        AlertTarget::Watchlist,
        AlertCondition::PriceAbove { level: 0.01 },
        1,
    )
    .await;
    add(
        &e,
        AlertTarget::Portfolio,
        AlertCondition::PriceAbove { level: 0.01 },
        1,
    )
    .await;
    let r = check(&e.md, &e.store, None, now()).await.unwrap();
    let mut fired: Vec<(Option<i64>, String)> = r
        .fired
        .iter()
        .map(|f| (f.rule_id, f.code.clone()))
        .collect();
    fired.sort();
    assert_eq!(
        fired,
        vec![
            (None, "002572".into()),
            (Some(1), "000778".into()),
            (Some(1), "601318".into()),
            (Some(2), "002572".into()),
        ]
    );
    let stop = r.fired.iter().find(|f| f.rule_id.is_none()).unwrap();
    assert_eq!(stop.condition, AlertCondition::StopLoss);
    assert_eq!(
        stop.figures,
        AlertFigures::StopLoss {
            close: last.close,
            stop_loss: last.close
        }
    );
    assert_eq!(r.stocks, 3);
    // A stop a cent under the close does not fire (checked on the bar before, which the
    // stop has not fired on).
    let before = b[b.len() - 2];
    e.md.portfolio()
        .set_stop_loss("002572", Some(before.close - 0.01), now())
        .await
        .unwrap();
    let r = check(&e.md, &e.store, Some(before.date), now())
        .await
        .unwrap();
    assert!(r.fired.iter().all(|f| f.rule_id.is_some()), "{r:?}");
    assert!(r.suppressed.iter().all(|s| s.rule_id.is_some()), "{r:?}");
    assert_eq!(r.fired.len(), 3, "{r:?}");
}

#[tokio::test]
async fn missing_data_is_reported_per_rule_and_stock() {
    let e = env().await;
    // 600519 is in the stock list but has no bundled bars.
    add(
        &e,
        stock("600519"),
        AlertCondition::PriceAbove { level: 1.0 },
        1,
    )
    .await;
    add(&e, stock(CODE), AlertCondition::VolumeRatio { k: 1.0 }, 1).await;
    let b = bars(&e.md, CODE).await;
    // As of the 20th bar there are 20 bars: one short of a 20-day average before it.
    let r = check(&e.md, &e.store, Some(b[19].date), now())
        .await
        .unwrap();
    let mut got: Vec<(String, MissingData)> = r
        .unevaluated
        .iter()
        .map(|u| (u.code.clone(), u.missing.clone()))
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            (
                CODE.into(),
                MissingData::TooFewBars {
                    needed: 21,
                    have: 20
                }
            ),
            ("600519".into(), MissingData::NoBars),
        ]
    );
    assert!(r.fired.is_empty());
    // Before the first bar: no bars at all.
    let r = check(&e.md, &e.store, Some(20040101), now()).await.unwrap();
    assert_eq!(r.unevaluated.len(), 2);
    assert!(
        r.unevaluated
            .iter()
            .all(|u| u.missing == MissingData::NoBars)
    );
    assert_eq!(r.data_date, None);
}

#[tokio::test]
async fn bad_rules_are_refused_and_nothing_is_stored() {
    let e = env().await;
    let try_add = |target: AlertTarget, condition: AlertCondition, cooldown_days: u32| {
        validate(
            &e.md,
            NewRule {
                target,
                condition,
                cooldown_days,
            },
        )
    };
    let ok = AlertCondition::PriceAbove { level: 10.0 };
    assert_eq!(
        try_add(stock("123"), ok.clone(), 1),
        Err(RuleError::BadCode("123".into()))
    );
    assert_eq!(
        try_add(stock("600994"), ok.clone(), 1),
        Err(RuleError::UnknownCode("600994".into()))
    );
    assert!(matches!(
        try_add(stock(CODE), AlertCondition::PriceAbove { level: 0.0 }, 1),
        Err(RuleError::NotPositive { .. })
    ));
    assert!(matches!(
        try_add(
            stock(CODE),
            AlertCondition::ChangeAbove { pct: f64::NAN },
            1
        ),
        Err(RuleError::NotFinite { .. })
    ));
    assert!(matches!(
        try_add(stock(CODE), AlertCondition::VolumeRatio { k: -2.0 }, 1),
        Err(RuleError::NotPositive { .. })
    ));
    assert_eq!(
        try_add(
            stock(CODE),
            AlertCondition::Event {
                event: Some("sprung".into())
            },
            1
        ),
        Err(RuleError::UnknownEvent("sprung".into()))
    );
    assert_eq!(
        try_add(AlertTarget::Portfolio, AlertCondition::StopLoss, 1),
        Err(RuleError::StopLossRule)
    );
    assert_eq!(
        try_add(stock(CODE), ok.clone(), 0),
        Err(RuleError::BadCooldown(0))
    );
    assert_eq!(
        try_add(stock(CODE), ok.clone(), 251),
        Err(RuleError::BadCooldown(251))
    );
    // On the limits, and normalised.
    let good = try_add(
        stock("sz000001"),
        AlertCondition::Event {
            event: Some("utad".into()),
        },
        250,
    )
    .unwrap();
    assert_eq!(good.target, stock(CODE));
    assert_eq!(
        good.condition,
        AlertCondition::Event {
            event: Some("UTAD".into())
        }
    );
    assert!(e.store.rules().await.unwrap().is_empty());
    assert!(!has_work(&e.md, &e.store).await.unwrap());
}

#[tokio::test]
async fn rules_list_remove_and_disable_and_history_survives_removal() {
    let e = env().await;
    let id = add(
        &e,
        stock(CODE),
        AlertCondition::PriceAbove { level: 0.01 },
        2,
    )
    .await;
    let rules = e.store.rules().await.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!((rules[0].cooldown_days, rules[0].enabled), (2, true));
    e.store.set_enabled(id, false).await.unwrap();
    let r = check(&e.md, &e.store, None, now()).await.unwrap();
    assert_eq!((r.rules, r.fired.len()), (0, 0));
    e.store.set_enabled(id, true).await.unwrap();
    let r = check(&e.md, &e.store, None, now()).await.unwrap();
    assert_eq!(r.fired.len(), 1);
    e.store.remove_rule(id).await.unwrap();
    assert!(matches!(
        e.store.remove_rule(id).await,
        Err(wyckoff_alerts::StoreError::NotFound(_))
    ));
    let h = e.store.history(10).await.unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].rule_id, Some(id));
    // A new rule never reuses the removed id (its history stays its own).
    let next = add(
        &e,
        stock(CODE),
        AlertCondition::PriceAbove { level: 0.01 },
        1,
    )
    .await;
    assert!(next > id);
}

#[tokio::test]
async fn a_holdings_target_fires_on_the_close_that_reaches_it_and_only_once() {
    let e = env().await;
    e.md.portfolio()
        .apply(
            PortfolioOp::Add {
                code: "002572".into(),
                name: "索菲亚".into(),
                shares: 100,
                cost_price: 20.0,
                buy_dt: Some("2020-01-02".into()),
            },
            now(),
        )
        .await
        .unwrap();
    // The bundled closes of 索菲亚 (read off the data file by hand): 2020-06-12 22.56,
    // 2020-06-15 22.04, 2020-06-16 23.22. A target of 23 and a stop of 21 sit outside the
    // close of the 15th and the target is reached on the 16th.
    e.md.portfolio()
        .set_levels("002572", Some(21.0), Some(23.0), now())
        .await
        .unwrap();
    assert!(has_work(&e.md, &e.store).await.unwrap(), "a target is work");
    let quiet = check(&e.md, &e.store, Some(20200615), now()).await.unwrap();
    assert!(quiet.fired.is_empty(), "{quiet:?}");
    assert_eq!(quiet.data_date.as_deref(), Some("2020-06-15"));

    let r = check(&e.md, &e.store, Some(20200616), now()).await.unwrap();
    assert_eq!(r.fired.len(), 1, "{r:?}");
    let hit = &r.fired[0];
    assert_eq!(
        (hit.rule_id, hit.code.as_str(), hit.bar_date.as_str()),
        (None, "002572", "2020-06-16")
    );
    assert_eq!(hit.condition, AlertCondition::TargetReached);
    assert_eq!(
        hit.figures,
        AlertFigures::TargetReached {
            close: 23.22,
            target: 23.0
        }
    );
    assert_eq!(
        wyckoff_alerts::describe::alert_text(hit),
        "002572 索菲亚 — close ≥ the holding's target: close 23.22 ≥ target 23 (data as of 2020-06-16)"
    );
    // The same close again: held back by the once-a-day cooldown.
    let again = check(&e.md, &e.store, Some(20200616), now()).await.unwrap();
    assert!(again.fired.is_empty(), "{again:?}");
    assert_eq!(again.suppressed.len(), 1, "{again:?}");

    // A target is no rule.
    let e2 = env().await;
    assert!(!has_work(&e2.md, &e2.store).await.unwrap());
    assert_eq!(
        validate(
            &e2.md,
            NewRule {
                target: AlertTarget::Portfolio,
                condition: AlertCondition::TargetReached,
                cooldown_days: 1,
            }
        )
        .err(),
        Some(RuleError::StopLossRule)
    );
}
