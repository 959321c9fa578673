use super::*;
use crate::indicators::test_support::from_closes;

const GOLDEN: &str = "🔴危险 000001 平安银行 | 盈亏: -13.04%
  成本: 12.32 | 现价: 10.71
  均线: 空头排列 | MA200乖离: -27.7%
  通道: 未入选 | 轨道: Unknown
  退出信号: stop_loss | 触发价: 11.91 | 主升趋势破位(跌破MA50或高位回撤)(深度破位)
  止损(-7%): 11.46 → 已穿止损
  目标价(技术位参考): 保守11.74 / 乐观15.89
  量比(20/60): 0.90 | 60日振幅: 25.0% | 近10日: -12.3% | 近20日: -10.7%
  理由: 已穿止损线(-7%), 结构止损（从高点回撤>10%）, 均线空头排列, 浮亏超过5%";

/// Volume that rises over time so no "dry volume" flag fires by accident.
fn bars_from(closes: &[f64]) -> Vec<Bar> {
    let mut bars = from_closes(closes, 1000.0);
    for (i, b) in bars.iter_mut().enumerate() {
        b.volume = 1000.0 + 5.0 * i as f64;
    }
    bars
}

fn downtrend() -> Vec<Bar> {
    let closes: Vec<f64> = (0..300).map(|i| 20.0 * 0.997f64.powi(i)).collect();
    bars_from(&closes)
}

fn uptrend() -> Vec<Bar> {
    let closes: Vec<f64> = (0..300).map(|i| 10.0 * 1.0015f64.powi(i)).collect();
    bars_from(&closes)
}

#[test]
fn formatted_text_matches_the_golden_example() {
    let mut d = diagnose(
        "000001",
        "平安银行",
        &downtrend(),
        &Holding::default(),
        None,
    );
    d.health = HEALTH_DANGER.to_string();
    d.cost = Some(12.32);
    d.latest_close = Some(10.71);
    // The reference printed rounded cost/close; its P&L came from the unrounded close.
    d.pnl_pct = Some(-13.04);
    d.ma_pattern = "空头排列".to_string();
    d.ma200_bias_pct = Some(-27.7);
    d.l2_channel = "未入选".to_string();
    d.track = Track::Unknown;
    d.accum_stage = None;
    d.l4_triggers.clear();
    d.wyckoff.active = None;
    d.exit_detail = Some(ExitSignal {
        signal: ExitKind::StopLoss,
        trigger_price: Some(11.906),
        reason: "主升趋势破位(跌破MA50或高位回撤)(深度破位)".to_string(),
        dates: vec![],
    });
    d.stop_loss_price = Some(12.32 * COST_STOP_FRAC);
    d.stop_loss_status = "已穿止损".to_string();
    d.targets.conservative = Some(11.74);
    d.targets.aggressive = Some(15.89);
    d.vol_ratio_20_60 = Some(0.9);
    d.range_60d_pct = Some(25.0);
    d.ret_10d_pct = Some(-12.3);
    d.ret_20d_pct = Some(-10.7);
    d.health_reasons = [
        "已穿止损线(-7%)",
        "结构止损（从高点回撤>10%）",
        "均线空头排列",
        "浮亏超过5%",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(format_text(&d), GOLDEN);
}

#[test]
fn losing_holding_in_a_downtrend_is_danger_with_reasons_in_order() {
    let bars = downtrend();
    let cost = bars[bars.len() - 30].close * 1.2;
    let h = Holding {
        cost: Some(cost),
        buy_dt: Some(bars[bars.len() - 30].date),
    };
    let d = diagnose("000001", "平安银行", &bars, &h, None);
    assert_eq!(d.health, HEALTH_DANGER);
    assert_eq!(d.ma_pattern, "空头排列");
    assert_eq!(d.stop_loss_status, "已穿止损");
    assert_eq!(d.health_reasons[0], "已穿止损线(-7%)");
    let pos = |s: &str| d.health_reasons.iter().position(|r| r == s);
    assert!(pos("均线空头排列").unwrap() < pos("浮亏超过5%").unwrap());
    assert_eq!(d.diagnosis_brief.status, "avoid");
    assert_eq!(d.diagnosis_brief.headline, "回避: 000001 平安银行");
    assert!(!d.diagnosis_brief.direct_buy_allowed);
    assert!(
        d.formatted_text
            .starts_with("🔴危险 000001 平安银行 | 盈亏: -")
    );
}

#[test]
fn uptrend_without_cost_is_healthy_with_positive_reasons() {
    let d = diagnose("600000", "浦发银行", &uptrend(), &Holding::default(), None);
    assert_eq!(d.ma_pattern, "多头排列");
    assert_eq!(d.health, HEALTH_OK, "{:?}", d.health_reasons);
    assert_eq!(d.health_reasons[0], "多头排列");
    assert!(
        d.health_reasons
            .iter()
            .any(|r| r.starts_with("L2通道:主升通道"))
    );
    assert_eq!(d.stop_loss_status, "无成本价");
    assert_eq!(d.pnl_pct, None);
    assert_eq!(d.exit_signal, None, "no buy_dt → no structural exit");
    assert!(d.formatted_text.contains("盈亏: 无成本价"));
}

#[test]
fn strong_trend_with_a_lane_is_priority_watch() {
    // A flat year, then 40 bars of +0.2 %/day and 20 of +0.5 %/day: up ~20 % in 60 bars but
    // only ~17 % over MA200, so 主升通道 (bias ≤ 25 %) and the trend_breakout lane both pass.
    let mut closes = vec![10.0; 240];
    closes.extend((1..=40).map(|k| 10.0 * 1.002f64.powi(k)));
    let base = closes[closes.len() - 1];
    closes.extend((1..=20).map(|k| base * 1.005f64.powi(k)));
    let d = diagnose(
        "000001",
        "x",
        &bars_from(&closes),
        &Holding::default(),
        None,
    );
    assert_eq!(d.track, Track::Trend, "{}", d.l2_channel);
    assert_eq!(d.candidate_lane.as_deref(), Some("trend_breakout"));
    assert!(d.candidate_score.unwrap() >= 80.0);
    assert_eq!(
        d.diagnosis_brief.status, "priority_watch",
        "{:?}",
        d.health_reasons
    );
    assert_eq!(d.next_tool.as_ref().unwrap()["tool"], "generate_ai_report");
}

#[test]
fn empty_history_is_danger_no_data() {
    let d = diagnose(
        "000001",
        "平安银行",
        &[],
        &Holding {
            cost: Some(10.0),
            buy_dt: None,
        },
        None,
    );
    assert_eq!(d.health, HEALTH_DANGER);
    assert_eq!(d.health_reasons, vec!["无法获取行情数据".to_string()]);
    assert_eq!(d.data_status, "no_data");
    assert_eq!(d.ma_pattern, "数据不足");
    assert_eq!(d.latest_close, None);
}

#[test]
fn one_warning_without_positives_is_a_caution() {
    // Flat tape, holding at a small loss within 2 % of the stop: only "逼近止损线".
    let bars = bars_from(&[10.0; 300]);
    let h = Holding {
        cost: Some(10.0 / 0.94),
        buy_dt: None,
    };
    let d = diagnose("000001", "x", &bars, &h, None);
    assert_eq!(d.stop_loss_status, "逼近止损(<2%)");
    assert!(
        d.health_reasons.contains(&"逼近止损线".to_string()),
        "{:?}",
        d.health_reasons
    );
    assert_eq!(d.health, HEALTH_WARN, "{:?}", d.health_reasons);
    assert_eq!(d.diagnosis_brief.status, "caution_watch");
}

#[test]
fn atr_stop_counts_in_health_only_when_enabled() {
    // Flat tape at 10 with ATR ≈ 0.2: cost 10.5 → ATR stop = max(10.1, 9.45) = 10.1 > close.
    let bars = bars_from(&[10.0; 300]);
    let h = Holding {
        cost: Some(10.5),
        buy_dt: None,
    };
    let off = diagnose("000001", "x", &bars, &h, None);
    assert_eq!(off.stop_loss_atr_status, "已穿止损");
    assert!(!off.health_reasons.iter().any(|r| r.contains("ATR")));
    let cfg = DiagnosisConfig {
        use_atr_stop: true,
        ..DiagnosisConfig::default()
    };
    let on = diagnose_with("000001", "x", &bars, &h, None, &cfg);
    assert!(on.health_reasons.contains(&"已穿ATR止损线".to_string()));
    assert_eq!(on.health, HEALTH_DANGER);
}

#[test]
fn atr_stop_follows_the_formula() {
    let bars = uptrend();
    let d = diagnose(
        "000001",
        "x",
        &bars,
        &Holding {
            cost: Some(10.0),
            buy_dt: None,
        },
        None,
    );
    let a = d.atr_14.unwrap();
    assert_eq!(d.stop_loss_atr, Some((10.0 - 2.0 * a).max(9.0)));
}

#[test]
fn json_uses_reference_field_names() {
    let d = diagnose("000001", "平安银行", &uptrend(), &Holding::default(), None);
    let v = serde_json::to_value(&d).unwrap();
    for k in [
        "code",
        "name",
        "health",
        "pnl_pct",
        "latest_close",
        "ma_pattern",
        "l2_channel",
        "track",
        "accum_stage",
        "l4_triggers",
        "exit_signal",
        "stop_loss_status",
        "vol_ratio_20_60",
        "range_60d_pct",
        "ret_10d_pct",
        "ret_20d_pct",
        "from_year_high_pct",
        "from_year_low_pct",
        "health_reasons",
        "diagnosis_brief",
        "formatted_text",
        "atr_14",
        "stop_loss_atr",
        "targets",
        "wyckoff",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["health"], "🟢健康");
    assert_eq!(v["track"], "Trend");
    assert_eq!(v["diagnosis_brief"]["direct_buy_allowed"], false);
}

#[test]
fn exit_uses_only_bars_since_buy_dt() {
    // A deep breach of the trailing stop: visible with the whole history as the holding period…
    let mut bars = uptrend();
    let n = bars.len();
    let c = bars[n - 2].close * 0.85;
    bars[n - 1].close = c;
    bars[n - 1].low = c * 0.99;
    bars[n - 1].high = c * 1.01;
    bars[n - 1].open = c;
    let h = Holding {
        cost: Some(10.0),
        buy_dt: Some(bars[0].date),
    };
    let d = diagnose("000001", "x", &bars, &h, None);
    assert_eq!(d.exit_signal, Some(ExitKind::StopLoss));
    assert!(
        d.health_reasons
            .contains(&"结构止损（从高点回撤>10%）".to_string())
    );
    // …but bought on the last day, the stop is measured on that day alone and is not breached.
    let h = Holding {
        cost: Some(10.0),
        buy_dt: Some(bars[n - 1].date),
    };
    assert_eq!(diagnose("000001", "x", &bars, &h, None).exit_signal, None);
}
