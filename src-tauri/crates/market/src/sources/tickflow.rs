//! TickFlow: `GET /v1/klines` with column arrays. Free without a key; the paid service
//! takes `x-api-key`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use wyckoff_engine::Bar;

use super::http::{LazyClient, num, send_json, url_with};
use super::{Adjust, BarRequest, DailySource, Fetched, SourceError, clip, finish};

pub const DEFAULT_BASE: &str = "https://api.tickflow.org";

#[derive(Clone, Default)]
pub struct TickFlowConfig {
    pub base: Option<String>,
    /// Paid key; `None` uses the free endpoint (daily bars only).
    pub api_key: Option<String>,
}

impl std::fmt::Debug for TickFlowConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // never print the key
        f.debug_struct("TickFlowConfig")
            .field("base", &self.base)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish()
    }
}

pub struct TickFlow {
    base: String,
    api_key: Option<String>,
    client: LazyClient,
}

impl TickFlow {
    pub fn new(cfg: TickFlowConfig, client: impl Into<LazyClient>) -> Self {
        Self {
            base: cfg.base.unwrap_or_else(|| DEFAULT_BASE.into()),
            api_key: cfg.api_key,
            client: client.into(),
        }
    }
}

fn col<'a>(data: &'a Value, name: &str) -> Result<&'a Vec<Value>, SourceError> {
    data.get(name)
        .and_then(Value::as_array)
        .ok_or_else(|| SourceError::Malformed(format!("data.{name} is missing")))
}

/// Parses `{data: {timestamp[], open[], high[], low[], close[], volume[], amount[]}}`.
/// Timestamps are epoch milliseconds; the trading date is taken in Asia/Shanghai.
pub fn parse_klines(v: &Value, req: &BarRequest) -> Result<Fetched, SourceError> {
    if let Some(msg) = error_message(v) {
        return Err(msg);
    }
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let ts = col(data, "timestamp")?;
    let cols = [
        col(data, "open")?,
        col(data, "high")?,
        col(data, "low")?,
        col(data, "close")?,
        col(data, "volume")?,
    ];
    let amount = data.get("amount").and_then(Value::as_array);
    if cols.iter().any(|c| c.len() != ts.len()) || amount.is_some_and(|a| a.len() != ts.len()) {
        return Err(SourceError::Malformed(
            "column arrays differ in length".into(),
        ));
    }
    let mut bars = Vec::with_capacity(ts.len());
    let mut rejected = Vec::new();
    for i in 0..ts.len() {
        let date = ts[i]
            .as_i64()
            .and_then(DateTime::<Utc>::from_timestamp_millis)
            .map(|t| crate::date::to_yyyymmdd(wyckoff_time::to_beijing(t).date()));
        let n = |c: &Vec<Value>| num(&c[i]);
        let (Some(date), Some(open), Some(high), Some(low), Some(close), Some(volume)) = (
            date,
            n(cols[0]),
            n(cols[1]),
            n(cols[2]),
            n(cols[3]),
            n(cols[4]),
        ) else {
            rejected.push(format!("row {i} unparsable"));
            continue;
        };
        bars.push(Bar {
            date,
            open,
            high,
            low,
            close,
            // TickFlow reports volume in shares (its SDK's dataframes use shares)
            volume,
            amount: amount.and_then(|a| num(&a[i])).unwrap_or(0.0),
            turnover: None,
        });
    }
    clip(&mut bars, req);
    finish(bars, amount.is_some(), rejected)
}

/// TickFlow error bodies: `{"code": "...", "message": "..."}` without `data`.
fn error_message(v: &Value) -> Option<SourceError> {
    if v.get("data").is_some() {
        return None;
    }
    let code = v.get("code")?.as_str().map(str::to_string).or_else(|| {
        v.get("code")
            .and_then(Value::as_i64)
            .filter(|c| *c != 0)
            .map(|c| c.to_string())
    })?;
    let message = v
        .get("message")
        .or_else(|| v.get("msg"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let upper = code.to_ascii_uppercase();
    Some(
        if upper.contains("NOT_FOUND") || upper.contains("INVALID_SYMBOL") {
            SourceError::UnknownCode(message)
        } else if upper.contains("RATE") || super::http::looks_rate_limited(&message) {
            SourceError::RateLimited {
                retry_after: super::http::parse_wait_hint(&message),
                message,
            }
        } else if upper.contains("AUTH") || upper.contains("KEY") {
            SourceError::Auth(message)
        } else {
            SourceError::Vendor {
                code: -1,
                message: format!("{code}: {message}"),
            }
        },
    )
}

fn shanghai_midnight_ms(d: u32) -> Option<i64> {
    let midnight = crate::date::from_yyyymmdd(d)?.and_hms_opt(0, 0, 0)?;
    Some(wyckoff_time::from_beijing(midnight).timestamp_millis())
}

#[async_trait]
impl DailySource for TickFlow {
    fn name(&self) -> &'static str {
        "tickflow"
    }

    async fn daily_bars(&self, req: &BarRequest) -> Result<Fetched, SourceError> {
        let url = format!("{}/v1/klines", self.base);
        let adjust = match req.adjust {
            Adjust::Forward => "forward",
            Adjust::None => "none",
        };
        let start = shanghai_midnight_ms(req.start).unwrap_or(0);
        // end of the end day
        let end = shanghai_midnight_ms(req.end)
            .map(|t| t + 86_400_000 - 1)
            .unwrap_or(0);
        let (sym, st, et) = (req.symbol.dotted(), start.to_string(), end.to_string());
        let u = url_with(
            &url,
            &[
                ("symbol", sym.as_str()),
                ("period", "1d"),
                ("adjust", adjust),
                ("start_time", st.as_str()),
                ("end_time", et.as_str()),
            ],
        )?;
        let mut rb = self.client.http().get(u);
        if let Some(k) = &self.api_key {
            rb = rb.header("x-api-key", k);
        }
        match send_json(rb).await {
            Err(SourceError::Http { status: 404, .. }) => {
                Err(SourceError::UnknownCode(req.symbol.dotted()))
            }
            Err(SourceError::Http {
                status: 400,
                snippet,
            }) => {
                // a 400 JSON body still carries the vendor's error code
                match serde_json::from_str::<Value>(&snippet)
                    .ok()
                    .and_then(|v| error_message(&v))
                {
                    Some(e) => Err(e),
                    None => Err(SourceError::Http {
                        status: 400,
                        snippet,
                    }),
                }
            }
            other => parse_klines(&other?, req),
        }
    }
}
