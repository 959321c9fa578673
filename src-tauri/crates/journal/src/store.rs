//! The journal in `wyckoff.db`: the account's entries ([`crate::entry`]) recorded or
//! imported, each write one transaction that re-derives the touched stocks' positions from
//! the entries and writes them to the portfolio's `portfolio_positions` (shares, average
//! cost, buy date), so every reader of the portfolio sees the journal's figures. Positions
//! that exist without matching entries — from before the journal, or edited directly
//! through `update_portfolio` — enter as opening entries that state them exactly (the
//! reconcile pass), so no figure changes. Funds, bonds and repos live in the ledger only
//! (the portfolio's positions are stocks).

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{Sqlite, SqlitePool, Transaction};
use wyckoff_market::portfolio::LOCAL_PORTFOLIO_ID;
use wyckoff_time::iso;

use crate::broker::{CsvError, RowError};
use crate::entry::{Entry, EntryKind, Instrument};
use crate::ledger::{Holding, Ledger, LedgerError, Side, Totals, replay};
use crate::money::{E6, amount_fen, fmt_fen, fmt_price, price_f64};
use wyckoff_engine::fees::{Fees, fees_for};

#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Bad input; the message is the user-facing string.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Ledger(#[from] LedgerError),
    #[error("{0}")]
    Csv(#[from] CsvError),
    #[error("journal store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("journal store migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("reading cached bars: {0}")]
    Market(String),
    #[error("journal entry {id} is damaged: {message}")]
    Damaged { id: i64, message: String },
}

impl JournalError {
    /// The bad rows of an import, when that is what went wrong.
    pub fn bad_rows(&self) -> Option<&[RowError]> {
        match self {
            JournalError::Csv(CsvError::BadRows(r)) => Some(r),
            _ => None,
        }
    }
}

/// Where an entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The portfolio page.
    Manual,
    Cli,
    /// The `record_fill` tool (after the user's approval).
    Agent,
    /// A broker statement.
    Import,
    /// A position stated as it stood (before the journal, or edited directly).
    Opening,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Manual => "manual",
            Source::Cli => "cli",
            Source::Agent => "agent",
            Source::Import => "import",
            Source::Opening => "opening",
        }
    }

    fn parse(s: &str) -> Source {
        match s {
            "manual" => Source::Manual,
            "cli" => Source::Cli,
            "agent" => Source::Agent,
            "import" => Source::Import,
            _ => Source::Opening,
        }
    }
}

/// A fill to record: a buy or a sell. `fees: None` → the backtest's fee rules.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFill {
    pub code: String,
    /// Empty: the position's or an earlier fill's name.
    pub name: String,
    pub side: Side,
    /// `YYYYMMDD`.
    pub date: u32,
    pub price_e6: i64,
    pub shares: i64,
    pub fees: Option<Fees>,
}

/// A stored trade (buy, sell or opening) as the page, the CLI and the tool show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FillRow {
    pub id: i64,
    pub code: String,
    pub name: String,
    pub side: Side,
    /// YYYY-MM-DD.
    pub date: String,
    /// Yuan (exact to the millionth).
    pub price: f64,
    pub shares: i64,
    pub amount_fen: i64,
    pub fees: Fees,
    pub fees_total_fen: i64,
    /// The fees came from the backtest's rules, not the user or the broker.
    pub fees_computed: bool,
    pub source: Source,
    /// A sell's realised P/L.
    pub realised_fen: Option<i64>,
}

/// Any stored entry, with what it did to the cash.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct EntryRow {
    pub id: i64,
    /// YYYY-MM-DD.
    pub date: String,
    /// HH:MM:SS when the source gave it.
    pub time: Option<String>,
    pub name: String,
    pub kind: EntryKind,
    pub instrument: Option<Instrument>,
    pub source: Source,
    /// Signed: + into the account.
    pub cash_fen: i64,
    /// A sell's realised P/L.
    pub realised_fen: Option<i64>,
}

/// A position derived from the entries.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DerivedPosition {
    pub code: String,
    pub name: String,
    pub instrument: Instrument,
    pub shares: i64,
    /// Average cost per share, yuan (fees included).
    pub avg_cost: f64,
    pub cost_basis_fen: i64,
    /// YYYY-MM-DD: the first entry since the holding was last flat.
    pub since: String,
}

/// A day whose cash on record ended below zero: the shortfall counted as a transfer in.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ImpliedTransfer {
    /// YYYY-MM-DD.
    pub date: String,
    pub amount_fen: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct JournalSummary {
    /// The trades (buys, sells, openings), oldest first.
    pub fills: Vec<FillRow>,
    /// Every entry, oldest first.
    pub entries: Vec<EntryRow>,
    pub positions: Vec<DerivedPosition>,
    pub realised_fen: i64,
    pub fees_fen: i64,
    /// Cash now (after the last entry).
    pub cash_fen: i64,
    /// Reverse repo principal lent out and not back yet.
    pub repo_fen: i64,
    /// New-share subscription money paid and frozen, not yet refunded or allotted.
    pub subscription_fen: i64,
    pub totals: Totals,
    /// No 银证转账 on record: the cash is what the trades left (and the implied transfers).
    pub transfers_on_record: bool,
    pub implied: Vec<ImpliedTransfer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RecordOutcome {
    pub fill: FillRow,
    /// The code's position after the fill (`None`: sold out).
    pub position: Option<DerivedPosition>,
    pub message: String,
}

/// A non-trade entry to record by hand (a transfer, a dividend, a note…).
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    /// `YYYYMMDD`.
    pub date: u32,
    pub name: String,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct EntryOutcome {
    pub entry: EntryRow,
    /// The cash balance after the whole history (now).
    pub cash_fen: i64,
    pub message: String,
}

/// One statement row as an entry, with its line in the file for errors.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRow {
    /// 1-based line in the file.
    pub line: u32,
    pub entry: Entry,
    /// No fee column in the file: the backtest's rules supplied them.
    pub fees_computed: bool,
}

/// What [`JournalStore::import_entries`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct EntriesImported {
    pub added: u32,
    /// Lines whose identity was already stored (or repeated an earlier line's).
    pub duplicate_lines: Vec<u32>,
    /// Realised P/L of the sales added.
    pub realised_fen: i64,
}

pub const ERR_NAME: &str = "缺少股票名称 name";
pub const ERR_SHARES: &str = "成交数量必须是正整数";
pub const ERR_PRICE: &str = "成交价格必须大于 0";
pub const ERR_FEES: &str = "费用不能为负数";
pub const ERR_CODE: &str = "无效的代码：股票、场内基金或债券用6位数字，如 600519、510300";

#[derive(Debug, Clone)]
pub struct JournalStore {
    pool: SqlitePool,
    id: String,
}

type EntryDbRow = (
    i64,
    i64,
    Option<i64>,
    String,
    String,
    i64,
    String,
    Option<String>,
);

struct Stored {
    entry: Entry,
    fees_computed: bool,
}

fn stored(r: EntryDbRow) -> Result<Stored, JournalError> {
    let (id, date, time, name, body, fees_computed, source, identity) = r;
    let kind: EntryKind = serde_json::from_str(&body).map_err(|e| JournalError::Damaged {
        id,
        message: e.to_string(),
    })?;
    Ok(Stored {
        entry: Entry {
            id,
            date: u32::try_from(date).unwrap_or(0),
            time: time.and_then(|t| u32::try_from(t).ok()),
            name,
            kind,
            source: Source::parse(&source),
            identity,
        },
        fees_computed: fees_computed != 0,
    })
}

fn fmt_time(t: u32) -> String {
    format!("{:02}:{:02}:{:02}", t / 10000, t / 100 % 100, t % 100)
}

fn entry_row(e: &Entry, realised: Option<i64>) -> EntryRow {
    EntryRow {
        id: e.id,
        date: iso(e.date),
        time: e.time.map(fmt_time),
        name: e.name.clone(),
        kind: e.kind.clone(),
        instrument: e.instrument(),
        source: e.source,
        cash_fen: e.kind.cash_fen(),
        realised_fen: realised,
    }
}

/// The trade row of a buy, sell or opening entry.
fn fill_row(s: &Stored, realised: Option<i64>) -> Option<FillRow> {
    let e = &s.entry;
    let (code, side, price_e6, shares, amount, fees) = match &e.kind {
        EntryKind::Buy {
            code,
            shares,
            price_e6,
            amount_fen,
            fees,
        } => (code, Side::Buy, *price_e6, *shares, *amount_fen, *fees),
        EntryKind::Sell {
            code,
            shares,
            price_e6,
            amount_fen,
            fees,
        } => (code, Side::Sell, *price_e6, *shares, *amount_fen, *fees),
        EntryKind::Opening {
            code,
            shares,
            price_e6,
        } => (code, Side::Opening, *price_e6, *shares, 0, Fees::default()),
        _ => return None,
    };
    Some(FillRow {
        id: e.id,
        code: code.clone(),
        name: e.name.clone(),
        side,
        date: iso(e.date),
        price: price_f64(price_e6),
        shares,
        amount_fen: amount,
        fees,
        fees_total_fen: fees.total_fen(),
        fees_computed: s.fees_computed,
        source: e.source,
        realised_fen: realised,
    })
}

fn derived(code: &str, name: &str, h: &Holding) -> DerivedPosition {
    DerivedPosition {
        code: code.to_owned(),
        name: name.to_owned(),
        instrument: Instrument::of_code(code),
        shares: h.shares,
        avg_cost: price_f64(h.avg_cost_e6().unwrap_or(0)),
        cost_basis_fen: h.basis_fen(),
        since: iso(h.since),
    }
}

/// The latest name each code was recorded with.
pub fn names_of(entries: &[Entry]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for e in entries {
        if let Some(code) = e.kind.code()
            && !e.name.is_empty()
        {
            out.insert(code.to_owned(), e.name.clone());
        }
    }
    out
}

/// A position row as the portfolio stores it.
struct PositionRow {
    code: String,
    name: String,
    shares: i64,
    cost_price: f64,
    buy_dt: String,
}

/// The position states the holding (same shares, average cost within half a millionth).
fn matches(p: &PositionRow, h: Option<&Holding>) -> bool {
    match h.and_then(|h| h.avg_cost_e6().map(|a| (h.shares, a))) {
        Some((shares, avg)) => {
            shares == p.shares && (p.cost_price * E6 as f64 - avg as f64).abs() < 0.5
        }
        None => false,
    }
}

fn is_stock(code: &str) -> bool {
    Instrument::of_code(code) == Instrument::Stock
}

fn today_of(now: DateTime<Utc>) -> u32 {
    wyckoff_market::date::to_yyyymmdd(wyckoff_time::to_beijing(now).date())
}

impl JournalStore {
    /// The shared `wyckoff.db` pool (the statement import keeps its balances beside the
    /// entries).
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Uses the shared `wyckoff.db` pool (after `MarketData` opened it: the portfolio's
    /// tables exist), runs this crate's migrations and brings existing positions in as
    /// opening entries.
    pub async fn new(pool: SqlitePool, now: DateTime<Utc>) -> Result<JournalStore, JournalError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        let store = JournalStore {
            pool,
            id: LOCAL_PORTFOLIO_ID.to_owned(),
        };
        let mut tx = wyckoff_db::begin_write(&store.pool).await?;
        store.reconcile(&mut tx, now).await?;
        tx.commit().await?;
        Ok(store)
    }

    async fn positions(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
    ) -> Result<Vec<PositionRow>, sqlx::Error> {
        let rows: Vec<(String, String, i64, f64, String)> = sqlx::query_as(
            "SELECT code, name, shares, cost_price, buy_dt FROM portfolio_positions
             WHERE portfolio_id = ? ORDER BY code",
        )
        .bind(&self.id)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(code, name, shares, cost_price, buy_dt)| PositionRow {
                code,
                name,
                shares,
                cost_price,
                buy_dt,
            })
            .collect())
    }

    async fn load(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        code: Option<&str>,
    ) -> Result<Vec<Stored>, JournalError> {
        let rows: Vec<EntryDbRow> = sqlx::query_as(
            "SELECT id, trade_date, trade_time, name, body, fees_computed, source, identity
             FROM journal_entry WHERE portfolio_id = ? AND (? IS NULL OR code = ?)
             ORDER BY trade_date, id",
        )
        .bind(&self.id)
        .bind(code)
        .bind(code)
        .fetch_all(&mut **tx)
        .await?;
        rows.into_iter().map(stored).collect()
    }

    async fn insert(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        e: &Entry,
        fees_computed: bool,
        now: DateTime<Utc>,
    ) -> Result<i64, JournalError> {
        let body = serde_json::to_string(&e.kind).map_err(|err| JournalError::Damaged {
            id: e.id,
            message: err.to_string(),
        })?;
        Ok(sqlx::query_scalar(
            "INSERT INTO journal_entry (portfolio_id, trade_date, trade_time, kind, code, name,
               body, fees_computed, source, identity, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&self.id)
        .bind(i64::from(e.date))
        .bind(e.time.map(i64::from))
        .bind(e.kind.as_str())
        .bind(e.kind.code())
        .bind(&e.name)
        .bind(body)
        .bind(i64::from(fees_computed))
        .bind(e.source.as_str())
        .bind(&e.identity)
        .bind(now.to_rfc3339_opts(SecondsFormat::Secs, true))
        .fetch_one(&mut **tx)
        .await?)
    }

    fn opening(code: &str, name: &str, date: u32, shares: i64, price_e6: i64) -> Entry {
        Entry {
            id: 0,
            date,
            time: None,
            name: name.to_owned(),
            kind: EntryKind::Opening {
                code: code.to_owned(),
                shares,
                price_e6,
            },
            source: Source::Opening,
            identity: None,
        }
    }

    /// Opening entries for every stock position the entries do not state (and a zero
    /// opening for a holding whose position was removed directly), so the entries derive
    /// exactly what the portfolio shows.
    async fn reconcile(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        now: DateTime<Utc>,
    ) -> Result<u32, JournalError> {
        let positions = self.positions(tx).await?;
        let stored = self.load(tx, None).await?;
        let entries: Vec<Entry> = stored.into_iter().map(|s| s.entry).collect();
        let ledger = replay(&entries)?;
        let mut last_date: HashMap<&str, u32> = HashMap::new();
        for e in &entries {
            if let Some(code) = e.kind.code() {
                let d = last_date.entry(code).or_default();
                *d = (*d).max(e.date);
            }
        }
        let names = names_of(&entries);
        let today = today_of(now);
        let mut added = 0;
        for p in &positions {
            let h = ledger.holdings.get(&p.code);
            if matches(p, h) {
                continue;
            }
            let last = last_date.get(p.code.as_str()).copied().unwrap_or(0);
            let buy_dt = wyckoff_market::date::parse_date(&p.buy_dt).unwrap_or(today);
            // the position's own buy date when nothing later is on file, else today
            let date = if buy_dt >= last {
                buy_dt
            } else {
                today.max(last)
            };
            let price_e6 = crate::money::price_from_f64(p.cost_price)
                .ok_or_else(|| JournalError::Invalid(format!("{} 成本价无效", p.code)))?;
            let e = Self::opening(&p.code, &p.name, date, p.shares, price_e6);
            self.insert(tx, &e, false, now).await?;
            added += 1;
        }
        for (code, h) in ledger.held() {
            if !is_stock(code) || positions.iter().any(|p| &p.code == code) {
                continue;
            }
            let last = last_date.get(code.as_str()).copied().unwrap_or(0);
            let name = names.get(code).map(String::as_str).unwrap_or("");
            let price = h.avg_cost_e6().unwrap_or(1).max(1);
            let e = Self::opening(code, name, today.max(last), 0, price);
            self.insert(tx, &e, false, now).await?;
            added += 1;
        }
        Ok(added)
    }

    /// Writes `code`'s derived holding to the portfolio (removes the position when flat).
    async fn write_position(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        code: &str,
        name: &str,
        h: Option<&Holding>,
        now: DateTime<Utc>,
    ) -> Result<(), sqlx::Error> {
        let ts = now.to_rfc3339();
        let Some((h, avg)) = h.and_then(|h| h.avg_cost_e6().map(|a| (h, a))) else {
            sqlx::query("DELETE FROM portfolio_positions WHERE portfolio_id = ? AND code = ?")
                .bind(&self.id)
                .bind(code)
                .execute(&mut **tx)
                .await?;
            return Ok(());
        };
        sqlx::query(
            "INSERT INTO portfolio (id, created_at, updated_at) VALUES (?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
        )
        .bind(&self.id)
        .bind(&ts)
        .bind(&ts)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "INSERT INTO portfolio_positions
               (portfolio_id, code, name, shares, cost_price, buy_dt, stop_loss, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, NULL, ?)
             ON CONFLICT(portfolio_id, code) DO UPDATE SET shares = excluded.shares,
               cost_price = excluded.cost_price, buy_dt = excluded.buy_dt,
               updated_at = excluded.updated_at",
        )
        .bind(&self.id)
        .bind(code)
        .bind(name)
        .bind(h.shares)
        .bind(price_f64(avg))
        .bind(iso(h.since))
        .bind(&ts)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Re-derives `code` from its entries (refusing an oversold history) and, for a stock,
    /// writes it to the portfolio.
    async fn settle(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        code: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DerivedPosition>, JournalError> {
        let stored = self.load(tx, Some(code)).await?;
        let entries: Vec<Entry> = stored.into_iter().map(|s| s.entry).collect();
        let ledger = replay(&entries)?;
        let name = names_of(&entries).remove(code).unwrap_or_default();
        let h = ledger.holdings.get(code);
        if is_stock(code) {
            self.write_position(tx, code, &name, h, now).await?;
        }
        Ok(h.map(|h| derived(code, &name, h)))
    }

    /// Checks a new fill against the code's history; fills the name and fees.
    async fn prepare(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        f: &NewFill,
        today: u32,
    ) -> Result<(Entry, bool), JournalError> {
        let invalid = |m: String| JournalError::Invalid(m);
        // a stock by any spelling, or an exchange-traded fund or bond by its six digits
        let fund_or_bond = wyckoff_market::code::fund_or_bond_exchange(f.code.trim()).is_some();
        let code = if fund_or_bond {
            f.code.trim().to_owned()
        } else {
            wyckoff_market::StockCode::parse(&f.code)
                .map(|c| c.digits().to_owned())
                .map_err(|_| invalid(ERR_CODE.into()))?
        };
        if f.side == Side::Opening {
            return Err(invalid("只能记录买入或卖出".into()));
        }
        if f.shares <= 0 {
            return Err(invalid(ERR_SHARES.into()));
        }
        if f.price_e6 <= 0 {
            return Err(invalid(ERR_PRICE.into()));
        }
        if f.date > today {
            return Err(invalid(format!("成交日期 {} 晚于今天", iso(f.date))));
        }
        let history: Vec<Entry> = self
            .load(tx, Some(&code))
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect();
        if let Some(o) = history
            .iter()
            .rev()
            .find(|e| matches!(e.kind, EntryKind::Opening { .. }))
            .filter(|o| o.date > f.date)
        {
            return Err(invalid(format!(
                "{code} 在 {} 有期初持仓记录，不能录入更早的成交",
                iso(o.date)
            )));
        }
        let mut name = wyckoff_market::meta::clean_name(&f.name);
        if name.is_empty() {
            name = names_of(&history).remove(&code).unwrap_or_default();
        }
        if name.is_empty() {
            return Err(invalid(ERR_NAME.into()));
        }
        let amount = amount_fen(f.price_e6, f.shares);
        let (fees, computed) = match f.fees {
            Some(x) if x.commission_fen < 0 || x.stamp_fen < 0 || x.transfer_fen < 0 => {
                return Err(invalid(ERR_FEES.into()));
            }
            Some(x) => (x, false),
            // the fee rules are a stock's (stamp duty on a sale); a fund's or bond's are
            // the broker's own, so they are asked for rather than guessed
            None if fund_or_bond => {
                return Err(invalid(format!(
                    "{code} 是基金或债券：请给出实际费用（--fees）"
                )));
            }
            None => (fees_for(amount, f.side == Side::Sell, f.date), true),
        };
        let kind = if f.side == Side::Buy {
            EntryKind::Buy {
                code,
                shares: f.shares,
                price_e6: f.price_e6,
                amount_fen: amount,
                fees,
            }
        } else {
            EntryKind::Sell {
                code,
                shares: f.shares,
                price_e6: f.price_e6,
                amount_fen: amount,
                fees,
            }
        };
        Ok((
            Entry {
                id: 0,
                date: f.date,
                time: None,
                name,
                kind,
                source: Source::Manual,
                identity: None,
            },
            computed,
        ))
    }

    /// Records one buy or sell and re-derives the position; a sell beyond the holding (at
    /// its date) writes nothing.
    pub async fn record(
        &self,
        f: &NewFill,
        source: Source,
        now: DateTime<Utc>,
    ) -> Result<RecordOutcome, JournalError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let (mut e, computed) = self.prepare(&mut tx, f, today_of(now)).await?;
        e.source = source;
        e.id = self.insert(&mut tx, &e, computed, now).await?;
        let code = e.kind.code().unwrap_or_default().to_owned();
        let position = self.settle(&mut tx, &code, now).await?;
        // the sale's realised P/L from the code's whole history
        let history: Vec<Entry> = self
            .load(&mut tx, Some(&code))
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect();
        let realised = replay(&history)?
            .realised
            .iter()
            .find(|r| r.entry_id == e.id)
            .map(|r| r.pnl_fen);
        tx.commit().await?;
        let stored = Stored {
            entry: e,
            fees_computed: computed,
        };
        let Some(fill) = fill_row(&stored, realised) else {
            return Err(JournalError::Invalid("只能记录买入或卖出".into()));
        };
        let message = format!(
            "已记录 {} {} {} {} 股 @ {}，费用 {}{}；{}",
            fill.date,
            if fill.side == Side::Buy {
                "买入"
            } else {
                "卖出"
            },
            fill.name,
            fill.shares,
            fmt_price_f(fill.price),
            fmt_fen(fill.fees_total_fen),
            realised
                .map(|r| format!("，实现盈亏 {}", fmt_fen(r)))
                .unwrap_or_default(),
            match &position {
                Some(p) => format!("持仓 {} 股，均价 {}", p.shares, fmt_price_f(p.avg_cost)),
                None => "已清仓".into(),
            }
        );
        Ok(RecordOutcome {
            fill,
            position,
            message,
        })
    }

    /// Records one entry that is not a buy or sell (a 银证转账, a dividend, interest, a
    /// tax, bonus or rights shares, a repo leg, a note); the whole history must still hold.
    pub async fn record_entry(
        &self,
        new: &NewEntry,
        source: Source,
        now: DateTime<Utc>,
    ) -> Result<EntryOutcome, JournalError> {
        if matches!(
            new.kind,
            EntryKind::Buy { .. } | EntryKind::Sell { .. } | EntryKind::Opening { .. }
        ) {
            return Err(JournalError::Invalid(
                "买入和卖出请用成交记录（portfolio fill）".into(),
            ));
        }
        new.kind.validate().map_err(JournalError::Invalid)?;
        if new.date > today_of(now) {
            return Err(JournalError::Invalid(format!(
                "日期 {} 晚于今天",
                iso(new.date)
            )));
        }
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let mut e = Entry {
            id: 0,
            date: new.date,
            time: None,
            name: new.name.clone(),
            kind: new.kind.clone(),
            source,
            identity: None,
        };
        e.id = self.insert(&mut tx, &e, false, now).await?;
        let all: Vec<Entry> = self
            .load(&mut tx, None)
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect();
        let ledger = replay(&all)?;
        if let Some(code) = e.kind.code().map(str::to_owned) {
            self.settle(&mut tx, &code, now).await?;
        }
        tx.commit().await?;
        let what = match &e.kind {
            EntryKind::CashIn { amount_fen } => format!("转入 {}", fmt_fen(*amount_fen)),
            EntryKind::CashOut { amount_fen } => format!("转出 {}", fmt_fen(*amount_fen)),
            k => format!("{} 现金 {}", k.as_str(), fmt_fen(k.cash_fen())),
        };
        Ok(EntryOutcome {
            message: format!(
                "已记录 {} {what}；现金余额 {}",
                iso(e.date),
                fmt_fen(ledger.cash_fen)
            ),
            cash_fen: ledger.cash_fen,
            entry: entry_row(&e, None),
        })
    }

    /// Imports a statement's rows, all or none: each row is checked, rows whose identity is
    /// already stored (or repeats an earlier row's) are left out and counted, and the whole
    /// history with the new rows must replay (no sale beyond the holding at its date, no
    /// repo returned that was not lent) or nothing is written; a refusal names the lines.
    pub async fn import_entries(
        &self,
        rows: &[ImportRow],
        now: DateTime<Utc>,
    ) -> Result<EntriesImported, JournalError> {
        let today = today_of(now);
        let mut errors = Vec::new();
        for r in rows {
            if let Err(m) = r.entry.kind.validate() {
                errors.push(RowError {
                    line: r.line,
                    message: m,
                });
            } else if r.entry.date > today || !wyckoff_market::date::is_valid_yyyymmdd(r.entry.date)
            {
                errors.push(RowError {
                    line: r.line,
                    message: format!("日期 {} 无效或晚于今天", r.entry.date),
                });
            }
        }
        if !errors.is_empty() {
            return Err(CsvError::BadRows(errors).into());
        }
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let known: Vec<(String,)> = sqlx::query_as(
            "SELECT identity FROM journal_entry WHERE portfolio_id = ? AND identity IS NOT NULL",
        )
        .bind(&self.id)
        .fetch_all(&mut *tx)
        .await?;
        let mut seen: HashSet<String> = known.into_iter().map(|(i,)| i).collect();
        let mut duplicate_lines = Vec::new();
        let mut lines: HashMap<i64, u32> = HashMap::new();
        let mut codes = BTreeSet::new();
        for r in rows {
            if let Some(identity) = &r.entry.identity
                && !seen.insert(identity.clone())
            {
                duplicate_lines.push(r.line);
                continue;
            }
            let id = self.insert(&mut tx, &r.entry, r.fees_computed, now).await?;
            lines.insert(id, r.line);
            if let Some(code) = r.entry.kind.code() {
                codes.insert(code.to_owned());
            }
        }
        let all: Vec<Entry> = self
            .load(&mut tx, None)
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect();
        let ledger = match replay(&all) {
            Ok(l) => l,
            Err(e) => {
                tx.rollback().await?;
                return Err(match lines.get(&e.entry_id()) {
                    Some(line) => CsvError::BadRows(vec![RowError {
                        line: *line,
                        message: ledger_message(&e),
                    }])
                    .into(),
                    None => e.into(),
                });
            }
        };
        for code in &codes {
            self.settle(&mut tx, code, now).await?;
        }
        tx.commit().await?;
        Ok(EntriesImported {
            added: lines.len() as u32,
            duplicate_lines,
            realised_fen: ledger
                .realised
                .iter()
                .filter(|r| lines.contains_key(&r.entry_id))
                .map(|r| r.pnl_fen)
                .sum(),
        })
    }

    /// Every entry in order (after bringing directly edited positions in).
    pub async fn entries(&self, now: DateTime<Utc>) -> Result<Vec<Entry>, JournalError> {
        Ok(self
            .load_reconciled(now)
            .await?
            .into_iter()
            .map(|s| s.entry)
            .collect())
    }

    async fn load_reconciled(&self, now: DateTime<Utc>) -> Result<Vec<Stored>, JournalError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let stored = self.load(&mut tx, None).await?;
        tx.commit().await?;
        Ok(stored)
    }

    /// The entries and trades (oldest first), the derived positions, the cash and the
    /// realised P/L.
    pub async fn summary(&self, now: DateTime<Utc>) -> Result<JournalSummary, JournalError> {
        let stored = self.load_reconciled(now).await?;
        let entries: Vec<Entry> = stored.iter().map(|s| s.entry.clone()).collect();
        let ledger = replay(&entries)?;
        Ok(summarise(&stored, &entries, &ledger))
    }
}

fn summarise(stored: &[Stored], entries: &[Entry], ledger: &Ledger) -> JournalSummary {
    let realised: HashMap<i64, i64> = ledger
        .realised
        .iter()
        .map(|r| (r.entry_id, r.pnl_fen))
        .collect();
    let names = names_of(entries);
    JournalSummary {
        positions: ledger
            .held()
            .map(|(c, h)| derived(c, names.get(c).map(String::as_str).unwrap_or(""), h))
            .collect(),
        realised_fen: ledger.realised_fen(),
        fees_fen: ledger.totals.fees_fen,
        fills: stored
            .iter()
            .filter_map(|s| fill_row(s, realised.get(&s.entry.id).copied()))
            .collect(),
        entries: entries
            .iter()
            .map(|e| entry_row(e, realised.get(&e.id).copied()))
            .collect(),
        cash_fen: ledger.cash_fen,
        repo_fen: ledger.repo_total_fen(),
        subscription_fen: ledger.subscription_total_fen(),
        totals: ledger.totals,
        transfers_on_record: entries.iter().any(|e| e.kind.external_flow_fen() != 0),
        implied: ledger
            .implied
            .iter()
            .map(|(d, a)| ImpliedTransfer {
                date: iso(*d),
                amount_fen: *a,
            })
            .collect(),
    }
}

/// A ledger refusal worded for a statement line (the line says which entry).
fn ledger_message(e: &LedgerError) -> String {
    match e {
        LedgerError::Oversold { sell, held, .. } => {
            format!("卖出 {sell} 股超过当时持仓 {held} 股")
        }
        other => other.to_string(),
    }
}

fn fmt_price_f(p: f64) -> String {
    crate::money::price_from_f64(p)
        .map(fmt_price)
        .unwrap_or_else(|| "--".into())
}
