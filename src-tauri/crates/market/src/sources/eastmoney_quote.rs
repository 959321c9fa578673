//! Eastmoney's snapshot quotes (no key), the fallback: `GET {base}/api/qt/ulist.np/get`
//! with `secids=0.000001,1.601318`, `fltt=2` (prices as decimals) and the fields f2 last,
//! f5 volume (lots of 100), f6 amount (CNY), f12 code, f14 name, f15 high, f16 low, f17
//! open, f18 previous close, f124 quote time (Unix seconds). A code it does not know is
//! simply left out of `data.diff`; a value it lacks is `"-"`.

use chrono::DateTime;
use serde_json::Value;

use super::SourceError;
use super::http::num;
use crate::code::StockCode;
use crate::quote::{Quote, QuoteReply};
use crate::raw::price_e6;

pub const DEFAULT_BASE: &str = "https://push2.eastmoney.com";
pub const PATH: &str = "/api/qt/ulist.np/get";
pub const FIELDS: &str = "f2,f5,f6,f12,f13,f14,f15,f16,f17,f18,f124";
/// Codes asked for in one request.
pub const BATCH: usize = 100;

/// The query for `codes`.
pub fn query(codes: &[StockCode]) -> Vec<(&'static str, String)> {
    let secids: Vec<String> = codes.iter().map(|c| c.symbol().eastmoney_secid()).collect();
    vec![
        ("fltt", "2".into()),
        ("invt", "2".into()),
        ("np", "1".into()),
        ("fields", FIELDS.into()),
        ("secids", secids.join(",")),
    ]
}

fn price(row: &Value, key: &str) -> Result<i64, String> {
    match row.get(key) {
        // "-": not traded yet today
        Some(Value::String(s)) if s.trim() == "-" => Ok(0),
        Some(v) => match num(v) {
            Some(0.0) => Ok(0),
            Some(p) => price_e6(p).ok_or_else(|| format!("{key}: {v}")),
            None => Err(format!("{key}: {v}")),
        },
        None => Err(format!("{key} missing")),
    }
}

fn row_quote(row: &Value) -> Result<Quote, String> {
    let code = row
        .get("f12")
        .and_then(Value::as_str)
        .ok_or("f12 (code) missing")?
        .to_owned();
    let name = row
        .get("f14")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let amount = |key: &str| row.get(key).and_then(num).unwrap_or(0.0).max(0.0);
    let time = row
        .get("f124")
        .and_then(Value::as_i64)
        .and_then(|s| DateTime::from_timestamp(s, 0))
        .map(wyckoff_time::to_beijing)
        .ok_or_else(|| format!("{code}: f124 (time) missing"))?;
    let prev_close = price(row, "f18").map_err(|e| format!("{code}: {e}"))?;
    if prev_close <= 0 {
        return Err(format!("{code}: no previous close"));
    }
    let p = |key: &str| price(row, key).map_err(|e| format!("{code}: {e}"));
    Ok(Quote {
        last_e6: p("f2")?,
        prev_close_e6: prev_close,
        open_e6: p("f17")?,
        high_e6: p("f15")?,
        low_e6: p("f16")?,
        volume: (amount("f5") * 100.0).round() as u64,
        amount_fen: (amount("f6") * 100.0).round() as i64,
        time: time.format("%Y-%m-%d %H:%M:%S").to_string(),
        source: "eastmoney".into(),
        code,
        name,
    })
}

/// Parses a reply to a request for `asked`.
pub fn parse(v: &Value, asked: &[StockCode]) -> Result<QuoteReply, SourceError> {
    if let Some(rc) = v.get("rc").and_then(Value::as_i64)
        && rc != 0
    {
        return Err(SourceError::Vendor {
            code: rc,
            message: v
                .get("msg")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        });
    }
    let rows: Vec<&Value> = match v.get("data").and_then(|d| d.get("diff")) {
        Some(Value::Array(a)) => a.iter().collect(),
        // without np=1 the rows come keyed "0", "1", …
        Some(Value::Object(o)) => o.values().collect(),
        // data: null is how it answers when it knows none of the codes
        None | Some(Value::Null) if matches!(v.get("data"), Some(Value::Null) | None) => Vec::new(),
        _ => return Err(SourceError::Malformed("data.diff is not a list".into())),
    };
    let mut reply = QuoteReply::default();
    for row in rows {
        match row_quote(row) {
            Ok(q) => reply.quotes.push(q),
            Err(why) => reply.rejected.push(why),
        }
    }
    if reply.quotes.is_empty() && !reply.rejected.is_empty() {
        return Err(SourceError::Malformed(reply.rejected.join("; ")));
    }
    reply.unknown = asked
        .iter()
        .filter(|c| !reply.quotes.iter().any(|q| q.code == c.digits()))
        .map(|c| c.digits().to_owned())
        .collect();
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/eastmoney_ulist.json");

    #[test]
    fn parses_a_reply_and_names_the_codes_it_left_out() {
        let asked: Vec<StockCode> = ["000001", "601318", "600000"]
            .iter()
            .map(|c| StockCode::parse(c).unwrap())
            .collect();
        let v: Value = serde_json::from_str(FIXTURE).unwrap();
        let r = parse(&v, &asked).unwrap();
        assert_eq!(r.unknown, vec!["600000".to_owned()]);
        let q = &r.quotes[0];
        assert_eq!(q.code, "000001");
        assert_eq!(q.name, "平安银行");
        assert_eq!(q.last_e6, 13_040_000);
        assert_eq!(q.prev_close_e6, 12_890_000);
        assert_eq!(q.volume, 61_500_000);
        assert_eq!(q.amount_fen, 79_900_000_000);
        assert_eq!(q.time, "2020-06-17 10:42:06");
        assert_eq!(q.source, "eastmoney");
    }

    #[test]
    fn data_null_means_no_code_is_known() {
        let asked = vec![StockCode::parse("600000").unwrap()];
        let r = parse(&serde_json::json!({"rc": 0, "data": null}), &asked).unwrap();
        assert_eq!(r.unknown, vec!["600000".to_owned()]);
        assert!(matches!(
            parse(&serde_json::json!({"rc": 102, "msg": "bad"}), &asked),
            Err(SourceError::Vendor { code: 102, .. })
        ));
    }

    #[test]
    fn the_query_names_markets_by_secid() {
        let q = query(&[
            StockCode::parse("000001").unwrap(),
            StockCode::parse("601318").unwrap(),
        ]);
        assert!(q.contains(&("secids", "0.000001,1.601318".into())), "{q:?}");
    }
}
