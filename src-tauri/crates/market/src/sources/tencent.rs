//! Tencent (no key): `fqkline/get`, rows `[date, open, close, high, low, volume_lots]`.
//! It gives no traded amount, so bars from here carry `has_amount = false`.

use async_trait::async_trait;
use serde_json::Value;
use wyckoff_engine::Bar;

use crate::code::Symbol;
use crate::minute::MinutePeriod;

use super::http::{LazyClient, num, send_json, url_with};
use super::minute::MinuteFetched;
use super::{Adjust, BarRequest, DailySource, Fetched, SourceError, clip, finish};

pub const DEFAULT_BASE: &str = "https://web.ifzq.gtimg.cn";
/// Tencent caps one reply at this many bars.
const MAX_COUNT: i64 = 2000;

#[derive(Debug, Clone)]
pub struct TencentConfig {
    /// Where `fqkline` (daily bars) is asked.
    pub base: String,
    /// Where `mkline` (minute bars) is asked: another host of Tencent's.
    pub minute_base: String,
}

impl Default for TencentConfig {
    fn default() -> Self {
        Self {
            base: DEFAULT_BASE.into(),
            minute_base: super::minute::DEFAULT_TENCENT_BASE.into(),
        }
    }
}

pub struct Tencent {
    cfg: TencentConfig,
    client: LazyClient,
}

impl Tencent {
    pub fn new(cfg: TencentConfig, client: impl Into<LazyClient>) -> Self {
        Self {
            cfg,
            client: client.into(),
        }
    }
}

pub fn parse_fqkline(v: &Value, req: &BarRequest) -> Result<Fetched, SourceError> {
    let code = v.get("code").and_then(Value::as_i64).unwrap_or(0);
    if code != 0 {
        return Err(SourceError::Vendor {
            code,
            message: v
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let sym = req.symbol.tencent();
    let Some(entry) = data.get(&sym) else {
        return Err(SourceError::UnknownCode(sym));
    };
    // qfq replies use "qfqday"; unadjusted (indices) use "day"
    let key = match req.adjust {
        Adjust::Forward => "qfqday",
        Adjust::None => "day",
    };
    let rows = match entry.get(key).or_else(|| entry.get("day")) {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) => return Err(SourceError::Empty),
        Some(_) => return Err(SourceError::Malformed(format!("{sym}.{key} is not a list"))),
    };
    let mut bars = Vec::with_capacity(rows.len());
    let mut rejected = Vec::new();
    for row in rows {
        let Some(f) = row.as_array() else {
            rejected.push(format!("not a row: {row}"));
            continue;
        };
        let n = |i: usize| f.get(i).and_then(num);
        let date = f
            .first()
            .and_then(Value::as_str)
            .and_then(crate::date::parse_date);
        let (Some(date), Some(open), Some(close), Some(high), Some(low), Some(lots)) =
            (date, n(1), n(2), n(3), n(4), n(5))
        else {
            rejected.push(format!("unparsable: {row}"));
            continue;
        };
        bars.push(Bar {
            date,
            open,
            high,
            low,
            close,
            volume: lots * 100.0,
            amount: 0.0,
            turnover: None,
        });
    }
    clip(&mut bars, req);
    finish(bars, false, rejected)
}

#[async_trait]
impl DailySource for Tencent {
    fn name(&self) -> &'static str {
        "tencent"
    }

    async fn daily_bars(&self, req: &BarRequest) -> Result<Fetched, SourceError> {
        let span = match (
            crate::date::from_yyyymmdd(req.start),
            crate::date::from_yyyymmdd(req.end),
        ) {
            (Some(a), Some(b)) => (b - a).num_days() + 1,
            _ => MAX_COUNT,
        };
        let fq = match req.adjust {
            Adjust::Forward => "qfq",
            Adjust::None => "",
        };
        let param = format!(
            "{},day,{},{},{},{}",
            req.symbol.tencent(),
            crate::date::iso(req.start),
            crate::date::iso(req.end),
            span.clamp(1, MAX_COUNT),
            fq
        );
        let url = format!("{}/appstock/app/fqkline/get", self.cfg.base);
        let u = url_with(&url, &[("param", param.as_str())])?;
        let v = send_json(self.client.http().get(u)).await?;
        parse_fqkline(&v, req)
    }

    fn has_minute_bars(&self) -> bool {
        true
    }

    async fn minute_bars(
        &self,
        symbol: &Symbol,
        period: MinutePeriod,
    ) -> Result<MinuteFetched, SourceError> {
        super::minute::fetch_tencent(self.client.http(), &self.cfg.minute_base, symbol, period)
            .await
    }
}
