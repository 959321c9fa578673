//! `wyckoff push …`: push channels (a JSON webhook, WeCom / DingTalk /
//! Feishu robots, Telegram bots; tokens in the keychain) and the durable outbox. Each channel
//! takes the events it is set to (`--events alerts,tasks,schedules,approvals`; alerts by
//! default). `alerts check` queues what fired for every channel taking alerts and sends what is
//! due; `push deliver` sends what is due now (retries of earlier failures). Exit status:
//! 0 ok, 1 the data home failed or a test send was not accepted, 2 bad input.

use std::process::ExitCode;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand, ValueEnum};
use wyckoff_config::{PushSecret, Secrets};
use wyckoff_session::Desk;
use wyckoff_session::domain::alerts::deliver;
use wyckoff_session::domain::push::{
    ChannelKind, DamagedChannel, Delivery, EmailSettings, OutboxStatus, PushError, PushEvent,
    SecretIn, parse_events, split_pasted,
};

use crate::market::{desk, failed, print_json, runtime};

#[derive(Debug, Args)]
pub struct PushArgs {
    #[command(subcommand)]
    command: PushCommand,
    /// JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    /// A JSON POST of each alert to the URL (its secret, if any: `wyckoff push secret NAME`).
    Webhook,
    /// 企业微信 group robot (its key: `wyckoff push secret NAME`).
    Wecom,
    /// 钉钉 custom robot (its access token; `--sign` for the signing secret).
    Dingtalk,
    /// 飞书 custom bot (its hook token; `--sign` for the signing secret).
    Feishu,
    /// Telegram bot (its bot token) to --chat-id.
    Telegram,
    /// E-mail over SMTP with TLS: --url smtps://host[:465] or smtp://host[:587]
    /// (STARTTLS), --from, --to; the password: `wyckoff push secret NAME`.
    Email,
}

#[derive(Debug, Subcommand)]
enum PushCommand {
    /// Add a channel; a robot's token goes to the keychain with `wyckoff push secret NAME`.
    Add {
        name: String,
        #[arg(long, value_enum)]
        kind: Kind,
        /// Where to POST (http or https): the webhook's URL, or a robot API's base address
        /// (default: the official one).
        #[arg(long)]
        url: Option<String>,
        /// Allow a private, loopback or link-local address (a generic webhook only).
        #[arg(long)]
        allow_private: bool,
        /// Telegram: the chat to send to (a group's id is negative: -100…).
        #[arg(long, allow_hyphen_values = true)]
        chat_id: Option<String>,
        /// E-mail: the sender ("Name <a@b.c>" or a@b.c).
        #[arg(long)]
        from: Option<String>,
        /// E-mail: the recipients, comma-separated.
        #[arg(long, value_delimiter = ',')]
        to: Vec<String>,
        /// E-mail: the SMTP login (default: the sender's address).
        #[arg(long)]
        user: Option<String>,
        /// E-mail: also trust this CA certificate (PEM file), for a server whose
        /// certificate an own (company) CA signed.
        #[arg(long, value_name = "PEM")]
        ca_cert: Option<std::path::PathBuf>,
        /// A generic webhook: send its secret (`wyckoff push secret NAME`) in this header
        /// (default: `Authorization: Bearer SECRET`).
        #[arg(long, value_name = "HEADER", conflicts_with = "secret_query")]
        secret_header: Option<String>,
        /// A generic webhook: send its secret as this query parameter; a URL given with
        /// the parameter in it is stored without it and the secret goes to the keychain.
        #[arg(long, value_name = "PARAM")]
        secret_query: Option<String>,
        /// What the channel is sent, comma-separated: alerts (fired alerts), tasks
        /// (finished background tasks), schedules (finished schedule runs), approvals
        /// (calls waiting in the inbox). Default: alerts.
        #[arg(long, default_value = "alerts")]
        events: String,
    },
    /// Set what a channel is sent: `wyckoff push events NAME alerts,tasks`.
    Events { name: String, events: String },
    /// Store a channel's token (or with --sign its signing secret) in the keychain, read
    /// from stdin; `WYCKOFF_PUSH_TOKEN_<NAME>` / `WYCKOFF_PUSH_SIGN_<NAME>` override it.
    Secret {
        name: String,
        #[arg(long)]
        sign: bool,
    },
    /// Every channel.
    List,
    /// Remove a channel (its queued messages then fail).
    Remove { name: String },
    /// Send a test message now and show the channel's answer.
    Test { name: String },
    /// Every message in the outbox with its status and last error.
    Outbox,
    /// Send every queued message that is due.
    Deliver {
        /// The clock, RFC 3339 (e.g. 2026-12-05T08:00:00Z); default now.
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
    },
}

fn events_list(events: &[PushEvent]) -> String {
    wyckoff_session::domain::push::events::events_text(events)
}

/// Names the stored channels that could not be read (each was skipped, no other was).
pub(crate) fn print_damaged(damaged: &[DamagedChannel]) {
    for d in damaged {
        println!(
            "push channel {} is damaged and was skipped: {} (remove it and add it again)",
            d.name, d.why
        );
    }
}

pub(crate) fn print_deliveries(done: &[Delivery]) {
    for d in done {
        let what = d
            .alert_id
            .map_or_else(|| "message".to_owned(), |id| format!("alert {id}"));
        let how = match (d.status, &d.error) {
            (OutboxStatus::Sent, _) => "sent".to_owned(),
            (OutboxStatus::Pending, e) => {
                format!("not delivered, will retry: {}", e.as_deref().unwrap_or(""))
            }
            (OutboxStatus::Failed, e) => format!("failed: {}", e.as_deref().unwrap_or("")),
        };
        let repeat = if d.repeat {
            format!(
                " (an earlier send was interrupted and may have arrived: same delivery id {})",
                d.delivery_id
            )
        } else {
            String::new()
        };
        println!(
            "pushed {what} to {} (attempt {}): {how}{repeat}",
            d.channel, d.attempts
        );
    }
}

/// Keeps a key split off a pasted URL: in the keychain, unless the environment already
/// gives the channel this very key. The error says how to go on without a keychain, and
/// never holds the key.
fn keep_pasted_key(channel: &str, key: &str) -> Result<(), String> {
    let secret = PushSecret {
        channel: channel.to_owned(),
        sign: false,
    };
    let secrets = Secrets::system();
    if secrets
        .get_push(&secret)
        .is_some_and(|(v, _)| v.expose() == key.trim())
    {
        return Ok(());
    }
    secrets.set_push(&secret, key).map(|_| ()).map_err(|e| {
        format!(
            "the URL holds the channel's key, which is kept in the keychain, never in the URL: {}. Nothing was added: set {} to the key in the environment and add the channel again",
            e.to_string().trim_end_matches('.'),
            secret.env_var()
        )
    })
}

fn user_error(e: &anyhow::Error) -> bool {
    e.downcast_ref::<PushError>()
        .is_some_and(PushError::is_user_error)
}

pub fn run(args: PushArgs) -> anyhow::Result<ExitCode> {
    let now = match &args.command {
        PushCommand::Deliver { now: Some(t) } => DateTime::parse_from_rfc3339(t.trim())
            .map(|t| t.to_utc())
            .with_context(|| format!("--now '{t}' is not an RFC 3339 time"))?,
        _ => Utc::now(),
    };
    if let PushCommand::Add {
        kind,
        allow_private: true,
        ..
    } = &args.command
        && !matches!(kind, Kind::Webhook)
    {
        // Same rule as web_fetch: only a webhook the user points at their network.
        bail!("--allow-private is only for a generic webhook (--kind webhook)");
    }
    let rt = runtime()?;
    rt.block_on(async move {
        let desk = match desk().await {
            Ok(desk) => desk,
            Err(e) => return Ok(failed(e)),
        };
        let result = command(&args, &desk, now).await;
        desk.close().await;
        match result {
            Err(e) if user_error(&e) => Err(e),
            Err(e) => Ok(failed(e)),
            Ok(code) => Ok(code),
        }
    })
}

async fn command(args: &PushArgs, desk: &Desk, now: DateTime<Utc>) -> anyhow::Result<ExitCode> {
    let json = args.json;
    let outbox = desk.outbox();
    match &args.command {
        PushCommand::Add {
            name,
            kind,
            url,
            allow_private,
            chat_id,
            from,
            to,
            user,
            ca_cert,
            secret_header,
            secret_query,
            events,
        } => {
            // Checked before anything is stored.
            let events = parse_events(events).map_err(PushError::from)?;
            let secret_in = match (secret_header, secret_query) {
                (Some(h), _) => Some(SecretIn::Header(h.trim().to_owned())),
                (None, Some(q)) => Some(SecretIn::Query(q.trim().to_owned())),
                (None, None) => None,
            };
            if secret_in.is_some() && !matches!(kind, Kind::Webhook) {
                return Err(PushError::SecretInNotWebhook.into());
            }
            if let Some(SecretIn::Header(h)) = &secret_in
                && !wyckoff_session::domain::push::valid_header(h)
            {
                return Err(PushError::BadHeader(h.clone()).into());
            }
            let kind = match kind {
                Kind::Webhook => ChannelKind::Webhook,
                Kind::Wecom => ChannelKind::Wecom,
                Kind::Dingtalk => ChannelKind::Dingtalk,
                Kind::Feishu => ChannelKind::Feishu,
                Kind::Telegram => ChannelKind::Telegram,
                Kind::Email => ChannelKind::Email,
            };
            let channel = if kind == ChannelKind::Email {
                let Some(url) = url else {
                    return Err(PushError::NeedsUrl("e-mail").into());
                };
                // Kept as a full path: a send does not run where the channel was added.
                let ca_cert = match ca_cert {
                    Some(p) => Some(
                        std::path::absolute(p)
                            .map_err(|e| {
                                PushError::Email(format!("CA certificate '{}': {e}", p.display()))
                            })?
                            .to_string_lossy()
                            .into_owned(),
                    ),
                    None => None,
                };
                let settings = EmailSettings {
                    from: from.clone().unwrap_or_default(),
                    to: to.iter().map(|t| t.trim().to_owned()).collect(),
                    username: user.clone(),
                    ca_cert,
                };
                outbox
                    .add_email_channel(name, url, *allow_private, &settings, now)
                    .await?
            } else {
                // A robot's URL as its vendor hands it out holds the key: the key goes to
                // the keychain, the URL is stored without it.
                let (base, key) = match url {
                    Some(u) => {
                        let (b, k) = split_pasted(kind, u, secret_in.as_ref());
                        (Some(b), k)
                    }
                    None => (None, None),
                };
                let channel = outbox
                    .add_channel(
                        name,
                        kind,
                        base.as_deref(),
                        *allow_private,
                        chat_id.as_deref(),
                        now,
                    )
                    .await?;
                let channel = match secret_in {
                    Some(s) => outbox.set_secret_in(&channel.name, Some(s)).await?,
                    None => channel,
                };
                if let Some(key) = key
                    && let Err(e) = keep_pasted_key(&channel.name, &key)
                {
                    // Not kept without its key: every send would fail for want of it.
                    outbox.remove_channel(&channel.name).await?;
                    eprintln!("wyckoff: {e}");
                    return Ok(ExitCode::from(1));
                }
                channel
            };
            let channel = if channel.events == events {
                channel
            } else {
                outbox.set_events(&channel.name, events).await?
            };
            if json {
                print_json(&channel)?;
            } else {
                println!(
                    "added push channel {} ({}): {}; sent {}",
                    channel.name,
                    kind.as_str(),
                    channel.url,
                    events_list(&channel.events)
                );
            }
        }
        PushCommand::Events { name, events } => {
            let events = parse_events(events).map_err(PushError::from)?;
            let channel = outbox.set_events(name, events).await?;
            if json {
                print_json(&channel)?;
            } else {
                println!(
                    "push channel {} is sent {}",
                    channel.name,
                    events_list(&channel.events)
                );
            }
        }
        PushCommand::List => {
            let (channels, damaged) = outbox.channels_checked().await?;
            for d in &damaged {
                eprintln!(
                    "wyckoff: push channel {} is damaged and skipped: {} (remove it and add it again)",
                    d.name, d.why
                );
            }
            if json {
                print_json(&channels)?;
            } else if channels.is_empty() {
                println!("no push channels (add one with `wyckoff push add`)");
            } else {
                for c in &channels {
                    println!(
                        "{}  {}  {}  [{}]{}{}",
                        c.name,
                        c.kind.as_str(),
                        c.url,
                        events_list(&c.events),
                        c.chat_id
                            .as_deref()
                            .map_or_else(String::new, |id| format!("  chat {id}")),
                        if c.allow_private {
                            "  (private allowed)"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
        PushCommand::Secret { name, sign } => {
            let channel = outbox.channel(name).await?;
            let mut value = String::new();
            std::io::stdin()
                .read_line(&mut value)
                .context("reading the secret from stdin")?;
            let secret = PushSecret {
                channel: channel.name.clone(),
                sign: *sign,
            };
            match Secrets::system().set_push(&secret, &value) {
                Ok(_) => println!(
                    "stored the {} of {} in the keychain",
                    if *sign { "signing secret" } else { "token" },
                    channel.name
                ),
                Err(e) => {
                    eprintln!(
                        "wyckoff: {e} (or set {} in the environment)",
                        secret.env_var()
                    );
                    return Ok(ExitCode::from(1));
                }
            }
        }
        PushCommand::Remove { name } => {
            outbox.remove_channel(name).await?;
            let secrets = Secrets::system();
            for sign in [false, true] {
                // Best effort: a keychain that is not there holds nothing to remove.
                let _ = secrets.delete_push(&PushSecret {
                    channel: name.trim().to_owned(),
                    sign,
                });
            }
            if !json {
                println!("removed push channel {}", name.trim());
            } else {
                print_json(&serde_json::json!({ "removed": name.trim() }))?;
            }
        }
        PushCommand::Test { name } => {
            let t = outbox.test(name, now).await?;
            if json {
                print_json(&t)?;
            } else {
                let status = t
                    .http_status
                    .map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
                println!("{}: {status}: {}", t.channel, t.answer);
            }
            if !t.ok {
                return Ok(ExitCode::from(1));
            }
        }
        PushCommand::Outbox => {
            let rows = outbox.rows().await?;
            if json {
                print_json(&rows)?;
            } else if rows.is_empty() {
                println!("the outbox is empty");
            } else {
                for r in &rows {
                    println!(
                        "{:>4}  {}  {}  attempts {}  next {}  id {}{}{}",
                        r.id,
                        r.channel,
                        r.status.as_str(),
                        r.attempts,
                        r.next_attempt_at,
                        r.delivery_id,
                        r.in_flight_since.as_deref().map_or_else(String::new, |t| format!(
                            "  in flight since {t} (if that send was interrupted, it may have arrived)"
                        )),
                        r.last_error
                            .as_deref()
                            .map_or_else(String::new, |e| format!("  last error: {e}"))
                    );
                }
            }
        }
        PushCommand::Deliver { .. } => {
            let done = deliver::deliver(desk.alerts(), outbox, None, now).await?;
            if json {
                print_json(&done)?;
            } else if done.is_empty() {
                println!("nothing due in the outbox");
            } else {
                print_deliveries(&done);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
