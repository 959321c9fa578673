//! The screen's tail read through the tail cache gives the universe the database gives,
//! over a synthetic market with a damaged series and a stock with an insane bar: built by
//! an import, read by a fresh process, trimmed to fewer bars, read as of its last day;
//! behind after a write it is not used, and a file in step is taken as it is (so it must
//! only ever be written from the database).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/synthetic_csv.rs"]
mod synthetic_csv;

use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::tail_cache::{self, FILE};
use wyckoff_market::universe::load_universe;
use wyckoff_market::{Bar, MarketConfig, MarketData};

async fn open(home: &std::path::Path) -> MarketData {
    MarketData::open_with(MarketConfig::offline(home))
        .await
        .unwrap()
}

/// The database's answer and the facade's (which goes through the cache) agree exactly.
async fn same_as_the_database(md: &MarketData, as_of: Option<u32>, tail: usize) {
    let direct = load_universe(md.store(), as_of, Some(tail)).await.unwrap();
    let cached = md.universe(as_of, Some(tail)).await.unwrap();
    assert_eq!(cached.report, direct.report, "as of {as_of:?}, {tail} bars");
    assert_eq!(
        cached.universe, direct.universe,
        "as of {as_of:?}, {tail} bars"
    );
}

#[tokio::test]
async fn the_cached_tail_read_is_the_database_read() {
    let shape = MarketShape {
        stocks: 120,
        bars: 400,
        start: 20230103,
        seed: 5,
    };
    let csv = tempfile::tempdir().unwrap();
    synthetic_csv::write_market_csv(&market(shape), csv.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(FILE);
    {
        let md = open(home.path()).await;
        assert!(!file.exists());
        // the import ends by building the cache
        let r = md.import_csv(csv.path(), &mut |_| {}).await.unwrap();
        assert_eq!(r.files_rejected, 0);
        assert!(file.exists());
        // a damaged blob and an insane bar: skipped and listed either way
        let mut blob: Vec<u8> =
            sqlx::query_scalar("SELECT data FROM market_series WHERE code = '000338.SZ'")
                .fetch_one(md.pool())
                .await
                .unwrap();
        let n = blob.len();
        blob[n / 3] ^= 0x01;
        sqlx::query("UPDATE market_series SET data = ? WHERE code = '000338.SZ'")
            .bind(blob)
            .execute(md.pool())
            .await
            .unwrap();
        let mut insane = bar(20200612, 5.0);
        insane.low = 6.0;
        md.store()
            .upsert_bars(BarTable::Stocks, "000778.SZ", &[insane], "test", true)
            .await
            .unwrap();
        // those writes left the file behind: the next read builds it anew
        same_as_the_database(&md, None, 320).await;
    }
    let built = std::fs::read(&file).unwrap();
    // a fresh process: the tail from the file, the same as the database's
    let md = open(home.path()).await;
    let direct = load_universe(md.store(), None, Some(320)).await.unwrap();
    assert!(
        direct.report.skipped.len() >= 2,
        "{:?}",
        direct.report.skipped
    );
    assert!(direct.universe.stocks.len() > 120);
    same_as_the_database(&md, None, 320).await;
    // fewer bars than the file holds, and as of its last day or later
    same_as_the_database(&md, None, 250).await;
    let last = direct.report.last_date.unwrap();
    same_as_the_database(&md, Some(last), 320).await;
    same_as_the_database(&md, Some(last + 10_000), 320).await;
    // an earlier day and more bars than it holds: from the database
    same_as_the_database(&md, Some(last - 100), 320).await;
    same_as_the_database(&md, None, 390).await;
    // none of those wrote a file but the one asking for more bars
    let held = tail_cache::peek(&file).unwrap();
    assert_eq!(held.tail, 390);

    // a write moves the generation: the file is behind, never used, and built again
    md.store()
        .upsert_bars(
            BarTable::Stocks,
            "000001.SZ",
            &[bar(last, 13.0)],
            "test",
            true,
        )
        .await
        .unwrap();
    same_as_the_database(&md, None, 320).await;
    let again = tail_cache::peek(&file).unwrap();
    assert!(again.generation > held.generation);
    assert_ne!(std::fs::read(&file).unwrap(), built);

    // a file in step is taken as it is: a close changed in it (its checksum made anew)
    // shows in the next read of another process
    let stamp = tail_cache::peek(&file).unwrap();
    let mut rows = tail_cache::read(&file, &stamp, 320, None).unwrap();
    let (key, loaded) = rows
        .rows
        .iter_mut()
        .find(|(_, l)| !l.bars.is_empty())
        .unwrap();
    let key = key.clone();
    loaded.bars.last_mut().unwrap().close += 0.5;
    tail_cache::write(&file, &stamp, &rows).unwrap();
    let md = open(home.path()).await;
    let cached = md.universe(None, Some(320)).await.unwrap();
    let direct = load_universe(md.store(), None, Some(320)).await.unwrap();
    let close = |u: &wyckoff_market::universe::LoadedUniverse| {
        let s = u
            .universe
            .stocks
            .iter()
            .find(|s| key.starts_with(&s.code))
            .unwrap();
        s.bars.last().unwrap().close
    };
    assert_eq!(close(cached.as_ref()), close(&direct) + 0.5);
}

fn bar(date: u32, close: f64) -> Bar {
    Bar {
        date,
        open: close,
        high: close * 1.01,
        low: close * 0.99,
        close,
        volume: 1e8,
        amount: close * 1e8,
        turnover: None,
    }
}

/// Some stocks' last bars (what an alerts check of the latest close reads) through the
/// facade, from the cache file when it is in step, are the database's: a damaged series
/// and an insane bar included, a key without a series left out; a file in step is what
/// they come from.
#[tokio::test]
async fn some_stocks_tails_through_the_cache_are_the_databases() {
    let shape = MarketShape {
        stocks: 60,
        bars: 400,
        start: 20230103,
        seed: 9,
    };
    let csv = tempfile::tempdir().unwrap();
    synthetic_csv::write_market_csv(&market(shape), csv.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(FILE);
    let md = open(home.path()).await;
    md.import_csv(csv.path(), &mut |_| {}).await.unwrap();
    let mut blob: Vec<u8> =
        sqlx::query_scalar("SELECT data FROM market_series WHERE code = '000338.SZ'")
            .fetch_one(md.pool())
            .await
            .unwrap();
    let n = blob.len();
    blob[n / 3] ^= 0x01;
    sqlx::query("UPDATE market_series SET data = ? WHERE code = '000338.SZ'")
        .bind(blob)
        .execute(md.pool())
        .await
        .unwrap();
    let mut insane = bar(20230301, 5.0);
    insane.low = 6.0;
    md.store()
        .upsert_bars(BarTable::Stocks, "000778.SZ", &[insane], "test", true)
        .await
        .unwrap();
    md.refresh_tail_cache().await;
    let generation = tail_cache::peek(&file).unwrap().generation;
    let mut keys: Vec<String> =
        sqlx::query_scalar("SELECT code FROM market_series WHERE kind = 'stock' ORDER BY code")
            .fetch_all(md.pool())
            .await
            .unwrap();
    keys.retain(|k| k.len() % 3 != 0 || k.starts_with("000338") || k.starts_with("000778"));
    keys.truncate(40);
    keys.push("000338.SZ".into());
    keys.push("000778.SZ".into());
    keys.push("999999.SH".into());
    let seen = |mut rows: Vec<(String, wyckoff_market::cache::LoadedBars)>| {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        rows.into_iter()
            .map(|(k, l)| format!("{k} {} {:?} {:?}", l.earlier, l.corrupt, l.bars))
            .collect::<Vec<_>>()
    };
    for bars in [320, 250, 390] {
        let direct = md
            .store()
            .load_many_tails(BarTable::Stocks, &keys, bars)
            .await
            .unwrap();
        let through = md.stock_tails(&keys, bars).await.unwrap();
        let direct = seen(direct);
        assert_eq!(seen(through), direct, "{bars} bars");
        assert!(
            direct
                .iter()
                .any(|r| r.starts_with("000338.SZ 0 [CorruptRow"))
        );
        assert!(direct.iter().all(|r| !r.starts_with("999999")));
    }
    // the reads built no file and changed none
    assert_eq!(tail_cache::peek(&file).unwrap().generation, generation);

    // a file in step is taken as it is: a close changed in it shows in the next read
    let stamp = tail_cache::peek(&file).unwrap();
    let mut rows = tail_cache::read(&file, &stamp, 320, None).unwrap();
    let (key, loaded) = rows
        .rows
        .iter_mut()
        .find(|(k, l)| keys.contains(k) && !l.bars.is_empty())
        .unwrap();
    let key = key.clone();
    loaded.bars.last_mut().unwrap().close += 0.5;
    tail_cache::write(&file, &stamp, &rows).unwrap();
    let last_close = |rows: Vec<(String, wyckoff_market::cache::LoadedBars)>| {
        let (_, l) = rows.into_iter().find(|(k, _)| *k == key).unwrap();
        l.bars.last().unwrap().close
    };
    let direct = md
        .store()
        .load_many_tails(BarTable::Stocks, &keys, 320)
        .await
        .unwrap();
    let through = md.stock_tails(&keys, 320).await.unwrap();
    assert_eq!(last_close(through), last_close(direct) + 0.5);
}
