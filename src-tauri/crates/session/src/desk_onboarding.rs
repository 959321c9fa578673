//! The first hour: what a fresh desk holds, the guided start's steps (choose the data, add
//! a model, import a watchlist; each skippable and resumable) and a TDX install imported
//! whole. The step states are kept in `first_run.json` in the data home beside the
//! settings, so a start left half-way resumes where it stopped, in the app or after a
//! restart.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use specta::Type;
use wyckoff_market::cache::BarTable;
use wyckoff_market::tdx::{TdxError, TdxEvent, TdxImportReport};
use wyckoff_market::{SyncTarget, bundled};

use crate::{Desk, ModelOverrides, SessionError};

/// The file the steps' states are kept in, in the data home.
pub const FIRST_RUN_FILE: &str = "first_run.json";
/// What one stock costs a full sync at the default sources' pace (Eastmoney answers about
/// one request a second): the time estimate the data step shows.
pub const SYNC_SECONDS_PER_CODE: u32 = 1;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    #[default]
    Pending,
    Done,
    Skipped,
}

/// The guided start's steps, as kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct FirstRunSteps {
    #[serde(default)]
    pub data: StepState,
    #[serde(default)]
    pub model: StepState,
    #[serde(default)]
    pub watchlist: StepState,
    /// The user closed the guide (or finished it): it is not shown again.
    #[serde(default)]
    pub finished: bool,
}

/// A step of the guided start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum FirstRunStep {
    Data,
    Model,
    Watchlist,
}

/// What the desk holds now, for the guide and the overview to say.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct DeskContents {
    /// Stocks with stored bars.
    pub stocks: u32,
    /// Of those, stocks with bars after the bundled offline data's last day.
    pub stocks_beyond_bundled: u32,
    pub indices: u32,
    /// The newest stored stock bar (`YYYYMMDD`).
    pub newest_bar: Option<u32>,
    pub watchlist: u32,
    /// The main model `provider/model`, when one is set up.
    pub model: Option<String>,
    /// The stock list's size (names, boards).
    pub stock_list: u32,
}

impl DeskContents {
    /// Nothing beyond what a new install brings: the bundled bars, no model, no watchlist.
    pub fn is_fresh(&self) -> bool {
        self.stocks_beyond_bundled == 0 && self.model.is_none() && self.watchlist == 0
    }
}

/// A full-market sync's size from the cache alone, and the time it would take.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SyncEstimate {
    /// Stocks and indices the sync would fetch.
    pub to_fetch: u32,
    pub already_fresh: u32,
    /// At [`SYNC_SECONDS_PER_CODE`]; a lower bound (retries and raw prices add to it).
    pub seconds: u32,
    /// No live source is enabled: a sync cannot run.
    pub offline: bool,
}

/// A watchlist file read in: what was added and what was not a stock code.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct WatchlistImport {
    pub path: String,
    /// Distinct stock codes in the file.
    pub stocks: u32,
    /// Of those, codes the watchlist did not hold yet.
    pub added: u32,
    /// Lines whose first field is no A-share stock code, as `line N: why` (the first 20).
    pub bad_lines: Vec<String>,
    pub bad_count: u32,
}

/// The stock codes of a watchlist file: the first field of each line (comma, tab or space
/// separated; `600519`, `600519.SH`, `sh600519`), a header line without a code skipped.
/// Returns the codes in order, once each, and the bad lines (1-based).
pub fn parse_watchlist_text(text: &str) -> (Vec<String>, Vec<String>) {
    let mut codes: Vec<String> = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let first = line
            .trim_start_matches('\u{feff}')
            .split([',', '\t', ' ', ';'])
            .map(|f| f.trim().trim_matches('"'))
            .find(|f| !f.is_empty());
        let Some(first) = first else { continue };
        // a header (code, 代码, …): no digit at all
        if i == 0 && !first.bytes().any(|b| b.is_ascii_digit()) {
            continue;
        }
        match wyckoff_market::StockCode::parse(first) {
            Ok(c) => {
                let d = c.digits().to_string();
                if !codes.contains(&d) {
                    codes.push(d);
                }
            }
            Err(e) => bad.push(format!("line {}: {e}", i + 1)),
        }
    }
    (codes, bad)
}

#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct FirstRun {
    /// Show the guide: it is not finished, and the desk is fresh or a step was taken.
    pub show: bool,
    pub steps: FirstRunSteps,
    pub contents: DeskContents,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether the guide shows: a policy of the kept steps and what the desk holds.
pub fn shows(steps: &FirstRunSteps, contents: &DeskContents) -> bool {
    let started = [steps.data, steps.model, steps.watchlist]
        .iter()
        .any(|s| *s != StepState::Pending);
    !steps.finished && (contents.is_fresh() || started)
}

impl Desk {
    fn first_run_path(&self) -> PathBuf {
        self.home().root().join(FIRST_RUN_FILE)
    }

    /// The kept steps; none kept (or an unreadable file, logged) is all pending.
    pub fn first_run_steps(&self) -> FirstRunSteps {
        let path = self.first_run_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %path.display(), error = %e, "first-run state unreadable; starting over");
                FirstRunSteps::default()
            }),
            Err(_) => FirstRunSteps::default(),
        }
    }

    fn keep_first_run(&self, steps: &FirstRunSteps) -> std::io::Result<()> {
        let path = self.first_run_path();
        let tmp = path.with_extension("json.tmp");
        let json = serde_json::to_vec_pretty(steps).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, json)?;
        std::fs::rename(&tmp, &path)?;
        Ok(())
    }

    /// Records a step as done or skipped (`Pending` takes it back), or the guide as
    /// finished; returns the state after.
    pub async fn set_first_run_step(
        &self,
        step: Option<FirstRunStep>,
        state: StepState,
    ) -> Result<FirstRun, SessionError> {
        let mut steps = self.first_run_steps();
        match step {
            Some(FirstRunStep::Data) => steps.data = state,
            Some(FirstRunStep::Model) => steps.model = state,
            Some(FirstRunStep::Watchlist) => steps.watchlist = state,
            None => steps.finished = state != StepState::Pending,
        }
        self.keep_first_run(&steps)?;
        self.first_run().await
    }

    /// What the desk holds now.
    pub async fn desk_contents(&self) -> Result<DeskContents, SessionError> {
        let md = self.market();
        let stocks = md
            .store()
            .coverage(BarTable::Stocks)
            .await
            .map_err(wyckoff_market::MarketError::from)?;
        let indices = md
            .store()
            .coverage(BarTable::Indices)
            .await
            .map_err(wyckoff_market::MarketError::from)?;
        let watchlist = self
            .watchlist()
            .list()
            .await
            .map(|l| l.len())
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "watchlist unreadable");
                0
            });
        let stock_list = md
            .store()
            .load_stocks()
            .await
            .map_err(wyckoff_market::MarketError::from)?
            .len();
        Ok(DeskContents {
            stocks: count(stocks.len()),
            stocks_beyond_bundled: count(
                stocks
                    .iter()
                    .filter(|c| c.last_date > bundled::BARS_LAST_DATE)
                    .count(),
            ),
            indices: count(indices.len()),
            newest_bar: stocks.iter().map(|c| c.last_date).max(),
            watchlist: count(watchlist),
            model: self.services().check_model(&ModelOverrides::default()).ok(),
            stock_list: count(stock_list),
        })
    }

    /// The guide's state: its steps and what the desk holds.
    pub async fn first_run(&self) -> Result<FirstRun, SessionError> {
        let steps = self.first_run_steps();
        let contents = self.desk_contents().await?;
        Ok(FirstRun {
            show: shows(&steps, &contents),
            steps,
            contents,
        })
    }

    /// What a full-market sync would fetch now, and about how long it would take.
    pub async fn full_sync_estimate(&self) -> Result<SyncEstimate, SessionError> {
        let md = self.market();
        let plan = md.sync_plan(&SyncTarget::All).await?;
        let to_fetch = count(plan.stale + plan.missing);
        Ok(SyncEstimate {
            to_fetch,
            already_fresh: count(plan.fresh),
            seconds: to_fetch.saturating_mul(SYNC_SECONDS_PER_CODE),
            offline: md.source_names().is_empty(),
        })
    }

    /// Adds every stock code of a watchlist file (a code per line, any ASCII-compatible encoding; see
    /// [`parse_watchlist_text`]). Nothing is added when any line is bad: the lines are named.
    pub async fn import_watchlist_file(
        &self,
        path: &Path,
    ) -> Result<WatchlistImport, SessionError> {
        let bytes = std::fs::read(path)?;
        // codes are ASCII: a GBK name column reads as replacement characters, harmlessly
        let text = String::from_utf8_lossy(&bytes);
        let (codes, bad) = parse_watchlist_text(&text);
        let mut report = WatchlistImport {
            path: path.display().to_string(),
            stocks: count(codes.len()),
            added: 0,
            bad_count: count(bad.len()),
            bad_lines: bad.into_iter().take(20).collect(),
        };
        if report.bad_count > 0 {
            return Ok(report);
        }
        let now = self.clock().now();
        for c in &codes {
            let w = self.watchlist();
            let known = w
                .contains(c)
                .await
                .map_err(|e| SessionError::Io(std::io::Error::other(e)))?;
            if !known {
                w.add(c, now)
                    .await
                    .map_err(|e| SessionError::Io(std::io::Error::other(e)))?;
                report.added += 1;
            }
        }
        Ok(report)
    }

    /// Imports a TDX install whole (see `wyckoff_market::tdx`): its daily bars (kept
    /// unadjusted until a sync), its 自选股 and custom blocks into the watchlist, and its
    /// industry file.
    pub async fn import_tdx(
        &self,
        path: &Path,
        progress: &mut (dyn FnMut(TdxEvent) + Send),
    ) -> Result<TdxImportReport, TdxError> {
        self.market().import_tdx(path, progress).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(beyond: u32, model: bool, watchlist: u32) -> DeskContents {
        DeskContents {
            stocks: 8 + beyond,
            stocks_beyond_bundled: beyond,
            indices: 0,
            newest_bar: None,
            watchlist,
            model: model.then(|| "claude/x".to_string()),
            stock_list: 0,
        }
    }

    #[test]
    fn the_guide_shows_on_a_fresh_desk_and_while_a_start_is_under_way() {
        let pending = FirstRunSteps::default();
        let started = FirstRunSteps {
            data: StepState::Done,
            ..FirstRunSteps::default()
        };
        let finished = FirstRunSteps {
            finished: true,
            ..FirstRunSteps::default()
        };
        let cases = [
            (pending, contents(0, false, 0), true),
            (pending, contents(5000, false, 0), false),
            (pending, contents(0, true, 0), false),
            (pending, contents(0, false, 3), false),
            // resumed: the data step ran, so the desk is no longer fresh
            (started, contents(5000, false, 0), true),
            (finished, contents(0, false, 0), false),
        ];
        for (i, (steps, c, want)) in cases.into_iter().enumerate() {
            assert_eq!(shows(&steps, &c), want, "case {i}");
        }
    }

    #[test]
    fn a_watchlist_file_gives_its_first_fields_codes_once_each() {
        let (codes, bad) = parse_watchlist_text(
            "\u{feff}code,name\n600519,茅台\nsz000001\t平安\n\n600519.SH\n510300\n",
        );
        assert_eq!(codes, ["600519", "000001"]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with("line 6:"), "{bad:?}");
    }

    #[test]
    fn kept_steps_read_back_and_old_files_fill_in_defaults() {
        let s: FirstRunSteps = serde_json::from_str(r#"{"data":"skipped"}"#).unwrap();
        assert_eq!(s.data, StepState::Skipped);
        assert_eq!(s.model, StepState::Pending);
        assert!(!s.finished);
    }
}
