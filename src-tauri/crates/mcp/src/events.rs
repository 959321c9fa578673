//! `stock_events`: the engine's Wyckoff marks known as of a close, each with its bar, the date
//! it became known and why — what `wyckoff events --json` prints, as a tool. The engine is
//! replayed over the cached bars up to that close only, so nothing later leaks in.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::L4Config;
use wyckoff_engine::known_on::known_as_of;
use wyckoff_market::{MarketData, StockCode};
use wyckoff_time::iso;

pub const NAME: &str = "stock_events";
pub const DISPLAY_NAME: &str = "威科夫事件";
pub const DESCRIPTION: &str = "列出引擎在某个收盘日已知的威科夫标记（事件、阶段、区间线、触发信号），\
每条带所指 K 线日期、被识别出的日期（known_on）和原因（why）。只用该日及之前的本地缓存 K 线重放引擎，\
不含未来数据。返回 data_status / source / as_of；没有缓存 K 线时如实说明，不估算。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "A 股代码：600519、600519.SH 或 sh600519"},
            "as_of": {"type": "string", "description": "读取截至该收盘日的标记 YYYY-MM-DD 或 YYYYMMDD；非交易日取之前的收盘；默认最新缓存日"}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

/// Runs `stock_events` on validated arguments.
pub async fn run(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let raw = args
        .get("code")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidArgs("missing required argument: code".into()))?;
    let code = StockCode::parse(raw).map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    let as_of = match args.get("as_of").and_then(Value::as_str) {
        Some(d) => Some(wyckoff_market::date::parse_date(d).ok_or_else(|| {
            ToolError::InvalidArgs(format!(
                "as_of must be a real date as YYYY-MM-DD or YYYYMMDD, got {d:?}"
            ))
        })?),
        None => None,
    };
    let digits = code.digits().to_owned();
    let r = md
        .daily_bars(&digits, None)
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let (Some(first), Some(last)) = (r.bars.first(), r.bars.last()) else {
        if md.stock_info(&code).is_none() {
            return Err(ToolError::InvalidArgs(format!(
                "unknown stock code {digits}: not in the stock list and no cached bars"
            )));
        }
        return Ok(json!({
            "code": digits,
            "name": r.name,
            "data_status": "unavailable",
            "source": r.source,
            "as_of": null,
            "notes": wyckoff_market::notes::texts(&r.notes),
            "message": format!("no cached daily bars for {digits}: run `wyckoff data sync {digits}` when online"),
        }));
    };
    let target = as_of.unwrap_or(last.date);
    let Some((as_of_date, marks)) = known_as_of(&r.bars, target, &L4Config::for_code(&digits))
    else {
        return Err(ToolError::InvalidArgs(format!(
            "as_of {} is outside the cached bars of {digits} ({} … {})",
            iso(target),
            iso(first.date),
            iso(last.date)
        )));
    };
    let notes: Vec<String> = wyckoff_market::notes::texts(&r.notes);
    Ok(json!({
        "code": digits,
        "name": r.name,
        "as_of": iso(as_of_date),
        "first_bar": iso(first.date),
        "bars_used": r.bars.partition_point(|b| b.date <= as_of_date),
        "data_status": r.data_status,
        "source": r.source,
        "latest_cached_bar": iso(last.date),
        "expected_last_date": r.expected_last_date.map(iso),
        "notes": notes,
        "marks": marks,
    }))
}
