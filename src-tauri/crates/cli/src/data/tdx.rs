//! `wyckoff data import --tdx PATH`: a TDX (通达信) install's daily bars, blocks and
//! industry file, with a progress bar on stderr.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use wyckoff_session::domain::market::tdx::{
    BlockStatus, NotAStock, TdxError, TdxEvent, TdxImportReport, TdxIndustries, TdxStage,
    find_vipdoc,
};
use wyckoff_session::domain::market::{IndustriesImportStatus, LoadWrite};
use wyckoff_session::time::iso;

use crate::market::{EXIT_BAD_INPUT, desk, failed, print_json, runtime};

/// Bad records printed per rejected file in text mode (the JSON report has up to 20).
const ERRORS_SHOWN: usize = 10;

fn kind_name(k: NotAStock) -> &'static str {
    match k {
        NotAStock::Index => "index",
        NotAStock::Fund => "fund/ETF",
        NotAStock::Bond => "bond",
        NotAStock::BShare => "B-share",
        NotAStock::Other => "other",
    }
}

fn print_report(r: &TdxImportReport) {
    for f in &r.rejected {
        println!(
            "{}: REJECTED, nothing imported ({} bad record(s))",
            f.path, f.bad_records
        );
        for e in f.errors.iter().take(ERRORS_SHOWN) {
            println!("  {}: {e}", f.path);
        }
        if f.bad_records as usize > ERRORS_SHOWN {
            println!("  … and {} more", f.bad_records as usize - ERRORS_SHOWN);
        }
    }
    let skipped: Vec<String> = r
        .skipped
        .iter()
        .map(|s| format!("{} {}", s.files, kind_name(s.kind)))
        .collect();
    println!(
        "{}: {} .day file(s): {} stock(s) read, {} rejected{}",
        r.path,
        r.files,
        r.stocks,
        r.rejected.len(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!(", skipped (not stocks): {}", skipped.join(", "))
        }
    );
    println!(
        "bars: {} new, {} changed, {} already stored; {} stock(s) written{}",
        r.bars_added,
        r.bars_changed,
        r.bars_unchanged,
        r.stocks_written,
        r.last_date
            .map(|d| format!("; newest bar {}", iso(d)))
            .unwrap_or_default()
    );
    if r.kept_adjusted > 0 {
        println!(
            "{} stock(s) already hold adjusted bars from a sync or a CSV: kept; {} of their days got TDX's close as the real close; {} TDX day(s) not mixed in (a sync brings them, adjusted)",
            r.kept_adjusted, r.raw_filled, r.not_mixed
        );
    }
    if r.bundled_replaced > 0 {
        println!(
            "{} stock(s) of the bundled sample (adjusted as of 2020) now hold the install's history instead",
            r.bundled_replaced
        );
    }
    if r.not_in_stock_list > 0 {
        println!(
            "{} imported code(s) are not in the cached stock list (names unknown until `wyckoff data sync --list`)",
            r.not_in_stock_list
        );
    }
    for b in &r.blocks {
        match &b.status {
            BlockStatus::Read {
                stocks,
                added,
                not_stocks,
            } => println!(
                "watchlist: {} ({}): {stocks} stock(s), {added} new{}",
                b.name,
                b.path,
                if *not_stocks > 0 {
                    format!(", {not_stocks} not a stock (skipped)")
                } else {
                    String::new()
                }
            ),
            BlockStatus::Rejected { errors } => {
                println!(
                    "watchlist: {} ({}): REJECTED, nothing added",
                    b.name, b.path
                );
                for e in errors.iter().take(ERRORS_SHOWN) {
                    println!("  {}: {e}", b.path);
                }
            }
        }
    }
    match &r.industries {
        TdxIndustries::NotFound => println!("industries: no tdxhy.cfg in this install"),
        TdxIndustries::Failed { error, .. } => println!("industries: not imported: {error}"),
        TdxIndustries::Imported { report } => match &report.status {
            IndustriesImportStatus::Imported {
                stocks,
                industries,
                write,
                ..
            } => println!(
                "industries: {stocks} stock(s) in {industries} industr{}{}",
                if *industries == 1 { "y" } else { "ies" },
                if matches!(write, LoadWrite::Unchanged) {
                    " (already on record)"
                } else {
                    ""
                }
            ),
            IndustriesImportStatus::Rejected { bad_lines, errors } => {
                println!("industries: REJECTED, nothing imported ({bad_lines} bad line(s))");
                for e in errors.iter().take(ERRORS_SHOWN) {
                    println!("  line {}: {}", e.line, e.message);
                }
            }
        },
    }
    if r.nothing_new() {
        println!("nothing new: every bar and watchlist entry of this install is already stored");
    }
    if r.bars_added + r.bars_changed > 0 {
        println!(
            "note: TDX bars are unadjusted (real traded prices); `wyckoff data sync` replaces them with the forward-adjusted history and keeps these closes as the real ones"
        );
    }
}

pub fn import(path: PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    // a missing folder or one that is no TDX install is a command-line mistake
    if let Err(e) = find_vipdoc(&path) {
        eprintln!("wyckoff: {e}");
        return Ok(ExitCode::from(EXIT_BAD_INPUT));
    }
    let tty = std::io::stderr().is_terminal();
    let rt = runtime()?;
    let imported = rt.block_on(async {
        let desk = desk().await?;
        let bar = tty.then(|| {
            let pb = ProgressBar::new(0);
            pb.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            pb
        });
        let mut progress = |ev: TdxEvent| match ev {
            TdxEvent::Progress { stage, done, total } => {
                if let Some(pb) = &bar {
                    pb.set_length(u64::from(total));
                    pb.set_position(u64::from(done));
                    pb.set_message(match stage {
                        TdxStage::Bars => "stocks",
                        TdxStage::Watchlist => "blocks",
                        TdxStage::Industries => "industries",
                    });
                }
            }
        };
        let report = desk.import_tdx(&path, &mut progress).await;
        if let Some(pb) = &bar {
            pb.finish_and_clear();
        }
        desk.close().await;
        anyhow::Ok(report)
    });
    let report = match imported {
        Ok(Ok(r)) => r,
        Ok(Err(e @ (TdxError::NotTdx(_) | TdxError::Io { .. }))) => {
            eprintln!("wyckoff: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Ok(Err(e)) => return Ok(failed(e.into())),
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&report)?;
    } else {
        print_report(&report);
    }
    Ok(if report.anything_rejected() {
        ExitCode::from(EXIT_BAD_INPUT)
    } else {
        ExitCode::SUCCESS
    })
}
