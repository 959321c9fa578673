//! `screen_stocks` (REFERENCE §14.8, the seed's heavy tool): the whole-market Wyckoff
//! funnel L1–L5 over the local bar cache. The CLI's `wyckoff screen` and the background
//! tool run this same function; only how progress is shown differs.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use wyckoff_agent::{ProgressHandle, ToolError};
use wyckoff_engine::funnel::{
    Funnel, FunnelConfig, FunnelError, FunnelResult, LayerCount, ScreenArgs,
};
use wyckoff_market::MarketData;
use wyckoff_market::cache::BarTable;
use wyckoff_protocol::TaskStep;
use wyckoff_time::iso;
use wyckoff_track::{Origin, ScreenRecord, TrackStore};

use crate::common::{opt_i64, opt_str, round_tree};

pub const NAME: &str = "screen_stocks";
pub const DISPLAY_NAME: &str = "全市场扫描";
pub const DESCRIPTION: &str = "全市场威科夫漏斗筛选（后台任务）：在本地K线缓存上跑 L1 流动性/ST/次新/数据质量门槛、\
L2 强势通道（含全市场 RPS 与相对上证的强弱）、L3 行业共振、L4 结构触发（Spring/EVR/趋势回踩等）、L5 退出/风险信号，\
并用上证指数计算大盘水温决定是否允许新开仓。返回各层进出数量、候选（通道、触发、分数、阶段、最新价、K线日期）、\
因数据缺失/陈旧/损坏被跳过的股票清单和数据质量。立即返回 task_id，完成后会收到通知。";

/// The funnel's layers in Chinese, for readers of `stage` (the panel words the typed step).
const LAYER_NAMES: [&str; 5] = ["基础门槛", "强势通道", "行业共振", "结构触发", "退出信号"];

/// Reports funnel layer `number` (1 = L1 … 5 = L5) as it is counted: typed, with its
/// Chinese wording; the fraction runs from where loading ended (0.4) to 0.95 at L5.
pub fn report_layer(progress: &ProgressHandle, number: u8, layer: &LayerCount) {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let name = LAYER_NAMES
        .get(usize::from(number).saturating_sub(1))
        .copied()
        .unwrap_or_default();
    progress.report_step(
        TaskStep::ScreenLayer {
            layer: number,
            input: count(layer.input),
            passed: count(layer.passed),
        },
        &format!("{} {name}", layer.layer),
        &format!("{} → {}", layer.input, layer.passed),
        Some(0.4 + 0.11 * f32::from(number.min(5))),
    );
}

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "board": {"type": "string", "description": "板块：all（默认）/ main 主板 / chinext 创业板 / star 科创板 / bse 北交所"},
            "limit": {"type": "integer", "description": "按流动性取前 N 只扫描（最多 3000）；0 或不传 = 全市场"},
            "as_of": {"type": "string", "description": "复盘日期 YYYY-MM-DD 或 YYYYMMDD：只用该日收盘及之前的K线；默认最新"}
        },
        "additionalProperties": false
    })
}

/// Board aliases a model (or a user) may use (§14.8).
fn board_alias(raw: &str) -> &str {
    match raw.trim() {
        "全部" | "全市场" | "" => "all",
        "主板" => "main",
        "创业板" | "gem" => "chinext",
        "科创板" | "科创" => "star",
        "北交所" | "北交" => "bse",
        other => other,
    }
}

fn err(e: impl std::fmt::Display) -> ToolError {
    ToolError::InvalidArgs(e.to_string())
}

/// Runs the funnel on validated arguments.
pub async fn run(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
) -> Result<Value, ToolError> {
    Ok(screen(md, args, progress).await?.1)
}

/// The tool: [`run`], and the run saved for forward tracking with its candidates —
/// always, so the window's screens, the agent's and schedules' are all followed. A store
/// that cannot save does not fail the screen (logged); a saved run's result names it
/// (`tracked_screen_id`).
pub async fn run_tracked(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
) -> Result<Value, ToolError> {
    run_tracked_under(md, args, progress, None).await
}

/// [`run_tracked`] with each candidate's suggested size under `rules` (the user's
/// Settings; `None`: no sizes), see [`with_suggested_sizes`].
pub async fn run_tracked_under(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
    rules: Option<&crate::risk::RiskRules>,
) -> Result<Value, ToolError> {
    let (result, mut value) = screen(md, args, progress).await?;
    if let Some(rules) = rules {
        with_suggested_sizes(md, rules, &result, &mut value).await;
    }
    match save_for_tracking(md, &result, Origin::Tool).await {
        Ok(Some(id)) => value["tracked_screen_id"] = json!(id),
        Ok(None) => {}
        Err(e) => tracing::warn!(tool = NAME, error = %e, "screen not saved for tracking"),
    }
    Ok(value)
}

/// `screen_stocks` as the agent's tool and the app's screen job, each candidate with its
/// suggested size under `rules` (the user's Settings).
pub fn tool_under(
    md: std::sync::Arc<MarketData>,
    rules: crate::risk::RiskRules,
) -> std::sync::Arc<dyn wyckoff_agent::Tool> {
    std::sync::Arc::new(wyckoff_agent::FnTool::new(
        wyckoff_agent::ToolSpec::new(NAME, DISPLAY_NAME).background(),
        DESCRIPTION,
        parameters(),
        move |args, ctx| {
            let md = md.clone();
            async move { run_tracked_under(&md, &args, &ctx.progress, Some(&rules)).await }
        },
    ))
}

/// Puts on each candidate of `value` (the JSON of `result`) the size the risk rules
/// suggest for buying it at its last close (`suggested_size`): the approval's own sizing
/// and limits ([`crate::risk::suggest_sizes`]) on the account now. A screen as of a past
/// day gets none (its closes are adjusted and today's account did not exist then): its
/// `suggested_size_note` says so.
pub async fn with_suggested_sizes(
    md: &MarketData,
    rules: &crate::risk::RiskRules,
    result: &FunnelResult,
    value: &mut Value,
) {
    if result.args.as_of.is_some() {
        value["suggested_size_note"] =
            json!("按某日回看的筛选不给建议仓位：仓位按今天的账户与收盘价计算");
        return;
    }
    let picks: Vec<(String, f64)> = result
        .candidates
        .iter()
        .map(|c| (c.code.clone(), c.last_close))
        .collect();
    let sizes = crate::risk::suggest_sizes(md, rules, &picks).await;
    if let Some(Value::Array(cands)) = value.get_mut("candidates") {
        for (c, size) in cands.iter_mut().zip(sizes) {
            if c.get("code").and_then(Value::as_str) == Some(size.code.as_str()) {
                c["suggested_size"] = serde_json::to_value(&size).unwrap_or(Value::Null);
            }
        }
    }
}

/// Saves a screen run for forward tracking; `None` when it screened no day.
pub async fn save_for_tracking(
    md: &MarketData,
    result: &FunnelResult,
    origin: Origin,
) -> Result<Option<i64>, wyckoff_track::TrackError> {
    let Some(record) = ScreenRecord::of(result, origin, md.clock().now()) else {
        return Ok(None);
    };
    let store = TrackStore::new(md.pool().clone()).await?;
    Ok(Some(store.save(&record).await?))
}

/// The newest bar date of any cached stock: the day today's stock list stands for.
async fn newest_stock_day(md: &MarketData) -> Result<Option<u32>, ToolError> {
    let coverage = md
        .store()
        .coverage(BarTable::Stocks)
        .await
        .map_err(|e| ToolError::Failed(format!("读取本地K线缓存失败: {e}")))?;
    Ok(coverage.iter().map(|c| c.last_date).max())
}

/// Runs the funnel: its typed result and the tool's JSON of it.
pub async fn screen(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
) -> Result<(FunnelResult, Value), ToolError> {
    let screen_args = ScreenArgs::parse(
        opt_str(args, "board").map(board_alias),
        opt_i64(args, "limit"),
        opt_str(args, "as_of"),
    )
    .map_err(err)?;
    progress.report("加载K线", "读取本地缓存", Some(0.05));
    let config = FunnelConfig::default();
    // only the bars the day's screen looks at; the app keeps them warm between screens
    // (until anything is written)
    let loaded = md
        .universe(screen_args.as_of, Some(config.screen_bars()))
        .instrument(tracing::info_span!(target: "wyckoff::stage", "read"))
        .await
        .map_err(|e| ToolError::Failed(format!("读取本地K线缓存失败: {e}")))?;
    let stocks = loaded.universe.stocks.len();
    let before_data = loaded
        .report
        .skipped
        .iter()
        .any(|s| matches!(s.reason, wyckoff_market::SkipReason::NoBarsAsOf));
    if let (0, Some(day), true) = (stocks, screen_args.as_of, before_data) {
        return Err(ToolError::InvalidArgs(format!(
            "as_of {} 早于本地全部K线，该日没有可用数据",
            iso(day)
        )));
    }
    if stocks == 0 {
        return Err(ToolError::Failed(
            "本地没有任何股票K线：先运行 `wyckoff data sync --all` 或 `wyckoff data import PATH`"
                .into(),
        ));
    }
    // A read cut at a past day ends its calendar there: the funnel is told the cache's
    // newest day, so today's names and caps read for that past day count as fallbacks.
    let newest = match screen_args.as_of {
        Some(_) => newest_stock_day(md).await?,
        None => None,
    };
    // L4 reads each trigger day again on its cached 60-minute bars; unreadable ones leave
    // every candidate saying it has no minute data
    let hours = wyckoff_market::minute_sync::hour_bars_cached(md)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(tool = NAME, error = %e, "cannot read the cached 60-minute bars");
            Default::default()
        });
    // Nothing is awaited between this report and the worker's start: a task cancelled once
    // it is reported still has a worker, which sees the cancel and says it stopped.
    progress.report(
        "漏斗筛选",
        &format!("{stocks} 只股票，{} 根K线", loaded.report.bars),
        Some(0.4),
    );
    let shared = loaded.clone();
    let run_args = screen_args.clone();
    // Dropping this future (a cancelled task, app shutdown, Ctrl-C) cancels `stop`.
    let stop = CancellationToken::new();
    let _stop_when_dropped = stop.clone().drop_guard();
    let layers = progress.clone();
    // CPU-bound (rayon inside): off the async runtime; it stops between chunks of stocks
    // and between layers once this future is dropped, and reports each layer as counted.
    let result = tokio::task::spawn_blocking(move || {
        let cancel = &|| stop.is_cancelled();
        let observer = |number: u8, layer: &LayerCount| report_layer(&layers, number, layer);
        let prepare = tracing::info_span!(target: "wyckoff::stage", "prepare");
        let prepared = Funnel::prepare_cancellable(&shared.universe, &config, cancel);
        drop(prepare);
        let _compute = tracing::info_span!(target: "wyckoff::stage", "compute");
        let result = prepared
            .map_err(FunnelError::from)
            .map(|funnel| match newest {
                Some(day) => funnel.with_current_day(day),
                None => funnel,
            })
            .map(|funnel| funnel.with_hour_bars(hours))
            .and_then(|funnel| funnel.screen_observed(&run_args, cancel, &observer));
        let cancelled = matches!(result, Err(FunnelError::Cancelled));
        tracing::info!(tool = NAME, stocks, cancelled, "screen worker finished");
        result
    })
    .await
    .map_err(|e| ToolError::Failed(format!("筛选任务异常中止: {e}")))?
    .map_err(|e| match e {
        FunnelError::Cancelled => ToolError::Cancelled,
        e => err(e),
    })?;
    let mut v = serde_json::to_value(&result).map_err(|e| ToolError::Failed(e.to_string()))?;
    if let Value::Object(o) = &mut v {
        o.insert("as_of".into(), json!(result.as_of.map(iso)));
        if let Some(Value::Array(cands)) = o.get_mut("candidates") {
            for c in cands.iter_mut() {
                if let Some(d) = c.get("bars_as_of").and_then(Value::as_u64) {
                    c["bars_as_of"] = json!(iso(d as u32));
                }
            }
        }
        o.insert("source".into(), json!("local_cache"));
        o.insert(
            "cache".into(),
            serde_json::to_value(&loaded.report).unwrap_or(Value::Null),
        );
        o.insert(
            "summary".into(),
            json!({
                "total_scanned": result.universe_size,
                "candidates": result.candidates.len(),
                "new_buy_allowed": result.regime.new_buy_allowed,
                "regime": result.regime.regime.regime.as_str(),
                "data_quality": result.data_quality.status,
            }),
        );
    }
    round_tree(&mut v);
    Ok((result, v))
}
