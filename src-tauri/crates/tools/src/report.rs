//! `generate_ai_report` (REFERENCE §14.9) and `generate_strategy_decision` (§14.10): the
//! model writes, the engine supplies every figure. Both run in the background (seed §7).
//!
//! The report: stock codes in (or the candidates of the latest screen), the engine's
//! diagnosis per stock, then the model sorts them into 进攻 / 防守 / 观察 with the core
//! logic and risks per stock. The figures it was given are kept in the result, so each
//! number in the text can be traced to a stored bar. A model failure fails the task with
//! the classified error.
//!
//! The decision: the portfolio's per-holding diagnosis plus the latest report and screen
//! in; keep / trim / exit / add per holding and new candidates with entry logic, position
//! size and risk conditions out. Beside its Markdown the model writes one JSON block with
//! an action per holding; each is checked against the actual holdings
//! ([`validate_decisions`]) and only valid ones reach `holding_decisions` — the rest are
//! named in `decision_problems`, never guessed at. It never trades: changing the portfolio stays
//! `update_portfolio`, for the main agent only and behind the user's approval.
//!
//! Under the user's risk rules every buy the decision may propose carries the size those
//! rules give it (`suggested_size`, the approval's own sizing, [`crate::risk::suggest_sizes`]):
//! each reviewed candidate, worked out before the model writes so its 建议仓位 can quote it,
//! and each holding the model says to add to, at its last close.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use wyckoff_agent::grounding::{self, ToolInput};
use wyckoff_agent::{BackgroundTaskManager, ToolContext, ToolError};
use wyckoff_llm::{ChatRequest, Provider};
use wyckoff_market::MarketData;
use wyckoff_protocol::{Message, TaskStatus};

use crate::risk::{RiskRules, SuggestedSize, suggest_sizes};
use crate::{analyze, portfolio};

pub const REPORT: &str = "generate_ai_report";
pub const REPORT_DISPLAY: &str = "AI 研报";
pub const REPORT_DESCRIPTION: &str = "生成 AI 深度研报（后台任务）：对给定 A 股代码（最多 10 只；不传则取最近一次 screen_stocks 的候选）\
先用引擎做结构化诊断，再由模型按 进攻 / 防守 / 观察 三阵营分类，每只给出核心逻辑与风险。报告为 Markdown，附所用数据（日期、价格、信号）。\
立即返回 task_id，完成后会收到通知。";

pub const STRATEGY: &str = "generate_strategy_decision";
pub const STRATEGY_DISPLAY: &str = "攻防决策";
pub const STRATEGY_DESCRIPTION: &str = "生成攻防决策（后台任务）：读取持仓诊断、最近的 AI 研报与筛选结果，\
对每只持仓给出 持有 / 减仓 / 清仓 / 加仓 及理由，并给出新候选的入场逻辑、仓位建议与风控条件。\
只给建议，绝不下单或修改持仓：调仓须用 update_portfolio 并经用户确认。立即返回 task_id。";

/// Most stocks in one report (§14.9).
pub const MAX_REPORT_CODES: usize = 10;
const SCREEN: &str = "screen_stocks";

pub fn report_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "stock_codes": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_REPORT_CODES,
                "description": "A 股代码列表，如 ['600519','000001']；不传则使用最近一次 screen_stocks 的候选"}
        },
        "additionalProperties": false
    })
}

pub fn strategy_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "report_text": {"type": "string",
                "description": "研报文本；不传则使用最近一次 generate_ai_report 的结果"},
            "reviewed_codes": {"type": "array", "items": {"type": "string"},
                "description": "需要纳入决策的候选代码；不传则取最近研报或筛选的候选"}
        },
        "additionalProperties": false
    })
}

/// The result of the newest completed background task of `tool` (any conversation),
/// read from the task store (the task list carries no result bodies).
async fn latest_result(tasks: Option<&Arc<BackgroundTaskManager>>, tool: &str) -> Option<Value> {
    let tasks = tasks?;
    let newest = tasks
        .list()
        .into_iter()
        .rev()
        .find(|t| t.tool_name == tool && t.status == TaskStatus::Completed)?;
    match tasks.result(&newest.task_id).await {
        Ok(result) => result,
        Err(e) => {
            tracing::warn!(task_id = %newest.task_id, "cannot read the task's result: {e}");
            None
        }
    }
}

/// Candidate codes of a screen result (`candidates[].code`), in its order.
pub fn screen_codes(screen: &Value) -> Vec<String> {
    screen
        .get("candidates")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|x| x.get("code").and_then(Value::as_str).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Codes from the arguments: a list, or one comma-separated string. Duplicates dropped.
pub fn codes_from_args(args: &Value) -> Result<Vec<String>, ToolError> {
    let raw: Vec<String> = match args.get("stock_codes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        Some(Value::String(s)) => s.split([',', '，', ' ']).map(str::to_owned).collect(),
        Some(other) => {
            return Err(ToolError::InvalidArgs(format!(
                "stock_codes 必须是代码数组，收到 {other}"
            )));
        }
    };
    let mut out: Vec<String> = Vec::new();
    for c in raw.iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
        if !out.iter().any(|o| o == c) {
            out.push(c.to_owned());
        }
    }
    if out.len() > MAX_REPORT_CODES {
        return Err(ToolError::InvalidArgs(format!(
            "单次研报最多 {MAX_REPORT_CODES} 只股票（收到 {} 只），请拆分",
            out.len()
        )));
    }
    Ok(out)
}

/// The figures of one diagnosis the model may use (and the report keeps).
fn facts_of(diagnosis: &Value) -> Value {
    const KEYS: [&str; 19] = [
        "code",
        "name",
        "latest_date",
        "data_status",
        "source",
        "candidate_score",
        "stop_loss_status",
        "health",
        "latest_close",
        "ma_pattern",
        "l2_channel",
        "track",
        "accum_stage",
        "l4_triggers",
        "exit_signal",
        "ret_10d_pct",
        "ret_20d_pct",
        "health_reasons",
        "market_regime",
    ];
    let mut m = serde_json::Map::new();
    for k in KEYS {
        if let Some(v) = diagnosis.get(k) {
            m.insert(k.to_owned(), v.clone());
        }
    }
    Value::Object(m)
}

async fn complete(
    provider: &dyn Provider,
    system: &str,
    user: String,
) -> Result<String, ToolError> {
    let request = ChatRequest {
        system: system.to_owned(),
        messages: vec![Message::user(user)],
        tools: Vec::new(),
        max_tokens: Some(4_000),
    };
    let done = provider
        .complete(&request)
        .await
        // The task fails with the provider's classified error (kind and advice).
        .map_err(|e| ToolError::Failed(format!("模型调用失败（{:?}）: {e}", e.kind)))?;
    let text = done.text.trim().to_owned();
    if text.is_empty() {
        return Err(ToolError::Failed("模型没有返回研报内容".into()));
    }
    Ok(text)
}

const REPORT_SYSTEM: &str = "你是威科夫量价分析的研究员。只使用用户给出的结构化事实（JSON）中的数字和信号，\
不得编造任何价格、涨跌幅、成交量或日期；事实中缺失的数据要写明“数据缺失”。\
用 Markdown 输出研报：按 ## 进攻、## 防守、## 观察 三个阵营分组（没有股票的阵营写“暂无”），\
每只股票一个小节，写出 核心逻辑（威科夫阶段、通道、触发信号、健康度）与 风险点，并注明数据日期。\
最后一句提醒：研报不构成交易指令，调仓需用户确认。";

const STRATEGY_SYSTEM: &str = "你是威科夫体系的交易决策官。只使用用户给出的持仓诊断、研报与候选事实，不得编造数字。\
用 Markdown 输出：## 持仓去留（表格：代码 | 名称 | 决策（持有/减仓/清仓/加仓） | 理由 | 风控条件），\
## 新候选（入场逻辑、建议仓位、止损与放弃条件；建议仓位与止损照抄候选事实里 suggested_size 的股数、止损与风险，\
那是引擎按用户的风险规则算出的，没有 suggested_size 时写“未计算”，不要自己估算），## 风险提示。\
最后附一个 ```json 代码块，对持仓诊断中的每一只持仓（且只对持仓）给出一条结构化决策，与表格一致：\
{\"holdings\": [{\"code\": \"600519\", \"action\": \"keep|trim|exit|add\", \"reason\": \"一句话理由\"}]}\
（keep=持有，trim=减仓，exit=清仓，add=加仓；没有持仓时 holdings 为空数组）。\
你不能下单或修改持仓，也不要声称已经执行任何交易；任何调仓都需要用户通过 update_portfolio 确认。";

/// What to do with one holding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldingAction {
    Keep,
    Trim,
    Exit,
    Add,
}

impl HoldingAction {
    /// The four actions, in English or as the Markdown table words them.
    fn parse(word: &str) -> Option<Self> {
        match word.trim().to_lowercase().as_str() {
            "keep" | "hold" | "持有" => Some(Self::Keep),
            "trim" | "reduce" | "减仓" => Some(Self::Trim),
            "exit" | "sell" | "清仓" => Some(Self::Exit),
            "add" | "加仓" => Some(Self::Add),
            _ => None,
        }
    }
}

/// One holding's decision, checked against the portfolio.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HoldingDecision {
    pub code: String,
    pub name: Option<String>,
    pub action: HoldingAction,
    pub reason: String,
    /// An `add`'s size under the risk rules at the holding's last close (none for the
    /// other actions, or without rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_size: Option<SuggestedSize>,
}

/// Why the model's structured decision is not all usable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DecisionProblem {
    /// There are holdings but the answer has no ```json block.
    NoDecisionBlock,
    /// The block is not the documented shape.
    Malformed { reason: String },
    /// An entry's action is not keep / trim / exit / add: the entry is rejected.
    UnknownAction { code: String, action: String },
    /// An entry names a stock that is not held: rejected (new buys belong to 新候选).
    NotAHolding { code: String },
    /// A second entry for the same holding: the first one stands.
    Duplicate { code: String },
    /// A holding the model gave no valid decision for.
    MissingHolding { code: String },
}

/// A held stock, as the decision is checked against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    pub code: String,
    pub name: Option<String>,
}

/// `600519`, `600519.SH`, `sh600519` → `600519`; anything else as given (and then not a
/// holding).
fn code_key(code: &str) -> String {
    wyckoff_market::StockCode::parse(code)
        .map(|c| c.digits().to_string())
        .unwrap_or_else(|_| code.trim().to_string())
}

/// Splits the model's answer into the Markdown shown to the user and the last ```json
/// block (the structured decision), which is removed from the Markdown.
pub fn split_decision_block(text: &str) -> (String, Option<String>) {
    let Some(open) = text.rfind("```json") else {
        return (text.to_string(), None);
    };
    let body_start = open + "```json".len();
    let Some(close) = text[body_start..].find("```") else {
        return (text.to_string(), None);
    };
    let block = text[body_start..body_start + close].trim().to_string();
    let markdown = format!(
        "{}{}",
        text[..open].trim_end(),
        text[body_start + close + 3..].trim_end()
    );
    (markdown.trim().to_string(), Some(block))
}

/// Checks the model's block against the actual holdings: valid entries become decisions
/// (in the block's order), every invalid one and every holding left without a decision
/// is a problem.
pub fn validate_decisions(
    holdings: &[Holding],
    block: Option<&str>,
) -> (Vec<HoldingDecision>, Vec<DecisionProblem>) {
    let mut decisions: Vec<HoldingDecision> = Vec::new();
    let mut problems = Vec::new();
    let entries: Vec<Value> = match block {
        None if holdings.is_empty() => Vec::new(),
        None => {
            problems.push(DecisionProblem::NoDecisionBlock);
            Vec::new()
        }
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(mut map)) => match map.remove("holdings") {
                Some(Value::Array(items)) => items,
                _ => {
                    problems.push(DecisionProblem::Malformed {
                        reason: "expected {\"holdings\": [...]}".into(),
                    });
                    Vec::new()
                }
            },
            Ok(Value::Array(items)) => items,
            Ok(_) => {
                problems.push(DecisionProblem::Malformed {
                    reason: "expected {\"holdings\": [...]}".into(),
                });
                Vec::new()
            }
            Err(e) => {
                problems.push(DecisionProblem::Malformed {
                    reason: format!("not JSON: {e}"),
                });
                Vec::new()
            }
        },
    };
    for entry in &entries {
        let Some(code) = entry.get("code").and_then(Value::as_str) else {
            problems.push(DecisionProblem::Malformed {
                reason: format!("an entry without a code: {entry}"),
            });
            continue;
        };
        let key = code_key(code);
        let Some(held) = holdings.iter().find(|h| code_key(&h.code) == key) else {
            problems.push(DecisionProblem::NotAHolding { code: key });
            continue;
        };
        let word = entry.get("action").and_then(Value::as_str).unwrap_or("");
        let Some(action) = HoldingAction::parse(word) else {
            problems.push(DecisionProblem::UnknownAction {
                code: key,
                action: word.to_string(),
            });
            continue;
        };
        if decisions.iter().any(|d| d.code == held.code) {
            problems.push(DecisionProblem::Duplicate { code: key });
            continue;
        }
        decisions.push(HoldingDecision {
            code: held.code.clone(),
            name: held.name.clone(),
            action,
            reason: entry
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string(),
            suggested_size: None,
        });
    }
    if block.is_some() {
        for h in holdings {
            if !decisions.iter().any(|d| d.code == h.code) {
                problems.push(DecisionProblem::MissingHolding {
                    code: h.code.clone(),
                });
            }
        }
    }
    (decisions, problems)
}

/// The holdings named in a `portfolio(mode="diagnose")` result.
fn holdings_of(diagnose: &Value) -> Vec<Holding> {
    diagnose
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .filter_map(|r| {
                    Some(Holding {
                        code: r.get("code")?.as_str()?.to_string(),
                        name: r.get("name").and_then(Value::as_str).map(str::to_string),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Each held stock's code and last close, from a `portfolio(mode="diagnose")` result
/// (a holding without a close is left out: its size cannot be worked out).
fn held_closes(diagnose: &Value) -> Vec<(String, f64)> {
    diagnose
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .filter_map(|r| {
                    Some((
                        r.get("code")?.as_str()?.to_owned(),
                        r.get("latest_close")?.as_f64()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `generate_ai_report`.
pub async fn report(
    md: &MarketData,
    provider: &dyn Provider,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let mut codes = codes_from_args(args)?;
    let mut source = "provided";
    if codes.is_empty() {
        let screen = latest_result(ctx.background.as_ref(), SCREEN)
            .await
            .ok_or_else(|| {
                ToolError::InvalidArgs(
                "未提供 stock_codes，且没有已完成的 screen_stocks 结果可用：请给出代码或先运行筛选"
                    .into(),
            )
            })?;
        codes = screen_codes(&screen);
        codes.truncate(MAX_REPORT_CODES);
        source = "last_screen";
        if codes.is_empty() {
            return Err(ToolError::Failed(
                "最近一次筛选没有候选股票，无法生成研报".into(),
            ));
        }
    }
    let n = codes.len();
    let mut facts = Vec::with_capacity(n);
    let mut missing = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        ctx.progress.report(
            "个股诊断",
            &format!("{}/{n} {code}", i + 1),
            Some(0.7 * i as f32 / n as f32),
        );
        match analyze::run(md, &json!({"code": code})).await {
            Ok(d) if !analyze::is_unavailable(&d) => facts.push(facts_of(&d)),
            Ok(d) => missing.push(json!({"code": code, "reason": d.get("notes").cloned().unwrap_or(json!("无行情数据"))})),
            Err(e) => missing.push(json!({"code": code, "reason": e.to_string()})),
        }
    }
    if facts.is_empty() {
        return Err(ToolError::Failed(format!(
            "所有股票都没有可用行情，无法生成研报: {}",
            Value::Array(missing)
        )));
    }
    ctx.progress
        .report("LLM 生成", &format!("{} 只股票", facts.len()), Some(0.75));
    let user = format!(
        "请为以下股票生成三阵营研报。结构化事实：\n{}\n无数据的股票：{}",
        Value::Array(facts.clone()),
        Value::Array(missing.clone())
    );
    let text = complete(provider, REPORT_SYSTEM, user).await?;
    // Every figure of the text traced to the facts the model was given.
    let given = json!({"facts": facts, "missing": missing});
    let grounding = grounding::check(
        &text,
        &[ToolInput {
            call_id: &ctx.call_id,
            tool: REPORT,
            result: &given,
        }],
        &[],
    );
    let reviewed: Vec<Value> = facts
        .iter()
        .filter_map(|f| f.get("code").cloned())
        .collect();
    Ok(json!({
        "ok": true,
        "source": source,
        "report_text": text,
        "grounding": grounding,
        "model": format!("{}/{}", provider.name(), provider.model()),
        "stock_count": facts.len(),
        "reviewed_codes": reviewed,
        "facts": facts,
        "missing": missing,
        "next_action": "研报仅供复核，不直接买入；如需交易计划，继续生成攻防决策",
        "next_tool": {"tool": STRATEGY, "args": {}, "reason": "基于研报生成持仓去留与新候选建议"}
    }))
}

/// Runs `generate_strategy_decision`.
pub async fn strategy(
    md: &MarketData,
    provider: &dyn Provider,
    rules: Option<&RiskRules>,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    ctx.progress.report("持仓诊断", "", Some(0.1));
    let holdings = portfolio::portfolio(md, &json!({"mode": "diagnose"})).await?;
    let (report_text, report_source) = match args.get("report_text").and_then(Value::as_str) {
        Some(t) if !t.trim().is_empty() => (t.to_owned(), "provided"),
        _ => match latest_result(ctx.background.as_ref(), REPORT)
            .await
            .and_then(|r| {
                r.get("report_text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            }) {
            Some(t) => (t, "last_ai_report"),
            None => (String::new(), "none"),
        },
    };
    let screen = latest_result(ctx.background.as_ref(), SCREEN).await;
    let mut candidates: Vec<String> = match args.get("reviewed_codes").and_then(Value::as_array) {
        Some(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => screen.as_ref().map(screen_codes).unwrap_or_default(),
    };
    candidates.truncate(MAX_REPORT_CODES);
    let positions = holdings
        .get("diagnostics")
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    if positions == 0 && candidates.is_empty() && report_text.is_empty() {
        return Err(ToolError::Failed(
            "没有持仓、研报或筛选候选可供决策：请先添加持仓，或运行 screen_stocks / generate_ai_report".into(),
        ));
    }
    let mut candidate_facts = Vec::new();
    for (i, code) in candidates.iter().enumerate() {
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        ctx.progress.report(
            "候选诊断",
            &format!("{}/{} {code}", i + 1, candidates.len()),
            Some(0.2 + 0.4 * i as f32 / candidates.len().max(1) as f32),
        );
        if let Ok(d) = analyze::run(md, &json!({"code": code})).await
            && !analyze::is_unavailable(&d)
        {
            candidate_facts.push(facts_of(&d));
        }
    }
    // Sizes for every buy the decision may propose, on the account read once: each
    // candidate, and each holding (kept for the ones the model says to add to).
    let mut sizes = match rules {
        Some(rules) => {
            ctx.progress.report("建议仓位", "", Some(0.65));
            let mut picks: Vec<(String, f64)> = candidate_facts
                .iter()
                .filter_map(|f| {
                    Some((
                        f.get("code")?.as_str()?.to_owned(),
                        f.get("latest_close")?.as_f64()?,
                    ))
                })
                .collect();
            picks.extend(held_closes(&holdings));
            suggest_sizes(md, rules, &picks).await
        }
        None => Vec::new(),
    };
    for fact in candidate_facts.iter_mut() {
        let code = fact
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if let Some(i) = sizes.iter().position(|z| z.code == code) {
            let size = sizes.remove(i);
            fact["suggested_size"] = serde_json::to_value(&size).unwrap_or(Value::Null);
        }
    }
    ctx.progress.report("LLM 生成", "", Some(0.7));
    let user = format!(
        "持仓诊断：\n{}\n\n研报（来源 {report_source}）：\n{}\n\n候选事实：\n{}",
        holdings,
        if report_text.is_empty() {
            "（无）"
        } else {
            &report_text
        },
        Value::Array(candidate_facts.clone())
    );
    let text = complete(provider, STRATEGY_SYSTEM, user).await?;
    let (markdown, block) = split_decision_block(&text);
    // Figures traced to the holdings, the candidates' facts and the report it was given.
    let given = json!({"holdings": holdings, "candidate_facts": candidate_facts,
                       "report_text": report_text});
    let grounding = grounding::check(
        &markdown,
        &[ToolInput {
            call_id: &ctx.call_id,
            tool: STRATEGY,
            result: &given,
        }],
        &[],
    );
    let (mut decisions, problems) = validate_decisions(&holdings_of(&holdings), block.as_deref());
    for d in decisions
        .iter_mut()
        .filter(|d| d.action == HoldingAction::Add)
    {
        d.suggested_size = sizes
            .iter()
            .position(|z| code_key(&z.code) == code_key(&d.code))
            .map(|i| sizes.remove(i));
    }
    if !problems.is_empty() {
        tracing::warn!(?problems, "the model's structured decision has problems");
    }
    Ok(json!({
        "ok": true,
        "report_source": report_source,
        "decision_text": markdown,
        "grounding": grounding,
        "holding_decisions": decisions,
        "decision_problems": problems,
        "model": format!("{}/{}", provider.name(), provider.model()),
        "position_count": positions,
        "candidate_count": candidate_facts.len(),
        "reviewed_codes": candidates,
        "candidate_facts": candidate_facts,
        "executed": false,
        "next_action": "决策仅为建议，未执行任何交易；如需调仓，请确认后用 update_portfolio 修改持仓"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Vec<Holding> {
        vec![
            Holding {
                code: "600519".into(),
                name: Some("贵州茅台".into()),
            },
            Holding {
                code: "000001".into(),
                name: Some("平安银行".into()),
            },
        ]
    }

    #[test]
    fn decision_validation_table() {
        use DecisionProblem as P;
        use HoldingAction as A;
        let complete = r#"{"holdings": [{"code": "600519", "action": "keep", "reason": "趋势完好"},
            {"code": "000001.SZ", "action": "清仓", "reason": "破位"}]}"#;
        // (holdings, block, decisions as (code, action), problems)
        type Case = (
            Vec<Holding>,
            Option<&'static str>,
            Vec<(&'static str, A)>,
            Vec<P>,
        );
        let cases: Vec<Case> = vec![
            (
                held(),
                Some(complete),
                vec![("600519", A::Keep), ("000001", A::Exit)],
                vec![],
            ),
            // a bare array is accepted too
            (
                held(),
                Some(
                    r#"[{"code": "600519", "action": "trim"}, {"code": "000001", "action": "add"}]"#,
                ),
                vec![("600519", A::Trim), ("000001", A::Add)],
                vec![],
            ),
            (held(), None, vec![], vec![P::NoDecisionBlock]),
            // no holdings, nothing to decide: no block is fine, an empty one too
            (vec![], None, vec![], vec![]),
            (vec![], Some(r#"{"holdings": []}"#), vec![], vec![]),
            (
                held(),
                Some("{not json"),
                vec![],
                vec![
                    P::Malformed {
                        reason: "not JSON: key must be a string at line 1 column 2".into(),
                    },
                    P::MissingHolding {
                        code: "600519".into(),
                    },
                    P::MissingHolding {
                        code: "000001".into(),
                    },
                ],
            ),
            (
                held(),
                Some(
                    r#"{"holdings": [{"code": "600519", "action": "buy_more"},
                    {"code": "300750", "action": "add"},
                    {"code": "000001", "action": "keep"},
                    {"code": "000001", "action": "exit"},
                    {"action": "keep"}]}"#,
                ),
                vec![("000001", A::Keep)],
                vec![
                    P::UnknownAction {
                        code: "600519".into(),
                        action: "buy_more".into(),
                    },
                    P::NotAHolding {
                        code: "300750".into(),
                    },
                    P::Duplicate {
                        code: "000001".into(),
                    },
                    P::Malformed {
                        reason: r#"an entry without a code: {"action":"keep"}"#.into(),
                    },
                    P::MissingHolding {
                        code: "600519".into(),
                    },
                ],
            ),
            (
                held(),
                Some(r#"{"decisions": []}"#),
                vec![],
                vec![
                    P::Malformed {
                        reason: r#"expected {"holdings": [...]}"#.into(),
                    },
                    P::MissingHolding {
                        code: "600519".into(),
                    },
                    P::MissingHolding {
                        code: "000001".into(),
                    },
                ],
            ),
        ];
        for (i, (holdings, block, want, want_problems)) in cases.into_iter().enumerate() {
            let (got, problems) = validate_decisions(&holdings, block);
            let got: Vec<(&str, A)> = got.iter().map(|d| (d.code.as_str(), d.action)).collect();
            assert_eq!(got, want, "case {i}");
            assert_eq!(problems, want_problems, "case {i}");
        }
        let (decisions, _) = validate_decisions(&held(), Some(complete));
        assert_eq!(decisions[1].name.as_deref(), Some("平安银行"));
        assert_eq!(decisions[1].reason, "破位");
    }

    #[test]
    fn the_json_block_leaves_the_markdown() {
        let cases = [
            (
                "## 持仓去留\n表\n```json\n{\"holdings\": []}\n```\n",
                "## 持仓去留\n表",
                Some("{\"holdings\": []}"),
            ),
            ("## 只有文字", "## 只有文字", None),
            (
                "## x\n```json\n{\"unclosed\": 1}",
                "## x\n```json\n{\"unclosed\": 1}",
                None,
            ),
            // the last block is the decision
            (
                "```json\n[1]\n```\n中间\n```json\n[2]\n```",
                "```json\n[1]\n```\n中间",
                Some("[2]"),
            ),
        ];
        for (text, markdown, block) in cases {
            let (m, b) = split_decision_block(text);
            assert_eq!((m.as_str(), b.as_deref()), (markdown, block), "{text}");
        }
    }

    #[test]
    fn codes_come_from_a_list_or_a_comma_string_without_duplicates() {
        let cases = [
            (json!({}), Ok(vec![])),
            (
                json!({"stock_codes": ["600519", "000001", "600519"]}),
                Ok(vec!["600519", "000001"]),
            ),
            (
                json!({"stock_codes": "600519, 000001，300750"}),
                Ok(vec!["600519", "000001", "300750"]),
            ),
            (json!({"stock_codes": 5}), Err("stock_codes 必须是代码数组")),
            (
                json!({"stock_codes": (0..11).map(|i| format!("60000{i}")).collect::<Vec<_>>()}),
                Err("最多 10 只"),
            ),
        ];
        for (args, want) in cases {
            match (codes_from_args(&args), want) {
                (Ok(got), Ok(w)) => assert_eq!(got, w, "{args}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(w), "{e}"),
                (got, w) => panic!("{args}: {got:?} vs {w:?}"),
            }
        }
    }

    #[test]
    fn screen_codes_follow_the_candidate_order() {
        let screen = json!({"candidates": [{"code": "300750"}, {"code": "600519"}, {"name": "x"}]});
        assert_eq!(screen_codes(&screen), vec!["300750", "600519"]);
        assert!(screen_codes(&json!({})).is_empty());
    }

    #[test]
    fn facts_keep_only_the_diagnosis_figures() {
        let d = json!({"code": "000001", "latest_close": 10.71, "formatted_text": "long", "health": "🔴危险"});
        assert_eq!(
            facts_of(&d),
            json!({"code": "000001", "latest_close": 10.71, "health": "🔴危险"})
        );
    }
}
