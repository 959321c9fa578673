//! Figures of the real app for the note (against its speed targets), not assertions:
//! cold start to interactive, the stock page with 5,000 bars from click to drawn, the
//! `stock_chart` IPC payload, and the idle memory of the app and its WebKit processes
//! (after use under WebDriver, and at rest after a plain launch).
//!
//! Run under Xvfb, on the build you want to measure:
//!   cargo build --release -p wyckoff-desk --features tauri/custom-protocol
//!   WYCKOFF_E2E_APP=$PWD/target/release/wyckoff-desk \
//!     xvfb-run -a -s "-screen 0 1280x800x24" cargo bench -p wyckoff-e2e --bench app_perf
//!
//! The 5,000-bar series is synthetic (a seeded random walk imported for 600036 into a
//! temporary data home); it is never shipped or shown as market data.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{Datelike, NaiveDate};
use thirtyfour::prelude::*;
use wyckoff_desk_lib::{Period, build_chart};
use wyckoff_e2e::wait_for_app_exit;
use wyckoff_e2e::webdriver::{TauriDriver, app_binary, click, screenshot_dir, wait_for};
use wyckoff_market::{MarketConfig, MarketData};

const CODE: &str = "600036";
const BARS: usize = 5_000;
const OPENS: usize = 10;

/// 5,000 weekday bars from 2004, a seeded walk within ±4 % a day.
fn synthetic_csv(path: &Path) {
    let mut seed: u64 = 0x5eed_1234;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as f64) / ((1u64 << 31) as f64)
    };
    let weekdays = NaiveDate::from_ymd_opt(2004, 1, 6)
        .unwrap()
        .iter_days()
        .filter(|d| d.weekday().number_from_monday() <= 5)
        .take(BARS);
    let mut close = 10.0_f64;
    let mut out = String::from("date,code,open,high,low,close,volume,amount\n");
    for day in weekdays {
        let open = close * (1.0 + (next() - 0.5) * 0.02);
        let c = (open * (1.0 + (next() - 0.5) * 0.06)).max(1.0);
        let high = open.max(c) * (1.0 + next() * 0.01);
        let low = open.min(c) * (1.0 - next() * 0.01);
        let volume = 1_000_000.0 + next() * 5_000_000.0;
        out.push_str(&format!(
            "{day},{CODE},{open:.2},{high:.2},{low:.2},{c:.2},{volume:.0},{:.0}\n",
            volume * c
        ));
        close = c;
    }
    std::fs::write(path, out).unwrap();
}

/// (RSS, PSS) in KiB of `pid`, from /proc. PSS splits shared pages (the WebKit and GTK
/// libraries) between the processes mapping them, so it sums honestly.
fn memory_kib(pid: u32) -> (u64, u64) {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        rollup
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("Rss:"), field("Pss:"))
}

/// (pid, parent pid, executable name) of every process.
fn processes() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid …": comm may hold spaces, so split after the last ')'.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let ppid = stat[close + 2..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        out.push((pid, ppid, comm));
    }
    out
}

async fn measure(d: WebDriver, launched: Instant) -> Vec<String> {
    let mut lines = Vec::new();
    wait_for(&d, By::Id("stock-search")).await;
    let interactive = launched.elapsed();
    // The page's own view: navigation start → now (excludes process start and WebDriver).
    let nav_ms = d
        .execute("return Math.round(performance.now());", vec![])
        .await
        .unwrap();
    let since_spawn = app_pid()
        .and_then(process_age_ms)
        .map_or("?".to_string(), |ms| ms.to_string());
    lines.push(format!(
        "cold start → interactive (search box usable): {} ms wall incl. WebDriver session; {since_spawn} ms since the app process started (10 ms ticks); {} ms in the page since navigation",
        interactive.as_millis(),
        nav_ms.json()
    ));

    // A person's first click comes a moment after the window is up; by then the chart
    // warm-up (400 ms after start) has run. A click inside that moment shares the CPU
    // with it.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut drawn = Vec::new();
    for _ in 0..OPENS {
        for code in [CODE, "000001"] {
            let search = wait_for(&d, By::Id("stock-search")).await;
            search.send_keys(code).await.unwrap();
            click(&d, By::Css(format!(".search-hit[data-code='{code}']"))).await;
            let title = format!("//*[@id='stock-title' and contains(., '{code}')]");
            wait_for(&d, By::XPath(title)).await;
            let span = wait_for(&d, By::Id("drawn-ms")).await;
            let ms = |attr: &'static str| {
                let span = span.clone();
                async move {
                    let v = span.attr(attr).await.unwrap().unwrap_or_default();
                    v.parse::<u64>().unwrap_or(0)
                }
            };
            if code == CODE {
                drawn.push((
                    ms("data-ms").await,
                    ms("data-ipc-ms").await,
                    ms("data-build-ms").await,
                ));
            }
        }
    }
    let first = drawn[0];
    let in_order: Vec<u64> = drawn.iter().map(|(ms, _, _)| *ms).collect();
    drawn.sort_unstable();
    let median = drawn[drawn.len() / 2];
    let p90 = drawn[(drawn.len() * 9).div_ceil(10) - 1].0;
    let max = drawn[drawn.len() - 1].0;
    lines.push(format!(
        "stock page, {BARS} bars, click → drawn (page clock), 2 s after start, {OPENS} opens: first {} ms (IPC {} ms, chart build {} ms), then median {} ms (IPC {} ms, chart build {} ms), p90 {p90} ms, max {max} ms; all: {in_order:?}",
        first.0, first.1, first.2, median.0, median.1, median.2,
    ));

    // Panning: drag the 5,000-bar chart across its history while the page records the
    // time between animation frames.
    let search = wait_for(&d, By::Id("stock-search")).await;
    search.send_keys(CODE).await.unwrap();
    click(&d, By::Css(format!(".search-hit[data-code='{CODE}']"))).await;
    wait_for(&d, By::Id("drawn-ms")).await;
    d.execute(
        "window.__frames = []; const tick = (t) => { window.__frames.push(t); if (window.__frames.length < 100000) requestAnimationFrame(tick); }; requestAnimationFrame(tick);",
        vec![],
    )
    .await
    .unwrap();
    let canvas = wait_for(&d, By::Css("#chart-canvas canvas")).await;
    let mut drag = d
        .action_chain()
        .move_to_element_center(&canvas)
        .click_and_hold();
    for _ in 0..40 {
        drag = drag.move_by_offset(12, 0);
    }
    drag.release().perform().await.unwrap();
    let frames: Vec<f64> = d
        .execute(
            "const f = window.__frames; window.__frames = [1e9]; return f.slice(1).map((t, i) => t - f[i]);",
            vec![],
        )
        .await
        .unwrap()
        .convert()
        .unwrap();
    let mut gaps = frames.clone();
    gaps.sort_by(|a, b| a.total_cmp(b));
    if gaps.is_empty() {
        lines.push("pan: no animation frames recorded".into());
    } else {
        lines.push(format!(
            "pan over {BARS} bars (40 drag steps): {} frames, frame gap median {:.1} ms, p95 {:.1} ms, max {:.1} ms",
            gaps.len(),
            gaps[gaps.len() / 2],
            gaps[gaps.len() * 95 / 100],
            gaps[gaps.len() - 1]
        ));
    }

    // After use: let the page settle, then the app and the WebKit processes it started.
    tokio::time::sleep(Duration::from_secs(10)).await;
    match app_pid() {
        Some(pid) => lines.push(format!(
            "idle memory after the opens and the pan (under WebDriver): {}",
            tree_memory(pid)
        )),
        None => lines.push("idle memory after use: app process not found".into()),
    }
    lines
}

/// The running app's pid (the first process named like its binary).
fn app_pid() -> Option<u32> {
    let app_name: String = app_binary()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .take(15)
        .collect();
    processes()
        .into_iter()
        .find(|(_, _, c)| *c == app_name)
        .map(|(pid, _, _)| pid)
}

/// How long ago `pid` started, in ms: the boot clock now (/proc/uptime) less the process's
/// start in clock ticks since boot (/proc/PID/stat field 22). Both count 10 ms steps, and
/// neither includes the WebDriver session set up before the app was spawned.
fn process_age_ms(pid: u32) -> Option<u64> {
    let uptime_s: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 2..];
    // Fields after "(comm)" start at field 3 (state); starttime is field 22.
    let start_ticks: f64 = after_comm.split_whitespace().nth(22 - 3)?.parse().ok()?;
    // The kernel reports process times to user space in USER_HZ, 100 a second on Linux.
    let ticks_per_s = 100.0;
    Some(
        ((uptime_s - start_ticks / ticks_per_s) * 1000.0)
            .max(0.0)
            .round() as u64,
    )
}

/// "app RSS … (PSS …); with its n WebKit processes RSS … (PSS …)" for `app_pid`.
fn tree_memory(app_pid: u32) -> String {
    let children: Vec<u32> = processes()
        .into_iter()
        .filter(|(_, parent, _)| *parent == app_pid)
        .map(|(pid, _, _)| pid)
        .collect();
    let (app_rss, app_pss) = memory_kib(app_pid);
    let (kids_rss, kids_pss) = children
        .iter()
        .map(|p| memory_kib(*p))
        .fold((0, 0), |(r, p), (r2, p2)| (r + r2, p + p2));
    format!(
        "app RSS {} MB (PSS {} MB); with its {} WebKit processes RSS {} MB (PSS {} MB)",
        app_rss / 1024,
        app_pss / 1024,
        children.len(),
        (app_rss + kids_rss) / 1024,
        (app_pss + kids_pss) / 1024
    )
}

/// Idle memory of a plain launch, as a person starts the app (no WebDriver automation
/// session): started on `home` with `env`, measured 12 s later, then stopped.
fn plain_launch_memory(home: &Path, env: &[(&str, &str)]) -> String {
    let xdg = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(app_binary());
    cmd.env("WYCKOFF_HOME", home)
        .env("WYCKOFF_OFFLINE", "1")
        .env("XDG_CONFIG_HOME", xdg.path().join("config"))
        .env("XDG_CACHE_HOME", xdg.path().join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut app = cmd.spawn().unwrap();
    std::thread::sleep(Duration::from_secs(12));
    let figures = tree_memory(app.id());
    let _ = app.kill();
    let _ = app.wait();
    wait_for_app_exit(&app_binary(), Duration::from_secs(15));
    figures
}

#[tokio::main]
async fn main() {
    let home = tempfile::tempdir().unwrap();
    let csv = home.path().join("synthetic-600036.csv");
    synthetic_csv(&csv);
    let md = MarketData::open_with(MarketConfig::offline(home.path()))
        .await
        .unwrap();
    md.import_csv(&csv, &mut |_| {}).await.unwrap();
    let started = Instant::now();
    let chart = build_chart(&md, CODE, Period::Day).await.unwrap();
    let built = started.elapsed();
    let payload = serde_json::to_vec(&chart).unwrap().len();
    drop(md);

    let xdg = tempfile::tempdir().unwrap();
    let driver = TauriDriver::start(home.path(), xdg.path(), &[("WYCKOFF_OFFLINE", "1")]);
    let launched = Instant::now();
    let d = driver.session().await;
    let mut lines = vec![format!("binary: {}", app_binary().display())];
    lines.push(format!(
        "stock_chart({CODE}, day), {} bars: IPC payload {} KiB (columns), built in {} ms (this process)",
        chart.bars.dates.len(),
        payload / 1024,
        built.as_millis()
    ));
    let outcome = tokio::spawn(measure(d.clone(), launched)).await;
    let _ = d.quit().await;
    lines.extend(outcome.unwrap());
    drop(driver);
    wait_for_app_exit(&app_binary(), Duration::from_secs(15));

    // The app as a person starts it, at rest after start-up: WebKit's GL compositing
    // (llvmpipe under Xvfb), then software painting (WYCKOFF_GPU_COMPOSITING=off).
    let gl = plain_launch_memory(home.path(), &[]);
    lines.push(format!("idle memory, plain launch, GL compositing: {gl}"));
    let software = plain_launch_memory(home.path(), &[("WYCKOFF_GPU_COMPOSITING", "off")]);
    lines.push(format!(
        "idle memory, plain launch, software painting: {software}"
    ));
    let text = lines.join("\n") + "\n";
    std::fs::write(screenshot_dir().join("app-perf.txt"), &text).unwrap();
    print!("{text}");
}
