//! `record_fill` (记录成交): one buy or sell into the account journal, which re-derives
//! the position (shares, average cost, buy date) from the fills. It writes the user's
//! account, so it requires approval exactly like `update_portfolio`: the spec's
//! `requires_approval` flag is what every path (sub-agents, background, schedules' inbox)
//! checks.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_journal::money::{fen_from_f64, price_from_f64};
use wyckoff_journal::{Fees, JournalError, JournalStore, NewFill, Side, Source};
use wyckoff_market::MarketData;

use crate::common::{opt_f64, opt_i64, opt_str};

pub const NAME: &str = "record_fill";
pub const DISPLAY_NAME: &str = "记录成交";
pub const DESCRIPTION: &str = "把一笔真实成交记入账户流水（需要用户批准）：side 为 buy 或 sell，给出 code、shares、price、date（YYYY-MM-DD，缺省为今天）；\
fees 为总费用（元），省略时按回测的费率规则计算（佣金万2.5最低5元、卖出印花税、过户费）。持仓、均价和实现盈亏由成交推导，写入后返回最新持仓。\
卖出超过当时持仓会被拒绝，不写入。只记录用户确认过的成交，不要替用户编造。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "side": {"type": "string", "enum": ["buy", "sell"]},
            "code": {"type": "string", "description": "A 股代码，如 '600519'"},
            "name": {"type": "string", "description": "股票名称；可省略，按代码查"},
            "shares": {"type": "integer", "description": "成交数量（股），大于 0"},
            "price": {"type": "number", "description": "成交价格（元），大于 0"},
            "date": {"type": "string", "description": "成交日期 YYYY-MM-DD 或 YYYYMMDD，缺省为今天"},
            "fees": {"type": "number", "description": "总费用（元）；省略则按费率规则计算"}
        },
        "required": ["side", "code", "shares", "price"],
        "additionalProperties": false
    })
}

fn invalid(m: impl Into<String>) -> ToolError {
    ToolError::InvalidArgs(m.into())
}

pub async fn record(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let side = match opt_str(args, "side") {
        Some("buy") => Side::Buy,
        Some("sell") => Side::Sell,
        other => return Err(invalid(format!("side 必须是 buy 或 sell，收到 {other:?}"))),
    };
    let code = opt_str(args, "code").ok_or_else(|| invalid("缺少参数 code"))?;
    let shares = opt_i64(args, "shares").ok_or_else(|| invalid("缺少参数 shares"))?;
    let price_e6 = opt_f64(args, "price")
        .and_then(price_from_f64)
        .ok_or_else(|| invalid("price 必须大于 0"))?;
    let now = md.clock().now();
    let date = match opt_str(args, "date") {
        None | Some("") => wyckoff_market::date::to_yyyymmdd(md.clock().now_beijing().date()),
        Some(d) => wyckoff_market::date::parse_date(d)
            .ok_or_else(|| invalid(format!("date「{d}」无效，请用 YYYY-MM-DD")))?,
    };
    let fees = match opt_f64(args, "fees") {
        None => None,
        Some(f) => Some(Fees {
            commission_fen: fen_from_f64(f)
                .filter(|f| *f >= 0)
                .ok_or_else(|| invalid("fees 不能为负数"))?,
            stamp_fen: 0,
            transfer_fen: 0,
        }),
    };
    let name = match opt_str(args, "name") {
        Some(n) => n.to_owned(),
        None => wyckoff_market::StockCode::parse(code)
            .ok()
            .and_then(|c| md.stock_info(&c))
            .map(|i| i.name)
            .unwrap_or_default(),
    };
    let store = JournalStore::new(md.pool().clone(), now)
        .await
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let fill = NewFill {
        code: code.to_owned(),
        name,
        side,
        date,
        price_e6,
        shares,
        fees,
    };
    match store.record(&fill, Source::Agent, now).await {
        Ok(out) => {
            let mut v = serde_json::to_value(&out).unwrap_or_else(|_| json!({}));
            v["data_status"] = json!("ok");
            v["source"] = json!("local");
            v["as_of"] = Value::Null;
            Ok(v)
        }
        Err(e @ (JournalError::Invalid(_) | JournalError::Ledger(_))) => {
            Err(invalid(e.to_string()))
        }
        Err(e) => Err(ToolError::Failed(e.to_string())),
    }
}
