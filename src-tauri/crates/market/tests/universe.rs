//! The whole cache read back as the engine's Universe: a fresh home gives the 8 bundled
//! stocks; damaged data is skipped and listed; index bars become the benchmarks.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::NaiveDate;
use wyckoff_market::cache::BarTable;
use wyckoff_market::{Bar, ManualClock, MarketConfig, MarketData, SkipReason, load_universe};

async fn open(home: &std::path::Path) -> MarketData {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2026, 12, 1)
            .unwrap()
            .and_hms_opt(16, 0, 0)
            .unwrap(),
    ));
    MarketData::open_with(cfg).await.unwrap()
}

#[tokio::test]
async fn a_fresh_home_is_a_universe_of_the_eight_bundled_stocks() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let got = md.load_universe(None).await.unwrap();
    let u = &got.universe;
    let codes: Vec<&str> = u.stocks.iter().map(|s| s.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "000001", "000338", "000778", "000783", "002572", "300027", "601318", "603220"
        ]
    );
    for s in &u.stocks {
        // the same bars the single-stock read gives
        let one = md.daily_bars(&s.code, None).await.unwrap();
        assert_eq!(s.bars, one.bars, "{}", s.code);
        assert_eq!(Some(s.name.clone()), one.name, "{}", s.code);
    }
    let pingan = &u.stocks[0];
    assert_eq!(pingan.name, "平安银行");
    assert_eq!(pingan.board, wyckoff_engine::Board::Main);
    assert_eq!(u.stocks[5].board, wyckoff_engine::Board::Chinext);
    // the bundled list has no market cap or industry: left unknown, not invented
    assert!(u.stocks.iter().all(|s| s.market_cap_yi.is_none()));
    let r = &got.report;
    assert_eq!(r.stocks, 8);
    assert_eq!(r.bars, u.stocks.iter().map(|s| s.bars.len()).sum::<usize>());
    assert_eq!(r.last_date, Some(20200616));
    assert!(r.skipped.is_empty());
    assert!(r.not_in_stock_list.is_empty());
    assert!(r.listed_without_bars > 4000, "{}", r.listed_without_bars);
    // no index bars are bundled: all three benchmarks are reported missing
    assert_eq!(u.benchmarks, wyckoff_engine::Benchmarks::default());
    let missing: Vec<&str> = r
        .missing_benchmarks
        .iter()
        .map(|m| m.code.as_str())
        .collect();
    assert_eq!(missing, ["000001.SH", "000300.SH", "399006.SZ"]);
    assert!(r.missing_benchmarks[0].reason.contains("no cached bars"));
}

#[tokio::test]
async fn as_of_cuts_every_series_and_skips_stocks_not_yet_trading() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let got = md.load_universe(Some(20100104)).await.unwrap();
    assert!(
        got.universe
            .stocks
            .iter()
            .all(|s| s.bars.last().unwrap().date <= 20100104)
    );
    assert_eq!(got.report.last_date, Some(20100104));
    let skipped: Vec<(&str, &SkipReason)> = got
        .report
        .skipped
        .iter()
        .map(|s| (s.code.as_str(), &s.reason))
        .collect();
    // 中贝通信 (603220) listed in 2018
    assert!(
        skipped.contains(&("603220", &SkipReason::NoBarsAsOf)),
        "{skipped:?}"
    );
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

/// Merges a bar whose low is above its high into 000778 on 2020-06-12.
async fn insane_bar_in_000778(store: &wyckoff_market::cache::CacheStore) {
    let mut b = bar(20200612, 5.0);
    b.low = 6.0;
    store
        .upsert_bars(BarTable::Stocks, "000778.SZ", &[b], "test", true)
        .await
        .unwrap();
}

#[tokio::test]
async fn damaged_data_is_skipped_and_listed_and_index_bars_become_benchmarks() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = md.store();
    // a damaged blob for 000338, an insane bar for 000778
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
    insane_bar_in_000778(store).await;
    // a stock with bars but no stock-list entry, and two of the three indices
    store
        .upsert_bars(
            BarTable::Stocks,
            "920001.BJ",
            &[bar(20200615, 3.0), bar(20200616, 3.1)],
            "test",
            true,
        )
        .await
        .unwrap();
    let sse = [bar(20200615, 2890.0), bar(20200616, 2931.8)];
    store
        .upsert_bars(BarTable::Indices, "000001.SH", &sse, "eastmoney", true)
        .await
        .unwrap();
    store
        .upsert_bars(
            BarTable::Indices,
            "399006.SZ",
            &[bar(20200616, 2100.0)],
            "eastmoney",
            true,
        )
        .await
        .unwrap();

    let got = md.load_universe(None).await.unwrap();
    let codes: Vec<&str> = got
        .universe
        .stocks
        .iter()
        .map(|s| s.code.as_str())
        .collect();
    assert!(
        !codes.contains(&"000338") && !codes.contains(&"000778"),
        "{codes:?}"
    );
    assert_eq!(codes.len(), 7);
    assert_eq!(codes.last(), Some(&"920001"));
    let skipped = &got.report.skipped;
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].code, "000338");
    assert!(
        matches!(&skipped[0].reason, SkipReason::DamagedSeries { detail } if detail.contains("checksum"))
    );
    assert_eq!(skipped[1].code, "000778");
    match &skipped[1].reason {
        SkipReason::CorruptBars { rows } => {
            assert_eq!(rows.len(), 1);
            assert_eq!(rows[0].date, 20200612);
        }
        other => panic!("{other:?}"),
    }
    let json = serde_json::to_value(&got.report).unwrap();
    assert_eq!(json["skipped"][0]["type"], "damaged_series");
    assert_eq!(got.report.not_in_stock_list, ["920001"]);
    let bse = got.universe.stocks.last().unwrap();
    assert_eq!(
        (bse.name.as_str(), bse.board),
        ("", wyckoff_engine::Board::Bse)
    );
    let bm = &got.universe.benchmarks;
    assert_eq!(bm.sse.as_deref(), Some(&sse[..]));
    assert_eq!(bm.chinext.as_ref().map(Vec::len), Some(1));
    assert_eq!(bm.csi300, None);
    let missing: Vec<&str> = got
        .report
        .missing_benchmarks
        .iter()
        .map(|m| m.code.as_str())
        .collect();
    assert_eq!(missing, ["000300.SH"]);
    // deterministic: a second read gives the same universe
    assert_eq!(md.load_universe(None).await.unwrap().universe, got.universe);
}

/// A home written in the version-1 layout (f64 columns, ~53 bytes a bar) is converted on
/// open by migration 2400 and reads back the very same universe, in fewer bytes.
/// A screen reads only each stock's last bars: the same stocks, the end of the same
/// series, the same report (every bar still checked, damage anywhere still found) and
/// every date of the full series as the trading days.
#[tokio::test]
async fn a_tail_read_is_the_end_of_each_whole_series_with_all_its_dates() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = md.store();
    // damage after an early as-of date, and long before any tail
    insane_bar_in_000778(store).await;
    let mut early = bar(20070104, 5.0);
    early.high = 4.0;
    store
        .upsert_bars(BarTable::Stocks, "000783.SZ", &[early], "test", true)
        .await
        .unwrap();
    for as_of in [None, Some(20150105), Some(20100104), Some(20050101)] {
        let whole = load_universe(store, as_of, None).await.unwrap();
        assert_eq!(whole.universe.trading_days, None);
        let skipped: Vec<&str> = whole
            .report
            .skipped
            .iter()
            .map(|s| s.code.as_str())
            .collect();
        assert!(
            skipped.contains(&"000778") && skipped.contains(&"000783"),
            "{skipped:?}"
        );
        let mut dates: Vec<u32> = whole
            .universe
            .stocks
            .iter()
            .flat_map(|s| s.bars.iter().map(|b| b.date))
            .collect();
        dates.sort_unstable();
        dates.dedup();
        for keep in [1, 320, 100_000] {
            let tail = load_universe(store, as_of, Some(keep)).await.unwrap();
            assert_eq!(tail.report, whole.report, "{as_of:?} {keep}");
            assert_eq!(tail.universe.benchmarks, whole.universe.benchmarks);
            assert_eq!(tail.universe.trading_days.as_ref(), Some(&dates));
            assert_eq!(tail.universe.stocks.len(), whole.universe.stocks.len());
            for (t, w) in tail.universe.stocks.iter().zip(&whole.universe.stocks) {
                let end = &w.bars[w.bars.len().saturating_sub(keep)..];
                assert_eq!(t.bars, end, "{} {as_of:?} {keep}", w.code);
                assert_eq!((&t.code, &t.name, t.board), (&w.code, &w.name, w.board));
            }
        }
    }
}

#[tokio::test]
async fn version_1_series_are_compacted_on_open_and_read_the_same_bars() {
    use wyckoff_market::series::{self, Series};
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let before = md.load_universe(None).await.unwrap();
    let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as("SELECT rowid, data FROM market_series")
        .fetch_all(md.pool())
        .await
        .unwrap();
    assert_eq!(rows.len(), 8);
    let mut compact_bytes = 0;
    for (rowid, blob) in &rows {
        assert_eq!(
            blob[0],
            series::VERSION,
            "new writes use the compact layout"
        );
        compact_bytes += blob.len();
        let old = Series::decode(blob).unwrap().encode_v1();
        sqlx::query("UPDATE market_series SET data = ? WHERE rowid = ?")
            .bind(old)
            .bind(rowid)
            .execute(md.pool())
            .await
            .unwrap();
    }
    // the state an old home is in when migration 2400 first runs
    md.store().set_meta("series_v2_pending", "1").await.unwrap();
    drop(md);
    let md = open(home.path()).await;
    let versions: Vec<(i64, i64)> =
        sqlx::query_as("SELECT unicode(substr(data, 1, 1)), length(data) FROM market_series")
            .fetch_all(md.pool())
            .await
            .unwrap();
    let current = i64::from(series::VERSION);
    assert!(versions.iter().all(|(v, _)| *v == current), "{versions:?}");
    assert_eq!(
        versions.iter().map(|(_, n)| *n as usize).sum::<usize>(),
        compact_bytes
    );
    assert_eq!(md.store().meta("series_v2_pending").await.unwrap(), None);
    let after = md.load_universe(None).await.unwrap();
    assert_eq!(after.report, before.report);
    for (a, b) in after.universe.stocks.iter().zip(&before.universe.stocks) {
        assert_eq!(a.bars, b.bars, "{}", a.code);
    }
}

/// The app screens again on the universe it holds; any write to the bars or the stock
/// list (by this process or another one on the same home) makes the next read a real one,
/// and damage written since is reported, not served from memory.
#[tokio::test]
async fn the_warm_universe_is_handed_out_again_until_anything_is_written() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let first = md.universe(None, None).await.unwrap();
    assert!(Arc::ptr_eq(&first, &md.universe(None, None).await.unwrap()));
    assert_eq!(
        first.universe,
        md.load_universe(None).await.unwrap().universe
    );
    // another as-of date or tail is another universe (only the newest is kept)
    let past = md.universe(Some(20100104), None).await.unwrap();
    assert_eq!(past.report.last_date, Some(20100104));
    let tail = md.universe(None, Some(320)).await.unwrap();
    assert!(tail.universe.stocks.iter().all(|s| s.bars.len() <= 320));
    assert!(Arc::ptr_eq(
        &tail,
        &md.universe(None, Some(320)).await.unwrap()
    ));
    let first = md.universe(None, None).await.unwrap();
    assert_eq!(first.report.last_date, Some(20200616));

    // another process appends a bar to 平安银行
    let other = open(home.path()).await;
    other
        .store()
        .upsert_bars(
            BarTable::Stocks,
            "000001.SZ",
            &[bar(20200617, 15.0)],
            "test",
            true,
        )
        .await
        .unwrap();
    let after = md.universe(None, None).await.unwrap();
    assert!(!Arc::ptr_eq(&first, &after));
    assert_eq!(after.report.bars, first.report.bars + 1);
    assert_eq!(after.report.last_date, Some(20200617));
    assert!(Arc::ptr_eq(&after, &md.universe(None, None).await.unwrap()));

    // a stock-list change (a rename) is seen too
    let mut pingan = other.stock_info(&"000001".parse().unwrap()).unwrap();
    pingan.name = "平安银行改".into();
    other
        .store()
        .upsert_stocks(&[pingan], "test", chrono::Utc::now())
        .await
        .unwrap();
    let renamed = md.universe(None, None).await.unwrap();
    assert_eq!(renamed.universe.stocks[0].name, "平安银行改");
    // the list read for it is the one names are looked up in from then on
    let code = "000001".parse().unwrap();
    assert_eq!(md.stock_info(&code).unwrap().name, "平安银行改");
    // and a whole read finds it current
    let whole = md.load_universe(None).await.unwrap();
    assert_eq!(whole.universe.stocks[0].name, "平安银行改");

    // a series damaged on disk afterwards is left out and listed, as on a cold read
    sqlx::query(
        "UPDATE market_series SET data = substr(data, 1, length(data) - 1)
         WHERE kind = 'stock' AND code = '000338.SZ'",
    )
    .execute(other.pool())
    .await
    .unwrap();
    let damaged = md.universe(None, None).await.unwrap();
    assert!(
        damaged
            .report
            .skipped
            .iter()
            .any(|s| s.code == "000338" && matches!(s.reason, SkipReason::DamagedSeries { .. })),
        "{:?}",
        damaged.report.skipped
    );
    assert_eq!(damaged.report.stocks, renamed.report.stocks - 1);
}

#[tokio::test]
async fn many_series_read_together_are_each_what_a_single_read_gives() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = md.store();
    // an insane bar in one series, and keys with no series at all
    insane_bar_in_000778(store).await;
    let stored: Vec<String> = store
        .coverage(BarTable::Stocks)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.code)
        .collect();
    assert_eq!(stored.len(), 8);
    // more keys than one query binds, the stored ones spread over every query
    let mut keys: Vec<String> = (0..1_200)
        .map(|i| format!("{:06}.SZ", 900_000 + i))
        .collect();
    for (i, key) in stored.iter().enumerate() {
        keys.insert(i * 150, key.clone());
    }
    let many = store
        .load_many(BarTable::Stocks, &keys, Some(20200615))
        .await
        .unwrap();
    let mut got: Vec<&str> = many.iter().map(|(k, _)| k.as_str()).collect();
    got.sort_unstable();
    assert_eq!(got, stored);
    for (key, loaded) in &many {
        let one = store
            .load_bars(BarTable::Stocks, key, Some(20200615))
            .await
            .unwrap();
        assert_eq!(loaded.bars, one.bars, "{key}");
        assert_eq!(loaded.corrupt, one.corrupt, "{key}");
        assert_eq!(loaded.sources, one.sources, "{key}");
        assert_eq!(loaded.amount_missing, one.amount_missing, "{key}");
        assert!(loaded.bars.last().unwrap().date <= 20200615, "{key}");
    }
    let insane = &many.iter().find(|(k, _)| k == "000778.SZ").unwrap().1;
    assert_eq!(insane.corrupt.len(), 1);
    assert_eq!(insane.corrupt[0].date, 20200612);
    // the indices are another table
    assert!(
        store
            .load_many(BarTable::Indices, &stored, None)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_stock_list_reads_back_exactly_what_was_written() {
    use std::str::FromStr;
    use wyckoff_market::StockCode;
    use wyckoff_market::meta::StockInfo;
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = md.store();
    let mut odd = StockInfo::new(
        StockCode::from_str("600000").unwrap(),
        "浦发\"银行\"\\ \u{1f}😀",
    );
    odd.list_date = Some(19991110);
    odd.industry = Some("银行, \"股份制\"".into());
    // values with no short decimal form, the largest and the smallest
    odd.market_cap = Some(0.1 + 0.2);
    let mut big = StockInfo::new(StockCode::from_str("600001").unwrap(), "大");
    big.market_cap = Some(f64::MAX);
    let mut tiny = StockInfo::new(StockCode::from_str("600002").unwrap(), "");
    tiny.market_cap = Some(1e11 / 3.0);
    tiny.list_date = None;
    store
        .upsert_stocks(
            &[odd.clone(), big.clone(), tiny.clone()],
            "test",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let list = store.load_stocks().await.unwrap();
    // ordered by code, the bundled list included
    assert!(
        list.windows(2)
            .all(|w| w[0].code.digits() < w[1].code.digits())
    );
    for want in [odd, big, tiny] {
        let got = list.iter().find(|s| s.code == want.code).unwrap();
        assert_eq!(got.name, want.name);
        assert_eq!(got.board, want.board);
        assert_eq!(got.list_date, want.list_date);
        assert_eq!(got.industry, want.industry);
        assert_eq!(
            got.market_cap.map(f64::to_bits),
            want.market_cap.map(f64::to_bits),
            "{}",
            want.name
        );
    }
    assert!(
        list.iter()
            .any(|s| s.code.digits() == "000001" && s.market_cap.is_none())
    );
}

/// A stored key that is not a stock code (a comma, multi-byte characters) is named as
/// skipped, and every other stock still reads as it is.
#[tokio::test]
async fn an_odd_key_in_the_store_is_named_and_shifts_nothing() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    md.store()
        .upsert_bars(
            BarTable::Stocks,
            "0,中文",
            &[bar(20200615, 3.0)],
            "test",
            true,
        )
        .await
        .unwrap();
    let whole = md.load_universe(None).await.unwrap();
    assert_eq!(whole.report.stocks, 8);
    assert_eq!(whole.report.skipped.len(), 1);
    assert_eq!(whole.report.skipped[0].code, "0,中文");
    assert_eq!(whole.report.skipped[0].reason, SkipReason::InvalidCode);
    for s in &whole.universe.stocks {
        let one = md.daily_bars(&s.code, None).await.unwrap();
        assert_eq!(s.bars, one.bars, "{}", s.code);
    }
}

/// A screen's tail read gathers its trading days only from the series it keeps: the dates
/// of a key that is not a stock code (skipped) are not trading days.
#[tokio::test]
async fn a_skipped_key_brings_no_trading_days_to_a_tail_read() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    // a Sunday, on which nothing else traded
    let sunday = 20200614;
    md.store()
        .upsert_bars(
            BarTable::Stocks,
            "0,中文",
            &[bar(sunday, 3.0)],
            "test",
            true,
        )
        .await
        .unwrap();
    let tail = load_universe(md.store(), None, Some(320)).await.unwrap();
    assert_eq!(tail.report.skipped.len(), 1);
    assert_eq!(tail.report.skipped[0].reason, SkipReason::InvalidCode);
    let days = tail.universe.trading_days.unwrap();
    assert!(
        days.contains(&20200612) && days.contains(&20200615),
        "{days:?}"
    );
    assert!(!days.contains(&sunday));
}

/// The whole-market read reads parts of the store at once: the parts' cut keys split the
/// stored series so that each is read exactly once, in order, for any number of parts.
#[tokio::test]
async fn the_cut_keys_split_the_stored_series_into_parts_read_once_each() {
    let home = tempfile::tempdir().unwrap();
    let md = open(home.path()).await;
    let store = md.store();
    let all: Vec<String> = store
        .series_page(BarTable::Stocks, "", None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(all.len(), 8);
    assert_eq!(
        store.series_cut_keys(BarTable::Stocks, 2).await.unwrap(),
        ["002572.SZ"]
    );
    for parts in 1..=12 {
        let cuts = store
            .series_cut_keys(BarTable::Stocks, parts)
            .await
            .unwrap();
        assert!(cuts.windows(2).all(|w| w[0] < w[1]), "{cuts:?}");
        assert!(cuts.len() < parts as usize, "{cuts:?}");
        let starts = std::iter::once(String::new()).chain(cuts.iter().cloned());
        let ends = cuts.iter().cloned().map(Some).chain(std::iter::once(None));
        let mut read = Vec::new();
        for (after, through) in starts.zip(ends) {
            // pages of 3 inside each part
            let mut after = after;
            loop {
                let page = store
                    .series_page(BarTable::Stocks, &after, through.as_deref(), 3)
                    .await
                    .unwrap();
                let Some((last, _)) = page.last() else { break };
                after = last.clone();
                read.extend(page.into_iter().map(|(k, _)| k));
            }
        }
        assert_eq!(read, all, "{parts} parts");
    }
}
