//! `run_backtest` (REFERENCE §14.11, the seed's heavy tool): the funnel's signals replayed
//! day by day over the local bar cache under A-share rules (the engine's backtest). The
//! CLI's `wyckoff backtest` and the background tool run this same function.
//!
//! Every sweepable argument (hold days, stop-loss, take-profit, top-n, entry, triggers) also
//! takes several values — a JSON array, or a string `5,10,20` / `5..20:5` — and then every
//! combination runs as a sweep (the engine's `backtest::sweep`): one preparation of the
//! funnel and one screen per day shared by all, progress in combinations done / total, the
//! same cancellation. One value everywhere is the plain backtest, its output unchanged.
//!
//! `walk_forward` (`{"in_sample": 250, "out_of_sample": 60, "step": 60}` in trading days, or
//! the CLI's string `"250,60,60"`) runs the grid as a walk-forward instead (the engine's
//! `backtest::walk_forward`): progress "window i of n", a `"kind": "walk_forward"` report.

use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use wyckoff_agent::{FnTool, ProgressHandle, Tool, ToolError, ToolSpec};
use wyckoff_engine::backtest::sweep::{
    Coords, MAX_COMBINATIONS, RawSweepArgs, SweepGrid, SweepMetric, SweepProgress, SweepReport,
    run_sweep,
};
use wyckoff_engine::backtest::walk_forward::{
    WalkForwardError, WalkForwardProgress, WalkForwardReport, WalkForwardSpec, run_walk_forward,
};
use wyckoff_engine::backtest::{
    BacktestArgs, BacktestError, BacktestResult, FunnelSignals, SignalSource,
    run_backtest_cancellable,
};
use wyckoff_engine::sizing::{LimitsSource, PositionSizing};
use wyckoff_engine::{Cancel, Universe};
use wyckoff_market::{MarketData, UniverseReport};
use wyckoff_time::iso;

use crate::common::{opt_str, round_tree};
use crate::risk::RiskRules;

pub const NAME: &str = "run_backtest";
pub const DISPLAY_NAME: &str = "策略回测";
pub const DESCRIPTION: &str = "回测威科夫漏斗策略（后台任务）：在 [start, end] 的每个交易日只用当日收盘前已知的K线重跑漏斗，\
次日开盘（或当日收盘）买入前 top_n 只候选，持有 hold_days 个交易日，带止损/止盈；仓位按 top_n 等分，或 sizing=risk 按风险定仓；按 A 股规则：T+1、按板块的手数（主板/创业板 100 股一手，科创板 200 股起、北交所 100 股起按 1 股递增）、\
涨停不买跌停不卖（按板块与 ST 区分涨跌幅）、佣金万2.5最低5元、卖出印花税（2023-08-28 起减半）、过户费。\
返回总收益、年化、最大回撤、胜率、盈亏比、夏普、换手、每笔交易、每日净值曲线，以及同期沪深300（缺失时上证）收益。\
参数扫描：hold_days、stop_loss_pct、take_profit_pct、top_n、entry_price_mode、triggers 可给多个取值（数组，或 \"5,10,20\"、\"5..20:5\" 形式的字符串），\
对所有组合回测（共用每日信号，最多 1000 个组合），返回每个组合的指标表、按 best_by 选出的最佳组合及其稳定性（相邻参数组合的表现，0–1）和最佳组合的完整回测。\
walk_forward（滚动样本内/样本外检验）：给出 in_sample、out_of_sample、step（交易日数），每个窗口在样本内按 best_by 选最佳组合、再在随后的样本外区间运行，\
返回每个窗口的选择与样本外指标、拼接的样本外与样本内净值曲线，以及样本外是否失效的结论（如“仅 1/16 个测试窗口为正”）。立即返回 task_id。";

/// A sweepable argument's schema: one value, a list, or a spec string.
fn sweepable(one: Value, description: &str) -> Value {
    json!({
        "anyOf": [one.clone(), {"type": "array", "items": one, "minItems": 1}, {"type": "string"}],
        "description": description,
    })
}

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "start": {"type": "string", "description": "开始日期 YYYY-MM-DD，默认 180 天前"},
            "end": {"type": "string", "description": "结束日期 YYYY-MM-DD，默认昨天"},
            "hold_days": sweepable(json!({"type": "integer"}), "持有交易日数，1–60，默认 10；多个取值则扫描，如 [5,10,20] 或 \"5..20:5\""),
            "top_n": sweepable(json!({"type": "integer"}), "每日买入候选数（也是持仓上限），0–20，默认 4；可扫描"),
            "board": {"type": "string", "description": "all / main / chinext / star / bse，默认 all"},
            "stop_loss_pct": sweepable(json!({"type": "number"}), "止损百分比，默认 -8（-8 与 8 都表示跌 8% 止损）；可扫描"),
            "take_profit_pct": sweepable(json!({"type": "number"}), "止盈百分比（≥0，0 表示不止盈），默认 0；可扫描"),
            "entry_price_mode": sweepable(json!({"type": "string", "enum": ["open", "close", "tail_1455"]}), "open 次日开盘买入（默认）；close/tail_1455 信号日收盘买入；可扫描，如 [\"open\",\"close\"]"),
            "triggers": sweepable(json!({"type": "string"}), "选股用的 L4 触发器集合，用 + 连接：spring / evr / trend_pb / sos / lps / compression，默认 spring+evr+trend_pb；可扫描，如 [\"spring+evr\",\"spring+evr+sos\"]"),
            "sizing": {"type": "string", "enum": ["equal", "risk"], "description": "仓位：equal 按 top_n 等分（默认，不执行账户限制）；risk 按风险定仓——每笔在止损处最多亏权益的 risk_pct%（含双边费用），单只不超过 1/top_n，按板块的手数规则取整，并执行设置中的账户限制（总风险、持仓数、回撤与连续止损刹车）；单次回测、参数扫描与 walk-forward 都可用"},
            "risk_pct": {"type": "number", "description": "sizing=risk 时每笔的风险占权益百分比，默认取设置中的每笔风险（未设置为 1）"},
            "best_by": {"type": "string", "enum": ["sharpe", "return", "annualized", "max_drawdown", "win_rate", "profit_factor"], "description": "扫描时按哪个指标选最佳组合，默认 sharpe（max_drawdown 取最小）"},
            "walk_forward": {
                "type": "object",
                "description": "滚动 walk-forward：每个窗口在样本内选最佳组合，再在样本外运行；start~end 至少要有 in_sample + out_of_sample 个交易日",
                "properties": {
                    "in_sample": {"type": "integer", "minimum": 1, "description": "样本内交易日数，如 250"},
                    "out_of_sample": {"type": "integer", "minimum": 1, "description": "样本外交易日数，如 60"},
                    "step": {"type": "integer", "minimum": 1, "description": "窗口滚动步长（交易日），默认等于 out_of_sample，不得小于它"}
                },
                "required": ["in_sample", "out_of_sample"],
                "additionalProperties": false
            }
        },
        "additionalProperties": false
    })
}

fn today(md: &MarketData) -> u32 {
    wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date())
}

/// Progress from a worker thread: (stage, detail, fraction), sent to the async side.
type ProgressTx = tokio::sync::mpsc::UnboundedSender<(&'static str, String, f32)>;

/// Signals with progress: one report every few simulated days, sent to the async side
/// (the task-local progress reporter lives there, not on the worker thread).
struct Reporting<'u> {
    inner: FunnelSignals<'u>,
    tx: ProgressTx,
    done: usize,
    total: usize,
}

impl SignalSource for Reporting<'_> {
    fn picks(&mut self, day: u32) -> Vec<String> {
        self.done += 1;
        if self.done == 1 || self.done.is_multiple_of(5) || self.done == self.total {
            let fraction = 0.1 + 0.85 * self.done as f32 / self.total.max(1) as f32;
            let _ = self.tx.send((
                "逐日回测",
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
    tx: ProgressTx,
    tails: Option<&wyckoff_engine::backtest::tail::TailEntries>,
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
    let outcome = FunnelSignals::with_triggers(universe, args.board, args.triggers, cancel)
        .map_err(BacktestError::from)
        .and_then(|inner| {
            let mut signals = Reporting {
                inner,
                tx,
                done: 0,
                total,
            };
            let r = match tails {
                Some(t) => wyckoff_engine::backtest::run_backtest_with_tails(
                    universe,
                    args,
                    &mut signals,
                    cancel,
                    t,
                ),
                None => run_backtest_cancellable(universe, args, &mut signals, cancel),
            };
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

/// The sweep's worker thread: every combination, progress in days screened, then
/// combinations done / total.
fn sweep_worker(
    universe: &Universe,
    grid: &SweepGrid,
    cancel: &dyn Cancel,
    tx: ProgressTx,
) -> Result<Vec<(Coords, BacktestResult, usize)>, BacktestError> {
    let outcome = run_sweep(universe, grid, cancel, &|p| {
        let (stage, detail, fraction) = match p {
            SweepProgress::Signals { done, total } => {
                if !(done == 1 || done.is_multiple_of(5) || done == total) {
                    return;
                }
                (
                    "逐日信号",
                    format!("{done}/{total} 个交易日（所有组合共用）"),
                    0.1 + 0.6 * done as f32 / total.max(1) as f32,
                )
            }
            SweepProgress::Combinations { done, total } => (
                "组合回测",
                format!("{done}/{total} 个组合"),
                0.7 + 0.28 * done as f32 / total.max(1) as f32,
            ),
        };
        let _ = tx.send((stage, detail, fraction));
    });
    tracing::info!(
        tool = NAME,
        combinations = grid.len(),
        cancelled = matches!(outcome, Err(BacktestError::Cancelled)),
        "sweep worker finished"
    );
    outcome.map(|cells| {
        cells
            .into_iter()
            .map(|c| (c.coords, c.result, c.regime_gated_days))
            .collect()
    })
}

/// The walk-forward's worker thread: progress in days screened, then window i of n. A
/// bad window (too short a period…) is the inner error.
fn walk_forward_worker(
    universe: &Universe,
    grid: &SweepGrid,
    spec: WalkForwardSpec,
    best_by: SweepMetric,
    cancel: &dyn Cancel,
    tx: ProgressTx,
) -> Result<Result<WalkForwardReport, WalkForwardError>, BacktestError> {
    let outcome = run_walk_forward(universe, grid, spec, best_by, cancel, &|p| {
        let (stage, detail, fraction) = match p {
            WalkForwardProgress::Signals { done, total } => {
                if !(done == 1 || done.is_multiple_of(5) || done == total) {
                    return;
                }
                (
                    "逐日信号",
                    format!("{done}/{total} 个交易日（所有窗口与组合共用）"),
                    0.1 + 0.4 * done as f32 / total.max(1) as f32,
                )
            }
            WalkForwardProgress::Window { index, total } => (
                "滚动窗口",
                format!("第 {index}/{total} 个窗口"),
                0.5 + 0.48 * (index - 1) as f32 / total.max(1) as f32,
            ),
        };
        let _ = tx.send((stage, detail, fraction));
    });
    tracing::info!(
        tool = NAME,
        combinations = grid.len(),
        windows = outcome.as_ref().map_or(0, |r| r.windows.len()),
        cancelled = matches!(
            outcome,
            Err(WalkForwardError::Backtest(BacktestError::Cancelled))
        ),
        "walk-forward worker finished"
    );
    match outcome {
        Err(WalkForwardError::Backtest(e)) => Err(e),
        other => Ok(other),
    }
}

/// `walk_forward` as an object `{in_sample, out_of_sample, step?}` or a string
/// `"IS,OOS[,STEP]"`; absent or null = no walk-forward.
fn walk_forward_spec(args: &Value) -> Result<Option<WalkForwardSpec>, ToolError> {
    let bad = || {
        ToolError::InvalidArgs(
            "walk_forward 应是 {\"in_sample\": 250, \"out_of_sample\": 60, \"step\": 60}（交易日数，step 可省略）"
                .into(),
        )
    };
    let spec = match args.get("walk_forward") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => {
            WalkForwardSpec::parse(s).map_err(|e| ToolError::InvalidArgs(e.to_string()))?
        }
        Some(Value::Object(o)) => {
            if o.keys()
                .any(|k| !["in_sample", "out_of_sample", "step"].contains(&k.as_str()))
            {
                return Err(bad());
            }
            let days = |key: &str| -> Result<Option<usize>, ToolError> {
                match o.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => v
                        .as_u64()
                        .and_then(|n| usize::try_from(n).ok())
                        .map(Some)
                        .ok_or_else(bad),
                }
            };
            let in_sample = days("in_sample")?.ok_or_else(bad)?;
            let out_of_sample = days("out_of_sample")?.ok_or_else(bad)?;
            WalkForwardSpec {
                in_sample,
                out_of_sample,
                step: days("step")?.unwrap_or(out_of_sample),
            }
        }
        Some(_) => return Err(bad()),
    };
    // Lengths and the step are checked before the cache is read (the period's length once
    // its trading days are known).
    spec.check()
        .map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    Ok(Some(spec))
}

/// A sweepable argument as a value spec: a number, a string (`5,10,20`, `5..20:5`), or an
/// array of numbers and strings (joined with commas); absent, null or empty = the default.
fn value_spec(args: &Value, key: &str) -> Result<Option<String>, ToolError> {
    let bad = || {
        ToolError::InvalidArgs(format!(
            "{key} 应是一个值、一个数组，或 \"5,10,20\" / \"5..20:5\" 形式的字符串"
        ))
    };
    let one = |v: &Value| match v {
        Value::Number(n) => Ok(n.to_string()),
        Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        _ => Err(bad()),
    };
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(one)
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Some(v.join(","))),
        Some(v) => one(v).map(Some),
    }
}

/// Runs `work` on a thread of its own, forwarding its progress to `progress`. The thread
/// checks the flag every day (and every layer of a day's screen), so once this future is
/// dropped — a cancelled task, app shutdown, Ctrl-C — it stops within a day's work.
async fn on_worker<T: Send + 'static>(
    progress: &ProgressHandle,
    work: impl FnOnce(&dyn Cancel, ProgressTx) -> Result<T, BacktestError> + Send + 'static,
) -> Result<T, ToolError> {
    let stop = CancellationToken::new();
    let _stop_when_dropped = stop.clone().drop_guard();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(NAME.into())
        .spawn(move || {
            let _ = done_tx.send(work(&|| stop.is_cancelled(), tx));
        })
        .map_err(|e| ToolError::Failed(format!("无法启动回测线程: {e}")))?;
    while let Some((stage, detail, fraction)) = rx.recv().await {
        progress.report(stage, &detail, Some(fraction));
    }
    match done_rx.await {
        Err(_) => Err(ToolError::Failed("回测任务异常中止".into())),
        Ok(Err(BacktestError::Cancelled)) => Err(ToolError::Cancelled),
        Ok(Err(e)) => Err(ToolError::InvalidArgs(e.to_string())),
        Ok(Ok(done)) => Ok(done),
    }
}

/// The tool's arguments checked as `run` checks them (the CLI's flags and the app's research
/// form go through this too, so all three accept and refuse the same specs): the grid, the
/// metric and the walk-forward windows. Reads no bar.
/// The sizing asked for, under the user's risk rules when given (their limits, and their
/// risk per trade when `risk_pct` is not), else the engine's defaults; risk sizing needs a
/// stop-loss in every combination.
fn sizing_of(args: &Value, rules: Option<&RiskRules>) -> Result<PositionSizing, ToolError> {
    let risk_pct = match args.get("risk_pct") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| ToolError::InvalidArgs(format!("risk_pct 必须是数字，收到 {v}")))?,
        ),
    };
    let sizing =
        PositionSizing::parse(opt_str(args, "sizing"), risk_pct).map_err(ToolError::InvalidArgs)?;
    Ok(match (sizing, rules) {
        (PositionSizing::Risk { .. }, Some(r)) => {
            let sizing = match risk_pct {
                None if r.risk_bp > 0 => PositionSizing::Risk {
                    risk_bp: r.risk_bp,
                    limits: r.limits,
                    limits_from: LimitsSource::Settings,
                },
                _ => sizing,
            };
            sizing.under(r.limits, LimitsSource::Settings)
        }
        _ => sizing,
    })
}

fn parse_args(
    args: &Value,
    today: u32,
    rules: Option<&RiskRules>,
) -> Result<(SweepGrid, SweepMetric, Option<WalkForwardSpec>), ToolError> {
    let specs = [
        "hold_days",
        "stop_loss_pct",
        "take_profit_pct",
        "top_n",
        "entry_price_mode",
        "triggers",
    ]
    .map(|key| value_spec(args, key));
    let [hold, stop, take, top, entry, triggers] = specs;
    let (hold, stop, take, top, entry, triggers) = (hold?, stop?, take?, top?, entry?, triggers?);
    let raw = RawSweepArgs {
        start: opt_str(args, "start"),
        end: opt_str(args, "end"),
        board: opt_str(args, "board"),
        hold_days: hold.as_deref(),
        stop_loss_pct: stop.as_deref(),
        take_profit_pct: take.as_deref(),
        top_n: top.as_deref(),
        entry_price_mode: entry.as_deref(),
        triggers: triggers.as_deref(),
    };
    let grid = SweepGrid::parse(&raw, today).map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    let best_by = opt_str(args, "best_by")
        .map(SweepMetric::parse)
        .transpose()
        .map_err(|e| ToolError::InvalidArgs(e.to_string()))?
        .unwrap_or_default();
    let walk_forward = walk_forward_spec(args)?;
    let grid = grid
        .with_sizing(sizing_of(args, rules)?)
        .map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    Ok((grid, best_by, walk_forward))
}

/// `run_backtest` as the agent's tool, risk sizing under `rules` (the user's Settings),
/// replacing the plain one of [`crate::market_tools`] where a desk has Settings.
pub fn tool_under(md: Arc<MarketData>, rules: RiskRules) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        ToolSpec::new(NAME, DISPLAY_NAME).background(),
        DESCRIPTION,
        parameters(),
        move |args, ctx| {
            let md = md.clone();
            async move { run_under(&md, &args, &ctx.progress, Some(&rules)).await }
        },
    ))
}

/// Runs the backtest — or the sweep, when an argument has several values — on validated
/// arguments, risk sizing under the engine's default account limits.
pub async fn run(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
) -> Result<Value, ToolError> {
    run_under(md, args, progress, None).await
}

/// [`run`] with risk sizing under `rules` (the user's Settings: the account limits, and the
/// risk per trade when `risk_pct` is not given; `None`: the engine's defaults). The
/// result's sizing says which.
pub async fn run_under(
    md: &MarketData,
    args: &Value,
    progress: &ProgressHandle,
    rules: Option<&RiskRules>,
) -> Result<Value, ToolError> {
    let (grid, best_by, walk_forward) = parse_args(args, today(md), rules)?;
    let tails = tails_for(md, &grid, walk_forward.is_some()).await?;
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
    if let Some(spec) = walk_forward {
        let wf_grid = grid.clone();
        let wf = on_worker(progress, move |cancel, tx| {
            walk_forward_worker(&universe, &wf_grid, spec, best_by, cancel, tx)
        })
        .await?
        .map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
        progress.report("汇总", &format!("{} 个窗口", wf.windows.len()), Some(0.98));
        let mut v = walk_forward_value(&wf, &report)?;
        round_tree(&mut v);
        return Ok(v);
    }
    if grid.is_single() {
        let bt_args = grid.args([0; wyckoff_engine::backtest::sweep::AXES]);
        let (result, gated) = on_worker(progress, move |cancel, tx| {
            backtest_worker(&universe, &bt_args, cancel, tx, tails.as_ref())
        })
        .await?;
        progress.report(
            "汇总",
            &format!("{} 个交易日", result.trading_days),
            Some(0.98),
        );
        let mut v = single_value(&result, gated, &report)?;
        round_tree(&mut v);
        return Ok(v);
    }
    let sweep_grid = grid.clone();
    let cells = on_worker(progress, move |cancel, tx| {
        sweep_worker(&universe, &sweep_grid, cancel, tx)
    })
    .await?;
    progress.report("汇总", &format!("{} 个组合", cells.len()), Some(0.98));
    let mut v = sweep_value(&grid, cells, best_by, &report)?;
    round_tree(&mut v);
    Ok(v)
}

/// The 14:55 prices cached over the period, when the entry is at 14:55 (a single backtest
/// only: a sweep or walk-forward with it is refused).
async fn tails_for(
    md: &MarketData,
    grid: &SweepGrid,
    walk_forward: bool,
) -> Result<Option<wyckoff_engine::backtest::tail::TailEntries>, ToolError> {
    use wyckoff_engine::backtest::EntryMode;
    if !grid.entry_price_mode.contains(&EntryMode::At1455) {
        return Ok(None);
    }
    if walk_forward || !grid.is_single() {
        return Err(ToolError::InvalidArgs(
            "14:55 买入（entry 1455）只用于单次回测，不能参数扫描或滚动检验".into(),
        ));
    }
    let a = grid.args([0; wyckoff_engine::backtest::sweep::AXES]);
    let prices = wyckoff_market::minute_sync::tail_prices_cached(md, a.start, a.end)
        .await
        .map_err(|e| ToolError::Failed(format!("读取分钟K线缓存失败: {e}")))?;
    Ok(Some(wyckoff_engine::backtest::tail::TailEntries::new(
        prices.into_iter().map(|((code, day), t)| {
            (
                code,
                day,
                t.price,
                t.day_close,
                t.bar_end,
                t.period.minutes(),
            )
        }),
    )))
}

fn to_value(v: &impl serde::Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(v).map_err(|e| ToolError::Failed(e.to_string()))
}

fn cache_value(report: &UniverseReport) -> Value {
    json!({"stocks": report.stocks, "last_date": report.last_date.map(iso), "skipped": report.skipped.len(), "missing_benchmarks": report.missing_benchmarks})
}

/// A single backtest as the tool reports it: ISO dates, the period, the gated days, the
/// cache it read.
fn single_value(
    result: &BacktestResult,
    gated: usize,
    report: &UniverseReport,
) -> Result<Value, ToolError> {
    let mut v = to_value(result)?;
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
        o.insert("cache".into(), cache_value(report));
    }
    Ok(v)
}

/// The sweep's report (`"kind": "sweep"`) with ISO dates, the period, and the best
/// combination's full run exactly as a single backtest of its parameters reports it.
fn sweep_value(
    grid: &SweepGrid,
    cells: Vec<(Coords, BacktestResult, usize)>,
    best_by: SweepMetric,
    report: &UniverseReport,
) -> Result<Value, ToolError> {
    let cells: Vec<_> = cells
        .into_iter()
        .map(
            |(coords, result, regime_gated_days)| wyckoff_engine::backtest::sweep::SweepCell {
                coords,
                result,
                regime_gated_days,
            },
        )
        .collect();
    let sweep = SweepReport::new(grid, &cells, best_by);
    let mut v = to_value(&sweep)?;
    if let Value::Object(o) = &mut v {
        o.insert(
            "period".into(),
            json!(format!(
                "{} ~ {}",
                iso(sweep.first_day),
                iso(sweep.last_day)
            )),
        );
        o.insert("first_day".into(), json!(iso(sweep.first_day)));
        o.insert("last_day".into(), json!(iso(sweep.last_day)));
        if let Some(Value::Object(g)) = o.get_mut("grid") {
            g.insert("start".into(), json!(iso(grid.start)));
            g.insert("end".into(), json!(iso(grid.end)));
        }
        let best_run = match sweep.best {
            Some(b) => single_value(&cells[b].result, cells[b].regime_gated_days, report)?,
            None => Value::Null,
        };
        o.insert("best_run".into(), best_run);
        o.insert("max_combinations".into(), json!(MAX_COMBINATIONS));
        o.insert(
            "note".into(),
            json!("每个组合与同参数的单次回测完全一致（共用每日信号）；stability 为最佳组合的相邻组合（某一参数相差一档）在全表最差与最佳之间的位置，1 = 与最佳一样好，0 = 与最差一样差；数据只来自本地缓存"),
        );
        o.insert("cache".into(), cache_value(report));
    }
    Ok(v)
}

/// The walk-forward's report (`"kind": "walk_forward"`) with ISO dates and the period.
fn walk_forward_value(wf: &WalkForwardReport, report: &UniverseReport) -> Result<Value, ToolError> {
    let mut v = to_value(wf)?;
    let date = |v: &mut Value, key: &str| {
        if let Some(d) = v.get(key).and_then(Value::as_u64) {
            v[key] = json!(iso(d as u32));
        }
    };
    date(&mut v, "first_day");
    date(&mut v, "last_day");
    date(&mut v["grid"], "start");
    date(&mut v["grid"], "end");
    for key in ["windows", "out_of_sample_curve", "in_sample_curve"] {
        if let Some(Value::Array(rows)) = v.get_mut(key) {
            for row in rows.iter_mut() {
                for field in [
                    "date",
                    "in_sample_start",
                    "in_sample_end",
                    "out_of_sample_start",
                    "out_of_sample_end",
                ] {
                    date(row, field);
                }
            }
        }
    }
    if let Value::Object(o) = &mut v {
        o.insert(
            "period".into(),
            json!(format!("{} ~ {}", iso(wf.first_day), iso(wf.last_day))),
        );
        o.insert("max_combinations".into(), json!(MAX_COMBINATIONS));
        o.insert(
            "note".into(),
            json!("每个窗口只用样本内K线选组合（样本外K线在选择时不可见），选中的组合再在样本外区间从初始资金重新运行；样本外曲线把各窗口首尾相接（复利），样本内曲线同样拼接（样本内窗口重叠时日期会重复，以 window 区分）；数据只来自本地缓存"),
        );
        o.insert("cache".into(), cache_value(report));
    }
    Ok(v)
}

/// A stored sweep or walk-forward (`run_backtest`'s report with `"kind"`), as the app's
/// research page reads it back: the parts the page shows, typed. The stored JSON holds
/// more (the best run, the cache, notes); these read from it and write a part of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResearchReport {
    Sweep(SweepSummary),
    WalkForward(WalkForwardSummary),
}

/// A sweep: a row per combination over the grid, the best by `best_by` and its stability.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct SweepSummary {
    /// `YYYY-MM-DD ~ YYYY-MM-DD`: the days simulated.
    pub period: String,
    pub combinations: u32,
    /// return, annualized, max_drawdown, sharpe, win_rate or profit_factor.
    pub best_by: String,
    pub grid: SweepAxes,
    /// In grid order: the first axis varies slowest.
    pub rows: Vec<SweepRowSummary>,
    /// Row of the best combination; none when no row has a value of the metric.
    pub best: Option<u32>,
    pub stability: Option<SweepStability>,
    /// What the runs rest on that a reader should know: the sizing, and which rules read
    /// today's facts for past days (ST from today's names, caps, missing delistings).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The swept period, board and every parameter's values, in the grid's axis order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct SweepAxes {
    /// YYYY-MM-DD.
    pub start: String,
    pub end: String,
    pub board: String,
    pub hold_days: Vec<u32>,
    pub stop_loss_pct: Vec<f64>,
    pub take_profit_pct: Vec<f64>,
    pub top_n: Vec<u32>,
    pub entry_price_mode: Vec<String>,
    pub triggers: Vec<Vec<String>>,
    /// How every combination sized its buys; absent for equal slots (and in runs stored
    /// before sizing was recorded), as the engine's report leaves it out.
    #[serde(default, skip_serializing_if = "PositionSizing::is_equal_slots")]
    pub sizing: PositionSizing,
}

/// One combination's parameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct RunParams {
    pub hold_days: u32,
    pub stop_loss_pct: f64,
    pub take_profit_pct: f64,
    pub top_n: u32,
    /// open or close.
    pub entry_price_mode: String,
    /// The L4 triggers' names (`Spring`, `EVR`, …).
    pub triggers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct SweepRowSummary {
    #[serde(flatten)]
    pub params: RunParams,
    pub metrics: RunMetrics,
    /// Picks not bought, by reason (risk sizing: the account limits that held them back).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub skipped_entries: std::collections::BTreeMap<String, u32>,
}

/// A run's metrics; none where the run has no value (no Sharpe on a flat curve, no win
/// rate without a closed trade).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct RunMetrics {
    pub total_return_pct: Option<f64>,
    pub annualized_return_pct: Option<f64>,
    pub max_drawdown_pct: Option<f64>,
    pub sharpe: Option<f64>,
    pub win_rate_pct: Option<f64>,
    pub profit_factor: Option<f64>,
    pub trades: u32,
    pub turnover: Option<f64>,
}

/// How the best combination's neighbours do: 1 = as well as the best, 0 = as badly as
/// the worst cell.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct SweepStability {
    pub score: f64,
}

/// A walk-forward: each window's in-sample choice and its out-of-sample result, the
/// chained curves and the verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct WalkForwardSummary {
    pub period: String,
    pub combinations: u32,
    pub best_by: String,
    pub windows: Vec<WindowSummary>,
    pub verdict: WalkForwardVerdict,
    /// The windows' out-of-sample runs chained (compounded).
    pub out_of_sample_curve: Vec<CurvePoint>,
    /// The in-sample runs chained likewise (dates repeat where windows overlap).
    pub in_sample_curve: Vec<CurvePoint>,
    #[serde(default)]
    pub grid: WalkForwardGrid,
    /// What the runs rest on that a reader should know (as a sweep's).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// What a walk-forward's grid says of every run (the axes are in its windows' choices).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct WalkForwardGrid {
    #[serde(default, skip_serializing_if = "PositionSizing::is_equal_slots")]
    pub sizing: PositionSizing,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct WindowSummary {
    pub index: u32,
    /// YYYY-MM-DD.
    pub in_sample_start: String,
    pub in_sample_end: String,
    pub out_of_sample_start: String,
    pub out_of_sample_end: String,
    /// The out-of-sample span ran past the data's end.
    pub partial: bool,
    /// The in-sample best; none when no combination had a value of the metric.
    pub chosen: Option<RunParams>,
    pub in_sample_metric: Option<f64>,
    pub out_of_sample: Option<RunMetrics>,
    /// Out-of-sample picks not bought, by reason (risk sizing: the account limits).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub out_of_sample_skipped: std::collections::BTreeMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct WalkForwardVerdict {
    /// The out-of-sample results do not hold up to the in-sample ones.
    pub falls_apart: bool,
    /// The engine's plain-words verdict.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct CurvePoint {
    /// YYYY-MM-DD.
    pub date: String,
    pub equity: f64,
    pub window: u32,
}

/// A sweep or walk-forward as the app's research page asks for it: every sweepable
/// parameter a spec string exactly as the CLI's flag takes it (`5,10,20`, `5..20:5`;
/// empty = the default), `walk_forward` as `IS,OOS[,STEP]`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, specta::Type)]
pub struct ResearchRequest {
    pub start: Option<String>,
    pub end: Option<String>,
    pub board: Option<String>,
    pub hold_days: Option<String>,
    pub stop_loss_pct: Option<String>,
    pub take_profit_pct: Option<String>,
    pub top_n: Option<String>,
    pub entry_price_mode: Option<String>,
    pub triggers: Option<String>,
    pub best_by: Option<String>,
    pub walk_forward: Option<String>,
    /// `equal` (default) or `risk`.
    #[serde(default)]
    pub sizing: Option<String>,
    /// With `risk`: percent of equity at risk a trade (default: Settings').
    #[serde(default)]
    pub risk_pct: Option<f64>,
}

impl ResearchRequest {
    /// The tool's arguments: the same strings the CLI passes (blank ones left out).
    pub fn to_args(&self) -> Value {
        let mut o = serde_json::Map::new();
        let fields = [
            ("start", &self.start),
            ("end", &self.end),
            ("board", &self.board),
            ("hold_days", &self.hold_days),
            ("stop_loss_pct", &self.stop_loss_pct),
            ("take_profit_pct", &self.take_profit_pct),
            ("top_n", &self.top_n),
            ("entry_price_mode", &self.entry_price_mode),
            ("triggers", &self.triggers),
            ("best_by", &self.best_by),
            ("sizing", &self.sizing),
        ];
        for (key, value) in fields {
            if let Some(v) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
                o.insert(key.into(), json!(v));
            }
        }
        if let Some(p) = self.risk_pct {
            o.insert("risk_pct".into(), json!(p));
        }
        // The tool's schema takes the windows as an object (a background start checks it);
        // a spec that does not parse stays a string, for `plan` to refuse in the CLI's words.
        if let Some(text) = self
            .walk_forward
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            let value = match WalkForwardSpec::parse(text) {
                Ok(w) => {
                    json!({"in_sample": w.in_sample, "out_of_sample": w.out_of_sample, "step": w.step})
                }
                Err(_) => json!(text),
            };
            o.insert("walk_forward".into(), value);
        }
        Value::Object(o)
    }
}

/// One axis of a planned grid: its values as the report spells them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub struct PlanAxis {
    /// The tool's argument name (`hold_days` …).
    pub param: String,
    pub values: Vec<String>,
}

/// What a research request would run, before anything is read.
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub struct ResearchPlan {
    /// YYYY-MM-DD.
    pub start: String,
    pub end: String,
    pub combinations: u32,
    /// Every axis, in the grid's order (the first varies slowest).
    pub axes: Vec<PlanAxis>,
    pub best_by: String,
    /// `[in_sample, out_of_sample, step]` in trading days, for a walk-forward.
    pub walk_forward: Option<[u32; 3]>,
    /// How every combination would size its buys, under which limits.
    pub sizing: PositionSizing,
}

/// The plan of `args` (the tool's own checks, see [`parse_args`]); `today` is the caller's.
pub fn plan(args: &Value, today: u32) -> Result<ResearchPlan, ToolError> {
    plan_under(args, today, None)
}

/// [`plan`] with risk sizing under `rules` (the user's Settings), as [`run_under`] runs it.
pub fn plan_under(
    args: &Value,
    today: u32,
    rules: Option<&RiskRules>,
) -> Result<ResearchPlan, ToolError> {
    let (grid, best_by, walk_forward) = parse_args(args, today, rules)?;
    let show = |values: Vec<String>, param: &str| PlanAxis {
        param: param.to_owned(),
        values,
    };
    let numbers = |v: &[f64]| v.iter().map(|x| format!("{x}")).collect::<Vec<_>>();
    let counts = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let axes = vec![
        show(counts(&grid.hold_days), "hold_days"),
        show(numbers(&grid.stop_loss_pct), "stop_loss_pct"),
        show(numbers(&grid.take_profit_pct), "take_profit_pct"),
        show(counts(&grid.top_n), "top_n"),
        show(
            grid.entry_price_mode
                .iter()
                .map(|m| format!("{m:?}").to_lowercase())
                .collect(),
            "entry_price_mode",
        ),
        show(
            grid.triggers.iter().map(|t| t.label()).collect(),
            "triggers",
        ),
    ];
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(ResearchPlan {
        start: iso(grid.start),
        end: iso(grid.end),
        combinations: to_u32(grid.len()),
        axes,
        best_by: serde_json::to_value(best_by)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        walk_forward: walk_forward
            .map(|w| [to_u32(w.in_sample), to_u32(w.out_of_sample), to_u32(w.step)]),
        sizing: grid.sizing,
    })
}

/// The best of a sweep's rows by another metric than the one it was run with, and that
/// best's stability — the engine's own rule (`best_and_stability`), for the heatmap.
#[derive(Debug, Clone, PartialEq, serde::Serialize, specta::Type)]
pub struct BestOf {
    /// Row of the best; `None` when no row has a value.
    pub best: Option<u32>,
    /// 0–1; `None` without neighbours.
    pub stability: Option<f64>,
}

/// `values` are the rows' metric in grid order over axes of `dims` sizes (the first
/// slowest); `metric` a `best_by` name (trades and turnover are not ranked: an error).
pub fn best_of(dims: &[u32], values: &[Option<f64>], metric: &str) -> Result<BestOf, ToolError> {
    let metric = SweepMetric::parse(metric).map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
    let dims: Vec<usize> = dims.iter().map(|d| (*d as usize).max(1)).collect();
    if dims.len() != wyckoff_engine::backtest::sweep::AXES
        || dims.iter().product::<usize>() != values.len()
    {
        return Err(ToolError::InvalidArgs(format!(
            "{} values do not fill a grid of {dims:?}",
            values.len()
        )));
    }
    let coords: Vec<Coords> = (0..values.len())
        .map(|mut k| {
            let mut c = [0; wyckoff_engine::backtest::sweep::AXES];
            for axis in (0..c.len()).rev() {
                c[axis] = k % dims[axis];
                k /= dims[axis];
            }
            c
        })
        .collect();
    let (best, stability) = wyckoff_engine::backtest::sweep::best_and_stability(
        &coords,
        values,
        metric.higher_is_better(),
    );
    Ok(BestOf {
        best: best.and_then(|b| u32::try_from(b).ok()),
        stability: stability.map(|s| s.score),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_by_another_metric_follows_the_engine_s_rule() {
        // hold 3 values × stop 2 values; the drawdown ranks lower as better.
        let dims = [3, 2, 1, 1, 1, 1];
        let dd = [Some(5.0), Some(4.0), Some(1.0), Some(6.0), Some(2.0), None];
        let b = best_of(&dims, &dd, "max_drawdown").unwrap();
        assert_eq!(b.best, Some(2));
        // Neighbours of row 2 (hold 1, stop 0): rows 0, 4 and 3 → mean 13/3 against
        // best 1 and worst 6 (in the oriented scale): (−13/3 + 6) / (−1 + 6) = 1/3.
        assert!((b.stability.unwrap() - 1.0 / 3.0).abs() < 1e-9, "{b:?}");
        let ret = [Some(1.0), Some(9.0), None, None, None, None];
        assert_eq!(best_of(&dims, &ret, "return").unwrap().best, Some(1));
        assert_eq!(best_of(&dims, &[None; 6], "sharpe").unwrap().best, None);
        assert!(best_of(&dims, &ret, "trades").is_err());
        assert!(best_of(&[2, 1, 1, 1, 1, 1], &ret, "return").is_err());
    }

    const TODAY: u32 = 20_240_701;

    fn request(hold: &str, stop: &str) -> ResearchRequest {
        ResearchRequest {
            start: Some("2024-01-02".into()),
            end: Some("2024-03-29".into()),
            hold_days: Some(hold.into()),
            stop_loss_pct: Some(stop.into()),
            ..ResearchRequest::default()
        }
    }

    #[test]
    fn a_risk_sized_plan_runs_under_the_rules_given() {
        use wyckoff_engine::risk_limits::RiskLimits;
        let rules = RiskRules {
            risk_bp: 75,
            max_position_bp: 2_000,
            limits: RiskLimits {
                max_positions: 2,
                ..RiskLimits::default()
            },
        };
        let risk = ResearchRequest {
            sizing: Some("risk".into()),
            ..request("5,10", "8")
        };
        // The settings' risk per trade and limits, and they say so.
        let p = plan_under(&risk.to_args(), TODAY, Some(&rules)).unwrap();
        assert_eq!(
            p.sizing,
            PositionSizing::Risk {
                risk_bp: 75,
                limits: rules.limits,
                limits_from: LimitsSource::Settings
            }
        );
        // A percent given wins over the settings'; no rules: the engine's defaults.
        let given = ResearchRequest {
            risk_pct: Some(1.5),
            ..risk.clone()
        };
        let p = plan_under(&given.to_args(), TODAY, Some(&rules)).unwrap();
        assert!(matches!(
            p.sizing,
            PositionSizing::Risk { risk_bp: 150, .. }
        ));
        let p = plan(&risk.to_args(), TODAY).unwrap();
        assert!(matches!(
            p.sizing,
            PositionSizing::Risk {
                risk_bp: 100,
                limits_from: LimitsSource::EngineDefault,
                ..
            }
        ));
        // Equal slots by default; a combination without a stop cannot be risk-sized.
        let p = plan(&request("5,10", "8").to_args(), TODAY).unwrap();
        assert_eq!(p.sizing, PositionSizing::EqualSlots);
        let no_stop = ResearchRequest {
            sizing: Some("risk".into()),
            ..request("5", "0,8")
        };
        let e = plan_under(&no_stop.to_args(), TODAY, Some(&rules)).unwrap_err();
        assert!(e.to_string().contains("stop_loss_pct 不能为 0"), "{e}");
    }

    #[test]
    fn a_plan_counts_the_grid_as_the_cli_parses_it() {
        let p = plan(&request("5..15:5", "8,5").to_args(), TODAY).unwrap();
        assert_eq!(p.combinations, 6);
        assert_eq!(
            (p.start.as_str(), p.end.as_str()),
            ("2024-01-02", "2024-03-29")
        );
        assert_eq!(p.axes[0].values, ["5", "10", "15"]);
        // Either sign is a loss; sorted ascending, as the CLI's sweep.
        assert_eq!(p.axes[1].values, ["-8", "-5"]);
        assert_eq!(p.axes[5].values, ["Spring+EVR+TrendPB"]);
        assert_eq!(p.best_by, "sharpe");
        assert_eq!(p.walk_forward, None);
    }

    #[test]
    fn blank_fields_are_the_defaults_and_a_walk_forward_is_planned() {
        let mut r = request(" ", "");
        r.walk_forward = Some("40,20".into());
        r.best_by = Some("return".into());
        let p = plan(&r.to_args(), TODAY).unwrap();
        assert_eq!(p.combinations, 1);
        assert_eq!(p.axes[0].values, ["10"]);
        assert_eq!(p.walk_forward, Some([40, 20, 20]));
        // As the tool's schema wants it (a background start validates the arguments).
        assert_eq!(
            r.to_args()["walk_forward"],
            json!({"in_sample": 40, "out_of_sample": 20, "step": 20})
        );
        assert_eq!(p.best_by, "return");
    }

    #[test]
    fn a_bad_spec_is_refused_with_the_cli_s_words() {
        let cases = [
            (request("5..20", "8"), "FROM..TO:STEP"),
            (request("5,5", "8"), "重复"),
            (request("5,70", "8"), "1–60"),
            (request("a", "8"), "不是数字"),
        ];
        for (r, words) in cases {
            let e = plan(&r.to_args(), TODAY).unwrap_err().to_string();
            assert!(e.contains(words), "{e}");
        }
        let mut r = request("5", "8");
        r.walk_forward = Some("40,20,10".into());
        let e = plan(&r.to_args(), TODAY).unwrap_err().to_string();
        assert!(e.contains("重叠"), "{e}");
        r.walk_forward = Some("40;20".into());
        let e = plan(&r.to_args(), TODAY).unwrap_err().to_string();
        assert!(e.contains("IS,OOS[,STEP]"), "{e}");
    }
}
