//! Bringing minute bars into the cache, what the cache holds of them, and the 14:55 prices
//! a backtest enters at.

use std::collections::HashMap;

use serde::Serialize;

use crate::code::StockCode;
use crate::facade::MarketData;
use crate::minute::{
    MinuteBar, MinuteCoverage, MinuteError, MinutePeriod, MinuteReach, MinuteStore, from_datetime,
};
use crate::sources::SourceChain;

/// What one code's minute sync did.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MinuteSyncStatus {
    Updated {
        source: String,
        /// Bars at times the cache did not hold.
        new_bars: u32,
        /// Bars the reply held (closed ones).
        fetched: u32,
        /// Bars still forming when fetched, left out.
        unfinished: u32,
        /// Rows the source sent that were refused, with why.
        rejected: Vec<String>,
        /// Sources that failed before this one, with why.
        failed_before: Vec<String>,
    },
    Failed {
        /// Every source tried and why it failed; empty attempts mean none is configured.
        error: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteSyncOutcome {
    pub code: String,
    pub period: MinutePeriod,
    pub status: MinuteSyncStatus,
    /// The cached series after the sync, if any.
    pub coverage: Option<MinuteCoverage>,
}

/// Progress of a minute sync over several codes.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MinuteSyncEvent {
    Started {
        code: String,
        done: u32,
        total: u32,
    },
    Finished {
        outcome: MinuteSyncOutcome,
        done: u32,
        total: u32,
    },
}

/// The minute bar cache and how far back each source reached.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MinuteStatus {
    pub series: Vec<MinuteCoverage>,
    pub reach: Vec<MinuteReach>,
    /// The sources a minute sync would ask, in order.
    pub sources: Vec<String>,
}

/// Fetches `period` bars of each of `codes` through `md`'s source chain (Eastmoney and
/// Tencent in the configured order, each on its daily slot: the same pace and breaker;
/// `WYCKOFF_EASTMONEY_URL` and `WYCKOFF_TENCENT_KLINE_URL` point them at a mirror) and
/// merges the closed ones into the cache. A code that is not a stock code fails alone;
/// the others still sync.
pub async fn sync_minutes(
    md: &MarketData,
    codes: &[String],
    period: MinutePeriod,
    progress: &mut (dyn FnMut(MinuteSyncEvent) + Send),
) -> Result<Vec<MinuteSyncOutcome>, MinuteError> {
    let store = MinuteStore::new(md.pool().clone());
    // one chain for the whole sync, even if the settings swap it meanwhile
    let sources = md.chain();
    let total = codes.len() as u32;
    let mut out = Vec::with_capacity(codes.len());
    for (i, raw) in codes.iter().enumerate() {
        let done = i as u32;
        progress(MinuteSyncEvent::Started {
            code: raw.clone(),
            done,
            total,
        });
        let outcome = sync_one(md, &sources, &store, raw, period).await?;
        progress(MinuteSyncEvent::Finished {
            outcome: outcome.clone(),
            done: done + 1,
            total,
        });
        out.push(outcome);
    }
    Ok(out)
}

async fn sync_one(
    md: &MarketData,
    sources: &SourceChain,
    store: &MinuteStore,
    raw: &str,
    period: MinutePeriod,
) -> Result<MinuteSyncOutcome, MinuteError> {
    let failed = |code: String, error: String| MinuteSyncOutcome {
        code,
        period,
        status: MinuteSyncStatus::Failed { error },
        coverage: None,
    };
    let code = match StockCode::parse(raw) {
        Ok(c) => c,
        Err(e) => return Ok(failed(raw.to_owned(), e.to_string())),
    };
    let digits = code.digits().to_owned();
    if sources.minute_source_names().is_empty() {
        return Ok(failed(
            digits,
            "no live source with minute bars is configured (Eastmoney or Tencent; offline?)".into(),
        ));
    }
    let fetched = match sources.minute_bars(&code.symbol(), period).await {
        Ok(f) => f,
        Err(e) => {
            let why = e
                .attempts
                .iter()
                .map(|a| format!("{}: {}", a.source, a.error))
                .collect::<Vec<_>>()
                .join("; ");
            return Ok(failed(digits, why));
        }
    };
    // a bar that has not ended yet is still forming: never cached
    let now = from_datetime(md.clock().now_beijing());
    let (closed, open): (Vec<MinuteBar>, Vec<MinuteBar>) =
        fetched.value.bars.iter().partition(|b| b.time <= now);
    if let (Some(first), Some(last)) = (fetched.value.bars.first(), fetched.value.bars.last()) {
        store
            .record_reach(&MinuteReach {
                source: fetched.source.to_owned(),
                period,
                code: digits.clone(),
                earliest: first.time,
                latest: last.time,
                bars: fetched.value.bars.len() as u32,
                asked_at: md.clock().now().to_rfc3339(),
            })
            .await?;
    }
    let new_bars = store
        .merge(&digits, period, &closed, fetched.source)
        .await?;
    let coverage = store
        .coverage()
        .await?
        .into_iter()
        .find(|c| c.code == digits && c.period == period);
    Ok(MinuteSyncOutcome {
        code: digits,
        period,
        status: MinuteSyncStatus::Updated {
            source: fetched.source.to_owned(),
            new_bars: new_bars as u32,
            fetched: closed.len() as u32,
            unfinished: open.len() as u32,
            rejected: fetched.value.rejected,
            failed_before: fetched
                .failed_before
                .iter()
                .map(|a| format!("{}: {}", a.source, a.error))
                .collect(),
        },
        coverage,
    })
}

/// What the minute cache holds and how far back each source reached.
pub async fn minute_status(md: &MarketData) -> Result<MinuteStatus, MinuteError> {
    let store = MinuteStore::new(md.pool().clone());
    Ok(MinuteStatus {
        series: store.coverage().await?,
        reach: store.reaches().await?,
        sources: md
            .chain()
            .minute_source_names()
            .into_iter()
            .map(str::to_owned)
            .collect(),
    })
}

/// Every cached 60-minute bar by (code, day) as the engine's hour bars: what the funnel's
/// L4 confirms a trigger day on. A code with no 60-minute series has no entry.
pub async fn hour_bars_cached(
    md: &MarketData,
) -> Result<wyckoff_engine::funnel::HourBars, MinuteError> {
    let store = MinuteStore::new(md.pool().clone());
    let mut out = wyckoff_engine::funnel::HourBars::new();
    for c in store.coverage().await? {
        if c.period != MinutePeriod::M60 {
            continue;
        }
        for b in store.load(&c.code, c.period).await?.bars {
            out.entry((c.code.clone(), b.date())).or_default().push(
                wyckoff_engine::timeframes::HourBar {
                    hhmm: b.hhmm(),
                    open: b.open,
                    high: b.high,
                    low: b.low,
                    close: b.close,
                },
            );
        }
    }
    Ok(out)
}

/// The price at 14:55 of one day, from the minute bars of one period.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TailPrice {
    /// Close of the last bar that ended at or before 14:55.
    pub price: f64,
    /// That bar's end, `HHMM` (1455 from 5-minute bars, 1445 from 15, 1430 from 30, 1400
    /// from 60): no price after 14:55 is ever read.
    pub bar_end: u16,
    pub period: MinutePeriod,
    /// The day's last close in the same bars (15:00), which the price is a fraction of.
    pub day_close: f64,
}

/// The 14:55 price of each day of `bars` (one period, ascending) that has both a bar
/// ending by 14:55 in the afternoon session and its 15:00 bar.
pub fn tail_prices(bars: &[MinuteBar], period: MinutePeriod) -> Vec<(u32, TailPrice)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bars.len() {
        let day = bars[i].date();
        let end = bars[i..].partition_point(|b| b.date() == day) + i;
        let today = &bars[i..end];
        let at = today
            .iter()
            .rev()
            .find(|b| (1300..=1455).contains(&b.hhmm()));
        let close = today.iter().find(|b| b.hhmm() == 1500);
        if let (Some(at), Some(close)) = (at, close) {
            out.push((
                day,
                TailPrice {
                    price: at.close,
                    bar_end: at.hhmm(),
                    period,
                    day_close: close.close,
                },
            ));
        }
        i = end;
    }
    out
}

/// The 14:55 price of every cached stock-day in `start..=end` (YYYYMMDD), from the finest
/// period cached that day (5, then 15, 30, 60 minutes).
pub async fn tail_prices_cached(
    md: &MarketData,
    start: u32,
    end: u32,
) -> Result<HashMap<(String, u32), TailPrice>, MinuteError> {
    let store = MinuteStore::new(md.pool().clone());
    let mut out: HashMap<(String, u32), TailPrice> = HashMap::new();
    let from = u64::from(start) * 10_000;
    let to = u64::from(end) * 10_000 + 2359;
    let mut cov = store.coverage().await?;
    // finest first, so a coarser period never replaces a finer one's price
    cov.sort_by_key(|c| c.period);
    for c in cov
        .iter()
        .filter(|c| c.last_time >= from && c.first_time <= to)
    {
        let series = store.load(&c.code, c.period).await?;
        for (day, tp) in tail_prices(&series.bars, c.period) {
            if (start..=end).contains(&day) {
                out.entry((c.code.clone(), day)).or_insert(tp);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(time: u64, close: f64) -> MinuteBar {
        MinuteBar {
            time,
            open: close,
            high: close,
            low: close,
            close,
            volume: 100.0,
            amount: None,
        }
    }

    #[test]
    fn tail_price_is_the_last_bar_by_1455_never_later() {
        // (bars of one day, period, expected (bar_end, price) or none)
        type Case = (Vec<MinuteBar>, MinutePeriod, Option<(u16, f64)>);
        let cases: Vec<Case> = vec![
            (
                vec![
                    bar(202_412_021_450, 10.0),
                    bar(202_412_021_455, 10.1),
                    bar(202_412_021_500, 10.3),
                ],
                MinutePeriod::M5,
                Some((1455, 10.1)),
            ),
            (
                vec![
                    bar(202_412_021_430, 9.9),
                    bar(202_412_021_445, 10.0),
                    bar(202_412_021_500, 10.3),
                ],
                MinutePeriod::M15,
                Some((1445, 10.0)),
            ),
            (
                vec![
                    bar(202_412_021_130, 9.0),
                    bar(202_412_021_400, 9.5),
                    bar(202_412_021_500, 9.8),
                ],
                MinutePeriod::M60,
                Some((1400, 9.5)),
            ),
            // no 15:00 bar: the day is not complete
            (vec![bar(202_412_021_455, 10.1)], MinutePeriod::M5, None),
            // only morning bars before 15:00: no afternoon price by 14:55
            (
                vec![bar(202_412_021_130, 9.0), bar(202_412_021_500, 9.8)],
                MinutePeriod::M60,
                None,
            ),
        ];
        for (bars, period, want) in cases {
            let got = tail_prices(&bars, period);
            match want {
                None => assert!(got.is_empty(), "{bars:?}"),
                Some((end, price)) => {
                    assert_eq!(got.len(), 1);
                    assert_eq!((got[0].1.bar_end, got[0].1.price), (end, price));
                    assert_eq!(got[0].1.day_close, bars.last().unwrap().close);
                }
            }
        }
    }
}
