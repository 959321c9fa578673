//! The ledger over a real `wyckoff.db` holding an ETF, a convertible bond with no bars yet,
//! and a reverse repo: the ETF is valued every day at its stored unadjusted close (the last
//! one before a day without), each holding line says which close and how old it is, the
//! bond is named unvalued with what would bring its close, and the repo counts at its
//! principal — NAV = cash + repo + the valued lines, nothing invented.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use wyckoff_journal::{
    EntryKind, Fees, Instrument, JournalStore, NewEntry, NewFill, Side, Source, Valuation, report,
};
use wyckoff_market::instrument_bars::InstrumentStore;
use wyckoff_market::{Bar, ManualClock, MarketConfig, MarketData};

fn now() -> DateTime<Utc> {
    "2024-08-09T08:00:00Z".parse().unwrap()
}

async fn open(home: &std::path::Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2024, 8, 9)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

fn bar(date: u32, close: f64) -> Bar {
    Bar {
        date,
        open: close,
        high: close,
        low: close,
        close,
        volume: 1e6,
        amount: close * 1e6,
        turnover: None,
    }
}

async fn entry(store: &JournalStore, date: u32, kind: EntryKind) {
    store
        .record_entry(
            &NewEntry {
                date,
                name: String::new(),
                kind,
            },
            Source::Import,
            now(),
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn funds_are_valued_at_their_closes_bonds_without_bars_are_named_repos_at_principal() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    // 510300's unadjusted closes; none on the 8th (the last before it stands)
    InstrumentStore::new(md.pool().clone())
        .save(
            "510300",
            &[
                bar(20240805, 3.401),
                bar(20240806, 3.412),
                bar(20240807, 3.398),
            ],
            "eastmoney",
            now(),
        )
        .await
        .unwrap();
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    entry(
        &store,
        20240805,
        EntryKind::CashIn {
            amount_fen: 10_000_000,
        },
    )
    .await;
    for (code, name, date, price_e6, shares, commission_fen) in [
        ("510300", "沪深300ETF", 20240805, 3_400_000, 10_000, 500),
        ("127050", "麒麟转债", 20240806, 115_000_000, 100, 115),
    ] {
        store
            .record(
                &NewFill {
                    code: code.into(),
                    name: name.into(),
                    side: Side::Buy,
                    date,
                    price_e6,
                    shares,
                    fees: Some(Fees {
                        commission_fen,
                        stamp_fen: 0,
                        transfer_fen: 0,
                    }),
                },
                Source::Import,
                now(),
            )
            .await
            .unwrap();
    }
    entry(
        &store,
        20240808,
        EntryKind::RepoLend {
            code: "204001".into(),
            amount_fen: 2_000_000,
        },
    )
    .await;

    let r = report(&md, &store, now()).await.unwrap();
    let dates: Vec<&str> = r.values.iter().map(|d| d.date.as_str()).collect();
    assert_eq!(
        dates,
        ["2024-08-05", "2024-08-06", "2024-08-07", "2024-08-08"]
    );
    let closes = [3_401_000_i64, 3_412_000, 3_398_000, 3_398_000];
    for (d, close) in r.values.iter().zip(closes) {
        assert_eq!(d.market_value_fen, close * 10_000 / 10_000, "{}", d.date);
        assert_eq!(
            d.nav_fen,
            d.cash_fen + d.repo_fen + d.market_value_fen,
            "{}",
            d.date
        );
        assert!(
            d.approximate.is_empty(),
            "fund closes are exact: {}",
            d.date
        );
    }
    // the bond is held from the 6th and has no close: named, not valued
    assert!(r.values[0].missing.is_empty());
    assert_eq!(r.values[1].missing, ["127050"]);
    assert_eq!(r.values[3].repo_fen, 2_000_000);

    let lines = &r.performance.holdings;
    let etf = lines.iter().find(|h| h.code == "510300").unwrap();
    assert_eq!(etf.instrument, Instrument::Fund);
    assert_eq!(
        etf.valuation,
        Valuation::Close {
            close: 3.398,
            close_date: "2024-08-07".into(),
            days_behind: 1,
            exact: true,
            value_fen: 3_398_000,
        }
    );
    let bond = lines.iter().find(|h| h.code == "127050").unwrap();
    assert_eq!(bond.instrument, Instrument::Bond);
    match &bond.valuation {
        Valuation::Unvalued { reason } => assert!(reason.contains("portfolio sync"), "{reason}"),
        v => panic!("{v:?}"),
    }
    let repo = lines.iter().find(|h| h.code == "204001").unwrap();
    assert_eq!(
        repo.valuation,
        Valuation::Principal {
            value_fen: 2_000_000
        }
    );
    assert!(
        r.performance
            .notes
            .iter()
            .any(|n| n.contains("510300 停在 2024-08-07")),
        "{:?}",
        r.performance.notes
    );
}

#[tokio::test]
async fn a_fund_fill_by_hand_needs_its_real_fees() {
    let dir = tempfile::tempdir().unwrap();
    let md = open(dir.path()).await;
    let store = JournalStore::new(md.pool().clone(), now()).await.unwrap();
    let mut fill = NewFill {
        code: "159915".into(),
        name: "创业板ETF".into(),
        side: Side::Buy,
        date: 20240805,
        price_e6: 1_800_000,
        shares: 1000,
        fees: None,
    };
    let err = store.record(&fill, Source::Cli, now()).await.unwrap_err();
    assert!(err.to_string().contains("--fees"), "{err}");
    assert!(store.summary(now()).await.unwrap().fills.is_empty());
    fill.fees = Some(Fees {
        commission_fen: 500,
        stamp_fen: 0,
        transfer_fen: 0,
    });
    store.record(&fill, Source::Cli, now()).await.unwrap();
    let sum = store.summary(now()).await.unwrap();
    assert_eq!(sum.positions[0].code, "159915");
    // a code that is neither a stock nor a fund or bond is still refused
    fill.code = "204001".into();
    assert!(store.record(&fill, Source::Cli, now()).await.is_err());
}
