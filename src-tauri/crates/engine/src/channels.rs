//! L2 strength channels for one symbol (REFERENCE §15.1 L2, §15.6), with the cross-sectional
//! RPS filter disabled (a single symbol has no universe to rank against).
//!
//! Benchmark-dependent parts are computed only from a benchmark the caller passes; without one
//! they are reported as unavailable, never assumed.

use serde::{Deserialize, Serialize};

use crate::Bar;
use crate::accumulation::{dry_volume, volume_contraction};
use crate::board::Board;
use crate::indicators::{ma, max_high, mean_by, min_low, ratio, ret_pct, tail};
use crate::triggers::{bias_cap_for_channel, detect_sos};

/// The eight channels in the fixed label order of §15 ("Details that matter").
pub const CHANNEL_ORDER: [&str; 8] = [
    "主升通道",
    "潜伏通道",
    "吸筹通道",
    "地量蓄势",
    "暗中护盘",
    "趋势延续",
    "加速突破",
    "点火破局",
];

/// Label when no channel passes (§15.6).
pub const NOT_SELECTED: &str = "未入选";

/// L2 needs `ma_long = 200` bars (§15.1 L2).
pub(crate) const L2_MIN_BARS: usize = 200;
/// 主升: bias_200 ≤ 0.25 (fraction).
pub(crate) const MOMENTUM_MAX_BIAS: f64 = 0.25;
/// RS momentum thresholds (percentage points) and their relaxation in a strong tape.
pub(crate) const RS10_MIN: f64 = 2.0;
pub(crate) const RS3_MIN: f64 = 1.0;
pub(crate) const RS_RELAX: f64 = 0.35;
pub(crate) const BENCH_STRONG_10D: f64 = 4.0;
pub(crate) const BENCH_STRONG_3D: f64 = 2.0;
/// Benchmark falling (3-day cum ≤ −2 %) lets a stock holding MA20 count as strong.
pub(crate) const BENCH_DROP_3D: f64 = -2.0;
/// 潜伏: |bias_200| ≤ 0.08, ret20 ≤ −3 %, RS10 ≥ −2, RS3 ≥ −8.
pub(crate) const AMBUSH_MAX_BIAS: f64 = 0.08;
pub(crate) const AMBUSH_MAX_RET20: f64 = -3.0;
pub(crate) const AMBUSH_RS10_MIN: f64 = -2.0;
pub(crate) const AMBUSH_RS3_MIN: f64 = -8.0;
/// 吸筹: close ≤ 250-day low ×1.45, 60-day range ≤ 40 %, volume contraction < 0.75,
/// |MA50 − MA200|/MA200 ≤ 8 %.
pub(crate) const ACC_MAX_ABOVE_LOW: f64 = 1.45;
pub(crate) const ACC_MAX_RANGE_60: f64 = 0.40;
pub(crate) const ACC_VOL_RATIO: f64 = 0.75;
pub(crate) const ACC_MA_GAP: f64 = 0.08;
/// 地量: close ≤ 250-day low ×1.35.
pub(crate) const DRY_MAX_ABOVE_LOW: f64 = 1.35;
/// 暗中护盘: close ≤ 250-day low ×1.5; benchmark volume > 1.2× ref, stock < 0.8× ref.
const RSD_MAX_ABOVE_LOW: f64 = 1.5;
const RSD_BENCH_VOL: f64 = 1.2;
const RSD_STOCK_VOL: f64 = 0.8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelStatus {
    Pass,
    Fail,
    /// Needs a benchmark (or other input) that was not given.
    Unavailable,
    /// Off by configuration (0.9.467 defaults) or needs the market-wide RPS.
    Disabled,
    InsufficientData,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelCheck {
    pub channel: String,
    pub status: ChannelStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Track {
    Trend,
    Accum,
    Unknown,
}

impl Track {
    /// Track from a channel label (§15 "Details that matter").
    pub fn from_label(label: &str) -> Track {
        if ["主升通道", "趋势延续", "点火破局"]
            .iter()
            .any(|c| label.contains(c))
        {
            Track::Trend
        } else if ["潜伏", "吸筹", "地量", "暗中护盘"]
            .iter()
            .any(|c| label.contains(c))
        {
            Track::Accum
        } else {
            Track::Unknown
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Track::Trend => "Trend",
            Track::Accum => "Accum",
            Track::Unknown => "Unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChannelReport {
    /// Passing channels `+`-joined in [`CHANNEL_ORDER`], or `未入选`.
    pub label: String,
    pub track: Track,
    pub channels: Vec<ChannelCheck>,
    /// Relative strength vs the benchmark over 10 and 3 days, percentage points.
    pub rs_10d: Option<f64>,
    pub rs_3d: Option<f64>,
}

/// Channel switches; defaults follow 0.9.467 (§15 version note 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChannelConfig {
    /// 暗中护盘 (off by default in 0.9.467).
    pub enable_rs_divergence: bool,
}

/// Evaluate the L2 channels as of the last bar. `bench` may extend past the stock's last date;
/// only benchmark bars up to it are used.
pub fn l2_channels(
    bars: &[Bar],
    bench: Option<&[Bar]>,
    board: Board,
    cfg: &ChannelConfig,
) -> ChannelReport {
    let mut checks: Vec<ChannelCheck> = CHANNEL_ORDER
        .iter()
        .map(|c| ChannelCheck {
            channel: (*c).to_string(),
            status: ChannelStatus::Fail,
            note: None,
        })
        .collect();
    let bench = bench.and_then(|b| bars.last().map(|l| as_of(b, l.date)));
    let rs10 = bench.and_then(|b| relative_strength(bars, b, 10));
    let rs3 = bench.and_then(|b| relative_strength(bars, b, 3));
    let mut report = ChannelReport {
        label: NOT_SELECTED.to_string(),
        track: Track::Unknown,
        channels: Vec::new(),
        rs_10d: rs10,
        rs_3d: rs3,
    };
    let set =
        |checks: &mut Vec<ChannelCheck>, i: usize, status: ChannelStatus, note: Option<&str>| {
            checks[i].status = status;
            checks[i].note = note.map(str::to_string);
        };
    // 趋势延续 and 加速突破 rank the stock against the market (rps); off in 0.9.467 anyway.
    set(
        &mut checks,
        5,
        ChannelStatus::Disabled,
        Some("需要全市场RPS，单股诊断不计算"),
    );
    set(
        &mut checks,
        6,
        ChannelStatus::Disabled,
        Some("需要全市场RPS，单股诊断不计算"),
    );
    if !cfg.enable_rs_divergence {
        set(&mut checks, 4, ChannelStatus::Disabled, Some("默认关闭"));
    }
    let (Some(last), Some(ma50), Some(ma200)) = (bars.last(), ma(bars, 50), ma(bars, 200)) else {
        for (i, c) in checks.iter_mut().enumerate() {
            if !matches!(c.status, ChannelStatus::Disabled) || i == 4 && cfg.enable_rs_divergence {
                c.status = ChannelStatus::InsufficientData;
                c.note = Some(format!("需要≥{L2_MIN_BARS}根K线"));
            }
        }
        report.channels = checks;
        return report;
    };
    let close = last.close;
    let bias = ratio(close - ma200, ma200);
    let bullish = ma50 > ma200;

    // 主升通道
    let bench3 = bench.and_then(|b| ret_pct(b, 3));
    let bench10 = bench.and_then(|b| ret_pct(b, 10));
    let holding_ma20 =
        bench3.is_some_and(|r| r <= BENCH_DROP_3D) && ma(bars, 20).is_some_and(|m| close >= m);
    let (rs_ok, rs_note) = match (bench, rs10, rs3) {
        (None, _, _) => (true, Some("RS未校验（未提供基准）")),
        (Some(_), Some(a), Some(b)) => {
            let strong = bench10.is_some_and(|r| r >= BENCH_STRONG_10D)
                || bench3.is_some_and(|r| r >= BENCH_STRONG_3D);
            let k = if strong { RS_RELAX } else { 1.0 };
            (a >= RS10_MIN * k && b >= RS3_MIN * k, None)
        }
        (Some(_), _, _) => (true, Some("RS未校验（基准缺少对应日期）")),
    };
    let momentum =
        (bullish || holding_ma20) && rs_ok && bias.is_some_and(|b| b <= MOMENTUM_MAX_BIAS);
    set(&mut checks, 0, pass(momentum), rs_note);

    // 潜伏通道
    let ambush_rs = match (bench, rs10, rs3) {
        (Some(_), Some(a), Some(b)) => a >= AMBUSH_RS10_MIN && b >= AMBUSH_RS3_MIN,
        _ => true,
    };
    let ambush = bias.is_some_and(|b| b.abs() <= AMBUSH_MAX_BIAS)
        && ret_pct(bars, 20).is_some_and(|r| r <= AMBUSH_MAX_RET20)
        && ambush_rs;
    set(&mut checks, 1, pass(ambush), rs_note);

    // 吸筹通道 and 地量蓄势 need a year of bars.
    let low250 = (bars.len() >= 250)
        .then(|| min_low(tail(bars, 250)))
        .flatten();
    match low250 {
        None => {
            set(
                &mut checks,
                2,
                ChannelStatus::InsufficientData,
                Some("需要≥250根K线"),
            );
            set(
                &mut checks,
                3,
                ChannelStatus::InsufficientData,
                Some("需要≥250根K线"),
            );
        }
        Some(low) => {
            let b60 = tail(bars, 60);
            let range60 = match (max_high(b60), min_low(b60)) {
                (Some(h), Some(l)) => ratio(h - l, l),
                _ => None,
            };
            let acc = close <= low * ACC_MAX_ABOVE_LOW
                && range60.is_some_and(|r| r <= ACC_MAX_RANGE_60)
                && volume_contraction(bars).is_some_and(|r| r < ACC_VOL_RATIO)
                && ratio((ma50 - ma200).abs(), ma200).is_some_and(|g| g <= ACC_MA_GAP);
            set(&mut checks, 2, pass(acc), None);
            let dry = close <= low * DRY_MAX_ABOVE_LOW && dry_volume(bars);
            set(&mut checks, 3, pass(dry), None);
        }
    }

    // 暗中护盘
    if cfg.enable_rs_divergence {
        match bench {
            None => set(
                &mut checks,
                4,
                ChannelStatus::Unavailable,
                Some("需要基准指数"),
            ),
            Some(b) => {
                let r = rs_divergence(bars, b, low250);
                match r {
                    None => set(&mut checks, 4, ChannelStatus::InsufficientData, None),
                    Some(ok) => set(&mut checks, 4, pass(ok), None),
                }
            }
        }
    }

    // 点火破局: with RPS inactive, the SOS detector alone decides.
    let sos = detect_sos(bars, bias_cap_for_channel(board, "点火破局")).is_some();
    set(&mut checks, 7, pass(sos), None);

    let passed: Vec<&str> = checks
        .iter()
        .filter(|c| c.status == ChannelStatus::Pass)
        .map(|c| c.channel.as_str())
        .collect();
    if !passed.is_empty() {
        report.label = passed.join("+");
    }
    report.track = Track::from_label(&report.label);
    report.channels = checks;
    report
}

fn pass(ok: bool) -> ChannelStatus {
    if ok {
        ChannelStatus::Pass
    } else {
        ChannelStatus::Fail
    }
}

/// Benchmark bars up to and including `date`.
pub fn as_of(bench: &[Bar], date: u32) -> &[Bar] {
    let end = bench.partition_point(|b| b.date <= date);
    &bench[..end]
}

/// Stock return minus benchmark return over the stock's last `n` bars, on the same dates
/// (percentage points); `None` when the benchmark lacks either date.
pub fn relative_strength(bars: &[Bar], bench: &[Bar], n: usize) -> Option<f64> {
    if bars.len() < n + 1 {
        return None;
    }
    let (from, to) = (bars[bars.len() - 1 - n], bars[bars.len() - 1]);
    let find = |d: u32| {
        bench
            .binary_search_by_key(&d, |b| b.date)
            .ok()
            .map(|i| bench[i].close)
    };
    let b_ret = ratio(find(to.date)?, find(from.date)?)? - 1.0;
    let s_ret = ratio(to.close, from.close)? - 1.0;
    crate::indicators::finite((s_ret - b_ret) * 100.0)
}

/// 暗中护盘 (§15.1 L2): the benchmark makes a new 20-day low while the stock holds a higher low.
fn rs_divergence(bars: &[Bar], bench: &[Bar], low250: Option<f64>) -> Option<bool> {
    if bars.len() < 60 || bench.len() < 60 {
        return None;
    }
    let (sn, bn) = (bars.len(), bench.len());
    let min_close = |s: &[Bar]| s.iter().map(|b| b.close).reduce(f64::min);
    let bench_new_low = min_close(&bench[bn - 20..])? < min_close(&bench[bn - 60..bn - 20])?;
    let higher_low = min_low(&bars[sn - 20..])? >= min_low(&bars[sn - 60..sn - 20])?;
    let near_base = low250.is_some_and(|l| bars[sn - 1].close <= l * RSD_MAX_ABOVE_LOW);
    let vol = |s: &[Bar], n: usize| {
        Some((
            mean_by(&s[n - 20..], |b| b.volume)?,
            mean_by(&s[n - 60..n - 20], |b| b.volume)?,
        ))
    };
    let (bv, bref) = vol(bench, bn)?;
    let (sv, sref) = vol(bars, sn)?;
    let vol_ok = if bref > 0.0 && sref > 0.0 {
        bv > RSD_BENCH_VOL * bref && sv < RSD_STOCK_VOL * sref
    } else {
        true
    };
    Some(bench_new_low && higher_low && near_base && vol_ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::test_support::from_closes;

    /// Bars with volume rising over time, so the last days are never "dry".
    fn rising_volume(closes: &[f64]) -> Vec<Bar> {
        let mut bars = from_closes(closes, 1000.0);
        for (i, b) in bars.iter_mut().enumerate() {
            b.volume = 1000.0 + 10.0 * i as f64;
        }
        bars
    }

    fn status(r: &ChannelReport, name: &str) -> ChannelStatus {
        r.channels
            .iter()
            .find(|c| c.channel == name)
            .map(|c| c.status)
            .unwrap()
    }

    #[test]
    fn uptrend_is_momentum_without_benchmark_and_notes_it() {
        let closes: Vec<f64> = (0..260).map(|i| 10.0 * 1.001f64.powi(i)).collect();
        let r = l2_channels(
            &rising_volume(&closes),
            None,
            Board::Main,
            &ChannelConfig::default(),
        );
        assert_eq!(r.label, "主升通道");
        assert_eq!(r.track, Track::Trend);
        let c = &r.channels[0];
        assert!(c.note.as_deref().unwrap().contains("未提供基准"));
        assert_eq!(r.rs_10d, None);
        assert_eq!(status(&r, "暗中护盘"), ChannelStatus::Disabled);
    }

    #[test]
    fn momentum_fails_when_the_benchmark_outruns_the_stock() {
        let closes: Vec<f64> = (0..260).map(|i| 10.0 * 1.001f64.powi(i)).collect();
        let bars = from_closes(&closes, 1000.0);
        let bclose: Vec<f64> = (0..260).map(|i| 10.0 * 1.01f64.powi(i)).collect();
        let bench = from_closes(&bclose, 1000.0);
        let r = l2_channels(&bars, Some(&bench), Board::Main, &ChannelConfig::default());
        assert_eq!(status(&r, "主升通道"), ChannelStatus::Fail);
        assert!(r.rs_10d.unwrap() < 0.0);
    }

    #[test]
    fn downtrend_is_not_selected() {
        let closes: Vec<f64> = (0..260).map(|i| 20.0 * 0.998f64.powi(i)).collect();
        let r = l2_channels(
            &rising_volume(&closes),
            None,
            Board::Main,
            &ChannelConfig::default(),
        );
        assert_eq!(r.label, NOT_SELECTED);
        assert_eq!(r.track, Track::Unknown);
    }

    #[test]
    fn short_history_reports_insufficient_data() {
        let r = l2_channels(
            &from_closes(&[10.0; 50], 1000.0),
            None,
            Board::Main,
            &ChannelConfig::default(),
        );
        assert_eq!(r.label, NOT_SELECTED);
        assert_eq!(status(&r, "主升通道"), ChannelStatus::InsufficientData);
        let r = l2_channels(&[], None, Board::Main, &ChannelConfig::default());
        assert_eq!(r.label, NOT_SELECTED);
    }

    #[test]
    fn rs_divergence_needs_a_benchmark_when_enabled() {
        let cfg = ChannelConfig {
            enable_rs_divergence: true,
        };
        let closes: Vec<f64> = (0..260)
            .map(|i| 10.0 + 0.1 * ((i as f64) / 9.0).sin())
            .collect();
        let r = l2_channels(&from_closes(&closes, 1000.0), None, Board::Main, &cfg);
        assert_eq!(status(&r, "暗中护盘"), ChannelStatus::Unavailable);
    }

    #[test]
    fn tracks_from_labels() {
        assert_eq!(Track::from_label("潜伏通道+吸筹通道"), Track::Accum);
        assert_eq!(Track::from_label("吸筹通道+点火破局"), Track::Trend);
        assert_eq!(Track::from_label("未入选"), Track::Unknown);
    }

    #[test]
    fn as_of_truncates_the_benchmark() {
        let bench = from_closes(&[1.0, 2.0, 3.0], 1.0);
        assert_eq!(as_of(&bench, bench[1].date).len(), 2);
        assert_eq!(as_of(&bench, 0).len(), 0);
    }
}
