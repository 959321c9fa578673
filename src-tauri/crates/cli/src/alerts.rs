//! `wyckoff alerts …`: alert rules on a stock, the watchlist or the portfolio,
//! checked over the cached daily bars as of a date. `check` records what fired (a holding's
//! stop-loss and target price from the portfolio are checked without a rule) and prints each alert with the
//! figures that fired it and the data's date, under its data notes (`note: …`: the stocks
//! whose name on a past close was today's, the delisted ones left out). Exit status: 0 ok,
//! 1 the data home or database failed, 2 bad input (nothing stored). What fired goes to every push channel through the
//! outbox (`wyckoff push`), which `check` also drains of earlier rows that are due.

use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::Utc;
use clap::{Args, Subcommand};
use serde::Serialize;
use wyckoff_protocol::{AlertCheckReport, AlertCondition, AlertRule, AlertTarget, FiredAlert};
use wyckoff_session::Desk;
use wyckoff_session::domain::alerts::{NewRule, StoreError, deliver, describe, validate};
use wyckoff_session::domain::push::{DamagedChannel, Delivery};

use crate::market::{desk, failed, print_json, runtime};

/// `alerts check --json`: the report and what the push outbox sent.
#[derive(Debug, Serialize)]
pub(crate) struct CheckOutput {
    #[serde(flatten)]
    report: AlertCheckReport,
    deliveries: Vec<Delivery>,
    /// Stored push channels that could not be read: skipped, every other channel served.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    damaged_channels: Vec<DamagedChannel>,
}

impl From<deliver::CheckRun> for CheckOutput {
    fn from(run: deliver::CheckRun) -> Self {
        CheckOutput {
            report: run.report,
            deliveries: run.deliveries,
            damaged_channels: run.damaged_channels,
        }
    }
}

#[derive(Debug, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    command: AlertsCommand,
    /// JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum AlertsCommand {
    /// Add a rule on a stock (CODE), every watched stock (--watchlist) or every holding
    /// (--portfolio), with one condition.
    Add(AddArgs),
    /// Every rule with its id.
    List,
    /// Remove a rule (the alerts it fired stay in the history).
    Remove { id: i64 },
    /// Turn a rule back on.
    Enable { id: i64 },
    /// Keep a rule but stop checking it.
    Disable { id: i64 },
    /// Evaluate every enabled rule (and every holding's stop-loss and target) as of a close, record
    /// and print what fired.
    Check {
        /// The close to check as of (YYYY-MM-DD or YYYYMMDD); a non-trading day means the
        /// close before it. Default: each stock's newest cached bar.
        #[arg(long, value_name = "DATE")]
        as_of: Option<String>,
    },
    /// Minutes between intraday alert checks during the session (the app's and the
    /// daemon's): shows the setting, or sets it to MINUTES (1–60).
    Interval {
        #[arg(allow_negative_numbers = true)]
        minutes: Option<i32>,
    },
    /// Alerts fired so far, newest first.
    History {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).multiple(false).args(["code", "watchlist", "portfolio"])))]
#[command(group(clap::ArgGroup::new("condition").required(true).multiple(false).args([
    "price_above", "price_below", "change_above", "change_below", "volume_ratio", "event",
    "phase_change", "health_change",
])))]
struct AddArgs {
    /// A-share code: 600519, 600519.SH or sh600519.
    code: Option<String>,
    /// Every stock in the watchlist when the check runs.
    #[arg(long)]
    watchlist: bool,
    /// Every holding in the portfolio when the check runs.
    #[arg(long)]
    portfolio: bool,
    /// The close at or above this price.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    price_above: Option<String>,
    /// The close at or below this price.
    #[arg(long, value_name = "X", allow_negative_numbers = true)]
    price_below: Option<String>,
    /// The day's change at or above this percentage (5 = +5 %).
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    change_above: Option<String>,
    /// The day's change at or below this percentage (-5 = −5 %).
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    change_below: Option<String>,
    /// The day's volume at least K times the mean of the 20 bars before it.
    #[arg(long, value_name = "K", allow_negative_numbers = true)]
    volume_ratio: Option<String>,
    /// A Wyckoff event that became known on the close: any, or one named (SC, AR, ST,
    /// Spring, SOS, LPS, BC, UTAD, SOW, LPSY).
    #[arg(long, value_name = "NAME", num_args = 0..=1)]
    event: Option<Option<String>>,
    /// The engine's schematic or phase changed since the close before.
    #[arg(long)]
    phase_change: bool,
    /// The diagnosis' health changed since the close before.
    #[arg(long)]
    health_change: bool,
    /// Trading days before the rule fires again on the same stock (1: once a day).
    #[arg(long, value_name = "DAYS", default_value_t = 1)]
    cooldown: u32,
}

/// A number the user typed after `flag`, or an error naming both.
fn number(flag: &str, text: &str) -> anyhow::Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => bail!("{flag} needs a number, got '{text}'"),
    }
}

fn rule_of(a: &AddArgs) -> anyhow::Result<NewRule> {
    let target = match (&a.code, a.watchlist, a.portfolio) {
        (Some(code), false, false) => AlertTarget::Stock { code: code.clone() },
        (None, true, false) => AlertTarget::Watchlist,
        (None, false, true) => AlertTarget::Portfolio,
        _ => bail!("give one of CODE, --watchlist or --portfolio"),
    };
    let condition = if let Some(x) = &a.price_above {
        AlertCondition::PriceAbove {
            level: number("--price-above", x)?,
        }
    } else if let Some(x) = &a.price_below {
        AlertCondition::PriceBelow {
            level: number("--price-below", x)?,
        }
    } else if let Some(x) = &a.change_above {
        AlertCondition::ChangeAbove {
            pct: number("--change-above", x)?,
        }
    } else if let Some(x) = &a.change_below {
        AlertCondition::ChangeBelow {
            pct: number("--change-below", x)?,
        }
    } else if let Some(x) = &a.volume_ratio {
        AlertCondition::VolumeRatio {
            k: number("--volume-ratio", x)?,
        }
    } else if let Some(name) = &a.event {
        AlertCondition::Event {
            event: name.clone(),
        }
    } else if a.phase_change {
        AlertCondition::PhaseChange
    } else if a.health_change {
        AlertCondition::HealthChange
    } else {
        bail!(
            "give one condition: --price-above, --price-below, --change-above, --change-below, --volume-ratio, --event, --phase-change or --health-change"
        );
    };
    Ok(NewRule {
        target,
        condition,
        cooldown_days: a.cooldown,
    })
}

fn as_of(text: Option<&str>) -> anyhow::Result<Option<u32>> {
    text.map(|t| {
        wyckoff_session::domain::market::date::parse_date(t)
            .with_context(|| format!("--as-of '{t}' is not a date: use YYYY-MM-DD or YYYYMMDD"))
    })
    .transpose()
}

/// `alerts interval --json`.
#[derive(Debug, Serialize)]
struct IntervalView {
    settings_file: String,
    /// The setting after this command.
    intraday_alert_minutes: i32,
    /// The setting before it, when this command changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    previous: Option<i32>,
    /// The minutes a check started from this environment uses (the override wins).
    in_effect: u32,
    /// `WYCKOFF_INTRADAY_MINUTES` as set here, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    env_override: Option<String>,
}

/// Shows or sets the intraday interval in the settings file the app reads too. An
/// out-of-range value is refused and the file is left as it was.
fn interval(minutes: Option<i32>, json: bool) -> anyhow::Result<ExitCode> {
    use wyckoff_config::settings;
    use wyckoff_session::desk_quotes::{INTRADAY_MINUTES_VAR, intraday_interval};
    let path = wyckoff_config::DataHome::from_env().settings_path();
    let (current, _notes) = settings::load(&path)?;
    let mut next = current.clone();
    if let Some(m) = minutes {
        next.intraday_alert_minutes = m;
        next.validate()?;
        if next != current {
            settings::save(&path, &next)?;
        }
    }
    let env_override = std::env::var(INTRADAY_MINUTES_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let view = IntervalView {
        settings_file: path.display().to_string(),
        intraday_alert_minutes: next.intraday_alert_minutes,
        previous: (next.intraday_alert_minutes != current.intraday_alert_minutes)
            .then_some(current.intraday_alert_minutes),
        in_effect: intraday_interval(next.intraday_alert_minutes, env_override.as_deref()),
        env_override,
    };
    if json {
        print_json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    let m = view.intraday_alert_minutes;
    match view.previous {
        Some(p) => println!(
            "intraday alerts: checked every {m} minute(s) during the session (was {p}); a running daemon takes it when restarted"
        ),
        None => println!("intraday alerts: checked every {m} minute(s) during the session"),
    }
    if let Some(v) = &view.env_override {
        println!(
            "note: {INTRADAY_MINUTES_VAR}={v} is set here, so checks started from this environment use {} minute(s)",
            view.in_effect
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: AlertsArgs) -> anyhow::Result<ExitCode> {
    if let AlertsCommand::Interval { minutes } = &args.command {
        return interval(*minutes, args.json);
    }
    // Bad input is refused before the data home is touched.
    let new_rule = match &args.command {
        AlertsCommand::Add(a) => Some(rule_of(a)?),
        _ => None,
    };
    let as_of = match &args.command {
        AlertsCommand::Check { as_of: text } => as_of(text.as_deref())?,
        _ => None,
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let desk = match desk().await {
            Ok(desk) => desk,
            Err(e) => return Ok(failed(e)),
        };
        let result = command(&args, new_rule, as_of, &desk).await;
        desk.close().await;
        match result {
            // The user's input: exit 2, nothing stored.
            Err(e) if user_error(&e) => Err(e),
            Err(e) => Ok(failed(e)),
            Ok(code) => Ok(code),
        }
    })
}

pub(crate) fn user_error(e: &anyhow::Error) -> bool {
    e.downcast_ref::<wyckoff_session::domain::alerts::RuleError>()
        .is_some()
        || matches!(
            e.downcast_ref::<StoreError>(),
            Some(StoreError::NotFound(_))
        )
}

async fn command(
    args: &AlertsArgs,
    new_rule: Option<NewRule>,
    as_of: Option<u32>,
    desk: &Desk,
) -> anyhow::Result<ExitCode> {
    let (md, store) = (desk.market(), desk.alerts());
    let json = args.json;
    match &args.command {
        AlertsCommand::Add(_) => {
            let Some(rule) = new_rule else {
                bail!("no rule to add");
            };
            let rule = validate(md, rule)?;
            let stored = store.add_rule(&rule, Utc::now()).await?;
            if json {
                print_json(&stored)?;
            } else {
                println!("added alert rule {}: {}", stored.id, rule_line(&stored));
            }
        }
        AlertsCommand::List => {
            let rules = store.rules().await?;
            if json {
                print_json(&rules)?;
            } else if rules.is_empty() {
                println!("no alert rules (add one with `wyckoff alerts add`)");
            } else {
                for r in &rules {
                    println!("{:>4}  {}", r.id, rule_line(r));
                }
            }
        }
        AlertsCommand::Remove { id } => {
            let rule = store.rule(*id).await?;
            store.remove_rule(*id).await?;
            if json {
                print_json(&rule)?;
            } else {
                println!("removed alert rule {id}: {}", rule_line(&rule));
            }
        }
        AlertsCommand::Enable { id } | AlertsCommand::Disable { id } => {
            let on = matches!(args.command, AlertsCommand::Enable { .. });
            let rule = store.set_enabled(*id, on).await?;
            if json {
                print_json(&rule)?;
            } else {
                println!("alert rule {id}: {}", rule_line(&rule));
            }
        }
        AlertsCommand::Check { .. } => {
            let now = Utc::now();
            let checked: CheckOutput =
                deliver::check_and_push(md, store, desk.outbox(), as_of, now)
                    .await?
                    .into();
            let _output = tracing::info_span!(target: "wyckoff::stage", "output");
            if json {
                print_json(&checked)?;
            } else {
                print_check(&checked);
            }
        }
        // answered in `run`, without the desk
        AlertsCommand::Interval { .. } => {}
        AlertsCommand::History { limit } => {
            let fired = store.history(*limit).await?;
            if json {
                print_json(&fired)?;
            } else if fired.is_empty() {
                println!("no alert has fired yet");
            } else {
                for f in &fired {
                    println!("{}", fired_line(f));
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `alerts check`'s words for a check (also after `data sync`).
pub(crate) fn print_check(checked: &CheckOutput) {
    print_report(&checked.report);
    crate::push::print_damaged(&checked.damaged_channels);
    crate::push::print_deliveries(&checked.deliveries);
}

/// The check `data sync` runs after it updated bars (`None`: no rule and no holding with
/// a stop-loss or target, nothing to check); an error is the check's, the sync stands.
pub(crate) async fn after_sync(desk: &Desk) -> Option<Result<CheckOutput, String>> {
    match deliver::after_sync(desk.market(), desk.alerts(), desk.outbox(), Utc::now()).await {
        Ok(Some(run)) => Some(Ok(run.into())),
        Ok(None) => None,
        Err(e) => Some(Err(e.to_string())),
    }
}

fn target_text(t: &AlertTarget) -> String {
    match t {
        AlertTarget::Stock { code } => code.clone(),
        AlertTarget::Watchlist => "watchlist".into(),
        AlertTarget::Portfolio => "portfolio".into(),
    }
}

fn rule_line(r: &AlertRule) -> String {
    let cooldown = match r.cooldown_days {
        1 => "once a trading day".to_owned(),
        n => format!("at most once in {n} trading days"),
    };
    format!(
        "{}: {}; {cooldown}{}",
        target_text(&r.target),
        describe::condition_text(&r.condition),
        if r.enabled { "" } else { " (disabled)" }
    )
}

fn fired_line(f: &FiredAlert) -> String {
    let rule = match (f.rule_id, &f.condition) {
        (Some(id), _) => format!("rule {id}"),
        (None, AlertCondition::TargetReached) => "target".to_owned(),
        (None, _) => "stop-loss".to_owned(),
    };
    // An intraday firing says so, with the quote's time (its date is the bar's).
    let when = match &f.intraday_at {
        Some(at) => {
            let time = at
                .strip_prefix(f.bar_date.as_str())
                .map_or(at.as_str(), str::trim);
            format!(" 盘中 intraday {time}")
        }
        None => String::new(),
    };
    format!(
        "{:>4}  {}{when}  {} {}  [{rule}] {}",
        f.id,
        f.bar_date,
        f.code,
        f.name.as_deref().unwrap_or(""),
        describe::figures_text(&f.figures)
    )
}

fn print_report(r: &AlertCheckReport) {
    let date = r.data_date.as_deref().unwrap_or("no data");
    let asked = r
        .as_of
        .as_deref()
        .map_or_else(String::new, |d| format!(" (as of {d})"));
    println!(
        "checked {} rule(s) on {} stock(s){asked}; data as of {date}: {} fired",
        r.rules,
        r.stocks,
        r.fired.len()
    );
    // What the check read from today's data, and the delisted stocks it left out.
    for note in &r.notes {
        println!("note: {note}");
    }
    for f in &r.fired {
        println!("{}", fired_line(f));
    }
    for s in &r.suppressed {
        let rule = s
            .rule_id
            .map_or_else(|| "stop-loss/target".to_owned(), |id| format!("rule {id}"));
        println!(
            "      {}  {}  [{rule}] held back: fired on {} (cooldown {} trading day(s))",
            s.bar_date, s.code, s.fired_on, s.cooldown_days
        );
    }
    for u in &r.unevaluated {
        let rule = u
            .rule_id
            .map_or_else(|| "stop-loss/target".to_owned(), |id| format!("rule {id}"));
        println!(
            "      {}  [{rule}] not evaluated: {}",
            u.code,
            describe::missing_text(&u.missing)
        );
    }
}
