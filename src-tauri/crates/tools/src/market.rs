//! `get_market_overview` and `get_market_history` (REFERENCE §2.3 #4–5, §14.4–14.5): the
//! main indices from the local cache. The bundled offline data has no index bars, so
//! offline these say `unavailable` with the reason; numbers are never filled in.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::funnel::{Funnel, FunnelConfig, ScreenArgs};
use wyckoff_market::{BarsResult, DataStatus, IndexCode, MarketData};
use wyckoff_time::iso;

use crate::analyze::rows;
use crate::common::{
    freshness, market_err, opt_date, opt_i64, opt_str, pct, round, status_str, worst,
};

pub const OVERVIEW: &str = "get_market_overview";
pub const OVERVIEW_DISPLAY: &str = "大盘水温";
pub const OVERVIEW_DESCRIPTION: &str = "获取 A 股主要指数截面（上证指数、深证成指、创业板指、上证50、中证500）：\
收盘、涨跌幅、成交量、成交额，可查最新或指定历史交易日。结果带 data_status / source / as_of；\
本地没有指数行情时（离线内置数据不含指数）返回 data_status='unavailable' 和原因，不编造数字。\
include_breadth=true 时用本地全市场个股日线计算当日宽度（站上 MA20 比例、上涨家数占比、涨跌幅中位数），样本不足时如实标注为不可用。";

pub const HISTORY: &str = "get_market_history";
pub const HISTORY_DISPLAY: &str = "大盘回看";
pub const HISTORY_DESCRIPTION: &str = "回看 A 股主要指数过去 N 个交易日的日线量价关系，用于分析阶段位置、近期结构和量价变化。\
返回逐日 OHLCV 与摘要（区间涨跌、近20日涨跌、量比、最大回撤、放量上涨/下跌天数），带 data_status / source / as_of；\
本地没有该指数行情时返回 unavailable 和原因。";

/// The overview's indices (REFERENCE §14.4).
pub const OVERVIEW_INDICES: [&str; 5] = [
    "000001.SH",
    "399001.SZ",
    "399006.SZ",
    "000016.SH",
    "000905.SH",
];
pub const DEFAULT_HISTORY_DAYS: i64 = 100;
pub const MAX_HISTORY_DAYS: i64 = 320;
/// The summary's short window.
const RECENT: usize = 20;

pub const ERR_TRADE_DATE: &str = "trade_date 必须是 YYYY-MM-DD 或 YYYYMMDD";
pub const SYNC_HINT: &str =
    "wyckoff data sync --index sse --index szse --index chinext --index sse50 --index csi500";

pub fn overview_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "trade_date": {"type": "string",
                "description": "交易日 YYYY-MM-DD 或 YYYYMMDD；留空为最新。非交易日取之前最近的交易日"},
            "include_breadth": {"type": "boolean",
                "description": breadth_description(FunnelConfig::default().breadth_min_stocks)}
        },
        "additionalProperties": false
    })
}

/// What `include_breadth` adds, naming the fields `breadth` carries and the sample below
/// which it says unavailable (the funnel's own minimum).
pub fn breadth_description(min_stocks: usize) -> String {
    format!(
        "是否同时返回市场宽度 breadth：用本地全市场个股日线计算当日站上 MA20 比例（pct_above_ma20 及较前一日变化 pct_above_ma20_delta）、\
上涨家数占比（up_ratio_pct）、涨跌幅中位数（median_pct_chg）和样本数 sample_size；当日有本地日线的个股少于 {min_stocks} 只时 \
data_status='unavailable' 并说明原因，不编造"
    )
}

pub fn history_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "days": {"type": "integer", "description": "交易日数，默认 100，超出 1–320 时截断"},
            "index": {"type": "string",
                "description": "指数别名或代码，支持 sse/上证/csi300/沪深300/szse/深证/chinext/创业板/sse50/上证50/csi500/中证500 或 000300.SH；默认 sse"}
        },
        "additionalProperties": false
    })
}

fn index_entry(r: &BarsResult) -> Value {
    let mut m = freshness(r);
    m.insert("ts_code".into(), json!(r.code));
    m.insert("name".into(), json!(r.name));
    if let Some(last) = r.bars.last() {
        let prev = r.bars.len().checked_sub(2).map(|i| r.bars[i].close);
        m.insert("trade_date".into(), json!(iso(last.date)));
        m.insert("close".into(), json!(round(last.close, 2)));
        m.insert(
            "pct_chg".into(),
            json!(prev.and_then(|p| pct(p, last.close)).map(|x| round(x, 2))),
        );
        m.insert("vol".into(), json!(last.volume.round() as i64));
        m.insert("amount".into(), json!(round(last.amount, 2)));
    }
    Value::Object(m)
}

pub async fn overview(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let date = opt_date(args, "trade_date", ERR_TRADE_DATE)?;
    let include_breadth = args
        .get("include_breadth")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut indices = Map::new();
    let mut statuses = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut last_dates = Vec::new();
    let mut missing = Vec::new();
    for code in OVERVIEW_INDICES {
        let r = md.index_bars(code, date).await.map_err(market_err)?;
        statuses.push(r.data_status);
        if let Some(s) = &r.source
            && !sources.contains(s)
        {
            sources.push(s.clone());
        }
        match r.as_of {
            Some(d) => last_dates.push(d),
            None => missing.push(r.name.clone().unwrap_or_else(|| r.code.clone())),
        }
        let key = r.name.clone().unwrap_or_else(|| r.code.clone());
        indices.insert(key, index_entry(&r));
    }
    let status = if missing.len() == OVERVIEW_INDICES.len() {
        DataStatus::Unavailable
    } else if !missing.is_empty() {
        DataStatus::Partial
    } else {
        worst(statuses).unwrap_or(DataStatus::Unavailable)
    };
    let mut out = json!({
        "indices": indices,
        "requested_date": date.map(iso),
        "data_status": status_str(status),
        "source": if sources.is_empty() { Value::Null } else { json!(sources.join(",")) },
        // the newest bar among the indices; each index carries its own trade_date
        "as_of": last_dates.iter().max().copied().map(iso),
        "trade_date": last_dates.iter().max().copied().map(iso),
    });
    if status == DataStatus::Unavailable {
        out["reason"] = json!(format!(
            "指数行情不可用：本地缓存没有指数日线（离线内置数据只含 8 只个股，不含指数）。联网后运行 `{SYNC_HINT}` 同步；不会编造数字。"
        ));
    } else if !missing.is_empty() {
        out["reason"] = json!(format!(
            "部分指数没有本地行情：{}。联网后运行 `{SYNC_HINT}`。",
            missing.join("、")
        ));
    }
    let (regime, why) = crate::regime::regime_as_of(md, date).await?;
    out["market_regime"] = crate::regime::regime_json(&regime, why.as_deref());
    // the day's 涨停/跌停/炸板 that the 水温 explanation cites: the market map's own counts
    out["market_regime"]["limits"] = match crate::market_map::market_map(md, date).await {
        Ok(map) => json!({
            "trade_date": map.trade_date,
            "limit_up": map.limits.limit_up,
            "limit_down": map.limits.limit_down,
            "failed": map.limits.failed,
            "highest_board": map.limits.highest_board,
        }),
        Err(e) => json!({ "unavailable": e.to_string() }),
    };
    if include_breadth {
        out["breadth"] = serde_json::to_value(breadth(md, date).await?)
            .map_err(|e| ToolError::Failed(e.to_string()))?;
    }
    Ok(out)
}

/// Market breadth of a day from the cached stock bars (the funnel's own figures), as
/// `get_market_overview` reports it under `breadth` and the app's overview reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "data_status", rename_all = "snake_case")]
pub enum MarketBreadth {
    /// Enough stocks traded that day: share above MA20 (and its change), up ratio,
    /// median change, each to 2 decimals.
    Ok {
        trade_date: Option<String>,
        sample_size: usize,
        pct_above_ma20: Option<f64>,
        pct_above_ma20_delta: Option<f64>,
        up_ratio_pct: Option<f64>,
        median_pct_chg: Option<f64>,
        /// Always `local_cache`.
        source: String,
    },
    /// Fewer than `min_sample` stocks had a bar that day: nothing computed.
    Unavailable {
        /// Absent when no stock has a bar at all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trade_date: Option<String>,
        sample_size: usize,
        min_sample: usize,
        /// Why, and how to get the bars.
        reason: String,
    },
}

/// Market breadth of a day from the cached stock bars: share above MA20, up ratio, median
/// change — when enough stocks traded that day; otherwise unavailable with how many there
/// were.
pub async fn breadth(md: &MarketData, date: Option<u32>) -> Result<MarketBreadth, ToolError> {
    let cfg = FunnelConfig::default();
    // the day's screen view, shared with the screens (warm in the app)
    let loaded = md
        .universe(date, Some(cfg.screen_bars()))
        .await
        .map_err(|e| ToolError::Failed(format!("读取本地K线缓存失败: {e}")))?;
    let need = cfg.breadth_min_stocks;
    let args = ScreenArgs {
        as_of: date,
        ..ScreenArgs::default()
    };
    let screened = tokio::task::spawn_blocking(move || {
        let universe = &loaded.universe;
        (!universe.stocks.is_empty()).then(|| Funnel::prepare(universe, &cfg).screen(&args))
    })
    .await
    .map_err(|e| ToolError::Failed(format!("宽度计算异常中止: {e}")))?;
    let result = match screened {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(ToolError::InvalidArgs(e.to_string())),
        None => {
            return Ok(MarketBreadth::Unavailable {
                trade_date: None,
                sample_size: 0,
                min_sample: need,
                reason: "本地没有个股日线，无法计算市场宽度；先运行 `wyckoff data sync --all` 或 `wyckoff data import PATH`。".into(),
            });
        }
    };
    let sample = result.regime.breadth_stocks;
    let trade_date = result.as_of.map(iso);
    let r2 = |x: Option<f64>| x.map(|x| round(x, 2));
    Ok(match result.regime.breadth {
        Some(b) => MarketBreadth::Ok {
            trade_date,
            sample_size: sample,
            pct_above_ma20: r2(b.pct_above_ma20),
            pct_above_ma20_delta: r2(b.pct_above_ma20_delta),
            up_ratio_pct: r2(b.up_ratio_pct),
            median_pct_chg: r2(b.median_pct_chg),
            source: "local_cache".into(),
        },
        None => MarketBreadth::Unavailable {
            trade_date,
            sample_size: sample,
            min_sample: need,
            reason: format!(
                "当日只有 {sample} 只股票有本地日线（至少需要 {need} 只）；未计算，不编造。同步全市场：`wyckoff data sync --all`"
            ),
        },
    })
}

pub async fn history(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let days = opt_i64(args, "days")
        .unwrap_or(DEFAULT_HISTORY_DAYS)
        .clamp(1, MAX_HISTORY_DAYS) as usize;
    let key = opt_str(args, "index").unwrap_or("sse");
    let idx = IndexCode::parse(key).map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    let r = md.index_bars(key, None).await.map_err(market_err)?;
    let mut out = freshness(&r);
    out.insert(
        "index".into(),
        json!({"key": key, "symbol": r.code, "name": idx.name()}),
    );
    out.insert("requested_days".into(), json!(days));
    if r.bars.is_empty() {
        out.insert("ok".into(), json!(false));
        out.insert("returned_days".into(), json!(0));
        out.insert("summary".into(), Value::Null);
        out.insert("rows".into(), json!([]));
        out.insert(
            "reason".into(),
            json!(format!(
                "{} 没有本地指数行情（离线内置数据不含指数）。联网后运行 `wyckoff data sync --index {key}`；不会编造数字。",
                r.code
            )),
        );
        return Ok(Value::Object(out));
    }
    let rows = rows(&r.bars, days);
    out.insert("ok".into(), json!(true));
    out.insert("returned_days".into(), json!(rows.len()));
    out.insert("summary".into(), summary(&r.bars, days));
    out.insert("rows".into(), json!(rows));
    Ok(Value::Object(out))
}

fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

fn r2(x: Option<f64>) -> Value {
    json!(x.filter(|v| v.is_finite()).map(|v| round(v, 2)))
}

/// Price/volume summary of the last `days` bars (REFERENCE §14.5 fields).
fn summary(all: &[wyckoff_engine::Bar], days: usize) -> Value {
    let n = all.len();
    let start = n.saturating_sub(days);
    let w = &all[start..];
    let Some(last) = w.last() else {
        return Value::Null;
    };
    let prev_close = |i: usize| i.checked_sub(1).map(|p| all[p].close);
    let base = prev_close(start).unwrap_or(w[0].open);
    let recent_base = n.checked_sub(RECENT + 1).map(|i| all[i].close);
    let vol20 = mean(all[n.saturating_sub(RECENT)..].iter().map(|b| b.volume));
    let prior20 = (n >= 2 * RECENT)
        .then(|| mean(all[n - 2 * RECENT..n - RECENT].iter().map(|b| b.volume)))
        .flatten();
    let mut peak = f64::MIN;
    let mut max_dd: f64 = 0.0;
    for b in w {
        peak = peak.max(b.close);
        if peak > 0.0 {
            max_dd = max_dd.min((b.close / peak - 1.0) * 100.0);
        }
    }
    let (mut up, mut down, mut up_vol_up, mut down_vol_up) = (0, 0, 0, 0);
    for i in start.max(1)..n {
        let (b, p) = (&all[i], &all[i - 1]);
        let vol_up = b.volume > p.volume;
        if b.close > p.close {
            up += 1;
            up_vol_up += usize::from(vol_up);
        } else if b.close < p.close {
            down += 1;
            down_vol_up += usize::from(vol_up);
        }
    }
    json!({
        "latest_date": iso(last.date),
        "latest_close": round(last.close, 2),
        "latest_pct_chg": r2(prev_close(n - 1).and_then(|p| pct(p, last.close))),
        "period_return_pct": r2(pct(base, last.close)),
        "recent_20d_return_pct": r2(recent_base.and_then(|b| pct(b, last.close))),
        "latest_volume_ratio_20d": r2(vol20.filter(|v| *v > 0.0).map(|v| last.volume / v)),
        "recent_20d_volume_vs_prior": r2(match (vol20, prior20) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        }),
        "max_drawdown_pct": round(max_dd, 2),
        "up_days": up,
        "down_days": down,
        "price_up_volume_up_days": up_vol_up,
        "price_down_volume_up_days": down_vol_up,
    })
}
