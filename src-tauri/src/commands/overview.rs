//! The overview page (概览): the benchmark indices, breadth and 水温 from the cache (said
//! unavailable when the cache lacks them), the cache's status, and the model-free buttons
//! that start the screen, the backtest and the full-market sync as background tasks.

use std::sync::Arc;

use serde::Serialize;
use specta::Type;
use tauri::State;
use wyckoff_protocol::TaskInfo;
pub use wyckoff_protocol::TaskRequest;
use wyckoff_session::Desk;
use wyckoff_session::domain::engine::{FunnelConfig, RegimeReason};
use wyckoff_session::domain::market::universe::SkipReason;
use wyckoff_session::domain::market::{Freshness, MarketData};
use wyckoff_session::reports::MarketBreadth;

use crate::chat::ChatState;
use crate::commands::chat::{desk, services};
use crate::commands::error::CommandError;
use crate::state::AppState;

pub(crate) async fn market(
    state: &AppState,
    chat: &ChatState,
) -> Result<Arc<MarketData>, CommandError> {
    Ok(services(state, chat).await?.market().clone())
}

/// The overview's indices: SSE Composite, SZSE Component, ChiNext, CSI 300.
pub const OVERVIEW_INDICES: [&str; 4] = ["sse", "szse", "chinext", "csi300"];

#[derive(Debug, Clone, Serialize, Type)]
pub struct IndexQuote {
    /// `000001.SH`.
    pub code: String,
    pub name: String,
    pub close: Option<f64>,
    pub change_pct: Option<f64>,
    /// The last bar's date (YYYY-MM-DD); `None` when nothing is cached.
    pub date: Option<String>,
    pub data_status: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Breadth {
    pub available: bool,
    pub trade_date: Option<String>,
    pub sample_size: Option<u32>,
    pub pct_above_ma20: Option<f64>,
    pub up_ratio_pct: Option<f64>,
    pub median_pct_chg: Option<f64>,
    /// When unavailable: the stocks a day needs for breadth to mean anything
    /// (`sample_size` says how many there were; the page words why).
    pub min_sample: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct MarketOverview {
    pub indices: Vec<IndexQuote>,
    /// RISK_ON / NEUTRAL / RISK_OFF / CRASH / BLACK_SWAN / UNKNOWN.
    pub regime: String,
    pub regime_as_of: Option<String>,
    /// Why the regime is what it is, or why it is unknown (worded by the page).
    pub regime_reasons: Vec<RegimeReason>,
    pub breadth: Breadth,
}

/// The quote of one index from its cached bars: nothing when nothing is cached.
pub fn index_quote(r: &wyckoff_session::domain::market::BarsResult) -> IndexQuote {
    let last = r.bars.last();
    let prev = r.bars.len().checked_sub(2).and_then(|i| r.bars.get(i));
    let round2 = |x: f64| (x * 100.0).round() / 100.0;
    IndexQuote {
        code: r.code.clone(),
        name: r.name.clone().unwrap_or_else(|| r.code.clone()),
        close: last.map(|b| round2(b.close)),
        change_pct: match (prev, last) {
            (Some(p), Some(l)) if p.close > 0.0 => Some(round2((l.close / p.close - 1.0) * 100.0)),
            _ => None,
        },
        date: last.map(|b| wyckoff_session::domain::market::date::iso(b.date)),
        data_status: serde_json::to_value(r.data_status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    }
}

impl From<MarketBreadth> for Breadth {
    fn from(b: MarketBreadth) -> Self {
        let n = |x: usize| u32::try_from(x).ok();
        match b {
            MarketBreadth::Ok {
                trade_date,
                sample_size,
                pct_above_ma20,
                up_ratio_pct,
                median_pct_chg,
                ..
            } => Breadth {
                available: true,
                trade_date,
                sample_size: n(sample_size),
                pct_above_ma20,
                up_ratio_pct,
                median_pct_chg,
                min_sample: None,
            },
            MarketBreadth::Unavailable {
                trade_date,
                sample_size,
                min_sample,
                ..
            } => Breadth {
                available: false,
                trade_date,
                sample_size: n(sample_size),
                pct_above_ma20: None,
                up_ratio_pct: None,
                median_pct_chg: None,
                min_sample: n(min_sample),
            },
        }
    }
}

/// The indices from the cache; 水温 and breadth as `get_market_overview` reports them.
pub async fn build_overview(desk: &Desk) -> Result<MarketOverview, CommandError> {
    let md = desk.market();
    let mut indices = Vec::new();
    for alias in OVERVIEW_INDICES {
        indices.push(index_quote(&md.index_bars(alias, None).await?));
    }
    let (regime, _) = desk
        .market_regime(None)
        .await
        .map_err(CommandError::internal)?;
    let breadth = desk
        .market_breadth(None)
        .await
        .map_err(CommandError::internal)?;
    Ok(MarketOverview {
        indices,
        regime: regime.regime.as_str().to_owned(),
        regime_as_of: regime.as_of.map(wyckoff_session::domain::market::date::iso),
        regime_reasons: regime.reasons,
        breadth: breadth.into(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn market_overview(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<MarketOverview, CommandError> {
    build_overview(&*desk(&state, &chat).await?).await
}

/// What the cache holds, as `MarketData::status` reports it, plus the damaged series
/// the universe loader skips.
#[derive(Debug, Clone, Serialize, Type)]
pub struct DataStatusView {
    pub stocks_cached: u32,
    pub indices_cached: u32,
    /// The newest bar over all cached stocks (YYYY-MM-DD).
    pub newest_date: Option<String>,
    pub last_closed_trading_day: Option<String>,
    pub fresh: u32,
    pub stale: u32,
    /// Series whose stored bars fail their checks (skipped by screen and backtest).
    pub damaged: u32,
    pub stock_list_size: u32,
    pub bundled_dataset: Option<String>,
    /// Live sources in the order they are tried; empty = offline.
    pub sources: Vec<String>,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub async fn build_data_status(md: &MarketData) -> Result<DataStatusView, CommandError> {
    let s = md.status().await?;
    // the screen's view of the market: the same skipped series, and a screen after this
    // finds it warm
    let loaded = md
        .universe(None, Some(FunnelConfig::default().screen_bars()))
        .await?;
    let damaged = loaded
        .report
        .skipped
        .iter()
        .filter(|k| {
            matches!(
                k.reason,
                SkipReason::DamagedSeries { .. } | SkipReason::CorruptBars { .. }
            )
        })
        .count();
    let iso = wyckoff_session::domain::market::date::iso;
    Ok(DataStatusView {
        stocks_cached: count(s.stocks.len()),
        indices_cached: count(s.indices.len()),
        newest_date: s.stocks.iter().map(|c| c.last_date).max().map(iso),
        last_closed_trading_day: s.last_closed_trading_day.map(iso),
        fresh: count(
            s.stocks
                .iter()
                .filter(|c| matches!(c.freshness, Freshness::Fresh { .. }))
                .count(),
        ),
        stale: count(
            s.stocks
                .iter()
                .filter(|c| !matches!(c.freshness, Freshness::Fresh { .. }))
                .count(),
        ),
        damaged: count(damaged),
        stock_list_size: count(s.stock_list_size),
        bundled_dataset: s.bundled_dataset,
        sources: s.sources.iter().map(|x| (*x).to_owned()).collect(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn data_status(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<DataStatusView, CommandError> {
    build_data_status(&*market(&state, &chat).await?).await
}

/// Starts a request as a background task of no conversation ([`Desk::start_job`]).
pub async fn start(desk: &Desk, request: &TaskRequest) -> Result<TaskInfo, CommandError> {
    Ok(desk.start_job(request).await?)
}

/// Starts the screen, the backtest, the full-market sync or a CSV import as a background task (shown
/// in the task panel with progress, cancellable, notified when done).
#[tauri::command]
#[specta::specta]
pub async fn start_task(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    request: TaskRequest,
) -> Result<TaskInfo, CommandError> {
    start(&*desk(&state, &chat).await?, &request).await
}

#[cfg(test)]
mod tests;
