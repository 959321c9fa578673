//! `wyckoff data names import FILE` (the names stocks carried from each date, from a
//! `date,code,name` CSV) and `wyckoff data names show CODE` (what is recorded for one
//! stock): the history as-of screens read ST status from.

use std::path::PathBuf;
use std::process::ExitCode;

use wyckoff_session::domain::market::{
    CodeHistory, HistoryCounts, HistorySync, ListStatus, NamesImportError, NamesImportReport,
    NamesImportStatus, SnapshotInfo, StockCode,
};
use wyckoff_session::time::iso;

use crate::market::{EXIT_BAD_INPUT, desk, failed, print_json, runtime};

#[derive(Debug, clap::Subcommand)]
pub enum NamesCommand {
    /// Import the names stocks carried: a CSV of `date,code,name` rows, each the name in
    /// force from that date (dates YYYYMMDD or YYYY-MM-DD; codes 600519, 600519.SH or
    /// sh600519; UTF-8, with or without a BOM; the header row is optional). A file with
    /// any bad line imports nothing; rows already recorded are not added again.
    Import {
        file: PathBuf,
        /// Print the import report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The names and listing recorded for one stock, with where each came from.
    Show {
        code: String,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: NamesCommand) -> anyhow::Result<ExitCode> {
    match command {
        NamesCommand::Import { file, json } => import(file, json),
        NamesCommand::Show { code, json } => show(&code, json),
    }
}

fn print_import(r: &NamesImportReport) {
    match &r.status {
        NamesImportStatus::Imported {
            rows,
            stocks,
            write,
        } => {
            if write.written() == 0 {
                println!(
                    "{}: nothing new: all {rows} name(s) for {stocks} stock(s) were already recorded",
                    r.path
                );
                return;
            }
            let confirmed = if write.confirmed > 0 {
                format!(
                    ", {} dated (a sync had only seen them first that day)",
                    write.confirmed
                )
            } else {
                String::new()
            };
            println!(
                "{}: imported {rows} name(s) for {stocks} stock(s): {} new, {} changed{confirmed}, {} already recorded",
                r.path, write.added, write.changed, write.unchanged
            );
        }
        NamesImportStatus::Rejected { errors, bad_lines } => {
            super::print_rejected(
                &r.path,
                *bad_lines,
                errors
                    .iter()
                    .map(|e| (r.path.as_str(), e.line, e.message.as_str())),
            );
        }
    }
}

fn import(file: PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let imported = rt.block_on(async {
        let desk = desk().await?;
        let report = desk.import_names(&file).await;
        desk.close().await;
        anyhow::Ok(report)
    });
    let report = match imported {
        Ok(Ok(r)) => r,
        // a missing, oversized or folder path is the command line's mistake
        Ok(Err(
            e @ (NamesImportError::Io { .. }
            | NamesImportError::NotAFile { .. }
            | NamesImportError::TooLarge { .. }),
        )) => {
            eprintln!("wyckoff: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Ok(Err(e)) => return Ok(failed(e.into())),
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&report)?;
    } else {
        print_import(&report);
    }
    Ok(if report.rejected() {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}

fn listing_line(h: &CodeHistory) -> Option<String> {
    let l = h.listing.as_ref()?;
    let listed = l
        .list_date
        .map(|d| format!(", listed {}", iso(d)))
        .unwrap_or_default();
    let status = match l.status {
        ListStatus::Listed => "listed".to_string(),
        ListStatus::Paused => "listing paused".to_string(),
        ListStatus::Delisted => match l.delist_date {
            Some(d) => format!("delisted, last day {}", iso(d)),
            None => "delisted".to_string(),
        },
    };
    Some(format!("listing: {status}{listed} ({})", l.name))
}

fn print_show(h: &CodeHistory) {
    if h.spans.is_empty() {
        println!(
            "{}: no recorded names; as-of screens read its ST status from today's name",
            h.code
        );
    } else {
        println!("{} names ({}):", h.code, h.spans.len());
        for s in &h.spans {
            let seen = if s.first_seen {
                " (first seen that day; the change may be earlier)"
            } else {
                ""
            };
            println!("  from {}  {}  [{}]{seen}", iso(s.from), s.name, s.source);
        }
    }
    if let Some(line) = listing_line(h) {
        println!("{line}");
    }
}

fn show(code: &str, json: bool) -> anyhow::Result<ExitCode> {
    if let Err(e) = StockCode::parse(code) {
        eprintln!("wyckoff: {e}");
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let rt = runtime()?;
    let history = rt.block_on(async {
        let desk = desk().await?;
        let h = desk.name_history(code).await;
        desk.close().await;
        anyhow::Ok(h?)
    });
    let history = match history {
        Ok(h) => h,
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&history)?;
    } else {
        print_show(&history);
    }
    Ok(ExitCode::SUCCESS)
}

/// The stock-list line of `data sync --list`, with the snapshot it recorded.
pub fn snapshot_line(n: usize, source: &str, snapshot: Option<&SnapshotInfo>) -> String {
    match snapshot {
        Some(s) => format!(
            "stock list: {n} names from {source}; recorded as the {} snapshot, {} name(s) first seen",
            iso(s.day),
            s.new_names
        ),
        None => format!("stock list: {n} names from {source}"),
    }
}

/// The stock-history line of `data sync --list`.
pub fn history_line(h: &HistorySync) -> String {
    let rejected = if h.rejected_rows > 0 {
        format!(
            "; {} row(s) not stored, first: {}",
            h.rejected_rows,
            h.rejected.first().map(String::as_str).unwrap_or("")
        )
    } else {
        String::new()
    };
    let caps = match (&h.cap_error, h.cap_days_missing) {
        (Some(e), missing) => format!(
            "; market caps of {} quarter end(s) recorded, {missing} still missing (stopped: {e}; the next sync goes on)",
            h.cap_days
        ),
        (None, 0) if h.cap_days > 0 => {
            format!("; market caps of {} quarter end(s) recorded", h.cap_days)
        }
        (None, missing) if missing > 0 => format!(
            "; market caps of {} quarter end(s) recorded, {missing} older still missing (the next sync goes on)",
            h.cap_days
        ),
        (None, _) => String::new(),
    };
    format!(
        "stock history: {} name change(s) from {} ({} new, {} changed, {} already recorded), {} listing(s) ({} delisted, {} paused){caps}{rejected}",
        h.names,
        h.source,
        h.write.added,
        h.write.changed + h.write.confirmed,
        h.write.unchanged,
        h.listings,
        h.delisted,
        h.paused
    )
}

/// The history line of `data status`: what as-of screens can read ST status and
/// delistings from.
pub fn counts_line(c: &HistoryCounts) -> String {
    format!(
        "name history: {} stock(s), {} span(s) ({} of them first seen in a stock-list snapshot, not dated by the change); {} listing(s), {} delisted; {} stock-list snapshot(s)",
        c.codes_with_names, c.spans, c.first_seen_spans, c.listings, c.delisted, c.snapshots
    )
}
