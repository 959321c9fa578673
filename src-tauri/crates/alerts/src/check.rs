//! One evaluation pass: every enabled rule on every stock it targets, plus every holding's
//! stop-loss and target price, as of a date.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tracing::Instrument;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use wyckoff_engine::alerts::{AlertInput, CHECK_BARS, Outcome, StockCheck, cooldown_blocker, cut};
use wyckoff_engine::{Bar, Holding, NameSpan, StockSeries};
use wyckoff_market::cache::BarTable;
use wyckoff_market::history::{Histories, ListStatus};
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{IndexCode, MarketData, StockCode};
use wyckoff_protocol::{
    AlertAsOfNotes, AlertCheckReport, AlertCondition, AlertTarget, SuppressedAlert,
    UnevaluatedAlert,
};

use wyckoff_push::Channel;
use wyckoff_time::iso;

use crate::store::NewFiring;
use crate::{AlertStore, AlertsError};

/// The cooldown key of the stop-loss every holding gets without a rule.
pub const STOP_LOSS_KEY: &str = "stop_loss";
/// The cooldown key of the target price every holding gets without a rule.
pub const TARGET_KEY: &str = "target";

/// The benchmark the health reads relative strength against (as `analyze_stock` does).
const BENCHMARK: &str = "sse";

/// One rule to check on one stock.
struct Job {
    rule_id: Option<i64>,
    key: String,
    condition: AlertCondition,
    cooldown_days: u32,
}

/// A stock's rules with what they are checked against.
struct Stock {
    code: String,
    name: Option<String>,
    /// The cached bars (the cooldowns count trading days on them; of a check of the latest
    /// close, the last [`Reads::tail_bars`] of a stock not held), cut at the as-of date for
    /// the rules; shared by codes written differently for the same stock.
    bars: Arc<Vec<Bar>>,
    jobs: Vec<Job>,
}

/// A holding, its stop-loss and its target.
type Held = (Holding, Option<f64>, Option<f64>);

/// Which stocks a check reads whole and which only their last bars (stock series keys,
/// each once).
#[derive(Debug, Default, PartialEq, Eq)]
struct Reads {
    whole: Vec<String>,
    tails: Vec<String>,
    /// Bars a tail holds: what the conditions read ([`CHECK_BARS`]), and one more than the
    /// longest cooldown, so every earlier firing a cooldown counts is within it.
    tail_bars: usize,
}

impl Reads {
    /// A check of the latest close (no `as_of`) reads each stock's last bars, but a held
    /// stock whole (its health reads back to its entry); a check as of a date reads every
    /// stock whole (a cooldown counts the trading days to later firings too).
    fn new<'a>(
        as_of: Option<u32>,
        max_cooldown: Option<u32>,
        held: impl Iterator<Item = StockCode>,
        checked: impl Iterator<Item = &'a StockCode>,
    ) -> Reads {
        let held: BTreeSet<String> = held.map(|c| c.symbol().key()).collect();
        let keys: BTreeSet<String> = checked.map(|c| c.symbol().key()).collect();
        let tail_bars = CHECK_BARS.max(max_cooldown.map_or(0, |c| c as usize).saturating_add(1));
        let (whole, tails) = keys
            .into_iter()
            .partition(|k| as_of.is_some() || held.contains(k));
        Reads {
            whole,
            tails,
            tail_bars,
        }
    }
}

/// Every stock's rules evaluated, stocks on every core (the engine's structure and diagnosis
/// are most of a check), off the async runtime; outcomes in the order of each stock's jobs.
async fn evaluate_all(
    stocks: Vec<Stock>,
    bench: Vec<Bar>,
    held: HashMap<String, Held>,
    as_of: Option<u32>,
) -> Result<Vec<(Stock, Vec<Outcome>)>, AlertsError> {
    tokio::task::spawn_blocking(move || {
        let bench = (!bench.is_empty()).then_some(bench.as_slice());
        stocks
            .into_par_iter()
            .map(|stock| {
                let outcomes = {
                    let holding = held.get(&stock.code);
                    let check = StockCheck::new(AlertInput {
                        code: &stock.code,
                        name: stock.name.as_deref().unwrap_or(""),
                        bars: cut(&stock.bars, as_of),
                        holding: holding.map(|(h, _, _)| h),
                        stop_loss: holding.and_then(|(_, s, _)| *s),
                        target: holding.and_then(|(_, _, t)| *t),
                        bench,
                    });
                    stock
                        .jobs
                        .iter()
                        .map(|j| check.evaluate(&j.condition))
                        .collect()
                };
                (stock, outcomes)
            })
            .collect()
    })
    .await
    .map_err(|_| AlertsError::Interrupted)
}

fn market(e: impl std::fmt::Display) -> AlertsError {
    AlertsError::Market(e.to_string())
}

/// A stock's point-in-time facts: today's name, its recorded names and delisting day, in
/// the engine's series so the engine's one reading of them applies (no bars: the check
/// keeps its own, shared).
fn facts(code: &StockCode, today: Option<String>, history: &mut Histories) -> StockSeries {
    let digits = code.digits();
    let name_history: Vec<NameSpan> = history.names.remove(digits).unwrap_or_default();
    let listing = history.listings.get(digits);
    let delist_date = listing
        .filter(|l| l.status == ListStatus::Delisted)
        .and_then(|l| l.delist_date);
    // A delisted stock has left today's list: its last recorded name stands in.
    let name = today
        .or_else(|| listing.map(|l| l.name.clone()).filter(|n| !n.is_empty()))
        .or_else(|| name_history.last().map(|s| s.name.clone()))
        .unwrap_or_default();
    StockSeries {
        code: digits.to_owned(),
        name,
        board: code.board(),
        industry: None,
        market_cap_yi: None,
        list_date: listing.and_then(|l| l.list_date),
        bars: Vec::new(),
        name_history,
        delist_date,
        cap_history: Vec::new(),
    }
}

/// What a stock is checked as on `day` (the as-of date, or the data's newest day), with
/// `newest` the data's newest day and `bar_day` its last bar by `day` (the evaluated one).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scope {
    /// Delisted before `day`: not checked on its old last bar.
    Delisted,
    /// Checked under `name` (`None`: no name known); `from_today`: a past day that no
    /// recorded name covers, so today's name (and ST status) stood in.
    Checked {
        name: Option<String>,
        from_today: bool,
    },
}

fn scope(s: &StockSeries, day: Option<u32>, newest: Option<u32>, bar_day: Option<u32>) -> Scope {
    let Some(day) = day else {
        // No bar anywhere in the cache: today's name, nothing to read as of a day.
        return Scope::Checked {
            name: Some(s.name.clone()).filter(|n| !n.is_empty()),
            from_today: false,
        };
    };
    if !s.listed_on(day) {
        return Scope::Delisted;
    }
    let named = s.name_on(bar_day.unwrap_or(day));
    Scope::Checked {
        name: Some(named.value.to_owned()).filter(|n| !n.is_empty()),
        from_today: !named.known && newest.is_some_and(|n| day < n),
    }
}

/// The notes in words, `day` the day checked (YYYY-MM-DD).
pub(crate) fn note_lines(notes: &AlertAsOfNotes, day: &str) -> Vec<String> {
    /// Delisted codes named in the line (all are in the typed notes).
    const NAMED: usize = 10;
    let mut out = Vec::new();
    if notes.st_from_today > 0 {
        out.push(format!(
            "{} 只股票中 {} 只的名称与 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符",
            notes.stocks, notes.st_from_today
        ));
    }
    if notes.delisted > 0 {
        let mut codes = notes.delisted_codes[..notes.delisted_codes.len().min(NAMED)].join("、");
        if notes.delisted_codes.len() > NAMED {
            codes.push_str(" 等");
        }
        out.push(format!(
            "{} 只股票在 {day} 前已退市，不在当日检查范围内：{codes}",
            notes.delisted
        ));
    }
    out
}

/// The newest bar date of any cached stock: the day today's stock list stands for.
async fn newest_stock_day(md: &MarketData) -> Result<Option<u32>, AlertsError> {
    let coverage = md
        .store()
        .coverage(BarTable::Stocks)
        .await
        .map_err(market)?;
    Ok(coverage.iter().map(|c| c.last_date).max())
}

/// Evaluates every enabled rule, and every holding's stop-loss and target, over the cached daily bars
/// as of `as_of` (YYYYMMDD; `None`: each stock's latest bar), records what fired (stamped
/// `now`) and reports it with what the cooldowns held back and what could not be
/// evaluated for lack of data. Each stock is read as of the day: it fires under the name it
/// carried on the evaluated bar, and one delisted before the day is left out rather than
/// checked on its old last bar; the report's as-of notes count both, and the stocks whose
/// name on a past day had to be today's.
pub async fn check(
    md: &MarketData,
    store: &AlertStore,
    as_of: Option<u32>,
    now: DateTime<Utc>,
) -> Result<AlertCheckReport, AlertsError> {
    check_for(md, store, &[], as_of, now, None).await
}

/// [`check`], queueing what fired for each of `channels` in the same transaction that
/// records it. With `live` (an intraday check), only the stocks with a partial bar today
/// are evaluated, each on its cached bars before today and the partial bar.
pub(crate) async fn check_for(
    md: &MarketData,
    store: &AlertStore,
    channels: &[Channel],
    as_of: Option<u32>,
    now: DateTime<Utc>,
    live: Option<&crate::intraday::Live>,
) -> Result<AlertCheckReport, AlertsError> {
    let stage = tracing::info_span!(target: "wyckoff::stage", "rules");
    let rules: Vec<_> = store
        .rules()
        .await?
        .into_iter()
        .filter(|r| r.enabled)
        .collect();
    let positions = md.portfolio().view().await.map_err(market)?.positions;
    let wants_watchlist = rules.iter().any(|r| r.target == AlertTarget::Watchlist);
    let watchlist = if wants_watchlist {
        WatchlistStore::new(md.pool().clone())
            .list()
            .await
            .map_err(market)?
    } else {
        Vec::new()
    };

    // Stock → the rules to check on it, in a stable order.
    let mut jobs: BTreeMap<String, Vec<Job>> = BTreeMap::new();
    for rule in &rules {
        let codes: Vec<String> = match &rule.target {
            AlertTarget::Stock { code } => vec![code.clone()],
            AlertTarget::Watchlist => watchlist.iter().map(|w| w.code.clone()).collect(),
            AlertTarget::Portfolio => positions.iter().map(|p| p.code.clone()).collect(),
        };
        for code in codes {
            jobs.entry(code).or_default().push(Job {
                rule_id: Some(rule.id),
                key: format!("rule:{}", rule.id),
                condition: rule.condition.clone(),
                cooldown_days: rule.cooldown_days,
            });
        }
    }
    for p in positions.iter().filter(|p| p.stop_loss.is_some()) {
        jobs.entry(p.code.clone()).or_default().push(Job {
            rule_id: None,
            key: STOP_LOSS_KEY.to_owned(),
            condition: AlertCondition::StopLoss,
            cooldown_days: 1,
        });
    }
    for p in positions.iter().filter(|p| p.target_price.is_some()) {
        jobs.entry(p.code.clone()).or_default().push(Job {
            rule_id: None,
            key: TARGET_KEY.to_owned(),
            condition: AlertCondition::TargetReached,
            cooldown_days: 1,
        });
    }

    drop(stage);
    let stage = tracing::info_span!(target: "wyckoff::stage", "history");
    let wants_bench = jobs
        .values()
        .flatten()
        .any(|j| j.condition == AlertCondition::HealthChange);
    let bench: Vec<Bar> = if wants_bench {
        let key = IndexCode::parse(BENCHMARK).map_err(market)?.symbol().key();
        md.store()
            .load_bars(BarTable::Indices, &key, None)
            .await
            .map_err(market)?
            .bars
    } else {
        Vec::new()
    };
    // A holding, its stop-loss and its target.
    let held: HashMap<String, Held> = positions
        .iter()
        .map(|p| {
            let holding = Holding {
                cost: Some(p.cost_price),
                buy_dt: wyckoff_market::date::parse_date(&p.buy_dt),
            };
            (p.code.clone(), (holding, p.stop_loss, p.target_price))
        })
        .collect();
    let mut fired_on = store.fired_dates().await?;

    let mut report = AlertCheckReport {
        as_of: as_of.map(iso),
        data_date: None,
        rules: rules.len() as u32,
        stocks: 0,
        fired: Vec::new(),
        suppressed: Vec::new(),
        unevaluated: Vec::new(),
        as_of_notes: AlertAsOfNotes::default(),
        notes: Vec::new(),
    };
    // Each stock's facts as of the day checked: the as-of date, or the data's newest day
    // (today's list stands for it, so its names are that day's own).
    let newest = newest_stock_day(md).await?;
    let day = as_of.or(newest);
    let mut history = md.history().load().await.map_err(market)?;
    // Every checked stock's bars in a few queries, not one a stock.
    let parsed: Vec<Option<StockCode>> = jobs.keys().map(|c| StockCode::parse(c).ok()).collect();
    let max_cooldown = jobs.values().flatten().map(|j| j.cooldown_days).max();
    let reads = Reads::new(
        as_of,
        max_cooldown,
        held.keys().filter_map(|c| StockCode::parse(c).ok()),
        parsed.iter().flatten(),
    );
    drop(stage);
    let stage = tracing::info_span!(target: "wyckoff::stage", "bars");
    let mut loaded: HashMap<String, Arc<Vec<Bar>>> = HashMap::with_capacity(parsed.len());
    if !reads.whole.is_empty() {
        let rows = md
            .store()
            .load_many(BarTable::Stocks, &reads.whole, None)
            .await
            .map_err(market)?;
        loaded.extend(rows.into_iter().map(|(key, l)| (key, Arc::new(l.bars))));
    }
    if !reads.tails.is_empty() {
        let rows = md
            .stock_tails(&reads.tails, reads.tail_bars)
            .await
            .map_err(market)?;
        loaded.extend(rows.into_iter().map(|(key, l)| (key, Arc::new(l.bars))));
    }
    drop(stage);
    let stage = tracing::info_span!(target: "wyckoff::stage", "facts");
    let mut notes = AlertAsOfNotes::default();
    let mut stocks: Vec<Stock> = Vec::with_capacity(jobs.len());
    for ((code, jobs), parsed) in jobs.into_iter().zip(parsed) {
        if live.is_some_and(|l| !l.has(&code)) {
            continue;
        }
        // A stored code that no longer parses has no bars to read.
        let (bars, name) = match parsed {
            Some(c) => {
                let cached: Arc<Vec<Bar>> =
                    loaded.get(&c.symbol().key()).cloned().unwrap_or_default();
                let bars = match live.and_then(|l| l.bars_for(&code, &cached)) {
                    Some(with_today) => Arc::new(with_today),
                    None => cached,
                };
                let s = facts(&c, md.stock_info(&c).map(|i| i.name), &mut history);
                let bar_day = day.and_then(|d| cut(&bars, Some(d)).last().map(|b| b.date));
                match scope(&s, day, newest, bar_day) {
                    Scope::Delisted => {
                        notes.delisted += 1;
                        notes.delisted_codes.push(code);
                        continue;
                    }
                    Scope::Checked { name, from_today } => {
                        notes.st_from_today += u32::from(from_today);
                        (bars, name)
                    }
                }
            }
            None => (Arc::default(), None),
        };
        stocks.push(Stock {
            code,
            name,
            bars,
            jobs,
        });
    }
    notes.stocks = stocks.len() as u32;
    report.stocks = notes.stocks;
    report.notes = note_lines(&notes, &day.map(iso).unwrap_or_default());
    report.as_of_notes = notes;
    drop(stage);
    let evaluated = evaluate_all(stocks, bench, held, as_of)
        .instrument(tracing::info_span!(target: "wyckoff::stage", "evaluate"))
        .await?;

    let mut data_date: Option<u32> = None;
    // What fired, recorded together after the loop (one transaction).
    let mut firings: Vec<(NewFiring, u32)> = Vec::new();
    for (stock, outcomes) in evaluated {
        let Stock {
            code,
            name,
            bars,
            jobs,
        } = stock;
        let dates: Vec<u32> = bars.iter().map(|b| b.date).collect();
        for (job, outcome) in jobs.into_iter().zip(outcomes) {
            match outcome {
                Outcome::Missing(missing) => report.unevaluated.push(UnevaluatedAlert {
                    rule_id: job.rule_id,
                    code: code.clone(),
                    missing,
                }),
                Outcome::Quiet { bar_date } => {
                    data_date = data_date.max(Some(bar_date));
                }
                Outcome::Fired { bar_date, figures } => {
                    data_date = data_date.max(Some(bar_date));
                    let key = (job.key.clone(), code.clone());
                    let earlier = fired_on.get(&key).map(Vec::as_slice).unwrap_or(&[]);
                    if let Some(blocker) =
                        cooldown_blocker(&dates, bar_date, earlier, job.cooldown_days)
                    {
                        report.suppressed.push(SuppressedAlert {
                            rule_id: job.rule_id,
                            code: code.clone(),
                            bar_date: iso(bar_date),
                            fired_on: iso(blocker),
                            cooldown_days: job.cooldown_days,
                        });
                        continue;
                    }
                    fired_on.entry(key).or_default().push(bar_date);
                    firings.push((
                        NewFiring {
                            rule_id: job.rule_id,
                            rule_key: job.key,
                            code: code.clone(),
                            name: name.clone(),
                            bar_date,
                            condition: job.condition,
                            figures,
                            intraday_at: live.and_then(|l| l.at(&code)),
                        },
                        job.cooldown_days,
                    ));
                }
            }
        }
    }
    let cooldowns: Vec<u32> = firings.iter().map(|(_, c)| *c).collect();
    let recorded = store
        .record_all(firings.into_iter().map(|(f, _)| f).collect(), channels, now)
        .instrument(tracing::info_span!(target: "wyckoff::stage", "record"))
        .await?;
    for ((firing, alert), cooldown_days) in recorded.into_iter().zip(cooldowns) {
        match alert {
            Some(alert) => report.fired.push(alert),
            // Another check recorded it a moment ago.
            None => report.suppressed.push(SuppressedAlert {
                rule_id: firing.rule_id,
                code: firing.code,
                bar_date: iso(firing.bar_date),
                fired_on: iso(firing.bar_date),
                cooldown_days,
            }),
        }
    }
    report.data_date = data_date.map(iso);
    tracing::info!(
        rules = report.rules,
        stocks = report.stocks,
        fired = report.fired.len(),
        suppressed = report.suppressed.len(),
        unevaluated = report.unevaluated.len(),
        names_from_today = report.as_of_notes.st_from_today,
        delisted = report.as_of_notes.delisted,
        "alerts checked"
    );
    Ok(report)
}

/// Whether a check has anything to evaluate: an enabled rule, or a holding with a stop or
/// a target.
pub async fn has_work(md: &MarketData, store: &AlertStore) -> Result<bool, AlertsError> {
    if store.rules().await?.iter().any(|r| r.enabled) {
        return Ok(true);
    }
    let positions = md.portfolio().view().await.map_err(market)?.positions;
    Ok(positions
        .iter()
        .any(|p| p.stop_loss.is_some() || p.target_price.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_engine::Board;

    fn series(history: &[(u32, &str)], delist: Option<u32>) -> StockSeries {
        StockSeries {
            code: "000005".into(),
            name: "ST星源".into(),
            board: Board::Main,
            industry: None,
            market_cap_yi: None,
            list_date: None,
            bars: Vec::new(),
            name_history: history
                .iter()
                .map(|&(from, name)| NameSpan {
                    from,
                    name: name.into(),
                })
                .collect(),
            delist_date: delist,
            cap_history: Vec::new(),
        }
    }

    fn checked(name: &str, from_today: bool) -> Scope {
        Scope::Checked {
            name: Some(name.into()),
            from_today,
        }
    }

    #[test]
    fn a_stock_is_checked_under_the_name_of_its_bar_and_left_out_once_delisted() {
        let named: &[(u32, &str)] = &[(19900101, "世纪星源"), (20210501, "ST星源")];
        const NEWEST: Option<u32> = Some(20260105);
        // (history, delisting, day, bar day, scope)
        type Case<'a> = (&'a [(u32, &'a str)], Option<u32>, u32, u32, Scope);
        let cases: Vec<Case<'_>> = vec![
            // a past day with history: the name then
            (named, None, 20190116, 20190116, checked("世纪星源", false)),
            (named, None, 20220104, 20220104, checked("ST星源", false)),
            // the name of the evaluated bar, not of a later day without one
            (named, None, 20210506, 20210430, checked("世纪星源", false)),
            // no history covering the day: today's name stands in, counted
            (&[], None, 20190116, 20190116, checked("ST星源", true)),
            (
                &[(20200101, "世纪星源")],
                None,
                20190116,
                20190116,
                checked("ST星源", true),
            ),
            // the newest day (or after it): today's name is that day's own
            (&[], None, 20260105, 20260105, checked("ST星源", false)),
            (&[], None, 20260301, 20260105, checked("ST星源", false)),
            // delisted: checked up to its last day, left out after it
            (
                named,
                Some(20190125),
                20190125,
                20190125,
                checked("世纪星源", false),
            ),
            (named, Some(20190125), 20190128, 20190125, Scope::Delisted),
            (&[], Some(20190125), 20260105, 20190125, Scope::Delisted),
        ];
        for (history, delist, day, bar_day, want) in cases {
            let s = series(history, delist);
            assert_eq!(
                scope(&s, Some(day), NEWEST, Some(bar_day)),
                want,
                "{history:?} delisted {delist:?} on {day} (bar {bar_day})"
            );
        }
        // An empty cache: today's name, no day to read anything as of.
        assert_eq!(
            scope(&series(named, Some(20190125)), None, None, None),
            checked("ST星源", false)
        );
    }

    #[test]
    fn the_latest_close_reads_tails_but_a_holding_or_an_as_of_date_reads_whole() {
        let code = |c: &str| StockCode::parse(c).unwrap();
        let checked = [code("600000"), code("000001"), code("600000")];
        let key = |c: &str| code(c).symbol().key();
        // (as of, longest cooldown, held, whole, tails, tail bars)
        type Case<'a> = (
            Option<u32>,
            Option<u32>,
            &'a [&'a str],
            Vec<String>,
            Vec<String>,
            usize,
        );
        let cases: Vec<Case<'_>> = vec![
            (
                None,
                None,
                &[],
                vec![],
                vec![key("000001"), key("600000")],
                CHECK_BARS,
            ),
            (
                None,
                Some(1),
                &["600000"],
                vec![key("600000")],
                vec![key("000001")],
                CHECK_BARS,
            ),
            (
                None,
                Some(CHECK_BARS as u32 - 1),
                &[],
                vec![],
                vec![key("000001"), key("600000")],
                CHECK_BARS,
            ),
            (
                None,
                Some(CHECK_BARS as u32),
                &[],
                vec![],
                vec![key("000001"), key("600000")],
                CHECK_BARS + 1,
            ),
            (
                None,
                Some(u32::MAX),
                &[],
                vec![],
                vec![key("000001"), key("600000")],
                u32::MAX as usize + 1,
            ),
            (
                Some(20240105),
                Some(1),
                &[],
                vec![key("000001"), key("600000")],
                vec![],
                CHECK_BARS,
            ),
        ];
        for (as_of, cooldown, held, whole, tails, tail_bars) in cases {
            let reads = Reads::new(
                as_of,
                cooldown,
                held.iter().map(|c| code(c)),
                checked.iter(),
            );
            assert_eq!(
                reads,
                Reads {
                    whole,
                    tails,
                    tail_bars
                },
                "{as_of:?} {cooldown:?} {held:?}"
            );
        }
    }

    /// A cooldown counted on a tail of `Reads::tail_bars` bars decides as on the whole
    /// series, whatever the earlier firing's day: on the boundary (a whole cooldown away,
    /// a day nearer), before the tail, on a day without a bar, on the evaluated day.
    #[test]
    fn a_cooldown_counted_on_the_tail_decides_as_on_the_whole_series() {
        // every other day a bar, so some days have none
        let whole: Vec<u32> = (0..900).map(|i| 20_000_000 + 2 * i).collect();
        let evaluated = *whole.last().unwrap();
        for cooldown in [
            1,
            2,
            5,
            100,
            CHECK_BARS as u32 - 1,
            CHECK_BARS as u32,
            CHECK_BARS as u32 + 1,
            600,
            899,
            900,
            2000,
        ] {
            let reads = Reads::new(None, Some(cooldown), std::iter::empty(), std::iter::empty());
            let tail = &whole[whole.len().saturating_sub(reads.tail_bars)..];
            let at = whole.len() - 1;
            let c = cooldown as usize;
            let mut earlier: Vec<u32> = vec![whole[0] - 2, whole[0], evaluated, evaluated + 2];
            for back in [
                c.saturating_sub(1),
                c,
                c + 1,
                reads.tail_bars - 1,
                reads.tail_bars,
                reads.tail_bars + 1,
            ] {
                if let Some(i) = at.checked_sub(back) {
                    earlier.push(whole[i]);
                    // the day after a bar has none
                    earlier.push(whole[i] + 1);
                }
            }
            for d in earlier {
                assert_eq!(
                    cooldown_blocker(tail, evaluated, &[d], cooldown),
                    cooldown_blocker(&whole, evaluated, &[d], cooldown),
                    "cooldown {cooldown}, fired on {d}"
                );
            }
            // several firings at once: the nearest one holds it back
            let many: Vec<u32> = whole.iter().step_by(7).copied().collect();
            assert_eq!(
                cooldown_blocker(tail, evaluated, &many, cooldown),
                cooldown_blocker(&whole, evaluated, &many, cooldown),
                "cooldown {cooldown}"
            );
        }
    }

    #[test]
    fn the_notes_say_what_fell_back_and_name_the_delisted_stocks() {
        assert_eq!(
            note_lines(&AlertAsOfNotes::default(), "2019-01-16"),
            Vec::<String>::new()
        );
        let notes = AlertAsOfNotes {
            stocks: 3,
            st_from_today: 2,
            delisted: 1,
            delisted_codes: vec!["600002".into()],
        };
        assert_eq!(
            note_lines(&notes, "2019-01-28"),
            vec![
                "3 只股票中 2 只的名称与 ST 状态取自今日名称（没有该日的历史名称），可能与当日不符"
                    .to_owned(),
                "1 只股票在 2019-01-28 前已退市，不在当日检查范围内：600002".to_owned(),
            ]
        );
        let many: Vec<String> = (0..12).map(|i| format!("6000{i:02}")).collect();
        let lines = note_lines(
            &AlertAsOfNotes {
                stocks: 0,
                st_from_today: 0,
                delisted: 12,
                delisted_codes: many,
            },
            "2019-01-28",
        );
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("12 只股票"), "{lines:?}");
        assert!(lines[0].ends_with("600009 等"), "{lines:?}");
        assert!(!lines[0].contains("600010"), "{lines:?}");
    }
}
