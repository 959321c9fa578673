use chrono::TimeZone;

use super::*;
use crate::when::Days;

async fn store() -> (tempfile::TempDir, ScheduleStore) {
    let dir = tempfile::tempdir().unwrap();
    let pool = wyckoff_memory::open_pool(dir.path().join("wyckoff.db"))
        .await
        .unwrap();
    (dir, ScheduleStore::new(pool).await.unwrap())
}

fn close_screen(name: &str) -> Schedule {
    Schedule {
        name: name.into(),
        when: When::At {
            time: "15:05".into(),
            days: Days::Trading,
        },
        job: Job::Task {
            request: TaskRequest::Screen {
                as_of: None,
                board: None,
                limit: None,
            },
        },
        enabled: true,
        counted_from: parse_minute("2026-12-01 09:00").unwrap(),
        conversation_id: None,
    }
}

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, 7, 10, 0).unwrap()
}

#[tokio::test]
async fn schedules_are_stored_as_given_and_bad_ones_are_refused_storing_nothing() {
    let (_d, s) = store().await;
    let mut prompt = close_screen("checkup");
    prompt.job = Job::Prompt {
        text: "/checkup".into(),
    };
    s.add(&close_screen("close")).await.unwrap();
    s.add(&prompt).await.unwrap();
    assert_eq!(
        s.list().await.unwrap().schedules,
        [prompt.clone(), close_screen("close")]
    );
    assert!(matches!(
        s.add(&close_screen("close")).await,
        Err(StoreError::Exists(_))
    ));
    let mut bad = close_screen("bad");
    bad.when = When::Cron {
        expr: "61 * * * *".into(),
    };
    assert!(matches!(s.add(&bad).await, Err(StoreError::When(_))));
    assert!(matches!(
        s.add(&close_screen("has space")).await,
        Err(StoreError::BadName(_))
    ));
    assert_eq!(s.list().await.unwrap().schedules.len(), 2);

    s.set_enabled("close", false, parse_minute("2026-12-02 09:00").unwrap())
        .await
        .unwrap();
    assert!(!s.get("close").await.unwrap().enabled);
    assert!(matches!(
        s.set_enabled("nope", true, parse_minute("2026-12-02 09:00").unwrap())
            .await,
        Err(StoreError::NotFound(_))
    ));
    s.remove("checkup").await.unwrap();
    assert!(matches!(
        s.get("checkup").await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn an_occurrence_is_claimed_once_across_processes() {
    let (dir, s) = store().await;
    s.add(&close_screen("close")).await.unwrap();
    // A second process on the same data home: its own pool and store.
    let other_pool = wyckoff_memory::open_pool(dir.path().join("wyckoff.db"))
        .await
        .unwrap();
    let other = ScheduleStore::new(other_pool).await.unwrap();
    let occurrence = |text: &str, assumed_trading_day: bool| crate::when::Occurrence {
        at: parse_minute(text).unwrap(),
        assumed_trading_day,
    };
    let due = &occurrence("2026-12-04 15:05", false);
    let first = s.claim("close", due, false, "app", now()).await.unwrap();
    assert!(first.is_some());
    assert_eq!(
        other
            .claim("close", due, false, "daemon", now())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        s.claim("close", due, false, "app", now()).await.unwrap(),
        None
    );
    let next = &occurrence("2027-01-04 15:05", true);
    assert!(
        other
            .claim("close", next, true, "daemon", now())
            .await
            .unwrap()
            .is_some()
    );

    let end = RunEnd {
        summary: Some("3 candidates".into()),
        task_id: Some("bg_1_screen_stocks".into()),
        ..RunEnd::default()
    };
    s.finish(first.unwrap(), RunStatus::Done, &end, now())
        .await
        .unwrap();
    let runs = s.runs("close", 10).await.unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].occurrence.as_deref(), Some("2026-12-04 15:05"));
    assert_eq!(runs[1].status, RunStatus::Done);
    assert_eq!(runs[1].summary.as_deref(), Some("3 candidates"));
    assert!(!runs[1].catch_up);
    assert!(runs[0].catch_up);
    // A day past the known calendar stays said with its run.
    assert!(runs[0].assumed_trading_day);
    assert!(!runs[1].assumed_trading_day);

    // The daemon died mid-run: its run is interrupted, the app's finished one is kept,
    // and the occurrence stays taken.
    let marked = s
        .mark_interrupted(&|owner| owner == "app", now())
        .await
        .unwrap();
    assert_eq!(marked, 1);
    let runs = s.runs("close", 10).await.unwrap();
    assert_eq!(runs[0].status, RunStatus::Interrupted);
    assert_eq!(runs[1].status, RunStatus::Done);
    assert_eq!(
        s.claim("close", next, false, "app", now()).await.unwrap(),
        None
    );

    let manual = s.start_manual("close", "app", now()).await.unwrap();
    let again = s.start_manual("close", "app", now()).await.unwrap();
    assert_ne!(manual, again, "run now may run any number of times");
    assert!(matches!(
        s.start_manual("nope", "app", now()).await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test]
async fn a_damaged_row_is_named_and_set_apart_from_the_others() {
    let (_d, s) = store().await;
    s.add(&close_screen("close")).await.unwrap();
    s.add(&close_screen("other")).await.unwrap();
    sqlx::query("UPDATE schedule SET when_json = '{\"type\":\"sometimes\"}' WHERE name = 'close'")
        .execute(&s.pool)
        .await
        .unwrap();
    let listing = s.list().await.unwrap();
    assert_eq!(
        listing
            .schedules
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["other"]
    );
    assert_eq!(listing.damaged.len(), 1);
    assert_eq!(listing.damaged[0].name, "close");
    assert!(
        listing.damaged[0].why.starts_with("when:"),
        "{:?}",
        listing.damaged
    );
    let err = s.get("close").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { name, .. } if name == "close"),
        "{err}"
    );
}

#[tokio::test]
async fn an_edit_or_switching_on_counts_due_times_from_then_and_keeps_the_runs() {
    let (_d, s) = store().await;
    s.add(&close_screen("close")).await.unwrap();
    let run = s.start_manual("close", "test-owner", now()).await.unwrap();
    let later = parse_minute("2026-12-04 16:00").unwrap();

    let at_open = When::At {
        time: "09:25".into(),
        days: Days::Daily,
    };
    let sync = Job::Task {
        request: TaskRequest::SyncAll,
    };
    s.update("close", &at_open, &sync, later).await.unwrap();
    let edited = s.get("close").await.unwrap();
    assert_eq!((&edited.when, &edited.job), (&at_open, &sync));
    assert_eq!(edited.counted_from, later);
    assert_eq!(s.runs("close", 10).await.unwrap()[0].id, run);

    let bad = When::Cron {
        expr: "5 25 * * *".into(),
    };
    assert!(matches!(
        s.update("close", &bad, &sync, later).await,
        Err(StoreError::When(_))
    ));
    assert_eq!(s.get("close").await.unwrap(), edited, "nothing changed");
    assert!(matches!(
        s.update("nope", &at_open, &sync, later).await,
        Err(StoreError::NotFound(_))
    ));

    // Off, then on again two days later: counted from the switch-on.
    let off_at = parse_minute("2026-12-05 10:00").unwrap();
    let on_at = parse_minute("2026-12-07 10:00").unwrap();
    s.set_enabled("close", false, off_at).await.unwrap();
    assert_eq!(s.get("close").await.unwrap().counted_from, later);
    s.set_enabled("close", true, on_at).await.unwrap();
    assert_eq!(s.get("close").await.unwrap().counted_from, on_at);
    // Switching on what is on changes nothing.
    s.set_enabled("close", true, parse_minute("2026-12-08 10:00").unwrap())
        .await
        .unwrap();
    assert_eq!(s.get("close").await.unwrap().counted_from, on_at);
}
