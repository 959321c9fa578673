//! Tencent's snapshot quotes (no key): `GET {base}/q=sh600519,sz000001,…` answers one GBK
//! line a code, `v_sz000001="51~平安银行~000001~13.05~12.89~…";`, fields split on `~`:
//! 1 name, 2 code, 3 last, 4 previous close, 5 open, 6 volume (lots of 100), 30 time
//! (`YYYYMMDDHHMMSS`, Beijing), 33 high, 34 low, 35 `last/volume(lots)/amount(CNY)`,
//! 36 volume (lots), 37 amount (10,000 CNY). A code Tencent does not know comes back as
//! `v_pv_none_match="1";`.

use chrono::NaiveDateTime;

use super::SourceError;
use crate::code::StockCode;
use crate::quote::{Quote, QuoteReply};
use crate::raw::price_e6;

pub const DEFAULT_BASE: &str = "https://qt.gtimg.cn";
/// Codes asked for in one request (Tencent answers far more; a short URL is kinder).
pub const BATCH: usize = 60;

/// The request path for `codes`: `/q=sh600519,sz000001`.
pub fn path(codes: &[StockCode]) -> String {
    let list: Vec<String> = codes.iter().map(|c| c.symbol().tencent()).collect();
    format!("/q={}", list.join(","))
}

fn field<'a>(f: &[&'a str], i: usize) -> Option<&'a str> {
    f.get(i).map(|s| s.trim()).filter(|s| !s.is_empty())
}

fn price(f: &[&str], i: usize) -> Option<i64> {
    let v: f64 = field(f, i)?.parse().ok()?;
    // a stock that has not traded yet today shows 0.00: no price, not a price of zero
    if v == 0.0 { Some(0) } else { price_e6(v) }
}

/// One `v_…="…"` payload as a quote; `Err` names what is wrong with it.
fn parse_fields(payload: &str) -> Result<Quote, String> {
    let f: Vec<&str> = payload.split('~').collect();
    if f.len() < 38 {
        return Err(format!("{} fields, expected at least 38", f.len()));
    }
    let code = field(&f, 2).ok_or("no code")?.to_owned();
    let name = field(&f, 1).unwrap_or_default().to_owned();
    let need = |i: usize, what: &str| price(&f, i).ok_or_else(|| format!("{what}: {:?}", f[i]));
    let last = need(3, "last price")?;
    let prev_close = need(4, "previous close")?;
    let open = need(5, "open")?;
    let high = need(33, "high")?;
    let low = need(34, "low")?;
    let lots: f64 = field(&f, 36)
        .or_else(|| field(&f, 6))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("volume: {:?}", f[36]))?;
    // the exact amount (CNY) is the third part of field 35; field 37 is rounded to 10,000s
    let amount_yuan = field(&f, 35)
        .and_then(|s| s.split('/').nth(2))
        .and_then(|v| v.parse::<f64>().ok())
        .or_else(|| {
            field(&f, 37)
                .and_then(|v| v.parse::<f64>().ok())
                .map(|w| w * 10_000.0)
        })
        .ok_or_else(|| format!("amount: {:?}", f[37]))?;
    let time = field(&f, 30)
        .and_then(|t| NaiveDateTime::parse_from_str(t, "%Y%m%d%H%M%S").ok())
        .ok_or_else(|| format!("time: {:?}", f[30]))?;
    if prev_close <= 0 {
        return Err(format!("previous close: {:?}", f[4]));
    }
    Ok(Quote {
        code,
        name,
        last_e6: last,
        prev_close_e6: prev_close,
        open_e6: open,
        high_e6: high,
        low_e6: low,
        volume: (lots * 100.0).round().max(0.0) as u64,
        amount_fen: (amount_yuan * 100.0).round().max(0.0) as i64,
        time: time.format("%Y-%m-%d %H:%M:%S").to_string(),
        source: "tencent".into(),
    })
}

/// Parses a whole (already decoded) reply to a request for `asked`.
pub fn parse(text: &str, asked: &[StockCode]) -> Result<QuoteReply, SourceError> {
    let mut reply = QuoteReply::default();
    let mut seen = Vec::new();
    let mut bad = Vec::new();
    for line in text.split(';') {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((key, rest)) = line.split_once('=') else {
            bad.push(format!("not a quote line: {}", snippet(line)));
            continue;
        };
        let key = key.trim().trim_start_matches("v_");
        if key == "pv_none_match" {
            continue;
        }
        let payload = rest.trim().trim_matches('"');
        // sz000001 → 000001
        let digits = key.get(2..).unwrap_or(key);
        if payload.is_empty() {
            // an empty payload is Tencent's way of saying it has no such code
            continue;
        }
        match parse_fields(payload) {
            Ok(q) => {
                seen.push(q.code.clone());
                reply.quotes.push(q);
            }
            Err(why) => bad.push(format!("{digits}: {why}")),
        }
    }
    if reply.quotes.is_empty() && !bad.is_empty() {
        return Err(SourceError::Malformed(bad.join("; ")));
    }
    if reply.quotes.is_empty() && !text.contains("v_") {
        return Err(SourceError::Malformed(format!(
            "no quote lines: {}",
            snippet(text)
        )));
    }
    reply.rejected = bad;
    reply.unknown = asked
        .iter()
        .filter(|c| !seen.iter().any(|s| s == c.digits()))
        .map(|c| c.digits().to_owned())
        .collect();
    Ok(reply)
}

fn snippet(s: &str) -> String {
    s.chars()
        .take(120)
        .collect::<String>()
        .replace(['\n', '\r'], " ")
}

/// Tencent answers in GBK (and now and then UTF-8).
pub fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => encoding_rs::GBK.decode(bytes).0.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/tencent_quote_gbk.txt");

    fn codes(list: &[&str]) -> Vec<StockCode> {
        list.iter().map(|c| StockCode::parse(c).unwrap()).collect()
    }

    #[test]
    fn parses_a_gbk_reply_with_an_unknown_code() {
        let asked = codes(&["000001", "601318", "600000"]);
        let text = decode(FIXTURE);
        let r = parse(&text, &asked).unwrap();
        assert_eq!(r.unknown, vec!["600000".to_owned()]);
        assert!(r.rejected.is_empty(), "{:?}", r.rejected);
        let q = &r.quotes[0];
        assert_eq!(q.code, "000001");
        assert_eq!(q.name, "平安银行");
        assert_eq!(q.last_e6, 13_050_000);
        assert_eq!(q.prev_close_e6, 12_890_000);
        assert_eq!(q.open_e6, 12_900_000);
        assert_eq!(q.high_e6, 13_100_000);
        assert_eq!(q.low_e6, 12_880_000);
        assert_eq!(q.volume, 61_234_500);
        assert_eq!(q.amount_fen, 79_512_345_600);
        assert_eq!(q.time, "2020-06-17 10:42:03");
        assert_eq!(r.quotes[1].name, "中国平安");
    }

    #[test]
    fn the_path_spells_codes_the_tencent_way() {
        assert_eq!(
            path(&codes(&["600519", "000001", "300027"])),
            "/q=sh600519,sz000001,sz300027"
        );
    }

    #[test]
    fn a_damaged_reply_is_malformed_not_empty() {
        let asked = codes(&["000001"]);
        assert!(matches!(
            parse("v_sz000001=\"51~平安银行~000001~13.05\";", &asked),
            Err(SourceError::Malformed(_))
        ));
        assert!(matches!(
            parse("<html>blocked</html>", &asked),
            Err(SourceError::Malformed(_))
        ));
        // every code unknown is an answer, not a failure
        let r = parse("v_pv_none_match=\"1\";\n", &asked).unwrap();
        assert_eq!(r.unknown, vec!["000001".to_owned()]);
    }
}
