//! Market-source JSON decoders under hostile replies. Any JSON, and
//! vendor-shaped replies with hostile fields (NaN, inf, negatives, bad dates, wrong
//! types), give bars that pass the sanity check, sorted, unique, inside the requested
//! range — or a clear error. Market numbers are never invented from garbage.
//! Cases per property: 512; `PROPTEST_CASES=N` for more.

#![allow(clippy::unwrap_used, reason = "test helpers outside #[test] fns")]

use proptest::prelude::*;
use serde_json::{Value, json};
use wyckoff_market::StockCode;
use wyckoff_market::sanity::check_bar;
use wyckoff_market::sources::{Adjust, BarRequest, Fetched, eastmoney, tencent, tickflow, tushare};

const START: u32 = 20240101;
const END: u32 = 20240331;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn req() -> BarRequest {
    BarRequest {
        symbol: StockCode::parse("600519").unwrap().symbol(),
        start: START,
        end: END,
        adjust: Adjust::Forward,
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("data".to_string()),
                    Just("code".to_string()),
                    Just("rc".to_string()),
                    Just("klines".to_string()),
                    Just("sh600519".to_string()),
                    Just("qfqday".to_string()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A number as a vendor might spell it, hostile spellings included.
fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (1u32..200_000).prop_map(|c| format!("{}.{:02}", c / 100, c % 100)),
        1 => Just("nan".to_string()),
        1 => Just("NaN".to_string()),
        1 => Just("inf".to_string()),
        1 => Just("-inf".to_string()),
        1 => Just("1e308".to_string()),
        1 => Just("-5.00".to_string()),
        1 => Just("0".to_string()),
        1 => Just(String::new()),
        1 => Just("-".to_string()),
    ]
}

fn date() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0u32..120).prop_map(|d| {
            let (m, day) = (1 + d / 40, 1 + d % 28);
            format!("2024-{m:02}-{day:02}")
        }),
        1 => Just("2023-12-29".to_string()),
        1 => Just("2024-02-30".to_string()),
        1 => Just("2024-13-01".to_string()),
        1 => Just("not a date".to_string()),
        1 => Just("20240105".to_string()),
    ]
}

fn row() -> impl Strategy<Value = Vec<String>> {
    (date(), proptest::collection::vec(field(), 6..11)).prop_map(|(d, mut f)| {
        f.insert(0, d);
        f
    })
}

/// What every decoder must guarantee about what it returns.
fn assert_fetched(result: &Result<Fetched, impl std::fmt::Display>) -> Result<(), TestCaseError> {
    match result {
        Ok(f) => {
            for b in &f.bars {
                prop_assert_eq!(check_bar(b), None, "insane bar passed: {:?}", b);
                prop_assert!((START..=END).contains(&b.date), "bar outside range: {b:?}");
            }
            for w in f.bars.windows(2) {
                prop_assert!(w[0].date < w[1].date, "unsorted or duplicate: {:?}", w);
            }
        }
        Err(e) => prop_assert!(e.to_string().len() > 3, "unclear error {e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// Any JSON at all, through every decoder.
    #[test]
    fn any_json_through_every_decoder(v in json_value()) {
        let r = req();
        assert_fetched(&eastmoney::parse_klines(&v, &r))?;
        let _ = eastmoney::parse_list_page(&v);
        assert_fetched(&tencent::parse_fqkline(&v, &r))?;
        assert_fetched(&tickflow::parse_klines(&v, &r))?;
        if let Ok(table) = tushare::parse_table(&v) {
            assert_fetched(&tushare::to_bars(&table, None, &r))?;
            let _ = tushare::to_factors(&table);
            let _ = tushare::to_stock_list(&table);
        }
    }

    /// Eastmoney-shaped replies with hostile rows.
    #[test]
    fn eastmoney_hostile_rows(rows in proptest::collection::vec(row(), 0..30)) {
        let lines: Vec<String> = rows.iter().map(|r| r.join(",")).collect();
        let v = json!({"rc": 0, "data": {"code": "600519", "klines": lines}});
        let result = eastmoney::parse_klines(&v, &req());
        assert_fetched(&result)?;
    }

    /// Clean rows are all kept, with their exact numbers: nothing good is lost.
    #[test]
    fn eastmoney_clean_rows_are_all_kept(
        days in proptest::collection::btree_set(0u32..84, 1..30),
        low_cents in 100u32..100_000,
        spread in 0u32..500,
    ) {
        let low = f64::from(low_cents) / 100.0;
        let high = f64::from(low_cents + spread) / 100.0;
        let lines: Vec<String> = days
            .iter()
            .map(|d| {
                let (m, day) = (1 + d / 28, 1 + d % 28);
                format!("2024-{m:02}-{day:02},{low},{high},{high},{low},1200,99000.5,1,1,1,0.8")
            })
            .collect();
        let v = json!({"rc": 0, "data": {"code": "600519", "klines": lines}});
        let fetched = eastmoney::parse_klines(&v, &req());
        assert_fetched(&fetched)?;
        let fetched = fetched.unwrap();
        prop_assert_eq!(fetched.bars.len(), days.len());
        prop_assert!(fetched.rejected.is_empty(), "{:?}", fetched.rejected);
        for b in &fetched.bars {
            prop_assert_eq!((b.open, b.high, b.low, b.close), (low, high, low, high));
            prop_assert_eq!(b.volume, 120_000.0);
        }
    }

    /// Tencent-shaped replies with hostile rows (strings and numbers mixed).
    #[test]
    fn tencent_hostile_rows(rows in proptest::collection::vec(row(), 0..30), as_numbers in any::<bool>()) {
        let rows: Vec<Value> = rows
            .iter()
            .map(|r| {
                let cells: Vec<Value> = r
                    .iter()
                    .enumerate()
                    .map(|(i, s)| match (i, as_numbers, s.parse::<f64>()) {
                        (1.., true, Ok(x)) => Value::from(x),
                        _ => Value::String(s.clone()),
                    })
                    .collect();
                Value::Array(cells)
            })
            .collect();
        let v = json!({"code": 0, "data": {"sh600519": {"qfqday": rows}}});
        assert_fetched(&tencent::parse_fqkline(&v, &req()))?;
    }

    /// Tushare-shaped tables with hostile cells.
    #[test]
    fn tushare_hostile_rows(rows in proptest::collection::vec(row(), 1..30)) {
        let items: Vec<Value> = rows
            .iter()
            .map(|r| {
                let d = r[0].replace('-', "");
                json!(["600519.SH", d, r[1], r[3], r[4], r[2], r[5], r[6]])
            })
            .collect();
        let v = json!({"code": 0, "msg": "", "data": {
            "fields": ["ts_code", "trade_date", "open", "high", "low", "close", "vol", "amount"],
            "items": items}});
        let table = tushare::parse_table(&v).unwrap();
        assert_fetched(&tushare::to_bars(&table, None, &req()))?;
    }
}
