//! One evaluation pass: every enabled rule on every stock it targets, plus every holding's
//! stop-loss and target price, as of a date.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rayon::prelude::*;
use wyckoff_engine::alerts::{AlertInput, Outcome, StockCheck, cooldown_blocker, cut};
use wyckoff_engine::{Bar, Holding};
use wyckoff_market::cache::BarTable;
use wyckoff_market::watchlist::WatchlistStore;
use wyckoff_market::{IndexCode, MarketData, StockCode};
use wyckoff_protocol::{
    AlertCheckReport, AlertCondition, AlertTarget, SuppressedAlert, UnevaluatedAlert,
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
    /// All cached bars (the cooldowns count trading days on them), cut at the as-of date
    /// for the rules; shared by codes written differently for the same stock.
    bars: Arc<Vec<Bar>>,
    jobs: Vec<Job>,
}

/// A holding, its stop-loss and its target.
type Held = (Holding, Option<f64>, Option<f64>);

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

/// Evaluates every enabled rule, and every holding's stop-loss and target, over the cached daily bars
/// as of `as_of` (YYYYMMDD; `None`: each stock's latest bar), records what fired (stamped
/// `now`) and reports it with what the cooldowns held back and what could not be
/// evaluated for lack of data.
pub async fn check(
    md: &MarketData,
    store: &AlertStore,
    as_of: Option<u32>,
    now: DateTime<Utc>,
) -> Result<AlertCheckReport, AlertsError> {
    check_for(md, store, &[], as_of, now).await
}

/// [`check`], queueing what fired for each of `channels` in the same transaction that
/// records it.
pub(crate) async fn check_for(
    md: &MarketData,
    store: &AlertStore,
    channels: &[Channel],
    as_of: Option<u32>,
    now: DateTime<Utc>,
) -> Result<AlertCheckReport, AlertsError> {
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
        stocks: jobs.len() as u32,
        fired: Vec::new(),
        suppressed: Vec::new(),
        unevaluated: Vec::new(),
    };
    // Every checked stock's bars in a few queries, not one a stock.
    let parsed: Vec<Option<StockCode>> = jobs.keys().map(|c| StockCode::parse(c).ok()).collect();
    let keys: Vec<String> = parsed.iter().flatten().map(|c| c.symbol().key()).collect();
    let loaded: HashMap<String, Arc<Vec<Bar>>> = md
        .store()
        .load_many(BarTable::Stocks, &keys, None)
        .await
        .map_err(market)?
        .into_iter()
        .map(|(key, l)| (key, Arc::new(l.bars)))
        .collect();
    let stocks: Vec<Stock> = jobs
        .into_iter()
        .zip(parsed)
        .map(|((code, jobs), parsed)| {
            // A stored code that no longer parses has no bars to read.
            let (bars, name) = match parsed {
                Some(c) => (
                    loaded.get(&c.symbol().key()).cloned().unwrap_or_default(),
                    md.stock_info(&c).map(|i| i.name),
                ),
                None => (Arc::default(), None),
            };
            Stock {
                code,
                name,
                bars,
                jobs,
            }
        })
        .collect();
    let evaluated = evaluate_all(stocks, bench, held, as_of).await?;

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
