//! Every `screen_stocks` run is saved for forward tracking: a screen
//! started as a background task without a model — the window's button and schedules take
//! this path, the agent calls the same tool — lands in the tracking store with its as-of
//! day, origin and candidates, over the bundled real bars.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use wyckoff_agent::{BackgroundTaskManager, SystemClock};
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_protocol::TaskRequest;
use wyckoff_protocol::TaskStatus;
use wyckoff_track::{Origin, TrackStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screen_task_is_saved_with_its_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir.path()))
            .await
            .unwrap(),
    );
    let tasks =
        BackgroundTaskManager::open(&dir.path().join("tasks.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    let mut events = tasks.subscribe();
    let request = TaskRequest::Screen {
        as_of: Some("2019-01-16".into()),
        board: None,
        limit: None,
    };
    let task = wyckoff_tools::jobs::start(&md, &tasks, &request)
        .await
        .unwrap();
    let done = tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let t = events.recv().await.unwrap();
            if t.task_id == task.task_id && t.status.is_finished() {
                return t;
            }
        }
    })
    .await
    .expect("the screen ends");
    assert_eq!(done.status, TaskStatus::Completed, "{:?}", done.error);

    let store = TrackStore::new(md.pool().clone()).await.unwrap();
    let saved = store.screens().await.unwrap();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let (id, rec) = &saved[0];
    // The task's result names the saved run.
    let result = tasks.result(&task.task_id).await.unwrap().unwrap();
    assert_eq!(result["tracked_screen_id"], *id, "{result}");
    assert_eq!(rec.as_of, 20190116);
    assert_eq!(rec.origin, Origin::Tool);
    assert_eq!(rec.board, "all");
    // No index bars offline: the regime is not known, so none is saved.
    assert_eq!(rec.regime, None);
    let spring = rec
        .candidates
        .iter()
        .find(|c| c.code == "000001")
        .expect("000001 is a candidate that day");
    assert_eq!(spring.name, "平安银行");
    assert_eq!(spring.triggers, ["Spring"]);
    assert!(spring.score > 0.0);
    assert!(!spring.track.is_empty());
}
