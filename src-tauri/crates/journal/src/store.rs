//! The journal in `wyckoff.db`: fills recorded or imported, each write one transaction
//! that re-derives the code's position from its fills and writes it to the portfolio's
//! `portfolio_positions` (shares, average cost, buy date), so every reader of the
//! portfolio sees the journal's figures. Positions that exist without matching fills —
//! from before the journal, or edited directly through `update_portfolio` — enter as
//! opening fills that state them exactly (the reconcile pass), so no figure changes.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{Sqlite, SqlitePool, Transaction};
use wyckoff_market::portfolio::LOCAL_PORTFOLIO_ID;
use wyckoff_time::iso;

use crate::broker_csv::{self, CsvError, RowError, SkippedRow};
use crate::ledger::{Holding, LedgerError, LedgerFill, Side, replay};
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

/// Where a fill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The portfolio page.
    Manual,
    Cli,
    /// The `record_fill` tool (after the user's approval).
    Agent,
    /// A broker 交割单.
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

/// A stored fill as the page, the CLI and the tool show it (money in fen).
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

/// A position derived from the fills.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DerivedPosition {
    pub code: String,
    pub name: String,
    pub shares: i64,
    /// Average cost per share, yuan (fees included).
    pub avg_cost: f64,
    pub cost_basis_fen: i64,
    /// YYYY-MM-DD: the first fill since the holding was last flat.
    pub since: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct JournalSummary {
    pub fills: Vec<FillRow>,
    pub positions: Vec<DerivedPosition>,
    pub realised_fen: i64,
    pub fees_fen: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RecordOutcome {
    pub fill: FillRow,
    /// The code's position after the fill (`None`: sold out).
    pub position: Option<DerivedPosition>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ImportOutcome {
    pub imported: u32,
    pub skipped: Vec<SkippedRow>,
    pub realised_fen: i64,
    pub message: String,
}

pub const ERR_NAME: &str = "缺少股票名称 name";
pub const ERR_SHARES: &str = "成交数量必须是正整数";
pub const ERR_PRICE: &str = "成交价格必须大于 0";
pub const ERR_FEES: &str = "费用不能为负数";
pub const ERR_CODE: &str = "无效的股票代码：A股用6位数字，如 600519";

#[derive(Debug, Clone)]
pub struct JournalStore {
    pool: SqlitePool,
    id: String,
}

type FillDbRow = (
    i64,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    String,
);

struct StoredFill {
    fill: LedgerFill,
    name: String,
    fees_computed: bool,
    source: Source,
}

fn stored(r: FillDbRow) -> StoredFill {
    let side = Side::parse(&r.3).unwrap_or(Side::Opening);
    StoredFill {
        fill: LedgerFill {
            id: r.0,
            code: r.1,
            side,
            date: u32::try_from(r.4).unwrap_or(0),
            price_e6: r.5,
            shares: r.6,
            amount_fen: r.7,
            fees: Fees {
                commission_fen: r.8,
                stamp_fen: r.9,
                transfer_fen: r.10,
            },
        },
        name: r.2,
        fees_computed: r.11 != 0,
        source: Source::parse(&r.12),
    }
}

fn row_of(s: &StoredFill, realised: Option<i64>) -> FillRow {
    FillRow {
        id: s.fill.id,
        code: s.fill.code.clone(),
        name: s.name.clone(),
        side: s.fill.side,
        date: iso(s.fill.date),
        price: price_f64(s.fill.price_e6),
        shares: s.fill.shares,
        amount_fen: s.fill.amount_fen,
        fees: s.fill.fees,
        fees_total_fen: s.fill.fees.total_fen(),
        fees_computed: s.fees_computed,
        source: s.source,
        realised_fen: realised,
    }
}

fn derived(code: &str, name: &str, h: &Holding) -> DerivedPosition {
    DerivedPosition {
        code: code.to_owned(),
        name: name.to_owned(),
        shares: h.shares,
        avg_cost: price_f64(h.avg_cost_e6().unwrap_or(0)),
        cost_basis_fen: h.basis_fen(),
        since: iso(h.since),
    }
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

impl JournalStore {
    /// Uses the shared `wyckoff.db` pool (after `MarketData` opened it: the portfolio's
    /// tables exist), runs this crate's migrations and brings existing positions in as
    /// opening fills.
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
    ) -> Result<Vec<StoredFill>, sqlx::Error> {
        let rows: Vec<FillDbRow> = sqlx::query_as(
            "SELECT id, code, name, side, trade_date, price_e6, shares, amount_fen,
               commission_fen, stamp_fen, transfer_fen, fees_computed, source
             FROM journal_fill WHERE portfolio_id = ? AND (? IS NULL OR code = ?)
             ORDER BY trade_date, id",
        )
        .bind(&self.id)
        .bind(code)
        .bind(code)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.into_iter().map(stored).collect())
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        f: &LedgerFill,
        name: &str,
        fees_computed: bool,
        source: Source,
        now: DateTime<Utc>,
    ) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar(
            "INSERT INTO journal_fill (portfolio_id, code, name, side, trade_date, price_e6,
               shares, amount_fen, commission_fen, stamp_fen, transfer_fen, fees_computed,
               source, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&self.id)
        .bind(&f.code)
        .bind(name)
        .bind(f.side.as_str())
        .bind(i64::from(f.date))
        .bind(f.price_e6)
        .bind(f.shares)
        .bind(f.amount_fen)
        .bind(f.fees.commission_fen)
        .bind(f.fees.stamp_fen)
        .bind(f.fees.transfer_fen)
        .bind(i64::from(fees_computed))
        .bind(source.as_str())
        .bind(now.to_rfc3339_opts(SecondsFormat::Secs, true))
        .fetch_one(&mut **tx)
        .await
    }

    /// Opening fills for every position the fills do not state (and a zero opening for a
    /// holding whose position was removed directly), so the fills derive exactly what the
    /// portfolio shows.
    async fn reconcile(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        now: DateTime<Utc>,
    ) -> Result<u32, JournalError> {
        let positions = self.positions(tx).await?;
        let fills = self.load(tx, None).await?;
        let ledger_fills: Vec<LedgerFill> = fills.iter().map(|s| s.fill.clone()).collect();
        let ledger = replay(&ledger_fills)?;
        let mut last_date: HashMap<&str, u32> = HashMap::new();
        for f in &ledger_fills {
            let d = last_date.entry(f.code.as_str()).or_default();
            *d = (*d).max(f.date);
        }
        let today = wyckoff_market::date::to_yyyymmdd(wyckoff_time::to_beijing(now).date());
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
            let f = LedgerFill {
                id: 0,
                code: p.code.clone(),
                side: Side::Opening,
                date,
                price_e6,
                shares: p.shares,
                amount_fen: 0,
                fees: Fees::default(),
            };
            self.insert(tx, &f, &p.name, false, Source::Opening, now)
                .await?;
            added += 1;
        }
        for (code, h) in &ledger.holdings {
            if positions.iter().any(|p| &p.code == code) {
                continue;
            }
            let last = last_date.get(code.as_str()).copied().unwrap_or(0);
            let name = fills
                .iter()
                .rev()
                .find(|s| &s.fill.code == code)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            let f = LedgerFill {
                id: 0,
                code: code.clone(),
                side: Side::Opening,
                date: today.max(last),
                price_e6: h.avg_cost_e6().unwrap_or(1).max(1),
                shares: 0,
                amount_fen: 0,
                fees: Fees::default(),
            };
            self.insert(tx, &f, &name, false, Source::Opening, now)
                .await?;
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

    /// Re-derives `code` from its fills (refusing an oversold history) and writes it.
    async fn settle(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        code: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DerivedPosition>, JournalError> {
        let fills = self.load(tx, Some(code)).await?;
        let ledger_fills: Vec<LedgerFill> = fills.iter().map(|s| s.fill.clone()).collect();
        let ledger = replay(&ledger_fills)?;
        let name = fills
            .iter()
            .rev()
            .map(|s| s.name.as_str())
            .find(|n| !n.is_empty())
            .unwrap_or("");
        let h = ledger.holdings.get(code);
        self.write_position(tx, code, name, h, now).await?;
        Ok(h.map(|h| derived(code, name, h)))
    }

    /// Checks a new fill against the code's history; fills the name and fees.
    async fn prepare(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        f: &NewFill,
        today: u32,
    ) -> Result<(LedgerFill, String, bool), JournalError> {
        let invalid = |m: String| JournalError::Invalid(m);
        let code = wyckoff_market::StockCode::parse(&f.code)
            .map(|c| c.digits().to_owned())
            .map_err(|_| invalid(ERR_CODE.into()))?;
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
        let history = self.load(tx, Some(&code)).await?;
        if let Some(o) = history
            .iter()
            .rev()
            .find(|s| s.fill.side == Side::Opening)
            .filter(|o| o.fill.date > f.date)
        {
            return Err(invalid(format!(
                "{code} 在 {} 有期初持仓记录，不能录入更早的成交",
                iso(o.fill.date)
            )));
        }
        let mut name = wyckoff_market::meta::clean_name(&f.name);
        if name.is_empty() {
            name = history
                .iter()
                .rev()
                .map(|s| s.name.clone())
                .find(|n| !n.is_empty())
                .unwrap_or_default();
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
            None => (fees_for(amount, f.side == Side::Sell, f.date), true),
        };
        Ok((
            LedgerFill {
                id: 0,
                code,
                side: f.side,
                date: f.date,
                price_e6: f.price_e6,
                shares: f.shares,
                amount_fen: amount,
                fees,
            },
            name,
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
        let today = wyckoff_market::date::to_yyyymmdd(wyckoff_time::to_beijing(now).date());
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let (mut lf, name, computed) = self.prepare(&mut tx, f, today).await?;
        lf.id = self
            .insert(&mut tx, &lf, &name, computed, source, now)
            .await?;
        let position = self.settle(&mut tx, &lf.code, now).await?;
        // the sale's realised P/L from the code's whole history
        let history = self.load(&mut tx, Some(&lf.code)).await?;
        let ledger_fills: Vec<LedgerFill> = history.iter().map(|s| s.fill.clone()).collect();
        let realised = replay(&ledger_fills)?
            .realised
            .iter()
            .find(|r| r.fill_id == lf.id)
            .map(|r| r.pnl_fen);
        tx.commit().await?;
        let fill = row_of(
            &StoredFill {
                fill: lf.clone(),
                name: name.clone(),
                fees_computed: computed,
                source,
            },
            realised,
        );
        let message = format!(
            "已记录 {} {} {name} {} 股 @ {}，费用 {}{}；{}",
            iso(lf.date),
            if lf.side == Side::Buy {
                "买入"
            } else {
                "卖出"
            },
            lf.shares,
            fmt_price(lf.price_e6),
            fmt_fen(lf.fees.total_fen()),
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

    /// Imports a broker 交割单: all rows or none. Each code's history must hold (no sale
    /// beyond the holding at its date) or nothing is written.
    pub async fn import(
        &self,
        bytes: &[u8],
        now: DateTime<Utc>,
    ) -> Result<ImportOutcome, JournalError> {
        let parsed = broker_csv::parse(bytes)?;
        let today = wyckoff_market::date::to_yyyymmdd(wyckoff_time::to_beijing(now).date());
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let mut errors = Vec::new();
        let mut prepared = Vec::new();
        for f in &parsed.fills {
            let nf = NewFill {
                code: f.code.clone(),
                name: f.name.clone(),
                side: f.side,
                date: f.date,
                price_e6: f.price_e6,
                shares: f.shares,
                fees: Some(f.fees),
            };
            match self.prepare(&mut tx, &nf, today).await {
                Ok((mut lf, name, _)) => {
                    // the broker's own amount (an average price is rounded)
                    lf.amount_fen = f.amount_fen;
                    prepared.push((f.line, lf, name, f.fees_computed));
                }
                Err(JournalError::Invalid(m)) => errors.push(RowError {
                    line: f.line as u32,
                    message: m,
                }),
                Err(e) => return Err(e),
            }
        }
        if !errors.is_empty() {
            return Err(CsvError::BadRows(errors).into());
        }
        let mut lines: HashMap<i64, usize> = HashMap::new();
        let mut codes = BTreeMap::new();
        for (line, lf, name, computed) in &prepared {
            let id = self
                .insert(&mut tx, lf, name, *computed, Source::Import, now)
                .await?;
            lines.insert(id, *line);
            codes.insert(lf.code.clone(), ());
        }
        for code in codes.keys() {
            match self.settle(&mut tx, code, now).await {
                Ok(_) => {}
                Err(JournalError::Ledger(LedgerError::Oversold {
                    fill_id,
                    sell,
                    held,
                    ..
                })) => {
                    let line = lines.get(&fill_id).copied().unwrap_or(0);
                    tx.rollback().await?;
                    return Err(CsvError::BadRows(vec![RowError {
                        line: line as u32,
                        message: format!("卖出 {sell} 股超过当时持仓 {held} 股"),
                    }])
                    .into());
                }
                Err(e) => return Err(e),
            }
        }
        let all = self.load(&mut tx, None).await?;
        let ledger_fills: Vec<LedgerFill> = all.iter().map(|s| s.fill.clone()).collect();
        let realised_fen = replay(&ledger_fills)?
            .realised
            .iter()
            .filter(|r| lines.contains_key(&r.fill_id))
            .map(|r| r.pnl_fen)
            .sum();
        tx.commit().await?;
        let imported = prepared.len() as u32;
        Ok(ImportOutcome {
            imported,
            message: format!(
                "已导入 {imported} 笔成交，跳过 {} 行非买卖业务；这些卖出的实现盈亏 {}",
                parsed.skipped.len(),
                fmt_fen(realised_fen)
            ),
            skipped: parsed.skipped,
            realised_fen,
        })
    }

    /// The fills (oldest first), the derived positions and the realised P/L.
    pub async fn summary(&self, now: DateTime<Utc>) -> Result<JournalSummary, JournalError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let fills = self.load(&mut tx, None).await?;
        tx.commit().await?;
        let ledger_fills: Vec<LedgerFill> = fills.iter().map(|s| s.fill.clone()).collect();
        let ledger = replay(&ledger_fills)?;
        let realised: HashMap<i64, i64> = ledger
            .realised
            .iter()
            .map(|r| (r.fill_id, r.pnl_fen))
            .collect();
        let names: HashMap<&str, &str> = fills
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| (s.fill.code.as_str(), s.name.as_str()))
            .collect();
        Ok(JournalSummary {
            positions: ledger
                .holdings
                .iter()
                .map(|(c, h)| derived(c, names.get(c.as_str()).copied().unwrap_or(""), h))
                .collect(),
            realised_fen: ledger.realised_fen(),
            fees_fen: ledger_fills.iter().map(|f| f.fees.total_fen()).sum(),
            fills: fills
                .iter()
                .map(|s| row_of(s, realised.get(&s.fill.id).copied()))
                .collect(),
        })
    }

    /// The fills in order with names (for the value series and the exit review).
    pub async fn ledger_fills(
        &self,
        now: DateTime<Utc>,
    ) -> Result<(Vec<LedgerFill>, HashMap<String, String>), JournalError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        self.reconcile(&mut tx, now).await?;
        let fills = self.load(&mut tx, None).await?;
        tx.commit().await?;
        let names = fills
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| (s.fill.code.clone(), s.name.clone()))
            .collect();
        Ok((fills.into_iter().map(|s| s.fill).collect(), names))
    }
}

fn fmt_price_f(p: f64) -> String {
    crate::money::price_from_f64(p)
        .map(fmt_price)
        .unwrap_or_else(|| "--".into())
}
