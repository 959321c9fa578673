//! `wyckoff`: the headless face of Wyckoff Desk. It runs the same crates as the app.
// Printing results is this binary's job; libraries log through `tracing` instead.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod alerts;
mod analyze;
mod approvals;
mod backtest;
mod bot;
mod conversations;
mod data;
mod decision;
mod doctor;
mod eval;
mod events;
mod market;
mod market_map;
mod mcp;
mod memory;
mod model;
mod notes;
mod portfolio;
mod push;
mod quote;
mod run;
mod schedule;
mod screen;
mod size;
mod skills;
mod track;

use clap::{Parser, Subcommand};

/// Reading the whole market allocates millions of bars at once: with mimalloc a cold
/// `wyckoff screen` takes a twentieth of the page faults of the system allocator (3 k, not
/// 64 k), and a cold `wyckoff analyze` a third less time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "wyckoff",
    version,
    about = "Wyckoff Desk from the command line"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print how long each stage took (start-up, settings, open, read, compute, output…)
    /// to stderr; the same as `WYCKOFF_TIMINGS=1`.
    #[arg(long, global = true)]
    timings: bool,
}

/// `wyckoff market` subcommands.
#[derive(Debug, Subcommand)]
enum MarketCommand {
    /// The day's limit counts (涨停/跌停/炸板/一字板), the 连板 ladder, 涨停溢价 and seal rate.
    Map(market_map::MapArgs),
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the data home, settings, keychain and which keys are set (never their values).
    Doctor {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Analyse one A-share without any LLM: a Wyckoff diagnosis or recent bars.
    Analyze(analyze::AnalyzeArgs),
    /// The Wyckoff marks known as of a close, each with its bar, the date it became known
    /// and why (the engine replayed over the cached bars up to that close only).
    Events(events::EventsArgs),
    /// The main indices (what the get_market_overview tool returns); `market map`: the
    /// day's limit-up / limit-down statistics and the 连板 ladder.
    Market {
        /// Print the tool's JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(subcommand)]
        command: Option<MarketCommand>,
    },
    /// The local market-data cache: status and sync.
    Data(data::DataArgs),
    /// The agent's long-term memory: list, search, add, edit, delete.
    Memory(memory::MemoryArgs),
    /// Run one agent turn headless (exit 0 done, 1 failed, 130 cancelled, 2 bad input).
    Run(run::RunArgs),
    /// Evaluate the agent on the versioned task set over the bundled bars: each task's
    /// answer checked against the engine's figures, and how many of its numbers have a
    /// source (`--model ID`, `--tasks FILTER`, `--json`, `--report PATH`).
    Eval(eval::EvalArgs),
    /// Screen the whole market with the Wyckoff funnel (L1–L5), offline over the cache.
    Screen(screen::ScreenArgs),
    /// Forward tracking of saved screens: each candidate's figures 1–20 trading days on,
    /// hit rates (`stats`), and past screens replayed over the cache (`backfill`).
    Track(track::TrackArgs),
    /// Chart notes (boxes, lines, text) the agent and the user drew on a stock's chart;
    /// `remove ID` removes one.
    Notes(notes::NotesArgs),
    /// The account journal: positions from fills, `fill`, `import FILE` (交割单 CSV),
    /// `fills`, `value` (daily account value) and `review` (exits 5/10/20 days on).
    Portfolio(portfolio::PortfolioArgs),
    /// Backtest the funnel strategy under A-share rules, offline over the cache.
    Backtest(backtest::BacktestArgs),
    /// Live snapshot quotes (Tencent, Eastmoney as the fallback) with each stock's partial
    /// bar of the day; never written to the daily cache.
    Quote(quote::QuoteArgs),
    /// Size one buy by its risk: the shares whose loss at the stop stays within a percent
    /// of equity (the ledger's NAV unless given), capped by cash, a position budget and 水温.
    Size(size::SizeArgs),
    /// The configured models (roles, whether keys are set) and the light model (seed §12).
    Model(model::ModelArgs),
    /// Stored conversations: list, show (messages with their ids), fork at a message.
    Conversations(conversations::ConversationsArgs),
    /// Schedules on the trading calendar: add, list, remove, enable, disable, run now.
    Schedule(schedule::ScheduleArgs),
    /// Run due schedules until stopped (`--once`: one pass; `install`: a systemd user unit).
    Daemon(schedule::DaemonArgs),
    /// Alert rules on a stock, the watchlist or the portfolio: add, list, remove, check, history.
    Alerts(alerts::AlertsArgs),
    /// Push channels for alerts (a JSON webhook so far) and the outbox: add, list, remove, test, outbox, deliver.
    Push(push::PushArgs),
    /// The approval inbox: list, allow ID, deny ID, and the audit log of every decision.
    Approvals(approvals::ApprovalsArgs),
    /// The engine's read-only tools for other agents over MCP: `wyckoff mcp serve [--http ADDR]`.
    Mcp(mcp::McpArgs),
    /// Two-way chat bots (Telegram): add, secret, list, remove, test, pair CODE, approver, run.
    Bot(bot::BotArgs),
    /// The skills `/name args` invokes (built-in and $WYCKOFF_HOME/skills/*.md), with warnings.
    Skills(skills::SkillsArgs),
}

/// A reader that went away (`wyckoff events 000001 | head -1`) is no error of ours: what
/// it wanted was written. `print!` panics on a closed stdout; this ends the process
/// quietly instead, for every command (the default hook handles every other panic).
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        let printing = message.starts_with("failed printing to stdout")
            || message.starts_with("failed printing to stderr");
        if printing && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn main() -> std::process::ExitCode {
    let origin = std::time::Instant::now();
    exit_quietly_on_broken_pipe();
    let cli = Cli::parse();
    let timings = (cli.timings || wyckoff_config::timings::requested_by_env())
        .then(|| wyckoff_config::timings::StageTimings::new(origin));
    if let Some(t) = &timings {
        t.record("start-up", origin, origin.elapsed());
    }
    // Commands that run the agent or talk to other processes log to the data home's
    // `logs/wyckoff.*.log` (secrets redacted), never to stdout/stderr, which are the
    // commands' own (and `mcp serve`'s protocol). The others leave the home untouched.
    let log_guard = matches!(
        cli.command,
        Command::Run(_)
            | Command::Mcp(_)
            | Command::Alerts(_)
            | Command::Push(_)
            | Command::Approvals(_)
            | Command::Schedule(_)
            | Command::Daemon(_)
            | Command::Bot(_)
    )
    .then(|| {
        let home = wyckoff_config::DataHome::from_env();
        wyckoff_config::logging::init_with_timings(
            &home.logs_dir(),
            "wyckoff",
            false,
            timings.as_ref(),
        )
        .ok()
    })
    .flatten();
    if let (None, Some(t)) = (&log_guard, &timings) {
        // a command without a log file: the timings are its only subscriber
        t.install_alone();
    }
    let result = match cli.command {
        Command::Doctor { json } => doctor::run(json),
        Command::Analyze(args) => analyze::run(args),
        Command::Events(args) => events::run(args),
        Command::Market {
            command: Some(MarketCommand::Map(args)),
            ..
        } => market_map::run(args),
        Command::Market { json, .. } => market::run(json),
        Command::Data(args) => data::run(args),
        Command::Memory(args) => memory::run(args),
        Command::Run(args) => run::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Screen(args) => screen::run(args),
        Command::Backtest(args) => backtest::run(args),
        Command::Size(args) => size::run(args),
        Command::Quote(args) => quote::run(args),
        Command::Track(args) => track::run(args),
        Command::Notes(args) => notes::run(args),
        Command::Portfolio(args) => portfolio::run(args),
        Command::Skills(args) => skills::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Alerts(args) => alerts::run(args),
        Command::Push(args) => push::run(args),
        Command::Approvals(args) => approvals::run(args),
        Command::Model(args) => model::run(args),
        Command::Conversations(args) => conversations::run(args),
        Command::Schedule(args) => schedule::run(args),
        Command::Daemon(args) => schedule::daemon(args),
        Command::Bot(args) => bot::run(args),
    };
    if let Some(t) = &timings {
        eprint!("{}", t.report());
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wyckoff: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
}
