//! The account as the risk limits see it, and the sizing preview an approval of a buy
//! shows. Read-only: the portfolio's positions (with the stops the user set), priced at
//! their last raw close; equity, its drawdown and the losing sales from the account ledger
//! where it has valued days, else the portfolio's cash and market value (said in the notes).
//! The limits' arithmetic is the engine's ([`wyckoff_engine::risk_limits`]).

use std::sync::Arc;

use async_trait::async_trait;
use serde::Serialize;
use serde_json::{Value, json};
use wyckoff_agent::{Tool, ToolContext, ToolError, ToolSpec};
use wyckoff_engine::risk_limits::{
    Account, OpenPosition, PortfolioRisk, ProposedBuy, RiskLimits, assess, check_buy,
};
use wyckoff_engine::sizing::{BP, StopSource, buy_cost_fen, price_e6, risk_fen};
use wyckoff_journal::review::daily_values;
use wyckoff_journal::valuation::closes_of;
use wyckoff_journal::{Closes, JournalStore};
use wyckoff_market::MarketData;
use wyckoff_protocol::{
    ApprovalPreview, BatchLine, BatchPreview, BuyPreview, BuySizing, RiskBreach, ToolSchema,
};

use crate::common::{opt_f64, opt_i64, opt_str};
use crate::sizing::size_position;

/// The sizing settings beside the limits: risk per trade and the largest position, bp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RiskRules {
    pub risk_bp: u32,
    pub max_position_bp: u32,
    pub limits: RiskLimits,
}

impl Default for RiskRules {
    /// The engine's defaults: 1 % a trade, 20 % the largest position, the default limits.
    fn default() -> Self {
        RiskRules {
            risk_bp: wyckoff_engine::sizing::DEFAULT_RISK_BP,
            max_position_bp: wyckoff_engine::sizing::DEFAULT_MAX_POSITION_BP,
            limits: RiskLimits::default(),
        }
    }
}

/// Where the equity came from.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EquitySource {
    /// The ledger's NAV on `date` (YYYY-MM-DD), its drawdown and its losing sales.
    Ledger { date: String },
    /// No valued day in the ledger: the portfolio's cash and its positions' market value;
    /// no drawdown or stop-out is known.
    Portfolio,
}

/// The account's risk now ([`account_risk`]).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct AccountRisk {
    pub risk: PortfolioRisk,
    pub equity_source: EquitySource,
    pub cash_fen: i64,
    /// What the figures rest on.
    pub notes: Vec<String>,
}

fn failed(e: impl ToString) -> ToolError {
    ToolError::Failed(e.to_string())
}

/// `x %` as basis points, clamped at 0.
fn bp(pct: f64) -> u32 {
    (pct * 100.0).round().clamp(0.0, f64::from(u32::MAX)) as u32
}

/// The account as the limits see it: the engine's account, where its equity came from,
/// the cash, and notes.
pub async fn account(
    md: &MarketData,
) -> Result<(Account, EquitySource, i64, Vec<String>), ToolError> {
    let mut notes = Vec::new();
    let view = md.portfolio().view().await.map_err(failed)?;
    let industries = md
        .industries()
        .industries_as_of(None)
        .await
        .map_err(failed)?;
    let mut positions = Vec::new();
    for p in view.positions.iter().filter(|p| p.shares > 0) {
        let raw = md.raw_closes(&p.code, 0..=u32::MAX).await.map_err(failed)?;
        let price = match raw.closes.last() {
            Some(c) => c.close_e6,
            None => {
                notes.push(format!(
                    "{} 没有收盘价，按成本价 {:.2} 计",
                    p.code, p.cost_price
                ));
                price_e6(p.cost_price).unwrap_or(0)
            }
        };
        let industry = industries.industry.get(&p.code).cloned().or_else(|| {
            wyckoff_market::StockCode::parse(&p.code)
                .ok()
                .and_then(|c| md.stock_info(&c))
                .and_then(|i| i.industry)
        });
        positions.push(OpenPosition {
            code: p.code.clone(),
            industry,
            shares: u64::try_from(p.shares).unwrap_or(0),
            price_e6: price,
            stop_e6: p.stop_loss.and_then(price_e6),
        });
    }
    let market_value: i64 = positions
        .iter()
        .map(|p| i64::try_from(i128::from(p.shares) * i128::from(p.price_e6) / 10_000).unwrap_or(0))
        .sum();

    // The ledger: its NAV, drawdown and losing sales, where it has valued days.
    let now = md.clock().now();
    let store = JournalStore::new(md.pool().clone(), now)
        .await
        .map_err(failed)?;
    let entries = store.entries(now).await.map_err(failed)?;
    let mut closes = Closes::new();
    let codes: std::collections::BTreeSet<String> = entries
        .iter()
        .filter_map(|e| e.kind.code())
        .map(str::to_owned)
        .collect();
    for code in codes {
        if wyckoff_market::StockCode::parse(&code).is_err() {
            continue;
        }
        let raw = md.raw_closes(&code, 0..=u32::MAX).await.map_err(failed)?;
        closes.insert(code, closes_of(&raw));
    }
    let today = wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date());
    let (days, performance) = daily_values(&entries, &closes).map_err(failed)?;
    let losing_sales: Vec<u32> = wyckoff_journal::ledger::replay(&entries)
        .map(|l| {
            l.realised
                .iter()
                .filter(|r| r.pnl_fen < 0)
                .map(|r| r.date)
                .collect()
        })
        .unwrap_or_default();
    let (equity_fen, drawdown_bp, source, cash_fen) = match (days.last(), &performance.last) {
        (Some(day), Some(date)) if day.nav_fen > 0 => {
            notes.extend(performance.notes.iter().map(|n| format!("账户净值：{n}")));
            (
                day.nav_fen,
                bp(-day.drawdown_pct),
                EquitySource::Ledger { date: date.clone() },
                performance.cash_fen,
            )
        }
        _ => {
            let cash = wyckoff_engine::sizing::fen_of(view.free_cash).unwrap_or(0);
            notes.push(
                "账户流水没有净值：权益按持仓的现金与市值计，回撤与亏损卖出未知（刹车不起作用）"
                    .to_owned(),
            );
            (cash + market_value, 0, EquitySource::Portfolio, cash)
        }
    };
    let account = Account {
        equity_fen,
        drawdown_bp,
        positions,
        losing_sales: if matches!(source, EquitySource::Ledger { .. }) {
            losing_sales
        } else {
            Vec::new()
        },
        today,
    };
    Ok((account, source, cash_fen, notes))
}

/// What the limits' figures leave out or count in full, said.
fn risk_notes(risk: &PortfolioRisk) -> Vec<String> {
    let mut notes = Vec::new();
    if !risk.unstopped.is_empty() {
        notes.push(format!(
            "没有止损的持仓按全部市值计入总风险：{}",
            risk.unstopped.join("、")
        ));
    }
    if !risk.unclassified.is_empty() {
        notes.push(format!(
            "没有行业的持仓不计入行业占比：{}（用 wyckoff data industries import 导入行业）",
            risk.unclassified.join("、")
        ));
    }
    notes
}

/// The account's risk against `limits` now.
pub async fn account_risk(md: &MarketData, limits: &RiskLimits) -> Result<AccountRisk, ToolError> {
    let (account, equity_source, cash_fen, mut notes) = account(md).await?;
    let risk = assess(&account, limits);
    notes.extend(risk_notes(&risk));
    Ok(AccountRisk {
        risk,
        equity_source,
        cash_fen,
        notes,
    })
}

/// A buy a call makes: code, shares, price (`None` for a call that is not one buy).
fn buy_of(tool: &str, args: &Value) -> Option<(String, u64, f64)> {
    let (shares, price) = match tool {
        crate::portfolio::UPDATE if opt_str(args, "action") == Some("add") => {
            (opt_i64(args, "shares")?, opt_f64(args, "cost_price")?)
        }
        crate::journal::NAME if opt_str(args, "side") == Some("buy") => {
            (opt_i64(args, "shares")?, opt_f64(args, "price")?)
        }
        _ => return None,
    };
    Some((
        opt_str(args, "code")?.to_owned(),
        u64::try_from(shares).ok().filter(|s| *s > 0)?,
        price,
    ))
}

fn stop_from(source: &StopSource) -> String {
    match source {
        StopSource::Given => "给定".to_owned(),
        StopSource::Spring { date } => format!("Spring 低点（{date}）"),
        StopSource::Lps { date } => format!("LPS 低点（{date}）"),
        StopSource::Support => "吸筹区间支撑".to_owned(),
        StopSource::TradingRange => "交易区间支撑".to_owned(),
        StopSource::Atr { k, .. } => format!("{k}×ATR14"),
    }
}

/// The preview of a buy `tool` is asked to make with `args`; `None` when the call is not
/// one buy (a sale, a removal, a batch).
pub async fn buy_preview(
    md: &MarketData,
    rules: &RiskRules,
    tool: &str,
    args: &Value,
) -> Option<BuyPreview> {
    let (code, proposed, price) = buy_of(tool, args)?;
    let acct = account(md).await;
    preview_on(md, rules, acct.as_ref(), &code, Some(proposed), price).await
}

/// The preview's core for one buy of `code` at `price` on an account read once: the
/// rules' size, its stop and risk, and the limits the buy breaks. `proposed` `None`: the
/// rules' own shares are the buy (a suggested size). `None` when the price is not one.
/// A proposed buy is also held to the rules it is sized by: its own risk to the per-trade
/// budget, its position (the shares held included) to the largest position, its cost to
/// the cash; the rules' own shares keep within them, so a suggestion is not checked.
async fn preview_on(
    md: &MarketData,
    rules: &RiskRules,
    acct: Result<&(Account, EquitySource, i64, Vec<String>), &ToolError>,
    code: &str,
    proposed: Option<u64>,
    price: f64,
) -> Option<BuyPreview> {
    let entry_e6 = price_e6(price)?;
    let name = wyckoff_market::StockCode::parse(code)
        .ok()
        .and_then(|c| md.stock_info(&c))
        .map(|i| i.name)
        .unwrap_or_default();
    let mut preview = BuyPreview {
        code: code.to_owned(),
        name,
        proposed_shares: proposed.unwrap_or(0),
        entry_e6,
        sizing: None,
        unavailable: None,
        breaches: Vec::new(),
        notes: Vec::new(),
    };
    let (account, _, cash_fen, notes) = match acct {
        Ok(a) => a,
        Err(e) => {
            preview.unavailable = Some(format!("读不到账户：{e}"));
            return Some(preview);
        }
    };
    let cash_fen = *cash_fen;
    preview.notes = notes.clone();
    preview
        .notes
        .extend(risk_notes(&assess(account, &rules.limits)));
    let industry = industry_of(md, account, code).await;
    let mut stop_e6 = None;
    let mut shares = proposed.unwrap_or(0);
    let mut own_breaches = Vec::new();
    let held_shares = account
        .positions
        .iter()
        .filter(|p| p.code == code)
        .map(|p| p.shares)
        .sum::<u64>();
    if account.equity_fen <= 0 {
        preview.unavailable =
            Some("账户没有权益（现金与持仓都为 0）：无法按风险计算仓位".to_owned());
    } else {
        let sized = size_position(
            md,
            &json!({
                "code": code,
                "entry": price,
                "equity": account.equity_fen as f64 / 100.0,
                "cash": cash_fen.max(0) as f64 / 100.0,
                "risk_pct": f64::from(rules.risk_bp) / 100.0,
                "max_position_pct": f64::from(rules.max_position_bp) / 100.0,
                "held_shares": held_shares,
            }),
        )
        .await;
        match sized {
            Ok(p) => {
                let s = &p.sizing;
                let shares_of_buy = proposed.unwrap_or(s.shares);
                shares = shares_of_buy;
                let date = wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date());
                let proposed_risk =
                    risk_fen(shares_of_buy, s.entry_e6, s.stop_e6, date).unwrap_or(0);
                stop_e6 = Some(s.stop_e6);
                if let Some(n) = proposed {
                    own_breaches = own_breaches_of(s, n, proposed_risk, date);
                }
                preview.notes.extend(p.freshness.notes.iter().cloned());
                preview.sizing = Some(BuySizing {
                    shares: s.shares,
                    stop_e6: s.stop_e6,
                    stop_from: stop_from(&p.stop.chosen.source),
                    risk_fen: s.risk_fen,
                    risk_pct: s.risk_pct,
                    risk_budget_fen: s.risk_budget_fen,
                    equity_fen: s.equity_fen,
                    proposed_risk_fen: proposed_risk,
                    proposed_risk_pct: (proposed_risk as f64 * 1e4 / s.equity_fen as f64).round()
                        / 100.0,
                    bound: s.bound.iter().map(cap_text).collect(),
                    why_none: p.why_none.clone(),
                });
            }
            Err(e) => preview.unavailable = Some(e.to_string()),
        }
    }
    preview.proposed_shares = shares;
    // A suggestion of no shares breaks nothing: only the brake can be said of it.
    preview.breaches = own_breaches;
    preview
        .breaches
        .extend(if shares == 0 && proposed.is_none() {
            wyckoff_engine::risk_limits::brake(account, &rules.limits)
        } else {
            check_buy(
                account,
                &rules.limits,
                &ProposedBuy {
                    code: code.to_owned(),
                    industry,
                    shares,
                    entry_e6,
                    stop_e6,
                },
            )
        });
    Some(preview)
}

/// The rules a proposed buy of `shares` (losing `risk` fen at the stop) breaks that its
/// sizing `s` keeps: the risk per trade, the largest position (the cost with fees plus
/// the value already held, as the engine's position cap counts it) and the cash.
fn own_breaches_of(
    s: &wyckoff_engine::sizing::Sizing,
    shares: u64,
    risk: i64,
    date: u32,
) -> Vec<RiskBreach> {
    let mut out = Vec::new();
    let pct_of_equity = |fen: i64| (fen as f64 * 1e4 / s.equity_fen as f64).round() / 100.0;
    if risk > s.risk_budget_fen {
        out.push(RiskBreach::TradeRisk {
            risk_pct: pct_of_equity(risk),
            limit_pct: f64::from(s.risk_bp) / 100.0,
        });
    }
    let cost = buy_cost_fen(shares, s.entry_e6, date).unwrap_or(i64::MAX);
    let limit =
        i64::try_from(i128::from(s.equity_fen) * i128::from(s.max_position_bp) / i128::from(BP))
            .unwrap_or(i64::MAX);
    if cost > (limit - s.held_value_fen).max(0) {
        out.push(RiskBreach::PositionSize {
            cost_pct: pct_of_equity(cost.saturating_add(s.held_value_fen)),
            limit_pct: f64::from(s.max_position_bp) / 100.0,
        });
    }
    if cost > s.cash_fen {
        out.push(RiskBreach::Cash {
            cost_fen: cost,
            cash_fen: s.cash_fen,
        });
    }
    out
}

/// The industry of `code`: the held position's, else today's table's.
async fn industry_of(md: &MarketData, account: &Account, code: &str) -> Option<String> {
    match account
        .positions
        .iter()
        .find(|p| p.code == code)
        .and_then(|p| p.industry.clone())
    {
        Some(i) => Some(i),
        None => md
            .industries()
            .industries_as_of(None)
            .await
            .ok()
            .and_then(|v| v.industry.get(code).cloned()),
    }
}

/// The limits a whole batch breaks, from the account's risk `before` and `after` every
/// line: heat, the largest industry and the positions count each when over its limit after
/// the batch and raised by it (a batch that only lowers a figure already over breaks
/// nothing); the brake when the batch buys.
pub fn batch_breaches(
    before: &PortfolioRisk,
    after: &PortfolioRisk,
    limits: &RiskLimits,
    buys: bool,
) -> Vec<RiskBreach> {
    let mut out = Vec::new();
    let over_bp = |part: i64, limit_bp: u32| {
        limit_bp > 0
            && i128::from(part) * 10_000 > i128::from(limit_bp) * i128::from(after.equity_fen)
    };
    if over_bp(after.heat_fen, limits.max_heat_bp) && after.heat_fen > before.heat_fen {
        out.push(RiskBreach::Heat {
            heat_pct: after.heat_pct,
            limit_pct: f64::from(limits.max_heat_bp) / 100.0,
        });
    }
    if let Some(top) = &after.largest_industry {
        let was = before
            .largest_industry
            .as_ref()
            .filter(|b| b.industry == top.industry)
            .map_or(0, |b| b.value_fen);
        if over_bp(top.value_fen, limits.max_industry_bp) && top.value_fen > was {
            out.push(RiskBreach::Industry {
                industry: top.industry.clone(),
                share_pct: top.share_pct,
                limit_pct: f64::from(limits.max_industry_bp) / 100.0,
            });
        }
    }
    if limits.max_positions > 0
        && after.positions > limits.max_positions
        && after.positions > before.positions
    {
        out.push(RiskBreach::Positions {
            count: after.positions,
            limit: limits.max_positions,
        });
    }
    if buys {
        out.extend(before.brake.iter().cloned());
    }
    out
}

/// `shares × price` in fen (rounded down).
fn cost_fen(shares: u64, price_e6: i64) -> i64 {
    i64::try_from(i128::from(shares) * i128::from(price_e6) / 10_000).unwrap_or(i64::MAX)
}

/// The preview of a batch `update_portfolio` (`items` with `action` add / update /
/// remove): each line in order on the account with the earlier lines applied (an add
/// sized and checked as one buy, its shares then held at its price and the rules' stop,
/// its cost out of the cash), and the batch's total effect. `None` when the call is not a
/// batch.
pub async fn batch_preview(
    md: &MarketData,
    rules: &RiskRules,
    tool: &str,
    args: &Value,
) -> Option<BatchPreview> {
    if tool != crate::portfolio::UPDATE {
        return None;
    }
    let items = args.get("items")?.as_array().filter(|i| !i.is_empty())?;
    let action = opt_str(args, "action").unwrap_or_default().to_owned();
    let mut preview = BatchPreview {
        lines: Vec::with_capacity(items.len()),
        heat_before_pct: 0.0,
        heat_after_pct: 0.0,
        max_heat_pct: f64::from(rules.limits.max_heat_bp) / 100.0,
        positions_before: 0,
        positions_after: 0,
        max_positions: rules.limits.max_positions,
        breaches: Vec::new(),
        notes: Vec::new(),
        unavailable: None,
    };
    let name_of = |code: &str| {
        wyckoff_market::StockCode::parse(code)
            .ok()
            .and_then(|c| md.stock_info(&c))
            .map(|i| i.name)
            .unwrap_or_default()
    };
    let (account0, source, cash0, notes) = match account(md).await {
        Ok(a) => a,
        Err(e) => {
            preview.unavailable = Some(format!("读不到账户：{e}"));
            for (i, item) in items.iter().enumerate() {
                let code = opt_str(item, "code").unwrap_or_default().to_owned();
                preview.lines.push(BatchLine {
                    line: u32::try_from(i + 1).unwrap_or(u32::MAX),
                    action: action.clone(),
                    name: name_of(&code),
                    code,
                    held_shares: 0,
                    shares: opt_i64(item, "shares").and_then(|s| u64::try_from(s).ok()),
                    buy: None,
                });
            }
            return Some(preview);
        }
    };
    let before = assess(&account0, &rules.limits);
    preview.notes = notes.clone();
    preview.notes.extend(risk_notes(&before));
    let mut running = (account0, source, cash0, notes);
    let mut buys = false;
    for (i, item) in items.iter().enumerate() {
        let code = opt_str(item, "code").unwrap_or_default().to_owned();
        let shares = opt_i64(item, "shares").and_then(|s| u64::try_from(s).ok());
        let held = running
            .0
            .positions
            .iter()
            .position(|p| p.code == code && p.shares > 0);
        let held_shares = held.map_or(0, |h| running.0.positions[h].shares);
        let mut buy = None;
        match action.as_str() {
            "add" => {
                if let (Some(n), Some(price)) =
                    (shares.filter(|n| *n > 0), opt_f64(item, "cost_price"))
                {
                    buy = preview_on(md, rules, Ok(&running), &code, Some(n), price).await;
                }
                if let Some(b) = &buy {
                    buys = true;
                    let stop_e6 = b.sizing.as_ref().map(|s| s.stop_e6);
                    match held {
                        Some(h) => running.0.positions[h].shares += b.proposed_shares,
                        None => {
                            let industry = industry_of(md, &running.0, &code).await;
                            running.0.positions.push(OpenPosition {
                                code: code.clone(),
                                industry,
                                shares: b.proposed_shares,
                                price_e6: b.entry_e6,
                                stop_e6,
                            });
                        }
                    }
                    running.2 -= cost_fen(b.proposed_shares, b.entry_e6);
                }
            }
            "update" => {
                if let (Some(h), Some(n)) = (held, shares) {
                    running.0.positions[h].shares = n;
                }
            }
            "remove" => {
                if let Some(h) = held {
                    running.0.positions.remove(h);
                }
            }
            _ => {}
        }
        preview.lines.push(BatchLine {
            line: u32::try_from(i + 1).unwrap_or(u32::MAX),
            action: action.clone(),
            name: name_of(&code),
            code,
            held_shares,
            shares: if action == "remove" { None } else { shares },
            buy,
        });
    }
    let after = assess(&running.0, &rules.limits);
    preview.heat_before_pct = before.heat_pct;
    preview.heat_after_pct = after.heat_pct;
    preview.positions_before = before.positions;
    preview.positions_after = after.positions;
    preview.breaches = batch_breaches(&before, &after, &rules.limits, buys);
    Some(preview)
}

/// A size the rules suggest for buying a candidate at its last close: the rules' shares
/// (board lots), the stop and the risk at it, the caps that bound the size, and the
/// account limits such a buy would break; or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SuggestedSize {
    pub code: String,
    /// The rules' answer (`shares` 0 with `why_none` when no lot fits the budget).
    pub sizing: Option<BuySizing>,
    /// The limits buying `sizing.shares` would break (the brake alone for no shares).
    pub breaches: Vec<wyckoff_protocol::RiskBreach>,
    /// Why no size could be worked out (no account, no bars, no stop).
    pub unavailable: Option<String>,
}

/// [`SuggestedSize`] for each `(code, price)`, the account read once, under `rules`:
/// the same core as the approval of a buy ([`buy_preview`]).
pub async fn suggest_sizes(
    md: &MarketData,
    rules: &RiskRules,
    picks: &[(String, f64)],
) -> Vec<SuggestedSize> {
    let acct = account(md).await;
    let mut out = Vec::with_capacity(picks.len());
    for (code, price) in picks {
        let p = preview_on(md, rules, acct.as_ref(), code, None, *price).await;
        out.push(match p {
            Some(p) => SuggestedSize {
                code: code.clone(),
                sizing: p.sizing,
                breaches: p.breaches,
                unavailable: p.unavailable,
            },
            None => SuggestedSize {
                code: code.clone(),
                sizing: None,
                breaches: Vec::new(),
                unavailable: Some(format!("价格 {price} 无效")),
            },
        });
    }
    out
}

fn cap_text(cap: &wyckoff_engine::sizing::Cap) -> String {
    use wyckoff_engine::sizing::Cap;
    let yuan = |fen: i64| format!("{:.2}", fen as f64 / 100.0);
    match cap {
        Cap::Regime {
            regime, scale_pct, ..
        } => format!("水温 {}：风险预算按 {scale_pct}%", regime.as_str()),
        Cap::Cash { cash_fen, shares } => format!("现金 {} 元：最多 {shares} 股", yuan(*cash_fen)),
        Cap::PositionBudget {
            max_position_bp,
            held_value_fen,
            budget_fen,
            shares,
        } if *held_value_fen > 0 => format!(
            "单只上限 {}% 减已持有 {} 元（剩 {} 元）：最多 {shares} 股",
            f64::from(*max_position_bp) / 100.0,
            yuan(*held_value_fen),
            yuan(*budget_fen)
        ),
        Cap::PositionBudget {
            max_position_bp,
            budget_fen,
            shares,
            ..
        } => format!(
            "单只上限 {}%（{} 元）：最多 {shares} 股",
            f64::from(*max_position_bp) / 100.0,
            yuan(*budget_fen)
        ),
    }
}

/// A tool whose approval shows the buy's sizing preview ([`buy_preview`]), or a batch's
/// ([`batch_preview`]).
struct SizedBuy {
    inner: Arc<dyn Tool>,
    md: Arc<MarketData>,
    rules: RiskRules,
}

#[async_trait]
impl Tool for SizedBuy {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn schema(&self) -> &ToolSchema {
        self.inner.schema()
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<Value, ToolError> {
        self.inner.call(args, ctx).await
    }

    async fn approval_preview(&self, args: &Value) -> Option<ApprovalPreview> {
        let name = self.inner.spec().name.clone();
        if let Some(p) = buy_preview(&self.md, &self.rules, &name, args).await {
            return Some(ApprovalPreview::BuySizing(p));
        }
        match batch_preview(&self.md, &self.rules, &name, args).await {
            Some(b) => Some(ApprovalPreview::BatchSizing(b)),
            None => self.inner.approval_preview(args).await,
        }
    }

    fn time_limit(&self, args: &Value) -> Option<std::time::Duration> {
        self.inner.time_limit(args)
    }
}

/// `update_portfolio` and `record_fill` with the sizing preview in their approvals, under
/// `rules` (replacing the plain ones in `registry`).
pub fn register_buy_previews(
    registry: &mut wyckoff_agent::ToolRegistry,
    md: Arc<MarketData>,
    rules: RiskRules,
) {
    for inner in crate::market_tools(md.clone()) {
        let name = inner.spec().name.as_str();
        if name == crate::portfolio::UPDATE || name == crate::journal::NAME {
            registry.register(Arc::new(SizedBuy {
                inner,
                md: md.clone(),
                rules,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wyckoff_engine::risk_limits::IndustryShare;

    /// An account's risk on 100,000 yuan: heat (fen), positions, the largest industry.
    fn risk(heat_fen: i64, positions: u32, industry: Option<(&str, i64)>) -> PortfolioRisk {
        PortfolioRisk {
            equity_fen: 10_000_000,
            limits: RiskLimits::default(),
            heat_fen,
            heat_pct: heat_fen as f64 / 100_000.0,
            positions,
            largest_industry: industry.map(|(i, v)| IndustryShare {
                industry: i.to_owned(),
                value_fen: v,
                share_pct: v as f64 / 100_000.0,
            }),
            drawdown_pct: 0.0,
            recent_stop_outs: 0,
            brake: Vec::new(),
            unstopped: Vec::new(),
            unclassified: Vec::new(),
        }
    }

    #[test]
    fn batch_breaches_table() {
        // Heat ≤ 6 % (600,000 fen), one industry ≤ 30 % (3,000,000 fen), 8 positions.
        let limits = RiskLimits::default();
        let brake = RiskBreach::Drawdown {
            drawdown_pct: 20.0,
            limit_pct: 15.0,
        };
        let mut braked = risk(0, 0, None);
        braked.brake = vec![brake.clone()];
        // (before, after, buys, the limits broken by name)
        let cases: Vec<(PortfolioRisk, PortfolioRisk, bool, Vec<&str>)> = vec![
            // within every limit
            (risk(100, 2, None), risk(500_000, 4, None), true, vec![]),
            // exactly at the heat limit is within it
            (risk(100, 2, None), risk(600_000, 4, None), true, vec![]),
            (
                risk(100, 2, None),
                risk(600_001, 4, None),
                true,
                vec!["heat"],
            ),
            (
                risk(100, 8, None),
                risk(100, 9, None),
                true,
                vec!["positions"],
            ),
            (
                risk(0, 1, Some(("银行", 2_000_000))),
                risk(0, 2, Some(("银行", 3_000_001))),
                true,
                vec!["industry"],
            ),
            // already over and lowered by the batch: nothing broken
            (
                risk(900_000, 10, Some(("银行", 5_000_000))),
                risk(800_000, 9, Some(("银行", 4_000_000))),
                false,
                vec![],
            ),
            // a new industry over the limit, where another was the largest before
            (
                risk(0, 1, Some(("银行", 2_000_000))),
                risk(0, 2, Some(("煤炭", 3_500_000))),
                true,
                vec!["industry"],
            ),
            // the brake: broken by a batch that buys, not by one that only sells
            (braked.clone(), risk(0, 0, None), true, vec!["drawdown"]),
            (braked, risk(0, 0, None), false, vec![]),
        ];
        for (i, (before, after, buys, want)) in cases.into_iter().enumerate() {
            let got: Vec<&str> = batch_breaches(&before, &after, &limits, buys)
                .iter()
                .map(RiskBreach::name)
                .collect();
            assert_eq!(got, want, "case {i}");
        }
    }
}
