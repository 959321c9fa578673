//! The typed IPC surface: every command and event, exported to `ui/src/bindings.ts`.

use tauri_specta::{Builder, collect_commands, collect_events};

use crate::commands::bots;
use crate::commands::concepts;
use crate::commands::ledger_closes;
use crate::commands::{
    alerts, annotations, app, chat, conversations, first_run, history, inbox, keys, markdown,
    market, market_map, mcp, memory, minute, overview, portfolio, portfolio_journal,
    portfolio_risk, push, quote, research, schedules, settings, skills, subagents, sync, tasks,
    track, updater,
};

pub fn builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            app::app_info,
            updater::check_for_update,
            updater::install_update,
            updater::restart_app,
            updater::pending_update,
            settings::get_settings,
            settings::update_settings,
            settings::test_connection,
            keys::key_statuses,
            keys::set_key,
            keys::delete_key,
            markdown::render_markdown,
            chat::start_turn,
            chat::cancel_turn,
            chat::answer_approval,
            chat::always_allowed,
            chat::revoke_always_allowed,
            chat::end_session,
            chat::list_conversations,
            chat::rename_conversation,
            chat::delete_conversation,
            chat::search_conversations,
            chat::load_conversation,
            chat::export_conversation,
            conversations::fork_conversation,
            memory::list_memories,
            memory::memory_counts,
            memory::add_memory,
            memory::update_memory,
            memory::delete_memory,
            tasks::list_tasks,
            tasks::cancel_task,
            tasks::task_result,
            market::stock_chart,
            market::search_stocks,
            market::watchlist,
            market::watchlist_add,
            market::watchlist_remove,
            market::watchlist_contains,
            portfolio::portfolio_page,
            portfolio::portfolio_edit,
            portfolio::portfolio_set_levels,
            portfolio_journal::journal_report,
            portfolio_journal::journal_record_fill,
            portfolio_journal::journal_record_cash,
            portfolio_journal::journal_import,
            portfolio_journal::journal_reconciliation,
            ledger_closes::journal_sync_closes,
            overview::market_overview,
            overview::data_status,
            overview::start_task,
            history::names_import,
            history::name_history,
            history::history_counts,
            research::research_plan,
            research::start_research,
            research::research_runs,
            research::research_report,
            research::sweep_best,
            sync::sync_stock,
            skills::list_skills,
            skills::open_skills_folder,
            subagents::sub_agent_roles,
            schedules::list_schedules,
            schedules::damaged_schedules,
            schedules::add_schedule,
            schedules::update_schedule,
            schedules::set_schedule_enabled,
            schedules::remove_schedule,
            schedules::run_schedule_now,
            inbox::inbox_list,
            inbox::inbox_allow,
            inbox::inbox_deny,
            inbox::approval_log,
            alerts::alert_rules,
            alerts::alert_add,
            alerts::alert_set_enabled,
            alerts::alert_remove,
            alerts::alert_history,
            push::push_channels,
            push::push_add,
            push::push_remove,
            push::push_test,
            push::push_set_events,
            bots::bots_view,
            bots::bot_pair,
            bots::bot_set_approver,
            bots::bot_unpair,
            bots::bot_add,
            bots::bot_remove,
            mcp::mcp_servers,
            mcp::mcp_add,
            mcp::mcp_set_enabled,
            mcp::mcp_set_always_ask,
            mcp::mcp_set_trusted,
            mcp::mcp_remove,
            mcp::mcp_test,
            mcp::mcp_pick_tools,
            mcp::mcp_set_max_tools,
            track::track_stats,
            track::track_screens,
            annotations::chart_notes,
            annotations::chart_note_add,
            annotations::chart_note_remove,
            portfolio_risk::portfolio_risk,
            quote::live_quote,
            quote::live_quotes,
            minute::minute_chart,
            minute::sync_minutes,
            first_run::first_run,
            first_run::set_first_run_step,
            first_run::full_sync_estimate,
            first_run::import_tdx,
            first_run::import_watchlist_file,
            market_map::market_map,
            market_map::market_map_series,
            market_map::industry_members,
            market_map::industries_import,
            market_map::industry_loads,
            concepts::concept_strength,
            concepts::stock_blocks,
        ])
        .events(collect_events![
            settings::SettingsChanged,
            crate::tasks::TaskChanged,
            crate::tray::OpenConversation,
            crate::stream::ConversationEvent,
            crate::schedules::ScheduleRan,
            crate::inbox::InboxChanged,
            updater::UpdateFound,
        ])
        // Inside `ConversationEvent` and the CLI's `--json`: exported by name too.
        .typ::<wyckoff_protocol::RuntimeEvent>()
        .typ::<wyckoff_protocol::ApprovalDecision>()
        // One TS type per Rust type: the UI sends back exactly what it received.
        .disable_serde_phases()
        // Tool args and results are `serde_json::Value`, whose numbers may be i64/u64. They
        // arrive in the webview through `JSON.parse` either way, so `number` is what they are.
        .dangerously_cast_bigints_to_number()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    /// The recorded event sequences the UI's reducer tests replay must be exactly what
    /// the Rust types serialise: deserialise each and compare the round trip.
    #[test]
    fn ui_event_fixtures_match_the_rust_shape() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/chat/fixtures");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // stock_codes.json is the code-mention cases the engine and the UI share, not
            // a recorded turn.
            if path.extension().and_then(|e| e.to_str()) != Some("json")
                || path.file_name().is_some_and(|n| n == "stock_codes.json")
            {
                continue;
            }
            let raw: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let events: Vec<wyckoff_protocol::RuntimeEvent> = serde_json::from_value(raw.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let back = serde_json::to_value(&events).unwrap();
            assert_eq!(back, raw, "{} does not round-trip", path.display());
            seen += 1;
        }
        assert!(
            seen >= 5,
            "expected the recorded fixtures in {}",
            dir.display()
        );
    }

    fn committed_path() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts")
    }

    /// Fails when `ui/src/bindings.ts` is not what the Rust types generate.
    /// Regenerate with `UPDATE_BINDINGS=1 cargo test -p wyckoff-desk --lib bindings`.
    #[test]
    fn bindings_are_current() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("bindings.ts");
        super::builder()
            .export(specta_typescript::Typescript::default().header("// @ts-nocheck\n// Generated by tauri-specta from the Rust types. Do not edit."), &fresh)
            .unwrap();
        let fresh = std::fs::read_to_string(&fresh).unwrap();
        let path = committed_path();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == fresh,
            "ui/src/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p wyckoff-desk --lib bindings` and commit it"
        );
    }
}
