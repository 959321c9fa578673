//! Schedules and their runs in `wyckoff.db`. An occurrence is claimed by inserting its
//! run row: the unique (schedule, occurrence) key makes "never twice" hold across
//! processes sharing the data home.

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqlitePool;
use wyckoff_protocol::{RunStatus, TaskRequest};

use crate::when::{Occurrence, When, WhenError, format_minute, parse_minute};

/// What a schedule does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Job {
    /// Model-free work as a background task: a screen, a backtest, a full sync.
    Task { request: TaskRequest },
    /// A prompt or a `/skill` for the agent, in the schedule's own conversation.
    Prompt { text: String },
}

impl Job {
    pub fn needs_model(&self) -> bool {
        matches!(self, Job::Prompt { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub name: String,
    pub when: When,
    pub job: Job,
    pub enabled: bool,
    /// Beijing time its rule last took effect (added, edited, switched on): occurrences
    /// before it never run, so a change never brings back a run of a time it did not have.
    pub counted_from: NaiveDateTime,
    /// A prompt schedule's conversation (after its first run).
    pub conversation_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleRun {
    pub id: i64,
    pub schedule: String,
    /// The due time it ran for (Beijing, `YYYY-MM-DD HH:MM`); `None` for "run now".
    pub occurrence: Option<String>,
    /// It ran late, for a due time the process missed.
    pub catch_up: bool,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub status: RunStatus,
    pub summary: Option<String>,
    pub error: Option<String>,
    /// The background task it started (a model-free job).
    pub task_id: Option<String>,
    /// The conversation it ran in (a prompt).
    pub conversation_id: Option<String>,
    /// Its due day was past the known trading calendar: a weekday was assumed to be a
    /// trading day.
    #[serde(default)]
    pub assumed_trading_day: bool,
}

/// The stored schedules: those that can be read, and the damaged rows set apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    pub schedules: Vec<Schedule>,
    pub damaged: Vec<DamagedSchedule>,
}

/// A stored schedule row that cannot be read: skipped by every pass, named in every list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct DamagedSchedule {
    pub name: String,
    pub why: String,
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEnd {
    pub summary: Option<String>,
    pub error: Option<String>,
    pub task_id: Option<String>,
    pub conversation_id: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("a schedule named '{0}' already exists")]
    Exists(String),
    #[error("no schedule named '{0}' (see `wyckoff schedule list`)")]
    NotFound(String),
    #[error("a schedule name is 1–40 letters, digits, '-' or '_': '{0}'")]
    BadName(String),
    #[error(transparent)]
    When(#[from] WhenError),
    #[error("stored schedule '{name}' is damaged: {why}")]
    Corrupt { name: String, why: String },
    #[error("schedule store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("schedule store migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

fn valid_name(name: &str) -> bool {
    (1..=40).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

#[derive(Clone)]
pub struct ScheduleStore {
    pool: SqlitePool,
}

type ScheduleRow = (String, String, String, bool, String, Option<String>);
type RunRow = (
    i64,
    String,
    Option<String>,
    bool,
    String,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
);

impl ScheduleStore {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations).
    pub async fn new(pool: SqlitePool) -> Result<ScheduleStore, StoreError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(ScheduleStore { pool })
    }

    /// Stores a new schedule (its rule checked first; nothing stored on a bad one).
    pub async fn add(&self, schedule: &Schedule) -> Result<(), StoreError> {
        if !valid_name(&schedule.name) {
            return Err(StoreError::BadName(schedule.name.clone()));
        }
        schedule.when.validate()?;
        let done = sqlx::query(
            "INSERT OR IGNORE INTO schedule (name, when_json, job_json, enabled, created_at, conversation_id) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&schedule.name)
        .bind(to_json(&schedule.when))
        .bind(to_json(&schedule.job))
        .bind(schedule.enabled)
        .bind(format_minute(schedule.counted_from))
        .bind(&schedule.conversation_id)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Exists(schedule.name.clone()));
        }
        Ok(())
    }

    /// Every schedule, by name; a row that cannot be read is set apart with why, so one
    /// damaged row never hides or stops the others.
    pub async fn list(&self) -> Result<Listing, StoreError> {
        let rows: Vec<ScheduleRow> = sqlx::query_as(
            "SELECT name, when_json, job_json, enabled, created_at, conversation_id FROM schedule ORDER BY name",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut listing = Listing::default();
        for row in rows {
            match schedule_of(row) {
                Ok(schedule) => listing.schedules.push(schedule),
                Err(StoreError::Corrupt { name, why }) => {
                    listing.damaged.push(DamagedSchedule { name, why });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(listing)
    }

    pub async fn get(&self, name: &str) -> Result<Schedule, StoreError> {
        let row: Option<ScheduleRow> = sqlx::query_as(
            "SELECT name, when_json, job_json, enabled, created_at, conversation_id FROM schedule WHERE name = ?",
        )
        .bind(name)
        .fetch_optional(&self.pool)
        .await?;
        row.map(schedule_of)
            .transpose()?
            .ok_or_else(|| StoreError::NotFound(name.to_owned()))
    }

    /// Removes the schedule and its run history.
    pub async fn remove(&self, name: &str) -> Result<(), StoreError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        let done = sqlx::query("DELETE FROM schedule WHERE name = ?")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(name.to_owned()));
        }
        sqlx::query("DELETE FROM schedule_run WHERE schedule = ?")
            .bind(name)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Switches the schedule on or off; switched on at `now` (Beijing), it counts due times
    /// from then: what fell due while it was off is not caught up.
    pub async fn set_enabled(
        &self,
        name: &str,
        enabled: bool,
        now: NaiveDateTime,
    ) -> Result<(), StoreError> {
        // `created_at` holds `counted_from` (the column predates edits).
        let done = sqlx::query(
            "UPDATE schedule SET enabled = ?, created_at = CASE WHEN ? AND NOT enabled THEN ? ELSE created_at END WHERE name = ?",
        )
        .bind(enabled)
        .bind(enabled)
        .bind(format_minute(now))
        .bind(name)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(name.to_owned()));
        }
        Ok(())
    }

    /// Changes the schedule's rule and job at `now` (Beijing), checked first (nothing
    /// changed on a bad rule). Its runs and conversation stay; due times count from `now`.
    pub async fn update(
        &self,
        name: &str,
        when: &When,
        job: &Job,
        now: NaiveDateTime,
    ) -> Result<(), StoreError> {
        when.validate()?;
        let done = sqlx::query(
            "UPDATE schedule SET when_json = ?, job_json = ?, created_at = ? WHERE name = ?",
        )
        .bind(to_json(when))
        .bind(to_json(job))
        .bind(format_minute(now))
        .bind(name)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound(name.to_owned()));
        }
        Ok(())
    }

    /// Keeps the conversation a prompt schedule's runs continue.
    pub async fn set_conversation(&self, name: &str, id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE schedule SET conversation_id = ? WHERE name = ?")
            .bind(id)
            .bind(name)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Takes `occurrence` of `name` for this process: the run's id, or `None` when a run
    /// for it already exists (this process or another took it).
    pub async fn claim(
        &self,
        name: &str,
        occurrence: &Occurrence,
        catch_up: bool,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<i64>, StoreError> {
        let id: Option<i64> = sqlx::query_scalar(
            "INSERT OR IGNORE INTO schedule_run (schedule, occurrence, catch_up, assumed_trading_day, started_at, status, owner) VALUES (?, ?, ?, ?, ?, 'running', ?) RETURNING id",
        )
        .bind(name)
        .bind(format_minute(occurrence.at))
        .bind(catch_up)
        .bind(occurrence.assumed_trading_day)
        .bind(now.to_rfc3339())
        .bind(owner)
        .fetch_optional(&self.pool)
        .await?;
        Ok(id)
    }

    /// A run outside the schedule ("run now").
    pub async fn start_manual(
        &self,
        name: &str,
        owner: &str,
        now: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        self.get(name).await?;
        Ok(sqlx::query_scalar(
            "INSERT INTO schedule_run (schedule, occurrence, catch_up, started_at, status, owner) VALUES (?, NULL, 0, ?, 'running', ?) RETURNING id",
        )
        .bind(name)
        .bind(now.to_rfc3339())
        .bind(owner)
        .fetch_one(&self.pool)
        .await?)
    }

    pub async fn finish(
        &self,
        run: i64,
        status: RunStatus,
        end: &RunEnd,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE schedule_run SET status = ?, finished_at = ?, summary = ?, error = ?, task_id = ?, conversation_id = ? WHERE id = ?",
        )
        .bind(status_text(status))
        .bind(now.to_rfc3339())
        .bind(&end.summary)
        .bind(&end.error)
        .bind(&end.task_id)
        .bind(&end.conversation_id)
        .bind(run)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The schedule's runs, newest first.
    pub async fn runs(&self, name: &str, limit: u32) -> Result<Vec<ScheduleRun>, StoreError> {
        let rows: Vec<RunRow> = sqlx::query_as(
            "SELECT id, schedule, occurrence, catch_up, started_at, finished_at, status, summary, error, task_id, conversation_id, assumed_trading_day FROM schedule_run WHERE schedule = ? ORDER BY id DESC LIMIT ?",
        )
        .bind(name)
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(run_of).collect()
    }

    /// Runs still marked running whose process is gone become interrupted (their
    /// occurrence stays taken: it is not run twice).
    pub async fn mark_interrupted(
        &self,
        is_alive: &(dyn Fn(&str) -> bool + Sync),
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        let running: Vec<(i64, Option<String>)> =
            sqlx::query_as("SELECT id, owner FROM schedule_run WHERE status = 'running'")
                .fetch_all(&self.pool)
                .await?;
        let mut n = 0;
        for (id, owner) in running {
            if owner.as_deref().is_some_and(is_alive) {
                continue;
            }
            sqlx::query(
                "UPDATE schedule_run SET status = 'interrupted', finished_at = ?, error = 'the process running it stopped' WHERE id = ? AND status = 'running'",
            )
            .bind(now.to_rfc3339())
            .bind(id)
            .execute(&self.pool)
            .await?;
            n += 1;
        }
        Ok(n)
    }
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn schedule_of(r: ScheduleRow) -> Result<Schedule, StoreError> {
    let (name, when_json, job_json, enabled, counted_from, conversation_id) = r;
    let corrupt = |why: String| StoreError::Corrupt {
        name: name.clone(),
        why,
    };
    let when = serde_json::from_str(&when_json).map_err(|e| corrupt(format!("when: {e}")))?;
    let job = serde_json::from_str(&job_json).map_err(|e| corrupt(format!("job: {e}")))?;
    let counted_from = parse_minute(&counted_from)
        .ok_or_else(|| corrupt(format!("created_at {counted_from:?}")))?;
    Ok(Schedule {
        name,
        when,
        job,
        enabled,
        counted_from,
        conversation_id,
    })
}

fn time_of(name: &str, s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|e| StoreError::Corrupt {
            name: name.to_owned(),
            why: format!("run time {s:?}: {e}"),
        })
}

fn run_of(r: RunRow) -> Result<ScheduleRun, StoreError> {
    let (
        id,
        schedule,
        occurrence,
        catch_up,
        started_at,
        finished_at,
        status,
        summary,
        error,
        task_id,
        conversation_id,
        assumed_trading_day,
    ) = r;
    Ok(ScheduleRun {
        assumed_trading_day,
        id,
        started_at: time_of(&schedule, &started_at)?,
        finished_at: finished_at
            .as_deref()
            .map(|f| time_of(&schedule, f))
            .transpose()?,
        schedule,
        occurrence,
        catch_up,
        status: status_of(&status),
        summary,
        error,
        task_id,
        conversation_id,
    })
}

/// How a run's status is stored.
fn status_text(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Done => "done",
        RunStatus::Failed => "failed",
        RunStatus::Interrupted => "interrupted",
        RunStatus::Cancelled => "cancelled",
        RunStatus::TimedOut => "timed_out",
    }
}

/// A stored status; anything unknown reads as failed.
fn status_of(s: &str) -> RunStatus {
    match s {
        "running" => RunStatus::Running,
        "done" => RunStatus::Done,
        "interrupted" => RunStatus::Interrupted,
        "cancelled" => RunStatus::Cancelled,
        "timed_out" => RunStatus::TimedOut,
        _ => RunStatus::Failed,
    }
}

#[cfg(test)]
mod tests;
