use tauri::menu::{Menu, MenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager};
use wyckoff_config::settings::Language;

use crate::state::AppState;

const TRAY_ID: &str = "main-tray";
const SHOW_HIDE: &str = "show_hide";
const QUIT: &str = "quit";

fn labels(lang: Language) -> (&'static str, &'static str) {
    match lang {
        Language::Zh => ("显示/隐藏", "退出"),
        Language::En => ("Show/Hide", "Quit"),
    }
}

fn menu(app: &AppHandle, lang: Language) -> tauri::Result<Menu<tauri::Wry>> {
    let (show, quit) = labels(lang);
    let show = MenuItem::with_id(app, SHOW_HIDE, show, true, None::<&str>)?;
    let quit = MenuItem::with_id(app, QUIT, quit, true, None::<&str>)?;
    Menu::with_items(app, &[&show, &quit])
}

pub fn create(app: &AppHandle) -> tauri::Result<()> {
    let lang = app.state::<AppState>().settings().language;
    let mut builder = TrayIconBuilder::with_id(TRAY_ID)
        .tooltip("Wyckoff Desk")
        .menu(&menu(app, lang)?)
        .on_menu_event(|app, event| match event.id().as_ref() {
            SHOW_HIDE => toggle_main_window(app),
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
