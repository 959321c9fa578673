//! `wyckoff mcp …`: MCP both ways.
//!
//! - `serve [--http ADDR]`: the engine's read-only tools as a Model Context Protocol server for
//!   other agents (Claude Desktop, Cherry Studio, Codex …), over stdio by default or
//!   streamable HTTP on a loopback address.
//! - `add|list|remove|enable|disable|test|secret`: the MCP servers this home's agent may use
//!   (`mcp_servers.json`; secrets only by name, their values in the keychain).
//! - `tools|pick|max-tools`: which of their tools the model is offered, under which names,
//!   and why any is left out (a cap per server and in total); the user picks.
//!
//! Exit status: 0 ok, 1 a server or the data home failed, 2 bad input (an unknown server,
//! an invalid entry, a non-loopback address).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use wyckoff_config::mcp::{self as config, EnvSecret, HeaderSecret, McpServer, McpTransport};
use wyckoff_config::{DataHome, NamedSecret, Secrets};

use crate::market::{EXIT_BAD_INPUT, EXIT_UNAVAILABLE, desk, failed, print_json};

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Serve the engine's read-only tools over MCP (stdio, or --http on loopback).
    Serve {
        /// Streamable HTTP on this loopback address (127.0.0.1:PORT, [::1]:PORT,
        /// localhost:PORT) at /mcp, instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
    },
    /// Add a server: `add NAME -- COMMAND [ARGS…]` (stdio) or `add NAME --url URL` (HTTP).
    Add(AddArgs),
    /// The configured servers (secrets by name, and whether each is set; never values).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a server.
    Remove { name: String },
    /// Let the agent use a server again.
    Enable { name: String },
    /// Keep a server configured but unused.
    Disable { name: String },
    /// Ask before every call of a server's tools (`on`), or only for tools it does not mark
    /// read-only (`off`).
    AlwaysAsk {
        name: String,
        #[arg(value_parser = ["on", "off"])]
        mode: String,
    },
    /// Trust one tool of a server: it runs without asking (`--remove`: ask again).
    Trust {
        name: String,
        tool: String,
        #[arg(long)]
        remove: bool,
    },
    /// Connect to a server (with a time limit) and print its name, version and tools.
    Test {
        name: String,
        #[arg(long)]
        json: bool,
        /// Seconds to wait for the server (start, handshake, tool list).
        #[arg(long, value_name = "SECS", default_value_t = 20)]
        timeout: u64,
    },
    /// Store a named secret in the keychain, read from one line of stdin (`--delete` removes it).
    Secret {
        name: String,
        #[arg(long)]
        delete: bool,
    },
    /// Connect the enabled servers and show which tools the model is offered, under which
    /// names, and why any is left out.
    Tools {
        #[arg(long)]
        json: bool,
        /// Seconds to wait for the servers (start, handshake, tool list).
        #[arg(long, value_name = "SECS", default_value_t = 20)]
        timeout: u64,
    },
    /// Offer only these tools of a server (their MCP names), or `--all`: its tools in its
    /// order, up to its cap.
    Pick {
        name: String,
        #[arg(required_unless_present = "all")]
        tools: Vec<String>,
        #[arg(long, conflicts_with = "tools")]
        all: bool,
    },
    /// Cap the tools offered: of one server (`--server NAME`) or of all together; VALUE is
    /// a number or `default`.
    MaxTools {
        value: String,
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// 1–32 lowercase letters, digits, '-' or '_'.
    pub name: String,
    /// A streamable-HTTP server's endpoint (instead of a command).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// The secret sent in a header to an HTTP server (its name; the value stays in the keychain).
    #[arg(long, value_name = "SECRET", requires = "url")]
    pub header_secret: Option<String>,
    /// The header --header-secret goes in (`Authorization` gets `Bearer ` before a bare token).
    #[arg(
        long,
        value_name = "HEADER",
        default_value = "Authorization",
        requires = "header_secret"
    )]
    pub header: String,
    /// An environment variable of a stdio server from a named secret: VAR=SECRET (repeatable).
    #[arg(long = "env", value_name = "VAR=SECRET", conflicts_with = "url")]
    pub env: Vec<String>,
    /// Ask before every call of this server's tools, even those it marks read-only.
    #[arg(long)]
    pub always_ask: bool,
    /// The command and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Several workers: a long screen must not stall a quick call on another request.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

pub fn run(a: McpArgs) -> anyhow::Result<ExitCode> {
    match a.command {
        McpCommand::Serve { http } => serve(http),
        McpCommand::Add(args) => add(args),
        McpCommand::List { json } => list(json),
        McpCommand::Remove { name } => edit(&name, |l| l.remove(&name).map(|_| ()), "removed"),
        McpCommand::Enable { name } => edit(&name, |l| l.set_enabled(&name, true), "enabled"),
        McpCommand::Disable { name } => edit(&name, |l| l.set_enabled(&name, false), "disabled"),
        McpCommand::AlwaysAsk { name, mode } => {
            let on = mode == "on";
            let done = if on {
                "always asks:"
            } else {
                "asks only for tools that may write:"
            };
            edit(&name, |l| l.set_always_ask(&name, on), done)
        }
        McpCommand::Trust { name, tool, remove } => {
            let done = format!(
                "{} {tool} of",
                if remove {
                    "no longer trusting"
                } else {
                    "trusting"
                }
            );
            edit(&name, |l| l.set_trusted(&name, &tool, !remove), &done)
        }
        McpCommand::Test {
            name,
            json,
            timeout,
        } => test(&name, json, timeout),
        McpCommand::Secret { name, delete } => secret(&name, delete),
        McpCommand::Tools { json, timeout } => tools(json, timeout),
        McpCommand::Pick { name, tools, all } => {
            let picked = (!all).then_some(tools);
            let done = match &picked {
                Some(t) => format!("offering only {} of", t.join(", ")),
                None => "offering every tool (up to its cap) of".to_owned(),
            };
            edit(&name, |l| l.set_offered(&name, picked), &done)
        }
        McpCommand::MaxTools { value, server } => max_tools(&value, server.as_deref()),
    }
}

fn bad_input(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("wyckoff: {msg}");
    ExitCode::from(EXIT_BAD_INPUT)
}

fn list_path() -> std::path::PathBuf {
    config::path_in(DataHome::from_env().root())
}

/// Bad entries and unknown names are the user's to fix (2); a file that cannot be read or
/// written is not (1).
fn config_failure(e: config::McpConfigError) -> ExitCode {
    match e {
        config::McpConfigError::Invalid { .. }
        | config::McpConfigError::NotFound(_)
        | config::McpConfigError::Exists(_) => bad_input(e),
        other => failed(other.into()),
    }
}

fn entry_from(a: AddArgs) -> Result<McpServer, String> {
    let transport = match (a.url, a.command.split_first()) {
        (Some(url), _) => McpTransport::Http {
            url,
            header_secret: a.header_secret.map(|secret| HeaderSecret {
                header: a.header,
                secret,
            }),
        },
        (None, Some((command, args))) => McpTransport::Stdio {
            command: command.clone(),
            args: args.to_vec(),
            env: a
                .env
                .iter()
                .map(|pair| {
                    pair.split_once('=')
                        .map(|(var, secret)| EnvSecret {
                            var: var.to_owned(),
                            secret: secret.to_owned(),
                        })
                        .ok_or_else(|| format!("--env takes VAR=SECRET, got {pair:?}"))
                })
                .collect::<Result<_, _>>()?,
        },
        (None, None) => {
            return Err(
                "give the server's command after `--` (add NAME -- COMMAND [ARGS…]) or --url URL"
                    .to_owned(),
            );
        }
    };
    Ok(McpServer {
        name: a.name,
        transport,
        enabled: true,
        always_ask: a.always_ask,
        trusted_tools: Vec::new(),
        max_tools: None,
        offered_tools: None,
    })
}

fn add(a: AddArgs) -> anyhow::Result<ExitCode> {
    let entry = match entry_from(a) {
        Ok(e) => e,
        Err(msg) => return Ok(bad_input(msg)),
    };
    let path = list_path();
    let mut servers = match config::load(&path) {
        Ok(l) => l,
        Err(e) => return Ok(config_failure(e)),
    };
    let name = entry.name.clone();
    if let Err(e) = servers
        .add(entry)
        .and_then(|()| config::save(&path, &servers))
    {
        return Ok(config_failure(e));
    }
    println!("added MCP server {name} (check it with `wyckoff mcp test {name}`)");
    Ok(ExitCode::SUCCESS)
}

fn edit(
    name: &str,
    change: impl FnOnce(&mut config::McpServers) -> Result<(), config::McpConfigError>,
    done: &str,
) -> anyhow::Result<ExitCode> {
    let path = list_path();
    let result = config::load(&path).and_then(|mut servers| {
        change(&mut servers)?;
        config::save(&path, &servers)
    });
    Ok(match result {
        Ok(()) => {
            println!("{done} MCP server {name}");
            ExitCode::SUCCESS
        }
        Err(e) => config_failure(e),
    })
}

/// Each secret an entry names, with whether it is set (never its value).
fn secret_names(s: &McpServer) -> Vec<String> {
    match &s.transport {
        McpTransport::Stdio { env, .. } => env.iter().map(|e| e.secret.clone()).collect(),
        McpTransport::Http { header_secret, .. } => {
            header_secret.iter().map(|h| h.secret.clone()).collect()
        }
    }
}

fn list(json: bool) -> anyhow::Result<ExitCode> {
    let servers = match config::load(&list_path()) {
        Ok(l) => l,
        Err(e) => return Ok(config_failure(e)),
    };
    let secrets = Secrets::system();
    let is_set = |name: &str| secrets.get_named(&NamedSecret(name.to_owned())).is_some();
    if json {
        let rows: Vec<serde_json::Value> = servers
            .servers
            .iter()
            .map(|s| {
                let named: Vec<serde_json::Value> = secret_names(s)
                    .iter()
                    .map(|n| serde_json::json!({"name": n, "set": is_set(n)}))
                    .collect();
                let mut v = serde_json::to_value(s).unwrap_or_default();
                v["secrets"] = serde_json::Value::Array(named);
                v
            })
            .collect();
        print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    if servers.servers.is_empty() {
        println!("no MCP servers (add one: wyckoff mcp add NAME -- COMMAND [ARGS…], or --url URL)");
    }
    for s in &servers.servers {
        let what = match &s.transport {
            McpTransport::Stdio { command, args, .. } => {
                format!("stdio: {command} {}", args.join(" "))
            }
            McpTransport::Http { url, .. } => format!("http: {url}"),
        };
        let mut flags = vec![if s.enabled { "enabled" } else { "disabled" }];
        if s.always_ask {
            flags.push("always asks");
        }
        let trusted = s.trusted_tools.join(", ");
        println!(
            "{:<16} {:<20} {}",
            s.name,
            flags.join(", "),
            what.trim_end()
        );
        if !trusted.is_empty() {
            println!("{:<16}   trusted tools: {trusted}", "");
        }
        if let Some(cap) = s.max_tools {
            println!("{:<16}   offers at most {cap} tools", "");
        }
        if let Some(picked) = &s.offered_tools {
            println!("{:<16}   offers only: {}", "", picked.join(", "));
        }
        for n in secret_names(s) {
            println!(
                "{:<16}   secret {n}: {}",
                "",
                if is_set(&n) { "set" } else { "NOT SET" }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn test(name: &str, json: bool, timeout: u64) -> anyhow::Result<ExitCode> {
    if timeout == 0 {
        return Ok(bad_input("--timeout must be at least 1 second"));
    }
    let servers = match config::load(&list_path()) {
        Ok(l) => l,
        Err(e) => return Ok(config_failure(e)),
    };
    let Some(entry) = servers.get(name).cloned() else {
        return Ok(config_failure(config::McpConfigError::NotFound(
            name.to_owned(),
        )));
    };
    let secrets = Secrets::system();
    let lookup = |n: &NamedSecret| secrets.get_named(n).map(|(v, _)| v.expose().to_owned());
    let rt = runtime()?;
    let report = rt.block_on(wyckoff_session::domain::mcp::client::probe(
        &entry,
        &lookup,
        Duration::from_secs(timeout),
    ));
    // a stdio server that ignores the end of its stdin must not keep us waiting
    rt.shutdown_timeout(Duration::from_secs(2));
    let report = match report {
        Ok(r) => r,
        Err(e) => {
            eprintln!("wyckoff: {e}");
            return Ok(ExitCode::from(EXIT_UNAVAILABLE));
        }
    };
    if json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: {} {} (MCP {}){}, {} tools",
        report.server,
        report.name,
        report.version,
        report.protocol_version,
        if entry.enabled { "" } else { ", disabled" },
        report.tools.len()
    );
    for t in &report.tools {
        let first = t
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or("");
        let ro = if t.read_only == Some(true) {
            "read-only"
        } else {
            "may write"
        };
        println!("  {:<32} {:<10} {first}", t.name, ro);
    }
    Ok(ExitCode::SUCCESS)
}

fn max_tools(value: &str, server: Option<&str>) -> anyhow::Result<ExitCode> {
    let max = match value {
        "default" => None,
        n => match n.parse::<u32>() {
            Ok(n) => Some(n),
            Err(_) => {
                return Ok(bad_input(format!(
                    "max-tools takes a number or `default`, got {n:?}"
                )));
            }
        },
    };
    let path = list_path();
    let result = config::load(&path).and_then(|mut servers| {
        servers.set_max_tools(server, max)?;
        config::save(&path, &servers)?;
        Ok(servers)
    });
    let servers = match result {
        Ok(s) => s,
        Err(e) => return Ok(config_failure(e)),
    };
    match server {
        Some(name) => {
            let cap = servers.get(name).map_or(0, McpServer::tool_cap);
            println!("MCP server {name} offers at most {cap} tools");
        }
        None => println!(
            "MCP servers offer at most {} tools in all",
            servers.total_tool_cap()
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// What `wyckoff mcp tools --json` prints.
#[derive(serde::Serialize)]
struct ToolsReport {
    /// The cap on all servers' tools together.
    max_tools: u32,
    offered: usize,
    tools: Vec<wyckoff_session::domain::mcp::offer::Placed>,
    /// Servers that could not be reached, with why.
    unreachable: Vec<Unreachable>,
}

#[derive(serde::Serialize)]
struct Unreachable {
    server: String,
    error: String,
}

fn tools(json: bool, timeout: u64) -> anyhow::Result<ExitCode> {
    if timeout == 0 {
        return Ok(bad_input("--timeout must be at least 1 second"));
    }
    let servers = match config::load(&list_path()) {
        Ok(l) => l,
        Err(e) => return Ok(config_failure(e)),
    };
    let secrets = std::sync::Arc::new(Secrets::system());
    let rt = runtime()?;
    let (placed, failed) = rt.block_on(async {
        let hub = wyckoff_session::domain::mcp::agent_tools::McpHub::with_secrets(
            secrets,
            Duration::from_secs(timeout),
        );
        hub.set_servers(&servers).await;
        let (_, failed) = hub.agent_tools().await;
        (hub.placed(), failed)
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    let report = ToolsReport {
        max_tools: servers.total_tool_cap(),
        offered: placed.iter().filter(|p| p.left_out.is_none()).count(),
        tools: placed,
        unreachable: failed
            .into_iter()
            .map(|(server, error)| Unreachable { server, error })
            .collect(),
    };
    if json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} MCP tools offered to the model (at most {} in all)",
        report.offered, report.max_tools
    );
    for s in servers.servers.iter().filter(|s| s.enabled) {
        let mine: Vec<&wyckoff_session::domain::mcp::offer::Placed> =
            report.tools.iter().filter(|p| p.server == s.name).collect();
        if let Some(u) = report.unreachable.iter().find(|u| u.server == s.name) {
            println!("{}: not reached: {}", s.name, u.error);
            continue;
        }
        let offered = mine.iter().filter(|p| p.left_out.is_none()).count();
        let pick = if s.offered_tools.is_some() {
            ", picked by you"
        } else {
            ""
        };
        println!(
            "{}: {offered} of {} tools offered (at most {}{pick})",
            s.name,
            mine.len(),
            s.tool_cap()
        );
        for p in mine {
            let how = match &p.left_out {
                None if p.renamed => "offered, renamed: another tool has its name".to_owned(),
                None => "offered".to_owned(),
                Some(why) => format!("left out: {why}"),
            };
            println!("  {:<32} {:<40} {how}", p.tool, p.name);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn secret(name: &str, delete: bool) -> anyhow::Result<ExitCode> {
    if !config::is_valid_name(name) {
        return Ok(bad_input(format!(
            "secret name {name:?}: use 1–32 lowercase letters, digits, '-' or '_'"
        )));
    }
    let named = NamedSecret(name.to_owned());
    let secrets = Secrets::system();
    if delete {
        return Ok(match secrets.delete_named(&named) {
            Ok(()) => {
                println!("deleted secret {name}");
                ExitCode::SUCCESS
            }
            Err(e) => failed(e.into()),
        });
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the secret from stdin")?;
    Ok(
        match secrets.set_named(&named, line.trim_end_matches(['\r', '\n'])) {
            Ok(_) => {
                println!("stored secret {name} in the keychain");
                ExitCode::SUCCESS
            }
            Err(wyckoff_config::SecretError::Empty) => bad_input("the secret is empty"),
            Err(e) => {
                eprintln!("wyckoff: {e} (or set {} instead)", named.env_var());
                ExitCode::from(EXIT_UNAVAILABLE)
            }
        },
    )
}

fn serve(http: Option<String>) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    rt.block_on(async {
        // An address that is not loopback is refused before the data home is touched.
        let listener = match &http {
            Some(addr) => match wyckoff_session::domain::mcp::HttpServer::bind(addr).await {
                Ok(l) => Some(l),
                Err(e @ wyckoff_session::domain::mcp::ServeError::Bind(..)) => {
                    return Ok(failed(e.into()));
                }
                Err(e) => {
                    eprintln!("wyckoff: {e}");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
            },
            None => None,
        };
        let desk = match desk().await {
            Ok(desk) => desk,
            Err(e) => return Ok(failed(e)),
        };
        // Served under the risk settings of this data home, as the app and the CLI size.
        let served = match listener {
            Some(l) => {
                // stderr: stdout stays clean, and a supervisor reads where to connect
                eprintln!("wyckoff: MCP (streamable HTTP) on {}", l.url());
                let stop = tokio_util::sync::CancellationToken::new();
                let on_signal = stop.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        on_signal.cancel();
                    }
                });
                desk.serve_mcp_http(l, stop).await
            }
            None => desk.serve_mcp_stdio().await,
        };
        desk.close().await;
        Ok(match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => failed(e.into()),
        })
    })
}
