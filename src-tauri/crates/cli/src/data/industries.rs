//! `wyckoff data industries import PATH` (industry and concept membership from a
//! `code,industry` CSV or a TDX install) and `wyckoff data industries list` (the loads on
//! record): what the funnel's L3 and the sector table group stocks by.

use std::path::PathBuf;
use std::process::ExitCode;

use wyckoff_session::domain::market::{
    IndustriesImportError, IndustriesImportReport, IndustriesImportStatus, LoadWrite, MemberKind,
};
use wyckoff_session::time::iso;

use crate::market::{EXIT_BAD_INPUT, desk, failed, print_json, runtime};

#[derive(Debug, clap::Subcommand)]
pub enum IndustriesCommand {
    /// Import industry membership, dated today: a CSV of `code,industry` rows (header
    /// optional; UTF-8 or GBK), or a TDX (通达信) install folder — its T0002/hq_cache
    /// tdxhy.cfg with incon.dat's industry names, and block_gn.dat / block_fg.dat concept
    /// and style blocks — or one of those files. Any bad line imports nothing and is named;
    /// importing what the latest load already holds adds nothing.
    Import {
        path: PathBuf,
        /// Print the import report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The membership loads on record, oldest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Concept strength: each concept block's 5-day return against the market's on the
    /// last cached trading day on or before --as-of, strongest first.
    Concepts {
        #[arg(long)]
        as_of: Option<String>,
        /// Rows shown (strongest and weakest halves); all with --json.
        #[arg(long, default_value_t = 20)]
        top: usize,
        #[arg(long)]
        json: bool,
    },
    /// A stock's industry and concept and style blocks as of a day (the latest loads
    /// without --as-of), and which load each came from.
    Show {
        code: String,
        /// The day (YYYY-MM-DD or YYYYMMDD): the membership known then.
        #[arg(long)]
        as_of: Option<String>,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: IndustriesCommand) -> anyhow::Result<ExitCode> {
    match command {
        IndustriesCommand::Import { path, json } => import(path, json),
        IndustriesCommand::List { json } => list(json),
        IndustriesCommand::Show { code, as_of, json } => show(&code, as_of.as_deref(), json),
        IndustriesCommand::Concepts { as_of, top, json } => concepts(as_of.as_deref(), top, json),
    }
}

fn print_import(r: &IndustriesImportReport) {
    match &r.status {
        IndustriesImportStatus::Imported {
            source,
            stocks,
            industries,
            concepts,
            concept_rows,
            not_stocks,
            without_industry,
            loaded_on,
            write,
            ..
        } => {
            let what = format!(
                "{stocks} stock(s) in {industries} industr{}, {concepts} concept/style block(s) ({concept_rows} membership(s))",
                if *industries == 1 { "y" } else { "ies" }
            );
            match write {
                LoadWrite::Unchanged => println!(
                    "{}: nothing new: the {} load of {} already holds {what}",
                    r.path,
                    source.as_str(),
                    iso(*loaded_on)
                ),
                LoadWrite::Added | LoadWrite::Replaced => println!(
                    "{}: imported {what} from {}, as of {}{}",
                    r.path,
                    source.as_str(),
                    iso(*loaded_on),
                    if matches!(write, LoadWrite::Replaced) {
                        " (replacing today's earlier load)"
                    } else {
                        ""
                    }
                ),
            }
            if *not_stocks > 0 || *without_industry > 0 {
                println!(
                    "  skipped: {not_stocks} row(s) for codes that are not A-share stocks, {without_industry} stock(s) with no industry code"
                );
            }
        }
        IndustriesImportStatus::Rejected { errors, bad_lines } => {
            super::print_rejected(
                &r.path,
                *bad_lines,
                errors
                    .iter()
                    .map(|e| (e.file.as_str(), e.line, e.message.as_str())),
            );
        }
    }
}

fn import(path: PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let imported = rt.block_on(async {
        let desk = desk().await?;
        let report = desk.import_industries(&path).await;
        desk.close().await;
        anyhow::Ok(report)
    });
    let report = match imported {
        Ok(Ok(r)) => r,
        // a missing, oversized or unrecognised path is the command line's mistake
        Ok(Err(e @ IndustriesImportError::Cache(_))) => return Ok(failed(e.into())),
        Ok(Err(e)) => {
            eprintln!("wyckoff: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
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

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    let loads = rt.block_on(async {
        let desk = desk().await?;
        let loads = desk.industry_loads().await;
        desk.close().await;
        anyhow::Ok(loads?)
    });
    let loads = match loads {
        Ok(l) => l,
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&loads)?;
        return Ok(ExitCode::SUCCESS);
    }
    if loads.is_empty() {
        println!(
            "no industry membership on record: `wyckoff data industries import PATH` (a code,industry CSV or a TDX install folder)"
        );
    }
    for l in &loads {
        let what = if l.kind == MemberKind::Industry {
            format!(
                "{} stock(s) in {} industr{}",
                l.stocks,
                l.industries,
                if l.industries == 1 { "y" } else { "ies" }
            )
        } else {
            format!("{} {} block(s)", l.concepts, l.kind.as_str())
        };
        println!(
            "{}  {:<4} {what}  {}",
            iso(l.loaded_on),
            l.source.as_str(),
            l.path
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--as-of` read; `Err` is the exit code of a date that is no date.
fn as_of_day(as_of: Option<&str>) -> Result<Option<u32>, ExitCode> {
    match as_of {
        Some(d) => match wyckoff_session::domain::market::date::parse_date(d) {
            Some(d) => Ok(Some(d)),
            None => {
                eprintln!("wyckoff: --as-of must be a real date such as 2020-06-16, not {d:?}");
                Err(ExitCode::from(EXIT_BAD_INPUT))
            }
        },
        None => Ok(None),
    }
}

fn concepts(as_of: Option<&str>, top: usize, json: bool) -> anyhow::Result<ExitCode> {
    let day = match as_of_day(as_of) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let rt = runtime()?;
    let got = rt.block_on(async {
        let desk = desk().await?;
        let c = desk.concept_strength(day).await;
        desk.close().await;
        anyhow::Ok(c?)
    });
    let c = match got {
        Ok(c) => c,
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&c)?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(load) = &c.load else {
        println!(
            "no concept blocks on record: `wyckoff data industries import PATH` with a TDX install folder (its block_gn.dat)"
        );
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "concepts: {} block(s) from {} {}{}",
        load.concepts,
        load.source.as_str(),
        iso(load.loaded_on),
        if c.load_later {
            " (dated after the day: today's blocks stand in, none earlier exists)"
        } else {
            ""
        }
    );
    let Some(t) = &c.table else {
        println!("no bars cached on or before the day");
        return Ok(ExitCode::SUCCESS);
    };
    let pct = |x: f64| format!("{x:+.2}%");
    println!(
        "{}: market 5-day {} over {} stock(s)",
        iso(t.date),
        t.market_return_5d_pct.map_or_else(|| "--".to_string(), pct),
        t.market_stocks
    );
    println!(
        "{:<16} {:>7} {:>7} {:>9} {:>9} {:>6}",
        "concept", "members", "counted", "5d", "rel 5d", "up"
    );
    let n = t.rows.len();
    let shown: Vec<usize> = if n <= top {
        (0..n).collect()
    } else {
        (0..top.div_ceil(2)).chain(n - top / 2..n).collect()
    };
    for (k, i) in shown.iter().enumerate() {
        if k > 0 && *i != shown[k - 1] + 1 {
            println!("  … {} more", i - shown[k - 1] - 1);
        }
        let r = &t.rows[*i];
        println!(
            "{:<16} {:>7} {:>7} {:>9} {:>9} {:>6}",
            r.concept,
            r.members,
            r.counted,
            pct(r.return_5d_pct),
            pct(r.relative_5d_pct),
            r.up_today
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn show(code: &str, as_of: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let day = match as_of_day(as_of) {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let rt = runtime()?;
    let got = rt.block_on(async {
        let desk = desk().await?;
        let m = desk.stock_membership(code, day).await;
        desk.close().await;
        anyhow::Ok(m)
    });
    let m = match got {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => {
            eprintln!("wyckoff: {e}");
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
        Err(e) => return Ok(failed(e)),
    };
    if json {
        print_json(&m)?;
        return Ok(ExitCode::SUCCESS);
    }
    let when = m.day.map_or_else(|| "latest".to_string(), iso);
    match (&m.industry, &m.industry_load) {
        (Some(ind), Some(l)) => println!(
            "{} industry ({when}): {ind}  [{} {}{}]",
            m.code,
            l.source.as_str(),
            iso(l.loaded_on),
            if m.industry_later {
                "; a later membership: none known that early"
            } else {
                ""
            }
        ),
        (Some(ind), None) => println!("{} industry ({when}): {ind}", m.code),
        (None, Some(l)) => println!(
            "{} industry ({when}): none in the {} load of {}",
            m.code,
            l.source.as_str(),
            iso(l.loaded_on)
        ),
        (None, None) => println!(
            "{} industry ({when}): no industry membership on record: `wyckoff data industries import PATH`, or `wyckoff data sync --list` with a Tushare token",
            m.code
        ),
    }
    if m.block_loads.is_empty() {
        println!("concepts: no concept blocks on record (a TDX install's block_gn.dat gives them)");
    } else {
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        println!("concepts ({}): {}", m.concepts.len(), list(&m.concepts));
        if !m.styles.is_empty() {
            println!("styles ({}): {}", m.styles.len(), list(&m.styles));
        }
        if m.blocks_later {
            println!("  (from a block load dated after the day: none earlier exists)");
        }
    }
    Ok(ExitCode::SUCCESS)
}
