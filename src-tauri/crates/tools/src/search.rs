//! `search_stock_by_name` (REFERENCE §2.3 #1, §14.7): code, name or pinyin over the local
//! A-share list.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_market::MarketData;

use crate::common::opt_str;

pub const NAME: &str = "search_stock_by_name";
pub const DISPLAY_NAME: &str = "搜索股票";
pub const DESCRIPTION: &str = "根据关键词搜索 A 股，支持名称、6 位代码、拼音全拼或首字母（如 'pingan'、'payh' → 平安银行）。\
最多返回 10 条。只覆盖沪深京 A 股个股；港股、美股、ETF 暂不支持。名单来自本地缓存的股票列表（离线时为内置名单，可能不含最新上市的股票）。";

pub const MAX_RESULTS: usize = 10;

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "keyword": {"type": "string", "minLength": 1,
                "description": "搜索关键词，如 '宁德'、'300750'、'payh'、'pinganyinhang'"}
        },
        "required": ["keyword"],
        "additionalProperties": false
    })
}

pub async fn run(md: &MarketData, args: &Value) -> Result<Value, ToolError> {
    let keyword = opt_str(args, "keyword")
        .ok_or_else(|| ToolError::InvalidArgs("keyword 不能为空".into()))?;
    let hits = md.search(keyword, MAX_RESULTS);
    let mut out = json!({
        "keyword": keyword,
        "count": hits.len(),
        "results": hits,
        // the list is metadata, not bars: no as-of date of a bar applies
        "data_status": "ok",
        "source": "local stock list",
        "as_of": null,
        "notes": ["prices are not included; use analyze_stock for bars"],
    });
    if hits.is_empty() {
        out["message"] = json!(format!("未找到与 '{keyword}' 匹配的股票"));
    }
    Ok(out)
}
