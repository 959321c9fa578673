//! `wyckoff memory list|search|add|edit|delete`: the long-term memory, from the shell.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use wyckoff_session::domain::memory::{Memory, MemoryError, MemoryStore, MemoryType};

#[derive(Debug, Args)]
pub struct MemoryArgs {
    #[command(subcommand)]
    command: MemoryCommand,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum MemoryCommand {
    /// Newest first, optionally of one type.
    List {
        /// preference, session, stock_opinion, decision or market_view.
        #[arg(long = "type")]
        memory_type: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Full-text search (Chinese two-character words, English words and stock codes work).
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Store a memory by hand.
    Add {
        /// preference, session, stock_opinion, decision or market_view.
        memory_type: String,
        text: String,
    },
    /// Replace a memory's text.
    Edit { id: i64, text: String },
    /// Delete a memory by id.
    Delete { id: i64 },
}

pub fn run(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(execute(args))
}

async fn execute(args: MemoryArgs) -> anyhow::Result<ExitCode> {
    let desk = crate::market::desk().await?;
    let outcome = command(args, desk.services().memories()).await;
    desk.close().await;
    outcome
}

async fn command(args: MemoryArgs, store: &MemoryStore) -> anyhow::Result<ExitCode> {
    let outcome = match args.command {
        MemoryCommand::List { memory_type, limit } => {
            let filter = match memory_type
                .as_deref()
                .map(str::parse::<MemoryType>)
                .transpose()
            {
                Ok(f) => f,
                Err(e) => return Ok(usage_error(&e)),
            };
            store.list(filter, limit).await.map(Listing::Many)
        }
        MemoryCommand::Search { query, limit } => {
            store.search(&query, limit).await.map(Listing::Many)
        }
        MemoryCommand::Add { memory_type, text } => {
            store.add(&memory_type, &text).await.map(Listing::One)
        }
        MemoryCommand::Edit { id, text } => store.update(id, &text).await.map(Listing::One),
        MemoryCommand::Delete { id } => store.delete(id).await.map(|()| Listing::Deleted(id)),
    };
    match outcome {
        Ok(listing) => {
            print(&listing, args.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ (MemoryError::UnknownType { .. } | MemoryError::EmptyContent)) => {
            Ok(usage_error(&e))
        }
        Err(e) => {
            eprintln!("wyckoff memory: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

enum Listing {
    Many(Vec<Memory>),
    One(Memory),
    Deleted(i64),
}

fn usage_error(e: &MemoryError) -> ExitCode {
    eprintln!("wyckoff memory: {e}");
    ExitCode::from(2)
}

fn print(listing: &Listing, json: bool) -> anyhow::Result<()> {
    match (listing, json) {
        (Listing::Many(items), true) => println!("{}", serde_json::to_string_pretty(items)?),
        (Listing::One(item), true) => println!("{}", serde_json::to_string_pretty(item)?),
        (Listing::Deleted(id), true) => println!("{}", serde_json::json!({ "deleted": id })),
        (Listing::Many(items), false) if items.is_empty() => println!("(no memories)"),
        (Listing::Many(items), false) => items.iter().for_each(print_line),
        (Listing::One(item), false) => print_line(item),
        (Listing::Deleted(id), false) => println!("deleted memory #{id}"),
    }
    Ok(())
}

fn print_line(m: &Memory) {
    let codes = if m.codes.is_empty() {
        String::new()
    } else {
        format!(" [{}]", m.codes.join(","))
    };
    println!(
        "#{} {} {}{} {}",
        m.id,
        m.created_at.format("%Y-%m-%d"),
        m.memory_type.as_str(),
        codes,
        m.content
    );
}
