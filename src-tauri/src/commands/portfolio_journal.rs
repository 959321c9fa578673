//! The portfolio page's account ledger: record a fill or a bank transfer (the user's own
//! click, so no approval dialog; the agent's `record_fill` passes the gate), import a
//! broker 交割单, the journal report (entries, cash, realised P/L, the daily NAV with its
//! return and drawdown, exit reviews) and the ledger against the balances the imported
//! statements stated.

use serde::Deserialize;
use specta::Type;
use tauri::State;
use wyckoff_session::domain::journal::money::{fen_from_f64, price_from_f64};
use wyckoff_session::domain::journal::{
    Fees, ImportOutcome, JournalReport, NewFill, Reconciliation, Side, Source,
};
use wyckoff_session::{CashDirection, Desk};

use crate::chat::ChatState;
use crate::commands::chat::desk;
use crate::commands::error::CommandError;
use crate::state::AppState;

/// One fill from the page's form.
#[derive(Debug, Clone, Deserialize, Type, PartialEq)]
pub struct FillForm {
    pub side: Side,
    pub code: String,
    /// YYYY-MM-DD or YYYYMMDD.
    pub date: String,
    pub price: f64,
    pub shares: i64,
    /// Total fees in yuan; `None` → the backtest's fee rules.
    pub fees: Option<f64>,
}

/// A bank transfer (银证转账) from the page's form.
#[derive(Debug, Clone, Deserialize, Type, PartialEq)]
pub struct CashForm {
    /// True: bank → broker; false: broker → bank.
    pub into_account: bool,
    /// Yuan, up to 2 decimals.
    pub amount: f64,
    /// YYYY-MM-DD or YYYYMMDD.
    pub date: String,
}

pub async fn load(desk: &Desk) -> Result<JournalReport, CommandError> {
    desk.journal_report().await.map_err(CommandError::from)
}

pub async fn record_cash(desk: &Desk, form: &CashForm) -> Result<JournalReport, CommandError> {
    let invalid = |m: &str| CommandError::invalid(m);
    let date = wyckoff_session::domain::market::date::parse_date(&form.date)
        .ok_or_else(|| invalid("转账日期无效，请用 YYYY-MM-DD"))?;
    let amount_fen = fen_from_f64(form.amount)
        .filter(|a| *a > 0)
        .ok_or_else(|| invalid("转账金额必须大于 0"))?;
    let direction = if form.into_account {
        CashDirection::In
    } else {
        CashDirection::Out
    };
    desk.record_cash(direction, amount_fen, Some(date), Source::Manual)
        .await
        .map_err(CommandError::from)?;
    load(desk).await
}

pub async fn record(desk: &Desk, form: &FillForm) -> Result<JournalReport, CommandError> {
    let md = desk.market();
    let invalid = |m: &str| CommandError::invalid(m);
    let date = wyckoff_session::domain::market::date::parse_date(&form.date)
        .ok_or_else(|| invalid("成交日期无效，请用 YYYY-MM-DD"))?;
    let price_e6 = price_from_f64(form.price).ok_or_else(|| invalid("成交价格必须大于 0"))?;
    let fees = match form.fees {
        None => None,
        Some(f) => Some(Fees {
            commission_fen: fen_from_f64(f)
                .filter(|f| *f >= 0)
                .ok_or_else(|| invalid("费用不能为负数"))?,
            stamp_fen: 0,
            transfer_fen: 0,
        }),
    };
    let name = wyckoff_session::domain::market::StockCode::parse(&form.code)
        .ok()
        .and_then(|c| md.stock_info(&c))
        .map(|i| i.name)
        .unwrap_or_default();
    let fill = NewFill {
        code: form.code.clone(),
        name,
        side: form.side,
        date,
        price_e6,
        shares: form.shares,
        fees,
    };
    desk.record_fill(&fill, Source::Manual)
        .await
        .map_err(CommandError::from)?;
    load(desk).await
}

/// The journal: fills, derived positions, realised P/L, daily value and exit reviews.
#[tauri::command]
#[specta::specta]
pub async fn journal_report(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<JournalReport, CommandError> {
    load(&*desk(&state, &chat).await?).await
}

/// Records the user's own fill; returns the journal after it (the page reloads the
/// positions, which the fill re-derived).
#[tauri::command]
#[specta::specta]
pub async fn journal_record_fill(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    fill: FillForm,
) -> Result<JournalReport, CommandError> {
    record(&*desk(&state, &chat).await?, &fill).await
}

/// Records the user's own bank transfer; returns the journal after it.
#[tauri::command]
#[specta::specta]
pub async fn journal_record_cash(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    cash: CashForm,
) -> Result<JournalReport, CommandError> {
    record_cash(&*desk(&state, &chat).await?, &cash).await
}

/// Imports a broker 交割单 (the file's bytes): all rows or none; the refusal names
/// every bad line.
#[tauri::command]
#[specta::specta]
pub async fn journal_import(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
    bytes: Vec<u8>,
) -> Result<ImportOutcome, CommandError> {
    let desk = desk(&state, &chat).await?;
    desk.journal()
        .import(&bytes, desk.market().clock().now())
        .await
        .map_err(CommandError::from)
}

/// The ledger against every 股份余额 / 资金余额 an imported statement stated, each
/// difference named (day, code, statement line, the statement's figure and the ledger's);
/// nothing checked when no statement had balance columns.
#[tauri::command]
#[specta::specta]
pub async fn journal_reconciliation(
    state: State<'_, AppState>,
    chat: State<'_, ChatState>,
) -> Result<Reconciliation, CommandError> {
    desk(&state, &chat)
        .await?
        .journal_reconciliation()
        .await
        .map_err(CommandError::from)
}
