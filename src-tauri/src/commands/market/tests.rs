#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::commands::test_desk::offline;

#[tokio::test]
async fn watchlist_rows_come_from_the_cache_and_the_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let desk = offline(tmp.path()).await;
    let md = desk.market();
    desk.watchlist()
        .add("000001", md.clock().now())
        .await
        .unwrap();
    let rows = watchlist_rows(&desk).await.unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    let daily = md.daily_bars("000001", None).await.unwrap().bars;
    assert_eq!(r.as_of, daily.last().map(|b| b.date));
    let last = daily.last().unwrap().close;
    assert!(
        (r.last.unwrap() - last).abs() < 0.01,
        "{:?} vs {last}",
        r.last
    );
    assert!(r.health.is_some());
}
