//! The market regime (水温, REFERENCE §15.7) from the cached benchmark bars: SSE Composite
//! for structure, ChiNext as the small-cap leg. Without enough index bars it says
//! `UNKNOWN` and why — it is never guessed. `analyze_stock`, the overview and the funnel
//! read the same engine function.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::regime::REGIME_MIN_BARS;
use wyckoff_engine::{Bar, MarketRegime, Regime, RegimeReason, bars_as_of, market_regime};
use wyckoff_market::MarketData;
use wyckoff_time::iso;

use crate::common::{market_err, round};

/// SSE Composite: the regime's benchmark.
pub const BENCHMARK: &str = "sse";
/// ChiNext index: the small-cap panic/rebound leg.
pub const SMALL_CAP: &str = "chinext";

/// The regime as of `date` (the last cached index day when `None`), with the bars used.
pub async fn regime_as_of(
    md: &MarketData,
    date: Option<u32>,
) -> Result<(MarketRegime, Option<String>), ToolError> {
    let bench = md.index_bars(BENCHMARK, date).await.map_err(market_err)?;
    let small = md.index_bars(SMALL_CAP, date).await.map_err(market_err)?;
    Ok(regime_from(&bench.bars, &small.bars, date))
}

/// [`regime_as_of`] over index bars the caller already has (no second read).
pub fn regime_from(
    bench: &[Bar],
    small: &[Bar],
    date: Option<u32>,
) -> (MarketRegime, Option<String>) {
    let bench_bars: &[Bar] = match date {
        Some(d) => bars_as_of(bench, d),
        None => bench,
    };
    // The small-cap leg must end on the benchmark's day to say anything about that day.
    let small_bars = bench_bars
        .last()
        .map(|l| bars_as_of(small, l.date))
        .filter(|s| s.last().map(|b| b.date) == bench_bars.last().map(|b| b.date));
    let mut regime = market_regime(bench_bars, small_bars, None);
    if bench_bars.is_empty() {
        regime.reasons = vec![RegimeReason::NoBenchmarkBars];
    }
    let why = (regime.regime == Regime::Unknown).then(|| {
        if bench_bars.is_empty() {
            format!(
                "本地没有上证指数日线，无法判断大盘水温；联网后运行 `wyckoff data sync --index {BENCHMARK}`"
            )
        } else {
            format!(
                "上证指数只有 {} 根日线（至少需要 {REGIME_MIN_BARS} 根），无法判断大盘水温",
                bench_bars.len()
            )
        }
    });
    (regime, why)
}

/// The regime as the tools report it.
pub fn regime_json(r: &MarketRegime, why: Option<&str>) -> Value {
    let mut v = json!({
        "regime": r.regime.as_str(),
        "structure": r.structure,
        "as_of": r.as_of.map(iso),
        "close": r.close.map(|x| round(x, 2)),
        "ma50": r.ma50.map(|x| round(x, 2)),
        "ma200": r.ma200.map(|x| round(x, 2)),
        "cum3_pct": r.cum3_pct.map(|x| round(x, 2)),
        "today_pct": r.today_pct.map(|x| round(x, 2)),
        "small_cap_today_pct": r.small_cap_today_pct.map(|x| round(x, 2)),
        "breadth_used": r.breadth_used,
        // The model reads the words; the app words the codes in the user's language.
        "reasons": r.reasons.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "reason_codes": r.reasons,
    });
    if let Some(why) = why {
        v["reason"] = json!(why);
    }
    v
}
