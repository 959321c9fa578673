//! Typed screen progress: a `screen_stocks` background task over a
//! synthetic market reports each funnel layer while it runs — L1 … L5 in order, typed with
//! the layer's counts and worded in `stage`/`detail` for older readers — and only then ends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use wyckoff_agent::{BackgroundTaskManager, SystemClock};
use wyckoff_engine::synthetic::{MarketShape, market};
use wyckoff_market::cache::BarTable;
use wyckoff_market::{MarketConfig, MarketData};
use wyckoff_protocol::{TaskStatus, TaskStep};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screen_task_reports_l1_to_l5_in_order_before_it_completes() {
    let dir = tempfile::tempdir().unwrap();
    let md = Arc::new(
        MarketData::open_with(MarketConfig::offline(dir.path()))
            .await
            .unwrap(),
    );
    let m = market(MarketShape {
        stocks: 120,
        bars: 300,
        start: 20230102,
        seed: 23,
    });
    for s in &m.stocks {
        md.store()
            .upsert_bars(BarTable::Stocks, &s.code, &s.bars, "test:synthetic", true)
            .await
            .unwrap();
    }
    let tasks =
        BackgroundTaskManager::open(&dir.path().join("tasks.db"), Arc::new(SystemClock), None)
            .await
            .unwrap();
    let screen = wyckoff_tools::market_tools(md.clone())
        .into_iter()
        .find(|t| t.spec().name == "screen_stocks")
        .unwrap();
    let mut events = tasks.subscribe();
    let task = tasks.start_for_user(screen, json!({})).await.unwrap();

    // Every change of the task, in the order listeners get them, up to its end.
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(300), async {
        loop {
            let t = events.recv().await.unwrap();
            if t.task_id != task.task_id {
                continue;
            }
            let finished = t.status.is_finished();
            seen.push(t);
            if finished {
                break;
            }
        }
    })
    .await
    .expect("the screen ends");

    let last = seen.last().unwrap();
    assert_eq!(last.status, TaskStatus::Completed, "{:?}", last.error);
    let layer_events: Vec<_> = seen
        .iter()
        .filter_map(|t| {
            t.progress.step.map(|step| match step {
                TaskStep::ScreenLayer {
                    layer,
                    input,
                    passed,
                } => (t, layer, input, passed),
            })
        })
        .collect();
    let order: Vec<u8> = layer_events.iter().map(|(_, l, _, _)| *l).collect();
    assert_eq!(order, [1, 2, 3, 4, 5], "{seen:#?}");
    // All of them while the task still ran, each its own event, before the completion.
    let first_layer = seen.iter().position(|t| t.progress.step.is_some()).unwrap();
    assert_eq!(
        seen[first_layer..first_layer + 5]
            .iter()
            .map(|t| t.status)
            .collect::<Vec<_>>(),
        [TaskStatus::Running; 5]
    );
    assert_eq!(seen.len(), first_layer + 5 + 1, "the end follows L5");

    // The counts are the result's, and the words are there for readers of `stage`.
    let result = tasks
        .wait_for(&task.task_id, Duration::from_secs(5))
        .await
        .unwrap()
        .result
        .unwrap();
    let names = [
        "L1 基础门槛",
        "L2 强势通道",
        "L3 行业共振",
        "L4 结构触发",
        "L5 退出信号",
    ];
    for (k, (t, _, input, passed)) in layer_events.iter().enumerate() {
        let layer = &result["layers"][k];
        assert_eq!(u64::from(*input), layer["input"].as_u64().unwrap());
        assert_eq!(u64::from(*passed), layer["passed"].as_u64().unwrap());
        assert_eq!(t.progress.stage, names[k]);
        assert_eq!(t.progress.detail, format!("{input} → {passed}"));
    }
    assert!(
        layer_events[0].2 > 0,
        "the synthetic market reaches L1: {result}"
    );
    tasks.shutdown().await;
}
