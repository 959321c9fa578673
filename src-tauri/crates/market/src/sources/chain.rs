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
