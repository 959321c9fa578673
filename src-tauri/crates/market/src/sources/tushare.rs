//! Tushare Pro (token): `POST` JSON `{api_name, token, params, fields}`, reply
//! `{code, msg, data: {fields, items, has_more}}`. `daily` is unadjusted with volume in lots
//! and amount in thousands of CNY; forward adjustment uses `adj_factor`. `namechange` and
//! `stock_basic` (list status L, D and P) give the market's history: every name a stock
//! carried from which day, and when it listed and delisted. `index_classify` (Shenwan
//! 2021, level 1) and `index_member` give each industry's members with the days they
//! joined and left; without the points for them, `stock_basic`'s `industry` stands in.

use std::collections::HashMap;

use async_trait::async_trait;
use serde_json::{Value, json};
use wyckoff_engine::Bar;

use super::http::{LazyClient, num, send_json};
use super::{Adjust, BarRequest, DailySource, Fetched, SourceError, clip, finish};
use crate::code::{CodeError, StockCode, SymbolKind};
use crate::history::{ListStatus, Listing, NameChange, StockHistory};
use crate::industry_spans::{IndustryFetch, IndustrySpan};
use crate::meta::{StockInfo, clean_name};

pub const DEFAULT_BASE: &str = "http://api.tushare.pro";
/// Rows asked for per page of a long table (`namechange` is tens of thousands).
const PAGE_ROWS: usize = 5_000;
/// Pages read before a table that still says `has_more` is given up on as endless.
const MAX_PAGES: usize = 40;
/// Between one industry's `index_member` call and the next (31 of them in a row): the
/// basic tier allows 200 calls a minute.
const INDUSTRY_CALL_GAP: std::time::Duration = std::time::Duration::from_millis(350);

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
    client: LazyClient,
}

/// A decoded table: column index by name, rows.
#[derive(Debug)]
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
/// forward-adjusted prices relative to the latest factor in the range, and then the raw
/// closes go with them ([`Fetched::raw_closes`]).
pub fn to_bars(
    t: &Table,
    factors: Option<&HashMap<u32, f64>>,
    req: &BarRequest,
) -> Result<Fetched, SourceError> {
    let latest = factors.and_then(|f| f.iter().max_by_key(|(d, _)| **d).map(|(_, v)| *v));
    let mut bars = Vec::with_capacity(t.items.len());
    let mut raw = Vec::new();
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
        if factors.is_some() {
            raw.push((date, c));
        }
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
    let mut fetched = finish(bars, true, rejected)?;
    // only the days whose adjusted bar was kept
    raw.retain(|(d, _)| fetched.bars.binary_search_by_key(d, |b| b.date).is_ok());
    fetched.raw_closes = raw;
    Ok(fetched)
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

/// A stock code from Tushare's `ts_code`: `Ok(None)` for a code that is no A-share stock
/// (a B share or a fund the table also lists), an error for one that is no code at all.
fn ts_stock(t: &Table, row: &[Value]) -> Result<Option<StockCode>, String> {
    let raw = t.get(row, "ts_code").and_then(Value::as_str).unwrap_or("");
    match StockCode::parse(raw) {
        Ok(c) => Ok(Some(c)),
        Err(CodeError::NotAStock { .. }) => Ok(None),
        Err(e) => Err(format!("ts_code {raw:?}: {e}")),
    }
}

fn ts_date(t: &Table, row: &[Value], name: &str) -> Option<u32> {
    t.get(row, name)
        .and_then(Value::as_str)
        .and_then(crate::date::parse_date)
}

/// `namechange` rows → the name in force from each `start_date`. A stock with any row that
/// does not read keeps none of its rows (a history with a hole would call a past ST stock
/// healthy); the rows are listed in the second value. Two rows for one stock and start
/// date (the table repeats corrections) resolve to the one in force longest (open-ended
/// first), then the later announcement.
pub fn to_name_changes(t: &Table) -> (Vec<NameChange>, Vec<String>) {
    let mut rejected = Vec::new();
    let mut broken: std::collections::HashSet<String> = std::collections::HashSet::new();
    // (code, start) → (end or open, ann_date, name)
    let mut best: HashMap<(String, u32), (u32, u32, String)> = HashMap::new();
    for row in &t.items {
        let code = match ts_stock(t, row) {
            Ok(Some(c)) => c.digits().to_string(),
            Ok(None) => continue,
            Err(e) => {
                rejected.push(format!("namechange {e}: {row:?}"));
                continue;
            }
        };
        let name = t
            .get(row, "name")
            .and_then(Value::as_str)
            .map(clean_name)
            .filter(|n| !n.is_empty());
        let (Some(name), Some(start)) = (name, ts_date(t, row, "start_date")) else {
            rejected.push(format!(
                "namechange {code}: no name or start_date in {row:?}"
            ));
            broken.insert(code);
            continue;
        };
        let end = ts_date(t, row, "end_date").unwrap_or(u32::MAX);
        let ann = ts_date(t, row, "ann_date").unwrap_or(0);
        let slot = best
            .entry((code, start))
            .or_insert((end, ann, name.clone()));
        if (end, ann) > (slot.0, slot.1) {
            *slot = (end, ann, name);
        }
    }
    let mut names: Vec<NameChange> = best
        .into_iter()
        .filter(|((code, _), _)| !broken.contains(code))
        .map(|((code, from), (_, _, name))| NameChange { code, from, name })
        .collect();
    names.sort_by(|a, b| (&a.code, a.from).cmp(&(&b.code, b.from)));
    (names, rejected)
}

/// `stock_basic` rows of one list status → listings. A delisted row without its delisting
/// day, or one that does not read, is listed in the second value instead.
pub fn to_listings(t: &Table, asked: ListStatus) -> (Vec<Listing>, Vec<String>) {
    let mut listings = Vec::new();
    let mut rejected = Vec::new();
    for row in &t.items {
        let code = match ts_stock(t, row) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(e) => {
                rejected.push(format!("stock_basic {e}: {row:?}"));
                continue;
            }
        };
        let status = match t.get(row, "list_status").and_then(Value::as_str) {
            Some(s) => match ListStatus::from_letter(s) {
                Some(st) => st,
                None => {
                    rejected.push(format!("stock_basic {code}: list_status {s:?}"));
                    continue;
                }
            },
            None => asked,
        };
        let name = t
            .get(row, "name")
            .and_then(Value::as_str)
            .map(clean_name)
            .unwrap_or_default();
        let delist_date = ts_date(t, row, "delist_date");
        if status == ListStatus::Delisted && delist_date.is_none() {
            rejected.push(format!(
                "stock_basic {code}: delisted without a delist_date"
            ));
            continue;
        }
        listings.push(Listing {
            code: code.digits().to_string(),
            name,
            status,
            list_date: ts_date(t, row, "list_date"),
            delist_date: delist_date.filter(|_| status == ListStatus::Delisted),
        });
    }
    (listings, rejected)
}

/// `daily_basic` rows of one day → (six-digit code, market cap in 亿元); `total_mv` is in
/// 万元. Rows without a positive cap are listed in the second value instead.
pub fn to_market_caps(t: &Table) -> (Vec<(String, f64)>, Vec<String>) {
    let mut caps = Vec::new();
    let mut rejected = Vec::new();
    for row in &t.items {
        let code = match ts_stock(t, row) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(e) => {
                rejected.push(format!("daily_basic {e}: {row:?}"));
                continue;
            }
        };
        match t.get(row, "total_mv").and_then(num) {
            Some(wan) if wan > 0.0 && wan.is_finite() => {
                caps.push((code.digits().to_string(), wan / 1e4));
            }
            _ => rejected.push(format!(
                "daily_basic {}: no total_mv in {row:?}",
                code.digits()
            )),
        }
    }
    (caps, rejected)
}

/// `index_classify` rows → the Shenwan level-1 industries: (index code, name), in the
/// vendor's order.
pub fn to_sw_classes(t: &Table) -> Vec<(String, String)> {
    t.items
        .iter()
        .filter_map(|row| {
            let code = t.get(row, "index_code").and_then(Value::as_str)?.trim();
            let name = t.get(row, "industry_name").and_then(Value::as_str)?.trim();
            (!code.is_empty() && !name.is_empty()).then(|| (code.to_string(), name.to_string()))
        })
        .collect()
}

/// `index_member` rows of the industry `name` → spans (`in_date` to `out_date`). A row
/// without a readable `in_date` or stock is listed in the second value instead; codes that
/// are no A-share stock are skipped.
pub fn to_industry_spans(t: &Table, name: &str) -> (Vec<IndustrySpan>, Vec<String>) {
    let mut spans = Vec::new();
    let mut rejected = Vec::new();
    for row in &t.items {
        let raw = t.get(row, "con_code").and_then(Value::as_str).unwrap_or("");
        let code = match StockCode::parse(raw) {
            Ok(c) => c,
            Err(CodeError::NotAStock { .. }) => continue,
            Err(e) => {
                rejected.push(format!("index_member {name}: con_code {raw:?}: {e}"));
                continue;
            }
        };
        let Some(from) = ts_date(t, row, "in_date") else {
            rejected.push(format!(
                "index_member {name}: {} without an in_date",
                code.digits()
            ));
            continue;
        };
        spans.push(IndustrySpan {
            code: code.digits().to_string(),
            name: name.to_string(),
            from,
            until: ts_date(t, row, "out_date"),
        });
    }
    (spans, rejected)
}

/// Whether a vendor error says the token's points do not reach the API (Tushare answers
/// so with code 40203, as it does a rate limit, and says which in its message).
pub fn lacks_permission(e: &SourceError) -> bool {
    let msg = match e {
        SourceError::RateLimited { message, .. } => message.as_str(),
        SourceError::Vendor { message, .. } => message.as_str(),
        SourceError::Auth(m) => m.as_str(),
        _ => return false,
    };
    msg.contains("权限") || msg.contains("积分") || msg.to_ascii_lowercase().contains("permission")
}

impl Tushare {
    pub fn new(cfg: TushareConfig, client: impl Into<LazyClient>) -> Self {
        Self {
            cfg,
            client: client.into(),
        }
    }

    async fn call(&self, api: &str, params: Value, fields: &str) -> Result<Table, SourceError> {
        let v = self.call_raw(api, params, fields).await?;
        parse_table(&v)
    }

    async fn call_raw(&self, api: &str, params: Value, fields: &str) -> Result<Value, SourceError> {
        let body = json!({
            "api_name": api,
            "token": self.cfg.token,
            "params": params,
            "fields": fields,
        });
        send_json(self.client.http().post(&self.cfg.base).json(&body)).await
    }

    /// The Shenwan level-1 membership with its dates; `stock_basic`'s industries
    /// (`basic`, today's) when the token cannot read the Shenwan tables or they name no
    /// industry. Any other failure loads nothing (what is stored stays). Rows that do not
    /// read go to `rejected`.
    async fn industries(
        &self,
        basic: Vec<(String, String)>,
        rejected: &mut Vec<String>,
    ) -> IndustryFetch {
        let fallback = |why: String| {
            if basic.is_empty() {
                IndustryFetch::Failed {
                    error: format!("{why}; stock_basic gave no industries either"),
                }
            } else {
                IndustryFetch::StockBasic {
                    members: basic.clone(),
                    why,
                }
            }
        };
        match self.shenwan(rejected).await {
            Ok(Some((spans, industries))) => IndustryFetch::Shenwan { spans, industries },
            Ok(None) => fallback("index_classify named no Shenwan (SW2021) industries".into()),
            Err(e) if lacks_permission(&e) => {
                fallback(format!("the token cannot read the Shenwan tables: {e}"))
            }
            Err(e) => IndustryFetch::Failed {
                error: format!("Shenwan industries: {e}"),
            },
        }
    }

    /// `index_classify` (SW2021, L1), then each industry's `index_member`; `None` when no
    /// industry is named.
    async fn shenwan(
        &self,
        rejected: &mut Vec<String>,
    ) -> Result<Option<(Vec<IndustrySpan>, usize)>, SourceError> {
        let Some(t) = self
            .call_all(
                "index_classify",
                json!({"level": "L1", "src": "SW2021"}),
                "index_code,industry_name,level,src",
            )
            .await?
        else {
            return Ok(None);
        };
        let classes = to_sw_classes(&t);
        if classes.is_empty() {
            return Ok(None);
        }
        let mut spans = Vec::new();
        for (i, (index_code, name)) in classes.iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(INDUSTRY_CALL_GAP).await;
            }
            let Some(t) = self
                .call_all(
                    "index_member",
                    json!({"index_code": index_code}),
                    "index_code,con_code,in_date,out_date",
                )
                .await?
            else {
                continue;
            };
            let (got, bad) = to_industry_spans(&t, name);
            spans.extend(got);
            rejected.extend(bad);
        }
        Ok(Some((spans, classes.len())))
    }

    /// Every row of `api`, page by page while the reply says `has_more`; `None` when the
    /// table is empty.
    async fn call_all(
        &self,
        api: &str,
        params: Value,
        fields: &str,
    ) -> Result<Option<Table>, SourceError> {
        let mut all: Option<Table> = None;
        let mut offset = 0usize;
        for _ in 0..MAX_PAGES {
            let mut p = params.clone();
            p["limit"] = json!(PAGE_ROWS);
            p["offset"] = json!(offset);
            let v = self.call_raw(api, p, fields).await?;
            let page = match parse_table(&v) {
                Ok(t) => t,
                Err(SourceError::Empty) => return Ok(all),
                Err(e) => return Err(e),
            };
            let more = v
                .pointer("/data/has_more")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            offset += page.items.len();
            match &mut all {
                None => all = Some(page),
                Some(t) if t.cols == page.cols => t.items.extend(page.items),
                Some(_) => {
                    return Err(SourceError::Malformed(format!(
                        "{api}: the columns changed between pages"
                    )));
                }
            }
            if !more {
                return Ok(all);
            }
        }
        Err(SourceError::Malformed(format!(
            "{api}: still has_more after {MAX_PAGES} pages of {PAGE_ROWS} rows"
        )))
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

    fn has_stock_history(&self) -> bool {
        true
    }

    async fn stock_history(&self) -> Result<StockHistory, SourceError> {
        let mut out = StockHistory::default();
        let mut basic_industries = Vec::new();
        if let Some(t) = self
            .call_all(
                "namechange",
                json!({}),
                "ts_code,name,start_date,end_date,ann_date,change_reason",
            )
            .await?
        {
            let (names, rejected) = to_name_changes(&t);
            out.names = names;
            out.rejected.extend(rejected);
        }
        for status in [ListStatus::Listed, ListStatus::Delisted, ListStatus::Paused] {
            if let Some(t) = self
                .call_all(
                    "stock_basic",
                    json!({"list_status": status.letter()}),
                    "ts_code,symbol,name,list_status,list_date,delist_date,industry",
                )
                .await?
            {
                if status == ListStatus::Listed {
                    basic_industries = to_stock_list(&t)
                        .into_iter()
                        .filter_map(|i| Some((i.code.digits().to_string(), i.industry?)))
                        .collect();
                }
                let (listings, rejected) = to_listings(&t, status);
                out.listings.extend(listings);
                out.rejected.extend(rejected);
            }
        }
        if out.names.is_empty() && out.listings.is_empty() {
            return Err(SourceError::Empty);
        }
        out.industries = self.industries(basic_industries, &mut out.rejected).await;
        Ok(out)
    }

    async fn market_caps_on(&self, day: u32) -> Result<Vec<(String, f64)>, SourceError> {
        let t = self
            .call_all(
                "daily_basic",
                json!({"trade_date": day.to_string()}),
                "ts_code,trade_date,total_mv",
            )
            .await?
            .ok_or(SourceError::Empty)?;
        let (caps, rejected) = to_market_caps(&t);
        if !rejected.is_empty() {
            tracing::warn!(day, rejected = rejected.len(), first = ?rejected.first(), "daily_basic rows not used");
        }
        if caps.is_empty() {
            return Err(SourceError::Empty);
        }
        Ok(caps)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_for_points_is_told_from_other_vendor_errors() {
        let limited = |m: &str| SourceError::RateLimited {
            retry_after: None,
            message: m.into(),
        };
        let vendor = |m: &str| SourceError::Vendor {
            code: 40203,
            message: m.into(),
        };
        let table = [
            (vendor("抱歉，您没有访问该接口的权限"), true),
            (
                limited("抱歉，您没有访问该接口的权限，权限的具体详情访问"),
                true,
            ),
            (vendor("您的积分不足，请查看积分获取办法"), true),
            (
                SourceError::Auth("No permission for index_classify".into()),
                true,
            ),
            // the same code for a rate limit, which says so
            (limited("抱歉，您每分钟最多访问该接口200次"), false),
            (vendor("参数错误"), false),
            (SourceError::Empty, false),
        ];
        for (e, want) in table {
            assert_eq!(lacks_permission(&e), want, "{e}");
        }
    }
}
