//! Incremental sync: staleness rules (pure), fetch planning (pure) and the runner that
//! fetches only what is missing and keeps forward-adjusted history consistent.

use chrono::NaiveDateTime;
use serde::Serialize;

use crate::cache::{BarTable, BarsWrite, CacheError, CacheStore, RawMissing};
use crate::calendar::TradingCalendar;
use crate::clock::Clock;
use crate::code::{Symbol, SymbolKind};
use crate::series::Series;
use crate::sources::{Adjust, BarRequest, Fetched, SourceChain};

/// How fresh a cached series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Freshness {
    /// The last bar is the last closed trading day (or later).
    Fresh { last_bar: u32 },
    /// The last bar is older than the last closed trading day.
    Stale { last_bar: u32, expected: u32 },
    /// Nothing cached.
    Missing,
}

/// The newest bar a complete series should have at Shanghai wall-clock `now`: the last
/// trading day whose 15:00 close has passed, or, when replaying history with `as_of`,
/// the last trading day on or before `as_of` (if that is earlier).
pub fn expected_last_bar(
    cal: &TradingCalendar,
    now_shanghai: NaiveDateTime,
    as_of: Option<u32>,
) -> Option<u32> {
    let live = cal.last_closed_trading_day(now_shanghai)?;
    match as_of {
        Some(a) if a < live => {
            if cal.is_trading_day(a) {
                Some(a)
            } else {
                cal.previous_trading_day(a)
            }
        }
        _ => Some(live),
    }
}

/// The day a series' expectation stops at: the earlier of an as-of date and a delisting
/// day (a delisted stock's series is complete at its last trading day, not stale).
pub fn expectation_bound(as_of: Option<u32>, delisted: Option<u32>) -> Option<u32> {
    match (as_of, delisted) {
        (Some(a), Some(d)) => Some(a.min(d)),
        (a, d) => a.or(d),
    }
}

/// Stale if the last cached bar is before the expected one.
pub fn freshness(last_bar: Option<u32>, expected: Option<u32>) -> Freshness {
    match (last_bar, expected) {
        (None, _) => Freshness::Missing,
        (Some(l), Some(e)) if l < e => Freshness::Stale {
            last_bar: l,
            expected: e,
        },
        (Some(l), _) => Freshness::Fresh { last_bar: l },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchPlan {
    pub start: u32,
    pub end: u32,
    /// Cached day re-fetched on purpose: if its close changed, the vendor re-based its
    /// forward adjustment (a dividend or split) and the whole series must be refreshed.
    pub overlap: Option<u32>,
}

/// What to fetch so the cache reaches `expected`; `None` when nothing is missing.
pub fn plan_fetch(
    cal: &TradingCalendar,
    last_cached: Option<u32>,
    expected: u32,
    initial_trading_days: usize,
) -> Option<FetchPlan> {
    match last_cached {
        Some(last) if last >= expected => None,
        Some(last) => {
            // no trading day strictly after `last` up to `expected`: nothing to fetch
            cal.next_trading_day(last).filter(|n| *n <= expected)?;
            Some(FetchPlan {
                start: last,
                end: expected,
                overlap: Some(last),
            })
        }
        None => {
            let days = cal.trading_days_between(0, expected);
            let start = days
                .len()
                .checked_sub(initial_trading_days.max(1))
                .and_then(|i| days.get(i).copied())
                .unwrap_or_else(|| cal.first_day());
            Some(FetchPlan {
                start,
                end: expected,
                overlap: None,
            })
        }
    }
}

/// Relative change in close that counts as a forward-adjustment rebase (not rounding).
const REBASE_TOLERANCE: f64 = 1e-4;

pub fn is_rebased(cached_close: f64, fetched_close: f64) -> bool {
    let base = cached_close.abs().max(1e-9);
    ((cached_close - fetched_close) / base).abs() > REBASE_TOLERANCE
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SyncStatus {
    UpToDate,
    Updated {
        source: String,
        new_bars: usize,
        /// True when the whole series was replaced because adjustment was re-based.
        rebased: bool,
        /// Corrupt cached rows that made this sync replace the whole series.
        repaired_rows: usize,
        /// Rows the source sent that failed validation (logged, not stored).
        rejected_rows: usize,
    },
    /// The sources answered but had no bar after the cached one (e.g. suspended).
    NoNewData,
    Failed {
        error: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncOutcome {
    pub code: String,
    #[serde(flatten)]
    pub status: SyncStatus,
    pub last_date: Option<u32>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SyncEvent {
    Started {
        index: usize,
        total: usize,
        code: String,
    },
    Finished {
        index: usize,
        total: usize,
        outcome: SyncOutcome,
    },
}

pub struct SyncContext<'a> {
    pub store: &'a CacheStore,
    pub chain: &'a SourceChain,
    pub calendar: &'a TradingCalendar,
    pub clock: &'a dyn Clock,
    pub initial_trading_days: usize,
    /// Delisting days by six-digit code: those series end there, so a sync never asks
    /// for bars after it and counts a series that reaches it as complete.
    pub delisted: std::collections::HashMap<String, u32>,
}

impl SyncContext<'_> {
    /// Brings one symbol up to the last closed trading day.
    pub async fn sync_symbol(&self, symbol: &Symbol) -> Result<SyncOutcome, CacheError> {
        let (table, adjust) = match symbol.kind {
            SymbolKind::Stock => (BarTable::Stocks, Adjust::Forward),
            SymbolKind::Index => (BarTable::Indices, Adjust::None),
        };
        let key = symbol.key();
        let outcome = |status, last_date| SyncOutcome {
            code: key.clone(),
            status,
            last_date,
        };
        let last = self.store.last_date(table, &key).await?;
        let ends = match symbol.kind {
            SymbolKind::Stock => self.delisted.get(&symbol.digits).copied(),
            SymbolKind::Index => None,
        };
        let Some(expected) = expected_last_bar(self.calendar, self.clock.now_beijing(), ends)
        else {
            return Ok(outcome(SyncStatus::UpToDate, last));
        };
        // corrupt cached rows are repaired by replacing the series, since incremental
        // sync would never revisit those old dates
        // bars imported from TDX are unadjusted: they are replaced as a whole by the
        // adjusted history (keeping their raw closes), so one series holds one basis
        let (corrupt, unadjusted) = match last {
            Some(_) => {
                let loaded = self.store.load_bars(table, &key, None).await?;
                let tdx = loaded.sources.iter().any(|s| s == crate::tdx::TDX_SOURCE);
                (loaded.corrupt.len(), tdx)
            }
            None => (0, false),
        };
        let plan = if corrupt > 0 || unadjusted {
            let first = self
                .store
                .coverage_of(table, &key)
                .await?
                .map(|c| c.first_date);
            first.map(|start| FetchPlan {
                start,
                end: expected.max(last.unwrap_or(expected)),
                overlap: None,
            })
        } else {
            plan_fetch(self.calendar, last, expected, self.initial_trading_days)
        };
        let Some(plan) = plan else {
            return Ok(outcome(SyncStatus::UpToDate, last));
        };
        if self.chain.is_empty() {
            return Ok(outcome(
                SyncStatus::Failed {
                    error: "no live source configured (offline)".into(),
                },
                last,
            ));
        }
        let req = BarRequest {
            symbol: symbol.clone(),
            start: plan.start,
            end: plan.end,
            adjust,
        };
        let got = match self.chain.daily_bars(&req).await {
            Ok(g) => g,
            Err(e) => {
                let status = if e.all_empty() && last.is_some() {
                    SyncStatus::NoNewData
                } else {
                    SyncStatus::Failed {
                        error: e.to_string(),
                    }
                };
                return Ok(outcome(status, last));
            }
        };
        let mut fetched = got.value;
        let mut rebased = false;
        if let Some(day) = plan.overlap {
            let cached = self.store.close_on(table, &key, day).await?;
            let fresh = fetched.bars.iter().find(|b| b.date == day).map(|b| b.close);
            if let (Some(c), Some(f)) = (cached, fresh)
                && is_rebased(c, f)
            {
                tracing::info!(code = %key, day, cached = c, fetched = f, "adjustment re-based; refetching full history");
                let first = self
                    .store
                    .coverage_of(table, &key)
                    .await?
                    .map(|c| c.first_date)
                    .unwrap_or(plan.start);
                let full = BarRequest {
                    start: first,
                    ..req.clone()
                };
                match self.chain.daily_bars(&full).await {
                    Ok(g) => {
                        fetched = g.value;
                        rebased = true;
                    }
                    Err(e) => {
                        // never mix two adjustment bases in one series
                        return Ok(outcome(
                            SyncStatus::Failed {
                                error: format!(
                                    "adjustment re-based upstream but full refetch failed: {e}"
                                ),
                            },
                            last,
                        ));
                    }
                }
            }
        }
        let source = got.source;
        if !fetched.rejected.is_empty() {
            tracing::warn!(code = %key, source, rejected = ?fetched.rejected, "source rows rejected");
        }
        let replace = rebased || corrupt > 0 || unadjusted;
        let raw = match adjust {
            Adjust::Forward => {
                self.fetch_raw(symbol, table, &fetched, source, replace)
                    .await?
            }
            // unadjusted bars' closes are raw themselves
            Adjust::None => RawFetch::default(),
        };
        let new_bars = fetched
            .bars
            .iter()
            .filter(|b| replace || last.is_none_or(|l| b.date > l))
            .count();
        self.store
            .write_bars(
                table,
                &key,
                BarsWrite {
                    bars: &fetched.bars,
                    raw: &raw.closes,
                    source,
                    has_amount: fetched.has_amount,
                    replace,
                },
            )
            .await?;
        if raw.answered {
            self.record_raw_asked(table, &key).await?;
        }
        let first = fetched.bars.first().map(|b| b.date);
        let new_last = fetched.bars.last().map(|b| b.date);
        self.store
            .record_sync(&key, source, first, new_last, self.clock.now())
            .await?;
        let last_date = self.store.last_date(table, &key).await?;
        if new_bars == 0 && !replace {
            return Ok(outcome(SyncStatus::NoNewData, last_date));
        }
        Ok(outcome(
            SyncStatus::Updated {
                source: source.to_string(),
                new_bars,
                rebased,
                repaired_rows: corrupt,
                rejected_rows: fetched.rejected.len(),
            },
            last_date,
        ))
    }
}

/// The unadjusted closes a sync stores beside adjusted bars.
#[derive(Debug, Default)]
struct RawFetch {
    /// (date, raw close): those the adjusted reply carried, and those fetched for them.
    closes: Vec<(u32, f64)>,
    /// A fetch of raw prices was made and answered (what it lacked, the source lacks).
    answered: bool,
}

impl SyncContext<'_> {
    /// The raw closes to store with `fetched` (adjusted bars of `symbol` from `source`): the
    /// ones its reply carried, and otherwise one fetch of unadjusted bars, asked of the same
    /// vendor first, over the days that lack one: the new bars', and the stored bars'
    /// (bundled, imported, or stored before raw prices were kept) unless the last fetch
    /// that answered left exactly those days without one. A failed fetch costs only the
    /// raw closes: the adjusted bars are stored, their days stay without a raw close and
    /// the next sync asks again.
    async fn fetch_raw(
        &self,
        symbol: &Symbol,
        table: BarTable,
        fetched: &Fetched,
        source: &str,
        replace: bool,
    ) -> Result<RawFetch, CacheError> {
        let key = symbol.key();
        let stored = match self.store.load_series(table, &key).await? {
            Some(Ok(s)) => s,
            _ => Series::default(),
        };
        let mut known: Vec<u32> = stored.raw_closes().into_iter().map(|(d, _)| d).collect();
        known.extend(fetched.raw_closes.iter().map(|(d, _)| *d));
        known.sort_unstable();
        let has_raw = |d: u32| known.binary_search(&d).is_ok();
        let mut wanted: Vec<u32> = fetched
            .bars
            .iter()
            .map(|b| b.date)
            .filter(|d| !has_raw(*d))
            .collect();
        // a replacement drops the stored bars the fetch did not bring again
        if !replace {
            let asked = self.store.raw_asked(table, &key).await?;
            let stored_missing = match asked {
                // the days left without one last time are still the same: only later ones
                Some(a) if RawMissing::of(&stored, 0..=a.last) == Some(a) => {
                    RawMissing::of(&stored, a.last.saturating_add(1)..=u32::MAX)
                }
                _ => RawMissing::of(&stored, 0..=u32::MAX),
            };
            if let Some(m) = stored_missing {
                wanted.extend([m.first, m.last]);
            }
        }
        let mut out = RawFetch {
            closes: fetched.raw_closes.clone(),
            answered: false,
        };
        let (Some(&start), Some(&end)) = (wanted.iter().min(), wanted.iter().max()) else {
            return Ok(out);
        };
        let req = BarRequest {
            symbol: symbol.clone(),
            start,
            end,
            adjust: Adjust::None,
        };
        match self.chain.daily_bars_from(&req, source).await {
            Ok(got) => {
                out.closes
                    .extend(got.value.bars.iter().map(|b| (b.date, b.close)));
                out.answered = true;
            }
            // none in the range is an answer too: the source has no raw prices there
            Err(e) if e.all_empty() => out.answered = true,
            Err(e) => {
                tracing::warn!(code = %key, error = %e, "unadjusted prices not fetched; the days keep no raw close")
            }
        }
        Ok(out)
    }

    /// Records which stored days still lack a raw close after a fetch that answered, so
    /// the next sync does not ask for them again until that changes.
    async fn record_raw_asked(&self, table: BarTable, key: &str) -> Result<(), CacheError> {
        let Some(Ok(series)) = self.store.load_series(table, key).await? else {
            return Ok(());
        };
        let missing = RawMissing::of(&series, 0..=u32::MAX).unwrap_or(RawMissing {
            first: 0,
            last: 0,
            count: 0,
        });
        self.store
            .set_raw_asked(table, key, missing, self.clock.now())
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::from_yyyymmdd;

    fn cal() -> TradingCalendar {
        crate::bundled::calendar().unwrap()
    }
    fn at(d: u32, h: u32) -> NaiveDateTime {
        from_yyyymmdd(d).unwrap().and_hms_opt(h, 0, 0).unwrap()
    }

    #[test]
    fn staleness_table() {
        let c = cal();
        // (last bar, now, as_of, expected freshness)
        let cases = [
            (
                Some(20240102),
                at(20240102, 16),
                None,
                Freshness::Fresh { last_bar: 20240102 },
            ),
            // before the close, yesterday's bar is enough
            (
                Some(20231229),
                at(20240102, 14),
                None,
                Freshness::Fresh { last_bar: 20231229 },
            ),
            (
                Some(20231229),
                at(20240102, 15),
                None,
                Freshness::Stale {
                    last_bar: 20231229,
                    expected: 20240102,
                },
            ),
            // weekend: Friday's bar is fresh
            (
                Some(20240105),
                at(20240107, 12),
                None,
                Freshness::Fresh { last_bar: 20240105 },
            ),
            // Golden Week
            (
                Some(20240930),
                at(20241006, 20),
                None,
                Freshness::Fresh { last_bar: 20240930 },
            ),
            (None, at(20240102, 16), None, Freshness::Missing),
            // replaying history: as-of a past date
            (
                Some(20200616),
                at(20261201, 16),
                Some(20200616),
                Freshness::Fresh { last_bar: 20200616 },
            ),
            (
                Some(20200615),
                at(20261201, 16),
                Some(20200616),
                Freshness::Stale {
                    last_bar: 20200615,
                    expected: 20200616,
                },
            ),
            // as-of a Sunday: the Friday before
            (
                Some(20200612),
                at(20261201, 16),
                Some(20200614),
                Freshness::Fresh { last_bar: 20200612 },
            ),
            // bundled data seen today
            (
                Some(20200616),
                at(20261201, 16),
                None,
                Freshness::Stale {
                    last_bar: 20200616,
                    expected: 20261201,
                },
            ),
        ];
        for (last, now, as_of, want) in cases {
            let exp = expected_last_bar(&c, now, as_of);
            assert_eq!(freshness(last, exp), want, "{last:?} {now} {as_of:?}");
        }
    }

    #[test]
    fn plan_table() {
        let c = cal();
        assert_eq!(plan_fetch(&c, Some(20240102), 20240102, 750), None);
        assert_eq!(plan_fetch(&c, Some(20240103), 20240102, 750), None);
        assert_eq!(
            plan_fetch(&c, Some(20231229), 20240103, 750),
            Some(FetchPlan {
                start: 20231229,
                end: 20240103,
                overlap: Some(20231229)
            })
        );
        // only non-trading days in between: nothing to fetch
        assert_eq!(plan_fetch(&c, Some(20240930), 20240930, 750), None);
        let p = plan_fetch(&c, None, 20240102, 3).unwrap();
        assert_eq!((p.start, p.end, p.overlap), (20231228, 20240102, None));
        let p = plan_fetch(&c, None, 19901220, 100).unwrap();
        assert_eq!(p.start, 19901219);
    }

    #[test]
    fn a_delisted_series_is_complete_at_its_last_day() {
        let c = cal();
        // (as-of, delisting day, last bar, freshness at a later live close)
        let cases = [
            (None, None, 20240105, false),
            // delisted on a Friday: Friday's bar completes it, years later
            (None, Some(20240105), 20240105, true),
            (None, Some(20240105), 20240104, false),
            // a delisting day on a Sunday ends at the Friday before
            (None, Some(20240107), 20240105, true),
            // an as-of date before the delisting bounds it as any as-of does
            (Some(20240103), Some(20240105), 20240103, true),
            (Some(20240108), Some(20240105), 20240105, true),
        ];
        for (as_of, delisted, last, fresh) in cases {
            let exp = expected_last_bar(&c, at(20261201, 16), expectation_bound(as_of, delisted));
            assert_eq!(
                matches!(freshness(Some(last), exp), Freshness::Fresh { .. }),
                fresh,
                "{as_of:?} {delisted:?} {last}"
            );
        }
    }

    #[test]
    fn rebase_detection() {
        assert!(!is_rebased(10.0, 10.0));
        assert!(!is_rebased(10.0, 10.0005));
        assert!(is_rebased(10.0, 9.8));
    }
}
