//! Event classification from triggers and context (REFERENCE §15.5).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::accumulation::Stage;
use crate::trading_range::TradingRange;
use crate::triggers::{Trigger, structure_triggers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WyckoffEvent {
    pub event_id: String,
    pub label: String,
    /// `Trend`, `Accum` or `Watch`.
    pub track: String,
    pub action: String,
    pub confidence: Confidence,
    pub reasons: Vec<String>,
    pub watch_points: Vec<String>,
}

/// Scores at which the two strongest events become high-confidence (§15.5).
const IGNITION_HIGH_SCORE: f64 = 10.0;
const RESONANCE_HIGH_SCORE: f64 = 5.0;

/// Classify trigger names (any case: "SOS", "spring", …) into one event, by the §15.5 precedence.
pub fn classify_wyckoff_event(
    triggers: &[&str],
    stage: Option<Stage>,
    channel: &str,
    score: f64,
    regime: Option<&str>,
) -> WyckoffEvent {
    let has = |name: &str| triggers.iter().any(|t| t.eq_ignore_ascii_case(name));
    let markup = stage == Some(Stage::Markup);
    let (id, label, track, action, confidence, spec, watch): (_, _, _, _, _, &str, &[&str]) =
        if has("sos") && markup {
            let c = if score >= IGNITION_HIGH_SCORE {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (
                "right_side_ignition",
                "右侧点火",
                "Trend",
                "强度观察",
                c,
                "SOS 放量突破且结构处于 Markup",
                &["突破日低点不被跌破", "后续缩量回踩不破阻力转支撑"],
            )
        } else if has("spring") && (has("lps") || has("evr")) {
            let c = if score >= RESONANCE_HIGH_SCORE {
                Confidence::High
            } else {
                Confidence::Medium
            };
            (
                "accumulation_repair_resonance",
                "吸筹修复共振",
                "Accum",
                "低位观察",
                c,
                "Spring 与 LPS/EVR 共振，低位承接明显",
                &["Spring 低点不被再次跌破", "量能温和放大后不过度透支"],
            )
        } else if has("spring") {
            (
                "spring_reclaim",
                "Spring 修复",
                "Accum",
                "低位观察",
                Confidence::Medium,
                "跌破支撑后快速收回",
                &["收回后的支撑位能否守住", "二次测试是否缩量"],
            )
        } else if has("lps") {
            (
                "lps_pullback_confirm",
                "LPS 回踩确认",
                "Accum",
                "支撑观察",
                Confidence::Medium,
                "缩量回踩支撑未破",
                &["回踩低点不被跌破", "再次放量上攻确认"],
            )
        } else if has("evr") {
            let t = if markup { "Trend" } else { "Accum" };
            (
                "volume_absorption",
                "放量承接",
                t,
                "承接观察",
                Confidence::Medium,
                "放量而价格未跌，疑似主动承接",
                &["放量日低点是否守住", "随后量能是否回落"],
            )
        } else if has("sos") {
            (
                "sos_watch",
                "SOS 观察",
                "Trend",
                "强度观察",
                Confidence::Medium,
                "出现放量强势信号但结构尚未确认突破",
                &["能否站上区间阻力", "回踩是否缩量"],
            )
        } else {
            (
                "wyckoff_watch",
                "威科夫观察",
                "Watch",
                "观察",
                Confidence::Low,
                "暂无结构触发",
                &["等待 Spring/SOS/LPS 等结构信号"],
            )
        };
    let stage_s = stage.map_or("None", Stage::as_str);
    let regime_s = regime.unwrap_or("UNKNOWN").to_uppercase();
    WyckoffEvent {
        event_id: id.to_string(),
        label: label.to_string(),
        track: track.to_string(),
        action: action.to_string(),
        confidence,
        reasons: vec![
            format!("阶段={stage_s}, 通道={channel}, 水温={regime_s}, 分数={score:.2}"),
            spec.to_string(),
        ],
        watch_points: watch.iter().map(|s| (*s).to_string()).collect(),
    }
}

/// The `wyckoff_diagnose` engine tool (§14.12): trading range, structure triggers, structure
/// stage and the classified event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WyckoffDiagnose {
    pub trading_range: Option<TradingRange>,
    /// Lower-case trigger names (`spring`, `sos`, `lps`, `evr`), as §14.12 lists them.
    pub triggers: Vec<String>,
    pub trigger_details: Vec<Trigger>,
    pub stage: Option<Stage>,
    /// Always `diagnostic_only`: the structure stage is an observation, not a selection input.
    pub stage_semantics: String,
    pub event: WyckoffEvent,
}

/// Structure triggers over the trading range, classified into one event (§15.3–15.5, §14.12).
/// The event score is the strongest trigger's score.
pub fn wyckoff_diagnose(bars: &[Bar], channel: &str, regime: Option<&str>) -> WyckoffDiagnose {
    let report = structure_triggers(bars);
    let names: Vec<String> = report
        .triggers
        .iter()
        .map(|t| t.kind.as_str().to_lowercase())
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let score = report.triggers.iter().map(|t| t.score).fold(0.0, f64::max);
    let event = classify_wyckoff_event(&refs, report.stage, channel, score, regime);
    WyckoffDiagnose {
        trading_range: report.trading_range,
        triggers: names,
        trigger_details: report.triggers,
        stage: report.stage,
        stage_semantics: "diagnostic_only".to_string(),
        event,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (
        &'static [&'static str],
        Option<Stage>,
        f64,
        &'static str,
        Confidence,
    );

    #[test]
    fn precedence_table() {
        let cases: &[Case] = &[
            (
                &["SOS"],
                Some(Stage::Markup),
                12.0,
                "right_side_ignition",
                Confidence::High,
            ),
            (
                &["SOS"],
                Some(Stage::Markup),
                3.0,
                "right_side_ignition",
                Confidence::Medium,
            ),
            (
                &["SOS"],
                Some(Stage::AccumB),
                3.0,
                "sos_watch",
                Confidence::Medium,
            ),
            (
                &["spring", "EVR"],
                None,
                6.0,
                "accumulation_repair_resonance",
                Confidence::High,
            ),
            (&["Spring"], None, 6.0, "spring_reclaim", Confidence::Medium),
            (
                &["lps"],
                None,
                1.0,
                "lps_pullback_confirm",
                Confidence::Medium,
            ),
            (
                &["evr"],
                Some(Stage::Markup),
                1.0,
                "volume_absorption",
                Confidence::Medium,
            ),
            (&[], None, 0.0, "wyckoff_watch", Confidence::Low),
        ];
        for (t, stage, score, id, conf) in cases {
            let e = classify_wyckoff_event(t, *stage, "未入选", *score, Some("risk_on"));
            assert_eq!(e.event_id, *id, "{t:?}");
            assert_eq!(e.confidence, *conf, "{t:?}");
        }
        let e = classify_wyckoff_event(&["evr"], Some(Stage::Markup), "x", 1.0, Some("risk_on"));
        assert_eq!(e.track, "Trend");
        assert_eq!(e.reasons[0], "阶段=Markup, 通道=x, 水温=RISK_ON, 分数=1.00");
    }

    #[test]
    fn wyckoff_diagnose_on_a_spring_in_a_box() {
        use crate::indicators::test_support::from_closes;
        use crate::trading_range::tests::box_closes;
        let mut bars = from_closes(&box_closes(91), 1000.0);
        let n = bars.len();
        bars[n - 2].close = 10.5;
        let b = &mut bars[n - 1];
        (b.open, b.high, b.low, b.close, b.volume) = (10.0, 10.3, 9.5, 10.2, 2000.0);
        let w = wyckoff_diagnose(&bars, "未入选", None);
        assert!(w.triggers.contains(&"spring".to_string()), "{w:?}");
        assert_eq!(w.stage, Some(Stage::AccumC));
        assert_eq!(w.stage_semantics, "diagnostic_only");
        assert!(
            w.event.event_id.starts_with("spring") || w.event.event_id.starts_with("accumulation")
        );
        let none = wyckoff_diagnose(&[], "未入选", None);
        assert_eq!(none.event.event_id, "wyckoff_watch");
    }
}
