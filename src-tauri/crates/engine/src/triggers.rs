//! Triggers: the structure triggers over a trading range (REFERENCE §15.4) and the formal L4
//! triggers used by the funnel and the holding diagnosis (§15.1 L4).

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::accumulation::Stage;
use crate::board::Board;
use crate::indicators::{
    atr, finite, ma, ma_at, max_high, mean_by, median, min_low, quantile, ratio, swing_highs, tail,
};
use crate::trading_range::{TradingRange, identify_trading_range};

/// The trigger kinds. Serialised names are the ones §14.1 `l4_triggers` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
pub enum TriggerKind {
    Spring,
    #[serde(rename = "LPS")]
    Lps,
    #[serde(rename = "EVR")]
    Evr,
    Compression,
    #[serde(rename = "SOS")]
    Sos,
    #[serde(rename = "TrendPB")]
    TrendPullback,
}

impl TriggerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Spring => "Spring",
            TriggerKind::Lps => "LPS",
            TriggerKind::Evr => "EVR",
            TriggerKind::Compression => "Compression",
            TriggerKind::Sos => "SOS",
            TriggerKind::TrendPullback => "TrendPB",
        }
    }
}

/// One fired trigger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub score: f64,
    /// Bars that support the signal, the decisive one first (e.g. EVR: the effort bar, then the
    /// confirmation bar).
    pub dates: Vec<u32>,
}

// ---------------------------------------------------------------------------------------------
// Structure triggers (§15.4). The reference names these thresholds without publishing values;
// we reuse the formal L4 thresholds of §15.1 so both families agree on what "heavy" means.
// ---------------------------------------------------------------------------------------------

/// §15.4 needs ≥ 60 bars and a trading range.
pub const STRUCT_MIN_BARS: usize = 60;
/// `sos_vol_ratio`: volume vs the prior 20-bar mean.
pub const STRUCT_SOS_VOL_RATIO: f64 = 2.0;
/// `sos_pct_min`: minimum day change, percent.
pub const STRUCT_SOS_PCT_MIN: f64 = 3.0;
/// `spring_vol_ratio` (as formal Spring, §15.1: 1.3×).
pub const STRUCT_SPRING_VOL_RATIO: f64 = 1.3;
/// `lps_vol_ref_window` (floored at 10 by §15.4) and `lps_vol_dry_ratio` (as formal LPS, 0.65).
pub const STRUCT_LPS_VOL_REF_WINDOW: usize = 20;
pub const STRUCT_LPS_VOL_DRY_RATIO: f64 = 0.65;
/// `evr_vol_ratio` (as formal EVR, 1.8×) and the day-change band (±2 %).
pub const STRUCT_EVR_VOL_RATIO: f64 = 1.8;
pub const STRUCT_EVR_MAX_DROP: f64 = 2.0;
pub const STRUCT_EVR_MAX_RISE: f64 = 2.0;

/// Result of [`structure_triggers`] (the `wyckoff_diagnose` engine tool of §14.12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructureReport {
    pub trading_range: Option<TradingRange>,
    pub triggers: Vec<Trigger>,
    pub stage: Option<Stage>,
}

/// Structure triggers against the trading range as of the last bar (§15.4).
pub fn structure_triggers(bars: &[Bar]) -> StructureReport {
    let tr = identify_trading_range(bars);
    let mut out = StructureReport {
        trading_range: tr.clone(),
        triggers: Vec::new(),
        stage: None,
    };
    let (Some(tr), true) = (tr, bars.len() >= STRUCT_MIN_BARS) else {
        return out;
    };
    let n = bars.len();
    let last = bars[n - 1];
    let prev = bars[n - 2];
    let width = tr.width();
    let pct = last.pct_change(prev.close);
    let vol_vs = |k: usize| {
        mean_by(&bars[n - 1 - k..n - 1], |b| b.volume).and_then(|m| ratio(last.volume, m))
    };

    // SOS: heavy volume, close at/above resistance, a strong day.
    if let (Some(vr), Some(p)) = (vol_vs(20), pct)
        && vr >= STRUCT_SOS_VOL_RATIO
        && last.close >= tr.resistance * 0.99
        && p >= STRUCT_SOS_PCT_MIN
    {
        let breakout = (last.close / tr.resistance - 1.0) * 100.0;
        push(
            &mut out.triggers,
            TriggerKind::Sos,
            vr + breakout.max(0.0) + tr.quality_score,
            vec![last.date],
        );
    }
    // Spring: undercut support, close back inside the lower part of the range on volume.
    let spring = prev.low.min(last.low) <= tr.support * 0.995
        && last.close > tr.support * 1.005
        && last.close < tr.mid + 0.25 * width
        && vol_vs(5).is_some_and(|vr| vr >= STRUCT_SPRING_VOL_RATIO);
    if spring {
        let recovery = (last.close / tr.support - 1.0) * 100.0;
        let low_date = if prev.low < last.low {
            prev.date
        } else {
            last.date
        };
        push(
            &mut out.triggers,
            TriggerKind::Spring,
            recovery + tr.quality_score,
            vec![low_date, last.date],
        );
    }
    // LPS: dried-up volume on a pullback into the lower part of the range.
    let ref_w = STRUCT_LPS_VOL_REF_WINDOW.max(10);
    let mut lps = false;
    if n >= 3 + ref_w {
        let recent = max_vol(&bars[n - 3..]);
        let before = max_vol(&bars[n - 3 - ref_w..n - 3]);
        if let Some(r) = ratio(recent, before)
            && r <= STRUCT_LPS_VOL_DRY_RATIO
            && min_low(&bars[n - 3..]).is_some_and(|l| l <= tr.support + 0.35 * width)
            && last.close > tr.support
        {
            lps = true;
            push(
                &mut out.triggers,
                TriggerKind::Lps,
                (1.0 - r) + tr.quality_score,
                dates(&bars[n - 3..]),
            );
        }
    }
    // EVR: heavy volume, little price progress, in the lower half.
    if let (Some(vr), Some(p)) = (vol_vs(20), pct)
        && vr >= STRUCT_EVR_VOL_RATIO
        && last.close <= tr.mid
        && (-STRUCT_EVR_MAX_DROP..=STRUCT_EVR_MAX_RISE).contains(&p)
        && last.close >= tr.support * 0.98
    {
        push(
            &mut out.triggers,
            TriggerKind::Evr,
            vr + tr.quality_score,
            vec![last.date],
        );
    }
    out.stage = Some(if last.close >= tr.resistance {
        Stage::Markup
    } else if spring || lps {
        Stage::AccumC
    } else if last.close <= tr.support + 0.35 * width {
        Stage::AccumB
    } else {
        Stage::AccumA
    });
    out
}

fn push(v: &mut Vec<Trigger>, kind: TriggerKind, score: f64, dates: Vec<u32>) {
    if let Some(score) = finite(score) {
        v.push(Trigger { kind, score, dates });
    }
}

fn max_vol(bars: &[Bar]) -> f64 {
    bars.iter().map(|b| b.volume).fold(0.0, f64::max)
}

fn dates(bars: &[Bar]) -> Vec<u32> {
    bars.iter().map(|b| b.date).collect()
}

// ---------------------------------------------------------------------------------------------
// Formal L4 triggers (§15.1 L4, with the 0.9.467 defaults of the §15 version note).
// ---------------------------------------------------------------------------------------------

/// Base bias cap on (close − MA200)/MA200, percent (§15.1 L4 `max_bias_200`).
pub const BIAS_CAP_BASE_PCT: f64 = 25.0;
/// STAR board floor for the cap (§15.1 L4).
pub const BIAS_CAP_STAR_PCT: f64 = 40.0;
/// Trend-channel floor for the cap (§15.1 L4: 主升/趋势延续/点火破局/加速突破).
pub const BIAS_CAP_TREND_PCT: f64 = 35.0;

/// Which L4 triggers run, and the context they need.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct L4Config {
    pub enable_spring: bool,
    pub enable_evr: bool,
    pub enable_trend_pullback: bool,
    /// Off by default in 0.9.467 (§15 version note 2).
    pub enable_sos: bool,
    /// Off by default in 0.9.467.
    pub enable_lps: bool,
    /// Off by default in 0.9.467.
    pub enable_compression: bool,
    pub board: Board,
    /// Bias cap in percent; `None` = derive from the board (25 %, STAR 40 %).
    pub max_bias_200_pct: Option<f64>,
    /// Market cap in 亿元 when known (relaxes the trend-pullback volume threshold).
    pub market_cap_yi: Option<f64>,
}

impl Default for L4Config {
    fn default() -> Self {
        L4Config {
            enable_spring: true,
            enable_evr: true,
            enable_trend_pullback: true,
            enable_sos: false,
            enable_lps: false,
            enable_compression: false,
            board: Board::Main,
            max_bias_200_pct: None,
            market_cap_yi: None,
        }
    }
}

impl L4Config {
    /// Defaults for a code (board from the code).
    pub fn for_code(code: &str) -> Self {
        L4Config {
            board: Board::from_code(code),
            ..L4Config::default()
        }
    }

    /// Everything on: the funnel-style full scan.
    pub fn all_enabled(board: Board) -> Self {
        L4Config {
            enable_sos: true,
            enable_lps: true,
            enable_compression: true,
            board,
            ..L4Config::default()
        }
    }

    fn bias_cap(&self) -> f64 {
        self.max_bias_200_pct.unwrap_or(match self.board {
            Board::Star => BIAS_CAP_STAR_PCT,
            _ => BIAS_CAP_BASE_PCT,
        })
    }
}

/// Bias cap as §15.1 defines it for a channel label: trend channels lift it to 35 %.
pub fn bias_cap_for_channel(board: Board, channel_label: &str) -> f64 {
    let base = if board == Board::Star {
        BIAS_CAP_STAR_PCT
    } else {
        BIAS_CAP_BASE_PCT
    };
    let trend = ["主升通道", "趋势延续", "点火破局", "加速突破"]
        .iter()
        .any(|c| channel_label.contains(c));
    if trend {
        base.max(BIAS_CAP_TREND_PCT)
    } else {
        base
    }
}

/// (close − MA200)/MA200 in percent, as of the last bar.
pub fn bias_200_pct(bars: &[Bar]) -> Option<f64> {
    let ma200 = ma(bars, 200)?;
    ratio(bars.last()?.close - ma200, ma200).map(|r| r * 100.0)
}

/// Bias cap check. With < 200 bars MA200 does not exist and there is no bias to cap, so the
/// check passes (it is a cap on overextension, not a history requirement).
fn bias_ok(bars: &[Bar], cap_pct: f64) -> bool {
    bias_200_pct(bars).is_none_or(|b| b <= cap_pct)
}

/// All enabled L4 triggers as of the last bar, in the diagnosis order
/// Spring, EVR, TrendPB, SOS, LPS, then Compression (§15 version note 1).
pub fn l4_triggers(bars: &[Bar], cfg: &L4Config) -> Vec<Trigger> {
    let cap = cfg.bias_cap();
    let mut out = Vec::new();
    if cfg.enable_spring {
        out.extend(detect_spring(bars, cap));
    }
    if cfg.enable_evr {
        out.extend(detect_evr(bars, cap, cfg.board));
    }
    if cfg.enable_trend_pullback {
        out.extend(detect_trend_pullback(bars, cap, cfg.market_cap_yi));
    }
    if cfg.enable_sos {
        out.extend(detect_sos(bars, cap));
    }
    if cfg.enable_lps {
        out.extend(detect_lps(bars, cap));
    }
    if cfg.enable_compression {
        out.extend(detect_compression(bars, cap));
    }
    out
}

/// Spring support zone: bars −62..−3 (§15.1 L4 Spring).
const SPRING_MIN_BARS: usize = 62;
const SPRING_ZONE_MAX_DRIFT: f64 = 0.12;
const SPRING_VOL_VS_PRIOR4: f64 = 1.3;
const SPRING_VOL_VS_PREV: f64 = 1.15;

/// Spring (§15.1 L4): a dip under range support that closes back above it on rising volume.
pub fn detect_spring(bars: &[Bar], bias_cap_pct: f64) -> Option<Trigger> {
    let n = bars.len();
    if n < SPRING_MIN_BARS {
        return None;
    }
    let zone = &bars[n - SPRING_MIN_BARS..n - 2];
    // Allowed range width: clamp(ATR20 % × 4, 30, 60), from history up to the previous bar.
    let hist = &bars[..n - 1];
    let atr_pct = atr(hist, 20).and_then(|a| ratio(a, hist[hist.len() - 1].close))? * 100.0;
    let allowed = (atr_pct * 4.0).clamp(30.0, 60.0);
    let zmin = min_low(zone)?;
    let zmax = max_high(zone)?;
    if ratio(zmax - zmin, zmin)? * 100.0 > allowed {
        return None;
    }
    let first = zone[0].close;
    if ratio((zone[zone.len() - 1].close - first).abs(), first)? > SPRING_ZONE_MAX_DRIFT {
        return None;
    }
    let lows: Vec<f64> = zone.iter().map(|b| b.low).collect();
    let swings: Vec<f64> = crate::indicators::swing_lows(&lows, 3)
        .into_iter()
        .map(|i| lows[i])
        .collect();
    let support = if swings.len() >= 2 {
        median(&swings[swings.len().saturating_sub(5)..])?
    } else {
        zone.iter().map(|b| b.close).reduce(f64::min)?
    };
    let (prev, last) = (bars[n - 2], bars[n - 1]);
    if prev.is_frozen() || last.is_frozen() || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    if !(prev.low < support || last.low < support) || last.close <= support {
        return None;
    }
    let prior4 = mean_by(&bars[n - 5..n - 1], |b| b.volume)?;
    if !(prior4 > 0.0 && last.volume >= SPRING_VOL_VS_PRIOR4 * prior4) {
        return None;
    }
    if prev.volume > 0.0 && last.volume / prev.volume < SPRING_VOL_VS_PREV {
        return None;
    }
    let low_date = if prev.low < last.low {
        prev.date
    } else {
        last.date
    };
    let score = finite((last.close - support) / support * 100.0)?;
    Some(Trigger {
        kind: TriggerKind::Spring,
        score,
        dates: vec![low_date, last.date],
    })
}

const LPS_MIN_BARS: usize = 63;
/// Creek window: 60 bars for the swing highs, 15 for the breakout, 3 for the test (§15.1 LPS).
const LPS_CREEK_BASE: usize = 60;
const LPS_CREEK_BREAK: usize = 15;
const LPS_CREEK_TEST: usize = 3;
const LPS_VOL_RATIO_MAX: f64 = 0.65;

/// LPS (§15.1 L4): a quiet pullback to a rising MA20 after the creek was jumped.
pub fn detect_lps(bars: &[Bar], bias_cap_pct: f64) -> Option<Trigger> {
    let n = bars.len();
    let window = LPS_CREEK_BASE + LPS_CREEK_BREAK + LPS_CREEK_TEST;
    if n < LPS_MIN_BARS.max(window) {
        return None;
    }
    let last = bars[n - 1];
    let ma20 = ma(bars, 20)?;
    if last.close < ma20 || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    if ma_at(bars, n - 9, 20).is_none_or(|m| ma20 <= m) {
        return None;
    }
    let low3 = min_low(&bars[n - 3..])?;
    if (low3 / ma20 - 1.0).abs() > 0.02 {
        return None;
    }
    let v3: Vec<f64> = bars[n - 3..].iter().map(|b| b.volume).collect();
    let v60: Vec<f64> = bars[n - 63..n - 3].iter().map(|b| b.volume).collect();
    let vr = ratio(median(&v3)?, median(&v60)?)?;
    if vr > LPS_VOL_RATIO_MAX {
        return None;
    }
    // Creek line through the last ≤ 5 swing highs of the base part of the window.
    let w = &bars[n - window..];
    let highs: Vec<f64> = w[..LPS_CREEK_BASE].iter().map(|b| b.high).collect();
    let idx = swing_highs(&highs, 3);
    let idx = &idx[idx.len().saturating_sub(5)..];
    if idx.len() < 2 {
        return None;
    }
    let (slope, icpt) = fit_line(idx.iter().map(|&i| (i as f64, highs[i])))?;
    let last_high = highs[idx[idx.len() - 1]];
    if slope > 0.001 * last_high {
        return None;
    }
    let line = |i: usize| slope * i as f64 + icpt;
    let jump = (LPS_CREEK_BASE..LPS_CREEK_BASE + LPS_CREEK_BREAK)
        .find(|&i| w[i].close >= line(i) * 1.005)?;
    if last.close < line(window - 1) * 0.98 {
        return None;
    }
    Some(Trigger {
        kind: TriggerKind::Lps,
        score: vr,
        dates: vec![last.date, w[jump].date],
    })
}

fn fit_line(points: impl Iterator<Item = (f64, f64)> + Clone) -> Option<(f64, f64)> {
    let n = points.clone().count() as f64;
    let mx = points.clone().map(|p| p.0).sum::<f64>() / n;
    let my = points.clone().map(|p| p.1).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in points {
        num += (x - mx) * (y - my);
        den += (x - mx) * (x - mx);
    }
    let slope = ratio(num, den)?;
    Some((slope, finite(my - slope * mx)?))
}

const EVR_MIN_BARS: usize = 23;
const EVR_VOL_RATIO: f64 = 1.8;
const EVR_MAX_ABS_PCT: f64 = 2.0;
const EVR_MIN_TURNOVER_PCT: f64 = 1.5;

/// EVR, effort vs result (§15.1 L4): heavy volume with a small move on bar −2, confirmed by
/// bar −1 holding its low.
pub fn detect_evr(bars: &[Bar], bias_cap_pct: f64, board: Board) -> Option<Trigger> {
    let n = bars.len();
    if n < EVR_MIN_BARS || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    let ev = bars[n - 2];
    let last = bars[n - 1];
    if ev.is_frozen() {
        return None;
    }
    let reference = mean_by(&bars[n - 20..n - 2], |b| b.volume)?;
    let vr = ratio(ev.volume, reference)?;
    if vr < EVR_VOL_RATIO {
        return None;
    }
    let s = board.evr_scale();
    let pct = ev.pct_change(bars[n - 3].close)?;
    if pct.abs() > EVR_MAX_ABS_PCT * s {
        return None;
    }
    if ev.turnover.is_some_and(|t| t < EVR_MIN_TURNOVER_PCT) {
        return None;
    }
    if last.close < bars[n - 4].close * 0.98 || last.close < ev.low {
        return None;
    }
    Some(Trigger {
        kind: TriggerKind::Evr,
        score: vr,
        dates: vec![ev.date, last.date],
    })
}

const COMPRESSION_MIN_BARS: usize = 30;
const COMPRESSION_VOL_RATIO: f64 = 0.60;
const COMPRESSION_ATR_Q: f64 = 0.20;

/// Compression (§15.1 L4): volume and daily range both contracting in a non-falling tape.
pub fn detect_compression(bars: &[Bar], bias_cap_pct: f64) -> Option<Trigger> {
    let n = bars.len();
    if n < COMPRESSION_MIN_BARS {
        return None;
    }
    let ma20 = ma(bars, 20)?;
    let dir_ok = ma_at(bars, n - 6, 20).is_some_and(|m| ma20 >= m)
        || ma(bars, 50).is_some_and(|m50| bars[n - 1].close >= m50);
    if !dir_ok || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    let v5 = mean_by(&bars[n - 5..], |b| b.volume)?;
    let v20 = mean_by(&bars[n - 25..n - 5], |b| b.volume)?;
    if ratio(v5, v20)? > COMPRESSION_VOL_RATIO {
        return None;
    }
    let atrp = |i: usize| ratio(crate::indicators::true_range_at(bars, i), bars[i].close);
    let recent: Vec<f64> = (n - 5..n).map(atrp).collect::<Option<_>>()?;
    let prior: Vec<f64> = (n - 25..n - 5).map(atrp).collect::<Option<_>>()?;
    let rmean = crate::indicators::mean(&recent)?;
    if rmean > quantile(&prior, COMPRESSION_ATR_Q)? {
        return None;
    }
    if recent.windows(2).filter(|w| w[1] > w[0]).count() > 1 {
        return None;
    }
    let score = ratio(rmean, median(&prior)?)?;
    Some(Trigger {
        kind: TriggerKind::Compression,
        score,
        dates: dates(&bars[n - 5..]),
    })
}

const SOS_MIN_BARS: usize = 62;
const SOS_PCT_MIN: f64 = 6.0;
const SOS_VOL_MULT: f64 = 3.0;
const SOS_VOL_Q: f64 = 0.95;

/// SOS / jump across the creek (§15.1 L4): a big up day on extreme volume breaking out.
pub fn detect_sos(bars: &[Bar], bias_cap_pct: f64) -> Option<Trigger> {
    let n = bars.len();
    if n < SOS_MIN_BARS || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    let (prev, last) = (bars[n - 2], bars[n - 1]);
    if last.is_frozen() || last.pct_change(prev.close)? < SOS_PCT_MIN {
        return None;
    }
    let prior = &bars[n - 61..n - 1];
    let vmean = mean_by(prior, |b| b.volume)?;
    let vols: Vec<f64> = prior.iter().map(|b| b.volume).collect();
    let vr = ratio(last.volume, vmean)?;
    if vr < SOS_VOL_MULT || last.volume < quantile(&vols, SOS_VOL_Q)? {
        return None;
    }
    let breakout = last.close >= max_high(prior)? * 0.99;
    let crossed = matches!((ma(bars, 50), ma_at(bars, n - 2, 50)),
        (Some(m), Some(pm)) if last.close > m && prev.close <= pm);
    if !(breakout || crossed) {
        return None;
    }
    Some(Trigger {
        kind: TriggerKind::Sos,
        score: vr,
        dates: vec![last.date],
    })
}

const TPB_MIN_BARS: usize = 35;
const TPB_WINDOW: usize = 11;
const TPB_MIN_DEPTH: f64 = 0.05;
const TPB_MAX_DEPTH: f64 = 0.20;
const TPB_VOL_RATIO: f64 = 0.60;
/// Large caps (≥ 200 亿) may pull back on more volume: +0.15, capped at 0.85 (§15.1).
const TPB_LARGE_CAP_YI: f64 = 200.0;
/// Established uptrends (MA50 > MA200 on ≥ 20 of the last 60 bars): +0.10, capped at 0.90.
const TPB_TREND_DAYS: usize = 20;

/// Trend pullback (§15.1 L4; in the diagnosis not gated by channel, §15 version note 1).
pub fn detect_trend_pullback(
    bars: &[Bar],
    bias_cap_pct: f64,
    cap_yi: Option<f64>,
) -> Option<Trigger> {
    let n = bars.len();
    if n < TPB_MIN_BARS || !bias_ok(bars, bias_cap_pct) {
        return None;
    }
    if ma_at(bars, n - 1 - TPB_WINDOW, 20).is_none_or(|m| ma(bars, 20).is_none_or(|now| now <= m)) {
        return None;
    }
    let w = tail(bars, TPB_WINDOW);
    let peak = (0..w.len()).fold(
        0,
        |best, i| if w[i].close > w[best].close { i } else { best },
    );
    if peak == 0 || peak == w.len() - 1 {
        return None;
    }
    let peak_close = w[peak].close;
    let trough = w[peak + 1..].iter().map(|b| b.close).reduce(f64::min)?;
    let depth = ratio(peak_close - trough, peak_close)?;
    if !(TPB_MIN_DEPTH..=TPB_MAX_DEPTH).contains(&depth) {
        return None;
    }
    if w[w.len() - 1].close <= w[w.len() - 2].close {
        return None;
    }
    let after = mean_by(&w[peak + 1..], |b| b.volume)?;
    let upto = mean_by(&w[..=peak], |b| b.volume)?;
    let vr = ratio(after, upto)?;
    let mut threshold = TPB_VOL_RATIO;
    if cap_yi.is_some_and(|c| c >= TPB_LARGE_CAP_YI) {
        threshold = (threshold + 0.15).min(0.85);
    }
    if bullish_days(bars, 60) >= TPB_TREND_DAYS {
        threshold = (threshold + 0.10).min(0.90);
    }
    if vr > threshold {
        return None;
    }
    Some(Trigger {
        kind: TriggerKind::TrendPullback,
        score: 1.0 - vr,
        dates: vec![w[w.len() - 1].date, w[peak].date],
    })
}

/// Bars among the last `k` on which MA50 > MA200.
fn bullish_days(bars: &[Bar], k: usize) -> usize {
    let n = bars.len();
    if n < 200 {
        return 0;
    }
    let m50 = crate::indicators::ma_series(bars, 50);
    let m200 = crate::indicators::ma_series(bars, 200);
    (n.saturating_sub(k)..n)
        .filter(|&i| matches!((m50[i], m200[i]), (Some(a), Some(b)) if a > b))
        .count()
}

#[cfg(test)]
mod tests;
