//! A broker statement into the journal: read whole ([`crate::broker::parse`]), its rows
//! booked as ledger entries through [`JournalStore::import_entries`] (all or none; a row
//! whose identity is already on record is counted, not added again), its stated balances
//! kept, and the ledger reconciled against every balance any statement stated.

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use wyckoff_market::code::Exchange;
use wyckoff_market::portfolio::LOCAL_PORTFOLIO_ID;

use crate::broker::reconcile::{self, Checkpoint, Reconciliation};
use crate::broker::{self, IgnoredLine, SkippedRow, TextEncoding};
use crate::money::fmt_fen;
use crate::store::{ImportRow, JournalError, JournalStore};

/// How many entries of one kind an import added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct KindCount {
    /// The entry kind's tag (`buy`, `dividend`, `repo_lend`, …).
    pub kind: String,
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ImportOutcome {
    /// Entries added (a 逆回购 with a fee is two).
    pub imported: u32,
    /// Entries already on record from an earlier import (same identity), not added again.
    pub duplicates: u32,
    /// Rows whose business is not understood and that move neither shares nor cash.
    pub skipped: Vec<SkippedRow>,
    /// Realised P/L of the sales added.
    pub realised_fen: i64,
    pub message: String,
    /// Entries added by kind.
    pub by_kind: Vec<KindCount>,
    /// Lines that are not rows by rule (合计 summaries, notes without columns).
    pub ignored: Vec<IgnoredLine>,
    pub encoding: TextEncoding,
    /// Trades whose fees came from the fee rules (the file had neither fees nor 发生金额).
    pub fees_computed: u32,
    /// The ledger against every balance the statements stated.
    pub reconciliation: Reconciliation,
}

type BalanceRow = (i64, String, i64, i64);

impl JournalStore {
    /// Imports a broker statement (交割单 / 对账单): all rows or none; see the module notes.
    pub async fn import(
        &self,
        bytes: &[u8],
        now: DateTime<Utc>,
    ) -> Result<ImportOutcome, JournalError> {
        let st = broker::parse(bytes)?;
        let rows: Vec<ImportRow> = st
            .rows
            .iter()
            .flat_map(|r| {
                r.entries.iter().map(|e| ImportRow {
                    line: r.line,
                    entry: e.clone(),
                    fees_computed: r.fees_computed,
                })
            })
            .collect();
        let out = self.import_entries(&rows, now).await?;
        self.save_balances(&reconcile::checkpoints(&st.rows), now)
            .await?;
        self.save_exchanges(&st.exchanges, now).await?;
        let reconciliation = self.reconciliation(now).await?;
        let duplicates = out.duplicate_lines.len() as u32;
        let mut by_kind: BTreeMap<&str, u32> = BTreeMap::new();
        let mut dup = out.duplicate_lines.clone();
        for r in &rows {
            // rows' entries in order: the first of a line's duplicates is taken out
            if let Some(k) = dup.iter().position(|l| *l == r.line) {
                dup.remove(k);
                continue;
            }
            *by_kind.entry(r.entry.kind.as_str()).or_default() += 1;
        }
        let fees_computed = st.rows.iter().filter(|r| r.fees_computed).count() as u32;
        let message = format!(
            "已导入 {} 条记录{}；{} 条已在账中，未重复记录{}{}；这些卖出的实现盈亏 {}；{}",
            out.added,
            if by_kind.is_empty() {
                String::new()
            } else {
                format!(
                    "（{}）",
                    by_kind
                        .iter()
                        .map(|(k, n)| format!("{} {n}", kind_label(k)))
                        .collect::<Vec<_>>()
                        .join("、")
                )
            },
            duplicates,
            if st.skipped_count() > 0 {
                format!(
                    "；{} 行业务不认识（不动资金和股份），已列出",
                    st.skipped_count()
                )
            } else {
                String::new()
            },
            if fees_computed > 0 {
                format!("；{fees_computed} 笔成交的费用按费率计算")
            } else {
                String::new()
            },
            fmt_fen(out.realised_fen),
            reconciliation_text(&reconciliation),
        );
        Ok(ImportOutcome {
            imported: out.added,
            duplicates,
            skipped: st.not_understood,
            realised_fen: out.realised_fen,
            message,
            by_kind: by_kind
                .into_iter()
                .map(|(k, count)| KindCount {
                    kind: k.to_owned(),
                    count,
                })
                .collect(),
            ignored: st.ignored,
            encoding: st.encoding,
            fees_computed,
            reconciliation,
        })
    }

    /// Keeps the exchange the statement names for each code (see the migration's notes).
    async fn save_exchanges(
        &self,
        exchanges: &BTreeMap<String, (Exchange, u32)>,
        now: DateTime<Utc>,
    ) -> Result<(), JournalError> {
        if exchanges.is_empty() {
            return Ok(());
        }
        let mut tx = wyckoff_db::begin_write(self.pool()).await?;
        let at = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        for (code, (exchange, line)) in exchanges {
            sqlx::query(
                "INSERT INTO journal_code_exchange (portfolio_id, code, exchange, line, imported_at)
                 VALUES (?, ?, ?, ?, ?)
                 ON CONFLICT(portfolio_id, code) DO UPDATE SET
                   exchange = excluded.exchange, line = excluded.line,
                   imported_at = excluded.imported_at",
            )
            .bind(LOCAL_PORTFOLIO_ID)
            .bind(code)
            .bind(exchange.as_str())
            .bind(i64::from(*line))
            .bind(&at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The exchange each code's statements named (codes none named are absent).
    pub async fn stated_exchanges(&self) -> Result<BTreeMap<String, Exchange>, JournalError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT code, exchange FROM journal_code_exchange WHERE portfolio_id = ?",
        )
        .bind(LOCAL_PORTFOLIO_ID)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(code, ex)| {
                let ex = match ex.as_str() {
                    "SH" => Exchange::SH,
                    "SZ" => Exchange::SZ,
                    _ => return None,
                };
                Some((code, ex))
            })
            .collect())
    }

    async fn save_balances(
        &self,
        points: &[Checkpoint],
        now: DateTime<Utc>,
    ) -> Result<(), JournalError> {
        let mut tx = wyckoff_db::begin_write(self.pool()).await?;
        let at = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        for p in points {
            sqlx::query(
                "INSERT INTO journal_statement_balance
                   (portfolio_id, trade_date, code, line, stated, imported_at)
                 VALUES (?, ?, ?, ?, ?, ?)
                 ON CONFLICT(portfolio_id, trade_date, code) DO UPDATE SET
                   line = excluded.line, stated = excluded.stated,
                   imported_at = excluded.imported_at",
            )
            .bind(LOCAL_PORTFOLIO_ID)
            .bind(i64::from(p.date))
            .bind(p.code.as_deref().unwrap_or(""))
            .bind(i64::from(p.line))
            .bind(p.stated)
            .bind(&at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The ledger against every balance an imported statement stated (empty when no
    /// statement had balance columns).
    pub async fn reconciliation(&self, now: DateTime<Utc>) -> Result<Reconciliation, JournalError> {
        let rows: Vec<BalanceRow> = sqlx::query_as(
            "SELECT trade_date, code, line, stated FROM journal_statement_balance
             WHERE portfolio_id = ? ORDER BY trade_date, code",
        )
        .bind(LOCAL_PORTFOLIO_ID)
        .fetch_all(self.pool())
        .await?;
        let points: Vec<Checkpoint> = rows
            .into_iter()
            .map(|(date, code, line, stated)| Checkpoint {
                date: u32::try_from(date).unwrap_or(0),
                code: (!code.is_empty()).then_some(code),
                line: u32::try_from(line).unwrap_or(0),
                stated,
            })
            .collect();
        let entries = self.entries(now).await?;
        Ok(reconcile::reconcile(&points, &entries))
    }
}

fn kind_label(kind: &str) -> &'static str {
    match kind {
        "buy" => "买入",
        "sell" => "卖出",
        "opening" => "期初",
        "cash_in" => "转入",
        "cash_out" => "转出",
        "dividend" => "股息",
        "interest" => "利息",
        "tax" => "税",
        "fee" => "费用",
        "bonus_shares" => "送转股",
        "rights_issue" => "配股",
        "repo_lend" => "逆回购",
        "repo_return" => "逆回购到期",
        "subscription_paid" => "申购冻结",
        "subscription_released" => "申购解冻",
        "note" => "备注",
        _ => "其他",
    }
}

/// One sentence on the reconciliation.
pub fn reconciliation_text(r: &Reconciliation) -> String {
    if r.checked == 0 {
        return "文件没有股份余额/资金余额列，未对账".into();
    }
    if r.differences.is_empty() {
        return format!("对账：{} 个余额与账本一致", r.checked);
    }
    let first = &r.differences[0];
    let what = match &first.code {
        Some(c) => format!(
            "{c} 股份余额 {} 股，账本 {} 股",
            first.statement, first.derived
        ),
        None => format!(
            "资金余额 {}，账本 {}",
            fmt_fen(first.statement),
            fmt_fen(first.derived)
        ),
    };
    format!(
        "对账：{} 个余额中 {} 个不一致，最早 {}（第 {} 行）{what}",
        r.checked,
        r.differences.len(),
        first.date,
        first.line
    )
}
