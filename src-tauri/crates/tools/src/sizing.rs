//! `size_position` (仓位计算, read-only): how many shares of a stock one buy may take by
//! its risk — the engine's sizing ([`wyckoff_engine::sizing`]) over the stock's cached
//! bars, the account ledger's latest NAV and cash (or the figures given), and the market's
//! 水温 on the stock's last bar. Nothing is written. The CLI's `wyckoff size` and the
//! agent's tool run this same function and return the same typed answer.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_engine::sizing::{
    DEFAULT_ATR_K, DEFAULT_MAX_POSITION_BP, DEFAULT_RISK_BP, Sizing, SizingError, SizingInput,
    StopChoice, StopRule, choose_stop, fen_of, pct_to_bp, price_e6, size,
};
use wyckoff_engine::{Board, Regime};
use wyckoff_journal::review::{Performance, daily_values};
use wyckoff_journal::valuation::closes_of;
use wyckoff_journal::{Closes, JournalError, JournalStore};
use wyckoff_market::MarketData;
use wyckoff_time::iso;

use crate::common::{BarsFreshness, market_err, opt_str};
use crate::regime::{BENCHMARK, SMALL_CAP, regime_from};

pub const NAME: &str = "size_position";
pub const DISPLAY_NAME: &str = "仓位计算";
pub const DESCRIPTION: &str = "按风险计算一笔买入的股数（只读，不下单、不写入）：股数 = 权益 × risk_pct% ÷ (买入价 − 止损价)，\
止损处的亏损含双边费用，按板块的手数取整（主板/创业板 100 股一手，科创板 200 股起、北交所 100 股起按 1 股递增），\
再受现金、单只仓位上限（max_position_pct，默认 20%，已持有的该股按买入价计入）和大盘水温（谨慎/修复时风险减半，RISK_OFF/CRASH 不开新仓）限制，返回每个起作用的限制。\
止损默认取结构止损（最近的 Spring/LPS 低点或区间支撑）与 买入价 − atr_k×ATR14（默认 2 倍）中较紧的一个，也可给出 stop 价格。\
权益与现金默认取账户流水的最新净值与现金，也可给出 equity / cash（元）。买入价默认最新收盘价。金额单位为分（*_fen），价格为百万分之一元（*_e6）。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "A 股代码，如 '600519'"},
            "equity": {"type": "number", "description": "权益（元）；省略则取账户流水的最新净值"},
            "cash": {"type": "number", "description": "可用现金（元）；省略则取账户流水的现金（给了 equity 时按 equity）"},
            "risk_pct": {"type": "number", "description": "每笔在止损处最多亏权益的百分比，默认 1"},
            "max_position_pct": {"type": "number", "description": "单只仓位上限占权益的百分比，默认 20"},
            "entry": {"type": "number", "description": "买入价（元）；省略则取最新收盘价"},
            "stop": {"type": "number", "description": "止损价（元），须低于买入价；给出则不再计算止损"},
            "atr_k": {"type": "number", "description": "ATR 止损的倍数，默认 2"},
            "stop_from": {"type": "string", "enum": ["tighter", "structure", "atr"], "description": "止损取法：tighter 结构与 ATR 中较紧者（默认）/ structure / atr"},
            "held_shares": {"type": "integer", "minimum": 0, "description": "已持有该股的股数（按买入价计入单只仓位上限）；省略则权益取自账户流水时取流水里的持仓，否则按 0"}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

/// Where the equity (or the cash) came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FigureSource {
    /// Given with the call.
    Given,
    /// The account ledger: its NAV on `date` (YYYY-MM-DD), or its cash now.
    Ledger { date: Option<String> },
    /// No cash given with an equity given: the equity taken as all cash.
    Equity,
}

/// Where the entry price came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EntrySource {
    Given,
    /// The last cached close, on `date` (YYYY-MM-DD).
    LastClose {
        date: String,
    },
}

/// One buy sized by its risk, with what each input rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PositionSize {
    pub code: String,
    pub name: String,
    pub board: Board,
    pub entry_source: EntrySource,
    pub equity_source: FigureSource,
    pub cash_source: FigureSource,
    pub stop: StopChoice,
    /// Shares of the stock already held (valued at the entry, they count against the
    /// position budget): given, or the ledger's holding when the equity is the ledger's.
    pub held_shares: u64,
    /// The 水温 the sizing applied; `None` when it could not be judged (then not applied).
    pub regime: Option<Regime>,
    pub sizing: Sizing,
    /// Why no share is bought, when none is.
    pub why_none: Option<String>,
    /// The stock's bars: data_status, source, as_of (its last bar), notes (every input
    /// that fell back or is approximate is said there).
    #[serde(flatten)]
    pub freshness: BarsFreshness,
}

fn invalid(m: impl Into<String>) -> ToolError {
    ToolError::InvalidArgs(m.into())
}

fn sizing_err(e: SizingError) -> ToolError {
    ToolError::InvalidArgs(e.to_string())
}

/// A number argument, if given; anything else given is refused by name.
fn number(args: &Value, key: &str) -> Result<Option<f64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| invalid(format!("{key} 必须是数字，收到 {v}"))),
    }
}

fn percent(args: &Value, key: &str, default: u32) -> Result<u32, ToolError> {
    match number(args, key)? {
        None => Ok(default),
        Some(p) => {
            pct_to_bp(p).ok_or_else(|| invalid(format!("{key} 必须在 0.01–100 之间，收到 {p}")))
        }
    }
}

fn price(args: &Value, key: &str) -> Result<Option<i64>, ToolError> {
    number(args, key)?
        .map(|p| price_e6(p).ok_or_else(|| invalid(format!("{key} 必须大于 0，收到 {p}"))))
        .transpose()
}

fn money(args: &Value, key: &str) -> Result<Option<i64>, ToolError> {
    number(args, key)?
        .map(|y| fen_of(y).ok_or_else(|| invalid(format!("{key} 无效：{y}"))))
        .transpose()
}

/// The account ledger now: its valued days' figures (NAV by day, from the journal's own
/// valuation at unadjusted closes) and its cash. The codes are owned here: the journal's
/// report borrows them across its reads, which the tool registry's handler cannot send.
async fn ledger_now(
    md: &MarketData,
    now: DateTime<Utc>,
    code: &str,
) -> Result<(Performance, i64, u64), ToolError> {
    let failed = |e: JournalError| ToolError::Failed(e.to_string());
    let store = JournalStore::new(md.pool().clone(), now)
        .await
        .map_err(failed)?;
    let summary = store.summary(now).await.map_err(failed)?;
    let entries = store.entries(now).await.map_err(failed)?;
    let codes: BTreeSet<String> = entries
        .iter()
        .filter_map(|e| e.kind.code())
        .map(str::to_owned)
        .collect();
    let mut closes = Closes::new();
    for code in codes {
        if wyckoff_market::StockCode::parse(&code).is_err() {
            continue;
        }
        let raw = md
            .raw_closes(&code, 0..=u32::MAX)
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?;
        let of_code = closes_of(&raw);
        closes.insert(code, of_code);
    }
    let (_, performance) =
        daily_values(&entries, &closes).map_err(|e| failed(JournalError::Ledger(e)))?;
    let held = wyckoff_journal::ledger::replay(&entries)
        .ok()
        .and_then(|l| l.holdings.get(code).map(|h| h.shares))
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0);
    Ok((performance, summary.cash_fen, held))
}

/// Sizes a buy for `args` (see [`parameters`]).
pub async fn size_position(md: &MarketData, args: &Value) -> Result<PositionSize, ToolError> {
    let code = opt_str(args, "code")
        .ok_or_else(|| invalid("缺少参数 code"))?
        .to_owned();
    let risk_bp = percent(args, "risk_pct", DEFAULT_RISK_BP)?;
    let max_position_bp = percent(args, "max_position_pct", DEFAULT_MAX_POSITION_BP)?;
    let given_entry = price(args, "entry")?;
    let given_stop = price(args, "stop")?;
    let atr_k = number(args, "atr_k")?.unwrap_or(DEFAULT_ATR_K);
    let rule = match (given_stop, opt_str(args, "stop_from")) {
        (Some(stop_e6), None) => StopRule::Price { stop_e6 },
        (Some(_), Some(_)) => return Err(invalid("stop 与 stop_from 只能给一个")),
        (None, None | Some("tighter")) => StopRule::Tighter { atr_k },
        (None, Some("structure")) => StopRule::Structure,
        (None, Some("atr")) => StopRule::Atr { atr_k },
        (None, Some(other)) => {
            return Err(invalid(format!(
                "stop_from 无效: '{other}'，可选: tighter / structure / atr"
            )));
        }
    };
    let given_equity = money(args, "equity")?;
    let given_cash = money(args, "cash")?;
    let given_held = match args.get("held_shares") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| invalid(format!("held_shares 必须是不小于 0 的整数，收到 {v}")))?,
        ),
    };

    let r = md.daily_bars(&code, None).await.map_err(market_err)?;
    let Some(last) = r.bars.last().copied() else {
        let why = wyckoff_market::notes::texts(&r.notes).join("; ");
        return Err(ToolError::Failed(format!(
            "{} 没有本地K线，无法计算仓位{}；先运行 `wyckoff data sync {}`",
            r.code,
            if why.is_empty() {
                String::new()
            } else {
                format!("（{why}）")
            },
            r.code
        )));
    };
    let mut freshness = BarsFreshness::of(&r);
    let (entry_e6, entry_source) = match given_entry {
        Some(e) => (e, EntrySource::Given),
        None => (
            price_e6(last.close).ok_or_else(|| {
                ToolError::Failed(format!("{} 最新收盘价无效：{}", r.code, last.close))
            })?,
            EntrySource::LastClose {
                date: iso(last.date),
            },
        ),
    };
    let stop = choose_stop(&r.bars, entry_e6, rule).map_err(sizing_err)?;

    // Equity and cash: given, or the ledger's.
    let now = md.clock().now();
    let (equity_fen, equity_source, ledger_cash, ledger_held) = match given_equity {
        Some(e) => (e, FigureSource::Given, None, 0),
        None => {
            let (performance, cash, held) = ledger_now(md, now, &r.code).await?;
            let p = &performance;
            if p.last.is_none() || p.nav_fen <= 0 {
                return Err(invalid(
                    "账户流水里没有净值可作权益：请给出 equity（CLI: --equity 元），或先记录资金（wyckoff portfolio cash in 金额）",
                ));
            }
            freshness
                .notes
                .extend(p.notes.iter().map(|n| format!("账户净值：{n}")));
            (
                p.nav_fen,
                FigureSource::Ledger {
                    date: p.last.clone(),
                },
                Some(cash),
                held,
            )
        }
    };
    let (cash_fen, cash_source) = match (given_cash, ledger_cash) {
        (Some(c), _) => (c, FigureSource::Given),
        (None, Some(c)) => (c, FigureSource::Ledger { date: None }),
        (None, None) => (equity_fen, FigureSource::Equity),
    };

    // 水温 on the stock's last bar; not applied when it cannot be judged, and said.
    let bench = md.index_bars(BENCHMARK, None).await.map_err(market_err)?;
    let small = md.index_bars(SMALL_CAP, None).await.map_err(market_err)?;
    let (regime, why) = regime_from(&bench.bars, &small.bars, Some(last.date));
    let regime = match regime.regime {
        Regime::Unknown => {
            freshness.notes.push(format!(
                "水温未计入：{}",
                why.unwrap_or_else(|| "无法判断大盘水温".to_owned())
            ));
            None
        }
        known => Some(known),
    };
    let board = Board::from_code(&r.code);
    let today = wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date());
    let held_shares = given_held.unwrap_or(ledger_held);
    let held_value_fen = i64::try_from(i128::from(held_shares) * i128::from(entry_e6) / 10_000)
        .map_err(|_| invalid(format!("held_shares 过大：{held_shares}")))?;
    let sizing = size(&SizingInput {
        board,
        date: today,
        entry_e6,
        stop_e6: stop.chosen.stop_e6,
        equity_fen,
        cash_fen,
        risk_bp,
        max_position_bp,
        held_value_fen,
        regime,
    })
    .map_err(sizing_err)?;
    Ok(PositionSize {
        name: r.name.clone().unwrap_or_default(),
        code: r.code.clone(),
        board,
        entry_source,
        equity_source,
        cash_source,
        stop,
        held_shares,
        regime,
        why_none: sizing.why_none(),
        sizing,
        freshness,
    })
}

/// `args` with the risk per trade and the largest position the call leaves out taken from
/// `rules` (the user's Settings) rather than the engine's defaults.
pub fn args_under(rules: &crate::risk::RiskRules, args: &Value) -> Value {
    let mut args = args.clone();
    if let Value::Object(map) = &mut args {
        for (key, bp) in [
            ("risk_pct", rules.risk_bp),
            ("max_position_pct", rules.max_position_bp),
        ] {
            if map.get(key).is_none_or(Value::is_null) {
                map.insert(key.to_owned(), json!(f64::from(bp) / 100.0));
            }
        }
    }
    args
}

/// `size_position` as the agent's tool and `mcp serve`'s: what the call leaves out of the
/// risk per trade and the largest position comes from `rules` (the user's Settings).
pub fn tool_under(
    md: std::sync::Arc<MarketData>,
    rules: crate::risk::RiskRules,
) -> std::sync::Arc<dyn wyckoff_agent::Tool> {
    std::sync::Arc::new(wyckoff_agent::FnTool::new(
        wyckoff_agent::ToolSpec::new(NAME, DISPLAY_NAME).concurrency_safe(),
        DESCRIPTION,
        parameters(),
        move |args, _ctx| {
            let md = md.clone();
            async move { run(&md, &args_under(&rules, &args)).await }
        },
    ))
}

/// The tool's answer: [`size_position`] as JSON.
pub async fn run(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let sized = size_position(md, args).await?;
    serde_json::to_value(&sized).map_err(|e| ToolError::Failed(e.to_string()))
}
