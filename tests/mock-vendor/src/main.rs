//! `wyckoff-mock-vendor --script FILE.json [--port N] [--record FILE.jsonl]`: serves a
//! script of vendor responses for end-to-end tests (format: see the library docs).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use wyckoff_mock_vendor::{MockServer, Script};

struct Args {
    script: PathBuf,
    port: u16,
    record: Option<PathBuf>,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut script = None;
    let mut port = 0u16;
    let mut record = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--script" => script = Some(PathBuf::from(it.next().context("--script needs a file")?)),
            "--port" => {
                port = it
                    .next()
                    .context("--port needs a number")?
                    .parse()
                    .context("--port must be a number 0-65535")?
            }
            "--record" => record = Some(PathBuf::from(it.next().context("--record needs a file")?)),
            "-h" | "--help" => {
                bail!(
                    "usage: wyckoff-mock-vendor --script FILE.json [--port N] [--record FILE.jsonl]"
                )
            }
            other => bail!("unknown argument {other}; see --help"),
        }
    }
    Ok(Args {
        script: script.context("--script FILE.json is required")?,
        port,
        record,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let text = std::fs::read_to_string(&args.script)
        .with_context(|| format!("reading {}", args.script.display()))?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
        .await
        .context("binding 127.0.0.1")?;
    let own_url = format!("http://{}", listener.local_addr()?);
    let text = text.replace("{{MOCK_URL}}", &own_url);
    let script: Script = serde_json::from_str(&text)
        .with_context(|| format!("parsing script {}", args.script.display()))?;
    let server = MockServer::start_on(listener, script).context("starting the server")?;
    if let Some(path) = args.record {
        server.record_to(path);
    }
    {
        let mut out = std::io::stdout().lock();
        // The one line e2e harnesses wait for; the rest of the protocol is HTTP.
        writeln!(out, "listening {}", server.url())?;
        out.flush()?;
    }
    server.wait().await;
    Ok(())
}
