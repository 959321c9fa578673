//! The intraday check on a snapshot (`check_snapshot`): the rules read the day's partial
//! bar built from a quote, over a real SQLite file seeded with the bundled real bars. The
//! partial bar is a past day's bar as a quote at 10:42 would give it (volume so far is
//! 72/240 of the day's, read back at the day's pace), so what the engine places on that
//! day's close it places on the partial bar; every expected figure comes from the bars.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use chrono::{TimeZone, Utc};
use wyckoff_alerts::intraday::check_snapshot;
use wyckoff_alerts::{AlertStore, NewRule, validate};
use wyckoff_engine::Bar;
use wyckoff_engine::known_on::{Mark, replay_schematics};
use wyckoff_market::cache::BarTable;
use wyckoff_market::date::from_yyyymmdd;
use wyckoff_market::quote::{Quote, QuoteSnapshot};
use wyckoff_market::{MarketConfig, MarketData, PortfolioOp, StockCode};
use wyckoff_protocol::{AlertCondition, AlertFigures, AlertTarget};
use wyckoff_push::Outbox;
use wyckoff_time::iso;

async fn bars(md: &MarketData, code: &str) -> Vec<Bar> {
    let key = StockCode::parse(code).unwrap().symbol().key();
    md.store()
        .load_bars(BarTable::Stocks, &key, None)
        .await
        .unwrap()
        .bars
}

fn e6(yuan: f64) -> i64 {
    (yuan * 1e6).round() as i64
}

/// `bar` as a quote at 10:42:03 of its day: 72 of the session's 240 minutes gone, so the
/// volume so far is 72/240 of the day's and the check's pace reads the day's volume back.
fn quote_of(code: &str, bar: &Bar, prev_close: f64) -> Quote {
    let day = from_yyyymmdd(bar.date).unwrap();
    Quote {
        code: code.into(),
        name: "测试".into(),
        last_e6: e6(bar.close),
        prev_close_e6: e6(prev_close),
        open_e6: e6(bar.open),
        high_e6: e6(bar.high),
        low_e6: e6(bar.low),
        volume: (bar.volume * 72.0 / 240.0).round() as u64,
        amount_fen: (bar.amount * 100.0 * 72.0 / 240.0).round() as i64,
        time: format!("{} 10:42:03", day.format("%Y-%m-%d")),
        source: "tencent".into(),
    }
}

/// The newest day of the last 100 bundled bars on whose close the engine places a
/// schematic event on that very bar, with the event's name and the bar's index.
fn event_on_its_own_close(b: &[Bar]) -> Option<(usize, String)> {
    let tail_start = b.len() - 400;
    let tail = &b[tail_start..];
    let r = replay_schematics(tail);
    r.marks
        .iter()
        .filter_map(|k| match &k.mark {
            Mark::Event { event, date, .. }
                if *date == k.known_on && k.known_on == k.since && *date > tail[300].date =>
            {
                Some((*date, format!("{event:?}")))
            }
            _ => None,
        })
        .max_by_key(|(date, _)| *date)
        .map(|(date, name)| (tail_start + tail.partition_point(|x| x.date < date), name))
}

#[tokio::test]
async fn an_event_the_engine_places_on_the_partial_bar_fires_intraday_as_do_change_stop_and_target()
{
    let dir = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(dir.path()))
        .await
        .unwrap();
    let store = AlertStore::new(md.pool().clone()).await.unwrap();
    let outbox = Outbox::new(md.pool().clone(), Duration::from_secs(5))
        .await
        .unwrap();
    let (calendar, _) = md.current_calendar().await.unwrap();

    let mut found = None;
    for code in ["000338", "000001", "601318", "000778", "002572"] {
        let b = bars(&md, code).await;
        if let Some((i, name)) = event_on_its_own_close(&b) {
            found = Some((code, b, i, name));
            break;
        }
    }
    let (code, b, i, event) = found.expect("a bundled stock with an event placed on its close");
    let (day, today, prev) = (b[i].date, b[i], b[i - 1]);
    // the partial bar follows the cached bars only when they reach the trading day before
    assert_eq!(calendar.previous_trading_day(day), Some(prev.date));
    let cached_before = b.len();
    let last_cached = b[b.len() - 1].date;

    // the holding with a target: another stock, quoted at its own close of the day
    let other = if code == "002572" { "000001" } else { "002572" };
    let ob = bars(&md, other).await;
    let oi = ob.partition_point(|x| x.date < day);
    assert_eq!(ob[oi].date, day, "{other} traded on {day}");
    let (other_today, other_prev) = (ob[oi], ob[oi - 1]);

    let rule = |target, condition| {
        validate(
            &md,
            NewRule {
                target,
                condition,
                cooldown_days: 1,
            },
        )
        .unwrap()
    };
    let stock = |c: &str| AlertTarget::Stock { code: c.into() };
    store
        .add_rule(
            &rule(
                stock(code),
                AlertCondition::Event {
                    event: Some(event.to_lowercase()),
                },
            ),
            Utc::now(),
        )
        .await
        .unwrap();
    // the day's change, exactly on the threshold (the engine's own reading of it)
    let change_pct = today.pct_change(prev.close).unwrap();
    let change = if change_pct >= 0.0 {
        AlertCondition::ChangeAbove { pct: change_pct }
    } else {
        AlertCondition::ChangeBelow { pct: change_pct }
    };
    store
        .add_rule(&rule(stock(code), change.clone()), Utc::now())
        .await
        .unwrap();
    let at = Utc.with_ymd_and_hms(2026, 12, 5, 8, 0, 0).unwrap();
    for (c, close) in [(code, today.close), (other, other_today.close)] {
        md.portfolio()
            .apply(
                PortfolioOp::Add {
                    code: c.into(),
                    name: "测试".into(),
                    shares: 100,
                    cost_price: close,
                    buy_dt: Some("2015-01-05".into()),
                },
                at,
            )
            .await
            .unwrap();
    }
    // a stop exactly at the last price, and a target exactly at the other's last price
    md.portfolio()
        .set_levels(code, Some(today.close), None, at)
        .await
        .unwrap();
    md.portfolio()
        .set_levels(other, None, Some(other_today.close), at)
        .await
        .unwrap();

    let snapshot = QuoteSnapshot {
        quotes: vec![
            quote_of(code, &today, prev.close),
            quote_of(other, &other_today, other_prev.close),
        ],
        unknown: Vec::new(),
        failed: Vec::new(),
        cached: 0,
    };
    let local = from_yyyymmdd(day).unwrap().and_hms_opt(10, 42, 3).unwrap();
    let now = wyckoff_time::from_beijing(local);
    let run = check_snapshot(&md, &store, &outbox, &snapshot, now, &calendar)
        .await
        .unwrap();
    assert!(run.not_live.is_empty(), "{run:?}");
    assert!(run.report.unevaluated.is_empty(), "{run:?}");
    let when = format!("{} 10:42", from_yyyymmdd(day).unwrap().format("%Y-%m-%d"));
    let fired = &run.report.fired;
    assert_eq!(fired.len(), 4, "{fired:#?}");
    for f in fired {
        assert_eq!(f.bar_date, iso(day), "{f:?}");
        assert_eq!(f.intraday_at.as_deref(), Some(when.as_str()), "{f:?}");
    }
    let of = |c: &AlertCondition| {
        fired
            .iter()
            .find(|f| f.condition == *c)
            .unwrap_or_else(|| panic!("{c:?} fired: {fired:#?}"))
    };

    // the rule was added under a lower-case name and stored under the engine's
    let AlertFigures::Event { events } = &of(&AlertCondition::Event {
        event: Some(event.clone()),
    })
    .figures
    else {
        panic!("{fired:#?}")
    };
    assert!(
        events
            .iter()
            .any(|x| x.event == event && x.bar_date == iso(day) && x.known_on == iso(day)),
        "{event} placed on the partial bar of {day}: {events:?}"
    );

    let close = e6(today.close) as f64 / 1e6;
    match &of(&change).figures {
        AlertFigures::ChangeAbove {
            close: c,
            prev_close,
            ..
        }
        | AlertFigures::ChangeBelow {
            close: c,
            prev_close,
            ..
        } => {
            assert_eq!((*c, *prev_close), (close, prev.close));
        }
        other => panic!("{other:?}"),
    }
    let stop = of(&AlertCondition::StopLoss);
    assert_eq!((stop.rule_id, stop.code.as_str()), (None, code));
    assert_eq!(
        stop.figures,
        AlertFigures::StopLoss {
            close,
            stop_loss: today.close
        }
    );
    let target = of(&AlertCondition::TargetReached);
    assert_eq!((target.rule_id, target.code.as_str()), (None, other));
    assert_eq!(
        target.figures,
        AlertFigures::TargetReached {
            close: e6(other_today.close) as f64 / 1e6,
            target: other_today.close
        }
    );

    // the same slot's snapshot again: every alert held back by the once-a-day cooldown
    let again = check_snapshot(&md, &store, &outbox, &snapshot, now, &calendar)
        .await
        .unwrap();
    assert!(again.report.fired.is_empty(), "{again:?}");
    assert_eq!(again.report.suppressed.len(), 4, "{again:?}");

    // nothing partial reached the bar cache
    let after = bars(&md, code).await;
    assert_eq!(after.len(), cached_before);
    assert_eq!(after[after.len() - 1].date, last_cached);
    assert_eq!(after[i], today);
}
