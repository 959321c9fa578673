//! `wyckoff portfolio`: the account ledger — positions derived from its entries with
//! realised P/L and the cash line, `fill` (record a buy or sell; fees by the backtest's
//! rules unless given), `import FILE` (a broker 交割单 CSV: all rows or none), `cash in|out
//! AMOUNT` (a 银证转账), `value` (daily account value at the cached unadjusted closes:
//! cash, holdings, NAV, the day's P/L, the time-weighted return and drawdown), `review`
//! (each sale 5/10/20 trading days on, and the engine's exit signal at the time) and
//! `levels` (a holding's stop-loss and target price, which the alerts check watches).
//! Exit status: 0 ok, 1 failure, 2 bad input.

use std::process::ExitCode;

use anyhow::Context;
use wyckoff_session::CashDirection;
use wyckoff_session::Desk;
use wyckoff_session::desk_ledger_closes::{
    InstrumentSyncOutcome, InstrumentSyncStatus, LineInstrument as Instrument, Valuation,
};
use wyckoff_session::domain::journal::JournalSummary;
use wyckoff_session::domain::journal::money::{
    fmt_fen, fmt_price, parse_fen, parse_price, price_from_f64,
};
use wyckoff_session::domain::journal::{
    AfterSale, Difference, DifferenceKind, Fees, ImportOutcome, JournalError, JournalReport,
    NewFill, STATEMENT_MAX_BYTES, Side, Source,
};

use crate::market::{EXIT_BAD_INPUT, desk, failed, print_json, runtime};

#[derive(Debug, clap::Args)]
pub struct PortfolioArgs {
    #[command(subcommand)]
    pub command: Option<PortfolioCommand>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FillSide {
    Buy,
    Sell,
}

/// Which way a bank transfer goes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum CashDir {
    /// Bank → broker (also an opening balance).
    In,
    /// Broker → bank.
    Out,
}

#[derive(Debug, clap::Subcommand)]
pub enum PortfolioCommand {
    /// Record a bank transfer (银证转账): `wyckoff portfolio cash in 100000 --date
    /// 2019-01-02`. The cash line, the NAV and the return count it.
    Cash {
        direction: CashDir,
        /// Yuan, up to 2 decimals.
        amount: String,
        /// YYYY-MM-DD or YYYYMMDD (default today, Beijing time).
        #[arg(long)]
        date: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Record a fill: `wyckoff portfolio fill buy 600519 --shares 100 --price 1700.5`.
    Fill {
        side: FillSide,
        code: String,
        #[arg(long)]
        shares: i64,
        /// Yuan, up to 6 decimals.
        #[arg(long)]
        price: String,
        /// YYYY-MM-DD or YYYYMMDD (default today, Beijing time).
        #[arg(long)]
        date: Option<String>,
        /// Total fees in yuan (default: the backtest's fee rules).
        #[arg(long)]
        fees: Option<String>,
        /// Stock name (default: the stock list's).
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Import a broker statement (交割单 / 对账单: comma- or tab-separated, UTF-8, GBK or
    /// Excel's Unicode text). Trades, transfers, dividends, interest, taxes, bonus and
    /// rights shares and reverse repos are booked; rows already imported are not added
    /// again; a row that cannot be read or placed refuses the whole file, named by line.
    /// The statement's 股份余额 / 资金余额 are reconciled with the ledger.
    Import {
        file: std::path::PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// The fills, oldest first.
    Fills {
        #[arg(long)]
        json: bool,
    },
    /// Daily account value at the cached unadjusted closes — cash, holdings, NAV, the day's
    /// P/L and the time-weighted return (the last 20 days unless --all), then each line
    /// held at the last day: its close and that close's day, a repo at its principal, a
    /// code without a close named.
    Value {
        #[arg(long)]
        all: bool,
        /// Only the lines held at the last day (with --json: their list).
        #[arg(long)]
        holdings: bool,
        #[arg(long)]
        json: bool,
    },
    /// Bring the closes the ledger is valued at up to date for every code it has held:
    /// stocks through the daily sync, ETFs, LOFs and bonds from Eastmoney (unadjusted).
    Sync {
        #[arg(long)]
        json: bool,
    },
    /// Each sale: the stock 5 / 10 / 20 trading days later and the exit signal at the time.
    Review {
        #[arg(long)]
        json: bool,
    },
    /// A holding's stop-loss and target (take-profit) price: `wyckoff portfolio levels
    /// 600519 --stop 1500 --target 1900`. `none` clears one; a flag not given keeps its
    /// value; no flag shows them. `wyckoff alerts check` fires when a close reaches either.
    Levels {
        code: String,
        /// Yuan, or `none`.
        #[arg(long)]
        stop: Option<String>,
        /// Yuan, or `none`.
        #[arg(long)]
        target: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

/// A `--stop` / `--target` value: `Some(None)` clears it.
fn level(flag: &str, text: Option<&str>) -> Result<Option<Option<f64>>, String> {
    match text.map(str::trim) {
        None => Ok(None),
        Some(t) if t.eq_ignore_ascii_case("none") => Ok(Some(None)),
        Some(t) => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(Some(v))),
            _ => Err(format!("--{flag}「{t}」不是正数（或 none 清除）")),
        },
    }
}

async fn levels(
    md: &wyckoff_session::domain::market::MarketData,
    code: &str,
    stop: Option<&str>,
    target: Option<&str>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (stop, target) = match (level("stop", stop), level("target", target)) {
        (Ok(s), Ok(t)) => (s, t),
        (Err(e), _) | (_, Err(e)) => return Ok(bad(e)),
    };
    let Ok(parsed) = wyckoff_session::domain::market::StockCode::parse(code) else {
        return Ok(bad(format!("股票代码「{code}」无效")));
    };
    let digits = parsed.digits().to_owned();
    let portfolio = md.portfolio();
    let find = |view: wyckoff_session::domain::market::PortfolioView| {
        view.positions.into_iter().find(|p| p.code == digits)
    };
    let Some(held) = find(portfolio.view().await?) else {
        return Ok(bad(format!("{digits} 不在持仓中")));
    };
    if stop.is_some() || target.is_some() {
        let stop = stop.unwrap_or(held.stop_loss);
        let target = target.unwrap_or(held.target_price);
        match portfolio
            .set_levels(&digits, stop, target, md.clock().now())
            .await
        {
            Ok(()) => {}
            Err(wyckoff_session::domain::market::PortfolioError::Db(e)) => {
                return Ok(failed(e.into()));
            }
            Err(e) => return Ok(bad(e)),
        }
    }
    let Some(p) = find(portfolio.view().await?) else {
        return Ok(bad(format!("{digits} 不在持仓中")));
    };
    if json {
        print_json(&p)?;
    } else {
        let show = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| v.to_string());
        println!(
            "{} {} stop-loss {} · target {}",
            p.code,
            p.name,
            show(p.stop_loss),
            show(p.target_price)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn bad(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("wyckoff: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn journal_failure(e: JournalError) -> ExitCode {
    match e {
        JournalError::Invalid(_) | JournalError::Ledger(_) | JournalError::Csv(_) => {
            if let Some(rows) = e.bad_rows() {
                for r in rows {
                    eprintln!("第 {} 行: {}", r.line, r.message);
                }
            }
            bad(e)
        }
        other => failed(anyhow::Error::new(other)),
    }
}

pub fn run(a: PortfolioArgs) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async move {
        let desk = match desk().await {
            Ok(desk) => desk,
            Err(e) => return Ok(failed(e)),
        };
        let result = portfolio(&desk, a).await;
        desk.close().await;
        result
    })
}

async fn portfolio(desk: &Desk, a: PortfolioArgs) -> anyhow::Result<ExitCode> {
    let (md, store) = (desk.market(), desk.journal());
    let now = md.clock().now();
    match a.command {
        Some(PortfolioCommand::Levels {
            code,
            stop,
            target,
            json,
        }) => levels(md, &code, stop.as_deref(), target.as_deref(), json).await,
        None => {
            let s = match desk.journal_summary().await {
                Ok(s) => s,
                Err(e) => return Ok(journal_failure(e)),
            };
            if a.json {
                print_json(&s)?;
            } else {
                println!(
                    "{:<7} {:<10} {:>8} {:>12} {:>14}  since",
                    "code", "name", "shares", "avg cost", "cost basis"
                );
                for p in &s.positions {
                    println!(
                        "{:<7} {:<10} {:>8} {:>12} {:>14}  {}",
                        p.code,
                        p.name,
                        p.shares,
                        price_from_f64(p.avg_cost)
                            .map(fmt_price)
                            .unwrap_or_default(),
                        fmt_fen(p.cost_basis_fen),
                        p.since
                    );
                }
                println!(
                    "realised P/L {} · fees {} · {} fills",
                    fmt_fen(s.realised_fen),
                    fmt_fen(s.fees_fen),
                    s.fills.len()
                );
                print_cash(&s);
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Fill {
            side,
            code,
            shares,
            price,
            date,
            fees,
            name,
            json,
        }) => {
            let Some(price_e6) = parse_price(&price).filter(|p| *p > 0) else {
                return Ok(bad(format!("--price「{price}」不是正数（最多 6 位小数）")));
            };
            let date = match date {
                None => wyckoff_session::domain::market::date::to_yyyymmdd(
                    md.clock().now_beijing().date(),
                ),
                Some(d) => match wyckoff_session::domain::market::date::parse_date(&d) {
                    Some(d) => d,
                    None => return Ok(bad(format!("--date「{d}」无效，请用 YYYY-MM-DD"))),
                },
            };
            let fees = match fees {
                None => None,
                Some(f) => match parse_fen(&f).filter(|f| *f >= 0) {
                    Some(c) => Some(Fees {
                        commission_fen: c,
                        stamp_fen: 0,
                        transfer_fen: 0,
                    }),
                    None => return Ok(bad(format!("--fees「{f}」不是金额"))),
                },
            };
            let name = name.unwrap_or_else(|| {
                wyckoff_session::domain::market::StockCode::parse(&code)
                    .ok()
                    .and_then(|c| md.stock_info(&c))
                    .map(|i| i.name)
                    .unwrap_or_default()
            });
            let fill = NewFill {
                code,
                name,
                side: match side {
                    FillSide::Buy => Side::Buy,
                    FillSide::Sell => Side::Sell,
                },
                date,
                price_e6,
                shares,
                fees,
            };
            match store.record(&fill, Source::Cli, now).await {
                Ok(out) if json => print_json(&out)?,
                Ok(out) => println!("{}", out.message),
                Err(e) => return Ok(journal_failure(e)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Import { file, json }) => {
            // the size cap before reading, so a wrong file is refused, not read into memory
            if let Ok(meta) = std::fs::metadata(&file)
                && meta.len() > STATEMENT_MAX_BYTES as u64
            {
                return Ok(bad(format!(
                    "{}: {} 字节，超过交割单导入上限 {} 字节（32 MB）；请按年份分段导出",
                    file.display(),
                    meta.len(),
                    STATEMENT_MAX_BYTES
                )));
            }
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()));
            let bytes = match bytes {
                Ok(b) => b,
                Err(e) => return Ok(bad(format!("{e:#}"))),
            };
            let outcome = match store.import(&bytes, now).await {
                Ok(out) => out,
                Err(e) => return Ok(journal_failure(e)),
            };
            // the account after the import, as `portfolio value` reads it
            let report = match desk.journal_report().await {
                Ok(r) => r,
                Err(e) => return Ok(journal_failure(e)),
            };
            let reply = ImportReply::new(outcome, &report);
            if json {
                print_json(&reply)?;
            } else {
                print_import(&reply.outcome);
                println!("{}", reply.account_line(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Fills { json }) => {
            let s = match store.summary(now).await {
                Ok(s) => s,
                Err(e) => return Ok(journal_failure(e)),
            };
            if json {
                print_json(&s.fills)?;
            } else {
                for f in &s.fills {
                    println!(
                        "#{:<4} {} {:<7} {:<7} {:<10} {:>8} @ {:>10}  amount {:>12}  fees {:>8}{}{}",
                        f.id,
                        f.date,
                        f.side.as_str(),
                        f.code,
                        f.name,
                        f.shares,
                        price_from_f64(f.price).map(fmt_price).unwrap_or_default(),
                        fmt_fen(f.amount_fen),
                        fmt_fen(f.fees_total_fen),
                        if f.fees_computed { " (rules)" } else { "" },
                        f.realised_fen
                            .map(|r| format!("  realised {}", fmt_fen(r)))
                            .unwrap_or_default()
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Cash {
            direction,
            amount,
            date,
            json,
        }) => {
            let Some(amount_fen) = parse_fen(&amount).filter(|a| *a > 0) else {
                return Ok(bad(format!(
                    "金额「{amount}」不是正数（元，最多 2 位小数）"
                )));
            };
            let date = match date {
                None => None,
                Some(d) => match wyckoff_session::domain::market::date::parse_date(&d) {
                    Some(d) => Some(d),
                    None => return Ok(bad(format!("--date「{d}」无效，请用 YYYY-MM-DD"))),
                },
            };
            let direction = match direction {
                CashDir::In => CashDirection::In,
                CashDir::Out => CashDirection::Out,
            };
            match desk
                .record_cash(direction, amount_fen, date, Source::Cli)
                .await
            {
                Ok(out) if json => print_json(&out)?,
                Ok(out) => println!("{}", out.message),
                Err(e) => return Ok(journal_failure(e)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Value {
            all,
            holdings,
            json,
        }) => {
            let r = match desk.journal_report().await {
                Ok(r) => r,
                Err(e) => return Ok(journal_failure(e)),
            };
            let skip = if all {
                0
            } else {
                r.values.len().saturating_sub(20)
            };
            match (holdings, json) {
                (true, true) => print_json(&r.performance.holdings)?,
                (true, false) => print_holdings(&r),
                (false, true) => print_json(&r.values[skip..].to_vec())?,
                (false, false) => {
                    print_values(&r, skip);
                    print_holdings(&r);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(PortfolioCommand::Sync { json }) => {
            let out = match desk.sync_ledger_closes().await {
                Ok(out) => out,
                Err(e) => return Ok(journal_failure(e)),
            };
            if json {
                print_json(&out)?;
            } else {
                print_close_sync(&out);
            }
            let failed = out
                .iter()
                .any(|o| matches!(o.status, InstrumentSyncStatus::Failed { .. }));
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Some(PortfolioCommand::Review { json }) => {
            let r = match desk.journal_report().await {
                Ok(r) => r,
                Err(e) => return Ok(journal_failure(e)),
            };
            if json {
                print_json(&r.reviews)?;
            } else {
                print_reviews(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `portfolio import --json`: the import's outcome with every key it always had, and the
/// account after it beside them.
#[derive(Debug, serde::Serialize)]
struct ImportReply {
    #[serde(flatten)]
    outcome: ImportOutcome,
    /// Cash after the import (the statement's 资金余额 when the file is the whole history).
    cash_fen: i64,
    /// The NAV on the last day valued (cash + repos + frozen subscriptions + holdings at
    /// their unadjusted closes); none without any entry.
    nav_fen: Option<i64>,
    /// YYYY-MM-DD of that day.
    nav_date: Option<String>,
}

impl ImportReply {
    fn new(outcome: ImportOutcome, r: &JournalReport) -> Self {
        let last = r.values.last();
        ImportReply {
            outcome,
            cash_fen: r.summary.cash_fen,
            nav_fen: last.map(|d| d.nav_fen),
            nav_date: last.map(|d| d.date.clone()),
        }
    }

    /// `cash X · NAV Y (as of D)`, naming what the NAV leaves out or values approximately.
    fn account_line(&self, r: &JournalReport) -> String {
        let mut line = format!("cash {}", fmt_fen(self.cash_fen));
        if let (Some(nav), Some(date), Some(last)) = (self.nav_fen, &self.nav_date, r.values.last())
        {
            line.push_str(&format!(" · NAV {} (as of {date})", fmt_fen(nav)));
            if !last.missing.is_empty() {
                line.push_str(&format!(
                    " · no close, not in the NAV: {}",
                    last.missing.join(",")
                ));
            }
            if !last.approximate.is_empty() {
                line.push_str(&format!(
                    " · approximate (adjusted closes): {}",
                    last.approximate.join(",")
                ));
            }
        }
        line
    }
}

fn print_import(out: &ImportOutcome) {
    println!("{}", out.message);
    for s in &out.skipped {
        println!(
            "  skipped line {}: {} (not understood; moves no shares or cash)",
            s.line, s.business
        );
    }
    for l in &out.ignored {
        println!("  ignored line {}: {}", l.line, l.text);
    }
    let r = &out.reconciliation;
    if r.checked == 0 {
        return;
    }
    println!(
        "reconciliation: {} statement balances checked, {} differ",
        r.checked,
        r.differences.len()
    );
    let show = |d: &Difference| match d.kind {
        DifferenceKind::Cash => ("cash".to_owned(), fmt_fen(d.statement), fmt_fen(d.derived)),
        DifferenceKind::Shares => (
            d.code.clone().unwrap_or_default(),
            d.statement.to_string(),
            d.derived.to_string(),
        ),
    };
    println!(
        "  {:<10} {:<8} {:>6} {:>16} {:>16}",
        "date", "balance", "line", "statement", "ledger"
    );
    for d in &r.closing {
        let (what, stated, derived) = show(d);
        println!(
            "  {:<10} {:<8} {:>6} {:>16} {:>16}{}",
            d.date,
            what,
            d.line,
            stated,
            derived,
            if d.statement == d.derived {
                ""
            } else {
                "  DIFFERS"
            }
        );
    }
    for d in &r.differences {
        let (what, stated, derived) = show(d);
        println!(
            "  differs: {} {what} (line {}): statement {stated}, ledger {derived}",
            d.date, d.line
        );
    }
}

/// The cash line under the positions: cash, repos out, what the transfers on record were.
fn print_cash(s: &JournalSummary) {
    let mut out_of_cash = String::new();
    if s.repo_fen > 0 {
        out_of_cash.push_str(&format!(" · reverse repos out {}", fmt_fen(s.repo_fen)));
    }
    if s.subscription_fen > 0 {
        out_of_cash.push_str(&format!(
            " · subscriptions frozen {}",
            fmt_fen(s.subscription_fen)
        ));
    }
    println!(
        "cash {}{out_of_cash} · transfers in {} · out {} · dividends {} · interest {}",
        fmt_fen(s.cash_fen),
        fmt_fen(s.totals.transfers_in_fen),
        fmt_fen(s.totals.transfers_out_fen),
        fmt_fen(s.totals.dividends_fen),
        fmt_fen(s.totals.interest_fen),
    );
    if s.totals.implied_in_fen > 0 {
        println!(
            "  {} paid from money whose transfer in is not on record (on {} day(s)); record it with `wyckoff portfolio cash in AMOUNT --date`",
            fmt_fen(s.totals.implied_in_fen),
            s.implied.len()
        );
    }
}

fn print_values(r: &JournalReport, skip: usize) {
    if r.values.is_empty() {
        println!("no entries with cached closes yet");
        return;
    }
    println!(
        "{:<10} {:>14} {:>14} {:>12} {:>12} {:>14} {:>14} {:>11} {:>9}",
        "date",
        "market value",
        "cost basis",
        "unrealised",
        "realised",
        "cash",
        "NAV",
        "day P/L",
        "TWR"
    );
    for d in &r.values[skip..] {
        let mut flags = Vec::new();
        if !d.missing.is_empty() {
            flags.push(format!("no close: {}", d.missing.join(",")));
        }
        if !d.approximate.is_empty() {
            flags.push(format!("approximate: {}", d.approximate.join(",")));
        }
        println!(
            "{:<10} {:>14} {:>14} {:>12} {:>12} {:>14} {:>14} {:>11} {:>8.2}%{}",
            d.date,
            fmt_fen(d.market_value_fen),
            fmt_fen(d.cost_basis_fen),
            fmt_fen(d.unrealised_fen),
            fmt_fen(d.realised_fen),
            fmt_fen(d.cash_fen + d.repo_fen + d.subscription_fen),
            fmt_fen(d.nav_fen),
            fmt_fen(d.pnl_fen),
            d.twr_pct,
            if flags.is_empty() {
                String::new()
            } else {
                format!("  {}", flags.join("; "))
            }
        );
    }
    let p = &r.performance;
    if let (Some(first), Some(last), Some(twr), Some(dd)) =
        (&p.first, &p.last, p.twr_pct, p.max_drawdown_pct)
    {
        println!(
            "{first} → {last}: NAV {} · time-weighted return {twr:+.2}% · max drawdown {dd:.2}%",
            fmt_fen(p.nav_fen)
        );
    }
    for n in &p.notes {
        println!("note: {n}");
    }
}

/// Each line held at the last day valued and what it counts for in the NAV.
fn print_holdings(r: &JournalReport) {
    let lines = &r.performance.holdings;
    if lines.is_empty() {
        return;
    }
    println!("held at {}:", r.performance.last.as_deref().unwrap_or("-"));
    for h in lines {
        let what = match &h.valuation {
            Valuation::Close {
                close,
                close_date,
                days_behind,
                exact,
                value_fen,
            } => format!(
                "{} × {} = {} (close of {close_date}{}{})",
                h.shares,
                price_from_f64(*close).map(fmt_price).unwrap_or_default(),
                fmt_fen(*value_fen),
                if *days_behind > 0 {
                    format!(", {days_behind} days before")
                } else {
                    String::new()
                },
                if *exact {
                    ""
                } else {
                    ", adjusted: approximate"
                }
            ),
            Valuation::Principal { value_fen } => {
                format!("reverse repo at its principal {}", fmt_fen(*value_fen))
            }
            Valuation::Frozen { value_fen } => {
                format!(
                    "new-share subscription paid, frozen {}",
                    fmt_fen(*value_fen)
                )
            }
            Valuation::Unvalued { reason } => format!("{} not valued: {reason}", h.shares),
        };
        println!(
            "  {:<7} {:<5} {what}",
            h.code,
            instrument_name(h.instrument)
        );
    }
}

fn instrument_name(i: Instrument) -> &'static str {
    match i {
        Instrument::Stock => "stock",
        Instrument::Fund => "fund",
        Instrument::Bond => "bond",
        Instrument::Repo => "repo",
        Instrument::Other => "other",
    }
}

pub(crate) fn print_close_sync(out: &[InstrumentSyncOutcome]) {
    if out.is_empty() {
        println!("the ledger holds no code to sync");
        return;
    }
    for o in out {
        let last = o.last_close.as_deref().unwrap_or("none");
        match &o.status {
            InstrumentSyncStatus::Updated {
                new_bars, rejected, ..
            } => println!(
                "{} updated: {new_bars} new bars, last close {last}{}",
                o.code,
                if rejected.is_empty() {
                    String::new()
                } else {
                    format!(" ({} rows refused)", rejected.len())
                }
            ),
            InstrumentSyncStatus::UpToDate => println!("{} up to date, last close {last}", o.code),
            InstrumentSyncStatus::NotSupported { reason } => {
                println!("{} skipped: {reason}", o.code)
            }
            InstrumentSyncStatus::Failed { error } => {
                println!("{} FAILED: {error} (last close {last})", o.code);
            }
        }
    }
}

fn print_reviews(r: &JournalReport) {
    if r.reviews.is_empty() {
        println!("no sales yet");
        return;
    }
    println!(
        "{:<10} {:<7} {:<10} {:>8} {:>10} {:>10} {:>9} {:>9} {:>9}  exit signal then",
        "date", "code", "name", "shares", "price", "realised", "+5d", "+10d", "+20d"
    );
    for v in &r.reviews {
        let cells: Vec<String> = v
            .after
            .iter()
            .map(|a| match a {
                AfterSale::Pending { .. } => "pending".into(),
                AfterSale::Done { change_pct, .. } => format!("{change_pct:+.2}%"),
            })
            .collect();
        let signal = match (&v.exit_signal, v.signal_unknown) {
            (_, true) => "unknown (no bars)".to_owned(),
            (Some(s), _) => format!("{} {}", s.signal, s.reason),
            (None, _) => "none".to_owned(),
        };
        println!(
            "{:<10} {:<7} {:<10} {:>8} {:>10} {:>10} {:>9} {:>9} {:>9}  {signal}",
            v.date,
            v.code,
            v.name,
            v.shares,
            price_from_f64(v.price).map(fmt_price).unwrap_or_default(),
            fmt_fen(v.realised_fen),
            cells[0],
            cells[1],
            cells[2],
        );
    }
}
