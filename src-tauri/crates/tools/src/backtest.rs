//! `run_backtest` (REFERENCE §14.11, the seed's heavy tool): the funnel's signals replayed
//! day by day over the local bar cache under A-share rules (the engine's backtest). The
//! CLI's `wyckoff backtest` and the background tool run this same function.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use wyckoff_agent::{ProgressHandle, ToolError};
use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, BacktestResult, FunnelSignals, RawBacktestArgs, SignalSource,
    run_backtest_cancellable,
};
use wyckoff_engine::{Cancel, Universe};
use wyckoff_market::MarketData;

use crate::common::{iso, opt_f64, opt_i64, opt_str, round_tree};

pub const NAME: &str = "run_backtest";
pub const DISPLAY_NAME: &str = "策略回测";
pub const DESCRIPTION: &str = "回测威科夫漏斗策略（后台任务）：在 [start, end] 的每个交易日只用当日收盘前已知的K线重跑漏斗，\
次日开盘（或当日收盘）买入前 top_n 只候选，持有 hold_days 个交易日，带止损/止盈；按 A 股规则：T+1、100 股一手、\
涨停不买跌停不卖（按板块与 ST 区分涨跌幅）、佣金万2.5最低5元、卖出印花税（2023-08-28 起减半）、过户费。\
返回总收益、年化、最大回撤、胜率、盈亏比、夏普、换手、每笔交易、每日净值曲线，以及同期沪深300（缺失时上证）收益。立即返回 task_id。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "start": {"type": "string", "description": "开始日期 YYYY-MM-DD，默认 180 天前"},
            "end": {"type": "string", "description": "结束日期 YYYY-MM-DD，默认昨天"},
            "hold_days": {"type": "integer", "description": "持有交易日数，1–60，默认 10"},
            "top_n": {"type": "integer", "description": "每日买入候选数（也是持仓上限），0–20，默认 4"},
            "board": {"type": "string", "description": "all / main / chinext / star / bse，默认 all"},
            "stop_loss_pct": {"type": "number", "description": "止损百分比（≤0），默认 -8"},
            "take_profit_pct": {"type": "number", "description": "止盈百分比（≥0，0 表示不止盈），默认 0"},
            "entry_price_mode": {"type": "string", "enum": ["open", "close", "tail_1455"], "description": "open 次日开盘买入（默认）；close/tail_1455 信号日收盘买入"}
        },
        "additionalProperties": false
    })
}

fn today(md: &MarketData) -> u32 {
    wyckoff_market::date::to_yyyymmdd(md.clock().now_shanghai().date())
}

/// Signals with progress: one report every few simulated days, sent to the async side
/// (the task-local progress reporter lives there, not on the worker thread).
struct Reporting<'u> {
    inner: FunnelSignals<'u>,
    tx: tokio::sync::mpsc::UnboundedSender<(String, f32)>,
    done: usize,
    total: usize,
}

impl SignalSource for Reporting<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.done += 1;
        if self.done == 1 || self.done.is_multiple_of(5) || self.done == self.total {
            let fraction = 0.1 + 0.85 * self.done as f32 / self.total.max(1) as f32;
            let _ = self.tx.send((
                format!("{} ({}/{})", iso(day), self.done, self.total),
                fraction,
            ));
        }
        self.inner.picks(day)
    }
}

/// The worker thread: prepares the funnel and runs the days, both stopping once `cancel`
/// is set. Returns the result and the regime-gated days.
fn backtest_worker(
    universe: &Universe,
    args: &BacktestArgs,
    cancel: &dyn Cancel,
    tx: tokio::sync::mpsc::UnboundedSender<(String, f32)>,
) -> Result<(BacktestResult, usize), BacktestError> {
    let total = {
        let mut d: Vec<u32> = universe
            .stocks
            .iter()
            .flat_map(|s| s.bars.iter().map(|b| b.date))
            .filter(|d| (args.start..=args.end).contains(d))
            .collect();
        d.sort_unstable();
        d.dedup();
        d.len()
    };
    let mut screened_days = 0;
    let outcome = FunnelSignals::cancellable(universe, args.board, cancel)
        .map_err(BacktestError::from)
        .and_then(|inner| {
            let mut signals = Reporting {
                inner,
                tx,
                done: 0,
                total,
            };
            let r = run_backtest_cancellable(universe, args, &mut signals, cancel);
            screened_days = signals.done;
            r.map(|r| (r, signals.inner.gated_days))
        });
    let cancelled = matches!(outcome, Err(BacktestError::Cancelled));
    tracing::info!(
        tool = NAME,
        screened_days,
        trading_days = total,
        cancelled,
        "backtest worker finished"
    );
    outcome
}

/// Runs the backtest on validated arguments.
pub async fn run(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
) -> Result<Value, ToolError> {
    let raw = RawBacktestArgs {
        start: opt_str(args, "start"),
        end: opt_str(args, "end"),
        hold_days: opt_i64(args, "hold_days"),
        top_n: opt_i64(args, "top_n"),
        board: opt_str(args, "board"),
        stop_loss_pct: opt_f64(args, "stop_loss_pct"),
        take_profit_pct: opt_f64(args, "take_profit_pct"),
        entry_price_mode: opt_str(args, "entry_price_mode"),
    };
    let parsed =
        BacktestArgs::parse(&raw, today(md)).map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    progress.report("加载K线", "读取本地缓存", Some(0.02));
    // Everything is loaded; the backtest itself reads only bars known at each day.
    let loaded = md
        .load_universe(None)
        .await
        .map_err(|e| ToolError::Failed(format!("读取本地K线缓存失败: {e}")))?;
    let report = loaded.report;
    let universe = loaded.universe;
    progress.report(
        "准备指标",
        &format!("{} 只股票", universe.stocks.len()),
        Some(0.08),
    );
    let bt_args = parsed.clone();
    // CPU-bound: its own thread; progress comes back over a channel. The thread checks
    // the flag every day (and every layer of a day's screen), so once this future is
    // dropped — a cancelled task, app shutdown, Ctrl-C — it stops within a day's work.
    let stop = CancellationToken::new();
    let _stop_when_dropped = stop.clone().drop_guard();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(NAME.into())
        .spawn(move || {
            let outcome = backtest_worker(&universe, &bt_args, &|| stop.is_cancelled(), tx);
            let _ = done_tx.send(outcome);
        })
        .map_err(|e| ToolError::Failed(format!("无法启动回测线程: {e}")))?;
    while let Some((detail, fraction)) = rx.recv().await {
        progress.report("逐日回测", &detail, Some(fraction));
    }
    let (result, gated) = match done_rx.await {
        Err(_) => return Err(ToolError::Failed("回测任务异常中止".into())),
        Ok(Err(BacktestError::Cancelled)) => return Err(ToolError::Cancelled),
        Ok(Err(e)) => return Err(ToolError::InvalidArgs(e.to_string())),
        Ok(Ok(done)) => done,
    };
    progress.report(
        "汇总",
        &format!("{} 个交易日", result.trading_days),
        Some(0.98),
    );
    let mut v = serde_json::to_value(&result).map_err(|e| ToolError::Failed(e.to_string()))?;
    if let Value::Object(o) = &mut v {
        o.insert(
            "period".into(),
            json!(format!(
                "{} ~ {}",
                iso(result.first_day),
                iso(result.last_day)
            )),
        );
        o.insert("first_day".into(), json!(iso(result.first_day)));
        o.insert("last_day".into(), json!(iso(result.last_day)));
        for key in ["trades", "equity_curve"] {
            if let Some(Value::Array(rows)) = o.get_mut(key) {
                for row in rows.iter_mut() {
                    for field in ["date", "signal_date", "entry_date", "exit_date"] {
                        if let Some(d) = row.get(field).and_then(Value::as_u64) {
                            row[field] = json!(iso(d as u32));
                        }
                    }
                }
            }
        }
        o.insert("regime_gated_days".into(), json!(gated));
        o.insert(
            "note".into(),
            json!("信号日若大盘水温不允许新开仓（regime_gated_days），回测仍按候选买入以检验选股本身；数据只来自本地缓存"),
        );
        o.insert(
            "cache".into(),
            json!({"stocks": report.stocks, "last_date": report.last_date.map(iso), "skipped": report.skipped.len(), "missing_benchmarks": report.missing_benchmarks}),
        );
    }
    round_tree(&mut v);
    Ok(v)
}
