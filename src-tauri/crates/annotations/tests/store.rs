//! Chart notes over a real `wyckoff.db` with the bundled stock list: a round trip of each
//! shape with its author and time, bad input storing nothing, the agent unable to remove
//! the user's notes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use chrono::{NaiveDate, TimeZone, Utc};
use wyckoff_annotations::{AnnotationError, AnnotationStore, Author, NotePeriod, Remover, Shape};
use wyckoff_market::{ManualClock, MarketConfig, MarketData};

async fn open(home: &std::path::Path) -> (MarketData, AnnotationStore) {
    let mut cfg = MarketConfig::offline(home);
    cfg.clock = Arc::new(ManualClock::at_beijing(
        NaiveDate::from_ymd_opt(2020, 6, 17)
            .unwrap()
            .and_hms_opt(9, 0, 0)
            .unwrap(),
    ));
    let md = MarketData::open_with(cfg).await.unwrap();
    let store = AnnotationStore::new(md.pool().clone()).await.unwrap();
    (md, store)
}

fn agent() -> Author {
    Author::Agent {
        conversation: "conv-1".into(),
    }
}

#[tokio::test]
async fn notes_round_trip_with_author_and_time() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    let now = Utc.with_ymd_and_hms(2020, 6, 17, 1, 2, 3).unwrap();
    let range = Shape::Box {
        from: 20200102,
        to: 20200301,
        low: 12.5,
        high: 14.0,
    };
    let a = store
        .add(&md, "sz000001", NotePeriod::Day, &range, agent(), now)
        .await
        .unwrap();
    assert_eq!(a.code, "000001");
    assert_eq!(a.created_at, "2020-06-17T01:02:03Z");
    let b = store
        .add(
            &md,
            "000001",
            NotePeriod::Day,
            &Shape::Text {
                date: 20200316,
                text: " 可能的 Spring ".into(),
            },
            Author::User,
            now,
        )
        .await
        .unwrap();
    // another period's chart and another stock are apart
    store
        .add(
            &md,
            "000001",
            NotePeriod::Week,
            &Shape::Line {
                price: 13.0,
                from: None,
                to: None,
            },
            Author::User,
            now,
        )
        .await
        .unwrap();
    let day = store.list("000001", NotePeriod::Day).await.unwrap();
    assert_eq!(day.len(), 2);
    assert_eq!(day[0], a);
    assert_eq!(day[0].shape, range);
    assert_eq!(day[0].author, agent());
    assert_eq!(
        day[1].shape,
        Shape::Text {
            date: 20200316,
            text: "可能的 Spring".into()
        }
    );
    assert_eq!(day[1].author, Author::User);
    assert_eq!(store.all().await.unwrap().len(), 3);

    // the agent cannot remove the user's note; the user removes anyone's
    assert!(matches!(
        store.remove(i64::from(b.id), Remover::Agent).await,
        Err(AnnotationError::NotYours(_))
    ));
    assert_eq!(
        store.list("000001", NotePeriod::Day).await.unwrap().len(),
        2
    );
    let gone = store.remove(i64::from(a.id), Remover::User).await.unwrap();
    assert_eq!(gone, a);
    assert!(matches!(
        store.remove(i64::from(a.id), Remover::User).await,
        Err(AnnotationError::NotFound(_))
    ));
    assert_eq!(
        store.list("000001", NotePeriod::Day).await.unwrap(),
        vec![day[1].clone()]
    );
}

#[tokio::test]
async fn bad_input_stores_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (md, store) = open(home.path()).await;
    let now = Utc.with_ymd_and_hms(2020, 6, 17, 1, 2, 3).unwrap();
    let line = Shape::Line {
        price: 10.0,
        from: None,
        to: None,
    };
    let unknown = store
        .add(&md, "688999", NotePeriod::Day, &line, agent(), now)
        .await
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "unknown stock code 688999: not in the stock list"
    );
    assert!(matches!(
        store
            .add(&md, "abc", NotePeriod::Day, &line, agent(), now)
            .await,
        Err(AnnotationError::BadCode(_))
    ));
    let inverted = Shape::Box {
        from: 20200102,
        to: 20200301,
        low: 15.0,
        high: 14.0,
    };
    assert!(matches!(
        store
            .add(&md, "000001", NotePeriod::Day, &inverted, agent(), now)
            .await,
        Err(AnnotationError::LowAboveHigh { .. })
    ));
    assert!(store.all().await.unwrap().is_empty());
}
