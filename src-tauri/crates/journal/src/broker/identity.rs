//! What makes a statement row recognisable when the same or an overlapping file comes
//! again: the broker's own ids (合同编号 / 成交编号, or the cash journal's 流水号) with the
//! day, code and business; without them the row's own figures (day, code, business,
//! quantity, price, amount, 发生金额, time). Rows alike in every one of those (two equal
//! transfers on one day) are told apart by their order among themselves, which the same
//! file — or an overlapping one holding the whole day — repeats.

use std::collections::HashMap;

use crate::broker::rows::RawRow;

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// The identity of each row (same order as `rows`).
pub fn identities(rows: &[RawRow]) -> Vec<String> {
    let mut seen: HashMap<String, u32> = HashMap::new();
    rows.iter()
        .map(|r| {
            let business = serde_json::to_value(r.business)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let base = if r.contract.is_some() || r.trade_no.is_some() {
                format!(
                    "stmt:{}:{business}:{}:order={}:fill={}",
                    r.date,
                    opt(&r.code),
                    opt(&r.contract),
                    opt(&r.trade_no)
                )
            } else if let Some(serial) = &r.serial {
                format!(
                    "stmt:{}:{business}:{}:serial={serial}",
                    r.date,
                    opt(&r.code)
                )
            } else {
                format!(
                    "stmt:{}:{business}:{}:q={}:p={}:a={}:n={}:t={}",
                    r.date,
                    opt(&r.code),
                    opt(&r.qty),
                    opt(&r.price_e6),
                    opt(&r.amount_fen),
                    opt(&r.net_fen),
                    opt(&r.time)
                )
            };
            let n = seen.entry(base.clone()).or_default();
            *n += 1;
            if *n == 1 { base } else { format!("{base}#{n}") }
        })
        .collect()
}
