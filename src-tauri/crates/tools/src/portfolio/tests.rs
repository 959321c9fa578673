#![allow(clippy::unwrap_used, clippy::expect_used)]

use wyckoff_market::MarketConfig;
use wyckoff_market::portfolio::{ERR_BUY_DT_INVALID, ERR_CASH, ERR_SHARES};

use super::*;

/// What `apply` refused, as the variant, the message and the counts the tool reports.
fn refusal(r: Result<Updated, UpdateError>) -> PortfolioRefusal {
    match r {
        Err(UpdateError::Refused(refusal)) => refusal,
        other => panic!("not a refusal: {other:?}"),
    }
}

/// Every way an edit is refused comes back typed, its message the one the tool's answer
/// carries as `error`, and writes nothing; a call without an action is the caller's error.
#[tokio::test]
async fn refused_edits_are_typed_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(tmp.path()))
        .await
        .unwrap();
    let item = |code: &str, shares: i64, buy_dt: &str| json!({"code": code, "shares": shares, "cost_price": 10.0, "buy_dt": buy_dt});
    let too_many: Vec<Value> = (0..=MAX_BATCH)
        .map(|i| json!({"code": format!("{:06}", 600000 + i)}))
        .collect();
    let cases = [
        (
            json!({"action": "add", "items": []}),
            PortfolioRefusal::EmptyBatch,
            ERR_ITEMS_EMPTY,
            0,
        ),
        (
            json!({"action": "remove", "items": too_many}),
            PortfolioRefusal::BatchTooLarge {
                items: MAX_BATCH + 1,
            },
            ERR_BATCH_TOO_LARGE,
            MAX_BATCH + 1,
        ),
        (
            json!({"action": "set_cash", "items": [{"code": "000001"}]}),
            PortfolioRefusal::CashBatch { items: 1 },
            ERR_BATCH_ACTION,
            1,
        ),
        (
            json!({"action": "set_cash", "free_cash": -1}),
            PortfolioRefusal::Invalid(ERR_CASH.into()),
            ERR_CASH,
            1,
        ),
        (
            json!({"action": "add", "items": [
                item("000001", 100, "2020-01-02"),
                item("600519", 0, "2020-01-02"),
                item("601318", 10, "2020-02-30"),
            ]}),
            PortfolioRefusal::Items(vec![
                ItemFailure {
                    index: 1,
                    code: "600519".into(),
                    message: ERR_SHARES.into(),
                },
                ItemFailure {
                    index: 2,
                    code: "601318".into(),
                    message: ERR_BUY_DT_INVALID.into(),
                },
            ]),
            ERR_SHARES,
            2,
        ),
    ];
    for (args, want, message, failed) in cases {
        let got = refusal(apply(&md, &args).await);
        assert_eq!(got, want, "{args}");
        assert_eq!(got.to_string(), message, "{args}");
        assert_eq!(got.failed_count(), failed, "{args}");
        let answer = update(&md, &args).await.unwrap();
        assert_eq!(answer["error"], message, "{args}");
        assert_eq!(answer["written"], false, "{args}");
        assert_eq!(answer["failed_count"], failed, "{args}");
        assert_eq!(
            answer["failures"],
            serde_json::to_value(got.failures()).unwrap()
        );
    }
    assert!(md.portfolio().view().await.unwrap().positions.is_empty());
    assert_eq!(md.portfolio().view().await.unwrap().free_cash, 0.0);
    match apply(&md, &json!({"code": "000001"})).await {
        Err(UpdateError::Failed(ToolError::InvalidArgs(m))) => assert!(m.contains("action"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// A written batch says what it wrote, item by item (each code as given), and the
/// portfolio after it.
#[tokio::test]
async fn a_written_batch_lists_its_items_and_the_portfolio_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let md = MarketData::open_with(MarketConfig::offline(tmp.path()))
        .await
        .unwrap();
    let args = json!({"action": "add", "items": [
        {"code": "000001", "shares": 100, "cost_price": 12.5, "buy_dt": "2020-01-02"},
        {"code": "sh600519", "shares": 10, "cost_price": 1500, "buy_dt": "20200102"},
    ]});
    let done = apply(&md, &args).await.unwrap();
    assert_eq!(done.message, "批量add成功 2 只");
    assert_eq!(
        done.items.as_deref(),
        Some(
            [
                "add 000001 100股".to_owned(),
                "add sh600519 10股".to_owned()
            ]
            .as_slice()
        )
    );
    assert_eq!(done.view, md.portfolio().view().await.unwrap());
    assert_eq!(done.view.positions.len(), 2);
    let one = apply(&md, &json!({"action": "remove", "code": "000001"}))
        .await
        .unwrap();
    assert_eq!(one.items, None);
    assert_eq!(one.view.position_count, 1);
}
