//! `portfolio` (view / diagnose) and `update_portfolio` (REFERENCE §2.3 #3 and #11, §14.2–14.3).
//! The portfolio lives in SQLite (`wyckoff-market`'s store); every write is one transaction
//! and a batch with any invalid item writes nothing.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::diagnosis::{DiagnosisBrief, Targets};
use wyckoff_engine::{Diagnosis, ExitKind, Holding, Stage, Track, diagnose};
use wyckoff_journal::JournalStore;
use wyckoff_market::portfolio::{
    ERR_BATCH_ACTION, ERR_BATCH_TOO_LARGE, ERR_ITEMS_EMPTY, ItemFailure, MAX_BATCH, WriteOutcome,
};
use wyckoff_market::{DataStatus, MarketData, PortfolioError, PortfolioOp, PortfolioView};
use wyckoff_time::iso;

use crate::common::{
    BarsFreshness, market_err, opt_f64, opt_i64, opt_str, round, round_tree, status_str, worst,
};

pub const PORTFOLIO: &str = "portfolio";
pub const PORTFOLIO_DISPLAY: &str = "持仓";
pub const PORTFOLIO_DESCRIPTION: &str = "查看或诊断用户持仓（本地 SQLite）。mode='view' 返回持仓列表和可用资金；\
mode='diagnose' 对每只持仓做 Wyckoff 健康诊断（按成本价和建仓日），给出市值、盈亏、仓位占比，\
每只带 data_status / source / as_of；没有行情的持仓单列为失败，不估算。";

pub const UPDATE: &str = "update_portfolio";
pub const UPDATE_DISPLAY: &str = "调仓操作";
pub const UPDATE_DESCRIPTION: &str = "管理用户持仓（需要用户批准）。action: add（新建持仓，须给 code、shares、cost_price、buy_dt；name 可省略，按代码查名称）、\
update（改已有持仓的股数/成本/名称；目标不存在时报错，不会新建）、remove（删除持仓）、set_cash（设置可用资金 free_cash）。\
用户一次给出多只加/改/删时，必须用 items 一次提交（最多 30 条，action 为 add/update/remove），禁止拆成多次调用；\
任何一条校验失败则整批不写入。操作后返回最新持仓。只支持 A 股；不支持删除推荐/信号追踪记录（delete_records）。";

pub fn portfolio_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["view", "diagnose"],
                "description": "'view' 持仓列表和资金（默认）；'diagnose' 逐只 Wyckoff 健康诊断"}
        },
        "additionalProperties": false
    })
}

pub fn update_parameters() -> Value {
    let date =
        "建仓日 YYYYMMDD 或 YYYY-MM-DD（须为真实日历日）。add 必填；update 改股数/成本时不要传";
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "update", "remove", "set_cash"],
                "description": "add / update / remove / set_cash；有 items 时作用于每一条（set_cash 不能批量）"},
            "code": {"type": "string", "description": "A 股代码，如 '600519'"},
            "name": {"type": "string", "description": "股票名称；add 时可省略，按代码从股票列表查"},
            "shares": {"type": "integer", "description": "股数，必须大于 0"},
            "cost_price": {"type": "number", "description": "成本价，必须大于 0"},
            "buy_dt": {"type": "string", "description": date},
            "free_cash": {"type": "number", "description": "可用资金（set_cash），不能为负数"},
            "items": {
                "type": "array",
                "description": "批量操作（最多 30 条），每条与 action 相同的字段",
                "items": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "name": {"type": "string"},
                        "shares": {"type": "integer"},
                        "cost_price": {"type": "number"},
                        "buy_dt": {"type": "string", "description": date}
                    },
                    "required": ["code"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["action"],
        "additionalProperties": false
    })
}

fn view_json(v: &PortfolioView, cash_from_ledger: bool) -> Value {
    let mut out = serde_json::to_value(v).unwrap_or_else(|_| json!({}));
    out["cash_source"] = json!(if cash_from_ledger { "ledger" } else { "stated" });
    out["data_status"] = json!("ok");
    out["source"] = json!("local");
    out["as_of"] = Value::Null;
    out
}

/// The ledger's cash, in yuan, once the ledger records a bank transfer (银证转账): from
/// then on it is the account's free cash, and the portfolio's stated figure is not used.
/// `None` while the ledger holds no transfer.
pub async fn ledger_cash(md: &MarketData) -> Result<Option<f64>, ToolError> {
    let now = md.clock().now();
    let failed = |e: wyckoff_journal::JournalError| ToolError::Failed(format!("账本读取失败: {e}"));
    let summary = JournalStore::new(md.pool().clone(), now)
        .await
        .map_err(failed)?
        .summary(now)
        .await
        .map_err(failed)?;
    Ok(summary
        .transfers_on_record
        .then(|| summary.cash_fen as f64 / 100.0))
}

/// The portfolio as the account stands: its free cash the ledger's once the ledger holds a
/// transfer (then `true`), else the figure stated with `set_cash`.
pub async fn account_view(md: &MarketData) -> Result<(PortfolioView, bool), ToolError> {
    let mut view = md
        .portfolio()
        .view()
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let cash = ledger_cash(md).await?;
    if let Some(cash) = cash {
        view.free_cash = cash;
    }
    Ok((view, cash.is_some()))
}

pub async fn portfolio(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let (view, cash_from_ledger) = account_view(md).await?;
    let mode = opt_str(args, "mode").unwrap_or("view");
    if view.positions.is_empty() {
        let mut out = view_json(&view, cash_from_ledger);
        out["message"] = json!(if view.free_cash > 0.0 {
            "持仓记录存在但无头寸"
        } else {
            "未找到持仓记录，可通过 update_portfolio 添加"
        });
        return Ok(out);
    }
    match mode {
        "view" => Ok(view_json(&view, cash_from_ledger)),
        "diagnose" => {
            let report = diagnose_all(md, &view).await?;
            let mut v =
                serde_json::to_value(&report).map_err(|e| ToolError::Failed(e.to_string()))?;
            round_tree(&mut v);
            Ok(v)
        }
        other => Err(ToolError::InvalidArgs(format!(
            "mode 参数无效: '{other}'，可选值: view, diagnose"
        ))),
    }
}

/// Every holding diagnosed, as `portfolio` (mode diagnose) reports it and the app's
/// portfolio page reads it. Figures are rounded as the tool gives them (4 decimals; money
/// and weights 2, the cost 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortfolioDiagnosis {
    pub portfolio_id: String,
    pub free_cash: f64,
    pub position_count: usize,
    pub successful_count: usize,
    /// Holdings without bars: the totals and weights leave them out.
    pub failed_count: usize,
    pub total_market_value: f64,
    pub total_assets: f64,
    /// The worst of the holdings' statuses; partial when some have no bars.
    pub data_status: String,
    pub source: String,
    /// The oldest last bar among the holdings: the whole picture is no fresher than that.
    pub as_of: Option<String>,
    pub benchmark_used: bool,
    /// Set when some holdings have no bars, saying the totals leave them out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub market_value_note: Option<String>,
    pub diagnostics: Vec<HoldingReport>,
}

/// One holding: its bars' freshness, the position, and when it has bars the engine's
/// diagnosis with its value, P/L and weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldingReport {
    #[serde(flatten)]
    pub freshness: BarsFreshness,
    pub code: String,
    pub name: String,
    pub shares: i64,
    pub cost: f64,
    /// YYYY-MM-DD.
    pub buy_dt: String,
    pub stop_loss: Option<f64>,
    pub target_price: Option<f64>,
    /// Why it has no diagnosis (no bars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(flatten)]
    pub diagnosis: Option<HoldingDiagnosis>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub market_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pnl_amount: Option<f64>,
    /// Share of the diagnosed holdings' market value, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_pct: Option<f64>,
}

/// The engine's diagnosis figures a holding carries (REFERENCE §14.1); the full output is
/// `analyze_stock`'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HoldingDiagnosis {
    pub health: String,
    pub health_reasons: Vec<String>,
    pub pnl_pct: Option<f64>,
    pub latest_close: Option<f64>,
    pub day_change_pct: Option<f64>,
    pub ma_pattern: String,
    pub l2_channel: String,
    pub track: Track,
    pub accum_stage: Option<Stage>,
    pub l4_triggers: Vec<String>,
    pub candidate_lane: Option<String>,
    pub candidate_score: Option<f64>,
    pub exit_signal: Option<ExitKind>,
    pub stop_loss_price: Option<f64>,
    pub stop_loss_status: String,
    pub vol_ratio_20_60: Option<f64>,
    pub range_60d_pct: Option<f64>,
    pub ret_10d_pct: Option<f64>,
    pub ret_20d_pct: Option<f64>,
    pub from_year_high_pct: Option<f64>,
    pub from_year_low_pct: Option<f64>,
    pub targets: Targets,
    pub diagnosis_brief: DiagnosisBrief,
    pub formatted_text: String,
}

/// The tools' 4 decimals.
fn r4(x: Option<f64>) -> Option<f64> {
    x.map(|x| round(x, 4))
}

impl From<Diagnosis> for HoldingDiagnosis {
    fn from(d: Diagnosis) -> Self {
        let mut targets = d.targets;
        targets.conservative = r4(targets.conservative);
        targets.aggressive = r4(targets.aggressive);
        for t in &mut targets.candidates {
            t.price = round(t.price, 4);
        }
        HoldingDiagnosis {
            health: d.health,
            health_reasons: d.health_reasons,
            pnl_pct: r4(d.pnl_pct),
            latest_close: r4(d.latest_close),
            day_change_pct: r4(d.day_change_pct),
            ma_pattern: d.ma_pattern,
            l2_channel: d.l2_channel,
            track: d.track,
            accum_stage: d.accum_stage,
            l4_triggers: d.l4_triggers,
            candidate_lane: d.candidate_lane,
            candidate_score: r4(d.candidate_score),
            exit_signal: d.exit_signal,
            stop_loss_price: r4(d.stop_loss_price),
            stop_loss_status: d.stop_loss_status,
            vol_ratio_20_60: r4(d.vol_ratio_20_60),
            range_60d_pct: r4(d.range_60d_pct),
            ret_10d_pct: r4(d.ret_10d_pct),
            ret_20d_pct: r4(d.ret_20d_pct),
            from_year_high_pct: r4(d.from_year_high_pct),
            from_year_low_pct: r4(d.from_year_low_pct),
            targets,
            diagnosis_brief: d.diagnosis_brief,
            formatted_text: d.formatted_text,
        }
    }
}

/// Every holding of `view` diagnosed against its cached bars (the SSE Composite as the
/// benchmark when cached); a holding without bars is listed as failed, never estimated.
pub async fn diagnose_all(
    md: &MarketData,
    view: &PortfolioView,
) -> Result<PortfolioDiagnosis, ToolError> {
    let bench = md.index_bars("sse", None).await.map_err(market_err)?;
    let bench_bars = (!bench.bars.is_empty()).then_some(bench.bars.as_slice());
    let mut rows = Vec::new();
    let mut statuses = Vec::new();
    let mut as_ofs = Vec::new();
    let mut failed = 0usize;
    let mut total_mv = 0.0;
    for p in &view.positions {
        let r = md.daily_bars(&p.code, None).await.map_err(market_err)?;
        statuses.push(r.data_status);
        let mut row = HoldingReport {
            freshness: BarsFreshness::of(&r),
            code: p.code.clone(),
            name: p.name.clone(),
            shares: p.shares,
            cost: round(p.cost_price, 3),
            buy_dt: p.buy_dt.clone(),
            stop_loss: r4(p.stop_loss),
            target_price: r4(p.target_price),
            error: None,
            diagnosis: None,
            market_value: None,
            pnl_amount: None,
            weight_pct: None,
        };
        let Some(last) = r.bars.last() else {
            failed += 1;
            row.error = Some("无行情数据".into());
            rows.push(row);
            continue;
        };
        as_ofs.push(last.date);
        let holding = Holding {
            cost: Some(p.cost_price),
            buy_dt: wyckoff_market::date::parse_date(&p.buy_dt),
        };
        row.diagnosis = Some(diagnose(&p.code, &p.name, &r.bars, &holding, bench_bars).into());
        let mv = p.shares as f64 * last.close;
        total_mv += mv;
        row.market_value = Some(round(mv, 2));
        row.pnl_amount = Some(round((last.close - p.cost_price) * p.shares as f64, 2));
        rows.push(row);
    }
    if total_mv > 0.0 {
        for row in &mut rows {
            row.weight_pct = row.market_value.map(|mv| round(mv / total_mv * 100.0, 2));
        }
    }
    let ok = rows.len() - failed;
    let status = if ok == 0 {
        DataStatus::Unavailable
    } else if failed > 0 {
        DataStatus::Partial
    } else {
        worst(statuses).unwrap_or(DataStatus::Unavailable)
    };
    Ok(PortfolioDiagnosis {
        portfolio_id: view.portfolio_id.clone(),
        free_cash: round(view.free_cash, 4),
        position_count: view.position_count,
        successful_count: ok,
        failed_count: failed,
        total_market_value: round(total_mv, 2),
        total_assets: round(total_mv + view.free_cash, 2),
        data_status: status_str(status).to_owned(),
        source: "local cache (per holding: see diagnostics[].source)".into(),
        as_of: as_ofs.iter().min().copied().map(iso),
        benchmark_used: bench_bars.is_some(),
        market_value_note: (failed > 0)
            .then(|| format!("{failed} 只持仓行情缺失，总市值与仓位占比仅覆盖成功诊断的部分")),
        diagnostics: rows,
    })
}

/// One item's fields → an op of `action`.
fn op_of(md: &MarketData, action: &str, f: &Value) -> Result<PortfolioOp, String> {
    let code = || opt_str(f, "code").map(str::to_string);
    let need = |k: &str| format!("{action} 缺少参数 {k}");
    Ok(match action {
        "add" => {
            let code = code().ok_or_else(|| need("code"))?;
            let name = match opt_str(f, "name") {
                Some(n) => n.to_string(),
                // look the name up rather than make the model ask for it
                None => wyckoff_market::StockCode::parse(&code)
                    .ok()
                    .and_then(|c| md.stock_info(&c))
                    .map(|i| i.name)
                    .unwrap_or_default(),
            };
            PortfolioOp::Add {
                code,
                name,
                shares: opt_i64(f, "shares").ok_or_else(|| need("shares"))?,
                cost_price: opt_f64(f, "cost_price").ok_or_else(|| need("cost_price"))?,
                buy_dt: opt_str(f, "buy_dt").map(str::to_string),
            }
        }
        "update" => PortfolioOp::Update {
            code: code().ok_or_else(|| need("code"))?,
            name: opt_str(f, "name").map(str::to_string),
            shares: opt_i64(f, "shares"),
            cost_price: opt_f64(f, "cost_price"),
            buy_dt: opt_str(f, "buy_dt").map(str::to_string),
        },
        "remove" => PortfolioOp::Remove {
            code: code().ok_or_else(|| need("code"))?,
        },
        "set_cash" => PortfolioOp::SetCash {
            free_cash: opt_f64(f, "free_cash").ok_or_else(|| need("free_cash"))?,
        },
        other => return Err(format!("action 参数无效: '{other}'")),
    })
}

/// An edit `update_portfolio` wrote: the outcome's message, the portfolio after it, and
/// for a batch each item's label.
#[derive(Debug, Clone, PartialEq)]
pub struct Updated {
    pub message: String,
    pub view: PortfolioView,
    /// One label per item of a batch (`add 600519 10股`); `None` for a single edit.
    pub items: Option<Vec<String>>,
}

impl Updated {
    fn of(out: WriteOutcome) -> Self {
        Updated {
            message: out.message,
            view: out.view,
            items: None,
        }
    }

    /// The tool's answer: the portfolio after the write, and a batch's counts.
    fn answer(&self) -> Value {
        let v = &self.view;
        let summary: Vec<String> = v
            .positions
            .iter()
            .map(|p| format!("{} {} {}股 成本{}", p.code, p.name, p.shares, p.cost_price))
            .collect();
        let mut r = json!({
            "success": true,
            "message": self.message,
            "free_cash": v.free_cash,
            "position_count": v.position_count,
            "positions_summary": summary,
            "storage": "local",
            "data_status": "ok",
            "source": "local",
            "as_of": null,
        });
        if let Some(items) = &self.items {
            r["updated_count"] = json!(items.len());
            r["failed_count"] = json!(0);
            r["item_messages"] = json!(items);
        }
        r
    }
}

/// Why `update_portfolio` wrote nothing. `Display` is the message the user reads, and the
/// model as the answer's `error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PortfolioRefusal {
    /// `items` was given but held nothing.
    #[error("{}", ERR_ITEMS_EMPTY)]
    EmptyBatch,
    /// More than [`MAX_BATCH`] items.
    #[error("{}", ERR_BATCH_TOO_LARGE)]
    BatchTooLarge { items: usize },
    /// `set_cash` given as a batch.
    #[error("{}", ERR_BATCH_ACTION)]
    CashBatch { items: usize },
    /// `set_cash` while the ledger, which records transfers, governs the cash.
    #[error(
        "账本已记录银证转账，可用资金以账本现金 {cash:.2} 元为准，不能另设；请在账本中记录转入或转出（wyckoff portfolio cash in|out）"
    )]
    CashFromLedger { cash: f64 },
    /// The single edit failed validation.
    #[error("{0}")]
    Invalid(String),
    /// Items of a batch failed validation, each named; the message is the first's.
    #[error("{}", .0.first().map(|f| f.message.as_str()).unwrap_or(""))]
    Items(Vec<ItemFailure>),
}

impl PortfolioRefusal {
    /// The items that failed, each with its index and message (empty unless a batch's
    /// items failed).
    pub fn failures(&self) -> &[ItemFailure] {
        match self {
            PortfolioRefusal::Items(failures) => failures,
            _ => &[],
        }
    }

    /// How many edits were refused: every item of a refused batch, else one.
    pub fn failed_count(&self) -> usize {
        match self {
            PortfolioRefusal::EmptyBatch => 0,
            PortfolioRefusal::BatchTooLarge { items } | PortfolioRefusal::CashBatch { items } => {
                *items
            }
            PortfolioRefusal::Invalid(_) | PortfolioRefusal::CashFromLedger { .. } => 1,
            PortfolioRefusal::Items(failures) => failures.len(),
        }
    }

    /// The tool's answer: nothing was written, and why.
    fn answer(&self) -> Value {
        json!({
            "error": self.to_string(),
            "written": false,
            "failures": self.failures(),
            "updated_count": 0,
            "failed_count": self.failed_count(),
        })
    }
}

/// Why an `update_portfolio` call did not write.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UpdateError {
    /// Validation refused the edit: nothing was written.
    #[error(transparent)]
    Refused(#[from] PortfolioRefusal),
    /// The call named no edit (no `action`), or the database failed.
    #[error(transparent)]
    Failed(#[from] ToolError),
}

/// `update_portfolio` as the agent calls it: the write's answer, or a refusal as
/// `{"error": …, "written": false, …}`.
pub async fn update(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    match apply(md, args).await {
        Ok(updated) => Ok(updated.answer()),
        Err(UpdateError::Refused(refusal)) => Ok(refusal.answer()),
        Err(UpdateError::Failed(e)) => Err(e),
    }
}

/// Applies `update_portfolio`'s arguments (`action`, and `items` for a batch) in one
/// transaction: what was written, or why nothing was.
pub async fn apply(md: &MarketData, args: &Value) -> Result<Updated, UpdateError> {
    let action = opt_str(args, "action")
        .ok_or_else(|| ToolError::InvalidArgs("missing required argument: action".into()))?;
    let now = md.clock().now();
    let store = md.portfolio();
    if let Some(items) = args.get("items").filter(|v| !v.is_null()) {
        let items = items.as_array().cloned().unwrap_or_default();
        if items.is_empty() {
            return Err(PortfolioRefusal::EmptyBatch.into());
        }
        if items.len() > MAX_BATCH {
            return Err(PortfolioRefusal::BatchTooLarge { items: items.len() }.into());
        }
        if action == "set_cash" {
            return Err(PortfolioRefusal::CashBatch { items: items.len() }.into());
        }
        let mut ops = Vec::with_capacity(items.len());
        let mut failures = Vec::new();
        for (index, item) in items.iter().enumerate() {
            match op_of(md, action, item) {
                Ok(op) => ops.push(op),
                Err(message) => failures.push(ItemFailure {
                    index,
                    code: opt_str(item, "code").unwrap_or("").to_owned(),
                    message,
                }),
            }
        }
        if !failures.is_empty() {
            return Err(PortfolioRefusal::Items(failures).into());
        }
        let count = ops.len();
        let labels: Vec<String> = ops.iter().map(describe).collect();
        let out = store.batch(ops, now).await.map_err(write_error)?;
        return Ok(Updated {
            message: format!("批量{action}成功 {count} 只"),
            items: Some(labels),
            ..Updated::of(out)
        });
    }
    let op = op_of(md, action, args).map_err(PortfolioRefusal::Invalid)?;
    if matches!(op, PortfolioOp::SetCash { .. })
        && let Some(cash) = ledger_cash(md).await?
    {
        return Err(PortfolioRefusal::CashFromLedger { cash }.into());
    }
    let out = store.apply(op, now).await.map_err(write_error)?;
    Ok(Updated::of(out))
}

fn describe(op: &PortfolioOp) -> String {
    match op {
        PortfolioOp::Add { code, shares, .. } => format!("add {code} {shares}股"),
        PortfolioOp::Update { code, .. } => format!("update {code}"),
        PortfolioOp::Remove { code } => format!("remove {code}"),
        PortfolioOp::SetCash { free_cash } => format!("set_cash {free_cash}"),
    }
}

fn write_error(e: PortfolioError) -> UpdateError {
    match e {
        PortfolioError::Invalid(m) => PortfolioRefusal::Invalid(m).into(),
        PortfolioError::Batch { failures } => PortfolioRefusal::Items(failures).into(),
        PortfolioError::Db(e) => ToolError::Failed(format!("portfolio database: {e}")).into(),
    }
}

#[cfg(test)]
mod tests;
