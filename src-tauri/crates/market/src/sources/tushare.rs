//! Tushare Pro (token): `POST` JSON `{api_name, token, params, fields}`, reply
//! `{code, msg, data: {fields, items}}`. `daily` is unadjusted with volume in lots and
//! amount in thousands of CNY; forward adjustment uses `adj_factor`.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::{Value, json};
use wyckoff_engine::Bar;

use super::http::{num, send_json};
use super::{Adjust, BarRequest, DailySource, Fetched, SourceError, clip, finish};
use crate::code::{StockCode, SymbolKind};
use crate::meta::StockInfo;

pub const DEFAULT_BASE: &str = "http://api.tushare.pro";

#[derive(Clone)]
pub struct TushareConfig {
    pub base: String,
    pub token: String,
}

impl std::fmt::Debug for TushareConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TushareConfig")
            .field("base", &self.base)
            .field("token", &"***")
            .finish()
    }
}

pub struct Tushare {
    cfg: TushareConfig,
    client: reqwest::Client,
}

/// A decoded table: column index by name, rows.
pub struct Table {
    cols: HashMap<String, usize>,
    pub items: Vec<Vec<Value>>,
}

impl Table {
    pub fn get<'a>(&self, row: &'a [Value], name: &str) -> Option<&'a Value> {
        self.cols.get(name).and_then(|i| row.get(*i))
    }
}

/// Checks `code`/`msg` and decodes `data.fields` + `data.items`.
pub fn parse_table(v: &Value) -> Result<Table, SourceError> {
    let code = v.get("code").and_then(Value::as_i64).unwrap_or(0);
    let msg = v
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if code != 0 {
        return Err(match code {
            40101 => SourceError::Auth(msg),
            40203 => SourceError::RateLimited {
                retry_after: super::http::parse_wait_hint(&msg),
                message: msg,
            },
            _ if super::http::looks_rate_limited(&msg) => SourceError::RateLimited {
                retry_after: super::http::parse_wait_hint(&msg),
                message: msg,
            },
            _ if msg.contains("token") => SourceError::Auth(msg),
            _ => SourceError::Vendor { code, message: msg },
        });
    }
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let fields = data
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::Malformed("data.fields is missing".into()))?;
    let cols = fields
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.as_str().map(|s| (s.to_string(), i)))
        .collect();
    let items = data
        .get("items")
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::Malformed("data.items is missing".into()))?
        .iter()
        .filter_map(|r| r.as_array().cloned())
        .collect::<Vec<_>>();
    if items.is_empty() {
        return Err(SourceError::Empty);
    }
    Ok(Table { cols, items })
}

/// Raw daily rows → bars (shares, CNY); `factors` (date → adj_factor) turns them into
/// forward-adjusted prices relative to the latest factor in the range.
pub fn to_bars(
    t: &Table,
    factors: Option<&HashMap<u32, f64>>,
    req: &BarRequest,
) -> Result<Fetched, SourceError> {
    let latest = factors.and_then(|f| f.iter().max_by_key(|(d, _)| **d).map(|(_, v)| *v));
    let mut bars = Vec::with_capacity(t.items.len());
    let mut rejected = Vec::new();
    for row in &t.items {
        let n = |name: &str| t.get(row, name).and_then(num);
        let date = t
            .get(row, "trade_date")
            .and_then(Value::as_str)
            .and_then(crate::date::parse_date);
        let (Some(date), Some(o), Some(h), Some(l), Some(c), Some(vol)) =
            (date, n("open"), n("high"), n("low"), n("close"), n("vol"))
        else {
            rejected.push(format!("unparsable: {row:?}"));
            continue;
        };
        let k = match (factors, latest) {
            (Some(f), Some(last)) if last > 0.0 => match f.get(&date) {
                Some(af) => af / last,
                None => {
                    rejected.push(format!("{date}: no adj_factor"));
                    continue;
                }
            },
            _ => 1.0,
        };
        bars.push(Bar {
            date,
            open: o * k,
            high: h * k,
            low: l * k,
            close: c * k,
            volume: vol * 100.0,
            amount: n("amount").unwrap_or(0.0) * 1000.0,
            turnover: None,
        });
    }
    clip(&mut bars, req);
    finish(bars, true, rejected)
}

pub fn to_factors(t: &Table) -> HashMap<u32, f64> {
    t.items
        .iter()
        .filter_map(|row| {
            let d = t
                .get(row, "trade_date")
                .and_then(Value::as_str)
                .and_then(crate::date::parse_date)?;
            let f = t.get(row, "adj_factor").and_then(num)?;
            Some((d, f))
        })
        .collect()
}

pub fn to_stock_list(t: &Table) -> Vec<StockInfo> {
    t.items
        .iter()
        .filter_map(|row| {
            let code = t.get(row, "ts_code").and_then(Value::as_str)?;
            let code = StockCode::parse(code).ok()?;
            let name = t.get(row, "name").and_then(Value::as_str)?;
            let mut info = StockInfo::new(code, name);
            info.industry = t
                .get(row, "industry")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string);
            info.list_date = t
                .get(row, "list_date")
                .and_then(Value::as_str)
                .and_then(crate::date::parse_date);
            Some(info)
        })
        .collect()
}

impl Tushare {
    pub fn new(cfg: TushareConfig, client: reqwest::Client) -> Self {
        Self { cfg, client }
    }

    async fn call(&self, api: &str, params: Value, fields: &str) -> Result<Table, SourceError> {
        let body = json!({
            "api_name": api,
            "token": self.cfg.token,
            "params": params,
            "fields": fields,
        });
        let v = send_json(self.client.post(&self.cfg.base).json(&body)).await?;
        parse_table(&v)
    }
}

#[async_trait]
impl DailySource for Tushare {
    fn name(&self) -> &'static str {
        "tushare"
    }

    async fn daily_bars(&self, req: &BarRequest) -> Result<Fetched, SourceError> {
        let params = json!({
            "ts_code": req.symbol.dotted(),
            "start_date": req.start.to_string(),
            "end_date": req.end.to_string(),
        });
        let api = match req.symbol.kind {
            SymbolKind::Stock => "daily",
            SymbolKind::Index => "index_daily",
        };
        let daily = self
            .call(
                api,
                params.clone(),
                "ts_code,trade_date,open,high,low,close,vol,amount",
            )
            .await?;
        let factors = if req.adjust == Adjust::Forward && req.symbol.kind == SymbolKind::Stock {
            let t = self
                .call("adj_factor", params, "ts_code,trade_date,adj_factor")
                .await?;
            Some(to_factors(&t))
        } else {
            None
        };
        to_bars(&daily, factors.as_ref(), req)
    }

    async fn stock_list(&self) -> Result<Vec<StockInfo>, SourceError> {
        let t = self
            .call(
                "stock_basic",
                json!({"list_status": "L"}),
                "ts_code,symbol,name,industry,list_date",
            )
            .await?;
        let list = to_stock_list(&t);
        if list.is_empty() {
            return Err(SourceError::Empty);
        }
        Ok(list)
    }
}
