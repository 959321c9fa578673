//! The ledger over a real `wyckoff.db`: real trades valued at unadjusted closes (the
//! 601318 buy of 2019-01-02), NAV = cash + holdings at those closes on every day with the
//! return recomputed by hand, the report saying when adjusted closes stood in, and the
//! fills recorded before the ledger moving into it with their ids and figures.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use wyckoff_journal::{EntryKind, JournalStore, NewEntry, NewFill, Side, Source, report};
use wyckoff_market::cache::{BarTable, BarsWrite};
use wyckoff_market::{ManualClock, MarketConfig, MarketData, StockCode};

fn now() -> DateTime<Utc> {
    "2024-03-08T02:00:00Z".parse().unwrap()
}

async fn open(home: &std::path::Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2024, 3, 8)
            .unwrap()
            .and_hms_opt(10, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

/// 601318's bundled (forward-adjusted) bars of early January 2019, and `raw` unadjusted
/// closes attached to their days.
async fn pingan(md: &MarketData, raw: &[(u32, f64)]) {
    let qfq = md.daily_bars("601318", Some(20190104)).await.unwrap();
    assert!(qfq.bars.iter().any(|b| b.date == 20190102));
    let key = StockCode::parse("601318").unwrap().symbol().key();
    md.store()
        .write_bars(
            BarTable::Stocks,
            &key,
            BarsWrite {
                bars: &[],
                raw,
                source: "test",
                has_amount: true,
                replace: false,
            },
        )
        .await
        .unwrap();
}

async fn buy_pingan(store: &JournalStore, cash_in: bool) {
    if cash_in {
        store
            .record_entry(
                &NewEntry {
                    date: 20190102,
                    name: String::new(),
                    kind: EntryKind::CashIn {
                        amount_fen: 10_000_000,
                    },
                },
                Source::Cli,
                now(),
            )
            .await
            .unwrap();
    }
    store
        .record(
            &NewFill {
                code: "601318".into(),
                name: "中国平安".into(),
                side: Side::Buy,
                date: 20190102,
                price_e6: 54_150_000,
                shares: 1000,
                fees: None,
            },
            Source::Cli,
            now(),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn a_real_buy_is_valued_at_the_days_unadjusted_close() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    // the real closes of 2019-01-02/03/04; the bundled adjusted close of the 2nd is 52.99
    pingan(
        &md,
        &[(20190102, 53.90), (20190103, 53.69), (20190104, 55.45)],
    )
    .await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    buy_pingan(&store, true).await;
    let r = report(&md, &store, now()).await.unwrap();
    let day = &r.values[0];
    assert_eq!(day.date, "2019-01-02");
    // 1000 × 54.15 = 54,150.00 + commission 13.54 (13.5375) + transfer 0.54 (0.5415)
    // = 54,164.08 paid; valued at the real 53.90: 53,900.00, the day's P/L −264.08 (at the
    // adjusted 52.99 it read 52,990.00 and −1,174.08)
    assert_eq!(day.market_value_fen, 5_390_000);
    assert_eq!(day.cash_fen, 10_000_000 - 5_416_408);
    assert_eq!(day.pnl_fen, -26_408);
    // the days with real closes are exact; the bundled days after them are not, and say so
    for d in &r.values {
        let exact = d.date.as_str() <= "2019-01-04";
        assert_eq!(d.approximate.is_empty(), exact, "{}", d.date);
    }
    assert_eq!(r.performance.approximate[0].code, "601318");

    // every day: NAV = cash + 1000 × that day's unadjusted close, and the return linked
    // from NAV and transfers by hand
    let raw = md.raw_closes("601318", 20190102..=u32::MAX).await.unwrap();
    let (mut prev, mut index) = (0_i64, 1.0_f64);
    for d in &r.values {
        let ymd: u32 = d.date.replace('-', "").parse().unwrap();
        let close = raw.close_on(ymd).unwrap().close_e6;
        assert_eq!(d.market_value_fen, close * 1000 / 10_000, "{}", d.date);
        assert_eq!(d.nav_fen, d.cash_fen + d.market_value_fen, "{}", d.date);
        assert_eq!(d.pnl_fen, d.nav_fen - prev - d.flow_fen, "{}", d.date);
        index *= d.nav_fen as f64 / (prev + d.flow_fen) as f64;
        prev = d.nav_fen;
        assert!(
            (d.twr_pct - (index - 1.0) * 100.0).abs() < 1e-9,
            "{}",
            d.date
        );
    }
    assert_eq!(r.values[1].market_value_fen, 5_369_000);
    assert_eq!(r.performance.nav_fen, prev);
    assert_eq!(r.summary.cash_fen, 10_000_000 - 5_416_408);
    assert!(r.summary.transfers_on_record);
}

#[tokio::test]
async fn adjusted_closes_standing_in_make_the_report_say_approximate() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    pingan(&md, &[]).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    buy_pingan(&store, false).await;
    let r = report(&md, &store, now()).await.unwrap();
    let day = &r.values[0];
    // the bundled adjusted 52.99 stands in, and the day says so
    assert_eq!(day.market_value_fen, 5_299_000);
    assert_eq!(day.approximate, ["601318"]);
    assert_eq!(r.performance.approximate[0].code, "601318");
    assert!(
        r.performance.approximate[0]
            .reason
            .contains("bundled offline data"),
        "{:?}",
        r.performance.approximate
    );
    assert!(
        r.performance.notes.iter().any(|n| n.contains("近似")),
        "{:?}",
        r.performance.notes
    );
    // no transfer on record: the buy was paid by money from outside that day, named
    assert!(!r.summary.transfers_on_record);
    assert_eq!(r.summary.implied[0].amount_fen, 5_416_408);
    assert_eq!(day.flow_fen, 5_416_408);
    assert_eq!(day.nav_fen, 5_299_000);
}

#[tokio::test]
async fn fills_recorded_before_the_ledger_move_in_with_their_ids_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    // the journal as it was: its table and two fills (ids 7 and 9)
    sqlx::raw_sql(include_str!("../migrations/9000_journal.sql"))
        .execute(md.pool())
        .await
        .unwrap();
    for (id, side, date, price, shares, amount, fees) in [
        (
            7,
            "buy",
            20240102,
            9_350_000_i64,
            1000_i64,
            935_000_i64,
            (500, 0, 9),
        ),
        (9, "sell", 20240305, 10_000_000, 400, 400_000, (500, 200, 4)),
    ] {
        sqlx::query(
            "INSERT INTO journal_fill (id, portfolio_id, code, name, side, trade_date,
               price_e6, shares, amount_fen, commission_fen, stamp_fen, transfer_fen,
               fees_computed, source, created_at)
             VALUES (?, ?, '000001', '平安银行', ?, ?, ?, ?, ?, ?, ?, ?, 0, 'import',
               '2024-03-05T00:00:00Z')",
        )
        .bind(id)
        .bind(wyckoff_market::portfolio::LOCAL_PORTFOLIO_ID)
        .bind(side)
        .bind(date)
        .bind(price)
        .bind(shares)
        .bind(amount)
        .bind(fees.0)
        .bind(fees.1)
        .bind(fees.2)
        .execute(md.pool())
        .await
        .unwrap();
    }
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let s = store.summary(now()).await.unwrap();
    let ids: Vec<(i64, Side)> = s.fills.iter().map(|f| (f.id, f.side)).collect();
    // the two fills, and the reconcile's zero opening (no portfolio position stated them)
    assert_eq!(ids[..2], [(7, Side::Buy), (9, Side::Sell)]);
    // bought 9,355.09; sold 400 of 1000: cost 3,742.036, proceeds 4,000 − 7.04 → 250.92
    assert_eq!(s.fills[1].realised_fen, Some(25_092));
    assert_eq!(s.fills[1].fees.stamp_fen, 200);
    // the old table is still there, untouched
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM journal_fill")
        .fetch_one(md.pool())
        .await
        .unwrap();
    assert_eq!(n, 2);
}
