//! `wyckoff bot`: two-way chat bots. Add one, give it its token (keychain, or
//! `WYCKOFF_BOT_TOKEN_<NAME>`), pair the senders who may talk to it, and serve it in the
//! foreground (`bot run`; the daemon serves them too).

use std::io::Read;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use tokio_util::sync::CancellationToken;
use wyckoff_session::Desk;
use wyckoff_session::bot_store::BotKind;

use crate::market::{desk, print_json};

#[derive(Debug, Args)]
pub struct BotArgs {
    #[command(subcommand)]
    command: BotCommand,
    /// JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Telegram,
    Dingtalk,
    Feishu,
    Wecom,
}

impl From<Kind> for BotKind {
    fn from(k: Kind) -> BotKind {
        match k {
            Kind::Telegram => BotKind::Telegram,
            Kind::Dingtalk => BotKind::Dingtalk,
            Kind::Feishu => BotKind::Feishu,
            Kind::Wecom => BotKind::Wecom,
        }
    }
}

#[derive(Debug, Subcommand)]
enum BotCommand {
    /// Add a bot (then `bot secret NAME` for its token).
    Add {
        name: String,
        #[arg(long, value_enum)]
        kind: Kind,
        /// The platform's API base instead of its public one (a relay, a test server;
        /// WeCom: its long connection's ws(s):// address).
        #[arg(long)]
        api_url: Option<String>,
        /// Tokens each paired sender may spend a day (default 200000).
        #[arg(long)]
        daily_tokens: Option<i64>,
        /// Messages each paired sender may send to the model a minute (default 6).
        #[arg(long)]
        per_minute: Option<i64>,
    },
    /// Store the bot's token in the keychain, read from stdin
    /// (`WYCKOFF_BOT_TOKEN_<NAME>` overrides it). Telegram: the bot token; DingTalk: the
    /// app's CLIENT_ID:CLIENT_SECRET (AppKey and AppSecret joined by a colon); WeCom: the
    /// 智能机器人's BOT_ID:SECRET.
    Secret { name: String },
    /// The bots, whether their tokens are set, their paired senders and waiting codes.
    List,
    /// Remove a bot, its paired senders and its token (its conversations stay).
    Remove { name: String },
    /// Check the bot's token with the platform (DingTalk: asks for a Stream connection;
    /// WeCom: subscribes on its long connection).
    Test { name: String },
    /// Approve a pairing code a sender got from the bot: the sender may talk to it.
    Pair { code: String },
    /// Let a paired sender decide approval requests from the chat (`--off` to stop).
    Approver {
        name: String,
        sender: String,
        #[arg(long)]
        off: bool,
    },
    /// Forget a paired sender.
    Unpair { name: String, sender: String },
    /// Every inbound message, pairing and decision of the bots (secrets masked).
    Log,
    /// Serve the bots in the foreground until Ctrl-C (all with a token, or the named ones).
    Run {
        names: Vec<String>,
        /// Seconds one long poll waits for a message.
        #[arg(long, default_value_t = 25)]
        poll_timeout: u64,
        /// Milliseconds before the first reconnect (doubling to a minute).
        #[arg(long, default_value_t = 1000)]
        retry_ms: u64,
    },
}

pub fn run(args: BotArgs) -> anyhow::Result<ExitCode> {
    // `bot run` answers several chats at once; the rest do one thing.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let desk = desk().await?;
        let result = command(&args, &desk).await;
        desk.close().await;
        result
    })
}

async fn command(args: &BotArgs, desk: &std::sync::Arc<Desk>) -> anyhow::Result<ExitCode> {
    let json = args.json;
    match &args.command {
        BotCommand::Add {
            name,
            kind,
            api_url,
            daily_tokens,
            per_minute,
        } => {
            let bot = desk
                .bot_add(
                    name.trim(),
                    (*kind).into(),
                    api_url.as_deref(),
                    *daily_tokens,
                    *per_minute,
                )
                .await?;
            if json {
                print_json(&bot)?;
            } else {
                println!(
                    "added {} bot {}; now give it its token: wyckoff bot secret {}",
                    bot.kind.as_str(),
                    bot.name,
                    bot.name
                );
            }
        }
        BotCommand::Secret { name } => {
            let mut value = String::new();
            std::io::stdin()
                .read_to_string(&mut value)
                .context("reading the token from stdin")?;
            let value = value.trim();
            if value.is_empty() {
                anyhow::bail!(
                    "no token on stdin: pipe it in, e.g. `wyckoff bot secret {name} < token.txt`"
                );
            }
            desk.set_bot_token(name, value).await?;
            println!("stored the token of {name} in the keychain");
        }
        BotCommand::List => {
            let bots = desk.bot_list().await?;
            let pending = desk.bot_pending_pairings().await?;
            if json {
                print_json(&serde_json::json!({"bots": bots, "pending_pairings": pending}))?;
            } else {
                if bots.is_empty() {
                    println!("no bots (wyckoff bot add NAME --kind telegram)");
                }
                for b in &bots {
                    println!(
                        "{}  {}  token {}  {} tokens/day, {}/min per sender{}",
                        b.bot.name,
                        b.bot.kind.as_str(),
                        if b.token_set { "set" } else { "missing" },
                        b.bot.daily_tokens,
                        b.bot.per_minute,
                        b.bot
                            .api_url
                            .as_deref()
                            .map_or_else(String::new, |u| format!("  api {u}"))
                    );
                    for s in &b.senders {
                        println!(
                            "  sender {} ({}){}",
                            s.sender_id,
                            s.label,
                            if s.approver { "  approver" } else { "" }
                        );
                    }
                }
                for p in &pending {
                    println!(
                        "waiting: code {} from {} ({}) on {}, until {}",
                        p.code, p.label, p.sender_id, p.bot, p.expires_at
                    );
                }
            }
        }
        BotCommand::Remove { name } => {
            desk.bot_remove(name).await?;
            println!("removed bot {name}");
        }
        BotCommand::Test { name } => match wyckoff_bot::test(desk, name).await {
            Ok(user) => println!("{name}: the platform knows this bot as {user}"),
            Err(e) => {
                eprintln!("wyckoff: {e}");
                return Ok(ExitCode::from(1));
            }
        },
        BotCommand::Pair { code } => {
            let sender = desk.bot_pair(code).await?;
            if json {
                print_json(&sender)?;
            } else {
                println!(
                    "paired {} ({}) with bot {}",
                    sender.label, sender.sender_id, sender.bot
                );
            }
        }
        BotCommand::Approver { name, sender, off } => {
            desk.bot_set_approver(name, sender, !off).await?;
            println!(
                "{sender} {} approve requests from {name}'s chats",
                if *off { "may no longer" } else { "may now" }
            );
        }
        BotCommand::Unpair { name, sender } => {
            desk.bot_unpair(name, sender).await?;
            println!("unpaired {sender} from {name}");
        }
        BotCommand::Log => {
            let log = desk.bot_audit_log().await?;
            if json {
                print_json(&log)?;
            } else {
                for l in &log {
                    println!(
                        "{}  {}  {}  {}  {}",
                        l.at,
                        l.bot,
                        l.kind,
                        l.sender_id.as_deref().unwrap_or("-"),
                        l.detail
                    );
                }
            }
        }
        BotCommand::Run {
            names,
            poll_timeout,
            retry_ms,
        } => {
            let stop = CancellationToken::new();
            {
                let stop = stop.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        stop.cancel();
                    }
                });
            }
            let options = wyckoff_bot::ServeOptions {
                poll: Duration::from_secs(*poll_timeout),
                retry_base: Duration::from_millis(*retry_ms),
                ..wyckoff_bot::ServeOptions::default()
            };
            let served = wyckoff_bot::serve_all(desk.clone(), names, options, stop).await?;
            if served == 0 {
                eprintln!("wyckoff: no bot to serve (add one, and give it its token)");
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
