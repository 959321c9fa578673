//! The desktop app: a thin shell that adapts the crates under `crates/` to IPC, the
//! tray, notifications, the keychain and the settings store. No agent logic lives here.

pub mod allocator;
mod bindings;
mod bot_serving;
mod chat;
mod clock_override;
mod commands;
mod inbox;
mod rendering;
mod schedules;
mod settings_store;
mod state;
mod stream;
mod tasks;
mod timer;
mod tray;
mod update_watch;

/// What the stock page is given, for end-to-end tests and benchmarks to compare against.
pub use commands::market::{Period, StockChart, build_chart};
/// The overview's and the portfolio page's data, for benchmarks.
pub use commands::overview::{build_data_status, build_overview};
pub use commands::portfolio::{
    PortfolioEdit, apply as apply_portfolio_edit, load as load_portfolio,
};

use tauri::Manager;

use crate::state::AppState;

/// Builds and runs the app. Errors during start-up are logged and end the process with
/// a non-zero status instead of a panic.
pub fn run() {
    let allocator_tuned = allocator::return_freed_memory_promptly();
    let home = wyckoff_config::DataHome::from_env();
    if let Err(e) = home.ensure() {
        // No logger yet: the data home is where logs go.
        eprintln_fallback(&format!(
            "cannot create the data home {}: {e}",
            home.root().display()
        ));
        std::process::exit(1);
    }
    let _log_guard =
        match wyckoff_config::logging::init(&home.logs_dir(), "desk", cfg!(debug_assertions)) {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln_fallback(&format!("logging disabled: {e}"));
                None
            }
        };
    tracing::info!(home = %home.root().display(), version = env!("CARGO_PKG_VERSION"), "starting Wyckoff Desk");
    if !allocator_tuned {
        tracing::warn!("malloc kept its default thresholds: freed memory may stay with the app");
    }
    // Read (and a set override warned about) before anything takes the time.
    if let Err(e) = clock_override::app_clock() {
        tracing::error!("{e}");
        eprintln_fallback(&e);
        std::process::exit(1);
    }

    let specta = bindings::builder();
    let result = tauri::Builder::default()
        // Must be first: a second launch hands over to the first and exits.
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            tray::show_main_window(app);
        }))
        .plugin(tauri_plugin_window_state::Builder::default().build())
        .plugin(tauri_plugin_store::Builder::default().build())
        .plugin(tauri_plugin_updater::Builder::new().build())
        .invoke_handler(specta.invoke_handler())
        .setup(move |app| {
            specta.mount_events(app);
            if let Some(window) = app.get_webview_window("main") {
                rendering::apply(&window);
            }
            let state = AppState::load(app.handle(), home.clone());
            app.manage(state);
            app.manage(chat::ChatState::new(app.handle().clone()));
            timer::watch(app.handle().clone());
            app.manage(bot_serving::BotServing::default());
            bot_serving::watch(app.handle().clone());
            app.manage(commands::updater::PendingUpdate::default());
            update_watch::watch(app.handle().clone());
            if let Err(e) = tray::create(app.handle()) {
                // A desktop without a tray (some Linux sessions) still gets a window.
                tracing::warn!("tray icon unavailable: {e}");
            }
            Ok(())
        })
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                let hide = window.state::<AppState>().close_to_tray();
                if hide && window.label() == "main" {
                    api.prevent_close();
                    if let Err(e) = window.hide() {
                        tracing::warn!("cannot hide the window: {e}");
                    }
                }
            }
        })
        .build(tauri::generate_context!());
    let app = match result {
        Ok(app) => app,
        Err(e) => {
            tracing::error!("the app could not start: {e}");
            std::process::exit(1);
        }
    };
    app.run(|app, event| {
        if let tauri::RunEvent::ExitRequested { api, .. } = event
            && app.state::<chat::ChatState>().begin_exit()
        {
            // Session end for every open conversation: extract memories first (bounded),
            // close the desk (the database closed clean), then exit for real.
            api.prevent_exit();
            let app = app.clone();
            tauri::async_runtime::spawn(async move {
                // The bots' leases first: the daemon may take them over at once.
                app.state::<bot_serving::BotServing>().stop().await;
                app.state::<chat::ChatState>()
                    .end_session(EXIT_EXTRACTION_DEADLINE)
                    .await;
                app.exit(0);
            });
        }
    });
}

/// How long quitting may wait for session-end memory extraction.
const EXIT_EXTRACTION_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Last-resort message before logging exists.
#[allow(clippy::print_stderr)]
fn eprintln_fallback(msg: &str) {
    eprintln!("wyckoff-desk: {msg}");
}
