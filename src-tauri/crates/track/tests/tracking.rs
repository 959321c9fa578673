//! Forward tracking over a real `wyckoff.db` seeded with the bundled real bars (8 stocks,
//! to 2020-06-16): figures of backfilled candidates checked by hand (entry at the next
//! open, exit at the close N trading days after the entry day, a limit-down close carried,
//! fees to the fen) and against a one-trade backtest of the same stock and dates, pending
//! without bars, statistics against a direct count, and the backfill agreeing with a
//! direct screen of the same day.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_engine::backtest::{
    BacktestArgs, EntryMode, ExitReason, SignalSource, TriggerSet, run_backtest,
};
use wyckoff_engine::track::{GroupBy, Outcome};
use wyckoff_engine::{BoardFilter, ScreenArgs};
use wyckoff_market::{ManualClock, MarketConfig, MarketData};
use wyckoff_time::parse_date;
use wyckoff_track::{Origin, SavedCandidate, ScreenRecord, TrackStore, TrackedScreen};

async fn open(home: &std::path::Path) -> (MarketData, TrackStore) {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2020, 6, 17)
            .unwrap()
            .and_hms_opt(9, 0, 0)
            .unwrap(),
    ));
    let md = MarketData::open_with(cfg).await.unwrap();
    let store = TrackStore::new(md.pool().clone()).await.unwrap();
    (md, store)
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The backtest's fee rules written out: commission 0.025 % (at least 5 CNY) both sides,
/// transfer fee 0.001 % both sides, stamp duty 0.1 % on the sell (before 2023-08-28);
/// each to the fen. Returns (pnl, net return %).
fn by_hand(shares: f64, buy: f64, sell: f64) -> (f64, f64) {
    let cost = buy * shares;
    let buy_fees = r2((cost * 0.00025).max(5.0)) + r2(cost * 0.00001);
    let proceeds = sell * shares;
    let sell_fees =
        r2((proceeds * 0.00025).max(5.0)) + r2(proceeds * 0.001) + r2(proceeds * 0.00001);
    let pnl = r2(proceeds - sell_fees - cost - buy_fees);
    (pnl, pnl / (cost + buy_fees) * 100.0)
}

#[tokio::test]
async fn backfilled_candidates_figures_by_hand() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    let report = wyckoff_track::backfill(&md, &store, 20190101, 20190331, |_, _, _| {})
        .await
        .unwrap();
    assert_eq!(report.stocks, 8);
    assert!(report.days > 50, "{report:?}");
    let screens = wyckoff_track::tracked(&md, &store).await.unwrap();
    assert_eq!(screens.len(), report.days);
    assert!(screens.iter().all(|s| s.origin == Origin::Backfill));
    let mut checked = 0;
    for s in &screens {
        for c in &s.candidates {
            let bars = md.daily_bars(&c.code, None).await.unwrap().bars;
            let as_of = parse_date(&s.as_of).unwrap();
            let next = bars.iter().position(|b| b.date > as_of).unwrap();
            let entry = bars[next].open;
            // 25,000 CNY (one of the backtest's four slots) in whole lots.
            let shares = ((25_000.0 / (entry * 100.0)).floor() * 100.0).max(100.0);
            for (o, n) in c.outcomes.iter().zip([1usize, 5, 10, 20]) {
                // T+1: the n-th close after the entry day's; a limit-down close (10 % on
                // these main-board, non-ST stocks) cannot be sold and waits a day.
                let mut x = next + n;
                while bars[x].close <= r2(bars[x - 1].close * 0.9) {
                    x += 1;
                }
                let exit = bars[x];
                let (pnl, pct) = by_hand(shares, entry, exit.close);
                let hi = bars[next + 1..=x]
                    .iter()
                    .map(|b| b.high)
                    .fold(f64::MIN, f64::max);
                let (_, mfe) = by_hand(shares, entry, hi);
                match o {
                    Outcome::Done {
                        horizon,
                        entry_date,
                        entry_price,
                        exit_date,
                        shares: got_shares,
                        pnl: got_pnl,
                        net_return_pct,
                        mfe_pct,
                        hit,
                        ..
                    } => {
                        assert_eq!(*horizon as usize, n);
                        assert_eq!(*entry_date, bars[next].date);
                        assert_eq!(*entry_price, entry);
                        assert_eq!(*exit_date, exit.date);
                        assert_eq!(f64::from(*got_shares), shares);
                        assert_eq!(*got_pnl, pnl, "{} {} h{n}", s.as_of, c.code);
                        assert!((net_return_pct - pct).abs() < 1e-9);
                        assert!((mfe_pct - mfe).abs() < 1e-9);
                        assert_eq!(*hit, pnl > 0.0);
                    }
                    Outcome::Pending { .. } => panic!("{} {} h{n} pending", s.as_of, c.code),
                    // The bundled stocks are main-board, non-ST: 10 % from the last close;
                    // or the stock did not trade on the next trading day.
                    Outcome::NoEntry { .. } => {
                        let up = r2(bars[next - 1].close * 1.1);
                        assert!(
                            entry >= up
                                || Some(bars[next].date) != md.calendar().next_trading_day(as_of),
                            "{} {} no entry below the limit",
                            s.as_of,
                            c.code
                        );
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} candidates in the range");
}

#[tokio::test]
async fn pending_stays_pending_without_bars() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    let cand = |code: &str| SavedCandidate {
        code: code.into(),
        name: String::new(),
        triggers: vec!["Spring".into()],
        track: "Accum".into(),
        score: 1.0,
    };
    let rec = |as_of: u32, code: &str| ScreenRecord {
        as_of,
        saved_at: md.clock().now(),
        origin: Origin::Cli,
        board: "all".into(),
        regime: None,
        candidates: vec![cand(code)],
    };
    // The last bundled day: nothing after it. Four bars before it: bought on the first,
    // three days held, so only horizon 1 is done.
    store.save(&rec(20200616, "000001")).await.unwrap();
    store.save(&rec(20200610, "000001")).await.unwrap();
    // A code the cache does not have.
    store.save(&rec(20200610, "600000")).await.unwrap();
    let screens = wyckoff_track::tracked(&md, &store).await.unwrap();
    let outcomes = |as_of: &str, code: &str| {
        screens
            .iter()
            .filter(|s| s.as_of == as_of)
            .flat_map(|s| &s.candidates)
            .find(|c| c.code == code)
            .unwrap()
            .outcomes
            .clone()
    };
    assert_eq!(
        outcomes("2020-06-16", "000001"),
        [1, 5, 10, 20]
            .map(|h| Outcome::Pending {
                horizon: h,
                bars_after: 0
            })
            .to_vec()
    );
    let mid = outcomes("2020-06-10", "000001");
    assert!(matches!(mid[0], Outcome::Done { horizon: 1, .. }));
    assert_eq!(
        mid[1..],
        [5, 10, 20].map(|h| Outcome::Pending {
            horizon: h,
            bars_after: 3
        })
    );
    assert!(
        outcomes("2020-06-10", "600000")
            .iter()
            .all(|o| matches!(o, Outcome::Pending { bars_after: 0, .. }))
    );
    // Pending signals count as pending, never as misses.
    let st = wyckoff_track::stats_of(&screens);
    let all20 = st
        .rates
        .iter()
        .find(|r| r.group == GroupBy::All && r.horizon == 20)
        .unwrap();
    assert_eq!((all20.signals, all20.pending), (0, 3));
    assert_eq!(all20.hit_rate_pct, None);
}

/// Hits per trigger at each horizon counted straight from the tracked screens.
fn direct_count(screens: &[TrackedScreen]) -> BTreeMap<(String, u32), (u32, u32)> {
    let mut seen = BTreeSet::new();
    let mut out: BTreeMap<(String, u32), (u32, u32)> = BTreeMap::new();
    for s in screens {
        for c in &s.candidates {
            if !seen.insert((s.as_of.clone(), c.code.clone())) {
                continue;
            }
            for o in &c.outcomes {
                if let Outcome::Done {
                    horizon,
                    net_return_pct,
                    ..
                } = o
                {
                    for t in c.triggers.iter().collect::<BTreeSet<_>>() {
                        let e = out.entry((t.clone(), *horizon)).or_default();
                        e.0 += 1;
                        e.1 += u32::from(*net_return_pct > 0.0);
                    }
                }
            }
        }
    }
    out
}

#[tokio::test]
async fn stats_match_a_direct_count_and_a_second_backfill_replaces_the_first() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    wyckoff_track::backfill(&md, &store, 20190101, 20191231, |_, _, _| {})
        .await
        .unwrap();
    let first = wyckoff_track::tracked(&md, &store).await.unwrap();
    // Same range again: replaced, not doubled.
    wyckoff_track::backfill(&md, &store, 20190101, 20191231, |_, _, _| {})
        .await
        .unwrap();
    let screens = wyckoff_track::tracked(&md, &store).await.unwrap();
    assert_eq!(screens.len(), first.len());
    // A CLI screen of a backfilled day with a known regime: its signals count once, and
    // the regime groups them.
    let day = screens.iter().find(|s| !s.candidates.is_empty()).unwrap();
    let again = ScreenRecord {
        as_of: parse_date(&day.as_of).unwrap(),
        saved_at: md.clock().now(),
        origin: Origin::Cli,
        board: "all".into(),
        regime: Some("RISK_ON".into()),
        candidates: day
            .candidates
            .iter()
            .map(|c| SavedCandidate {
                code: c.code.clone(),
                name: c.name.clone(),
                triggers: c.triggers.clone(),
                track: c.track.clone(),
                score: c.score,
            })
            .collect(),
    };
    store.save(&again).await.unwrap();
    let extra = ScreenRecord {
        as_of: 20200102,
        regime: Some("RISK_ON".into()),
        candidates: vec![SavedCandidate {
            code: "000001".into(),
            name: "平安银行".into(),
            triggers: vec!["SOS".into()],
            track: "Trend".into(),
            score: 2.0,
        }],
        ..again.clone()
    };
    store.save(&extra).await.unwrap();
    let screens = wyckoff_track::tracked(&md, &store).await.unwrap();
    let st = wyckoff_track::stats_of(&screens);
    let signals: usize = first.iter().map(|s| s.candidates.len()).sum();
    assert_eq!(st.signals as usize, signals + 1);
    assert_eq!(st.screens as usize, first.len() + 2);

    let direct = direct_count(&screens);
    assert!(!direct.is_empty());
    for ((trigger, horizon), (n, hits)) in &direct {
        let r = st
            .rates
            .iter()
            .find(|r| r.group == GroupBy::Trigger && &r.key == trigger && r.horizon == *horizon)
            .unwrap();
        assert_eq!((r.signals, r.hits), (*n, *hits), "{trigger} {horizon}");
    }
    // The first save of a day's stock wins: the backfill's (no regime), so RISK_ON holds
    // only the extra signal.
    let risk_on: Vec<_> = st
        .rates
        .iter()
        .filter(|r| r.group == GroupBy::Regime)
        .collect();
    assert!(
        risk_on
            .iter()
            .all(|r| r.key == "RISK_ON" && r.signals + r.pending == 1),
        "{risk_on:?}"
    );
}

#[tokio::test]
async fn a_backfilled_day_is_the_direct_screen_of_that_day() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    wyckoff_track::backfill(&md, &store, 20190102, 20190131, |_, _, _| {})
        .await
        .unwrap();
    let saved = store.screens().await.unwrap();
    let universe = md.load_universe(None).await.unwrap().universe;
    for (_, rec) in &saved {
        let direct = wyckoff_engine::screen(
            &universe,
            &ScreenArgs {
                board: BoardFilter::All,
                limit: 0,
                as_of: Some(rec.as_of),
            },
        )
        .unwrap();
        let want = ScreenRecord::of(&direct, Origin::Backfill, rec.saved_at).unwrap();
        assert_eq!(rec, &want, "{}", rec.as_of);
    }
}

/// The backtest's signal source for one trade: `code` picked at `day`'s close, nothing else.
struct Once {
    day: u32,
    code: String,
}

impl SignalSource for Once {
    fn picks(&mut self, day: u32) -> Vec<String> {
        if day == self.day {
            vec![self.code.clone()]
        } else {
            Vec::new()
        }
    }
}

/// Every tracked horizon against a one-trade backtest of the same stock from the same
/// screen day, held for the horizon (no stop-loss, no take-profit, four slots, to the last
/// bundled day): the same entry, the same exit (a limit-down close carried), the same
/// shares, fees and profit to the fen; not bought where the backtest skipped the pick;
/// pending where the holding period outlives the data. The ranges take in the limit-down
/// closes of January 2019 and of 2020-02-03, and the last bundled days.
#[tokio::test]
async fn every_outcome_is_a_one_trade_backtest_of_the_same_stock_and_dates() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    wyckoff_track::backfill(&md, &store, 20180101, 20200616, |_, _, _| {})
        .await
        .unwrap();
    let universe = md.load_universe(None).await.unwrap().universe;
    let screens = wyckoff_track::tracked(&md, &store).await.unwrap();
    let (mut done, mut no_entry, mut pending, mut carried) = (0, 0, 0, 0);
    for s in &screens {
        let as_of = parse_date(&s.as_of).unwrap();
        for c in &s.candidates {
            for o in &c.outcomes {
                let args = BacktestArgs {
                    start: as_of,
                    end: 20200616,
                    hold_days: o.horizon() as usize,
                    top_n: 4,
                    board: BoardFilter::All,
                    stop_loss_pct: 0.0,
                    take_profit_pct: 0.0,
                    entry_price_mode: EntryMode::Open,
                    triggers: TriggerSet::default(),
                    sizing: Default::default(),
                };
                let mut once = Once {
                    day: as_of,
                    code: c.code.clone(),
                };
                let bt = run_backtest(&universe, &args, &mut once).unwrap();
                let at = format!("{} {} h{}", s.as_of, c.code, o.horizon());
                match o {
                    Outcome::Done {
                        entry_date,
                        entry_price,
                        exit_date,
                        exit_price,
                        shares,
                        fees,
                        pnl,
                        net_return_pct,
                        ..
                    } => {
                        let [t] = &bt.trades[..] else {
                            panic!("{at}: {:?}", bt.trades)
                        };
                        assert_eq!(t.exit_reason, ExitReason::HoldExpired, "{at}");
                        assert_eq!(
                            (t.entry_date, t.entry_price, t.exit_date, t.exit_price),
                            (*entry_date, *entry_price, *exit_date, *exit_price),
                            "{at}"
                        );
                        assert_eq!(
                            (t.shares, t.fees, t.pnl, t.pnl_pct),
                            (u64::from(*shares), *fees, *pnl, *net_return_pct),
                            "{at}"
                        );
                        done += 1;
                        carried += usize::from(t.limit_down_days > 0);
                    }
                    Outcome::NoEntry { .. } => {
                        assert!(bt.trades.is_empty(), "{at}: {:?}", bt.trades);
                        let skipped: usize = ["limit_up", "no_bar"]
                            .iter()
                            .filter_map(|k| bt.skipped_entries.get(*k))
                            .sum();
                        assert_eq!(skipped, 1, "{at}: {:?}", bt.skipped_entries);
                        no_entry += 1;
                    }
                    Outcome::Pending { .. } => {
                        let [t] = &bt.trades[..] else {
                            panic!("{at}: {:?}", bt.trades)
                        };
                        assert!(
                            matches!(
                                t.exit_reason,
                                ExitReason::EndOfPeriod | ExitReason::OpenAtEnd
                            ),
                            "{at}: {t:?}"
                        );
                        pending += 1;
                    }
                }
            }
        }
    }
    assert!(
        done > 100 && pending > 0 && carried > 0,
        "done {done}, not bought {no_entry}, pending {pending}, carried {carried}"
    );
}
