//! Forward tracking: every saved screen run with its candidates in
//! `wyckoff.db`, the candidates' figures 1, 5, 10 and 20 trading days on from the cached
//! bars ([`wyckoff_engine::track`]: bought at the next trading day's open, sold at the close
//! of the N-th trading day after that, under the backtest's T+1, limit and fee rules), hit
//! rates over all tracked signals, and the backfill that replays the funnel as of each
//! past trading day.
//!
//! Figures are never stored: they are computed from the bars each time, so a horizon stays
//! pending until its bar is cached and fills in after the next sync, and a change of the
//! rules reaches every saved screen on its next read — there is no stale figure to redo.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqlitePool;
use wyckoff_engine::board::is_st_name;
use wyckoff_engine::track::{
    HORIZONS, HitRate, Outcome, TrackedSignal, follow, hit_rates, replay_screens,
};
use wyckoff_engine::{AsOfNotes, Bar, Board, FunnelResult, Universe};
use wyckoff_market::MarketData;
use wyckoff_time::iso;

#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    #[error("tracking store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("tracking store migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("reading cached bars: {0}")]
    Market(String),
    #[error("{0}")]
    BadRange(String),
    #[error("backfill worker stopped: {0}")]
    Worker(String),
}

/// Where a saved screen came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// `wyckoff screen --save`.
    Cli,
    /// The `screen_stocks` tool: the window's screens, the agent's and schedules'.
    Tool,
    /// `wyckoff track backfill`.
    Backfill,
}

impl Origin {
    fn as_str(self) -> &'static str {
        match self {
            Origin::Cli => "cli",
            Origin::Tool => "tool",
            Origin::Backfill => "backfill",
        }
    }

    fn parse(s: &str) -> Origin {
        match s {
            "cli" => Origin::Cli,
            "backfill" => Origin::Backfill,
            _ => Origin::Tool,
        }
    }
}

/// A candidate as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedCandidate {
    pub code: String,
    pub name: String,
    pub triggers: Vec<String>,
    pub track: String,
    pub score: f64,
}

/// A screen run as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScreenRecord {
    /// `YYYYMMDD`.
    pub as_of: u32,
    pub saved_at: DateTime<Utc>,
    pub origin: Origin,
    pub board: String,
    /// 水温; `None` when the benchmark did not tell (`UNKNOWN`).
    pub regime: Option<String>,
    pub candidates: Vec<SavedCandidate>,
}

impl ScreenRecord {
    /// The record of a funnel result; `None` when it screened no day (an empty cache).
    pub fn of(result: &FunnelResult, origin: Origin, saved_at: DateTime<Utc>) -> Option<Self> {
        let regime = result.regime.regime.regime.as_str();
        Some(ScreenRecord {
            as_of: result.as_of?,
            saved_at,
            origin,
            board: result.args.board.as_str().to_owned(),
            regime: (regime != "UNKNOWN").then(|| regime.to_owned()),
            candidates: result
                .candidates
                .iter()
                .map(|c| SavedCandidate {
                    code: c.code.clone(),
                    name: c.name.clone(),
                    triggers: c
                        .triggers
                        .iter()
                        .map(|t| t.kind.as_str().to_owned())
                        .collect(),
                    track: format!("{:?}", c.track),
                    score: c.score,
                })
                .collect(),
        })
    }
}

/// A tracked candidate: as saved, with its figures so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TrackedCandidate {
    pub code: String,
    pub name: String,
    pub triggers: Vec<String>,
    pub track: String,
    pub score: f64,
    /// One per horizon of [`HORIZONS`], in that order.
    pub outcomes: Vec<Outcome>,
}

/// A saved screen with its candidates' figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TrackedScreen {
    pub id: i32,
    /// YYYY-MM-DD.
    pub as_of: String,
    /// RFC 3339.
    pub saved_at: String,
    pub origin: Origin,
    pub board: String,
    pub regime: Option<String>,
    pub candidates: Vec<TrackedCandidate>,
}

/// Hit rates over every tracked signal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TrackStats {
    pub screens: u32,
    /// Distinct (day, stock) signals: a stock screened twice on one day counts once.
    pub signals: u32,
    pub horizons: Vec<u32>,
    pub rates: Vec<HitRate>,
}

#[derive(Clone)]
pub struct TrackStore {
    pool: SqlitePool,
}

type ScreenRow = (i64, i64, String, String, String, Option<String>);
type CandidateRow = (i64, String, String, String, String, f64);

impl TrackStore {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations).
    pub async fn new(pool: SqlitePool) -> Result<TrackStore, TrackError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(TrackStore { pool })
    }

    /// Saves a screen run; a backfill replaces an earlier backfill of the same day and
    /// board, so running it twice does not count its signals twice.
    pub async fn save(&self, rec: &ScreenRecord) -> Result<i64, TrackError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        if rec.origin == Origin::Backfill {
            sqlx::query(
                "DELETE FROM track_candidate WHERE screen_id IN
                 (SELECT id FROM track_screen WHERE origin = 'backfill' AND as_of = ? AND board = ?)",
            )
            .bind(i64::from(rec.as_of))
            .bind(&rec.board)
            .execute(&mut *tx)
            .await?;
            sqlx::query(
                "DELETE FROM track_screen WHERE origin = 'backfill' AND as_of = ? AND board = ?",
            )
            .bind(i64::from(rec.as_of))
            .bind(&rec.board)
            .execute(&mut *tx)
            .await?;
        }
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO track_screen (as_of, saved_at, origin, board, regime) VALUES (?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(i64::from(rec.as_of))
        .bind(rec.saved_at.to_rfc3339_opts(SecondsFormat::Secs, true))
        .bind(rec.origin.as_str())
        .bind(&rec.board)
        .bind(&rec.regime)
        .fetch_one(&mut *tx)
        .await?;
        for (rank, c) in rec.candidates.iter().enumerate() {
            sqlx::query(
                "INSERT INTO track_candidate (screen_id, rank, code, name, triggers, track, score) VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(id)
            .bind(i64::try_from(rank).unwrap_or(i64::MAX))
            .bind(&c.code)
            .bind(&c.name)
            .bind(serde_json::to_string(&c.triggers).unwrap_or_else(|_| "[]".into()))
            .bind(&c.track)
            .bind(c.score)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    /// Every saved screen, oldest day first (then in the order saved), with its id.
    pub async fn screens(&self) -> Result<Vec<(i64, ScreenRecord)>, TrackError> {
        let rows: Vec<ScreenRow> = sqlx::query_as(
            "SELECT id, as_of, saved_at, origin, board, regime FROM track_screen ORDER BY as_of, id",
        )
        .fetch_all(&self.pool)
        .await?;
        let cands: Vec<CandidateRow> = sqlx::query_as(
            "SELECT screen_id, code, name, triggers, track, score FROM track_candidate ORDER BY screen_id, rank",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut by_screen: HashMap<i64, Vec<SavedCandidate>> = HashMap::new();
        for (id, code, name, triggers, track, score) in cands {
            by_screen.entry(id).or_default().push(SavedCandidate {
                code,
                name,
                triggers: serde_json::from_str(&triggers).unwrap_or_default(),
                track,
                score,
            });
        }
        Ok(rows
            .into_iter()
            .map(|(id, as_of, saved_at, origin, board, regime)| {
                let rec = ScreenRecord {
                    as_of: u32::try_from(as_of).unwrap_or(0),
                    saved_at: DateTime::parse_from_rfc3339(&saved_at)
                        .map(|t| t.with_timezone(&Utc))
                        .unwrap_or_default(),
                    origin: Origin::parse(&origin),
                    board,
                    regime,
                    candidates: by_screen.remove(&id).unwrap_or_default(),
                };
                (id, rec)
            })
            .collect())
    }
}

/// Every saved screen with its candidates' figures so far, oldest day first.
pub async fn tracked(
    md: &MarketData,
    store: &TrackStore,
) -> Result<Vec<TrackedScreen>, TrackError> {
    let screens = store.screens().await?;
    let codes: BTreeSet<&str> = screens
        .iter()
        .flat_map(|(_, s)| s.candidates.iter().map(|c| c.code.as_str()))
        .collect();
    let bars = md
        .cached_stock_bars(codes.into_iter().map(str::to_owned).collect())
        .await
        .map_err(|e| TrackError::Market(e.to_string()))?;
    let calendar = md.calendar();
    Ok(screens
        .iter()
        .map(|(id, s)| track_screen(*id, s, calendar.next_trading_day(s.as_of), &bars))
        .collect())
}

/// Figures of one saved screen from the given bars (a code without bars stays pending);
/// `next_session` is the market's first trading day after the screen's day, the day its
/// candidates are bought.
pub fn track_screen(
    id: i64,
    s: &ScreenRecord,
    next_session: Option<u32>,
    bars: &HashMap<String, Vec<Bar>>,
) -> TrackedScreen {
    TrackedScreen {
        id: i32::try_from(id).unwrap_or(i32::MAX),
        as_of: iso(s.as_of),
        saved_at: s.saved_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        origin: s.origin,
        board: s.board.clone(),
        regime: s.regime.clone(),
        candidates: s
            .candidates
            .iter()
            .map(|c| TrackedCandidate {
                code: c.code.clone(),
                name: c.name.clone(),
                triggers: c.triggers.clone(),
                track: c.track.clone(),
                score: c.score,
                outcomes: follow(
                    bars.get(&c.code).map(Vec::as_slice).unwrap_or_default(),
                    s.as_of,
                    next_session,
                    &HORIZONS,
                    Board::from_code(&c.code),
                    // the name saved is the one it carried on the screened day
                    is_st_name(&c.name),
                ),
            })
            .collect(),
    }
}

/// Hit rates over the screens' distinct signals: a stock on a day counts once, as first
/// saved.
pub fn stats_of(screens: &[TrackedScreen]) -> TrackStats {
    let mut seen = BTreeSet::new();
    let mut signals = Vec::new();
    for s in screens {
        for c in &s.candidates {
            if seen.insert((s.as_of.clone(), c.code.clone())) {
                signals.push(TrackedSignal {
                    triggers: c.triggers.clone(),
                    track: c.track.clone(),
                    regime: s.regime.clone(),
                    outcomes: c.outcomes.clone(),
                });
            }
        }
    }
    TrackStats {
        screens: u32::try_from(screens.len()).unwrap_or(u32::MAX),
        signals: u32::try_from(signals.len()).unwrap_or(u32::MAX),
        horizons: HORIZONS.to_vec(),
        rates: hit_rates(&signals),
    }
}

/// Hit rates over every saved screen.
pub async fn stats(md: &MarketData, store: &TrackStore) -> Result<TrackStats, TrackError> {
    Ok(stats_of(&tracked(md, store).await?))
}

/// The funnel as of every trading day of the universe's calendar in [from, to]
/// ([`wyckoff_engine::track::replay_screens`]) as backfill records; `progress(done,
/// total, day)` after each day. Pure CPU work.
pub fn replay_records(
    universe: &Universe,
    from: u32,
    to: u32,
    saved_at: DateTime<Utc>,
    progress: &dyn Fn(usize, usize, u32),
) -> Vec<ScreenRecord> {
    let mut out = Vec::new();
    replay_screens(universe, from, to, &mut |done, total, day, result| {
        match result {
            Some(r) => out.extend(ScreenRecord::of(&r, Origin::Backfill, saved_at)),
            None => tracing::warn!(day, "backfill: no screen for this day"),
        }
        progress(done, total, day);
    });
    out
}

/// What a backfill did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackfillReport {
    pub days: usize,
    pub candidates: usize,
    pub stocks: usize,
    /// Which facts of the replayed days were today's (ST from today's names, today's
    /// market caps) and the stocks delisted within them; each fallback a line of `notes`.
    #[serde(default)]
    pub as_of_notes: AsOfNotes,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The point-in-time notes of replaying the days of [`from`, `to`] over `universe`, whose
/// newest bar is today's.
fn backfill_notes(universe: &Universe, days: &[u32]) -> AsOfNotes {
    let (Some(&first), Some(&last)) = (days.first(), days.last()) else {
        return AsOfNotes::default();
    };
    let current = universe
        .stocks
        .iter()
        .filter_map(|s| s.bars.last().map(|b| b.date))
        .max()
        .unwrap_or(last);
    AsOfNotes::of_period(universe, |_| true, first, last, current)
}

/// Replays the funnel over the cache for each trading day in [from, to] and saves each
/// day's screen (replacing an earlier backfill of that day).
pub async fn backfill(
    md: &MarketData,
    store: &TrackStore,
    from: u32,
    to: u32,
    progress: impl Fn(usize, usize, u32) + Send + 'static,
) -> Result<BackfillReport, TrackError> {
    if from > to {
        return Err(TrackError::BadRange(format!(
            "--from {} is after --to {}",
            iso(from),
            iso(to)
        )));
    }
    let loaded = md
        .load_universe(None)
        .await
        .map_err(|e| TrackError::Market(e.to_string()))?;
    let stocks = loaded.universe.stocks.len();
    let saved_at = md.clock().now();
    let (records, as_of_notes) = tokio::task::spawn_blocking(move || {
        let records = replay_records(&loaded.universe, from, to, saved_at, &progress);
        let days: Vec<u32> = records.iter().map(|r| r.as_of).collect();
        let notes = backfill_notes(&loaded.universe, &days);
        (records, notes)
    })
    .await
    .map_err(|e| TrackError::Worker(e.to_string()))?;
    let mut candidates = 0;
    for r in &records {
        candidates += r.candidates.len();
        store.save(r).await?;
    }
    Ok(BackfillReport {
        days: records.len(),
        candidates,
        stocks,
        notes: as_of_notes.lines(),
        as_of_notes,
    })
}
