//! Live daily-bar sources behind one trait, plus the ordered chain that tries them with
//! rate limits, retries and circuit breakers.

use std::time::Duration;

use async_trait::async_trait;
use wyckoff_engine::Bar;

use crate::code::Symbol;
use crate::history::StockHistory;
use crate::meta::StockInfo;

pub mod chain;
pub mod eastmoney;
pub mod eastmoney_fund;
pub mod eastmoney_quote;
pub mod http;
pub mod minute;
pub mod tencent;
pub mod tencent_quote;
pub mod tickflow;
pub mod tushare;

pub use chain::{Attempt, ChainError, SourceChain, SourcePolicy};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adjust {
    /// Forward-adjusted (qfq): the default for stocks.
    Forward,
    /// Raw prices: indices have no adjustment.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarRequest {
    pub symbol: Symbol,
    /// Inclusive YYYYMMDD.
    pub start: u32,
    /// Inclusive YYYYMMDD.
    pub end: u32,
    pub adjust: Adjust,
}

/// Bars as a source delivered them, with what the source could not provide.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// Ascending by date, deduplicated, each passing `sanity::check_bar`.
    pub bars: Vec<Bar>,
    /// False when the source has no traded amount (then `Bar::amount` is 0.0, stored NULL).
    pub has_amount: bool,
    /// Rows the parser rejected, with why (reported, not used).
    pub rejected: Vec<String>,
    /// (date, unadjusted close) of adjusted bars whose source gave the raw prices in the
    /// same reply (Tushare's `daily` beside its `adj_factor`); empty when it did not, and
    /// for unadjusted bars, whose closes are raw themselves.
    pub raw_closes: Vec<(u32, f64)>,
}

/// Everything a vendor can do wrong, classified once here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SourceError {
    #[error("HTTP {status}: {snippet}")]
    Http { status: u16, snippet: String },
    #[error("got an HTML page instead of JSON: {snippet}")]
    Html { snippet: String },
    #[error("reply has data: null")]
    DataNull,
    #[error("reply has no bars for the requested range")]
    Empty,
    #[error("reply JSON is truncated: {0}")]
    Truncated(String),
    #[error("reply is not in the documented format: {0}")]
    Malformed(String),
    #[error("rate limited: {message}")]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("unknown code: {0}")]
    UnknownCode(String),
    #[error("authentication failed: {0}")]
    Auth(String),
    #[error("vendor error {code}: {message}")]
    Vendor { code: i64, message: String },
    #[error("network error: {0}")]
    Network(String),
    /// Could not connect at all (no route, DNS, refused): offline, so not worth retrying.
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("request timed out")]
    Timeout,
    #[error("{0} is not supported by this source")]
    Unsupported(&'static str),
    #[error("circuit open: source failed repeatedly, skipped until the cooldown ends")]
    CircuitOpen,
}

impl SourceError {
    /// Worth trying the same source again after a pause.
    pub fn is_retryable(&self) -> bool {
        match self {
            SourceError::Network(_)
            | SourceError::Timeout
            | SourceError::Truncated(_)
            | SourceError::RateLimited { .. } => true,
            SourceError::Http { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// Says the source itself is unhealthy (counts toward opening its circuit). A clean
    /// "unknown code" or "no data" shows the source is up.
    pub fn is_source_failure(&self) -> bool {
        matches!(
            self,
            SourceError::Network(_)
                | SourceError::Connect(_)
                | SourceError::Timeout
                | SourceError::Truncated(_)
                | SourceError::Html { .. }
                | SourceError::RateLimited { .. }
                | SourceError::Malformed(_)
        ) || matches!(self, SourceError::Http { status, .. } if *status >= 500)
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SourceError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// One market-data vendor.
#[async_trait]
pub trait DailySource: Send + Sync {
    /// Stable short name, stored with cached bars (`eastmoney`, `tencent`, …).
    fn name(&self) -> &'static str;

    /// Daily bars of a stock or index over an inclusive date range.
    async fn daily_bars(&self, req: &BarRequest) -> Result<Fetched, SourceError>;

    /// Whether `daily_bars` accepts index symbols.
    fn supports_index(&self) -> bool {
        true
    }

    /// The full A-share list, when the vendor offers one.
    async fn stock_list(&self) -> Result<Vec<StockInfo>, SourceError> {
        Err(SourceError::Unsupported("stock list"))
    }

    /// Whether [`Self::stock_history`] is offered.
    fn has_stock_history(&self) -> bool {
        false
    }

    /// Every name change and every listing (listed, delisted, paused), when the vendor
    /// has them.
    async fn stock_history(&self) -> Result<StockHistory, SourceError> {
        Err(SourceError::Unsupported("stock history"))
    }

    /// Every stock's market cap at `day`'s close (six-digit code, 亿元), when the vendor
    /// has them: the stock-history vendors do ([`Self::has_stock_history`]).
    async fn market_caps_on(&self, day: u32) -> Result<Vec<(String, f64)>, SourceError> {
        let _ = day;
        Err(SourceError::Unsupported("market caps"))
    }

    /// Whether [`Self::minute_bars`] is offered (Tencent's `mkline`, Eastmoney's `klt`).
    fn has_minute_bars(&self) -> bool {
        false
    }

    /// The latest unadjusted `period` bars of a stock the vendor keeps. Asked through the
    /// same [`SourceChain`] slot as the daily bars, so both share one pace and one breaker.
    async fn minute_bars(
        &self,
        symbol: &Symbol,
        period: crate::minute::MinutePeriod,
    ) -> Result<minute::MinuteFetched, SourceError> {
        let _ = (symbol, period);
        Err(SourceError::Unsupported("minute bars"))
    }
}

/// Parser helper: validate, sort and dedup parsed bars, collecting rejects.
pub(crate) fn finish(
    mut bars: Vec<Bar>,
    has_amount: bool,
    mut rejected: Vec<String>,
) -> Result<Fetched, SourceError> {
    bars.retain(|b| match crate::sanity::check_bar(b) {
        None => true,
        Some(why) => {
            rejected.push(format!("{}: {why}", b.date));
            false
        }
    });
    crate::sanity::sort_dedup(&mut bars);
    if bars.is_empty() {
        if rejected.is_empty() {
            return Err(SourceError::Empty);
        }
        return Err(SourceError::Malformed(format!(
            "every row was rejected: {}",
            rejected.join("; ")
        )));
    }
    Ok(Fetched {
        bars,
        has_amount,
        rejected,
        raw_closes: Vec::new(),
    })
}

/// Keeps bars inside the requested range; some vendors return more than asked.
pub(crate) fn clip(bars: &mut Vec<Bar>, req: &BarRequest) {
    bars.retain(|b| b.date >= req.start && b.date <= req.end);
}
