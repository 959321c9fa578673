//! The user's portfolio in SQLite: positions and free cash. Every write is one
//! transaction; a batch with any invalid item writes nothing.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{Sqlite, SqlitePool, Transaction};

use crate::code::StockCode;

/// The local user's portfolio id (the reference's `USER_LIVE:{user_id}` with user "local").
pub const LOCAL_PORTFOLIO_ID: &str = "USER_LIVE:local";
pub const MAX_BATCH: usize = 30;

pub const ERR_SHARES: &str = "shares 必须大于 0";
pub const ERR_COST: &str = "cost_price 必须大于 0";
pub const ERR_CASH: &str = "free_cash 不能为负数";
pub const ERR_BUY_DT_MISSING: &str = "缺少建仓日 buy_dt，请询问用户后再写入";
pub const ERR_BUY_DT_INVALID: &str = "buy_dt 必须是合法日期 YYYYMMDD 或 YYYY-MM-DD";
pub const ERR_UPDATE_MISSING: &str = "持仓不存在，无法 update；请改用 add 并提供建仓日 buy_dt";
pub const ERR_ADD_EXISTS: &str = "持仓已存在，无法 add；请改用 update";
pub const ERR_REMOVE_MISSING: &str = "持仓不存在，无法 remove";
pub const ERR_ITEMS_EMPTY: &str = "items 必须是非空数组";
pub const ERR_BATCH_TOO_LARGE: &str = "单次最多 30 条，请拆分后重试";
pub const ERR_BAD_CODE: &str = "无效的股票代码：A股用6位数字，如 600519、600519.SH 或 sh600519";
pub const ERR_NAME_MISSING: &str = "缺少股票名称 name，请先用 search_stock_by_name 确认";
pub const ERR_BATCH_ACTION: &str = "批量 items 只支持 add / update / remove";

#[derive(Debug, thiserror::Error)]
pub enum PortfolioError {
    /// A validation failure; the message is the user-facing string.
    #[error("{0}")]
    Invalid(String),
    /// A batch item failed validation; nothing was written.
    #[error("{}", .failures.first().map(|f| f.message.as_str()).unwrap_or(""))]
    Batch { failures: Vec<ItemFailure> },
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemFailure {
    pub index: usize,
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub code: String,
    pub name: String,
    pub shares: i64,
    pub cost_price: f64,
    /// YYYY-MM-DD
    pub buy_dt: String,
    /// None when unset (never 0).
    pub stop_loss: Option<f64>,
    /// The target (take-profit) price; None when unset.
    #[serde(default)]
    pub target_price: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortfolioView {
    pub portfolio_id: String,
    pub free_cash: f64,
    pub position_count: usize,
    pub positions: Vec<Position>,
}

/// One write. Fields are as the user/tool gave them; validation happens in `apply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PortfolioOp {
    Add {
        code: String,
        name: String,
        shares: i64,
        cost_price: f64,
        buy_dt: Option<String>,
    },
    Update {
        code: String,
        name: Option<String>,
        shares: Option<i64>,
        cost_price: Option<f64>,
        buy_dt: Option<String>,
    },
    Remove {
        code: String,
    },
    SetCash {
        free_cash: f64,
    },
}

impl PortfolioOp {
    fn code(&self) -> &str {
        match self {
            PortfolioOp::Add { code, .. }
            | PortfolioOp::Update { code, .. }
            | PortfolioOp::Remove { code } => code,
            PortfolioOp::SetCash { .. } => "",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WriteOutcome {
    pub message: String,
    pub view: PortfolioView,
}

fn invalid(msg: &str) -> PortfolioError {
    PortfolioError::Invalid(msg.to_string())
}

fn norm_code(code: &str) -> Result<String, PortfolioError> {
    StockCode::parse(code)
        .map(|c| c.digits().to_string())
        .map_err(|_| invalid(ERR_BAD_CODE))
}

fn check_shares(s: i64) -> Result<(), PortfolioError> {
    if s > 0 {
        Ok(())
    } else {
        Err(invalid(ERR_SHARES))
    }
}

fn check_cost(c: f64) -> Result<(), PortfolioError> {
    if c.is_finite() && c > 0.0 {
        Ok(())
    } else {
        Err(invalid(ERR_COST))
    }
}

/// Strict `YYYYMMDD`/`YYYY-MM-DD` → `YYYY-MM-DD`.
fn norm_buy_dt(s: &str) -> Result<String, PortfolioError> {
    crate::date::parse_date(s)
        .map(crate::date::iso)
        .ok_or_else(|| invalid(ERR_BUY_DT_INVALID))
}

#[derive(Debug, Clone)]
pub struct PortfolioStore {
    pool: SqlitePool,
    id: String,
}

impl PortfolioStore {
    pub fn new(pool: SqlitePool) -> Self {
        Self {
            pool,
            id: LOCAL_PORTFOLIO_ID.to_string(),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub async fn view(&self) -> Result<PortfolioView, PortfolioError> {
        let mut conn = self.pool.acquire().await?;
        view_on(&mut conn, &self.id).await
    }

    /// One operation in its own transaction.
    pub async fn apply(
        &self,
        op: PortfolioOp,
        now: DateTime<Utc>,
    ) -> Result<WriteOutcome, PortfolioError> {
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        ensure_portfolio(&mut tx, &self.id, now).await?;
        let message = apply_in(&mut tx, &self.id, &op, now).await?;
        tx.commit().await?;
        Ok(WriteOutcome {
            message,
            view: self.view().await?,
        })
    }

    /// Up to 30 add/update/remove items in ONE transaction: if any item is invalid, every
    /// failure is reported and nothing is written.
    pub async fn batch(
        &self,
        items: Vec<PortfolioOp>,
        now: DateTime<Utc>,
    ) -> Result<WriteOutcome, PortfolioError> {
        if items.is_empty() {
            return Err(invalid(ERR_ITEMS_EMPTY));
        }
        if items.len() > MAX_BATCH {
            return Err(invalid(ERR_BATCH_TOO_LARGE));
        }
        let mut tx = wyckoff_db::begin_write(&self.pool).await?;
        ensure_portfolio(&mut tx, &self.id, now).await?;
        let mut failures = Vec::new();
        let mut done = Vec::new();
        for (index, op) in items.iter().enumerate() {
            if matches!(op, PortfolioOp::SetCash { .. }) {
                failures.push(ItemFailure {
                    index,
                    code: String::new(),
                    message: ERR_BATCH_ACTION.into(),
                });
                continue;
            }
            match apply_in(&mut tx, &self.id, op, now).await {
                Ok(msg) => done.push(msg),
                Err(PortfolioError::Invalid(message)) => failures.push(ItemFailure {
                    index,
                    code: op.code().to_string(),
                    message,
                }),
                Err(e) => return Err(e),
            }
        }
        if !failures.is_empty() {
            tx.rollback().await?;
            return Err(PortfolioError::Batch { failures });
        }
        tx.commit().await?;
        Ok(WriteOutcome {
            message: format!("批量写入成功 {} 条", done.len()),
            view: self.view().await?,
        })
    }

    /// Sets or clears a position's stop-loss price.
    pub async fn set_stop_loss(
        &self,
        code: &str,
        stop_loss: Option<f64>,
        now: DateTime<Utc>,
    ) -> Result<(), PortfolioError> {
        let code = norm_code(code)?;
        if let Some(p) = stop_loss
            && !(p.is_finite() && p > 0.0)
        {
            return Err(invalid("stop_loss 必须大于 0"));
        }
        let n = sqlx::query(
            "UPDATE portfolio_positions SET stop_loss = ?, updated_at = ? WHERE portfolio_id = ? AND code = ?",
        )
        .bind(stop_loss)
        .bind(now.to_rfc3339())
        .bind(&self.id)
        .bind(&code)
        .execute(&self.pool)
        .await?
        .rows_affected();
        if n == 0 {
            return Err(invalid("持仓不存在，无法设置止损"));
        }
        Ok(())
    }

    /// Sets a position's stop-loss and target price together (`None` clears one); a
    /// target must lie above the stop.
    pub async fn set_levels(
        &self,
        code: &str,
        stop_loss: Option<f64>,
        target_price: Option<f64>,
        now: DateTime<Utc>,
    ) -> Result<(), PortfolioError> {
        let code = norm_code(code)?;
        if let Some(p) = stop_loss
            && !(p.is_finite() && p > 0.0)
        {
            return Err(invalid("stop_loss 必须大于 0"));
        }
        if let Some(p) = target_price
            && !(p.is_finite() && p > 0.0)
        {
            return Err(invalid("target_price 必须大于 0"));
        }
        if let (Some(stop), Some(target)) = (stop_loss, target_price)
            && target <= stop
        {
            return Err(invalid("目标价必须高于止损价"));
        }
        let n = sqlx::query(
            "UPDATE portfolio_positions SET stop_loss = ?, target_price = ?, updated_at = ? WHERE portfolio_id = ? AND code = ?",
        )
        .bind(stop_loss)
        .bind(target_price)
        .bind(now.to_rfc3339())
        .bind(&self.id)
        .bind(&code)
        .execute(&self.pool)
        .await?
        .rows_affected();
        if n == 0 {
            return Err(invalid("持仓不存在，无法设置止损/目标价"));
        }
        Ok(())
    }
}

async fn ensure_portfolio(
    tx: &mut Transaction<'_, Sqlite>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    let now = now.to_rfc3339();
    sqlx::query(
        "INSERT INTO portfolio (id, created_at, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
    )
    .bind(id)
    .bind(&now)
    .bind(&now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn exists(
    tx: &mut Transaction<'_, Sqlite>,
    id: &str,
    code: &str,
) -> Result<bool, sqlx::Error> {
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM portfolio_positions WHERE portfolio_id = ? AND code = ?",
    )
    .bind(id)
    .bind(code)
    .fetch_one(&mut **tx)
    .await?;
    Ok(n > 0)
}

/// Validates and applies one op inside `tx`; returns the success message.
async fn apply_in(
    tx: &mut Transaction<'_, Sqlite>,
    id: &str,
    op: &PortfolioOp,
    now: DateTime<Utc>,
) -> Result<String, PortfolioError> {
    let ts = now.to_rfc3339();
    match op {
        PortfolioOp::Add {
            code,
            name,
            shares,
            cost_price,
            buy_dt,
        } => {
            let code = norm_code(code)?;
            let name = crate::meta::clean_name(name);
            if name.is_empty() {
                return Err(invalid(ERR_NAME_MISSING));
            }
            check_shares(*shares)?;
            check_cost(*cost_price)?;
            let buy_dt = match buy_dt.as_deref().map(str::trim) {
                None | Some("") => return Err(invalid(ERR_BUY_DT_MISSING)),
                Some(s) => norm_buy_dt(s)?,
            };
            if exists(tx, id, &code).await? {
                return Err(invalid(ERR_ADD_EXISTS));
            }
            sqlx::query(
                "INSERT INTO portfolio_positions
                   (portfolio_id, code, name, shares, cost_price, buy_dt, stop_loss, updated_at)
                 VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
            )
            .bind(id)
            .bind(&code)
            .bind(&name)
            .bind(shares)
            .bind(cost_price)
            .bind(&buy_dt)
            .bind(&ts)
            .execute(&mut **tx)
            .await?;
            Ok(format!("已添加 {code} {name} {shares}股 成本{cost_price}"))
        }
        PortfolioOp::Update {
            code,
            name,
            shares,
            cost_price,
            buy_dt,
        } => {
            let code = norm_code(code)?;
            if let Some(s) = shares {
                check_shares(*s)?;
            }
            if let Some(c) = cost_price {
                check_cost(*c)?;
            }
            let buy_dt = match buy_dt.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(s) => Some(norm_buy_dt(s)?),
            };
            if !exists(tx, id, &code).await? {
                return Err(invalid(ERR_UPDATE_MISSING));
            }
            let name = name
                .as_deref()
                .map(crate::meta::clean_name)
                .filter(|n| !n.is_empty());
            sqlx::query(
                "UPDATE portfolio_positions SET
                   name = COALESCE(?, name), shares = COALESCE(?, shares),
                   cost_price = COALESCE(?, cost_price), buy_dt = COALESCE(?, buy_dt),
                   updated_at = ?
                 WHERE portfolio_id = ? AND code = ?",
            )
            .bind(name)
            .bind(shares)
            .bind(cost_price)
            .bind(buy_dt)
            .bind(&ts)
            .bind(id)
            .bind(&code)
            .execute(&mut **tx)
            .await?;
            Ok(format!("已更新 {code}"))
        }
        PortfolioOp::Remove { code } => {
            let code = norm_code(code)?;
            let n =
                sqlx::query("DELETE FROM portfolio_positions WHERE portfolio_id = ? AND code = ?")
                    .bind(id)
                    .bind(&code)
                    .execute(&mut **tx)
                    .await?
                    .rows_affected();
            if n == 0 {
                return Err(invalid(ERR_REMOVE_MISSING));
            }
            Ok(format!("已删除 {code}"))
        }
        PortfolioOp::SetCash { free_cash } => {
            if !free_cash.is_finite() || *free_cash < 0.0 {
                return Err(invalid(ERR_CASH));
            }
            sqlx::query(
                "INSERT INTO portfolio_cash (portfolio_id, free_cash, updated_at) VALUES (?, ?, ?)
                 ON CONFLICT(portfolio_id) DO UPDATE SET free_cash = excluded.free_cash,
                   updated_at = excluded.updated_at",
            )
            .bind(id)
            .bind(free_cash)
            .bind(&ts)
            .execute(&mut **tx)
            .await?;
            Ok(format!("可用资金已设为 {free_cash}"))
        }
    }
}

async fn view_on(
    conn: &mut sqlx::SqliteConnection,
    id: &str,
) -> Result<PortfolioView, PortfolioError> {
    let free_cash: Option<f64> =
        sqlx::query_scalar("SELECT free_cash FROM portfolio_cash WHERE portfolio_id = ?")
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
    type Row = (String, String, i64, f64, String, Option<f64>, Option<f64>);
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT code, name, shares, cost_price, buy_dt, stop_loss, target_price FROM portfolio_positions
         WHERE portfolio_id = ? ORDER BY code",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    let positions: Vec<Position> = rows
        .into_iter()
        .map(
            |(code, name, shares, cost_price, buy_dt, stop_loss, target_price)| Position {
                code,
                name,
                shares,
                cost_price,
                buy_dt,
                stop_loss: stop_loss.filter(|s| *s > 0.0),
                target_price: target_price.filter(|s| *s > 0.0),
            },
        )
        .collect();
    Ok(PortfolioView {
        portfolio_id: id.to_string(),
        free_cash: free_cash.unwrap_or(0.0),
        position_count: positions.len(),
        positions,
    })
}
