use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use specta::Type;
use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;
use wyckoff_config::settings::Language;

use crate::state::AppState;

const TRAY_ID: &str = "main-tray";
const SHOW_HIDE: &str = "show_hide";
const TASKS: &str = "tasks";
const QUIT: &str = "quit";

/// Background tasks running now (shown in the tray menu).
static RUNNING_TASKS: AtomicUsize = AtomicUsize::new(0);
/// The conversation of the newest task, where the tray's task entry leads.
static TASK_CONVERSATION: Mutex<Option<String>> = Mutex::new(None);

/// Asks the UI to show a conversation (from a notification or the tray).
#[derive(Debug, Clone, Serialize, Deserialize, Type, Event)]
pub struct OpenConversation {
    pub conversation_id: Option<String>,
}

fn labels(lang: Language) -> (&'static str, &'static str) {
    match lang {
        Language::Zh => ("显示/隐藏", "退出"),
        Language::En => ("Show/Hide", "Quit"),
    }
}

/// The tray's task line, e.g. `后台任务：2 个运行中`.
pub fn tasks_label(lang: Language, running: usize) -> String {
    match lang {
        Language::Zh => format!("后台任务：{running} 个运行中"),
        Language::En => format!("Background tasks: {running} running"),
    }
}

fn menu(app: &AppHandle, lang: Language) -> tauri::Result<Menu<tauri::Wry>> {
    let (show, quit) = labels(lang);
    let show = MenuItem::with_id(app, SHOW_HIDE, show, true, None::<&str>)?;
    let tasks = tasks_label(lang, RUNNING_TASKS.load(Ordering::Relaxed));
    let tasks = MenuItem::with_id(app, TASKS, tasks, true, None::<&str>)?;
    let quit = MenuItem::with_id(app, QUIT, quit, true, None::<&str>)?;
    Menu::with_items(app, &[&show, &tasks, &quit])
}

/// Updates the tray's task count (and remembers where its entry leads).
pub fn set_running_tasks(app: &AppHandle, running: usize, conversation: Option<&str>) {
    if let (Some(c), Ok(mut last)) = (conversation, TASK_CONVERSATION.lock()) {
        *last = Some(c.to_owned());
    }
    if RUNNING_TASKS.swap(running, Ordering::Relaxed) != running {
        refresh_labels(app, app.state::<AppState>().settings().language);
    }
}

/// Brings the window to the front on `conversation` (the UI switches to it; with none,
/// to the overview, where user-started tasks live).
pub fn open_conversation(app: &AppHandle, conversation: Option<&str>) {
    show_main_window(app);
    let event = OpenConversation {
        conversation_id: conversation.map(str::to_owned),
    };
    if let Err(e) = event.emit(app) {
        tracing::warn!("cannot ask the UI to open a conversation: {e}");
    }
}

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let lang = app.state::<AppState>().settings().language;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Wyckoff Desk")
        .menu(&menu(app, lang)?)
        .on_menu_event(|app, event| match event.id().as_ref() {
            SHOW_HIDE => toggle_main_window(app),
            TASKS => {
                let last = TASK_CONVERSATION.lock().ok().and_then(|c| c.clone());
                open_conversation(app, last.as_deref());
            }
            QUIT => {
                tracing::info!("quit from the tray");
                app.exit(0);
            }
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    Ok(())
}

/// Rebuilds the tray menu in the new language.
pub fn refresh_labels(app: &AppHandle, lang: Language) {
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        match menu(app, lang) {
            Ok(m) => {
                if let Err(e) = tray.set_menu(Some(m)) {
                    tracing::warn!("cannot update the tray menu: {e}");
                }
            }
            Err(e) => tracing::warn!("cannot build the tray menu: {e}"),
        }
    }
}

pub fn show_main_window(app: &AppHandle) {
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.unminimize();
        if let Err(e) = w.show().and_then(|_| w.set_focus()) {
            tracing::warn!("cannot show the main window: {e}");
        }
    }
}

fn toggle_main_window(app: &AppHandle) {
    if let Some(w) = app.get_webview_window("main") {
        if w.is_visible().unwrap_or(false) {
            if let Err(e) = w.hide() {
                tracing::warn!("cannot hide the main window: {e}");
            }
        } else {
            show_main_window(app);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_line_counts_running_tasks_in_both_languages() {
        assert_eq!(tasks_label(Language::Zh, 2), "后台任务：2 个运行中");
        assert_eq!(tasks_label(Language::En, 0), "Background tasks: 0 running");
    }
}
