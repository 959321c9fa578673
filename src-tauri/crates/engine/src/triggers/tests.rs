use super::*;
use crate::indicators::test_support::from_closes;
use crate::trading_range::tests::box_closes;

fn set(b: &mut Bar, open: f64, high: f64, low: f64, close: f64, volume: f64) {
    b.open = open;
    b.high = high;
    b.low = low;
    b.close = close;
    b.volume = volume;
    b.amount = close * volume;
}

fn fired(v: &[Trigger], k: TriggerKind) -> bool {
    v.iter().any(|t| t.kind == k)
}

/// A 70-bar box around 10..11 whose last bar undercuts support and closes back inside.
fn spring_case(last_volume: f64, last_close: f64) -> Vec<Bar> {
    let mut bars = from_closes(&box_closes(70), 1000.0);
    let n = bars.len();
    bars[n - 2].volume = 1000.0;
    set(
        &mut bars[n - 1],
        10.0,
        last_close.max(10.0) * 1.005,
        9.5,
        last_close,
        last_volume,
    );
    bars
}

#[test]
fn spring_fires_on_a_reclaimed_undercut_with_volume() {
    let t = detect_spring(&spring_case(3000.0, 10.2), 25.0).expect("spring");
    assert!(t.score > 0.0);
    assert_eq!(t.kind.as_str(), "Spring");
}

#[test]
fn spring_near_misses() {
    // Not enough volume (1.1× the prior 4 bars).
    assert!(detect_spring(&spring_case(1100.0, 10.2), 25.0).is_none());
    // Closes below support.
    assert!(detect_spring(&spring_case(3000.0, 9.7), 25.0).is_none());
    // Too little history.
    assert!(detect_spring(&spring_case(3000.0, 10.2)[10..], 25.0).is_none());
}

fn evr_case(ev_volume: f64, ev_pct: f64) -> Vec<Bar> {
    let mut bars = from_closes(&[10.0; 30], 1000.0);
    let n = bars.len();
    let c = 10.0 * (1.0 + ev_pct / 100.0);
    set(&mut bars[n - 2], 10.0, c * 1.02, 9.9, c, ev_volume);
    set(&mut bars[n - 1], c, c * 1.01, c * 0.99, c, 1000.0);
    bars
}

#[test]
fn evr_fires_on_effort_without_result() {
    let t = detect_evr(&evr_case(2000.0, 1.0), 25.0, Board::Main).expect("evr");
    assert!((t.score - 2.0).abs() < 1e-9);
    assert_eq!(t.dates.len(), 2);
}

#[test]
fn evr_near_misses_and_board_scale() {
    assert!(detect_evr(&evr_case(1700.0, 1.0), 25.0, Board::Main).is_none());
    // A 2.2 % day is too much result on the main board but inside ChiNext's ±2.4 %.
    assert!(detect_evr(&evr_case(2000.0, 2.2), 25.0, Board::Main).is_none());
    assert!(detect_evr(&evr_case(2000.0, 2.2), 25.0, Board::Chinext).is_some());
    // Low turnover vetoes it when known.
    let mut bars = evr_case(2000.0, 1.0);
    let n = bars.len();
    bars[n - 2].turnover = Some(1.0);
    assert!(detect_evr(&bars, 25.0, Board::Main).is_none());
}

/// 30 bars of +1 %/day, then an 11-bar window peaking on bar 3 and pulling back `depth`.
fn pullback_case(after_volume: f64, depth: f64) -> Vec<Bar> {
    let mut closes: Vec<f64> = (0..33).map(|i| 10.0 * 1.01f64.powi(i)).collect();
    let peak = closes[closes.len() - 1] * 1.01;
    closes.push(peak);
    let trough = peak * (1.0 - depth);
    for k in 1..=6 {
        closes.push(peak - (peak - trough) * k as f64 / 6.0);
    }
    closes.push(trough * 1.01);
    let mut bars = from_closes(&closes, 2000.0);
    let n = bars.len();
    for b in &mut bars[n - 7..] {
        b.volume = after_volume;
    }
    bars
}

#[test]
fn trend_pullback_fires_on_a_quiet_pullback_in_an_uptrend() {
    let t = detect_trend_pullback(&pullback_case(800.0, 0.08), 25.0, None).expect("pb");
    assert!(t.score > 0.0 && t.score < 1.0);
}

#[test]
fn trend_pullback_near_misses() {
    // Pullback on too much volume.
    assert!(detect_trend_pullback(&pullback_case(1500.0, 0.08), 25.0, None).is_none());
    // ...but a large cap is allowed 0.75.
    assert!(detect_trend_pullback(&pullback_case(1500.0, 0.08), 25.0, Some(300.0)).is_some());
    // Too deep.
    assert!(detect_trend_pullback(&pullback_case(800.0, 0.25), 25.0, None).is_none());
    // Too shallow.
    assert!(detect_trend_pullback(&pullback_case(800.0, 0.02), 25.0, None).is_none());
}

fn sos_case(pct: f64, volume: f64) -> Vec<Bar> {
    let mut bars = from_closes(&box_closes(70), 1000.0);
    let n = bars.len();
    let pc = bars[n - 2].close;
    let c = pc * (1.0 + pct / 100.0);
    let c = c.max(11.3);
    let pc = c / (1.0 + pct / 100.0);
    bars[n - 2].close = pc;
    set(&mut bars[n - 1], pc, c * 1.005, pc, c, volume);
    bars
}

#[test]
fn sos_fires_on_a_breakout_on_extreme_volume() {
    let t = detect_sos(&sos_case(7.0, 4000.0), 25.0).expect("sos");
    assert!((t.score - 4.0).abs() < 0.1);
}

#[test]
fn sos_near_misses() {
    assert!(detect_sos(&sos_case(5.0, 4000.0), 25.0).is_none());
    assert!(detect_sos(&sos_case(7.0, 2500.0), 25.0).is_none());
}

fn compression_case(recent_volume: f64) -> Vec<Bar> {
    let closes: Vec<f64> = (0..40).map(|i| 10.0 + 0.01 * i as f64).collect();
    let mut bars = from_closes(&closes, 1000.0);
    let n = bars.len();
    for b in &mut bars[..n - 5] {
        b.high = b.close * 1.02;
        b.low = b.close * 0.98;
    }
    for (k, b) in bars[n - 5..].iter_mut().enumerate() {
        let w = 0.004 - 0.0005 * k as f64;
        b.high = b.close * (1.0 + w);
        b.low = b.close * (1.0 - w);
        b.volume = recent_volume;
    }
    bars
}

#[test]
fn compression_fires_on_dry_narrow_bars() {
    let t = detect_compression(&compression_case(500.0), 25.0).expect("compression");
    assert!(t.score < 1.0);
}

#[test]
fn compression_near_miss_on_volume() {
    assert!(detect_compression(&compression_case(700.0), 25.0).is_none());
}

/// 80 bars: a base with falling swing highs, a climb over the creek, then a quiet test of MA20.
fn lps_case(test_volume: f64) -> Vec<Bar> {
    let mut closes: Vec<f64> = (0..62)
        .map(|i| 10.3 - 0.004 * i as f64 + 0.4 * ((i as f64) / 20.0 * std::f64::consts::TAU).sin())
        .collect();
    for k in 1..=15 {
        closes.push(10.3 + 0.1 * k as f64);
    }
    closes.extend([11.5, 11.45, 11.5]);
    let mut bars = from_closes(&closes, 1000.0);
    let n = bars.len();
    let ma20 = ma(&bars, 20).unwrap();
    for b in &mut bars[n - 3..] {
        b.low = ma20 * 1.005;
        b.volume = test_volume;
    }
    bars
}

#[test]
fn lps_fires_on_a_quiet_test_after_the_creek_jump() {
    let t = detect_lps(&lps_case(400.0), 25.0).expect("lps");
    assert!(t.score <= 0.65);
}

#[test]
fn lps_near_miss_on_volume() {
    assert!(detect_lps(&lps_case(900.0), 25.0).is_none());
}

#[test]
fn bias_cap_blocks_overextended_tapes() {
    // 250 bars rising: close far above MA200 → every capped trigger is off.
    let closes: Vec<f64> = (0..250).map(|i| 10.0 * 1.01f64.powi(i)).collect();
    let mut bars = from_closes(&closes, 1000.0);
    let n = bars.len();
    let pc = bars[n - 2].close;
    set(&mut bars[n - 1], pc, pc * 1.08, pc, pc * 1.07, 5000.0);
    assert!(bias_200_pct(&bars).unwrap() > 25.0);
    assert!(detect_sos(&bars, 25.0).is_none());
    assert!(detect_sos(&bars, 1000.0).is_some());
}

#[test]
fn default_config_order_and_gates() {
    let cfg = L4Config::default();
    assert!(!cfg.enable_sos && !cfg.enable_lps && !cfg.enable_compression);
    let bars = sos_case(7.0, 4000.0);
    assert!(!fired(&l4_triggers(&bars, &cfg), TriggerKind::Sos));
    assert!(fired(
        &l4_triggers(&bars, &L4Config::all_enabled(Board::Main)),
        TriggerKind::Sos
    ));
    assert_eq!(bias_cap_for_channel(Board::Main, "主升通道"), 35.0);
    assert_eq!(bias_cap_for_channel(Board::Star, "潜伏通道"), 40.0);
}

// ---- structure triggers (§15.4) ----

fn struct_case(last: (f64, f64, f64, f64, f64)) -> Vec<Bar> {
    let mut bars = from_closes(&box_closes(91), 1000.0);
    let n = bars.len();
    let (o, h, l, c, v) = last;
    bars[n - 2].close = 10.5;
    set(&mut bars[n - 1], o, h, l, c, v);
    bars
}

#[test]
fn structure_spring_and_stage_c() {
    let r = structure_triggers(&struct_case((10.0, 10.3, 9.5, 10.2, 2000.0)));
    assert!(r.trading_range.is_some());
    assert!(fired(&r.triggers, TriggerKind::Spring), "{r:?}");
    assert_eq!(r.stage, Some(Stage::AccumC));
    // Near miss: no volume.
    let r = structure_triggers(&struct_case((10.0, 10.3, 9.5, 10.2, 1000.0)));
    assert!(!fired(&r.triggers, TriggerKind::Spring));
}

#[test]
fn structure_sos_and_markup() {
    let r = structure_triggers(&struct_case((10.5, 11.4, 10.5, 11.35, 2500.0)));
    assert!(fired(&r.triggers, TriggerKind::Sos), "{r:?}");
    assert_eq!(r.stage, Some(Stage::Markup));
    let r = structure_triggers(&struct_case((10.5, 11.4, 10.5, 11.35, 1500.0)));
    assert!(!fired(&r.triggers, TriggerKind::Sos));
}

#[test]
fn structure_evr_and_lps() {
    let r = structure_triggers(&struct_case((10.3, 10.5, 10.2, 10.4, 2000.0)));
    assert!(fired(&r.triggers, TriggerKind::Evr), "{r:?}");
    let r = structure_triggers(&struct_case((10.3, 10.5, 10.2, 10.4, 1700.0)));
    assert!(!fired(&r.triggers, TriggerKind::Evr));
    // LPS: last three bars quiet, dipping into the lower third.
    let mut bars = struct_case((10.2, 10.3, 10.0, 10.2, 300.0));
    let n = bars.len();
    bars[n - 2].volume = 300.0;
    bars[n - 3].volume = 300.0;
    let r = structure_triggers(&bars);
    assert!(fired(&r.triggers, TriggerKind::Lps), "{r:?}");
    assert_eq!(r.stage, Some(Stage::AccumC));
}

#[test]
fn structure_needs_a_range() {
    let closes: Vec<f64> = (0..91).map(|i| 10.0 * 1.01f64.powi(i)).collect();
    let r = structure_triggers(&from_closes(&closes, 1000.0));
    assert!(r.trading_range.is_none() && r.triggers.is_empty() && r.stage.is_none());
}
