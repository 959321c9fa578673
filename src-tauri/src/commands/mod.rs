//! IPC commands. Each is a thin adapter over the crates; every type derives
//! `specta::Type` so `ui/src/bindings.ts` stays exact.

pub mod alerts;
pub mod annotations;
pub mod app;
pub mod bots;
pub mod chat;
pub mod concepts;
pub mod conversations;
pub mod error;
pub mod first_run;
pub mod history;
pub mod inbox;
pub mod keys;
pub mod ledger_closes;
pub mod markdown;
pub mod market;
pub mod market_map;
pub mod mcp;
pub mod memory;
pub mod minute;
pub mod overview;
pub mod portfolio;
pub mod portfolio_journal;
pub mod portfolio_risk;
pub mod push;
pub mod quote;
pub mod research;
pub mod schedules;
pub mod settings;
pub mod skills;
pub mod subagents;
pub mod sync;
pub mod tasks;
pub mod track;
pub mod updater;

#[cfg(test)]
mod test_desk;
