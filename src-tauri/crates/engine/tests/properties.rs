//! Property tests: no panic and no NaN/inf in any output, on any finite input.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use proptest::prelude::*;
use wyckoff_engine::board::Board;
use wyckoff_engine::dates::{civil_from_days, days_from_civil};
use wyckoff_engine::exits::{ExitConfig, exit_signal};
use wyckoff_engine::{
    Bar, Breadth, Holding, L4Config, Stage, accum_stage, diagnose, identify_trading_range,
    l4_triggers, market_regime, structure_triggers, wyckoff_structure,
};

use common::assert_all_finite;

/// Dates: ascending, with random gaps of 1..=12 calendar days (weekends, holidays, suspensions).
fn dates(gaps: &[u8]) -> Vec<u32> {
    let mut d = days_from_civil(20050104).unwrap_or(0);
    gaps.iter()
        .map(|g| {
            d += i64::from(*g);
            civil_from_days(d)
        })
        .collect()
}

/// Plausible tapes: a random walk with consistent OHLC, zero-volume days, flat stretches and
/// limit-size jumps.
fn walk_bars(max_len: usize) -> impl Strategy<Value = Vec<Bar>> {
    prop::collection::vec(
        (
            1u8..=12,
            -0.11f64..0.11,
            0.0f64..0.06,
            0.0f64..0.06,
            prop_oneof![Just(0.0), 0.0f64..1e9],
            any::<bool>(),
        ),
        0..max_len,
    )
    .prop_map(|rows| {
        let gaps: Vec<u8> = rows.iter().map(|r| r.0).collect();
        let ds = dates(&gaps);
        let mut close = 10.0;
        rows.iter()
            .zip(ds)
            .map(|(&(_, r, up, down, vol, flat), date)| {
                let open = close;
                if !flat {
                    close = (close * (1.0 + r)).max(0.01);
                }
                let (hi, lo) = if flat {
                    (open, open)
                } else {
                    (open.max(close) * (1.0 + up), open.min(close) * (1.0 - down))
                };
                Bar {
                    date,
                    open,
                    high: hi,
                    low: lo,
                    close,
                    volume: vol,
                    amount: vol * close,
                    turnover: None,
                }
            })
            .collect()
    })
}

/// Anything finite: zero and negative prices, high < low, huge and tiny values.
fn wild_bars(max_len: usize) -> impl Strategy<Value = Vec<Bar>> {
    let px = prop_oneof![Just(0.0), Just(1.0), -1e6f64..1e6, 1e-9f64..1e-6];
    prop::collection::vec(
        (
            1u8..=5,
            px.clone(),
            px.clone(),
            px.clone(),
            px,
            prop_oneof![Just(0.0), -1e12f64..1e12],
            prop::option::of(-5.0f64..50.0),
        ),
        0..max_len,
    )
    .prop_map(|rows| {
        let gaps: Vec<u8> = rows.iter().map(|r| r.0).collect();
        let ds = dates(&gaps);
        rows.iter()
            .zip(ds)
            .map(
                |(&(_, open, high, low, close, volume, turnover), date)| Bar {
                    date,
                    open,
                    high,
                    low,
                    close,
                    volume,
                    amount: volume,
                    turnover,
                },
            )
            .collect()
    })
}

fn check_everything(bars: &[Bar], bench: &[Bar], cost: Option<f64>, buy_back: usize) {
    let buy_dt = bars.len().checked_sub(buy_back + 1).map(|i| bars[i].date);
    let h = Holding { cost, buy_dt };
    for (code, b) in [
        ("000001", None),
        ("300027", Some(bench)),
        ("688001", Some(bench)),
    ] {
        let d = diagnose(code, "测试", bars, &h, b);
        assert_all_finite("diagnose", &format!("{d:?}"));
        assert!(["🟢健康", "🟡警戒", "🔴危险"].contains(&d.health.as_str()));
        assert!(!d.diagnosis_brief.direct_buy_allowed);
        let json = serde_json::to_string(&d).expect("serialises");
        assert!(!json.is_empty());
    }
    assert_all_finite("structure", &format!("{:?}", structure_triggers(bars)));
    assert_all_finite("range", &format!("{:?}", identify_trading_range(bars)));
    assert_all_finite(
        "l4",
        &format!(
            "{:?}",
            l4_triggers(bars, &L4Config::all_enabled(Board::Star))
        ),
    );
    let _ = accum_stage(bars);
    for st in [None, Some(Stage::AccumB), Some(Stage::Markup)] {
        let cfg = ExitConfig {
            upthrust_min_bars: 0,
            distribution_min_bars: 0,
            ..ExitConfig::default()
        };
        assert_all_finite("exit", &format!("{:?}", exit_signal(bars, st, &cfg)));
    }
    assert_all_finite("phases", &format!("{:?}", wyckoff_structure(bars)));
    let breadth = Breadth {
        pct_above_ma20: Some(50.0),
        up_ratio_pct: Some(40.0),
        ..Breadth::default()
    };
    assert_all_finite(
        "regime",
        &format!("{:?}", market_regime(bars, Some(bench), Some(&breadth))),
    );
    assert_all_finite("regime", &format!("{:?}", market_regime(bars, None, None)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn plausible_tapes_never_panic_or_produce_nan(
        bars in walk_bars(320),
        bench in walk_bars(320),
        cost in prop::option::of(prop_oneof![Just(0.0), 0.01f64..100.0]),
        buy_back in 0usize..400,
    ) {
        check_everything(&bars, &bench, cost, buy_back);
    }

    #[test]
    fn quantile_matches_a_sorted_reference(xs in prop::collection::vec(-1e6f64..1e6, 1..80), q in 0.0f64..=1.0) {
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let pos = q * (sorted.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        let want = sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64);
        let got = wyckoff_engine::indicators::quantile(&xs, q).unwrap();
        prop_assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{got} vs {want}");
    }

    #[test]
    fn wild_finite_input_never_panics_or_produces_nan(
        bars in wild_bars(300),
        bench in wild_bars(80),
        cost in prop::option::of(-10.0f64..1e6),
        buy_back in 0usize..300,
    ) {
        check_everything(&bars, &bench, cost, buy_back);
    }
}

#[test]
fn edge_histories() {
    let bar = |date: u32, c: f64, v: f64| Bar {
        date,
        open: c,
        high: c,
        low: c,
        close: c,
        volume: v,
        amount: 0.0,
        turnover: None,
    };
    let flat: Vec<Bar> = dates(&[1; 300])
        .into_iter()
        .map(|d| bar(d, 10.0, 0.0))
        .collect();
    let zeros: Vec<Bar> = dates(&[1; 300])
        .into_iter()
        .map(|d| bar(d, 0.0, 0.0))
        .collect();
    for bars in [
        &[][..],
        &flat[..1],
        &flat[..2],
        &flat[..61],
        &flat[..],
        &zeros[..],
    ] {
        check_everything(bars, &flat, Some(10.0), 5);
        check_everything(bars, &[], None, 0);
    }
}

#[test]
fn the_finiteness_check_can_fail() {
    for bad in ["Some(NaN)", "x: inf,", "[1.0, -inf]", "Some(inf)"] {
        assert!(
            std::panic::catch_unwind(|| assert_all_finite("t", bad)).is_err(),
            "{bad}"
        );
    }
    assert_all_finite("t", "name: \"info\", Some(1.5)");
}
