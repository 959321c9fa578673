mod common;

use chrono::Duration;
use common::{store, t0};
use wyckoff_memory::{MemoryError, MemoryType, NewMemory, SaveOutcome, open_pool};

fn contents(v: &[wyckoff_memory::Memory]) -> Vec<&str> {
    v.iter().map(|m| m.content.as_str()).collect()
}

#[tokio::test]
async fn two_character_chinese_queries_find_memories() {
    let (_d, s, _c) = store().await;
    s.save(NewMemory::new(
        MemoryType::StockOpinion,
        "贵州茅台处于吸筹末期，量价配合良好",
    ))
    .await
    .unwrap();
    s.save(NewMemory::new(
        MemoryType::MarketView,
        "白酒板块整体走弱，资金流出",
    ))
    .await
    .unwrap();
    s.save(NewMemory::new(MemoryType::Session, "讨论了银行股的分红"))
        .await
        .unwrap();

    assert_eq!(
        contents(&s.search("茅台", 10).await.unwrap()),
        vec!["贵州茅台处于吸筹末期，量价配合良好"]
    );
    assert_eq!(
        contents(&s.search("白酒", 10).await.unwrap()),
        vec!["白酒板块整体走弱，资金流出"]
    );
    // a longer phrase needs all its bigrams
    assert_eq!(contents(&s.search("吸筹末期", 10).await.unwrap()).len(), 1);
    assert!(s.search("啤酒", 10).await.unwrap().is_empty());
    // lone character: substring fallback
    assert_eq!(
        contents(&s.search("酒", 10).await.unwrap()),
        vec!["白酒板块整体走弱，资金流出"]
    );
}

#[tokio::test]
async fn mixed_chinese_english_and_codes_are_searchable() {
    let (_d, s, _c) = store().await;
    let id = s
        .save(NewMemory::new(
            MemoryType::StockOpinion,
            "600519出现Spring信号，Wyckoff阶段C",
        ))
        .await
        .unwrap()
        .id();
    s.save(NewMemory::new(MemoryType::Decision, "宁德时代暂不加仓").with_codes(["300750"]))
        .await
        .unwrap();
    assert_eq!(s.search("600519", 10).await.unwrap()[0].id, id);
    assert_eq!(s.search("spring 信号", 10).await.unwrap()[0].id, id);
    assert_eq!(
        s.search("WYCK", 10).await.unwrap()[0].id,
        id,
        "prefix on words"
    );
    // an explicit code that is not in the text is still found
    assert_eq!(
        contents(&s.search("300750", 10).await.unwrap()),
        vec!["宁德时代暂不加仓"]
    );
    let m = s.get(id).await.unwrap();
    assert_eq!(m.codes, vec!["600519"]);
}

#[tokio::test]
async fn exact_duplicates_are_stored_once() {
    let (_d, s, _c) = store().await;
    let a = s
        .save(NewMemory::new(MemoryType::Preference, "不追涨"))
        .await
        .unwrap();
    let b = s
        .save(NewMemory::new(MemoryType::Preference, "  不追涨 "))
        .await
        .unwrap();
    assert!(matches!(a, SaveOutcome::Inserted(_)));
    assert_eq!(b, SaveOutcome::Duplicate(a.id()));
    // same content, other type is a different memory
    let c = s
        .save(NewMemory::new(MemoryType::Session, "不追涨"))
        .await
        .unwrap();
    assert!(matches!(c, SaveOutcome::Inserted(_)));
    assert_eq!(s.count(None).await.unwrap(), 2);
    let err = s.add("preference", "不追涨").await.unwrap_err();
    assert!(matches!(err, MemoryError::Duplicate { id, .. } if id == a.id()));
}

#[tokio::test]
async fn caps_trim_the_oldest_of_each_type() {
    let (_d, s, clock) = store().await;
    for (t, cap) in [
        (MemoryType::Preference, 50),
        (MemoryType::StockOpinion, 30),
        (MemoryType::Decision, 30),
        (MemoryType::MarketView, 20),
        (MemoryType::Session, 50),
    ] {
        for i in 0..cap + 3 {
            clock.advance(std::time::Duration::from_secs(60));
            s.save(NewMemory::new(t, format!("{t} 第{i}条")))
                .await
                .unwrap();
        }
        assert_eq!(s.count(Some(t)).await.unwrap(), cap as i64, "{t}");
        let kept = s.list(Some(t), 1000).await.unwrap();
        // newest first; the three oldest are gone
        assert_eq!(kept[0].content, format!("{t} 第{}条", cap + 2));
        assert_eq!(kept.last().unwrap().content, format!("{t} 第3条"));
        // trimmed memories left the FTS index too
        assert!(
            s.search(&format!("{t} 第0条"), 10)
                .await
                .unwrap()
                .iter()
                .all(|m| m.content != format!("{t} 第0条"))
        );
    }
}

#[tokio::test]
async fn prune_removes_old_non_preferences_only() {
    let (_d, s, _c) = store().await;
    let now = t0();
    let old = now - Duration::days(91);
    let edge = now - Duration::days(89);
    s.save(NewMemory::new(MemoryType::Preference, "老偏好：不做ST").at(old))
        .await
        .unwrap();
    s.save(NewMemory::new(MemoryType::Session, "老会话").at(old))
        .await
        .unwrap();
    s.save(NewMemory::new(MemoryType::MarketView, "老观点").at(old))
        .await
        .unwrap();
    s.save(NewMemory::new(MemoryType::Decision, "较新的决策").at(edge))
        .await
        .unwrap();
    assert_eq!(s.prune(now).await.unwrap(), 2);
    let left = s.list(None, 10).await.unwrap();
    assert_eq!(contents(&left), vec!["较新的决策", "老偏好：不做ST"]);
    assert!(
        s.search("会话", 10).await.unwrap().is_empty(),
        "FTS in sync after prune"
    );
}

#[tokio::test]
async fn cli_operations_validate_and_report() {
    let (_d, s, _c) = store().await;
    let err = s.add("persona", "x").await.unwrap_err().to_string();
    assert!(
        err.contains("valid types: preference, session, stock_opinion, decision, market_view"),
        "{err}"
    );
    assert!(matches!(
        s.add("session", "   ").await,
        Err(MemoryError::EmptyContent)
    ));

    let m = s
        .add("stock_opinion", "看好600519的白酒龙头地位")
        .await
        .unwrap();
    assert_eq!(m.memory_type, MemoryType::StockOpinion);
    assert_eq!(m.created_at, t0());

    let u = s.update(m.id, "看空000858，五粮液破位").await.unwrap();
    assert_eq!(u.codes, vec!["000858"]);
    assert!(
        s.search("600519", 10).await.unwrap().is_empty(),
        "old tokens left the index"
    );
    assert!(s.search("茅台", 10).await.unwrap().is_empty());
    assert_eq!(s.search("五粮液", 10).await.unwrap()[0].id, m.id);

    s.delete(m.id).await.unwrap();
    assert!(matches!(s.delete(m.id).await, Err(MemoryError::NotFound(id)) if id == m.id));
    assert!(matches!(
        s.update(m.id, "x").await,
        Err(MemoryError::NotFound(_))
    ));
    assert!(s.search("五粮液", 10).await.unwrap().is_empty());
    assert_eq!(MemoryError::NotFound(7).to_string(), "memory #7 not found");
}

#[tokio::test]
async fn list_filters_by_type_newest_first_with_limit() {
    let (_d, s, clock) = store().await;
    for i in 0..5 {
        clock.advance(std::time::Duration::from_secs(3600));
        s.save(NewMemory::new(MemoryType::Session, format!("会话{i}")))
            .await
            .unwrap();
        s.save(NewMemory::new(MemoryType::Preference, format!("偏好{i}")))
            .await
            .unwrap();
    }
    assert_eq!(
        contents(&s.list(Some(MemoryType::Preference), 3).await.unwrap()),
        vec!["偏好4", "偏好3", "偏好2"]
    );
    assert_eq!(s.list(None, 100).await.unwrap().len(), 10);
}

#[tokio::test]
async fn migrations_are_idempotent_and_tolerate_other_crates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wyckoff.db");
    let pool = open_pool(&path).await.unwrap();
    // another crate's migration recorded in the same table
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
         VALUES (1, 'market', 1, x'00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let pool = open_pool(&path).await.unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}
