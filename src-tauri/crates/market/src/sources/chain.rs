//! Tries sources in the configured order; each has its own pacing, retry budget and
//! circuit breaker. The first source that returns bars wins.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::breaker::{BreakerConfig, BreakerState, BreakerStore, CircuitBreaker, StoredBreaker};
use crate::clock::Clock;
use crate::history::StockHistory;
use crate::meta::StockInfo;
use crate::ratelimit::{RateLimiter, backoff_delay};

use super::{BarRequest, DailySource, Fetched, SourceError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourcePolicy {
    /// Minimum spacing between requests to this source.
    pub min_interval: Duration,
    /// Extra attempts after the first, for retryable errors only.
    pub max_retries: u32,
    pub backoff_base: Duration,
    /// Cap for one backoff wait, including a vendor's retry-after.
    pub backoff_max: Duration,
    pub breaker: BreakerConfig,
}

impl SourcePolicy {
    pub fn with_interval(min_interval: Duration) -> Self {
        Self {
            min_interval,
            ..Self::default()
        }
    }
}

impl Default for SourcePolicy {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_millis(500),
            max_retries: 2,
            backoff_base: Duration::from_millis(1500),
            backoff_max: Duration::from_secs(90),
            breaker: BreakerConfig::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Attempt {
    pub source: String,
    pub error: String,
    /// The typed error, for callers that branch on it (not serialised).
    #[serde(skip)]
    pub cause: Option<SourceError>,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("all sources failed for {what}: {}", summary(.attempts))]
pub struct ChainError {
    pub what: String,
    pub attempts: Vec<Attempt>,
}

impl ChainError {
    /// True when every source said the code does not exist (not a transport problem).
    pub fn all_unknown_code(&self) -> bool {
        self.all(|e| matches!(e, SourceError::UnknownCode(_) | SourceError::DataNull))
    }

    /// True when every source answered but had no bars in the range.
    pub fn all_empty(&self) -> bool {
        self.all(|e| matches!(e, SourceError::Empty))
    }

    fn all(&self, f: impl Fn(&SourceError) -> bool) -> bool {
        !self.attempts.is_empty()
            && self
                .attempts
                .iter()
                .all(|a| a.cause.as_ref().is_some_and(&f))
    }
}

fn summary(attempts: &[Attempt]) -> String {
    if attempts.is_empty() {
        return "no source is configured (offline)".into();
    }
    attempts
        .iter()
        .map(|a| format!("{}: {}", a.source, a.error))
        .collect::<Vec<_>>()
        .join("; ")
}

struct Slot {
    source: Arc<dyn DailySource>,
    policy: SourcePolicy,
    limiter: Mutex<RateLimiter>,
    breaker: Mutex<CircuitBreaker>,
}

pub struct SourceChain {
    slots: Vec<Slot>,
    clock: Arc<dyn Clock>,
    /// Where breaker changes are kept for other processes (none in unit tests).
    breaker_store: Option<BreakerStore>,
}

impl std::fmt::Debug for SourceChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Successful fetch, with the failures of the sources tried before it.
#[derive(Debug, Clone)]
pub struct ChainOk<T> {
    pub value: T,
    pub source: &'static str,
    pub failed_before: Vec<Attempt>,
}

impl SourceChain {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            slots: Vec::new(),
            clock,
            breaker_store: None,
        }
    }

    /// Starts each source's breaker where another process left it and keeps every later
    /// change in `store`.
    pub fn restore_breakers(
        &mut self,
        store: BreakerStore,
        saved: &std::collections::HashMap<String, StoredBreaker>,
    ) {
        for slot in &mut self.slots {
            if let Some(stored) = saved.get(slot.source.name()) {
                slot.breaker =
                    Mutex::new(CircuitBreaker::restored(slot.policy.breaker, stored.state));
            }
        }
        self.breaker_store = Some(store);
    }

    /// Each source's breaker now, in chain order.
    pub fn breaker_states(&self) -> Vec<(&'static str, BreakerState)> {
        self.slots
            .iter()
            .filter_map(|s| s.breaker.lock().ok().map(|b| (s.source.name(), b.state())))
            .collect()
    }

    pub fn push(&mut self, source: Arc<dyn DailySource>, policy: SourcePolicy) {
        self.slots.push(Slot {
            limiter: Mutex::new(RateLimiter::new(policy.min_interval)),
            breaker: Mutex::new(CircuitBreaker::new(policy.breaker)),
            source,
            policy,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.slots.iter().map(|s| s.source.name()).collect()
    }

    pub async fn daily_bars(&self, req: &BarRequest) -> Result<ChainOk<Fetched>, ChainError> {
        let what = format!(
            "{} {}..{}",
            req.symbol.dotted(),
            crate::date::iso(req.start),
            crate::date::iso(req.end)
        );
        let index = req.symbol.kind == crate::code::SymbolKind::Index;
        self.run(
            what,
            |s| index && !s.supports_index(),
            |s| {
                let s = s.clone();
                let req = req.clone();
                async move { s.daily_bars(&req).await }
            },
        )
        .await
    }

    pub async fn stock_list(&self) -> Result<ChainOk<Vec<StockInfo>>, ChainError> {
        self.run(
            "the stock list".into(),
            |_| false,
            |s| {
                let s = s.clone();
                async move { s.stock_list().await }
            },
        )
        .await
    }

    /// Whether any source offers the market's name and listing history.
    pub fn has_stock_history(&self) -> bool {
        self.slots.iter().any(|s| s.source.has_stock_history())
    }

    pub async fn stock_history(&self) -> Result<ChainOk<StockHistory>, ChainError> {
        self.run(
            "the stock history".into(),
            |s| !s.has_stock_history(),
            |s| {
                let s = s.clone();
                async move { s.stock_history().await }
            },
        )
        .await
    }

    /// Every stock's market cap at `day`'s close, from the first stock-history source.
    pub async fn market_caps_on(
        &self,
        day: u32,
    ) -> Result<ChainOk<Vec<(String, f64)>>, ChainError> {
        self.run(
            format!("the market caps of {}", crate::date::iso(day)),
            |s| !s.has_stock_history(),
            |s| {
                let s = s.clone();
                async move { s.market_caps_on(day).await }
            },
        )
        .await
    }

    /// The sources that offer minute bars, in chain order.
    pub fn minute_source_names(&self) -> Vec<&'static str> {
        self.slots
            .iter()
            .filter(|s| s.source.has_minute_bars())
            .map(|s| s.source.name())
            .collect()
    }

    /// The latest `period` bars of `symbol` from the first minute source that has them.
    /// Each source is asked through its one slot: the pace, retries and breaker its daily
    /// bars go through (a vendor the daily sync found down is skipped here too, and
    /// minute failures count toward opening it for the daily bars).
    pub async fn minute_bars(
        &self,
        symbol: &crate::code::Symbol,
        period: crate::minute::MinutePeriod,
    ) -> Result<ChainOk<super::minute::MinuteFetched>, ChainError> {
        self.run(
            format!("{} {period} bars", symbol.dotted()),
            |s| !s.has_minute_bars(),
            |s| {
                let s = s.clone();
                let symbol = symbol.clone();
                async move { s.minute_bars(&symbol, period).await }
            },
        )
        .await
    }

    /// [`SourceChain::daily_bars`] trying the source named `first` before the others (in
    /// their order): the unadjusted prices that go with adjusted bars are asked of the
    /// vendor that gave those bars while it answers.
    pub async fn daily_bars_from(
        &self,
        req: &BarRequest,
        first: &str,
    ) -> Result<ChainOk<Fetched>, ChainError> {
        let what = format!(
            "{} {}..{}",
            req.symbol.dotted(),
            crate::date::iso(req.start),
            crate::date::iso(req.end)
        );
        let index = req.symbol.kind == crate::code::SymbolKind::Index;
        self.run_from(
            Some(first),
            what,
            |s| index && !s.supports_index(),
            |s| {
                let s = s.clone();
                let req = req.clone();
                async move { s.daily_bars(&req).await }
            },
        )
        .await
    }

    async fn run<T, F, Fut>(
        &self,
        what: String,
        skip: impl Fn(&Arc<dyn DailySource>) -> bool,
        call: F,
    ) -> Result<ChainOk<T>, ChainError>
    where
        F: Fn(&Arc<dyn DailySource>) -> Fut,
        Fut: std::future::Future<Output = Result<T, SourceError>>,
    {
        self.run_from(None, what, skip, call).await
    }

    /// Tries each source in turn (`first`, when named, before the others) until one
    /// answers.
    async fn run_from<T, F, Fut>(
        &self,
        first: Option<&str>,
        what: String,
        skip: impl Fn(&Arc<dyn DailySource>) -> bool,
        call: F,
    ) -> Result<ChainOk<T>, ChainError>
    where
        F: Fn(&Arc<dyn DailySource>) -> Fut,
        Fut: std::future::Future<Output = Result<T, SourceError>>,
    {
        let is_first = |slot: &&Slot| Some(slot.source.name()) == first;
        let ordered = self
            .slots
            .iter()
            .filter(is_first)
            .chain(self.slots.iter().filter(|s| !is_first(s)));
        let mut attempts = Vec::new();
        for slot in ordered {
            let name = slot.source.name();
            if skip(&slot.source) {
                continue;
            }
            match self.try_slot(slot, &call).await {
                Ok(value) => {
                    return Ok(ChainOk {
                        value,
                        source: name,
                        failed_before: attempts,
                    });
                }
                Err(SourceError::Unsupported(_)) => continue,
                Err(e) => {
                    tracing::info!(source = name, %what, error = %e, "source failed, trying next");
                    attempts.push(Attempt {
                        source: name.to_string(),
                        error: e.to_string(),
                        cause: Some(e),
                    });
                }
            }
        }
        Err(ChainError { what, attempts })
    }

    async fn try_slot<T, F, Fut>(&self, slot: &Slot, call: &F) -> Result<T, SourceError>
    where
        F: Fn(&Arc<dyn DailySource>) -> Fut,
        Fut: std::future::Future<Output = Result<T, SourceError>>,
    {
        let allowed = slot
            .breaker
            .lock()
            .map(|mut b| b.allow(self.clock.now()))
            .unwrap_or(true);
        if !allowed {
            return Err(SourceError::CircuitOpen);
        }
        let mut attempt = 0;
        loop {
            let wait = slot
                .limiter
                .lock()
                .map(|mut l| l.reserve(self.clock.now()))
                .unwrap_or(Duration::ZERO);
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
            let result = call(&slot.source).await;
            match result {
                Ok(v) => {
                    self.breaker_update(slot, None).await;
                    return Ok(v);
                }
                Err(e) => {
                    if let Some(ra) = e.retry_after()
                        && let Ok(mut l) = slot.limiter.lock()
                    {
                        l.penalize(self.clock.now(), ra.min(slot.policy.backoff_max));
                    }
                    if e.is_retryable() && attempt < slot.policy.max_retries {
                        let d = backoff_delay(
                            attempt,
                            slot.policy.backoff_base,
                            slot.policy.backoff_max,
                            e.retry_after(),
                        );
                        tracing::debug!(source = slot.source.name(), attempt, ?d, error = %e, "retrying");
                        attempt += 1;
                        // a vendor retry-after is honoured by the limiter's next slot
                        if e.retry_after().is_none() {
                            tokio::time::sleep(d).await;
                        }
                        continue;
                    }
                    self.breaker_update(slot, Some(&e)).await;
                    return Err(e);
                }
            }
        }
    }

    async fn breaker_update(&self, slot: &Slot, err: Option<&SourceError>) {
        let changed = match slot.breaker.lock() {
            Ok(mut b) => {
                let before = b.state();
                match err {
                    Some(SourceError::Connect(_)) => b.on_unreachable(self.clock.now()),
                    Some(e) if e.is_source_failure() => b.on_failure(self.clock.now()),
                    _ => b.on_success(),
                }
                Some(b.state()).filter(|after| *after != before)
            }
            Err(_) => None,
        };
        if let (Some(state), Some(store)) = (changed, &self.breaker_store)
            && let Err(e) = store.save(slot.source.name(), state).await
        {
            // the breaker still works in this process; only the next one will not know
            tracing::warn!(source = slot.source.name(), error = %e, "cannot store the circuit breaker");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use async_trait::async_trait;

    use super::*;
    use crate::clock::ManualClock;
    use crate::code::{StockCode, Symbol};
    use crate::minute::{MinuteBar, MinutePeriod};
    use crate::sources::minute::MinuteFetched;

    /// A vendor whose daily bars fail as a flaky host does (or, when it is up, answer that
    /// the range is empty) and whose minute bars answer one bar; it counts the requests
    /// that reached it.
    struct Vendor {
        name: &'static str,
        minutes: bool,
        down: bool,
        daily_calls: AtomicU32,
        minute_calls: AtomicU32,
    }

    impl Vendor {
        fn new(name: &'static str, minutes: bool, down: bool) -> Arc<Self> {
            Arc::new(Self {
                name,
                minutes,
                down,
                daily_calls: AtomicU32::new(0),
                minute_calls: AtomicU32::new(0),
            })
        }
    }

    #[async_trait]
    impl DailySource for Vendor {
        fn name(&self) -> &'static str {
            self.name
        }

        async fn daily_bars(&self, _req: &BarRequest) -> Result<Fetched, SourceError> {
            self.daily_calls.fetch_add(1, Ordering::SeqCst);
            if self.down {
                return Err(SourceError::Html {
                    snippet: "<html>busy</html>".into(),
                });
            }
            Err(SourceError::Empty)
        }

        fn has_minute_bars(&self) -> bool {
            self.minutes
        }

        async fn minute_bars(
            &self,
            _symbol: &Symbol,
            _period: MinutePeriod,
        ) -> Result<MinuteFetched, SourceError> {
            self.minute_calls.fetch_add(1, Ordering::SeqCst);
            Ok(MinuteFetched {
                bars: vec![MinuteBar {
                    time: 202_412_021_030,
                    open: 10.0,
                    high: 10.2,
                    low: 9.9,
                    close: 10.1,
                    volume: 1000.0,
                    amount: None,
                }],
                rejected: Vec::new(),
            })
        }
    }

    fn symbol() -> Symbol {
        StockCode::parse("600519").unwrap().symbol()
    }

    fn request() -> BarRequest {
        BarRequest {
            symbol: symbol(),
            start: 20_241_202,
            end: 20_241_202,
            adjust: super::super::Adjust::Forward,
        }
    }

    fn clock() -> Arc<ManualClock> {
        Arc::new(ManualClock::new(
            chrono::DateTime::parse_from_rfc3339("2024-12-02T06:00:00Z")
                .unwrap()
                .to_utc(),
        ))
    }

    fn no_retries(min_interval: Duration) -> SourcePolicy {
        SourcePolicy {
            min_interval,
            max_retries: 0,
            ..SourcePolicy::default()
        }
    }

    #[tokio::test]
    async fn a_breaker_opened_by_daily_failures_skips_that_vendors_minute_bars() {
        let clock = clock();
        let flaky = Vendor::new("eastmoney", true, true);
        let backup = Vendor::new("tencent", true, false);
        let daily_only = Vendor::new("tushare", false, false);
        let mut chain = SourceChain::new(clock.clone());
        chain.push(daily_only.clone(), no_retries(Duration::ZERO));
        chain.push(flaky.clone(), no_retries(Duration::ZERO));
        chain.push(backup.clone(), no_retries(Duration::ZERO));
        assert_eq!(chain.minute_source_names(), ["eastmoney", "tencent"]);

        // before any failure the first minute vendor answers
        let ok = chain
            .minute_bars(&symbol(), MinutePeriod::M60)
            .await
            .unwrap();
        assert_eq!(
            (ok.source, flaky.minute_calls.load(Ordering::SeqCst)),
            ("eastmoney", 1)
        );
        // a vendor without minute bars is passed over, not reported as failing
        assert!(ok.failed_before.is_empty(), "{:?}", ok.failed_before);
        assert_eq!(daily_only.minute_calls.load(Ordering::SeqCst), 0);

        // three failed daily fetches open Eastmoney's breaker (the default threshold)
        for _ in 0..BreakerConfig::default().failure_threshold {
            assert!(chain.daily_bars(&request()).await.is_err());
        }
        assert!(
            chain
                .breaker_states()
                .iter()
                .any(|(n, s)| *n == "eastmoney" && matches!(s, BreakerState::Open { .. })),
            "{:?}",
            chain.breaker_states()
        );

        // the minute fetch now skips Eastmoney without asking it and falls back to Tencent
        let ok = chain
            .minute_bars(&symbol(), MinutePeriod::M60)
            .await
            .unwrap();
        assert_eq!(ok.source, "tencent");
        assert_eq!(flaky.minute_calls.load(Ordering::SeqCst), 1);
        assert_eq!(ok.failed_before.len(), 1);
        assert_eq!(ok.failed_before[0].source, "eastmoney");
        assert_eq!(ok.failed_before[0].cause, Some(SourceError::CircuitOpen));

        // after the cooldown one probe goes through and a good minute reply closes it
        clock.advance(BreakerConfig::default().cooldown + Duration::from_secs(1));
        let ok = chain
            .minute_bars(&symbol(), MinutePeriod::M60)
            .await
            .unwrap();
        assert_eq!(ok.source, "eastmoney");
        assert!(
            chain
                .breaker_states()
                .iter()
                .any(|(n, s)| *n == "eastmoney" && *s == BreakerState::Closed { failures: 0 })
        );
    }

    #[tokio::test]
    async fn minute_and_daily_fetches_share_one_pace_per_vendor() {
        let clock = clock();
        let vendor = Vendor::new("tencent", true, true);
        let gap = Duration::from_millis(300);
        let mut chain = SourceChain::new(clock.clone());
        chain.push(vendor.clone(), no_retries(gap));

        let start = std::time::Instant::now();
        assert!(chain.daily_bars(&request()).await.is_err());
        assert!(start.elapsed() < gap, "the first request waits for nothing");
        // the daily request took the vendor's slot: the minute one waits the interval
        chain
            .minute_bars(&symbol(), MinutePeriod::M30)
            .await
            .unwrap();
        assert!(start.elapsed() >= gap, "{:?}", start.elapsed());
        // the injected clock moves as the wall clock did
        clock.advance(gap);
        chain
            .minute_bars(&symbol(), MinutePeriod::M30)
            .await
            .unwrap();
        assert!(start.elapsed() >= gap * 2, "{:?}", start.elapsed());
        assert_eq!(vendor.daily_calls.load(Ordering::SeqCst), 1);
        assert_eq!(vendor.minute_calls.load(Ordering::SeqCst), 2);
    }
}
