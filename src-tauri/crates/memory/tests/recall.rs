mod common;

use chrono::Duration;
use common::{store, t0};
use wyckoff_memory::{MemoryType, NewMemory, Recall};

fn recalled(r: &Recall) -> Vec<&str> {
    r.memories
        .iter()
        .map(|m| m.memory.content.as_str())
        .collect()
}

fn prefs(r: &Recall) -> Vec<&str> {
    r.preferences
        .iter()
        .map(|m| m.memory.content.as_str())
        .collect()
}

#[tokio::test]
async fn chinese_two_character_queries_recall_memories() {
    let (_d, s, _c) = store().await;
    let now = t0();
    s.save(
        NewMemory::new(MemoryType::StockOpinion, "贵州茅台处于吸筹末期")
            .at(now - Duration::days(1)),
    )
    .await
    .unwrap();
    s.save(
        NewMemory::new(MemoryType::MarketView, "白酒板块资金持续流出").at(now - Duration::days(2)),
    )
    .await
    .unwrap();
    s.save(NewMemory::new(MemoryType::Session, "讨论过银行股分红策略").at(now - Duration::days(3)))
        .await
        .unwrap();

    let r = s.recall("茅台").await.unwrap();
    assert_eq!(recalled(&r), vec!["贵州茅台处于吸筹末期"]);
    let sig = r.memories[0].signals;
    assert!(sig.fts.is_some() && sig.keyword && !sig.code, "{sig:?}");

    let r = s.recall("白酒还能买吗").await.unwrap();
    assert_eq!(recalled(&r), vec!["白酒板块资金持续流出"]);
    assert_eq!(r.query.keywords, vec!["白酒", "酒还", "还能", "能买"]);

    assert!(s.recall("啤酒").await.unwrap().memories.is_empty());
    assert!(s.recall("你好").await.unwrap().is_empty());
    assert_eq!(s.recall("").await.unwrap().block, "");
}

#[tokio::test]
async fn codes_and_mixed_english_recall() {
    let (_d, s, _c) = store().await;
    let now = t0();
    s.save(
        NewMemory::new(MemoryType::Decision, "宁德时代等回踩再买")
            .with_codes(["300750"])
            .at(now - Duration::days(1)),
    )
    .await
    .unwrap();
    s.save(
        NewMemory::new(
            MemoryType::StockOpinion,
            "600519出现Spring信号，Wyckoff阶段C",
        )
        .at(now),
    )
    .await
    .unwrap();
    s.save(NewMemory::new(MemoryType::Session, "讨论了RSI背离").at(now))
        .await
        .unwrap();

    // code only in the codes column: found by the exact code channel
    let r = s.recall("300750 现在怎么样").await.unwrap();
    assert_eq!(recalled(&r), vec!["宁德时代等回踩再买"]);
    assert!(r.memories[0].signals.code);
    // explicit codes are indexed too, so it is also the best FTS hit (1.0), one day old
    assert_eq!(r.memories[0].signals.fts, Some(1.0));
    assert!((r.memories[0].score - (-1.0_f64 / 30.0).exp2()).abs() < 1e-9);

    let r = s.recall("看看600519").await.unwrap();
    assert_eq!(recalled(&r), vec!["600519出现Spring信号，Wyckoff阶段C"]);
    let r = s.recall("spring signal on wyckoff?").await.unwrap();
    assert_eq!(recalled(&r), vec!["600519出现Spring信号，Wyckoff阶段C"]);
    // a memory matching only the code keeps the 0.85 floor when others match more terms
    s.save(NewMemory::new(MemoryType::Session, "300750宁德时代回踩企稳再加仓").at(now))
        .await
        .unwrap();
    let r = s.recall("300750 回踩企稳").await.unwrap();
    assert_eq!(recalled(&r)[0], "300750宁德时代回踩企稳再加仓");
    let code_only = &r.memories[1];
    assert_eq!(code_only.memory.content, "宁德时代等回踩再买");
    assert!(code_only.signals.fts.unwrap() < 0.85);
    assert!((code_only.score - 0.85 * (-1.0_f64 / 30.0).exp2()).abs() < 1e-9);

    let r = s.recall("RSI背离还有效吗").await.unwrap();
    assert_eq!(recalled(&r), vec!["讨论了RSI背离"]);
}

#[tokio::test]
async fn decay_ranks_fresh_memories_first_and_preferences_never_decay() {
    let (_d, s, _c) = store().await;
    let now = t0();
    // same match strength, different ages
    for (days, text) in [(60, "茅台旧观点"), (0, "茅台新观点"), (30, "茅台中期观点")]
    {
        s.save(NewMemory::new(MemoryType::StockOpinion, text).at(now - Duration::days(days)))
            .await
            .unwrap();
    }
    s.save(
        NewMemory::new(MemoryType::Preference, "茅台只在回调时买").at(now - Duration::days(400)),
    )
    .await
    .unwrap();
    let r = s.recall("茅台").await.unwrap();
    assert_eq!(
        recalled(&r),
        vec!["茅台新观点", "茅台中期观点", "茅台旧观点"]
    );
    let scores: Vec<f64> = r.memories.iter().map(|m| m.score).collect();
    assert!((scores[1] / scores[0] - 0.5).abs() < 0.05, "{scores:?}");
    assert!((scores[2] / scores[0] - 0.25).abs() < 0.05, "{scores:?}");
    assert_eq!(prefs(&r), vec!["茅台只在回调时买"]);
    assert!(r.preferences[0].score > 0.99, "400 days old, no decay");

    // the same store, 60 days later: decay follows the injected clock
    let later = s.recall_at("茅台", now + Duration::days(60)).await.unwrap();
    assert!((later.memories[0].score - r.memories[0].score * 0.25).abs() < 1e-6);
    assert!(later.preferences[0].score > 0.99);
}

#[tokio::test]
async fn top_eight_memories_and_five_preferences_in_seed_format() {
    let (_d, s, clock) = store().await;
    for i in 0..12 {
        clock.advance(std::time::Duration::from_secs(3600));
        s.save(NewMemory::new(
            MemoryType::Session,
            format!("白酒讨论第{i}次"),
        ))
        .await
        .unwrap();
    }
    for i in 0..7 {
        clock.advance(std::time::Duration::from_secs(3600));
        s.save(NewMemory::new(
            MemoryType::Preference,
            format!("偏好规则{i}"),
        ))
        .await
        .unwrap();
    }
    clock.advance(std::time::Duration::from_secs(3600));
    s.save(NewMemory::new(
        MemoryType::Preference,
        "不碰白酒以外的消费股",
    ))
    .await
    .unwrap();
    // an older, unrelated preference: matched preference comes first, then the newest
    let r = s.recall("白酒").await.unwrap();
    assert_eq!(r.memories.len(), 8);
    assert_eq!(r.memories[0].memory.content, "白酒讨论第11次");
    assert_eq!(
        prefs(&r),
        vec![
            "不碰白酒以外的消费股",
            "偏好规则6",
            "偏好规则5",
            "偏好规则4",
            "偏好规则3"
        ]
    );
    assert!(
        r.block
            .starts_with("# 用户偏好\n- 不碰白酒以外的消费股\n- 偏好规则6\n"),
        "{}",
        r.block
    );
    // t0 + 12 h is 22:00 Beijing on 05-01
    assert!(
        r.block.contains(
            "\n\n# 历史记忆\n- [2026-05-01] 白酒讨论第11次\n- [2026-05-01] 白酒讨论第10次\n"
        ),
        "{}",
        r.block
    );
    assert_eq!(r.block.lines().filter(|l| l.starts_with("- [")).count(), 8);
    assert_eq!(r.block.lines().count(), 1 + 5 + 1 + 1 + 8);
}

#[tokio::test]
async fn stale_strong_match_loses_to_fresh_keyword_match() {
    let (_d, s, _c) = store().await;
    let now = t0();
    s.save(
        NewMemory::new(MemoryType::MarketView, "光伏板块出现Spring，光伏龙头放量")
            .at(now - Duration::days(75)),
    )
    .await
    .unwrap();
    s.save(NewMemory::new(MemoryType::Session, "用户问过光伏").at(now))
        .await
        .unwrap();
    let r = s.recall("光伏板块Spring").await.unwrap();
    assert_eq!(
        recalled(&r),
        vec!["用户问过光伏", "光伏板块出现Spring，光伏龙头放量"]
    );
}
