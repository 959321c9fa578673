//! `wyckoff data status` (cache coverage and freshness), `wyckoff data sync` (bring
//! codes up to date from the live sources, with a progress bar on stderr),
//! `wyckoff data import` (forward-adjusted daily bars from CSV files) and `wyckoff data
//! names` (the names stocks carried from each date) and `wyckoff data industries`
//! (industry and concept membership).

mod industries;
pub(crate) mod minute;
mod names;
mod tdx;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use wyckoff_session::desk_ledger_closes::InstrumentSyncStatus;
use wyckoff_session::domain::market::{
    CodeStatus, FileStatus, Freshness, ImportEvent, ImportReport, IndexCode, StatusReport,
    StockCode, SyncEvent, SyncStatus, SyncTarget,
};
use wyckoff_session::time::iso;

use crate::market::{EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, failed, print_json, runtime};

#[derive(Debug, clap::Args)]
pub struct DataArgs {
    #[command(subcommand)]
    pub command: DataCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum DataCommand {
    /// Show what the local cache holds: per-code coverage, freshness and sources.
    Status {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Fetch missing bars from the live sources (only what is missing). With no codes,
    /// every stock already in the cache is brought up to date, and so is every code the
    /// account ledger has held (its ETFs, LOFs and bonds too, as `portfolio sync` does).
    Sync {
        /// Stock codes (600519, 600519.SH, sh600519).
        #[arg(conflicts_with = "all")]
        codes: Vec<String>,
        /// The whole market: the SSE Composite, CSI 300 and ChiNext indices, then every
        /// listed or cached stock (about 5,600; over an hour at Eastmoney's pace). Resumable:
        /// each code is stored as it completes, and a re-run fetches only what is missing.
        #[arg(long)]
        all: bool,
        /// An index too: sse, csi300, szse, chinext, sse50, csi500 or 000300.SH (repeatable).
        #[arg(long = "index", value_name = "INDEX")]
        indices: Vec<String>,
        /// Refresh the stock list (names, boards) first, recorded as the day's snapshot; with
        /// a Tushare token, also every name change and listing/delisting day.
        #[arg(long)]
        list: bool,
        /// day (default) or minute bars: 60m, 30m, 15m or 5m (the codes named; Eastmoney or
        /// Tencent, unadjusted, closed bars only).
        #[arg(long, default_value = "day", conflicts_with_all = ["all", "list", "indices"])]
        period: String,
        /// Print the sync report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Import forward-adjusted (qfq) daily bars from a CSV file or a folder of .csv files.
    /// A header row is required: date,code,open,high,low,close,volume[,amount] (any order;
    /// dates YYYY-MM-DD or YYYYMMDD; codes 600519, 600519.SH or sh600519; volume in shares,
    /// amount in CNY). A file with any bad row imports nothing; other files still import.
    ///
    /// With --tdx, a TDX (通达信) install instead: every stock's daily bars from
    /// vipdoc/{sh,sz,bj}/lday/*.day (unadjusted, kept so until a sync brings the adjusted
    /// history; indices, funds, bonds and B shares are skipped), its 自选股 and custom blocks
    /// (T0002/blocknew) into the watchlist, and its industry file. Re-importing adds nothing.
    Import {
        /// A .csv file or a folder holding .csv files.
        #[arg(required_unless_present = "tdx", conflicts_with = "tdx")]
        path: Option<PathBuf>,
        /// A TDX install folder (the one holding vipdoc and T0002), or its vipdoc folder.
        #[arg(long, value_name = "PATH")]
        tdx: Option<PathBuf>,
        /// Print the import report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The names stocks carried from each date, which as-of screens read ST status from.
    Names {
        #[command(subcommand)]
        command: names::NamesCommand,
    },
    /// Industry and concept membership (a CSV or a TDX install), which the funnel's L3 and
    /// the sector table group stocks by.
    Industries {
        #[command(subcommand)]
        command: industries::IndustriesCommand,
    },
}

pub fn run(a: DataArgs) -> anyhow::Result<ExitCode> {
    match a.command {
        DataCommand::Status { json } => status(json),
        DataCommand::Sync {
            codes,
            all,
            indices,
            list,
            period,
            json,
        } => match minute::parse_period(&period) {
            Err(e) => {
                eprintln!("wyckoff: {e}");
                Ok(ExitCode::from(EXIT_BAD_INPUT))
            }
            Ok(Some(p)) => minute::sync(codes, p, json),
            Ok(None) => sync(codes, all, indices, list, json),
        },
        DataCommand::Import { path, tdx, json } => match (tdx, path) {
            (Some(tdx), _) => tdx::import(tdx, json),
            (None, Some(path)) => import(path, json),
            // clap requires one of them
            (None, None) => Ok(ExitCode::from(EXIT_BAD_INPUT)),
        },
        DataCommand::Names { command } => names::run(command),
        DataCommand::Industries { command } => industries::run(command),
    }
}

/// Bad rows printed per rejected file in text mode (the JSON report has up to 50).
const ERRORS_SHOWN: usize = 10;

fn print_import(r: &ImportReport) {
    for o in &r.outcomes {
        if let FileStatus::Rejected { errors, bad_rows } = &o.status {
            println!(
                "{}: REJECTED, nothing imported ({bad_rows} bad row(s))",
                o.path
            );
            for e in errors.iter().take(ERRORS_SHOWN) {
                if e.line == 0 {
                    println!("  {}: {}", o.path, e.message);
                } else {
                    println!("  {}:{}: {}", o.path, e.line, e.message);
                }
            }
            if *bad_rows > ERRORS_SHOWN {
                println!("  … and {} more", bad_rows - ERRORS_SHOWN);
            }
        }
    }
    println!(
        "imported {} of {} file(s): {} stock(s), {} bar(s); {} file(s) rejected ({} bad row(s))",
        r.files_imported, r.files, r.stocks, r.bars, r.files_rejected, r.bad_rows
    );
    if !r.not_in_stock_list.is_empty() {
        println!(
            "{} imported code(s) are not in the cached stock list (names unknown until `wyckoff data sync --list`)",
            r.not_in_stock_list.len()
        );
    }
}

fn import(path: PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    // a missing path or a folder without CSV files is a command-line mistake
    if let Err(e) = wyckoff_session::domain::market::import::csv_files(&path) {
        eprintln!("wyckoff: {e}");
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let tty = std::io::stderr().is_terminal();
    let rt = runtime()?;
    let imported = rt.block_on(async {
        let desk = desk().await?;
        let md = desk.market().clone();
        let bar = tty.then(|| {
            let pb = ProgressBar::new(0);
            pb.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} files {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb
        });
        let mut progress = |ev: ImportEvent| match ev {
            ImportEvent::FileDone { total, outcome, .. } => {
                if let Some(pb) = &bar {
                    pb.set_length(total as u64);
                    if matches!(outcome.status, FileStatus::Rejected { .. }) {
                        pb.println(format!("{}: rejected", outcome.path));
                    }
                    pb.inc(1);
                }
            }
        };
        let report = md.import_csv(&path, &mut progress).await;
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        desk.close().await;
        anyhow::Ok(report?)
    });
    let report = match imported {
        Ok(r) => r,
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&report)?;
    } else {
        print_import(&report);
    }
    Ok(if report.anything_rejected() {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}

fn freshness_text(f: &Freshness) -> String {
    match f {
        Freshness::Fresh { .. } => "fresh".into(),
        Freshness::Stale { expected, .. } => format!("stale (expected {})", iso(*expected)),
        Freshness::Missing => "missing".into(),
    }
}

fn print_codes(title: &str, rows: &[CodeStatus]) {
    println!("{title} ({}):", rows.len());
    for c in rows {
        let src: Vec<&str> = c.sources.iter().map(|s| s.source.as_str()).collect();
        println!(
            "  {:<10} {:<8} {} .. {}  {:>5} bars  {:<24} {}",
            c.code,
            c.name.as_deref().unwrap_or(""),
            iso(c.first_date),
            iso(c.last_date),
            c.bars,
            freshness_text(&c.freshness),
            src.join(",")
        );
    }
}

/// What the trading calendar knows, from where, and that later days are assumed.
pub fn calendar_line(c: &wyckoff_session::domain::market::calendar_store::CalendarInfo) -> String {
    let learned = match &c.learned_from {
        Some(source) if c.known_through > c.bundled_through => {
            format!(", then through {} from {source}", iso(c.known_through))
        }
        _ => String::new(),
    };
    format!(
        "calendar:      bundled through {}{learned}; later days are assumed (weekdays but New Year's Day, May 1 and October 1–3 taken as trading days) and said so",
        iso(c.bundled_through)
    )
}

fn print_status(r: &StatusReport) {
    println!("database: {}", r.db_path);
    println!("{}", calendar_line(&r.calendar));
    println!(
        "bundled dataset: {}",
        r.bundled_dataset.as_deref().unwrap_or("not seeded")
    );
    println!(
        "last closed trading day: {}",
        r.last_closed_trading_day
            .map(iso)
            .unwrap_or_else(|| "unknown".into())
    );
    println!(
        "live sources: {}",
        if r.sources.is_empty() {
            "none (offline)".to_string()
        } else {
            r.sources.join(" → ")
        }
    );
    println!("stock list: {} names", r.stock_list_size);
    println!(
        "trading calendar: {} .. {}",
        iso(r.calendar_range.0),
        iso(r.calendar_range.1)
    );
    print_codes("stocks", &r.stocks);
    if r.indices.is_empty() {
        println!("indices: none cached (the bundled offline data has no index bars)");
    } else {
        print_codes("indices", &r.indices);
    }
}

fn status(json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let report = rt.block_on(async {
        let desk = desk().await?;
        let report = desk.market().status().await;
        let history = desk.history_counts().await;
        let minutes = desk.minute_status().await;
        desk.close().await;
        anyhow::Ok((report?, history?, minutes?))
    });
    let (report, history, minutes) = match report {
        Ok(r) => r,
        Err(e) => return Ok(failed(e)),
    };
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["history"] = serde_json::to_value(history)?;
        v["minute"] = serde_json::to_value(&minutes)?;
        print_json(&v)?;
    } else {
        print_status(&report);
        println!("{}", names::counts_line(&history));
        minute::print_status(&minutes);
    }
    Ok(ExitCode::SUCCESS)
}

fn outcome_line(o: &wyckoff_session::domain::market::SyncOutcome) -> String {
    let last = o.last_date.map(iso).unwrap_or_else(|| "--".into());
    match &o.status {
        SyncStatus::UpToDate => format!("{} up to date (last bar {last})", o.code),
        SyncStatus::NoNewData => format!("{} no new bars (last bar {last})", o.code),
        SyncStatus::Updated {
            source,
            new_bars,
            rebased,
            ..
        } => format!(
            "{} updated: {new_bars} new bar(s) from {source}{}, last bar {last}",
            o.code,
            if *rebased { " (re-based history)" } else { "" }
        ),
        SyncStatus::Failed { error } => format!("{} FAILED: {error}", o.code),
    }
}

fn sync(
    codes: Vec<String>,
    all: bool,
    indices: Vec<String>,
    list: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    // every code is checked before anything is fetched
    let mut bad = Vec::new();
    let mut wanted: Vec<String> = Vec::new();
    for c in &codes {
        match StockCode::parse(c) {
            Ok(s) => wanted.push(s.digits().to_string()),
            Err(e) => bad.push(e.to_string()),
        }
    }
    for i in &indices {
        match IndexCode::parse(i) {
            Ok(idx) => wanted.push(idx.symbol().key()),
            Err(e) => bad.push(e.to_string()),
        }
    }
    if !bad.is_empty() {
        for b in bad {
            eprintln!("wyckoff: {b}");
        }
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    // A sync of the cache or the market refreshes what the account holds too (a user
    // expects a full sync to value their ETFs and bonds); codes named sync only those.
    let with_ledger = wanted.is_empty();
    let target = if all {
        SyncTarget::All
    } else if wanted.is_empty() {
        SyncTarget::Cached
    } else {
        SyncTarget::Codes(wanted)
    };
    let tty = std::io::stderr().is_terminal();

    let rt = runtime()?;
    let synced = rt.block_on(async {
        // The desk, not market data alone: new bars are checked against the alert rules
        // and what fires is recorded and pushed through the desk's stores.
        let desk = desk().await?;
        let md = desk.market().clone();
        let offline = md.source_names().is_empty();
        // The vendor's dated history before the list: the snapshot then marks as "first
        // seen" only the names the history lacks.
        let history = if list && md.has_stock_history_source() {
            Some(desk.sync_stock_history().await.map_err(|e| e.to_string()))
        } else {
            None
        };
        let list_result = if list {
            Some(md.sync_stock_list().await.map_err(|e| e.to_string()))
        } else {
            None
        };
        // the snapshot the list was just recorded as
        let snapshot = match &list_result {
            Some(Ok(_)) => md
                .history()
                .snapshots()
                .await
                .ok()
                .and_then(|s| s.last().cloned()),
            _ => None,
        };
        let bar = tty.then(|| {
            let pb = ProgressBar::new(0);
            pb.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb
        });
        let mut progress = |ev: SyncEvent| match ev {
            SyncEvent::Started { total, code, .. } => {
                if let Some(pb) = &bar {
                    pb.set_length(total as u64);
                    pb.set_message(code);
                }
            }
            SyncEvent::Finished {
                index,
                total,
                outcome,
            } => match &bar {
                Some(pb) => {
                    if matches!(outcome.status, SyncStatus::Failed { .. }) {
                        pb.println(outcome_line(&outcome));
                    }
                    pb.inc(1);
                }
                None => eprintln!("[{}/{total}] {}", index + 1, outcome_line(&outcome)),
            },
        };
        // what already exists decides what is fetched; say so before the (long) run
        let plan = md.sync_plan(&target).await?;
        if !json {
            eprintln!(
                "{} symbol(s): {} already up to date, {} stale, {} not cached",
                plan.total, plan.fresh, plan.stale, plan.missing
            );
        }
        let report = md.sync(target, &mut progress).await;
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        let report = report?;
        let ledger = if with_ledger && !offline {
            Some(desk.sync_ledger_closes().await.map_err(|e| e.to_string()))
        } else {
            None
        };
        // The SSE Composite's bars after the fact settle which weekdays were trading days.
        let calendar = if offline {
            None
        } else {
            Some(md.learn_calendar().await.map_err(|e| e.to_string()))
        };
        // New bars: the alert rules (and the holdings' stops and targets) are checked on
        // them, recorded and pushed as `wyckoff alerts check` does.
        let alerts = if offline || report.failed == report.outcomes.len() {
            None
        } else {
            crate::alerts::after_sync(&desk).await
        };
        desk.close().await;
        anyhow::Ok((
            (list_result, snapshot, history),
            report,
            offline,
            plan,
            alerts,
            (calendar, ledger),
        ))
    });
    let ((list_result, snapshot, history), report, offline, plan, alerts, (calendar, ledger)) =
        match synced {
            Ok(r) => r,
            Err(e) => return Ok(failed(e)),
        };

    let ledger_failed = match &ledger {
        Some(Ok(out)) => out
            .iter()
            .any(|o| matches!(o.status, InstrumentSyncStatus::Failed { .. })),
        Some(Err(_)) => true,
        None => false,
    };
    let failed = report.failed > 0
        || matches!(list_result, Some(Err(_)))
        || matches!(history, Some(Err(_)))
        || ledger_failed;
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["offline"] = json!(offline);
        v["plan"] = serde_json::to_value(&plan)?;
        v["alerts"] = match &alerts {
            Some(Ok(checked)) => serde_json::to_value(checked)?,
            Some(Err(e)) => json!({ "error": e }),
            None => Value::Null,
        };
        v["calendar"] = match &calendar {
            Some(Ok(c)) => serde_json::to_value(c)?,
            Some(Err(e)) => json!({ "error": e }),
            None => Value::Null,
        };
        if let Some(l) = &list_result {
            v["stock_list"] = match l {
                Ok((n, source)) => {
                    json!({"ok": true, "names": n, "source": source, "snapshot": snapshot})
                }
                Err(e) => json!({"ok": false, "error": e}),
            };
        }
        if let Some(l) = &ledger {
            v["ledger"] = match l {
                Ok(out) => serde_json::to_value(out)?,
                Err(e) => json!({ "error": e }),
            };
        }
        if let Some(h) = &history {
            v["stock_history"] = match h {
                Ok(Some(h)) => serde_json::to_value(h)?,
                Ok(None) => Value::Null,
                Err(e) => json!({ "error": e }),
            };
        }
        print_json(&v)?;
    } else {
        match &list_result {
            Some(Ok((n, source))) => {
                println!("{}", names::snapshot_line(*n, source, snapshot.as_ref()))
            }
            Some(Err(e)) => println!("stock list: FAILED: {e}"),
            None => {}
        }
        match &history {
            Some(Ok(Some(h))) => {
                println!("{}", names::history_line(h));
                if let Some(ind) = &h.industries {
                    println!("{}", ind.line());
                }
            }
            Some(Err(e)) => println!("stock history: FAILED: {e}"),
            _ => {}
        }
        println!(
            "synced {} code(s): {} updated, {} up to date, {} failed",
            report.outcomes.len(),
            report.updated,
            report.up_to_date,
            report.failed
        );
        if offline {
            println!(
                "offline: no live data source is configured (WYCKOFF_OFFLINE=1?); the local cache was not changed"
            );
        }
        match &ledger {
            Some(Ok(out)) if !out.is_empty() => {
                println!("the ledger's codes:");
                crate::portfolio::print_close_sync(out);
            }
            Some(Err(e)) => println!("the ledger's codes: FAILED: {e}"),
            _ => {}
        }
        match &calendar {
            Some(Ok(c)) => println!("{}", calendar_line(c)),
            Some(Err(e)) => println!("calendar: cannot learn from the index bars: {e}"),
            None => {}
        }
        match &alerts {
            Some(Ok(checked)) => crate::alerts::print_check(checked),
            Some(Err(e)) => println!("alerts: the check after the sync failed: {e}"),
            None => {}
        }
    }
    Ok(if failed {
        ExitCode::from(EXIT_UNAVAILABLE)
    } else {
        ExitCode::SUCCESS
    })
}

/// A rejected import's report: the file, then its first bad lines as `file:line: message`
/// (a line 0 names the whole file) and how many more there are.
fn print_rejected<'e>(
    path: &str,
    bad_lines: usize,
    errors: impl Iterator<Item = (&'e str, usize, &'e str)>,
) {
    /// Bad lines printed in text mode (the JSON report lists up to 50).
    const LINES_SHOWN: usize = 10;
    println!("{path}: REJECTED, nothing imported ({bad_lines} bad line(s))");
    for (file, line, message) in errors.take(LINES_SHOWN) {
        if line == 0 {
            println!("  {file}: {message}");
        } else {
            println!("  {file}:{line}: {message}");
        }
    }
    if bad_lines > LINES_SHOWN {
        println!("  … and {} more", bad_lines - LINES_SHOWN);
    }
}
