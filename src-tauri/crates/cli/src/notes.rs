//! `wyckoff notes CODE [--period P] [--json]`: the chart notes the agent (`annotate_chart`)
//! and the user drew on a stock's chart; `wyckoff notes remove ID` removes one (as the
//! user: anyone's). Exit status: 0 ok, 1 failure, 2 bad input (unknown code or note).

use std::process::ExitCode;

use anyhow::Context;
use wyckoff_session::Desk;
use wyckoff_session::domain::annotations::{AnnotationError, NotePeriod, Remover};

use crate::market::{desk, failed, print_json, runtime};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NotesArgs {
    #[command(subcommand)]
    pub command: Option<NotesCommand>,
    /// Stock code (six digits).
    pub code: Option<String>,
    /// The chart: day, week or month.
    #[arg(long, default_value = "day")]
    pub period: String,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum NotesCommand {
    /// Remove a note by its id (whoever drew it).
    Remove { id: i64 },
}

const EXIT_BAD_INPUT: u8 = 2;

fn bad(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("wyckoff: {e}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn line(v: &serde_json::Value) -> String {
    let s = &v["shape"];
    let shape = match s["kind"].as_str() {
        Some("box") => format!(
            "box {} → {}  {}–{}",
            s["from"], s["to"], s["low"], s["high"]
        ),
        Some("line") => format!("line {}  {} → {}", s["price"], s["from"], s["to"]),
        _ => format!("text {}  {}", s["date"], s["text"]),
    }
    .replace('"', "");
    format!(
        "#{}  {}  — {} · {}",
        v["id"],
        shape,
        v["author"].as_str().unwrap_or_default(),
        v["created_at"].as_str().unwrap_or_default()
    )
}

pub fn run(a: NotesArgs) -> anyhow::Result<ExitCode> {
    let Some(period) = NotePeriod::parse(&a.period) else {
        return Ok(bad(format!(
            "unknown period {}: day, week or month",
            a.period
        )));
    };
    let rt = runtime()?;
    rt.block_on(async {
        let desk = match desk().await {
            Ok(desk) => desk,
            Err(e) => return Ok(failed(e)),
        };
        let result = notes(&desk, a, period).await;
        desk.close().await;
        result
    })
}

async fn notes(desk: &Desk, a: NotesArgs, period: NotePeriod) -> anyhow::Result<ExitCode> {
    let (md, store) = (desk.market(), desk.notes());
    if let Some(NotesCommand::Remove { id }) = a.command {
        return Ok(match store.remove(id, Remover::User).await {
            Ok(n) => {
                println!(
                    "removed {}",
                    line(&wyckoff_session::reports::describe_note(&n))
                );
                ExitCode::SUCCESS
            }
            Err(e @ AnnotationError::NotFound(_)) => bad(e),
            Err(e) => failed(e.into()),
        });
    }
    let Some(code) = a.code.as_deref() else {
        return Ok(bad("give a stock code, or `remove ID`"));
    };
    let code = match wyckoff_session::domain::annotations::known_code(md, code) {
        Ok(c) => c,
        Err(e) => return Ok(bad(e)),
    };
    let notes: Vec<_> = store
        .list(&code, period)
        .await
        .context("reading the chart notes")?
        .iter()
        .map(wyckoff_session::reports::describe_note)
        .collect();
    if a.json {
        print_json(&notes)?;
    } else if notes.is_empty() {
        println!("no notes on {code}'s {} chart", period.as_str());
    } else {
        for n in &notes {
            println!("{}", line(n));
        }
    }
    Ok(ExitCode::SUCCESS)
}
