//! Live snapshot quotes and the day's partial bar built from them.
//!
//! Tencent's quote API is asked first (many codes a request), Eastmoney's second for what
//! Tencent could not give. Every process on the data home shares, through `wyckoff.db`
//! (migration 3150): each source's pacing (a reservation of the next free request slot, so
//! the app, the daemon and a `wyckoff quote` together stay under one rate), each source's
//! circuit breaker ([`crate::breaker`], under its own name, apart from the daily-bar
//! sources on other hosts), and the quotes themselves for a few seconds.
//!
//! A quote is never a daily bar: [`PartialBar`] is its own type, always marked partial,
//! and nothing here writes to the bar cache. The engine reads it through
//! [`PartialBar::engine_bar`] only for an evaluation kept in memory.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use wyckoff_engine::Bar;

use crate::breaker::{BreakerConfig, BreakerStore, CircuitBreaker};
use crate::clock::Clock;
use crate::code::StockCode;
use crate::raw::PRICE_E6;
use crate::sources::http;
use crate::sources::{Attempt, SourceError, eastmoney_quote, tencent_quote};

/// One stock's snapshot as a source gave it. Prices in millionths of a yuan (0: not
/// traded yet today), money in fen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Quote {
    /// Six digits.
    pub code: String,
    pub name: String,
    pub last_e6: i64,
    pub prev_close_e6: i64,
    pub open_e6: i64,
    pub high_e6: i64,
    pub low_e6: i64,
    /// Shares traded so far today.
    pub volume: u64,
    /// Traded value so far today, fen.
    pub amount_fen: i64,
    /// The source's quote time, Beijing, `YYYY-MM-DD HH:MM:SS`.
    pub time: String,
    /// `tencent` or `eastmoney`.
    pub source: String,
}

/// The day's bar so far. There is no other way to build one than from a [`Quote`], and it
/// says it is partial wherever it goes: it is not the day's bar and is never stored as one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct PartialBar {
    /// YYYYMMDD of the quote.
    pub date: u32,
    pub open_e6: i64,
    pub high_e6: i64,
    pub low_e6: i64,
    pub last_e6: i64,
    pub volume: u64,
    pub amount_fen: i64,
    /// `HH:MM` Beijing, of the quote.
    pub time: String,
    /// Always true.
    pub partial: bool,
}

fn yuan(e6: i64) -> f64 {
    e6 as f64 / PRICE_E6 as f64
}

impl Quote {
    /// The quote time.
    pub fn at(&self) -> Option<NaiveDateTime> {
        NaiveDateTime::parse_from_str(&self.time, "%Y-%m-%d %H:%M:%S").ok()
    }

    /// The change against the previous close, percent; `None` before the first trade.
    pub fn change_pct(&self) -> Option<f64> {
        (self.last_e6 > 0 && self.prev_close_e6 > 0)
            .then(|| (self.last_e6 as f64 / self.prev_close_e6 as f64 - 1.0) * 100.0)
    }

    /// The day's bar so far; `None` before the stock's first trade of the day (or all
    /// day, when it is suspended): no bar is made up from the previous close.
    pub fn partial_bar(&self) -> Option<PartialBar> {
        let at = self.at()?;
        if self.last_e6 <= 0 || self.open_e6 <= 0 || self.high_e6 <= 0 || self.low_e6 <= 0 {
            return None;
        }
        Some(PartialBar {
            date: crate::date::to_yyyymmdd(at.date()),
            open_e6: self.open_e6,
            // a source's high and low can lag its last price by a tick
            high_e6: self.high_e6.max(self.last_e6).max(self.open_e6),
            low_e6: self.low_e6.min(self.last_e6).min(self.open_e6),
            last_e6: self.last_e6,
            volume: self.volume,
            amount_fen: self.amount_fen,
            time: at.format("%H:%M").to_string(),
            partial: true,
        })
    }
}

impl PartialBar {
    /// The engine's view of the day so far, for an evaluation in memory (never for the
    /// cache). `volume` replaces the traded volume when the caller reads a pace instead.
    pub fn engine_bar(&self, volume: Option<f64>) -> Bar {
        Bar {
            date: self.date,
            open: yuan(self.open_e6),
            high: yuan(self.high_e6),
            low: yuan(self.low_e6),
            close: yuan(self.last_e6),
            volume: volume.unwrap_or(self.volume as f64),
            amount: self.amount_fen as f64 / 100.0,
            turnover: None,
        }
    }
}

/// What one source answered for one request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuoteReply {
    pub quotes: Vec<Quote>,
    /// Codes the source answered for without a quote: it does not know them.
    pub unknown: Vec<String>,
    /// Lines the parser could not read, with why (reported, not used).
    pub rejected: Vec<String>,
}

/// A snapshot of several stocks.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct QuoteSnapshot {
    /// In the order asked (unknown codes left out).
    pub quotes: Vec<Quote>,
    /// Codes no source knew.
    pub unknown: Vec<String>,
    /// Sources that failed before one answered, with why.
    pub failed: Vec<QuoteAttempt>,
    /// How many quotes came from the shared few-second cache rather than a request.
    pub cached: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct QuoteAttempt {
    pub source: String,
    pub error: String,
}

#[derive(Debug, thiserror::Error)]
pub enum QuoteError {
    #[error("live quotes are off (WYCKOFF_OFFLINE is set)")]
    Offline,
    #[error("no stock code given")]
    NoCodes,
    #[error("{input:?} is not an A-share stock code: {why}")]
    BadCode { input: String, why: String },
    #[error("no quote source answered: {}", summary(.0))]
    AllFailed(Vec<QuoteAttempt>),
    #[error("quote store: {0}")]
    Db(#[from] sqlx::Error),
}

fn summary(attempts: &[QuoteAttempt]) -> String {
    attempts
        .iter()
        .map(|a| format!("{}: {}", a.source, a.error))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Which API a source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuoteApi {
    Tencent,
    Eastmoney,
}

impl QuoteApi {
    /// The name its breaker and pacing are kept under (the daily-bar sources are on other
    /// hosts and keep their own).
    pub fn key(self) -> &'static str {
        match self {
            QuoteApi::Tencent => "tencent_quote",
            QuoteApi::Eastmoney => "eastmoney_quote",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            QuoteApi::Tencent => "tencent",
            QuoteApi::Eastmoney => "eastmoney",
        }
    }
}

#[derive(Debug, Clone)]
pub struct QuoteSourceConfig {
    pub api: QuoteApi,
    pub base: String,
    /// At least this long between two requests to it, across every process.
    pub min_interval: Duration,
}

#[derive(Debug, Clone)]
pub struct QuoteConfig {
    /// Tried in this order; empty when offline.
    pub sources: Vec<QuoteSourceConfig>,
    /// How long a fetched quote answers again without a request.
    pub cache_ttl: Duration,
    pub timeout: Duration,
    pub breaker: BreakerConfig,
}

impl QuoteConfig {
    /// Tencent then Eastmoney at their public hosts.
    pub fn online() -> Self {
        Self {
            sources: vec![
                QuoteSourceConfig {
                    api: QuoteApi::Tencent,
                    base: tencent_quote::DEFAULT_BASE.into(),
                    min_interval: Duration::from_millis(500),
                },
                QuoteSourceConfig {
                    api: QuoteApi::Eastmoney,
                    base: eastmoney_quote::DEFAULT_BASE.into(),
                    min_interval: Duration::from_secs(1),
                },
            ],
            cache_ttl: Duration::from_secs(5),
            timeout: Duration::from_secs(6),
            breaker: BreakerConfig::default(),
        }
    }

    /// [`Self::online`], or no source under `WYCKOFF_OFFLINE=1`; `WYCKOFF_TENCENT_URL` and
    /// `WYCKOFF_EASTMONEY_URL` point the sources at a mirror (a local server in tests).
    pub fn from_env() -> Self {
        let var = |k: &str| {
            std::env::var(k)
                .ok()
                .map(|v| v.trim().trim_end_matches('/').to_owned())
                .filter(|v| !v.is_empty())
        };
        let mut cfg = Self::online();
        if var("WYCKOFF_OFFLINE").is_some_and(|v| !matches!(v.as_str(), "0" | "false" | "no")) {
            cfg.sources.clear();
            return cfg;
        }
        for s in &mut cfg.sources {
            let mirror = match s.api {
                QuoteApi::Tencent => var("WYCKOFF_TENCENT_URL"),
                QuoteApi::Eastmoney => var("WYCKOFF_EASTMONEY_URL"),
            };
            if let Some(base) = mirror {
                s.base = base;
            }
        }
        cfg
    }
}

/// Parses the codes asked for, naming the first bad one.
pub fn parse_codes(inputs: &[String]) -> Result<Vec<StockCode>, QuoteError> {
    if inputs.is_empty() {
        return Err(QuoteError::NoCodes);
    }
    let mut out: Vec<StockCode> = Vec::with_capacity(inputs.len());
    for input in inputs {
        let code = StockCode::parse(input).map_err(|e| QuoteError::BadCode {
            input: input.clone(),
            why: e.to_string(),
        })?;
        if !out.contains(&code) {
            out.push(code);
        }
    }
    Ok(out)
}

pub struct QuoteService {
    pool: SqlitePool,
    /// Real request time: pacing, the breakers and the cache are about when requests
    /// went out, whatever moment a caller evaluates as.
    clock: Arc<dyn Clock>,
    cfg: QuoteConfig,
    client: reqwest::Client,
    breakers: BreakerStore,
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl QuoteService {
    /// Uses the shared `wyckoff.db` pool (the market's migrations have run on it).
    pub fn new(pool: SqlitePool, cfg: QuoteConfig, clock: Arc<dyn Clock>) -> Self {
        let client = http::client(cfg.timeout);
        Self {
            clock,
            breakers: BreakerStore::new(pool.clone()),
            pool,
            cfg,
            client,
        }
    }

    pub fn is_offline(&self) -> bool {
        self.cfg.sources.is_empty()
    }

    /// Quotes for `codes` now: from the shared cache when fetched within the TTL,
    /// else from the first source that answers (the next one is asked for what it did
    /// not give). Errors only when no source answered at all.
    pub async fn snapshot(&self, codes: &[StockCode]) -> Result<QuoteSnapshot, QuoteError> {
        let now = self.clock.now();
        if codes.is_empty() {
            return Err(QuoteError::NoCodes);
        }
        if self.is_offline() {
            return Err(QuoteError::Offline);
        }
        let mut got: HashMap<String, Quote> = self.cached(codes, now).await?;
        let cached = got.len() as u32;
        let mut wanted: Vec<StockCode> = codes
            .iter()
            .filter(|c| !got.contains_key(c.digits()))
            .cloned()
            .collect();
        let mut failed = Vec::new();
        let mut answered = cached > 0 || wanted.is_empty();
        for source in &self.cfg.sources {
            if wanted.is_empty() {
                break;
            }
            match self.ask_source(source, &wanted, now).await {
                Ok(reply) => {
                    answered = true;
                    for why in &reply.rejected {
                        tracing::warn!(source = source.api.name(), "quote line rejected: {why}");
                    }
                    self.store(&reply.quotes, now).await?;
                    for q in reply.quotes {
                        got.insert(q.code.clone(), q);
                    }
                    wanted.retain(|c| !got.contains_key(c.digits()));
                }
                Err(e) => {
                    tracing::info!(source = source.api.name(), error = %e, "quote source failed, trying next");
                    failed.push(QuoteAttempt {
                        source: source.api.name().into(),
                        error: e.to_string(),
                    });
                }
            }
        }
        if !answered {
            return Err(QuoteError::AllFailed(failed));
        }
        let quotes = codes
            .iter()
            .filter_map(|c| got.remove(c.digits()))
            .collect();
        Ok(QuoteSnapshot {
            quotes,
            unknown: wanted.iter().map(|c| c.digits().to_owned()).collect(),
            failed,
            cached,
        })
    }

    /// One source for every code in `wanted` (in batches), through its breaker and pacing.
    async fn ask_source(
        &self,
        source: &QuoteSourceConfig,
        wanted: &[StockCode],
        now: DateTime<Utc>,
    ) -> Result<QuoteReply, SourceError> {
        let key = source.api.key();
        let stored = self.breakers.load().await.unwrap_or_default();
        let mut breaker = match stored.get(key) {
            Some(s) => CircuitBreaker::restored(self.cfg.breaker, s.state),
            None => CircuitBreaker::new(self.cfg.breaker),
        };
        if !breaker.allow(now) {
            return Err(SourceError::CircuitOpen);
        }
        let before = breaker.state();
        let batch = match source.api {
            QuoteApi::Tencent => tencent_quote::BATCH,
            QuoteApi::Eastmoney => eastmoney_quote::BATCH,
        };
        let mut reply = QuoteReply::default();
        let mut outcome = Ok(());
        for chunk in wanted.chunks(batch) {
            let wait = self.reserve(key, source.min_interval).await;
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            match self.request(source, chunk).await {
                Ok(r) => {
                    reply.quotes.extend(r.quotes);
                    reply.unknown.extend(r.unknown);
                    reply.rejected.extend(r.rejected);
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        match &outcome {
            Err(SourceError::Connect(_)) => breaker.on_unreachable(now),
            Err(e) => {
                if let Some(period) = stay_away_for(e, self.cfg.breaker.cooldown) {
                    tracing::warn!(source = key, ?period, error = %e, "quote source refuses us; left alone");
                    breaker.on_failure(now);
                    breaker.open_for(now, period);
                } else if e.is_source_failure() {
                    breaker.on_failure(now);
                } else {
                    breaker.on_success();
                }
            }
            Ok(()) => breaker.on_success(),
        }
        if breaker.state() != before
            && let Err(e) = self.breakers.save(key, breaker.state()).await
        {
            tracing::warn!(source = key, error = %e, "cannot store the circuit breaker");
        }
        outcome.map(|()| reply)
    }

    async fn request(
        &self,
        source: &QuoteSourceConfig,
        codes: &[StockCode],
    ) -> Result<QuoteReply, SourceError> {
        match source.api {
            QuoteApi::Tencent => {
                let url = format!("{}{}", source.base, tencent_quote::path(codes));
                let bytes = send_bytes(self.client.get(url)).await?;
                tencent_quote::parse(&tencent_quote::decode(&bytes), codes)
            }
            QuoteApi::Eastmoney => {
                let url = format!("{}{}", source.base, eastmoney_quote::PATH);
                let params = eastmoney_quote::query(codes);
                let pairs: Vec<(&str, &str)> =
                    params.iter().map(|(k, v)| (*k, v.as_str())).collect();
                let v = http::send_json(self.client.get(http::url_with(&url, &pairs)?)).await?;
                eastmoney_quote::parse(&v, codes)
            }
        }
    }

    /// Reserves the source's next free request slot for every process on the data home in
    /// one statement (SQLite serialises it) and returns how long to wait for it.
    async fn reserve(&self, key: &str, interval: Duration) -> Duration {
        let now_ms = self.clock.now().timestamp_millis();
        let next: Result<i64, sqlx::Error> = sqlx::query_scalar(
            "INSERT INTO market_quote_pacing (source, next_free_ms) VALUES (?1, ?2 + ?3)
             ON CONFLICT(source) DO UPDATE SET next_free_ms = max(next_free_ms, ?2) + ?3
             RETURNING next_free_ms",
        )
        .bind(key)
        .bind(now_ms)
        .bind(ms(interval))
        .fetch_one(&self.pool)
        .await;
        match next {
            Ok(next) => {
                let start = next - ms(interval);
                Duration::from_millis(u64::try_from(start - now_ms).unwrap_or(0))
            }
            Err(e) => {
                // pacing lost for this request only; the breaker still guards the source
                tracing::warn!(source = key, error = %e, "cannot reserve a quote request slot");
                Duration::ZERO
            }
        }
    }

    async fn cached(
        &self,
        codes: &[StockCode],
        now: DateTime<Utc>,
    ) -> Result<HashMap<String, Quote>, QuoteError> {
        let oldest = now.timestamp_millis() - ms(self.cfg.cache_ttl);
        let rows: Vec<(String, String, i64)> = sqlx::query_as(
            "SELECT code, quote_json, fetched_ms FROM market_quote_cache WHERE fetched_ms > ?1",
        )
        .bind(oldest)
        .fetch_all(&self.pool)
        .await?;
        let mut out = HashMap::new();
        for (code, json, fetched) in rows {
            // a cache row from the future (a clock set back) is not trusted
            if fetched > now.timestamp_millis() || !codes.iter().any(|c| c.digits() == code) {
                continue;
            }
            if let Ok(q) = serde_json::from_str::<Quote>(&json) {
                out.insert(code, q);
            }
        }
        Ok(out)
    }

    async fn store(&self, quotes: &[Quote], now: DateTime<Utc>) -> Result<(), QuoteError> {
        if quotes.is_empty() {
            return Ok(());
        }
        let mut tx = self.pool.begin().await?;
        for q in quotes {
            let json = serde_json::to_string(q).unwrap_or_default();
            sqlx::query(
                "INSERT INTO market_quote_cache (code, quote_json, fetched_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT(code) DO UPDATE SET quote_json = excluded.quote_json, fetched_ms = excluded.fetched_ms",
            )
            .bind(&q.code)
            .bind(json)
            .bind(now.timestamp_millis())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// The longest wait a quote source's "retry in N seconds" is honoured for: a longer hint is
/// cut to this, and the breaker's half-open probe finds out whether the source is back.
const LONGEST_HONOURED_WAIT: Duration = Duration::from_secs(10 * 60);

/// How long a source is left alone after a reply that says it will not serve us for a
/// while: a ban (403, 418, 451, or a refused login) for the breaker's cooldown, a rate
/// limit for the wait it names (as the daily chain's pacing honours it) or else the
/// cooldown. Asking a banning source again on the next snapshot only prolongs the ban,
/// and the next source answers meanwhile. `None` for every other outcome.
fn stay_away_for(e: &SourceError, cooldown: Duration) -> Option<Duration> {
    match e {
        SourceError::RateLimited {
            retry_after: Some(wait),
            ..
        } => Some((*wait).min(LONGEST_HONOURED_WAIT)),
        SourceError::RateLimited {
            retry_after: None, ..
        }
        | SourceError::Auth(_)
        | SourceError::Http {
            status: 403 | 418 | 451,
            ..
        } => Some(cooldown),
        _ => None,
    }
}

/// Sends the request and returns the body's bytes, or a classified error (the quote API
/// answers text, not JSON).
async fn send_bytes(req: reqwest::RequestBuilder) -> Result<Vec<u8>, SourceError> {
    let resp = req.send().await.map_err(|e| {
        if e.is_connect() {
            SourceError::Connect(e.to_string())
        } else if e.is_timeout() {
            SourceError::Timeout
        } else {
            SourceError::Network(e.to_string())
        }
    })?;
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let body = resp
        .bytes()
        .await
        .map_err(|e| SourceError::Truncated(e.to_string()))?;
    let text = tencent_quote::decode(&body);
    let snippet: String = text.trim().chars().take(160).collect();
    // a quote reply is `v_…` lines; a 200 without any that reads as a rate limit is one
    let rate_limit_page = !text.contains("v_") && http::looks_rate_limited(&text);
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS
        || (!status.is_success() && http::looks_rate_limited(&text))
        || (status.is_success() && rate_limit_page)
    {
        return Err(SourceError::RateLimited {
            retry_after: retry_after.or_else(|| http::parse_wait_hint(&text)),
            message: snippet,
        });
    }
    if !status.is_success() {
        return Err(SourceError::Http {
            status: status.as_u16(),
            snippet,
        });
    }
    if text.trim_start().starts_with('<') {
        return Err(SourceError::Html { snippet });
    }
    if text.trim().is_empty() {
        return Err(SourceError::Truncated("empty body".into()));
    }
    Ok(body.to_vec())
}

/// Attempts as the chain reports them, for callers that print both.
impl From<&QuoteAttempt> for Attempt {
    fn from(a: &QuoteAttempt) -> Self {
        Attempt {
            source: a.source.clone(),
            error: a.error.clone(),
            cause: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(last: i64, open: i64) -> Quote {
        Quote {
            code: "000001".into(),
            name: "平安银行".into(),
            last_e6: last,
            prev_close_e6: 12_890_000,
            open_e6: open,
            high_e6: 13_100_000,
            low_e6: 12_880_000,
            volume: 61_234_500,
            amount_fen: 79_512_345_600,
            time: "2020-06-17 10:42:03".into(),
            source: "tencent".into(),
        }
    }

    #[test]
    fn a_partial_bar_is_always_partial_and_never_made_up() {
        let bar = quote(13_050_000, 12_900_000).partial_bar().unwrap();
        assert!(bar.partial);
        assert_eq!(bar.date, 20200617);
        assert_eq!(bar.time, "10:42");
        let e = bar.engine_bar(None);
        assert_eq!(e.close, 13.05);
        assert_eq!(e.volume, 61_234_500.0);
        assert_eq!(bar.engine_bar(Some(2.0)).volume, 2.0);
        // no trade yet (open 0): no bar, not one at the previous close
        assert_eq!(quote(0, 0).partial_bar(), None);
        assert_eq!(quote(13_050_000, 0).partial_bar(), None);
        assert!((quote(13_050_000, 1).change_pct().unwrap() - 1.2412).abs() < 1e-3);
        assert_eq!(quote(0, 0).change_pct(), None);
    }

    /// Two services on one data home, each with its own connection pool to `wyckoff.db`,
    /// as the app and the daemon have.
    #[tokio::test]
    async fn quote_requests_are_paced_per_source_across_services() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("wyckoff.db");
        let clock = Arc::new(crate::clock::ManualClock::new(
            chrono::DateTime::parse_from_rfc3339("2020-06-17T02:42:00Z")
                .unwrap()
                .to_utc(),
        ));
        let mut services = Vec::new();
        for _ in 0..2 {
            let pool = crate::cache::connect_db(&db).await.unwrap();
            crate::cache::migrate(&pool).await.unwrap();
            services.push(QuoteService::new(
                pool,
                QuoteConfig::online(),
                clock.clone(),
            ));
        }
        let (app, daemon) = (&services[0], &services[1]);
        let half = Duration::from_millis(500);

        // the clock held still: each reservation, whichever service makes it, waits one
        // interval more than the one before
        let mut waits = Vec::new();
        for service in [app, daemon, app, daemon] {
            waits.push(service.reserve("tencent_quote", half).await);
        }
        let ms: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        assert_eq!(ms, [0, 500, 1000, 1500]);
        // another source keeps its own pace
        assert_eq!(
            daemon
                .reserve("eastmoney_quote", Duration::from_secs(1))
                .await,
            Duration::ZERO
        );
        assert_eq!(
            app.reserve("eastmoney_quote", Duration::from_secs(1)).await,
            Duration::from_secs(1)
        );
        // exactly when the reserved slots have all gone by, the next request waits nothing
        clock.advance(Duration::from_millis(2000));
        assert_eq!(daemon.reserve("tencent_quote", half).await, Duration::ZERO);
        assert_eq!(app.reserve("tencent_quote", half).await, half);
    }

    #[test]
    fn a_ban_or_a_wait_leaves_the_source_alone_for_as_long_as_it_says() {
        let cooldown = Duration::from_secs(60);
        let http = |status| SourceError::Http {
            status,
            snippet: String::new(),
        };
        let limited = |secs: Option<u64>| SourceError::RateLimited {
            retry_after: secs.map(Duration::from_secs),
            message: "访问频繁".into(),
        };
        let cases = [
            (http(403), Some(cooldown)),
            (http(418), Some(cooldown)),
            (http(451), Some(cooldown)),
            (SourceError::Auth("HTTP 403".into()), Some(cooldown)),
            (limited(None), Some(cooldown)),
            (limited(Some(90)), Some(Duration::from_secs(90))),
            (limited(Some(600)), Some(Duration::from_secs(600))),
            (limited(Some(601)), Some(Duration::from_secs(600))),
            // failures the breaker counts, and answers it does not
            (http(502), None),
            (http(404), None),
            (SourceError::Timeout, None),
            (SourceError::UnknownCode("600000".into()), None),
        ];
        for (e, want) in cases {
            assert_eq!(stay_away_for(&e, cooldown), want, "{e}");
        }
    }

    #[test]
    fn codes_are_checked_and_deduplicated() {
        let got = parse_codes(&["600519".into(), "600519.SH".into(), "000001".into()]).unwrap();
        assert_eq!(got.len(), 2);
        let err = parse_codes(&["12345".into()]).unwrap_err().to_string();
        assert!(err.contains("\"12345\""), "{err}");
        assert!(matches!(parse_codes(&[]), Err(QuoteError::NoCodes)));
    }
}
