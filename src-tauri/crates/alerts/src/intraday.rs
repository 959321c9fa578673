//! Alerts during the session: the same rules, cooldowns, history and push as the check on
//! daily closes, evaluated every few minutes on a live snapshot. Each quoted stock is read
//! on its cached daily bars before today plus the day's partial bar, so a price rule reads
//! the last price, a change rule the change against the previous close, the stop and
//! target the last price, and the engine places its Wyckoff events on the partial bar.
//! Volume is read at the day's pace: volume so far scaled to a whole session by the
//! minutes of trading elapsed, so "volume ≥ k× the 20-day average" means the day is on
//! course for it. What fires records the quote time and says it was intraday; the partial
//! bar stays in memory (nothing reaches the bar cache).
//!
//! Only on trading days, 09:30–11:30 and 13:00–15:00 Beijing time
//! ([`wyckoff_market::quote_session`]), and once per interval slot of the session for every
//! process on the data home (the app and the daemon claim slots in `wyckoff.db`).

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Serialize;
use wyckoff_engine::Bar;
use wyckoff_market::MarketData;
use wyckoff_market::calendar::TradingCalendar;
use wyckoff_market::quote::{QuoteService, QuoteSnapshot};
use wyckoff_market::quote_session::{SessionPhase, elapsed_session_minutes, session_phase};
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{StockCode, date::to_yyyymmdd};
use wyckoff_protocol::{AlertCheckReport, AlertTarget};
use wyckoff_push::{DamagedChannel, Delivery, Outbox, PushEvent};
use wyckoff_time::{iso, to_beijing};

use crate::{AlertStore, AlertsError};

/// Minutes between two intraday checks unless the caller says otherwise.
pub const DEFAULT_INTERVAL_MINUTES: u32 = 5;
/// The pace of the first minutes is mostly the opening auction's volume: the scaling
/// never divides by less than this many minutes.
pub const MIN_PACE_MINUTES: u32 = 15;

/// The day and the slot of the session `now` (Beijing) falls in, for checks every
/// `interval` minutes; outside trading hours, or on a day the calendar has closed, the
/// phase it falls in instead.
pub fn intraday_slot(
    now: NaiveDateTime,
    calendar: &TradingCalendar,
    interval_minutes: u32,
) -> Result<(u32, u32), SessionPhase> {
    let phase = session_phase(now, calendar);
    if !phase.is_trading() {
        return Err(phase);
    }
    let slot = elapsed_session_minutes(now.time()) / interval_minutes.max(1);
    Ok((to_yyyymmdd(now.date()), slot))
}

/// The volume a whole session would trade at the pace of `volume` so far after `elapsed`
/// minutes of trading.
pub fn volume_pace(volume: f64, elapsed_minutes: u32) -> f64 {
    let minutes = f64::from(elapsed_minutes.clamp(MIN_PACE_MINUTES, 240));
    volume * 240.0 / minutes
}

/// The day's partial bars, by code, as the check reads them.
pub(crate) struct Live {
    day: u32,
    /// The last trading day before `day`: cached bars must reach it for the day's change
    /// and the 20-day figures to be today's.
    previous: Option<u32>,
    bars: HashMap<String, (Bar, String)>,
}

impl Live {
    pub(crate) fn has(&self, code: &str) -> bool {
        self.bars.contains_key(code)
    }

    pub(crate) fn at(&self, code: &str) -> Option<String> {
        self.bars.get(code).map(|(_, at)| at.clone())
    }

    /// The cached bars before today and the partial bar. When the cache stops short of the
    /// previous trading day the partial bar stands alone: the price rules, stop and target
    /// still read it, while the day's change and the 20-day figures say they lack bars
    /// rather than compare with an older close.
    pub(crate) fn bars_for(&self, code: &str, cached: &[Bar]) -> Option<Vec<Bar>> {
        let (bar, _) = self.bars.get(code)?;
        let before: Vec<Bar> = cached
            .iter()
            .take_while(|b| b.date < self.day)
            .copied()
            .collect();
        let reaches = before.last().map(|b| b.date) == self.previous;
        let mut out = if reaches { before } else { Vec::new() };
        out.push(*bar);
        Some(out)
    }
}

/// Builds the day's partial bars from a snapshot taken at `now` (Beijing): quotes of
/// another day (a stock not traded yet, a suspended one, a stale source) are left out.
fn live_bars(
    snapshot: &QuoteSnapshot,
    now: NaiveDateTime,
    calendar: &TradingCalendar,
) -> (Live, Vec<String>) {
    let day = to_yyyymmdd(now.date());
    let mut bars = HashMap::new();
    let mut not_live = Vec::new();
    for q in &snapshot.quotes {
        match (q.partial_bar(), q.at()) {
            (Some(p), Some(at)) if p.date == day => {
                let pace = volume_pace(p.volume as f64, elapsed_session_minutes(at.time()));
                let when = at.format("%Y-%m-%d %H:%M").to_string();
                bars.insert(q.code.clone(), (p.engine_bar(Some(pace)), when));
            }
            _ => not_live.push(q.code.clone()),
        }
    }
    let live = Live {
        day,
        previous: calendar.previous_trading_day(day),
        bars,
    };
    (live, not_live)
}

/// Why no intraday check ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum IntradaySkip {
    /// Not trading now (the phase says where in the day it is).
    OutsideSession { phase: SessionPhase },
    /// Live quotes are off (offline).
    Offline,
    /// No enabled rule and no holding with a stop or target.
    NothingToCheck,
    /// This slot was checked already (by this process or another).
    NotDue { slot: u32 },
}

/// One intraday check that ran.
#[derive(Debug, Clone, Serialize)]
pub struct IntradayRun {
    /// Beijing `YYYY-MM-DD HH:MM` of the check.
    pub at: String,
    pub slot: u32,
    pub report: AlertCheckReport,
    pub deliveries: Vec<Delivery>,
    pub damaged_channels: Vec<DamagedChannel>,
    /// Stocks quoted.
    pub quoted: Vec<String>,
    /// Quoted but with no trade today yet (or a quote of another day): not evaluated.
    pub not_live: Vec<String>,
    /// Codes no quote source knew.
    pub unknown: Vec<String>,
    /// Quote sources that failed before one answered.
    pub failed_sources: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum IntradayOutcome {
    Skipped { skip: IntradaySkip },
    Ran { run: Box<IntradayRun> },
}

/// Every stock a check would evaluate: each enabled rule's targets and every holding with
/// a stop or target, ascending.
pub async fn watched_codes(
    md: &MarketData,
    store: &AlertStore,
) -> Result<Vec<String>, AlertsError> {
    let market = |e: wyckoff_market::PortfolioError| AlertsError::Market(e.to_string());
    let rules: Vec<_> = store
        .rules()
        .await?
        .into_iter()
        .filter(|r| r.enabled)
        .collect();
    let positions = md.portfolio().view().await.map_err(market)?.positions;
    let mut codes = BTreeSet::new();
    for rule in &rules {
        match &rule.target {
            AlertTarget::Stock { code } => {
                codes.insert(code.clone());
            }
            AlertTarget::Portfolio => codes.extend(positions.iter().map(|p| p.code.clone())),
            AlertTarget::Watchlist => {
                let list = WatchlistStore::new(md.pool().clone())
                    .list()
                    .await
                    .map_err(|e| AlertsError::Market(e.to_string()))?;
                codes.extend(list.into_iter().map(|w| w.code));
            }
        }
    }
    codes.extend(
        positions
            .iter()
            .filter(|p| p.stop_loss.is_some() || p.target_price.is_some())
            .map(|p| p.code.clone()),
    );
    Ok(codes.into_iter().collect())
}

/// Claims `(day, slot)` for this process; false when another check has it.
async fn claim(
    md: &MarketData,
    day: u32,
    slot: u32,
    interval: u32,
    now: DateTime<Utc>,
) -> Result<bool, AlertsError> {
    let done = sqlx::query(
        "INSERT INTO alert_intraday_slots (day, slot, interval_m, claimed_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    )
    .bind(iso(day))
    .bind(i64::from(slot))
    .bind(i64::from(interval))
    .bind(now.to_rfc3339())
    .execute(md.pool())
    .await
    .map_err(|e| AlertsError::Store(e.into()))?;
    Ok(done.rows_affected() == 1)
}

/// The intraday check due at `now`: skipped outside the session, offline, with nothing
/// to check or when this slot was checked already; otherwise the watched stocks are
/// quoted, evaluated on their partial bars, what fires is recorded (intraday, with its
/// quote time) and queued for every channel taking alerts, and what is due is sent.
pub async fn check_intraday(
    md: &MarketData,
    store: &AlertStore,
    outbox: &Outbox,
    quotes: &QuoteService,
    now: DateTime<Utc>,
    interval_minutes: u32,
) -> Result<IntradayOutcome, AlertsError> {
    let skipped = |skip| Ok(IntradayOutcome::Skipped { skip });
    let local = to_beijing(now);
    let (calendar, _) = md
        .current_calendar()
        .await
        .map_err(|e| AlertsError::Market(e.to_string()))?;
    let (day, slot) = match intraday_slot(local, &calendar, interval_minutes) {
        Ok(s) => s,
        Err(phase) => return skipped(IntradaySkip::OutsideSession { phase }),
    };
    if quotes.is_offline() {
        return skipped(IntradaySkip::Offline);
    }
    let codes = watched_codes(md, store).await?;
    if codes.is_empty() {
        return skipped(IntradaySkip::NothingToCheck);
    }
    if !claim(md, day, slot, interval_minutes.max(1), now).await? {
        return skipped(IntradaySkip::NotDue { slot });
    }
    let parsed: Vec<StockCode> = codes
        .iter()
        .filter_map(|c| StockCode::parse(c).ok())
        .collect();
    let snapshot = quotes
        .snapshot(&parsed)
        .await
        .map_err(|e| AlertsError::Market(e.to_string()))?;
    let run = check_snapshot(md, store, outbox, &snapshot, now, &calendar).await?;
    Ok(IntradayOutcome::Ran {
        run: Box::new(IntradayRun { slot, ..run }),
    })
}

/// Evaluates the rules on a snapshot taken at `now`, records what fired (intraday, with
/// its quote time), queues it for every channel taking alerts and sends what is due: the
/// part of [`check_intraday`] after the quotes are in (the benchmark times it with the
/// parsing, network excluded).
pub async fn check_snapshot(
    md: &MarketData,
    store: &AlertStore,
    outbox: &Outbox,
    snapshot: &QuoteSnapshot,
    now: DateTime<Utc>,
    calendar: &TradingCalendar,
) -> Result<IntradayRun, AlertsError> {
    let local = to_beijing(now);
    let (live, not_live) = live_bars(snapshot, local, calendar);
    let (channels, damaged_channels) = outbox
        .channels_for(PushEvent::Alerts)
        .await
        .map_err(|e| AlertsError::Push(e.to_string()))?;
    let mut report = crate::check::check_for(md, store, &channels, None, now, Some(&live)).await?;
    let deliveries = crate::deliver::deliver(store, outbox, Some(&mut report), now).await?;
    tracing::info!(
        quoted = snapshot.quotes.len(),
        fired = report.fired.len(),
        "intraday alerts checked"
    );
    Ok(IntradayRun {
        at: local.format("%Y-%m-%d %H:%M").to_string(),
        slot: 0,
        report,
        deliveries,
        damaged_channels,
        quoted: snapshot.quotes.iter().map(|q| q.code.clone()).collect(),
        not_live,
        unknown: snapshot.unknown.clone(),
        failed_sources: snapshot
            .failed
            .iter()
            .map(|f| format!("{}: {}", f.source, f.error))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_market::date::from_yyyymmdd;

    fn at(d: u32, h: u32, m: u32) -> NaiveDateTime {
        from_yyyymmdd(d).unwrap().and_hms_opt(h, m, 0).unwrap()
    }

    #[test]
    fn a_check_is_due_only_in_session_hours_of_trading_days_once_a_slot() {
        let cal = wyckoff_market::bundled::calendar().unwrap();
        use SessionPhase::*;
        let cases = [
            (at(20200617, 9, 29), 5, Err(PreOpen)),
            (at(20200617, 9, 30), 5, Ok((20200617, 0))),
            (at(20200617, 9, 34), 5, Ok((20200617, 0))),
            (at(20200617, 9, 35), 5, Ok((20200617, 1))),
            (at(20200617, 10, 42), 5, Ok((20200617, 14))),
            (at(20200617, 10, 42), 15, Ok((20200617, 4))),
            (at(20200617, 12, 0), 5, Err(Lunch)),
            (at(20200617, 13, 0), 5, Ok((20200617, 24))),
            (at(20200617, 14, 59), 5, Ok((20200617, 47))),
            (at(20200617, 15, 0), 5, Err(AfterClose)),
            // Saturday, and the Dragon Boat Festival on a Thursday
            (at(20200620, 10, 42), 5, Err(Closed)),
            (at(20200625, 10, 42), 5, Err(Closed)),
        ];
        for (now, interval, want) in cases {
            assert_eq!(
                intraday_slot(now, &cal, interval),
                want,
                "{now} every {interval}"
            );
        }
    }

    #[test]
    fn volume_is_read_at_the_days_pace() {
        let cases = [
            (60.0, 60, 240.0),
            (120.0, 120, 240.0),
            (240.0, 240, 240.0),
            // the first minutes divide by the floor, not by one minute
            (10.0, 1, 160.0),
            (10.0, 0, 160.0),
        ];
        for (volume, minutes, want) in cases {
            assert_eq!(volume_pace(volume, minutes), want, "{volume} in {minutes}");
        }
    }

    fn bar(date: u32) -> Bar {
        Bar {
            date,
            open: 1.0,
            high: 1.0,
            low: 1.0,
            close: 1.0,
            volume: 1.0,
            amount: 0.0,
            turnover: None,
        }
    }

    #[test]
    fn the_partial_bar_follows_the_cached_bars_only_when_they_reach_the_day_before() {
        let live = Live {
            day: 20200617,
            previous: Some(20200616),
            bars: HashMap::from([("000001".to_owned(), (bar(20200617), "x".to_owned()))]),
        };
        // a complete bar of the same day in the cache gives way to the partial one
        let cached = [bar(20200615), bar(20200616), bar(20200617)];
        let got = live.bars_for("000001", &cached).unwrap();
        let dates: Vec<u32> = got.iter().map(|b| b.date).collect();
        assert_eq!(dates, vec![20200615, 20200616, 20200617]);
        // a cache that stops short stands the partial bar alone
        let got = live.bars_for("000001", &[bar(20200612)]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(live.bars_for("600519", &cached), None);
    }
}
