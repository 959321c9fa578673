//! Eastmoney (no key): `push2his` kline and the `push2` full-market list.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use wyckoff_engine::Bar;

use super::http::{LazyClient, num, send_json, url_with};
use super::{Adjust, BarRequest, DailySource, Fetched, SourceError, clip, finish};
use crate::code::StockCode;
use crate::meta::StockInfo;

pub const DEFAULT_KLINE_BASE: &str = "https://push2his.eastmoney.com";
pub const DEFAULT_LIST_BASE: &str = "https://push2.eastmoney.com";
/// A-share universe filter: SZ main, SZ ChiNext, SH main, SH STAR, BSE.
const LIST_FS: &str = "m:0 t:6,m:0 t:80,m:1 t:2,m:1 t:23,m:0 t:81 s:2048";
const PAGE_SIZE: usize = 100;
/// Safety stop for a paging loop that never ends (total is about 5,600 names).
const MAX_PAGES: usize = 200;

#[derive(Debug, Clone)]
pub struct EastmoneyConfig {
    pub kline_base: String,
    pub list_base: String,
    /// Pause between list pages, since the list is many requests in one call.
    pub page_interval: Duration,
    /// Rows per list page (`pz`); Eastmoney serves at most 100.
    pub page_size: usize,
}

impl Default for EastmoneyConfig {
    fn default() -> Self {
        Self {
            kline_base: DEFAULT_KLINE_BASE.into(),
            list_base: DEFAULT_LIST_BASE.into(),
            page_interval: Duration::from_secs(1),
            page_size: PAGE_SIZE,
        }
    }
}

pub struct Eastmoney {
    cfg: EastmoneyConfig,
    client: LazyClient,
}

impl Eastmoney {
    pub fn new(cfg: EastmoneyConfig, client: impl Into<LazyClient>) -> Self {
        Self {
            cfg,
            client: client.into(),
        }
    }
}

/// `rc` other than 0 is Eastmoney's own error code.
fn check_rc(v: &Value) -> Result<(), SourceError> {
    match v.get("rc").and_then(Value::as_i64) {
        None | Some(0) => Ok(()),
        Some(code) => Err(SourceError::Vendor {
            code,
            message: v
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }),
    }
}

/// Parses a kline reply. Each line: date, open, close, high, low, volume (lots of 100),
/// amount (CNY), amplitude %, change %, change, turnover %.
pub fn parse_klines(v: &Value, req: &BarRequest) -> Result<Fetched, SourceError> {
    check_rc(v)?;
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let lines = data
        .get("klines")
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::Malformed("data.klines is not a list".into()))?;
    let mut bars = Vec::with_capacity(lines.len());
    let mut rejected = Vec::new();
    for line in lines {
        let Some(s) = line.as_str() else {
            rejected.push(format!("not a string: {line}"));
            continue;
        };
        let f: Vec<&str> = s.split(',').collect();
        if f.len() < 7 {
            rejected.push(format!("too few fields: {s}"));
            continue;
        }
        let n = |i: usize| f.get(i).and_then(|x| x.trim().parse::<f64>().ok());
        let (Some(date), Some(open), Some(close), Some(high), Some(low), Some(vol), Some(amount)) = (
            crate::date::parse_date(f[0]),
            n(1),
            n(2),
            n(3),
            n(4),
            n(5),
            n(6),
        ) else {
            rejected.push(format!("unparsable: {s}"));
            continue;
        };
        bars.push(Bar {
            date,
            open,
            high,
            low,
            close,
            volume: vol * 100.0,
            amount,
            turnover: n(10),
        });
    }
    clip(&mut bars, req);
    finish(bars, true, rejected)
}

/// Parses one clist page: returns (stocks, total, rows on this page).
pub fn parse_list_page(v: &Value) -> Result<(Vec<StockInfo>, usize, usize), SourceError> {
    check_rc(v)?;
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let total = data.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
    let rows: Vec<&Value> = match data.get("diff") {
        Some(Value::Array(a)) => a.iter().collect(),
        // without np=1 the page is an object keyed "0", "1", …
        Some(Value::Object(m)) => m.values().collect(),
        _ => return Err(SourceError::Malformed("data.diff is missing".into())),
    };
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let code = r.get("f12").and_then(Value::as_str).unwrap_or("");
        let name = r.get("f14").and_then(Value::as_str).unwrap_or("");
        let Ok(code) = StockCode::parse(code) else {
            tracing::debug!(code, "skipping non-stock row in clist");
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let mut info = StockInfo::new(code, name);
        // "-" for suspended names: unknown, not zero
        info.market_cap = r.get("f20").and_then(num).filter(|x| *x > 0.0);
        out.push(info);
    }
    Ok((out, total, rows.len()))
}

#[async_trait]
impl DailySource for Eastmoney {
    fn name(&self) -> &'static str {
        "eastmoney"
    }

    async fn daily_bars(&self, req: &BarRequest) -> Result<Fetched, SourceError> {
        let url = format!("{}/api/qt/stock/kline/get", self.cfg.kline_base);
        let fqt = match req.adjust {
            Adjust::Forward => "1",
            Adjust::None => "0",
        };
        let secid = req.symbol.eastmoney_secid();
        let (beg, end) = (req.start.to_string(), req.end.to_string());
        let u = url_with(
            &url,
            &[
                ("secid", secid.as_str()),
                ("fields1", "f1,f2,f3,f4,f5,f6"),
                ("fields2", "f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61"),
                ("klt", "101"),
                ("fqt", fqt),
                ("beg", &beg),
                ("end", &end),
            ],
        )?;
        let v = send_json(self.client.http().get(u)).await?;
        parse_klines(&v, req)
    }

    fn has_minute_bars(&self) -> bool {
        true
    }

    /// The kline at `klt` 5/15/30/60 from the daily klines' host.
    async fn minute_bars(
        &self,
        symbol: &crate::code::Symbol,
        period: crate::minute::MinutePeriod,
    ) -> Result<super::minute::MinuteFetched, SourceError> {
        super::minute::fetch_eastmoney(self.client.http(), &self.cfg.kline_base, symbol, period)
            .await
    }

    async fn stock_list(&self) -> Result<Vec<StockInfo>, SourceError> {
        let url = format!("{}/api/qt/clist/get", self.cfg.list_base);
        let mut all = Vec::new();
        for pn in 1..=MAX_PAGES {
            if pn > 1 && !self.cfg.page_interval.is_zero() {
                tokio::time::sleep(self.cfg.page_interval).await;
            }
            let (pn_s, pz) = (pn.to_string(), self.cfg.page_size.max(1));
            let pz_s = pz.to_string();
            let u = url_with(
                &url,
                &[
                    ("pn", pn_s.as_str()),
                    ("pz", pz_s.as_str()),
                    ("po", "1"),
                    ("np", "1"),
                    ("fltt", "2"),
                    ("invt", "2"),
                    ("fid", "f12"),
                    ("fs", LIST_FS),
                    ("fields", "f2,f3,f5,f6,f8,f12,f13,f14,f20,f21"),
                ],
            )?;
            let v = send_json(self.client.http().get(u)).await?;
            let (page, total, rows) = parse_list_page(&v)?;
            all.extend(page);
            if rows < pz || pn * pz >= total {
                break;
            }
        }
        if all.is_empty() {
            return Err(SourceError::Empty);
        }
        Ok(all)
    }
}
