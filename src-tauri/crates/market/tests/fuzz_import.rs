//! CSV import rows, fuzzed: any file text either parses into sane bars
//! (ascending, high ≥ low, positive prices, no future dates) or is rejected with each bad
//! row named by its line — never a panic, never a half-imported file; well-formed rows
//! round-trip their numbers. 512 cases per property (`PROPTEST_CASES` for more).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use wyckoff_market::import::parse_csv;

const TODAY: u32 = 20261203;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

fn row() -> impl Strategy<Value = String> {
    prop_oneof![
        // plausible rows with hostile values here and there
        (
            prop_oneof![
                Just("2024-01-02".to_owned()),
                Just("20240103".to_owned()),
                Just("2099-01-01".to_owned()),
                Just("2024-13-40".to_owned()),
                "[0-9-]{0,10}"
            ],
            prop_oneof![
                Just("600519".to_owned()),
                Just("sh600519".to_owned()),
                Just("000001.SZ".to_owned()),
                "[0-9a-z.]{0,9}"
            ],
            prop_oneof![
                Just("10.5".to_owned()),
                Just("-1".to_owned()),
                Just("NaN".to_owned()),
                Just("inf".to_owned()),
                Just("".to_owned()),
                "[0-9.e+-]{0,8}"
            ],
            prop_oneof![
                Just("1000".to_owned()),
                Just("-5".to_owned()),
                Just("1e400".to_owned()),
                "[0-9.]{0,6}"
            ],
        )
            .prop_map(|(d, c, p, v)| format!("{d},{c},{p},{p},{p},{p},{v}")),
        any::<String>().prop_map(|s| s.replace('\n', " ")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_file_imports_sane_bars_or_names_its_bad_rows(rows in prop::collection::vec(row(), 0..12)) {
        let text = format!("date,code,open,high,low,close,volume\n{}", rows.join("\n"));
        match parse_csv(&text, TODAY) {
            Ok(parsed) => {
                for (_, bars) in &parsed.series {
                    for w in bars.windows(2) {
                        prop_assert!(w[0].date < w[1].date);
                    }
                    for b in bars {
                        prop_assert!(b.date <= TODAY);
                        prop_assert!(b.low > 0.0 && b.high >= b.low && b.close.is_finite());
                        prop_assert!(b.volume >= 0.0 && b.volume.is_finite());
                    }
                }
            }
            Err(bad) => {
                prop_assert!(!bad.is_empty());
                for b in &bad {
                    prop_assert!(b.line <= rows.len() + 1, "{:?}", b);
                    prop_assert!(!b.message.trim().is_empty());
                }
            }
        }
    }

    #[test]
    fn well_formed_rows_round_trip(
        prices in prop::collection::vec((1u32..100_000, 0u32..50, 0u32..50, 1u64..10_000_000), 1..20),
    ) {
        let mut text = String::from("date,code,open,high,low,close,volume\n");
        let mut want = Vec::new();
        for (i, (base, up, down, vol)) in prices.iter().enumerate() {
            let low = *base as f64 / 100.0;
            let high = low + (*up + *down) as f64 / 100.0;
            let (open, close) = (low + *down as f64 / 100.0, high - *up as f64 / 200.0);
            let day = 20240101 + i as u32; // 2024-01-01 .. 2024-01-20: real calendar days
            text.push_str(&format!("{day},600519,{open:.2},{high:.2},{low:.2},{close:.2},{vol}\n"));
            want.push((day, (high * 100.0).round(), (low * 100.0).round(), *vol as f64));
        }
        let parsed = parse_csv(&text, TODAY).unwrap();
        let bars = &parsed.series[0].1;
        prop_assert_eq!(bars.len(), want.len());
        for (b, (day, high, low, vol)) in bars.iter().zip(&want) {
            prop_assert_eq!(b.date, *day);
            prop_assert_eq!((b.high * 100.0).round(), *high);
            prop_assert_eq!((b.low * 100.0).round(), *low);
            prop_assert_eq!(b.volume, *vol);
        }
    }
}
