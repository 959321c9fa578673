//! Tool-result condensation (REFERENCE §3.6, without its quirks): old results shrink to
//! the fields that matter per tool, and the output is always valid JSON, however small
//! the budget.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

/// The reference's budget for a condensed stale result (REFERENCE §3.6); the summary
/// request itself uses 400 per line.
pub const SHRUNK_MAX: usize = 600;
/// Smallest budget honoured: room for a short JSON string.
const MIN_BUDGET: usize = 16;

/// `analyze_stock` diagnosis fields, most important first (the engine's real names).
const ANALYZE_FIELDS: &[&str] = &[
    "error",
    "code",
    "name",
    "health",
    "l2_channel",
    "track",
    "accum_stage",
    "l4_triggers",
    "exit_signal",
    "stop_loss_status",
    "stop_loss_price",
    "latest_close",
    "candidate_lane",
    "data_status",
    "as_of",
    "latest_date",
    "message",
];
/// `analyze_stock` price mode: the headline, then the last rows.
const PRICE_FIELDS: &[&str] = &[
    "error",
    "code",
    "name",
    "latest_close",
    "latest_date",
    "days",
    "data_status",
];
const PORTFOLIO_DIAG_FIELDS: &[&str] = &[
    "error",
    "portfolio_id",
    "position_count",
    "successful_count",
    "failed_count",
    "free_cash",
    "total_market_value",
    "data_status",
    "as_of",
];
const DIAG_ROW_FIELDS: &[&str] = &[
    "code",
    "name",
    "health",
    "l2_channel",
    "accum_stage",
    "exit_signal",
    "stop_loss_status",
    "pnl_pct",
    "weight_pct",
];
const PORTFOLIO_FIELDS: &[&str] = &[
    "error",
    "portfolio_id",
    "free_cash",
    "position_count",
    "message",
];
/// Columns of a price row worth keeping: the last five rows must fit the budget.
const PRICE_ROW_FIELDS: &[&str] = &["date", "close", "pct_chg", "volume"];
const POSITION_ROW_FIELDS: &[&str] = &["code", "name", "shares", "cost_price", "buy_date"];
const GENERIC_FIELDS: &[&str] = &["error", "message", "status", "code", "name", "result"];
/// Rows kept from lists (price bars, list results).
const LAST_ROWS: usize = 5;

/// An ordered JSON object (the workspace's serde_json may sort keys; order matters here
/// because fields are dropped from the end when the budget is tight).
type Fields = Vec<(String, Value)>;

/// Condenses one tool result to at most `max_len` characters of valid JSON. Results
/// already within the budget are returned as they are (as a JSON string when they are
/// not JSON).
pub fn condense_tool_result(tool: &str, content: &str, max_len: usize) -> String {
    let max_len = max_len.max(MIN_BUDGET);
    let trimmed = content.trim();
    if content.chars().count() <= max_len {
        return if serde_json::from_str::<IgnoredAny>(trimmed).is_ok() {
            content.to_owned()
        } else {
            json_text(content, max_len)
        };
    }
    // Objects are read lazily: only the kept fields are parsed into values.
    let kept = if trimmed.starts_with('{') {
        match serde_json::from_str::<Obj<'_>>(trimmed) {
            Ok(o) => select_object(tool, &o),
            Err(_) => return json_text(content, max_len),
        }
    } else {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(Value::Array(rows)) => Kept::Whole(Value::Array(last_rows(&rows, LAST_ROWS))),
            Ok(other) => Kept::Whole(other),
            Err(_) => return json_text(content, max_len),
        }
    };
    match kept {
        Kept::Fields(fields) if !fields.is_empty() => fit_fields(fields, max_len),
        Kept::Whole(v) => fit_value(v, max_len),
        Kept::Fields(_) => json_text(content, max_len),
    }
}

enum Kept {
    Fields(Fields),
    Whole(Value),
}

/// A JSON object whose values are still unparsed.
type Obj<'a> = BTreeMap<String, &'a RawValue>;

fn value_of(raw: &RawValue) -> Option<Value> {
    serde_json::from_str::<Value>(raw.get())
        .ok()
        .filter(|v| !v.is_null())
}

fn pick(obj: &Obj<'_>, keys: &[&str]) -> Fields {
    keys.iter()
        .filter_map(|k| {
            obj.get(*k)
                .and_then(|raw| value_of(raw))
                .map(|v| ((*k).to_owned(), v))
        })
        .collect()
}

/// The kept fields of each row of an array field (rows that are not objects as they are).
fn pick_rows(raw: &RawValue, keys: &[&str], last: usize) -> Option<Vec<Value>> {
    let rows = serde_json::from_str::<Vec<&RawValue>>(raw.get()).ok()?;
    Some(
        rows[rows.len().saturating_sub(last)..]
            .iter()
            .map(|r| match serde_json::from_str::<Obj<'_>>(r.get()) {
                Ok(o) => Value::Object(pick(&o, keys).into_iter().collect()),
                Err(_) => value_of(r).unwrap_or(Value::Null),
            })
            .collect(),
    )
}

fn last_rows(rows: &[Value], n: usize) -> Vec<Value> {
    rows[rows.len().saturating_sub(n)..].to_vec()
}

fn select_object(tool: &str, o: &Obj<'_>) -> Kept {
    let rows_of = |key: &str, keys: &[&str], last: usize| {
        o.get(key).and_then(|raw| pick_rows(raw, keys, last))
    };
    match tool {
        "analyze_stock" => {
            if let Some(rows) = rows_of("data", PRICE_ROW_FIELDS, LAST_ROWS) {
                let mut f = pick(o, PRICE_FIELDS);
                f.push(("data".into(), Value::Array(rows)));
                Kept::Fields(f)
            } else {
                Kept::Fields(pick(o, ANALYZE_FIELDS))
            }
        }
        "portfolio" => {
            if let Some(rows) = rows_of("diagnostics", DIAG_ROW_FIELDS, usize::MAX) {
                let mut f = pick(o, PORTFOLIO_DIAG_FIELDS);
                f.push(("diagnostics".into(), Value::Array(rows)));
                Kept::Fields(f)
            } else {
                let mut f = pick(o, PORTFOLIO_FIELDS);
                if let Some(rows) = rows_of("positions", POSITION_ROW_FIELDS, usize::MAX) {
                    // positions before the message: they are the point of the result
                    let at = f.len().min(4);
                    f.insert(at, ("positions".into(), Value::Array(rows)));
                }
                Kept::Fields(f)
            }
        }
        _ => Kept::Fields(pick(o, GENERIC_FIELDS)),
    }
}

/// The fields as one compact JSON object, written straight into one buffer (the same
/// text as each key and value's `to_string()` joined).
fn render(fields: &[(String, Value)]) -> String {
    let mut out = Vec::with_capacity(512);
    out.push(b'{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string or a `Value` into a Vec cannot fail.
        if serde_json::to_writer(&mut out, k).is_err() {
            out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
        }
        out.push(b':');
        if serde_json::to_writer(&mut out, v).is_err() {
            out.extend_from_slice(v.to_string().as_bytes());
        }
    }
    out.push(b'}');
    // serde_json writes UTF-8
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Shortens every string to `chars` and every array to its last `rows` items.
fn squeeze(v: &mut Value, chars: usize, rows: usize) {
    match v {
        Value::String(s) if s.chars().count() > chars => *s = truncate_chars(s, chars),
        Value::Array(a) => {
            let drop = a.len().saturating_sub(rows);
            a.drain(..drop);
            a.iter_mut().for_each(|x| squeeze(x, chars, rows));
        }
        Value::Object(o) => o.values_mut().for_each(|x| squeeze(x, chars, rows)),
        _ => {}
    }
}

/// Progressively tighter passes; the fields listed first survive longest.
fn fit_fields(mut fields: Fields, max_len: usize) -> String {
    let fits = |s: &String| s.chars().count() <= max_len;
    let s = render(&fields);
    if fits(&s) {
        return s;
    }
    for (chars, rows) in [(80, LAST_ROWS), (30, 2)] {
        fields.iter_mut().for_each(|(_, v)| squeeze(v, chars, rows));
        let s = render(&fields);
        if fits(&s) {
            return s;
        }
    }
    while fields.len() > 1 {
        fields.pop();
        let s = render(&fields);
        if fits(&s) {
            return s;
        }
    }
    json_text(&render(&fields), max_len)
}

fn fit_value(mut v: Value, max_len: usize) -> String {
    for (chars, rows) in [(usize::MAX, usize::MAX), (80, LAST_ROWS), (30, 2)] {
        squeeze(&mut v, chars, rows);
        let s = v.to_string();
        if s.chars().count() <= max_len {
            return s;
        }
    }
    json_text(&v.to_string(), max_len)
}

/// `text` as a JSON string of at most `max_len` characters (escapes included).
fn json_text(text: &str, max_len: usize) -> String {
    let mut budget = max_len.saturating_sub(2);
    loop {
        let s = Value::String(truncate_chars(text, budget)).to_string();
        let n = s.chars().count();
        if n <= max_len || budget == 0 {
            return s;
        }
        budget = budget.saturating_sub(n - max_len);
    }
}

/// At most `max` characters, cut on a character boundary, "…" marking a cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}
