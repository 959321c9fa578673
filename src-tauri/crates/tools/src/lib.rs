//! The agent's market tools (REFERENCE §2.2–2.3 schemas, §14 outputs), over
//! `wyckoff-market`'s `MarketData` and the pure `wyckoff-engine`:
//!
//! | tool | display | flags |
//! |---|---|---|
//! | `search_stock_by_name` | 搜索股票 | concurrency-safe |
//! | `analyze_stock` | 个股分析 | concurrency-safe |
//! | `portfolio` | 持仓 | concurrency-safe |
//! | `get_market_overview` | 大盘水温 | concurrency-safe |
//! | `get_market_history` | 大盘回看 | concurrency-safe |
//! | `get_market_map` | 市场情绪 | concurrency-safe (reads only) |
//! | `size_position` | 仓位计算 | concurrency-safe (reads only) |
//! | `screen_stocks` | 全市场扫描 | background |
//! | `run_backtest` | 策略回测 | background |
//! | `update_portfolio` | 调仓操作 | requires approval |
//! | `record_fill` | 记录成交 | requires approval |
//! | `annotate_chart` | 图表标注 | concurrency-safe, writes (changes only chart notes, unasked) |
//!
//! Scope is A-shares: the reference's HK/US/ETF, fundamental and `delete_records` parts are
//! left out (the descriptions say so). Every result is a JSON object carrying
//! `data_status` (`ok|stale|partial|unavailable`), `source` and `as_of` (the date of the
//! last bar used, `YYYY-MM-DD`), plus `notes`; numbers come only from stored bars.
//!
//! Entry points: [`market_tools`] / [`register_market_tools`] for the runtime, and the
//! plain async functions ([`analyze::run`], [`market::overview`], …) for the CLI, which
//! prints what the tools return without any LLM.

pub mod alerts;
pub mod analyze;
pub mod annotate;
pub mod backtest;
pub mod chart;
mod common;
pub mod exec;
pub mod files;
pub mod job_summary;
pub mod jobs;
pub mod journal;
pub mod ledger_sync;
pub mod market;
pub mod market_map;
pub mod portfolio;
pub mod regime;
pub mod report;
pub mod risk;
pub mod screen;
pub mod search;
pub mod sizing;
pub mod sync;
pub mod web_fetch;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use wyckoff_agent::{FnTool, ProgressHandle, Tool, ToolError, ToolRegistry, ToolSpec};
use wyckoff_llm::Provider;
use wyckoff_market::MarketData;

pub use analyze::is_unavailable;
pub use common::BarsFreshness;

type Handler<F> = fn(Arc<MarketData>, Value) -> F;

fn tool<F>(
    spec: ToolSpec,
    description: &str,
    parameters: Value,
    md: &Arc<MarketData>,
    run: Handler<F>,
) -> Arc<dyn Tool>
where
    F: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    reporting_tool(spec, description, parameters, md, move |md, args, _| {
        run(md, args)
    })
}

/// [`tool`] for the heavy tools, which report progress through the call's handle.
fn reporting_tool<F>(
    spec: ToolSpec,
    description: &str,
    parameters: Value,
    md: &Arc<MarketData>,
    run: impl Fn(Arc<MarketData>, Value, ProgressHandle) -> F + Send + Sync + 'static,
) -> Arc<dyn Tool>
where
    F: Future<Output = Result<Value, ToolError>> + Send + 'static,
{
    let md = md.clone();
    Arc::new(FnTool::new(
        spec,
        description,
        parameters,
        move |args, ctx| run(md.clone(), args, ctx.progress),
    ))
}

/// The market tools over one `MarketData`, in the reference's direct-chat order.
pub fn market_tools(md: Arc<MarketData>) -> Vec<Arc<dyn Tool>> {
    vec![
        tool(
            ToolSpec::new(search::NAME, search::DISPLAY_NAME).concurrency_safe(),
            search::DESCRIPTION,
            search::parameters(),
            &md,
            |md, args| async move { search::run(&md, &args).await },
        ),
        tool(
            ToolSpec::new(analyze::NAME, analyze::DISPLAY_NAME).concurrency_safe(),
            analyze::DESCRIPTION,
            analyze::parameters(),
            &md,
            |md, args| async move { analyze::run(&md, &args).await },
        ),
        tool(
            ToolSpec::new(portfolio::PORTFOLIO, portfolio::PORTFOLIO_DISPLAY).concurrency_safe(),
            portfolio::PORTFOLIO_DESCRIPTION,
            portfolio::portfolio_parameters(),
            &md,
            |md, args| async move { portfolio::portfolio(&md, &args).await },
        ),
        tool(
            ToolSpec::new(market::OVERVIEW, market::OVERVIEW_DISPLAY).concurrency_safe(),
            market::OVERVIEW_DESCRIPTION,
            market::overview_parameters(),
            &md,
            |md, args| async move { market::overview(&md, &args).await },
        ),
        tool(
            ToolSpec::new(market::HISTORY, market::HISTORY_DISPLAY).concurrency_safe(),
            market::HISTORY_DESCRIPTION,
            market::history_parameters(),
            &md,
            |md, args| async move { market::history(&md, &args).await },
        ),
        tool(
            ToolSpec::new(market_map::NAME, market_map::DISPLAY_NAME).concurrency_safe(),
            market_map::DESCRIPTION,
            market_map::parameters(),
            &md,
            |md, args| async move { market_map::run(&md, &args).await },
        ),
        tool(
            ToolSpec::new(sizing::NAME, sizing::DISPLAY_NAME).concurrency_safe(),
            sizing::DESCRIPTION,
            sizing::parameters(),
            &md,
            |md, args| async move { sizing::run(&md, &args).await },
        ),
        reporting_tool(
            ToolSpec::new(screen::NAME, screen::DISPLAY_NAME).background(),
            screen::DESCRIPTION,
            screen::parameters(),
            &md,
            |md, args, progress| async move { screen::run_tracked(&md, &args, &progress).await },
        ),
        reporting_tool(
            ToolSpec::new(backtest::NAME, backtest::DISPLAY_NAME).background(),
            backtest::DESCRIPTION,
            backtest::parameters(),
            &md,
            |md, args, progress| async move { backtest::run(&md, &args, &progress).await },
        ),
        tool(
            ToolSpec::new(portfolio::UPDATE, portfolio::UPDATE_DISPLAY).requires_approval(),
            portfolio::UPDATE_DESCRIPTION,
            portfolio::update_parameters(),
            &md,
            |md, args| async move { portfolio::update(&md, &args).await },
        ),
        tool(
            ToolSpec::new(journal::NAME, journal::DISPLAY_NAME).requires_approval(),
            journal::DESCRIPTION,
            journal::parameters(),
            &md,
            |md, args| async move { journal::record(&md, &args).await },
        ),
        // The note's author is the conversation the call came from.
        {
            let md = md.clone();
            Arc::new(FnTool::new(
                ToolSpec::new(annotate::NAME, annotate::DISPLAY_NAME)
                    .concurrency_safe()
                    .writes(),
                annotate::DESCRIPTION,
                annotate::parameters(),
                move |args, ctx| {
                    let md = md.clone();
                    async move { annotate::run(&md, &args, &ctx.session_id).await }
                },
            )) as Arc<dyn Tool>
        },
    ]
}

/// The model-written tools, background tasks both (seed §7): `generate_ai_report` and
/// `generate_strategy_decision`, over `md` for the figures and `provider` for the text.
pub fn report_tools(md: Arc<MarketData>, provider: Arc<dyn Provider>) -> Vec<Arc<dyn Tool>> {
    report_tools_under(md, provider, None)
}

/// [`report_tools`] with the decision's buys and adds sized under `rules` (the user's
/// Settings; `None`: no sizes), as the approval of such a buy would size it.
pub fn report_tools_under(
    md: Arc<MarketData>,
    provider: Arc<dyn Provider>,
    rules: Option<risk::RiskRules>,
) -> Vec<Arc<dyn Tool>> {
    let (md2, provider2) = (md.clone(), provider.clone());
    vec![
        Arc::new(FnTool::new(
            ToolSpec::new(report::REPORT, report::REPORT_DISPLAY).background(),
            report::REPORT_DESCRIPTION,
            report::report_parameters(),
            move |args, ctx| {
                let (md, provider) = (md.clone(), provider.clone());
                async move { report::report(&md, provider.as_ref(), &args, &ctx).await }
            },
        )),
        Arc::new(FnTool::new(
            ToolSpec::new(report::STRATEGY, report::STRATEGY_DISPLAY).background(),
            report::STRATEGY_DESCRIPTION,
            report::strategy_parameters(),
            move |args, ctx| {
                let (md, provider) = (md2.clone(), provider2.clone());
                async move {
                    report::strategy(&md, provider.as_ref(), rules.as_ref(), &args, &ctx).await
                }
            },
        )),
    ]
}

/// Registers [`market_tools`] in `registry` (replacing tools of the same names).
pub fn register_market_tools(registry: &mut ToolRegistry, md: Arc<MarketData>) {
    for t in market_tools(md) {
        registry.register(t);
    }
}

/// What the local tools may reach: the workspace (where `exec_command` runs and relative
/// paths start; created on first use), further folders for the file tools, and whether
/// `web_fetch` may reach private addresses (both from Settings).
#[derive(Debug, Clone)]
pub struct LocalToolsConfig {
    pub workspace: PathBuf,
    pub file_roots: Vec<PathBuf>,
    pub allow_private_web_fetch: bool,
}

/// The local tools: `exec_command` and `write_file` (both require approval, and show the
/// exact command or the diff in the dialog), `read_file` and `web_fetch`. Sub-agents never
/// get these (their whitelists do not name them).
pub fn local_tools(config: LocalToolsConfig) -> Vec<Arc<dyn Tool>> {
    let workspace = config.workspace.clone();
    let roots: Vec<PathBuf> = std::iter::once(config.workspace)
        .chain(config.file_roots)
        .collect();
    let fetcher = web_fetch::WebFetcher::new(config.allow_private_web_fetch);
    let (exec_workspace, read_roots, write_roots, preview_roots) =
        (workspace.clone(), roots.clone(), roots.clone(), roots);
    vec![
        Arc::new(
            FnTool::new(
                ToolSpec::new(exec::NAME, exec::DISPLAY_NAME).requires_approval(),
                exec::DESCRIPTION,
                exec::parameters(),
                move |args, ctx| {
                    let workspace = exec_workspace.clone();
                    async move { exec::run(&args, &workspace, ctx.cancel.clone()).await }
                },
            )
            .with_preview(move |args| exec::preview(args, &workspace))
            .with_time_limit(exec::time_limit),
        ),
        Arc::new(FnTool::new(
            ToolSpec::new(files::READ_NAME, files::READ_DISPLAY_NAME).concurrency_safe(),
            files::READ_DESCRIPTION,
            files::read_parameters(),
            move |args, _ctx| {
                let roots = read_roots.clone();
                async move { files::read(&args, &roots) }
            },
        )),
        Arc::new(
            FnTool::new(
                ToolSpec::new(files::WRITE_NAME, files::WRITE_DISPLAY_NAME).requires_approval(),
                files::WRITE_DESCRIPTION,
                files::write_parameters(),
                move |args, _ctx| {
                    let roots = write_roots.clone();
                    async move { files::write(&args, &roots) }
                },
            )
            .with_preview(move |args| files::write_preview(args, &preview_roots)),
        ),
        Arc::new(FnTool::new(
            ToolSpec::new(web_fetch::NAME, web_fetch::DISPLAY_NAME).concurrency_safe(),
            web_fetch::DESCRIPTION,
            web_fetch::parameters(),
            move |args, ctx| {
                let fetcher = fetcher.clone();
                async move { web_fetch::run(&fetcher, &args, &ctx.cancel).await }
            },
        )),
    ]
}

/// Registers [`local_tools`] in `registry`.
pub fn register_local_tools(registry: &mut ToolRegistry, config: LocalToolsConfig) {
    for t in local_tools(config) {
        registry.register(t);
    }
}
