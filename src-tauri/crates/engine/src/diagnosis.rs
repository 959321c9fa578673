//! Holding diagnosis: the `analyze_stock(mode="diagnose")` output (REFERENCE §14.1, §15.6, with
//! the 0.9.467 behaviour of the §15 version note), plus our Wyckoff structure labels.

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::Bar;
use crate::accumulation::{Stage, accum_stage};
use crate::board::Board;
use crate::channels::{ChannelConfig, ChannelReport, Track, l2_channels};
use crate::events::{WyckoffDiagnose, wyckoff_diagnose};
use crate::exits::{ExitConfig, ExitKind, ExitSignal, exit_signal};
use crate::indicators::{atr, finite, ma, max_high, min_low, ratio, ret_pct, tail, volume_ratio};
use crate::lanes::{CandidateLane, LaneContext, candidate_lane};
use crate::phases::{WyckoffStructure, wyckoff_structure};
use crate::triggers::{L4Config, Trigger, l4_triggers};

pub const HEALTH_OK: &str = "🟢健康";
pub const HEALTH_WARN: &str = "🟡警戒";
pub const HEALTH_DANGER: &str = "🔴危险";

/// Fixed cost stop: cost × 0.93 (§15.6 "止损(-7%)").
pub const COST_STOP_FRAC: f64 = 0.93;
/// "逼近止损" when the close is within 2 % above the stop (§15.6).
const NEAR_STOP_PCT: f64 = 2.0;
/// ATR stop = max(cost − 2·ATR14, 0.9·cost) (§15 version note 4).
pub const ATR_PERIOD: usize = 14;
const ATR_STOP_MULT: f64 = 2.0;
const ATR_STOP_FLOOR: f64 = 0.90;
/// Health thresholds (§15.6): 60-day range > 50 %, 10-day return < −15 %, loss > 5 %,
/// volume ratio 20/60 < 0.5.
const RANGE_60_MAX: f64 = 50.0;
const RET_10_CRASH: f64 = -15.0;
const LOSS_WARN: f64 = -5.0;
const VOL_DRY: f64 = 0.5;
/// `priority_watch` needs a Trend track and a candidate score ≥ 80 (§14.1).
const PRIORITY_SCORE: f64 = 80.0;
/// Reasons containing any of these make the rating 🔴危险 (§15.6).
const DANGER_WORDS: [&str; 5] = ["已穿", "暴跌", "空头排列", "结构止损", "出货"];
/// Targets: close + 3·ATR14; prior 120-day high; measured move over the prior 250-day box.
const TARGET_ATR_MULT: f64 = 3.0;
const TARGET_HIGH_WINDOW: usize = 120;
const TARGET_BOX_WINDOW: usize = 250;

/// A position being diagnosed. Both fields optional: a stock can be diagnosed without holding it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Holding {
    pub cost: Option<f64>,
    /// Entry date `YYYYMMDD`; exit signals only look at bars on/after it, and none without it
    /// (fail-closed, §15.6).
    pub buy_dt: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiagnosisConfig {
    /// `None` = defaults for the code's board.
    pub l4: Option<L4Config>,
    pub exits: ExitConfig,
    pub channels: ChannelConfig,
    /// `exit_use_atr_stop` (off by default in 0.9.467): the ATR stop then counts in `health`.
    pub use_atr_stop: bool,
    /// Market-wide lane inputs, when a screen has them (`l2_pass` is filled in here).
    pub lanes: LaneContext,
    /// Market regime, when known (only shown in the event's reasons, as 水温).
    pub regime: Option<crate::regime::Regime>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MovingAverages {
    pub ma5: Option<f64>,
    pub ma20: Option<f64>,
    pub ma50: Option<f64>,
    pub ma200: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Targets {
    pub conservative: Option<f64>,
    pub aggressive: Option<f64>,
    /// The candidate levels: `measured_move`, `prior_120d_high`, `atr_3x`.
    pub candidates: Vec<TargetLevel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TargetLevel {
    pub kind: String,
    pub price: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct DiagnosisBrief {
    pub status: String,
    pub label: String,
    pub headline: String,
    pub strengths: Vec<String>,
    pub risks: Vec<String>,
    pub direct_buy_allowed: bool,
    pub next_step: String,
}

/// The diagnosis. Field names follow REFERENCE §14.1; `None` serialises as `null` and means
/// "cannot be computed from the given bars".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub code: String,
    pub name: String,
    /// `ok`, or `no_data` when there are no bars.
    pub data_status: String,
    pub latest_date: Option<u32>,
    pub bar_count: usize,
    pub health: String,
    pub health_reasons: Vec<String>,
    pub cost: Option<f64>,
    pub pnl_pct: Option<f64>,
    pub latest_close: Option<f64>,
    pub day_change_pct: Option<f64>,
    pub ma: MovingAverages,
    pub ma_pattern: String,
    pub ma200_bias_pct: Option<f64>,
    pub l2_channel: String,
    pub track: Track,
    pub channels: ChannelReport,
    pub accum_stage: Option<Stage>,
    pub l4_triggers: Vec<String>,
    pub l4_trigger_details: Vec<Trigger>,
    pub candidate_lane: Option<String>,
    pub candidate_entry_type: Option<String>,
    pub candidate_score: Option<f64>,
    pub candidate_detail: CandidateLane,
    pub exit_signal: Option<ExitKind>,
    pub exit_detail: Option<ExitSignal>,
    pub stop_loss_price: Option<f64>,
    pub stop_loss_status: String,
    pub take_profit_status: String,
    pub atr_14: Option<f64>,
    pub stop_loss_atr: Option<f64>,
    pub stop_loss_atr_status: String,
    pub vol_ratio_20_60: Option<f64>,
    pub range_60d_pct: Option<f64>,
    pub ret_10d_pct: Option<f64>,
    pub ret_20d_pct: Option<f64>,
    pub from_year_high_pct: Option<f64>,
    pub from_year_low_pct: Option<f64>,
    pub targets: Targets,
    /// Trading range, structure triggers, structure stage and classified event (§15.3–15.5;
    /// the `wyckoff_diagnose` engine tool of §14.12).
    pub structure: WyckoffDiagnose,
    /// SC/AR/ST/BC… labels and the schematic phase (our addition).
    pub wyckoff: WyckoffStructure,
    pub diagnosis_brief: DiagnosisBrief,
    /// Suggested follow-up tool call, or `null`.
    pub next_tool: Option<serde_json::Value>,
    pub formatted_text: String,
}

/// Diagnose `bars` (ascending, the last bar is "as of") with the 0.9.467 defaults.
pub fn diagnose(
    code: &str,
    name: &str,
    bars: &[Bar],
    holding: &Holding,
    bench: Option<&[Bar]>,
) -> Diagnosis {
    diagnose_with(
        code,
        name,
        bars,
        holding,
        bench,
        &DiagnosisConfig::default(),
    )
}

/// As [`diagnose`], with explicit settings.
pub fn diagnose_with(
    code: &str,
    name: &str,
    bars: &[Bar],
    holding: &Holding,
    bench: Option<&[Bar]>,
    cfg: &DiagnosisConfig,
) -> Diagnosis {
    diagnose_in(code, name, bars, holding, bench, cfg, true)
}

/// The health and its reasons [`diagnose_with`] gives, by the same rating, without the
/// parts the rating does not read (the Wyckoff structure, the text): what an alert on the
/// health checks on every watched stock twice.
pub fn health_with(
    code: &str,
    name: &str,
    bars: &[Bar],
    holding: &Holding,
    bench: Option<&[Bar]>,
    cfg: &DiagnosisConfig,
) -> (String, Vec<String>) {
    let d = diagnose_in(code, name, bars, holding, bench, cfg, false);
    (d.health, d.health_reasons)
}

/// [`diagnose_with`]; without `whole`, the structure is left empty and the text unwritten.
fn diagnose_in(
    code: &str,
    name: &str,
    bars: &[Bar],
    holding: &Holding,
    bench: Option<&[Bar]>,
    cfg: &DiagnosisConfig,
    whole: bool,
) -> Diagnosis {
    let board = Board::from_code(code);
    let cost = holding.cost.filter(|c| c.is_finite() && *c > 0.0);
    let last = bars.last().copied();
    let close = last.map(|b| b.close);

    let ma_set = MovingAverages {
        ma5: ma(bars, 5),
        ma20: ma(bars, 20),
        ma50: ma(bars, 50),
        ma200: ma(bars, 200),
    };
    let ma_pattern = ma_pattern(close, ma_set.ma50, ma_set.ma200).to_string();
    let ma200_bias_pct = match (close, ma_set.ma200) {
        (Some(c), Some(m)) => ratio(c - m, m).map(|r| r * 100.0),
        _ => None,
    };
    let channels = l2_channels(bars, bench, board, &cfg.channels);
    let stage = accum_stage(bars);
    let l4cfg = cfg.l4.clone().unwrap_or_else(|| L4Config::for_code(code));
    let triggers = l4_triggers(bars, &l4cfg);
    let trigger_names: Vec<String> = triggers
        .iter()
        .map(|t| t.kind.as_str().to_string())
        .collect();

    // Exits look only at the holding period; no entry date → no structural exit (fail-closed).
    let held: &[Bar] = match holding.buy_dt {
        Some(d) => &bars[bars.partition_point(|b| b.date < d)..],
        None => &[],
    };
    let exit = exit_signal(held, stage, &cfg.exits);

    let pnl_pct = match (cost, close) {
        (Some(c), Some(p)) => ratio(p, c).map(|r| (r - 1.0) * 100.0),
        _ => None,
    };
    let stop_loss_price = cost.map(|c| c * COST_STOP_FRAC);
    let stop_loss_status = stop_status(close, stop_loss_price, cost.is_some());
    let atr_14 = atr(bars, ATR_PERIOD);
    let stop_loss_atr = match (cost, atr_14) {
        (Some(c), Some(a)) => finite((c - ATR_STOP_MULT * a).max(ATR_STOP_FLOOR * c)),
        _ => None,
    };
    let stop_loss_atr_status = if cost.is_some() && atr_14.is_none() {
        "数据不足".to_string()
    } else {
        stop_status(close, stop_loss_atr, cost.is_some())
    };

    let b60 = tail(bars, 60);
    let range_60d_pct = match (max_high(b60), min_low(b60)) {
        (Some(h), Some(l)) => ratio(h - l, l).map(|r| r * 100.0),
        _ => None,
    };
    let year = tail(bars, 250);
    let from_year_high_pct = match (close, max_high(year)) {
        (Some(c), Some(h)) => ratio(c, h).map(|r| (r - 1.0) * 100.0),
        _ => None,
    };
    let from_year_low_pct = match (close, min_low(year)) {
        (Some(c), Some(l)) => ratio(c, l).map(|r| (r - 1.0) * 100.0),
        _ => None,
    };
    let day_change_pct = if bars.len() >= 2 {
        bars[bars.len() - 1].pct_change(bars[bars.len() - 2].close)
    } else {
        None
    };

    let lane_ctx = LaneContext {
        l2_pass: channels.label != crate::channels::NOT_SELECTED,
        ..cfg.lanes
    };
    let lane = candidate_lane(bars, &lane_ctx);

    let mut d = Diagnosis {
        code: code.to_string(),
        name: name.to_string(),
        data_status: if bars.is_empty() { "no_data" } else { "ok" }.to_string(),
        latest_date: last.map(|b| b.date),
        bar_count: bars.len(),
        health: String::new(),
        health_reasons: Vec::new(),
        cost,
        pnl_pct,
        latest_close: close,
        day_change_pct,
        ma: ma_set,
        ma_pattern,
        ma200_bias_pct,
        l2_channel: channels.label.clone(),
        track: channels.track,
        accum_stage: stage,
        l4_triggers: trigger_names,
        candidate_lane: lane.lane.clone(),
        candidate_entry_type: lane.entry_type.clone(),
        candidate_score: lane.score,
        candidate_detail: lane,
        exit_signal: exit.as_ref().map(|e| e.signal),
        exit_detail: exit,
        stop_loss_price,
        stop_loss_status,
        take_profit_status: "未启用".to_string(),
        atr_14,
        stop_loss_atr,
        stop_loss_atr_status,
        vol_ratio_20_60: volume_ratio(bars, 20, 60),
        range_60d_pct,
        ret_10d_pct: ret_pct(bars, 10),
        ret_20d_pct: ret_pct(bars, 20),
        from_year_high_pct,
        from_year_low_pct,
        targets: targets(bars, atr_14),
        structure: wyckoff_diagnose(bars, &channels.label, cfg.regime.map(|r| r.as_str())),
        wyckoff: if whole {
            wyckoff_structure(bars)
        } else {
            WyckoffStructure {
                active: None,
                phase: None,
                accumulation: None,
                distribution: None,
            }
        },
        channels,
        l4_trigger_details: triggers,
        diagnosis_brief: DiagnosisBrief {
            status: String::new(),
            label: String::new(),
            headline: String::new(),
            strengths: Vec::new(),
            risks: Vec::new(),
            direct_buy_allowed: false,
            next_step: String::new(),
        },
        next_tool: None,
        formatted_text: String::new(),
    };
    rate(&mut d, cfg.use_atr_stop);
    if whole {
        d.formatted_text = format_text(&d);
    }
    d
}

fn ma_pattern(close: Option<f64>, ma50: Option<f64>, ma200: Option<f64>) -> &'static str {
    match (close, ma50, ma200) {
        (Some(c), Some(m50), Some(m200)) => {
            if c > m50 && m50 > m200 {
                "多头排列"
            } else if c < m50 && m50 < m200 {
                "空头排列"
            } else if m50 > m200 {
                "MA50>MA200(偏强)"
            } else {
                "MA50<MA200(偏弱)"
            }
        }
        _ => "数据不足",
    }
}

fn stop_status(close: Option<f64>, stop: Option<f64>, has_cost: bool) -> String {
    match (close, stop) {
        _ if !has_cost => "无成本价",
        (Some(c), Some(s)) if c <= s => "已穿止损",
        (Some(c), Some(s)) if (c - s) / s * 100.0 < NEAR_STOP_PCT => "逼近止损(<2%)",
        (Some(_), Some(_)) => "安全",
        _ => "数据不足",
    }
    .to_string()
}

fn targets(bars: &[Bar], atr_14: Option<f64>) -> Targets {
    let mut candidates = Vec::new();
    if let Some(last) = bars.last() {
        let close = last.close;
        let prior = &bars[..bars.len() - 1];
        let boxed = tail(prior, TARGET_BOX_WINDOW);
        if let (Some(h), Some(l)) = (max_high(boxed), min_low(boxed))
            && close >= h
            && let Some(p) = finite(h + (h - l))
        {
            candidates.push(TargetLevel {
                kind: "measured_move".into(),
                price: p,
            });
        }
        if let Some(h) = max_high(tail(prior, TARGET_HIGH_WINDOW))
            && h > close
        {
            candidates.push(TargetLevel {
                kind: "prior_120d_high".into(),
                price: h,
            });
        }
        if let Some(p) = atr_14.and_then(|a| finite(close + TARGET_ATR_MULT * a)) {
            candidates.push(TargetLevel {
                kind: "atr_3x".into(),
                price: p,
            });
        }
    }
    Targets {
        conservative: candidates.iter().map(|c| c.price).reduce(f64::min),
        aggressive: candidates.iter().map(|c| c.price).reduce(f64::max),
        candidates,
    }
}

/// Health rating, reasons, brief and follow-up (§15.6, §14.1).
fn rate(d: &mut Diagnosis, atr_stop_in_health: bool) {
    let mut warnings: Vec<String> = Vec::new();
    if d.bar_count == 0 {
        warnings.push("无法获取行情数据".to_string());
    }
    if d.stop_loss_status == "已穿止损" {
        warnings.push("已穿止损线(-7%)".to_string());
    }
    if d.exit_signal == Some(ExitKind::StopLoss) {
        warnings.push("结构止损（从高点回撤>10%）".to_string());
    }
    if d.ma_pattern == "空头排列" {
        warnings.push("均线空头排列".to_string());
    }
    if let Some(r) = d.range_60d_pct.filter(|r| *r > RANGE_60_MAX) {
        warnings.push(format!("60日振幅过大(>{r:.0}%)"));
    }
    if let Some(r) = d.ret_10d_pct.filter(|r| *r < RET_10_CRASH) {
        warnings.push(format!("近10日暴跌({r:+.1}%)"));
    }
    if matches!(
        d.exit_signal,
        Some(ExitKind::DistributionWarning | ExitKind::UpthrustWarning)
    ) {
        warnings.push("高位派发预警".to_string());
    }
    if atr_stop_in_health {
        if d.stop_loss_atr_status == "已穿止损" {
            warnings.push("已穿ATR止损线".to_string());
        } else if d.stop_loss_atr_status.starts_with("逼近止损") {
            warnings.push("逼近ATR止损线".to_string());
        }
    }
    if d.stop_loss_status.starts_with("逼近止损") {
        warnings.push("逼近止损线".to_string());
    }
    let pnl = d.pnl_pct;
    if pnl.is_some_and(|p| p < LOSS_WARN) {
        warnings.push("浮亏超过5%".to_string());
    }
    if d.ma_pattern == "MA50<MA200(偏弱)" && pnl.is_some_and(|p| p < 0.0) {
        warnings.push("均线偏弱且浮亏".to_string());
    }
    if d.vol_ratio_20_60.is_some_and(|v| v < VOL_DRY) {
        warnings.push("量能严重萎缩".to_string());
    }
    let mut positives: Vec<String> = Vec::new();
    if d.ma_pattern == "多头排列" {
        positives.push("多头排列".to_string());
    }
    if d.track == Track::Trend {
        positives.push(format!("L2通道:{}", d.l2_channel));
    }
    if !d.l4_triggers.is_empty() {
        positives.push(format!("L4信号:{}", d.l4_triggers.join("+")));
    }
    let danger = d.bar_count == 0
        || warnings
            .iter()
            .any(|w| DANGER_WORDS.iter().any(|k| w.contains(k)));
    d.health = if danger {
        HEALTH_DANGER
    } else if warnings.len() >= 2 || (warnings.len() == 1 && positives.is_empty()) {
        HEALTH_WARN
    } else {
        HEALTH_OK
    }
    .to_string();
    d.health_reasons = if warnings.is_empty() {
        positives.clone()
    } else {
        warnings.clone()
    };

    let (status, label) = if matches!(
        d.exit_signal,
        Some(ExitKind::StopLoss | ExitKind::UpthrustWarning)
    ) || d.health == HEALTH_DANGER
    {
        ("avoid", "回避")
    } else if d.health == HEALTH_WARN {
        ("caution_watch", "警戒观察")
    } else if d.track == Track::Trend && d.candidate_score.is_some_and(|s| s >= PRIORITY_SCORE) {
        ("priority_watch", "重点观察")
    } else if !d.l4_triggers.is_empty() {
        ("trigger_watch", "触发观察")
    } else {
        ("watch", "观察")
    };
    let next_step = match status {
        "avoid" => "回避新增，等待结构止损解除或重新站回强势结构",
        "caution_watch" => "只观察，等待风险收敛后再复核",
        "priority_watch" => "加入重点观察，等待市场闸门打开和回踩/触发确认",
        "trigger_watch" => "观察触发是否延续，仍需结合大盘水温和攻防决策",
        _ if !warnings.is_empty() => "观察，不直接买入，先处理风险项",
        _ => "观察，不直接买入；如需交易计划，继续生成攻防决策",
    };
    d.next_tool = matches!(status, "trigger_watch" | "priority_watch").then(|| {
        json!({
            "tool": "generate_ai_report",
            "args": {"stock_codes": [d.code]},
            "reason": "个股诊断进入重点/触发观察，可生成 AI 研报复核；不直接触发买入"
        })
    });
    d.diagnosis_brief = DiagnosisBrief {
        status: status.to_string(),
        label: label.to_string(),
        headline: format!("{label}: {} {}", d.code, d.name),
        strengths: positives,
        risks: warnings,
        direct_buy_allowed: false,
        next_step: next_step.to_string(),
    };
}

fn num(x: Option<f64>, prec: usize) -> String {
    x.map_or_else(|| "--".to_string(), |v| format!("{v:.prec$}"))
}

fn pct(x: Option<f64>, prec: usize) -> String {
    x.map_or_else(|| "--".to_string(), |v| format!("{v:.prec$}%"))
}

/// The human-readable block (golden example in REFERENCE §14.1). Numbers are rounded here only.
pub fn format_text(d: &Diagnosis) -> String {
    let mut lines = Vec::new();
    let pnl = if d.cost.is_some() {
        pct(d.pnl_pct, 2)
    } else {
        "无成本价".to_string()
    };
    lines.push(format!("{} {} {} | 盈亏: {pnl}", d.health, d.code, d.name));
    lines.push(format!(
        "  成本: {} | 现价: {}",
        num(d.cost, 2),
        num(d.latest_close, 2)
    ));
    lines.push(format!(
        "  均线: {} | MA200乖离: {}",
        d.ma_pattern,
        pct(d.ma200_bias_pct, 1)
    ));
    lines.push(format!(
        "  通道: {} | 轨道: {}",
        d.l2_channel,
        d.track.as_str()
    ));
    if let Some(s) = d.accum_stage {
        lines.push(format!("  吸筹阶段: {}", s.as_str()));
    }
    if !d.l4_triggers.is_empty() {
        lines.push(format!("  L4信号: {}", d.l4_triggers.join("+")));
    }
    if let (Some(kind), Some(phase)) = (d.wyckoff.active, d.wyckoff.phase) {
        let s = match kind {
            crate::phases::SchematicKind::Accumulation => d.wyckoff.accumulation.as_ref(),
            crate::phases::SchematicKind::Distribution => d.wyckoff.distribution.as_ref(),
        };
        let events = s.map_or_else(String::new, |s| {
            s.events
                .iter()
                .map(|e| format!("{:?} {}", e.event, e.date))
                .collect::<Vec<_>>()
                .join(", ")
        });
        let k = if kind == crate::phases::SchematicKind::Accumulation {
            "吸筹"
        } else {
            "派发"
        };
        lines.push(format!("  威科夫结构: {k} Phase {phase:?} ({events})"));
    }
    match &d.exit_detail {
        Some(e) => lines.push(format!(
            "  退出信号: {} | 触发价: {} | {}",
            e.signal.as_str(),
            num(e.trigger_price, 2),
            e.reason
        )),
        None => lines.push("  退出信号: 无".to_string()),
    }
    if d.cost.is_some() {
        lines.push(format!(
            "  止损(-7%): {} → {}",
            num(d.stop_loss_price, 2),
            d.stop_loss_status
        ));
    } else {
        lines.push("  止损(-7%): 无成本价".to_string());
    }
    lines.push(format!(
        "  目标价(技术位参考): 保守{} / 乐观{}",
        num(d.targets.conservative, 2),
        num(d.targets.aggressive, 2)
    ));
    lines.push(format!(
        "  量比(20/60): {} | 60日振幅: {} | 近10日: {} | 近20日: {}",
        num(d.vol_ratio_20_60, 2),
        pct(d.range_60d_pct, 1),
        pct(d.ret_10d_pct, 1),
        pct(d.ret_20d_pct, 1)
    ));
    let reasons = if d.health_reasons.is_empty() {
        "无".to_string()
    } else {
        d.health_reasons.join(", ")
    };
    lines.push(format!("  理由: {reasons}"));
    lines.join("\n")
}

#[cfg(test)]
mod tests;
