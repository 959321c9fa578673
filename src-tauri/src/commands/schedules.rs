//! Settings → Schedules: list (with the next due time and recent runs), add, edit, enable,
//! remove, run now. Thin adapters over `wyckoff_schedule` and `wyckoff_session::scheduler`.

use std::sync::Arc;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::{AppHandle, State};
use wyckoff_session::ModelOverrides;
use wyckoff_session::domain::schedule::when::format_minute;
use wyckoff_session::domain::schedule::{Job, Schedule, When};
use wyckoff_session::scheduler::Scheduler;
use wyckoff_session::time::to_beijing;

use crate::chat::ChatState;
use crate::commands::chat::hub;
use crate::commands::error::CommandError;
use crate::schedules::ScheduleRunView;
use crate::state::AppState;

/// Runs listed per schedule.
const RUNS_SHOWN: u32 = 20;

#[derive(Debug, Clone, Serialize, Type)]
pub struct ScheduleView {
    pub name: String,
    pub when: When,
    pub job: Job,
    pub enabled: bool,
    /// Beijing `YYYY-MM-DD HH:MM`.
    pub next_due: Option<String>,
    /// Past the bundled calendar's end: a weekday was assumed to trade.
    pub next_due_assumed_trading_day: bool,
    /// Newest first.
    pub runs: Vec<ScheduleRunView>,
}

/// A new schedule from the form.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct NewSchedule {
    pub name: String,
    pub when: When,
    pub job: Job,
}

async fn scheduler(state: &AppState, chat: &ChatState) -> Result<Arc<Scheduler>, CommandError> {
    hub(state, chat).await?;
    chat.scheduler()
        .cloned()
        .ok_or_else(|| CommandError::internal("schedules could not be opened (see the log)"))
}

/// A screen's board and limit must be ones the screen takes; a prompt needs text and a
/// configured model (checked when it is stored, not when it first falls due with nobody
/// there).
async fn check_job(state: &AppState, chat: &ChatState, job: &Job) -> Result<(), CommandError> {
    scheduler(state, chat)
        .await?
        .check_job(job)
        .map_err(CommandError::invalid)?;
    if let Job::Prompt { .. } = job {
        let hub = hub(state, chat).await?;
        hub.services()
            .check_model(&ModelOverrides::default())
            .map_err(|e| CommandError::invalid(format!("a prompt needs a model: {e}")))?;
    }
    Ok(())
}

async fn view(scheduler: &Scheduler, s: Schedule) -> Result<ScheduleView, CommandError> {
    let next = scheduler.next(&s, Utc::now())?;
    let runs = scheduler.store().runs(&s.name, RUNS_SHOWN).await?;
    Ok(ScheduleView {
        next_due: next.map(|o| format_minute(o.at)),
        next_due_assumed_trading_day: next.is_some_and(|o| o.assumed_trading_day),
        runs: runs.into_iter().map(Into::into).collect(),
        name: s.name,
        when: s.when,
        job: s.job,
        enabled: s.enabled,
    })
}

#[tauri::command]
#[specta::specta]
pub async fn list_schedules(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<ScheduleView>, CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    let mut out = Vec::new();
    for s in scheduler.store().list().await?.schedules {
        out.push(view(&scheduler, s).await?);
    }
    Ok(out)
}

/// Stored schedules that cannot be read, with why: every pass skips them, the page names
/// them so they can be removed.
#[tauri::command]
#[specta::specta]
pub async fn damaged_schedules(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Vec<wyckoff_session::domain::schedule::DamagedSchedule>, CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    Ok(scheduler.store().list().await?.damaged)
}

/// Adds a schedule; refused (nothing stored) for a bad rule, a taken name, or a prompt
/// with no model configured.
#[tauri::command]
#[specta::specta]
pub async fn add_schedule(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    schedule: NewSchedule,
) -> Result<ScheduleView, CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    check_job(&state, &chat, &schedule.job).await?;
    let s = Schedule {
        name: schedule.name.trim().to_owned(),
        when: schedule.when,
        job: schedule.job,
        enabled: true,
        counted_from: to_beijing(Utc::now()),
        conversation_id: None,
    };
    scheduler.store().add(&s).await?;
    view(&scheduler, s).await
}

/// Changes a schedule's rule and job (its name, runs and conversation stay); refused
/// like [`add_schedule`]. Due times count from the edit: no catch-up of a time it did not
/// have.
#[tauri::command]
#[specta::specta]
pub async fn update_schedule(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
    when: When,
    job: Job,
) -> Result<ScheduleView, CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    check_job(&state, &chat, &job).await?;
    let store = scheduler.store();
    store
        .update(&name, &when, &job, to_beijing(Utc::now()))
        .await?;
    let s = store.get(&name).await?;
    view(&scheduler, s).await
}

#[tauri::command]
#[specta::specta]
pub async fn set_schedule_enabled(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
    enabled: bool,
) -> Result<(), CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    Ok(scheduler
        .store()
        .set_enabled(&name, enabled, to_beijing(Utc::now()))
        .await?)
}

#[tauri::command]
#[specta::specta]
pub async fn remove_schedule(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
) -> Result<(), CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    Ok(scheduler.store().remove(&name).await?)
}

/// Runs a schedule now (its task shows in the task panel meanwhile); answers when it has
/// finished, with the run.
#[tauri::command]
#[specta::specta]
pub async fn run_schedule_now(
    app: AppHandle,
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    name: String,
) -> Result<ScheduleRunView, CommandError> {
    let scheduler = scheduler(&state, &chat).await?;
    let report = scheduler.run_now(&name, Utc::now()).await?;
    crate::schedules::announce(&app, &report);
    Ok((&report).into())
}
