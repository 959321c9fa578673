//! Minute bars a front end asks of the desk: what is cached, a sync of some codes at one
//! period, and the stock page at a minute period with the daily reading's marks where
//! they apply.

use wyckoff_market::minute::{MinuteError, MinutePeriod, MinuteStore};
use wyckoff_market::minute_chart::{self, DailyMarks, MinuteChart};
use wyckoff_market::minute_sync::{self, MinuteStatus, MinuteSyncEvent, MinuteSyncOutcome};
use wyckoff_tools::chart::{self, Period};

use crate::Desk;

impl Desk {
    /// What the minute cache holds per stock and period, and how far back each source's
    /// reply reached.
    pub async fn minute_status(&self) -> Result<MinuteStatus, MinuteError> {
        minute_sync::minute_status(self.market()).await
    }

    /// Fetches `period` bars of `codes` (closed bars only) into the cache, paced and
    /// guarded like the daily syncs; `progress` hears each code start and finish.
    pub async fn sync_minutes(
        &self,
        codes: &[String],
        period: MinutePeriod,
        progress: &mut (dyn FnMut(MinuteSyncEvent) + Send),
    ) -> Result<Vec<MinuteSyncOutcome>, MinuteError> {
        minute_sync::sync_minutes(self.market(), codes, period, progress).await
    }

    /// The stock page at `period` from the cache (no fetch): the bars, and the daily
    /// reading's range lines, stop, target and events where they apply.
    pub async fn minute_chart(
        &self,
        code: &str,
        period: MinutePeriod,
    ) -> Result<MinuteChart, MinuteError> {
        let parsed = wyckoff_market::StockCode::parse(code)
            .map_err(|e| MinuteError::Db(format!("{code}: {e}")))?;
        let digits = parsed.digits().to_owned();
        let store = MinuteStore::new(self.market().pool().clone());
        let series = store.load(&digits, period).await?;
        let coverage = store
            .coverage()
            .await?
            .into_iter()
            .find(|c| c.code == digits && c.period == period);
        // the daily reading; a stock without daily bars still shows its minute bars
        let daily = match chart::build_chart_as_of(self.market(), &digits, Period::Day, None).await
        {
            Ok(c) => daily_marks(&c),
            Err(e) => {
                tracing::info!(code = %digits, error = %e, "no daily reading for the minute chart");
                DailyMarks::default()
            }
        };
        let name = self.market().stock_info(&parsed).map(|i| i.name);
        Ok(minute_chart::build(
            &digits, name, period, &series, coverage, &daily,
        ))
    }
}

fn daily_marks(c: &chart::StockChart) -> DailyMarks {
    let r = &c.reading;
    let mut levels = Vec::new();
    if let Some(s) = r.support {
        levels.push(("support".to_owned(), s));
    }
    if let Some(x) = r.resistance {
        levels.push(("resistance".to_owned(), x));
    }
    if let Some(h) = &c.holding {
        if let Some(s) = h.stop_loss {
            levels.push(("stop".to_owned(), s));
        }
        if let Some(t) = h.target {
            levels.push(("target".to_owned(), t));
        }
    }
    DailyMarks {
        closes: c
            .bars
            .dates
            .iter()
            .copied()
            .zip(c.bars.close.iter().copied())
            .collect(),
        levels,
        events: r
            .events
            .iter()
            .map(|e| (e.label.clone(), e.date, e.price))
            .collect(),
        has_phases: !r.phases.is_empty(),
        cost: c.holding.as_ref().map(|h| h.cost),
    }
}
