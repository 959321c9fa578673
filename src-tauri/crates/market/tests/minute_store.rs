//! Minute bars through the store on a real `wyckoff.db`: what goes in comes back bit for
//! bit, and a bar costs at most 20 bytes on disk (the file's growth, not only the BLOB).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_market::minute::{MinuteBar, MinutePeriod, MinuteStore, from_datetime};
use wyckoff_market::minute_sync::tail_prices_cached;
use wyckoff_market::{MarketConfig, MarketData};

/// A deterministic random walk in the shape of a session (test data, not market prices):
/// `days` trading days of bars ending at the period's times, prices with `decimals`.
fn session_walk(
    days: u32,
    period: MinutePeriod,
    start_price: f64,
    lots_scale: f64,
    with_amount: bool,
) -> Vec<MinuteBar> {
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 10_000) as f64 / 10_000.0
    };
    let step = i64::from(period.minutes());
    let mut ends = Vec::new();
    let mut m = 9 * 60 + 30 + step;
    while m <= 11 * 60 + 30 {
        ends.push(m);
        m += step;
    }
    let mut m = 13 * 60 + step;
    while m <= 15 * 60 {
        ends.push(m);
        m += step;
    }
    let cent = |x: f64| (x * 100.0).round() / 100.0;
    let mut price = start_price;
    let mut out = Vec::new();
    let mut day = chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap();
    let mut made = 0;
    while made < days {
        if day.format("%u").to_string().parse::<u32>().unwrap() <= 5 {
            for &e in &ends {
                let t = day
                    .and_hms_opt((e / 60) as u32, (e % 60) as u32, 0)
                    .unwrap();
                let open = cent(price);
                let close = cent(open * (1.0 + (rnd() - 0.5) * 0.012));
                let high = cent(open.max(close) * (1.0 + rnd() * 0.004));
                let low = cent(open.min(close) * (1.0 - rnd() * 0.004));
                let lots = (lots_scale * (0.3 + rnd())).round();
                let volume = lots * 100.0;
                let vwap = (open + high + low + close) / 4.0 * (1.0 + (rnd() - 0.5) * 0.002);
                out.push(MinuteBar {
                    time: from_datetime(t),
                    open,
                    high,
                    low,
                    close,
                    volume,
                    amount: with_amount.then(|| (volume * vwap).round()),
                });
                price = close;
            }
            made += 1;
        }
        day = day.succ_opt().unwrap();
    }
    out
}

async fn page_bytes(pool: &sqlx::SqlitePool) -> i64 {
    let count: i64 = sqlx::query_scalar("PRAGMA page_count")
        .fetch_one(pool)
        .await
        .unwrap();
    let size: i64 = sqlx::query_scalar("PRAGMA page_size")
        .fetch_one(pool)
        .await
        .unwrap();
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count")
        .fetch_one(pool)
        .await
        .unwrap();
    (count - free) * size
}

#[tokio::test]
async fn minute_bars_round_trip_at_most_20_bytes_a_bar() {
    let home = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let store = MinuteStore::new(md.pool().clone());
    // a ¥1,500 stock's 60-minute bars with amounts (Eastmoney) and a ¥10 stock's 5-minute
    // bars without (Tencent): the dearest prices and the most bars a day
    let cases = [
        (
            "600519",
            MinutePeriod::M60,
            session_walk(500, MinutePeriod::M60, 1500.0, 8000.0, true),
            "eastmoney",
        ),
        (
            "000001",
            MinutePeriod::M5,
            session_walk(120, MinutePeriod::M5, 10.5, 60_000.0, false),
            "tencent",
        ),
        (
            "000001",
            MinutePeriod::M15,
            session_walk(200, MinutePeriod::M15, 10.5, 150_000.0, true),
            "eastmoney",
        ),
    ];
    let mut report = Vec::new();
    for (code, period, bars, source) in &cases {
        let before = page_bytes(md.pool()).await;
        let added = store.merge(code, *period, bars, source).await.unwrap();
        assert_eq!(added, bars.len());
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(md.pool())
            .await
            .unwrap();
        let grown = page_bytes(md.pool()).await - before;
        let back = store.load(code, *period).await.unwrap();
        assert_eq!(back.bars.len(), bars.len());
        for (a, b) in back.bars.iter().zip(bars) {
            assert_eq!(a, b, "{code} {period}");
            assert_eq!(a.close.to_bits(), b.close.to_bits());
        }
        let cov = store
            .coverage()
            .await
            .unwrap()
            .into_iter()
            .find(|c| c.code == *code && c.period == *period)
            .unwrap();
        let blob_per_bar = f64::from(cov.bytes) / bars.len() as f64;
        let disk_per_bar = grown as f64 / bars.len() as f64;
        report.push(format!(
            "{code} {period}: {} bars, blob {blob_per_bar:.1} B/bar, file growth {disk_per_bar:.1} B/bar",
            bars.len()
        ));
        assert!(blob_per_bar <= 20.0, "{}", report.join("\n"));
        assert!(disk_per_bar <= 20.0, "{}", report.join("\n"));
    }
    // printed for the record (`--nocapture`)
    println!("{}", report.join("\n"));

    // a re-sync of the same bars adds nothing and changes nothing
    let (code, period, bars, source) = &cases[0];
    assert_eq!(store.merge(code, *period, bars, source).await.unwrap(), 0);
    assert_eq!(store.load(code, *period).await.unwrap().bars, *bars);

    // a store reopened from the file reads the same bars
    drop(store);
    drop(md);
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    let store = MinuteStore::new(md.pool().clone());
    assert_eq!(
        store.load("600519", MinutePeriod::M60).await.unwrap().bars,
        cases[0].2
    );
    assert!(
        store
            .load("600519", MinutePeriod::M5)
            .await
            .unwrap()
            .bars
            .is_empty()
    );

    // 14:55 prices: the 5-minute bars give 14:55 itself, the 60-minute ones 14:00
    let tails = tail_prices_cached(&md, 20240101, 20241231).await.unwrap();
    let five = cases[1]
        .2
        .iter()
        .find(|b| b.time == 202_401_021_455)
        .unwrap();
    let t = tails[&("000001".to_owned(), 20240102)];
    assert_eq!(
        (t.bar_end, t.price, t.period),
        (1455, five.close, MinutePeriod::M5)
    );
    let sixty = cases[0]
        .2
        .iter()
        .find(|b| b.time == 202_401_021_400)
        .unwrap();
    let t = tails[&("600519".to_owned(), 20240102)];
    assert_eq!(
        (t.bar_end, t.price, t.period),
        (1400, sixty.close, MinutePeriod::M60)
    );
}
