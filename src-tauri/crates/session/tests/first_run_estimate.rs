//! The guided start's full-sync estimate, on a real desk (a fresh data home with the bundled
//! bars, the stock list it ships with, a clock set by the test): it counts what the cache
//! lacks for the day the clock says, at `SYNC_SECONDS_PER_CODE` each, and says when no live
//! source is enabled. Nothing is fetched: the estimate reads the cache alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use wyckoff_config::secrets::MemoryBackend;
use wyckoff_config::settings::{DataSourceKind, Settings};
use wyckoff_config::{DataHome, Secrets, SharedSettings};
use wyckoff_session::desk_onboarding::{SYNC_SECONDS_PER_CODE, SyncEstimate};
use wyckoff_session::time::ManualClock;
use wyckoff_session::{Desk, DeskOptions};

/// The bundled bars' last day, 2020-06-16 (a Tuesday), in the evening in Beijing.
fn evening_of_the_bundled_last_day() -> Arc<ManualClock> {
    let day = chrono::NaiveDate::from_ymd_opt(2020, 6, 16).unwrap();
    Arc::new(ManualClock::at_beijing(day.and_hms_opt(20, 0, 0).unwrap()))
}

async fn desk(dir: &Path, sources: Vec<DataSourceKind>, clock: Arc<ManualClock>) -> Arc<Desk> {
    let mut options = DeskOptions::new(DataHome::new(dir));
    options.settings = Some(SharedSettings::new(Settings {
        data_sources: sources,
        ..Settings::default()
    }));
    options.secrets = Arc::new(Secrets::with_backend(
        Box::new(MemoryBackend::default()),
        Box::new(|_| None),
    ));
    options.clock = clock;
    Desk::open(options).await.unwrap()
}

fn assert_priced(e: &SyncEstimate) {
    assert_eq!(e.seconds, e.to_fetch * SYNC_SECONDS_PER_CODE, "{e:?}");
}

#[tokio::test]
async fn a_full_sync_estimate_counts_what_the_cache_lacks_at_one_second_each() {
    // The environment outranks the settings: this test is about the settings.
    assert!(
        std::env::var_os("WYCKOFF_OFFLINE").is_none()
            && std::env::var_os("WYCKOFF_DATA_SOURCES").is_none(),
        "run without WYCKOFF_OFFLINE and WYCKOFF_DATA_SOURCES"
    );
    assert_eq!(wyckoff_market::bundled::BARS_LAST_DATE, 20_200_616);
    let dir = tempfile::tempdir().unwrap();
    let clock = evening_of_the_bundled_last_day();
    let d = desk(dir.path(), vec![DataSourceKind::Eastmoney], clock.clone()).await;
    let held = d.first_run().await.unwrap().contents;
    assert!(held.stock_list > 1000 && held.stocks > 0, "{held:?}");

    // On the bundled bars' last day what they hold is up to date; the rest of the market
    // is missing.
    let on_the_day = d.full_sync_estimate().await.unwrap();
    assert!(!on_the_day.offline, "{on_the_day:?}");
    assert_eq!(
        on_the_day.already_fresh,
        held.stocks + held.indices,
        "{on_the_day:?} {held:?}"
    );
    assert!(
        on_the_day.to_fetch >= held.stock_list - held.stocks,
        "{on_the_day:?} {held:?}"
    );
    assert_priced(&on_the_day);

    // A week later everything is to fetch again: the same symbols, none fresh.
    clock.advance(Duration::from_secs(7 * 24 * 3600));
    let a_week_later = d.full_sync_estimate().await.unwrap();
    assert_eq!(a_week_later.already_fresh, 0, "{a_week_later:?}");
    assert_eq!(
        a_week_later.to_fetch,
        on_the_day.to_fetch + on_the_day.already_fresh,
        "{a_week_later:?} {on_the_day:?}"
    );
    assert_priced(&a_week_later);
    d.close().await;

    // No live source enabled: the same count, and the estimate says a sync cannot run.
    let dir = tempfile::tempdir().unwrap();
    let d = desk(dir.path(), Vec::new(), evening_of_the_bundled_last_day()).await;
    let offline = d.full_sync_estimate().await.unwrap();
    assert!(offline.offline, "{offline:?}");
    let mut want = on_the_day;
    want.offline = true;
    assert_eq!(offline, want);
    d.close().await;
}
