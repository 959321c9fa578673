//! `wyckoff mcp serve [--http ADDR]`: the engine's read-only tools as a Model Context Protocol
//! server for other agents (Claude Desktop, Cherry Studio, Codex …), over stdio by default or
//! streamable HTTP on a loopback address. Exit status: 0 the client hung up / stopped,
//! 1 the data home or transport failed, 2 bad input (a non-loopback or unparsable address).

use std::process::ExitCode;

use anyhow::Context;

use crate::market::{EXIT_BAD_INPUT, failed, open};

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
    }
}

fn serve(http: Option<String>) -> anyhow::Result<ExitCode> {
    let rt = runtime()?;
    rt.block_on(async {
        // An address that is not loopback is refused before the data home is touched.
        let listener = match &http {
            Some(addr) => match wyckoff_mcp::HttpServer::bind(addr).await {
                Ok(l) => Some(l),
                Err(e @ wyckoff_mcp::ServeError::Bind(..)) => return Ok(failed(e.into())),
                Err(e) => {
                    eprintln!("wyckoff: {e}");
                    return Ok(ExitCode::from(EXIT_BAD_INPUT));
                }
            },
            None => None,
        };
        let md = match open().await {
            Ok(md) => md,
            Err(e) => return Ok(failed(e)),
        };
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
                l.serve(md, stop).await
            }
            None => wyckoff_mcp::serve_stdio(md).await,
        };
        Ok(match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => failed(e.into()),
        })
    })
}
