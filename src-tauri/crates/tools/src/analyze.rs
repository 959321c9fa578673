//! `analyze_stock` (REFERENCE §2.3 #2, §14.1): a Wyckoff health diagnosis of one A-share,
//! or its recent daily bars. `as_of` replays the tape as it stood at that close.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::{Bar, Diagnosis, DiagnosisConfig, Holding, MarketRegime, diagnose_with};
use wyckoff_market::{BarsResult, MarketData};
use wyckoff_time::iso;

use crate::common::{freshness, market_err, opt_date, opt_f64, opt_i64, opt_str, pct, round};
use crate::regime::{BENCHMARK, SMALL_CAP, regime_from};

pub const NAME: &str = "analyze_stock";
pub const DISPLAY_NAME: &str = "个股分析";
pub const DESCRIPTION: &str = "分析单只 A 股：支持 6 位代码（也接受 600519.SH、sh600519）。\
mode='diagnose' 做 Wyckoff 健康诊断（均线、通道、吸筹阶段、L4 触发、退出信号、止损、健康评级与理由、威科夫事件与阶段）；\
mode='price' 返回近期日线 OHLCV。结果带 data_status / source / as_of（最后一根 K 线的日期），数据陈旧或缺失时如实说明。\
只支持 A 股个股：港股、美股、ETF 和基本面（fundamental）查询暂不支持。";

/// Most bars `mode=price` returns (REFERENCE §14.1 clamps `days` to 1–250).
pub const MAX_PRICE_DAYS: i64 = 250;
const DEFAULT_PRICE_DAYS: i64 = 30;

pub const ERR_AS_OF: &str = "as_of 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD";
pub const ERR_BUY_DT: &str = "buy_dt 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 1,
                "description": "A 股代码，如 '000001'、'600519'、'600519.SH'、'sh600519'"},
            "mode": {"type": "string", "enum": ["diagnose", "price"],
                "description": "'diagnose' 做 Wyckoff 结构化诊断（默认）；'price' 仅返回近期 OHLCV 行情"},
            "cost": {"type": "number", "minimum": 0,
                "description": "持仓成本价（仅 diagnose 模式），默认 0 表示未持仓"},
            "days": {"type": "integer",
                "description": "获取天数（仅 price 模式），默认 30，超出 1–250 时截断"},
            "as_of": {"type": "string",
                "description": "复盘日期 YYYYMMDD 或 YYYY-MM-DD：只用该日收盘及之前的 K 线；默认最新"},
            "buy_dt": {"type": "string",
                "description": "建仓日 YYYYMMDD 或 YYYY-MM-DD（仅 diagnose 模式）；退出信号只看建仓日之后的 K 线，不传则不判结构退出"}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

/// Runs `analyze_stock` on validated arguments.
pub async fn run(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let code = opt_str(args, "code")
        .ok_or_else(|| ToolError::InvalidArgs("missing required argument: code".into()))?;
    let as_of = opt_date(args, "as_of", ERR_AS_OF)?;
    let mode = opt_str(args, "mode").unwrap_or("diagnose");
    match mode {
        "diagnose" => {
            let cost = opt_f64(args, "cost").filter(|c| *c > 0.0);
            let buy_dt = opt_date(args, "buy_dt", ERR_BUY_DT)?;
            Ok(match diagnose_stock(md, code, as_of, cost, buy_dt).await? {
                StockDiagnosis::NoBars(r) => unavailable(&r, mode, as_of),
                StockDiagnosis::Diagnosed(d) => {
                    let mut v = diagnosis(&d, buy_dt, as_of);
                    if let Value::Object(o) = &mut v {
                        o.insert("timeframes".into(), timeframes(md, &d).await);
                    }
                    v
                }
            })
        }
        "price" => {
            let days = opt_i64(args, "days")
                .unwrap_or(DEFAULT_PRICE_DAYS)
                .clamp(1, MAX_PRICE_DAYS);
            let r = md.daily_bars(code, as_of).await.map_err(market_err)?;
            if r.bars.is_empty() {
                return Ok(unavailable(&r, mode, as_of));
            }
            Ok(price(&r, days as usize, as_of))
        }
        other => Err(ToolError::InvalidArgs(format!(
            "mode 参数无效: '{other}'，可选值: diagnose, price"
        ))),
    }
}

/// The weekly structure around the last bar and, when it triggered an entry or an L4
/// signal, what the day's cached 60-minute bars said of it; each line names the timeframe
/// that said it.
async fn timeframes(md: &MarketData, d: &Diagnosed) -> Value {
    use wyckoff_engine::timeframes::{HourBar, Timeframe, read};
    let Some(day) = d.diagnosis.latest_date else {
        return Value::Null;
    };
    // the day's trigger: the candidate lane's entry, else the L4 triggers that fired on the
    // last bar (what the screen's L4 confirms on the same 60-minute bars)
    let trigger = d.diagnosis.candidate_entry_type.clone().or_else(|| {
        (!d.diagnosis.l4_triggers.is_empty()).then(|| d.diagnosis.l4_triggers.join("+"))
    });
    let mut hours = Vec::new();
    if trigger.is_some() {
        let store = wyckoff_market::minute::MinuteStore::new(md.pool().clone());
        let digits = d.bars.code.clone();
        match store
            .load(&digits, wyckoff_market::minute::MinutePeriod::M60)
            .await
        {
            Ok(series) => {
                hours.extend(
                    series
                        .bars
                        .iter()
                        .filter(|b| b.date() == day)
                        .map(|b| HourBar {
                            hhmm: b.hhmm(),
                            open: b.open,
                            high: b.high,
                            low: b.low,
                            close: b.close,
                        }),
                )
            }
            Err(e) => tracing::warn!(code = %digits, error = %e, "cannot read the 60-minute bars"),
        }
    }
    let mut r = read(&d.bars.bars, trigger.as_deref().unwrap_or("—"), day, &hours);
    if trigger.is_none() {
        // no trigger on the last bar: only the weekly context applies
        r.lines.retain(|l| l.timeframe == Timeframe::Weekly);
    }
    let mut v = serde_json::to_value(&r).unwrap_or(Value::Null);
    if trigger.is_none()
        && let Value::Object(o) = &mut v
    {
        o.remove("intraday");
    }
    crate::common::round_tree(&mut v);
    v
}

/// A stock as `analyze_stock` (mode diagnose) sees it: the engine's diagnosis of its cached
/// bars, or the bars' empty result (nothing is diagnosed from no bars).
pub enum StockDiagnosis {
    NoBars(BarsResult),
    Diagnosed(Box<Diagnosed>),
}

/// The engine's diagnosis with what it was made from: the stock's bars (and their
/// freshness), the benchmark's, and the day's 水温.
pub struct Diagnosed {
    pub bars: BarsResult,
    pub bench: BarsResult,
    pub regime: MarketRegime,
    /// Why the regime is unknown, when it is.
    pub regime_why: Option<String>,
    pub diagnosis: Diagnosis,
}

/// Diagnoses `code` as of `as_of` (the last bar when `None`), a holding at `cost` bought
/// on `buy_dt` when given.
pub async fn diagnose_stock(
    md: &MarketData,
    code: &str,
    as_of: Option<u32>,
    cost: Option<f64>,
    buy_dt: Option<u32>,
) -> Result<StockDiagnosis, ToolError> {
    let r = md.daily_bars(code, as_of).await.map_err(market_err)?;
    if r.bars.is_empty() {
        return Ok(StockDiagnosis::NoBars(r));
    }
    let bench = md.index_bars(BENCHMARK, as_of).await.map_err(market_err)?;
    let small = md.index_bars(SMALL_CAP, as_of).await.map_err(market_err)?;
    // 水温 as of the stock's own last bar, so both describe the same day.
    let (regime, regime_why) = regime_from(&bench.bars, &small.bars, r.as_of.or(as_of));
    let name = r.name.clone().unwrap_or_default();
    let holding = Holding { cost, buy_dt };
    let bench_bars = (!bench.bars.is_empty()).then_some(bench.bars.as_slice());
    let cfg = DiagnosisConfig {
        regime: Some(regime.regime),
        ..DiagnosisConfig::default()
    };
    let diagnosis = diagnose_with(&r.code, &name, &r.bars, &holding, bench_bars, &cfg);
    Ok(StockDiagnosis::Diagnosed(Box::new(Diagnosed {
        bars: r,
        bench,
        regime,
        regime_why,
        diagnosis,
    })))
}

/// No bars at all: say so and how to get them; never a diagnosis of nothing.
fn unavailable(r: &BarsResult, mode: &str, as_of: Option<u32>) -> Value {
    let name = r.name.clone().unwrap_or_default();
    let mut out = freshness(r);
    out.insert("code".into(), json!(r.code));
    out.insert("name".into(), json!(name));
    out.insert("mode".into(), json!(mode));
    out.insert("requested_as_of".into(), json!(as_of.map(iso)));
    let why = if r.notes.is_empty() {
        format!("no daily bars for {}", r.code)
    } else {
        wyckoff_market::notes::texts(&r.notes).join("; ")
    };
    out.insert(
        "message".into(),
        json!(format!("无法获取 {} {name} 的行情数据：{why}", r.code)),
    );
    Value::Object(out)
}

fn diagnosis(found: &Diagnosed, buy_dt: Option<u32>, as_of: Option<u32>) -> Value {
    let Diagnosed {
        bars: r,
        bench,
        regime,
        regime_why,
        diagnosis: d,
    } = found;
    let bench_bars = (!bench.bars.is_empty()).then_some(bench.bars.as_slice());
    let next_action = d.diagnosis_brief.next_step.clone();
    let mut v = serde_json::to_value(d).unwrap_or_else(|e| json!({"error": e.to_string()}));
    if let Value::Object(o) = &mut v {
        // the market layer's status (ok/stale/partial) replaces the engine's "ok"
        o.extend(freshness(r));
        o.insert("mode".into(), json!("diagnose"));
        o.insert("latest_date".into(), json!(d.latest_date.map(iso)));
        o.insert("requested_as_of".into(), json!(as_of.map(iso)));
        o.insert("buy_dt".into(), json!(buy_dt.map(iso)));
        o.insert("next_action".into(), json!(next_action));
        let mut b = freshness(bench);
        b.insert("code".into(), json!(bench.code));
        b.insert("name".into(), json!(bench.name));
        b.insert("used".into(), json!(bench_bars.is_some()));
        o.insert("benchmark".into(), Value::Object(b));
        o.insert(
            "market_regime".into(),
            crate::regime::regime_json(regime, regime_why.as_deref()),
        );
        if bench_bars.is_none()
            && let Some(Value::Array(notes)) = o.get_mut("notes")
        {
            notes.push(json!(format!(
                "benchmark {} unavailable: relative-strength checks ran without it",
                bench.code
            )));
        }
    }
    crate::common::round_tree(&mut v);
    v
}

/// One row of `mode=price` / `get_market_history`: prices 2 dp, volume in shares.
pub(crate) fn bar_row(b: &Bar, prev_close: Option<f64>) -> Value {
    json!({
        "date": iso(b.date),
        "open": round(b.open, 2),
        "high": round(b.high, 2),
        "low": round(b.low, 2),
        "close": round(b.close, 2),
        "volume": b.volume.round() as i64,
        "amount": round(b.amount, 2),
        "pct_chg": prev_close.and_then(|p| pct(p, b.close)).map(|x| round(x, 2)),
    })
}

/// The last `n` bars with their day change (the first row uses the bar before the window).
pub(crate) fn rows(bars: &[Bar], n: usize) -> Vec<Value> {
    let start = bars.len().saturating_sub(n);
    (start..bars.len())
        .map(|i| bar_row(&bars[i], i.checked_sub(1).map(|p| bars[p].close)))
        .collect()
}

fn price(r: &BarsResult, days: usize, as_of: Option<u32>) -> Value {
    let data = rows(&r.bars, days);
    let mut out = freshness(r);
    out.insert("code".into(), json!(r.code));
    out.insert("name".into(), json!(r.name));
    out.insert("mode".into(), json!("price"));
    out.insert("requested_as_of".into(), json!(as_of.map(iso)));
    out.insert("days".into(), json!(data.len()));
    out.insert(
        "latest_close".into(),
        json!(r.bars.last().map(|b| round(b.close, 2))),
    );
    out.insert("latest_date".into(), json!(r.as_of.map(iso)));
    out.insert("adjust".into(), json!("qfq"));
    out.insert("data".into(), json!(data));
    Value::Object(out)
}

/// True when a result carries no usable data (for the CLI's exit code).
pub fn is_unavailable(v: &Value) -> bool {
    v.get("data_status").and_then(Value::as_str) == Some("unavailable")
}
