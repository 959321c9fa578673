//! Live quotes a front end asks of the desk (`wyckoff quote`, the stock page's partial
//! candle) and the intraday alerts check the desk's tick runs during the session.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use chrono::{DateTime, Utc};
use serde::Serialize;
use wyckoff_alerts::AlertsError;
use wyckoff_alerts::intraday;
use wyckoff_market::quote::{QuoteConfig, QuoteService, parse_codes};
use wyckoff_market::quote_session::session_phase;

use crate::Desk;

pub use wyckoff_alerts::intraday::{
    DEFAULT_INTERVAL_MINUTES, IntradayOutcome, IntradayRun, IntradaySkip, volume_pace,
};
pub use wyckoff_market::quote::{PartialBar, Quote, QuoteAttempt, QuoteError, QuoteSnapshot};
pub use wyckoff_market::quote_session::SessionPhase;

/// One stock's live quote as the stock page draws it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LiveQuote {
    pub quote: Quote,
    /// The day's bar so far; `None` before the stock's first trade of the day.
    pub partial: Option<PartialBar>,
    /// Where the exchange's day is now (Beijing, by the trading calendar).
    pub phase: SessionPhase,
    /// The session is under way today (09:30–15:00 of a trading day, lunch included) and
    /// the partial bar is today's: draw it as today's candle.
    pub live: bool,
}

/// A snapshot with each stock's partial bar, for `wyckoff quote`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuoteView {
    pub phase: SessionPhase,
    pub quotes: Vec<LiveQuote>,
    pub unknown: Vec<String>,
    pub failed: Vec<QuoteAttempt>,
    pub cached: u32,
}

/// The variable that overrides the settings' interval for one process (tests, a one-off
/// daemon run).
pub const INTRADAY_MINUTES_VAR: &str = "WYCKOFF_INTRADAY_MINUTES";

/// Minutes between intraday alert checks: `WYCKOFF_INTRADAY_MINUTES` when set to a
/// whole number of minutes in the settings' range, else the settings'
/// `intraday_alert_minutes`. A malformed override is logged and ignored.
pub fn intraday_interval(setting_minutes: i32, env: Option<&str>) -> u32 {
    let (min, max) = wyckoff_config::settings::INTRADAY_ALERT_MINUTES_RANGE;
    let allowed = |m: i32| (min..=max).contains(&m);
    if let Some(text) = env.map(str::trim).filter(|t| !t.is_empty()) {
        match text.parse::<i32>() {
            Ok(m) if allowed(m) => return m.unsigned_abs(),
            _ => tracing::warn!(
                "{INTRADAY_MINUTES_VAR}={text:?} is not a whole number of minutes from {min} to {max}; using the setting ({setting_minutes})"
            ),
        }
    }
    if allowed(setting_minutes) {
        setting_minutes.unsigned_abs()
    } else {
        DEFAULT_INTERVAL_MINUTES
    }
}

/// One quote service per data home and process: its HTTP client is built once.
fn service(desk: &Desk) -> Arc<QuoteService> {
    static SERVICES: OnceLock<Mutex<HashMap<PathBuf, Arc<QuoteService>>>> = OnceLock::new();
    let key = desk.home().db_path();
    let make = || {
        Arc::new(QuoteService::new(
            desk.market().pool().clone(),
            QuoteConfig::from_env(),
            desk.clock().clone(),
        ))
    };
    match SERVICES.get_or_init(Default::default).lock() {
        Ok(mut map) => map.entry(key).or_insert_with(make).clone(),
        Err(_) => make(),
    }
}

impl Desk {
    /// Live quotes for `codes` (six digits, or with `.SH`/`.SZ`/`.BJ`), each with the
    /// day's partial bar; unknown codes are listed, not an error. Errors on a bad code,
    /// offline, or when no quote source answered.
    pub async fn quotes(&self, codes: &[String]) -> Result<QuoteView, QuoteError> {
        let parsed = parse_codes(codes)?;
        let snapshot = service(self).snapshot(&parsed).await?;
        let now = self.clock().now_beijing();
        let phase = session_phase(now, self.market().calendar());
        let today = wyckoff_market::date::to_yyyymmdd(now.date());
        let under_way = matches!(
            phase,
            SessionPhase::Morning | SessionPhase::Lunch | SessionPhase::Afternoon
        );
        let quotes = snapshot
            .quotes
            .into_iter()
            .map(|quote| {
                let partial = quote.partial_bar();
                let live = under_way && partial.as_ref().is_some_and(|p| p.date == today);
                LiveQuote {
                    quote,
                    partial,
                    phase,
                    live,
                }
            })
            .collect();
        Ok(QuoteView {
            phase,
            quotes,
            unknown: snapshot.unknown,
            failed: snapshot.failed,
            cached: snapshot.cached,
        })
    }

    /// One stock's live quote (the stock page). An unknown code is an error here.
    pub async fn live_quote(&self, code: &str) -> Result<LiveQuote, QuoteError> {
        let mut view = self.quotes(&[code.to_owned()]).await?;
        if view.quotes.is_empty() {
            return Err(QuoteError::AllFailed(vec![QuoteAttempt {
                source: "quotes".into(),
                error: format!("no quote source knows {code}"),
            }]));
        }
        Ok(view.quotes.remove(0))
    }

    /// The intraday alerts check due at `now` (the tick runs it): outside the session,
    /// offline, with nothing to check or when another process has this slot, it is
    /// skipped; otherwise what fires is recorded as intraday, queued and sent.
    pub async fn intraday_alerts(
        &self,
        now: DateTime<Utc>,
    ) -> Result<IntradayOutcome, AlertsError> {
        intraday::check_intraday(
            self.market(),
            self.alerts(),
            self.outbox(),
            &service(self),
            now,
            intraday_interval(
                self.settings().intraday_alert_minutes,
                std::env::var(INTRADAY_MINUTES_VAR).ok().as_deref(),
            ),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_the_setting_unless_a_valid_override_is_set() {
        // (setting, WYCKOFF_INTRADAY_MINUTES, minutes used)
        let table = [
            (5, None, 5),
            (15, None, 15),
            (60, Some(""), 60),
            (15, Some("1"), 1),
            (15, Some(" 30 "), 30),
            (15, Some("0"), 15),
            (15, Some("61"), 15),
            (15, Some("ten"), 15),
            (15, Some("2.5"), 15),
            // a setting that skipped validation still gives a usable interval
            (0, None, DEFAULT_INTERVAL_MINUTES),
        ];
        assert_eq!(
            i32::try_from(DEFAULT_INTERVAL_MINUTES).unwrap(),
            wyckoff_config::settings::DEFAULT_INTRADAY_ALERT_MINUTES,
            "the check's default and the settings' default are one number"
        );
        for (setting, env, want) in table {
            assert_eq!(intraday_interval(setting, env), want, "{setting} {env:?}");
        }
    }
}
