//! Minute bars from the live sources: Tencent's `mkline` and Eastmoney's kline with `klt`
//! 5/15/30/60, both unadjusted. Requests and parsers only: the two sources offer them as
//! [`super::DailySource::minute_bars`], so [`super::SourceChain::minute_bars`] asks them
//! in the configured order through the same slot as their daily bars (one pace and one
//! circuit breaker per vendor, whichever kind of bars is asked).
//!
//! - Tencent: `GET {base}/appstock/app/kline/mkline?param=sh600519,m60,,320` →
//!   `{"code":0,"data":{"sh600519":{"m60":[["202412021030","open","close","high","low",
//!   "volume in lots",{},"turnover %"],…]}}}`: the latest 320 bars, no traded amount.
//! - Eastmoney: `GET {base}/api/qt/stock/kline/get?secid=1.600519&klt=60&fqt=0&beg=0&end=…`
//!   → `data.klines` of `"2024-12-02 10:30,open,close,high,low,volume in lots,amount,…"`.

use serde_json::Value;

use super::SourceError;
use super::http::{num, send_json, url_with};
use crate::code::Symbol;
use crate::minute::{MinuteBar, MinutePeriod};

/// Tencent serves `mkline` here, not at the daily `fqkline` host.
pub const DEFAULT_TENCENT_BASE: &str = "https://ifzq.gtimg.cn";
/// Bars asked of Tencent a request (its pages hold the latest few hundred).
pub const TENCENT_COUNT: u32 = 320;
/// Bars asked of Eastmoney a request; it sends what it keeps, the latest first cut.
pub const EASTMONEY_LIMIT: u32 = 10_000;

/// A vendor reply as bars, with the rows that were refused and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MinuteFetched {
    /// Ascending, one per time.
    pub bars: Vec<MinuteBar>,
    pub rejected: Vec<String>,
}

/// `202412021030`, `2024-12-02 10:30` or `2024-12-02 10:30:00` as `YYYYMMDDHHMM`.
pub fn parse_time(text: &str) -> Option<u64> {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let digits = match digits.len() {
        12 => digits,
        14 => digits[..12].to_owned(),
        _ => return None,
    };
    let t: u64 = digits.parse().ok()?;
    crate::minute::to_datetime(t).map(|_| t)
}

fn finish(
    mut bars: Vec<MinuteBar>,
    mut rejected: Vec<String>,
) -> Result<MinuteFetched, SourceError> {
    bars.retain(|b| match b.problem() {
        None => true,
        Some(why) => {
            rejected.push(format!("{}: {why}", crate::minute::time_label(b.time)));
            false
        }
    });
    bars.sort_by_key(|b| b.time);
    // the last of a time wins
    bars.reverse();
    bars.dedup_by_key(|b| b.time);
    bars.reverse();
    if bars.is_empty() {
        if rejected.is_empty() {
            return Err(SourceError::Empty);
        }
        return Err(SourceError::Malformed(format!(
            "every row was rejected: {}",
            rejected.join("; ")
        )));
    }
    Ok(MinuteFetched { bars, rejected })
}

/// Parses a Tencent `mkline` reply for `symbol` at `period`.
pub fn parse_tencent(
    v: &Value,
    symbol: &Symbol,
    period: MinutePeriod,
) -> Result<MinuteFetched, SourceError> {
    let code = v.get("code").and_then(Value::as_i64).unwrap_or(0);
    if code != 0 {
        return Err(SourceError::Vendor {
            code,
            message: v
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        });
    }
    let data = match v.get("data") {
        None | Some(Value::Null) => return Err(SourceError::DataNull),
        Some(d) => d,
    };
    let sym = symbol.tencent();
    let Some(entry) = data.get(&sym) else {
        return Err(SourceError::UnknownCode(sym));
    };
    let key = format!("m{}", period.minutes());
    let rows = match entry.get(&key) {
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
        let time = f.first().and_then(Value::as_str).and_then(parse_time);
        let (Some(time), Some(open), Some(close), Some(high), Some(low), Some(lots)) =
            (time, n(1), n(2), n(3), n(4), n(5))
        else {
            rejected.push(format!("unparsable: {row}"));
            continue;
        };
        bars.push(MinuteBar {
            time,
            open,
            high,
            low,
            close,
            volume: (lots * 100.0).round(),
            amount: None,
        });
    }
    finish(bars, rejected)
}

/// Parses an Eastmoney minute kline reply.
pub fn parse_eastmoney(v: &Value) -> Result<MinuteFetched, SourceError> {
    match v.get("rc").and_then(Value::as_i64) {
        None | Some(0) => {}
        Some(code) => {
            return Err(SourceError::Vendor {
                code,
                message: v
                    .get("msg")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
            });
        }
    }
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
        let n = |i: usize| f.get(i).and_then(|x| x.trim().parse::<f64>().ok());
        let time = f.first().and_then(|t| parse_time(t));
        let (Some(time), Some(open), Some(close), Some(high), Some(low), Some(lots), Some(amount)) =
            (time, n(1), n(2), n(3), n(4), n(5), n(6))
        else {
            rejected.push(format!("unparsable: {s}"));
            continue;
        };
        bars.push(MinuteBar {
            time,
            open,
            high,
            low,
            close,
            volume: (lots * 100.0).round(),
            amount: Some(amount),
        });
    }
    finish(bars, rejected)
}

/// Eastmoney's minute kline of `symbol` at `period` from `base` (the daily klines' base).
pub(crate) async fn fetch_eastmoney(
    client: &reqwest::Client,
    base: &str,
    symbol: &Symbol,
    period: MinutePeriod,
) -> Result<MinuteFetched, SourceError> {
    let url = format!("{base}/api/qt/stock/kline/get");
    let (secid, klt, lmt) = (
        symbol.eastmoney_secid(),
        period.minutes().to_string(),
        EASTMONEY_LIMIT.to_string(),
    );
    let u = url_with(
        &url,
        &[
            ("secid", secid.as_str()),
            ("fields1", "f1,f2,f3,f4,f5,f6"),
            ("fields2", "f51,f52,f53,f54,f55,f56,f57,f58,f59,f60,f61"),
            ("klt", klt.as_str()),
            ("fqt", "0"),
            ("beg", "0"),
            ("end", "20500101"),
            ("lmt", lmt.as_str()),
        ],
    )?;
    parse_eastmoney(&send_json(client.get(u)).await?)
}

/// Tencent's `mkline` of `symbol` at `period` from `base` (`ifzq.gtimg.cn`).
pub(crate) async fn fetch_tencent(
    client: &reqwest::Client,
    base: &str,
    symbol: &Symbol,
    period: MinutePeriod,
) -> Result<MinuteFetched, SourceError> {
    let url = format!("{base}/appstock/app/kline/mkline");
    let param = format!(
        "{},m{},,{TENCENT_COUNT}",
        symbol.tencent(),
        period.minutes()
    );
    let u = url_with(&url, &[("param", param.as_str())])?;
    parse_tencent(&send_json(client.get(u)).await?, symbol, period)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::StockCode;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("202412021030"), Some(202_412_021_030));
        assert_eq!(parse_time("2024-12-02 10:30"), Some(202_412_021_030));
        assert_eq!(parse_time("2024-12-02 10:30:00"), Some(202_412_021_030));
        assert_eq!(parse_time("2024-12-02"), None);
        assert_eq!(parse_time("2024-13-02 10:30"), None);
    }

    #[test]
    fn tencent_mkline_fixture() {
        let sym = StockCode::parse("600519").unwrap().symbol();
        let r =
            parse_tencent(&fixture("tencent_mkline_m60.json"), &sym, MinutePeriod::M60).unwrap();
        assert!(r.rejected.is_empty(), "{:?}", r.rejected);
        assert_eq!(r.bars.len(), 8);
        let first = r.bars[0];
        assert_eq!(first.time, 202_412_021_030);
        assert_eq!(
            (first.open, first.close, first.high, first.low),
            (1530.0, 1527.0, 1538.0, 1521.18)
        );
        assert_eq!(first.volume, 1_188_600.0);
        assert_eq!(first.amount, None);
        assert!(r.bars.windows(2).all(|w| w[0].time < w[1].time));
        // the same reply asked for another period has no bars of it
        assert_eq!(
            parse_tencent(&fixture("tencent_mkline_m60.json"), &sym, MinutePeriod::M5).unwrap_err(),
            SourceError::Empty
        );
        let other = StockCode::parse("000001").unwrap().symbol();
        assert!(matches!(
            parse_tencent(
                &fixture("tencent_mkline_m60.json"),
                &other,
                MinutePeriod::M60
            ),
            Err(SourceError::UnknownCode(_))
        ));
    }

    #[test]
    fn eastmoney_klt_fixture() {
        let r = parse_eastmoney(&fixture("eastmoney_klt60.json")).unwrap();
        assert_eq!(r.bars.len(), 8);
        assert_eq!(r.rejected.len(), 1, "the row with high below close");
        let b = r.bars[3];
        assert_eq!(b.time, 202_412_021_500);
        assert_eq!(b.amount, Some(861_905_574.0));
        assert_eq!(b.volume, 565_400.0);
    }

    #[test]
    fn vendor_errors_are_typed() {
        let v: Value = serde_json::from_str(r#"{"rc":102,"msg":"bad secid","data":null}"#).unwrap();
        assert!(matches!(
            parse_eastmoney(&v),
            Err(SourceError::Vendor { code: 102, .. })
        ));
        let v: Value = serde_json::from_str(r#"{"rc":0,"data":null}"#).unwrap();
        assert_eq!(parse_eastmoney(&v), Err(SourceError::DataNull));
        let v: Value = serde_json::from_str(r#"{"code":-1,"msg":"param error"}"#).unwrap();
        let sym = StockCode::parse("600519").unwrap().symbol();
        assert!(matches!(
            parse_tencent(&v, &sym, MinutePeriod::M60),
            Err(SourceError::Vendor { code: -1, .. })
        ));
    }
}
