//! The grounding check: every number, date and stock code of an answer traced to the
//! conversation's data. Pure: text and tool results in, a typed [`Grounding`] out.
//!
//! A claim is *sourced* when a tool result (or the user's own message) holds the same
//! value, allowing for rounding to the digits written (12.345 → 12.35), a ratio written
//! as a percent (0.0523 → 5.23%) and 万 / 亿 units (123,400,000 → 1.23亿); *derived* when
//! it is the difference, sum, ratio or change of two sourced numbers of the same answer;
//! *unsupported* otherwise. A six-digit code no input mentions is unsupported (invented).
//!
//! Left out on purpose, because they are labels rather than data: list numbering
//! (`1.`), ordinals (`第3`), indicator names (`MA20`, `T+1`), periods (`20日均线`),
//! times of day, bare years, and bare integers below 10.

use std::collections::HashMap;

use serde_json::Value;
use wyckoff_engine::Board;
use wyckoff_protocol::{
    Claim, ClaimKind, DerivedOp, Grounding, Message, Source, Support, UserOrigin,
};

/// One tool result the answer may quote.
#[derive(Debug, Clone, Copy)]
pub struct ToolInput<'a> {
    pub call_id: &'a str,
    pub tool: &'a str,
    pub result: &'a Value,
}

/// The data an answer may quote: tool results and the user's messages.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// (call id, tool name, result), oldest first.
    pub tools: Vec<(String, String, Value)>,
    pub user: Vec<String>,
    /// System notices (finished background tasks, decided approvals) as text.
    pub notices: Vec<String>,
}

impl Inputs {
    /// Every tool result and user message of a conversation. A tool message's content is
    /// read as JSON when it parses, else as text.
    pub fn from_messages(messages: &[Message]) -> Self {
        let mut inputs = Inputs::default();
        for m in messages {
            match m {
                Message::Tool {
                    tool_call_id,
                    name,
                    content,
                    is_error: false,
                } => {
                    let value = serde_json::from_str(content)
                        .unwrap_or_else(|_| Value::String(content.clone()));
                    inputs
                        .tools
                        .push((tool_call_id.clone(), name.clone(), value));
                }
                Message::User {
                    content,
                    origin: UserOrigin::User,
                } => inputs.user.push(content.clone()),
                Message::User {
                    content,
                    origin: UserOrigin::SystemNotification,
                } => inputs.notices.push(content.clone()),
                _ => {}
            }
        }
        inputs
    }

    /// Replaces a result of the same call (the full result the turn saw, where the
    /// conversation holds a condensed copy) or adds it.
    pub fn put_tool(&mut self, call_id: &str, tool: &str, result: Value) {
        match self.tools.iter_mut().find(|(id, _, _)| id == call_id) {
            Some(slot) => slot.2 = result,
            None => self
                .tools
                .push((call_id.to_owned(), tool.to_owned(), result)),
        }
    }

    pub fn check(&self, answer: &str) -> Grounding {
        let tools: Vec<ToolInput<'_>> = self
            .tools
            .iter()
            .map(|(call_id, tool, result)| ToolInput {
                call_id,
                tool,
                result,
            })
            .collect();
        let user: Vec<&str> = self.user.iter().map(String::as_str).collect();
        let notices: Vec<&str> = self.notices.iter().map(String::as_str).collect();
        check_with_notices(answer, &tools, &user, &notices)
    }
}

/// Grounds `answer` against `tools` and the user's messages `user`.
pub fn check(answer: &str, tools: &[ToolInput<'_>], user: &[&str]) -> Grounding {
    check_with_notices(answer, tools, user, &[])
}

/// [`check`] with the conversation's system notices as inputs too.
pub fn check_with_notices(
    answer: &str,
    tools: &[ToolInput<'_>],
    user: &[&str],
    notices: &[&str],
) -> Grounding {
    let claims = scan(answer);
    if claims.is_empty() {
        return Grounding::default();
    }
    let index = Index::build(tools, user, notices);
    let mut out: Vec<Claim> = Vec::with_capacity(claims.len());
    // The values of sourced numbers, for derived ones.
    let mut sourced: Vec<(f64, Source)> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    for raw in &claims {
        let support = match &raw.value {
            Value_::Code(code) => index.codes.get(code.as_str()).map(|&l| index.source(l)),
            Value_::Date(d) => index.dates.get(d).map(|&l| index.source(l)),
            Value_::MonthDay(md) => index.month_days.get(md).map(|&l| index.source(l)),
            Value_::Number(n) => index.find(n).map(|(l, v)| {
                sourced.push((v, index.source(l)));
                index.source(l)
            }),
        };
        let support = match support {
            Some(source) => Support::Sourced { source },
            None => {
                if matches!(raw.value, Value_::Number(_)) {
                    pending.push(out.len());
                }
                Support::Unsupported {}
            }
        };
        out.push(Claim {
            start: raw.start,
            end: raw.end,
            text: raw.text.clone(),
            kind: raw.kind,
            support,
        });
    }
    // Derived numbers: a simple operation on two numbers the answer sourced (or derived
    // before, as a worked calculation goes: per-share gain, then times the shares).
    // The user's own figures (a cost, a share count) are operands even when not quoted.
    for v in &index.user_values {
        if !sourced.iter().any(|(s, _)| s == v) {
            sourced.push((*v, Source::User {}));
        }
    }
    sourced.truncate(MAX_DERIVED_OPERANDS);
    for i in pending {
        if let Value_::Number(n) = &claims[i].value
            && let Some((op, a, b, value)) = derive(n, &sourced)
        {
            out[i].support = Support::Derived {
                op,
                a: a.clone(),
                b,
            };
            if sourced.len() < MAX_DERIVED_OPERANDS {
                sourced.push((value, a));
            }
        }
    }
    let mut g = Grounding {
        claims: out,
        ..Grounding::default()
    };
    for c in &g.claims {
        match c.support {
            Support::Sourced { .. } => g.sourced += 1,
            Support::Derived { .. } => g.derived += 1,
            Support::Unsupported {} => {
                g.unsupported += 1;
                if c.kind == ClaimKind::Code {
                    g.invented_codes += 1;
                }
            }
        }
    }
    g
}

/// The short system note of the one correction round: which figures have no source.
pub fn correction_prompt(g: &Grounding) -> String {
    let listed: Vec<String> = g
        .unsupported_claims()
        .filter(|c| matches!(c.kind, ClaimKind::Price | ClaimKind::Code))
        .map(|c| format!("「{}」", c.text))
        .collect();
    format!(
        "[系统核对] 你的回答中 {} 在本轮及此前的工具结果里找不到来源（价格或股票代码）。\
         请只使用工具返回的数值和代码重写回答：需要时先调用工具获取，无法获取的数字请删除或说明缺失，不要编造。",
        listed.join("、")
    )
}

/// Operands tried for derived numbers (pairs grow with the square).
const MAX_DERIVED_OPERANDS: usize = 40;

/// The first operation on two operands that gives `n`: its sources and exact value.
fn derive(n: &Num, sourced: &[(f64, Source)]) -> Option<(DerivedOp, Source, Source, f64)> {
    for (i, (a, sa)) in sourced.iter().enumerate() {
        for (j, (b, sb)) in sourced.iter().enumerate() {
            if i == j || *b == 0.0 {
                continue;
            }
            let tries = [
                (DerivedOp::Difference, a - b),
                (DerivedOp::Sum, a + b),
                (DerivedOp::Ratio, a / b),
                (DerivedOp::Change, (a - b) / b),
                (DerivedOp::Product, a * b),
            ];
            for (op, r) in tries {
                // The model may compute from the rounded figures: half a percent slack.
                if n.targets()
                    .any(|(t, tol)| (r.abs() - t).abs() <= tol.max(t * 0.005) + 1e-9)
                {
                    return Some((op, sa.clone(), sb.clone(), r.abs()));
                }
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------------------
// The answer's claims

#[derive(Debug, Clone, PartialEq)]
enum Value_ {
    Number(Num),
    /// yyyymmdd
    Date(u32),
    /// mmdd, for 「3月5日」 without a year.
    MonthDay(u32),
    Code(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    None,
    Percent,
    Wan,
    Yi,
    WanYi,
}

/// A number as written: its absolute value, the digits after the point and the unit.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Num {
    value: f64,
    decimals: u32,
    unit: Unit,
}

impl Num {
    /// The source values this number may stand for, each with its rounding tolerance.
    fn targets(&self) -> impl Iterator<Item = (f64, f64)> {
        let tol = 0.5 * 10f64.powi(-(self.decimals as i32)) * 1.0001;
        let v = self.value;
        let scales: &[f64] = match self.unit {
            Unit::None => &[1.0],
            // 5.23% is 0.0523 or a field already in percent.
            Unit::Percent => &[0.01, 1.0],
            // 万 of 元 / 股, or a field already in 万; a volume in 手 is 100 股.
            Unit::Wan => &[1e4, 1.0, 1e2],
            Unit::Yi => &[1e8, 1e4, 1.0, 1e6],
            Unit::WanYi => &[1e12, 1e8, 1e4],
        };
        scales.iter().map(move |s| (v * s, tol * s))
    }
}

#[derive(Debug, Clone)]
struct RawClaim {
    start: u32,
    end: u32,
    text: String,
    kind: ClaimKind,
    value: Value_,
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// ASCII or full-width digit, as the code rule reads them.
fn code_digit(c: char) -> Option<char> {
    match c {
        '0'..='9' => Some(c),
        '０'..='９' => char::from_u32(u32::from(c) - 0xFEE0),
        _ => None,
    }
}

const PRICE_WORDS: &[&str] = &[
    "价",
    "收盘",
    "开盘",
    "最高",
    "最低",
    "收于",
    "报",
    "支撑",
    "阻力",
    "压力",
    "止损",
    "止盈",
    "目标",
    "成本",
    "均线",
    "close",
    "price",
    "open",
    "high",
    "low",
    "support",
    "resistance",
    "stop",
    "target",
    "cost",
    "¥",
    "￥",
];

/// Every claim in `text`, in order.
fn scan(text: &str) -> Vec<RawClaim> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if code_digit(c).is_none() || (i > 0 && code_digit(chars[i - 1]).is_some()) {
            i += 1;
            continue;
        }
        let (claim, next) = claim_at(&chars, i);
        if let Some(claim) = claim {
            out.push(claim);
        }
        i = next.max(i + 1);
    }
    out
}

fn run_end(chars: &[char], from: usize, pred: impl Fn(char) -> bool) -> usize {
    let mut j = from;
    while j < chars.len() && pred(chars[j]) {
        j += 1;
    }
    j
}

fn digits_value(chars: &[char]) -> u32 {
    chars.iter().fold(0u32, |acc, c| {
        acc.saturating_mul(10).saturating_add(u32::from(*c) - 48)
    })
}

fn valid_date(y: u32, m: u32, d: u32) -> bool {
    (1990..=2100).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d)
}

/// A date starting at `i`: YYYY-MM-DD, YYYY/MM/DD, YYYY.MM.DD, YYYY年M月D日, YYYYMMDD;
/// returns the date and the index after it.
fn date_at(chars: &[char], i: usize) -> Option<(u32, usize)> {
    let y_end = run_end(chars, i, is_digit);
    let n = y_end - i;
    if n == 8 {
        let v = digits_value(&chars[i..y_end]);
        let (y, m, d) = (v / 10000, v / 100 % 100, v % 100);
        return valid_date(y, m, d).then_some((v, y_end));
    }
    if n != 4 {
        return None;
    }
    let y = digits_value(&chars[i..y_end]);
    let sep = *chars.get(y_end)?;
    let (sep2, end_mark) = match sep {
        '-' | '/' | '.' => (sep, None),
        '年' => ('月', Some('日')),
        _ => return None,
    };
    let m_start = y_end + 1;
    let m_end = run_end(chars, m_start, is_digit);
    if !(1..=2).contains(&(m_end - m_start)) || chars.get(m_end) != Some(&sep2) {
        return None;
    }
    let d_start = m_end + 1;
    let d_end = run_end(chars, d_start, is_digit);
    if !(1..=2).contains(&(d_end - d_start)) {
        return None;
    }
    let (m, d) = (
        digits_value(&chars[m_start..m_end]),
        digits_value(&chars[d_start..d_end]),
    );
    if !valid_date(y, m, d) {
        return None;
    }
    let mut end = d_end;
    match end_mark {
        Some(mark) if chars.get(end) == Some(&mark) => end += 1,
        Some(_) => {}
        // 2024-01-05.3 is not a date.
        None if chars.get(end) == Some(&'.')
            && chars.get(end + 1).is_some_and(|c| is_digit(*c)) =>
        {
            return None;
        }
        None => {}
    }
    Some((y * 10000 + m * 100 + d, end))
}

/// The claim starting at digit `i` (if it is one) and where scanning goes on.
fn claim_at(chars: &[char], i: usize) -> (Option<RawClaim>, usize) {
    let prev = i.checked_sub(1).map(|p| chars[p]);
    let prev2 = i.checked_sub(2).map(|p| chars[p]);
    let make = |start: usize, end: usize, kind, value| RawClaim {
        start: start as u32,
        end: end as u32,
        text: chars[start..end].iter().collect(),
        kind,
        value,
    };
    // A stock code: exactly six digits (ASCII or full-width), not inside a decimal.
    let code_end = run_end(chars, i, |c| code_digit(c).is_some());
    if code_end - i == 6 {
        let code: String = chars[i..code_end]
            .iter()
            .filter_map(|c| code_digit(*c))
            .collect();
        let decimal = (prev == Some('.') && prev2.is_some_and(is_digit))
            || (chars.get(code_end) == Some(&'.')
                && chars.get(code_end + 1).is_some_and(|c| is_digit(*c)));
        if !decimal && Board::of_stock(&code).is_some() {
            return (
                Some(make(i, code_end, ClaimKind::Code, Value_::Code(code))),
                code_end,
            );
        }
    }
    if !is_digit(chars[i]) {
        return (None, code_end);
    }
    if let Some((d, end)) = date_at(chars, i) {
        return (Some(make(i, end, ClaimKind::Date, Value_::Date(d))), end);
    }
    // Labels, not data: MA20, T+1, v2, 第3, a decimal's tail.
    let labelled = prev.is_some_and(|p| p.is_ascii_alphabetic() || p == '_' || p == '第')
        || (matches!(prev, Some('+' | '-')) && prev2.is_some_and(|p| p.is_ascii_alphabetic()))
        || (prev == Some('.') && prev2.is_some_and(is_digit));
    // The integer part, with thousands separators.
    let mut j = run_end(chars, i, is_digit);
    let mut digits: String = chars[i..j].iter().collect();
    while chars.get(j) == Some(&',') && run_end(chars, j + 1, is_digit) == j + 4 {
        digits.extend(&chars[j + 1..j + 4]);
        j += 4;
    }
    let int_end = j;
    let mut decimals = 0u32;
    if chars.get(j) == Some(&'.') && chars.get(j + 1).is_some_and(|c| is_digit(*c)) {
        let frac_end = run_end(chars, j + 1, is_digit);
        decimals = (frac_end - j - 1) as u32;
        digits.push('.');
        digits.extend(&chars[j + 1..frac_end]);
        j = frac_end;
    }
    if labelled {
        return (None, j);
    }
    let next = chars.get(j).copied();
    // A month and day: 3月5日.
    if decimals == 0 && next == Some('月') && int_end - i <= 2 {
        let d_start = j + 1;
        let d_end = run_end(chars, d_start, is_digit);
        if (1..=2).contains(&(d_end - d_start)) && chars.get(d_end) == Some(&'日') {
            let (m, d) = (
                digits_value(&chars[i..int_end]),
                digits_value(&chars[d_start..d_end]),
            );
            if valid_date(2000, m, d) {
                return (
                    Some(make(
                        i,
                        d_end + 1,
                        ClaimKind::Date,
                        Value_::MonthDay(m * 100 + d),
                    )),
                    d_end + 1,
                );
            }
        }
        return (None, j);
    }
    // List numbering: a line's first number followed by `.`, `)` or `、`.
    let line_start = chars[..i]
        .iter()
        .rev()
        .take_while(|c| **c != '\n')
        .all(|c| c.is_whitespace() || *c == '#' || *c == '(' || *c == '（');
    if decimals == 0 && line_start && matches!(next, Some('.' | ')' | '）' | '、')) {
        return (None, j + 1);
    }
    // Times of day, ratios written 1:2, periods (20日, 5周), bare years.
    if matches!(next, Some(':' | '：')) && chars.get(j + 1).is_some_and(|c| is_digit(*c)) {
        return (None, run_end(chars, j + 1, |c| is_digit(c) || c == ':'));
    }
    if decimals == 0 && matches!(next, Some('日' | '周' | '年' | '月' | '分' | '秒')) {
        return (None, j + 1);
    }
    let Ok(value) = digits.parse::<f64>() else {
        return (None, j);
    };
    // The unit, after at most one space.
    let after_space = if next == Some(' ') { j + 1 } else { j };
    let at = |k: usize| chars.get(after_space + k).copied();
    let (unit, unit_len) = match (at(0), at(1)) {
        (Some('%' | '％'), _) => (Unit::Percent, 1),
        (Some('万'), Some('亿')) => (Unit::WanYi, 2),
        (Some('万'), _) => (Unit::Wan, 1),
        (Some('亿'), _) => (Unit::Yi, 1),
        _ => (Unit::None, 0),
    };
    let mut end = if unit_len > 0 {
        after_space + unit_len
    } else {
        j
    };
    // 元 right after the number, or after one space.
    let yuan = unit == Unit::None && matches!(at(0), Some('元' | '块'));
    if yuan {
        end = after_space + 1;
    }
    let word_after: String = chars[end..(end + 2).min(chars.len())].iter().collect();
    let before: String = chars[i.saturating_sub(8)..i]
        .iter()
        .collect::<String>()
        .to_lowercase();
    let counted = word_after.trim_start().starts_with([
        '手', '股', '只', '次', '个', '笔', '天', '家', '条', '根', '倍',
    ]);
    let kind = match unit {
        Unit::Percent => ClaimKind::Percent,
        Unit::Wan | Unit::Yi | Unit::WanYi => ClaimKind::Amount,
        Unit::None if yuan || PRICE_WORDS.iter().any(|w| before.contains(w)) => ClaimKind::Price,
        Unit::None if counted => ClaimKind::Count,
        Unit::None => ClaimKind::Number,
    };
    // Bare small integers are too often labels (steps, counts of reasons) to judge.
    if unit == Unit::None && decimals == 0 && value < 10.0 && kind != ClaimKind::Price {
        return (None, end);
    }
    let num = Num {
        value,
        decimals,
        unit,
    };
    (Some(make(i, end, kind, Value_::Number(num))), end)
}

// ---------------------------------------------------------------------------------------
// The inputs' values

struct Leaf {
    /// Index into `Index::origins` (newest tool result first).
    origin: usize,
    path: String,
    /// A number inside text (a summary, a notice) rather than a field of its own: a
    /// field is preferred when both hold the value.
    in_text: bool,
}

enum Origin {
    Tool(String, String),
    User,
    Notice,
}

struct Index {
    origins: Vec<Origin>,
    leaves: Vec<Leaf>,
    /// (absolute value, leaf), sorted by value.
    numbers: Vec<(f64, usize)>,
    dates: HashMap<u32, usize>,
    month_days: HashMap<u32, usize>,
    codes: HashMap<String, usize>,
    /// The numbers of the user's messages, as written.
    user_values: Vec<f64>,
}

impl Index {
    fn build(tools: &[ToolInput<'_>], user: &[&str], notices: &[&str]) -> Self {
        let mut ix = Index {
            origins: Vec::with_capacity(tools.len() + 1),
            leaves: Vec::new(),
            numbers: Vec::new(),
            dates: HashMap::new(),
            month_days: HashMap::new(),
            codes: HashMap::new(),
            user_values: Vec::new(),
        };
        // Newest first: a value in several results is credited to the latest one.
        for t in tools.iter().rev() {
            ix.origins
                .push(Origin::Tool(t.call_id.to_owned(), t.tool.to_owned()));
            let origin = ix.origins.len() - 1;
            let mut path = String::new();
            ix.walk(origin, t.result, &mut path);
        }
        for (origin, texts) in [(Origin::Notice, notices), (Origin::User, user)] {
            ix.origins.push(origin);
            let origin = ix.origins.len() - 1;
            for text in texts {
                ix.text_leaf(origin, String::new(), text);
            }
        }
        // Stable: equal values keep the newest source first.
        ix.numbers.sort_by(|a, b| a.0.total_cmp(&b.0));
        ix
    }

    fn source(&self, leaf: usize) -> Source {
        let l = &self.leaves[leaf];
        match &self.origins[l.origin] {
            Origin::Tool(call_id, tool) => Source::Tool {
                call_id: call_id.clone(),
                tool: tool.clone(),
                path: l.path.clone(),
            },
            Origin::User => Source::User {},
            Origin::Notice => Source::Notice {},
        }
    }

    fn leaf(&mut self, origin: usize, path: &str, in_text: bool) -> usize {
        self.leaves.push(Leaf {
            origin,
            path: path.to_owned(),
            in_text,
        });
        self.leaves.len() - 1
    }

    fn walk(&mut self, origin: usize, v: &Value, path: &mut String) {
        match v {
            Value::Number(n) => {
                if let Some(f) = n.as_f64() {
                    let l = self.leaf(origin, path, false);
                    self.numbers.push((f.abs(), l));
                    // A date written as a number (20240105).
                    if let Some(d) = n.as_u64().and_then(|u| u32::try_from(u).ok())
                        && (19_900_101..=21_001_231).contains(&d)
                        && valid_date(d / 10000, d / 100 % 100, d % 100)
                    {
                        self.dates.entry(d).or_insert(l);
                        self.month_days.entry(d % 10000).or_insert(l);
                    }
                }
            }
            Value::String(s) => {
                let owned = path.clone();
                self.text_leaf(origin, owned, s);
            }
            Value::Array(items) => {
                let base = path.len();
                for (k, item) in items.iter().enumerate() {
                    use std::fmt::Write;
                    let _ = write!(path, "[{k}]");
                    self.walk(origin, item, path);
                    path.truncate(base);
                }
                // A count of items is a number the answer may state.
                let l = self.leaf(origin, &format!("{path}.length"), false);
                self.numbers.push((items.len() as f64, l));
            }
            Value::Object(map) => {
                let base = path.len();
                for (k, item) in map {
                    if base > 0 {
                        path.push('.');
                    }
                    path.push_str(k);
                    self.walk(origin, item, path);
                    path.truncate(base);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    /// The numbers, dates and codes written inside a string.
    fn text_leaf(&mut self, origin: usize, path: String, s: &str) {
        if !s.bytes().any(|b| b.is_ascii_digit())
            && !s.contains(['０', '１', '２', '３', '４', '５', '６', '７', '８', '９'])
        {
            return;
        }
        let claims = scan(s);
        if claims.is_empty() {
            // Small numbers the answer scanner leaves out may still be quoted as prices.
            if let Ok(f) = s.trim().parse::<f64>() {
                let l = self.leaf(origin, &path, false);
                self.numbers.push((f.abs(), l));
            }
            return;
        }
        let l = self.leaf(origin, &path, true);
        for c in claims {
            match c.value {
                Value_::Number(n) => {
                    if matches!(self.origins[origin], Origin::User) {
                        self.user_values.push(n.value);
                    }
                    // The value as written, and in base units when it had one.
                    self.numbers.push((n.value, l));
                    let scale = match n.unit {
                        Unit::Percent => 0.01,
                        Unit::Wan => 1e4,
                        Unit::Yi => 1e8,
                        Unit::WanYi => 1e12,
                        Unit::None => 1.0,
                    };
                    if n.unit != Unit::None {
                        self.numbers.push((n.value * scale, l));
                    }
                }
                Value_::Date(d) => {
                    self.dates.entry(d).or_insert(l);
                    self.month_days.entry(d % 10000).or_insert(l);
                }
                Value_::MonthDay(md) => {
                    self.month_days.entry(md).or_insert(l);
                }
                Value_::Code(code) => {
                    self.codes.entry(code).or_insert(l);
                }
            }
        }
        // Small integers are numbers in the inputs even when the answer scanner skips them.
        for part in s.split(|c: char| !c.is_ascii_digit() && c != '.') {
            if part.len() == 1
                && let Ok(f) = part.parse::<f64>()
            {
                self.numbers.push((f, l));
            }
        }
    }

    /// The closest input value within the number's tolerance: (leaf, value). Among
    /// equally close ones, a field beats a number inside text, then the newest result.
    fn find(&self, n: &Num) -> Option<(usize, f64)> {
        let mut best: Option<((f64, bool, usize), usize, f64)> = None;
        for (target, tol) in n.targets() {
            let lo = target - tol - 1e-9;
            let hi = target + tol + 1e-9;
            let from = self.numbers.partition_point(|(v, _)| *v < lo);
            for &(v, leaf) in self.numbers[from..].iter().take_while(|(v, _)| *v <= hi) {
                let l = &self.leaves[leaf];
                let key = (
                    (v - target).abs() / tol.max(f64::MIN_POSITIVE),
                    l.in_text,
                    l.origin,
                );
                if best
                    .is_none_or(|(k, _, _)| key.partial_cmp(&k) == Some(std::cmp::Ordering::Less))
                {
                    best = Some((key, leaf, v));
                }
            }
        }
        best.map(|(_, leaf, v)| (leaf, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(g: &Grounding) -> Vec<(String, ClaimKind, &'static str)> {
        g.claims
            .iter()
            .map(|c| {
                let class = match c.support {
                    Support::Sourced { .. } => "sourced",
                    Support::Derived { .. } => "derived",
                    Support::Unsupported {} => "unsupported",
                };
                (c.text.clone(), c.kind, class)
            })
            .collect()
    }

    fn tool<'a>(id: &'a str, v: &'a Value) -> ToolInput<'a> {
        ToolInput {
            call_id: id,
            tool: "analyze_stock",
            result: v,
        }
    }

    #[test]
    fn extracts_numbers_dates_and_codes_with_spans() {
        let cases: &[(&str, &[(&str, ClaimKind)])] = &[
            ("收盘价 12.35 元", &[("12.35 元", ClaimKind::Price)]),
            (
                "涨幅 5.23%，成交额 1.23亿",
                &[("5.23%", ClaimKind::Percent), ("1.23亿", ClaimKind::Amount)],
            ),
            (
                "成交量 123,400,000 股",
                &[("123,400,000", ClaimKind::Count)],
            ),
            (
                "600519.SH 在 2024-01-05 放量",
                &[("600519", ClaimKind::Code), ("2024-01-05", ClaimKind::Date)],
            ),
            (
                "2024年1月5日 与 3月8日",
                &[
                    ("2024年1月5日", ClaimKind::Date),
                    ("3月8日", ClaimKind::Date),
                ],
            ),
            (
                "20240105 收于 9.80",
                &[("20240105", ClaimKind::Date), ("9.80", ClaimKind::Price)],
            ),
            ("MA20 上方，T+1 规则，第3次，20日均线，14:30 时", &[]),
            ("1. 健康\n2. 阶段 Accum_C\n  3) 共 5 个信号", &[]),
            ("共 12 只股票", &[("12", ClaimKind::Count)]),
            (
                "510300 是 ETF，123456 不是代码",
                &[("510300", ClaimKind::Number), ("123456", ClaimKind::Number)],
            ),
            (
                "close 10.5 and 1.600519",
                &[("10.5", ClaimKind::Price), ("1.600519", ClaimKind::Number)],
            ),
            ("2.5万手", &[("2.5万", ClaimKind::Amount)]),
            ("市值 1.2万亿", &[("1.2万亿", ClaimKind::Amount)]),
        ];
        for (text, want) in cases {
            let got: Vec<(String, ClaimKind)> =
                scan(text).into_iter().map(|c| (c.text, c.kind)).collect();
            let want: Vec<(String, ClaimKind)> =
                want.iter().map(|(t, k)| ((*t).to_owned(), *k)).collect();
            assert_eq!(got, want, "text: {text}");
        }
        // Spans count characters: the Chinese before the number is one each.
        let c = &scan("收盘价 12.35")[0];
        assert_eq!((c.start, c.end), (4, 9));
        let chars: Vec<char> = "收盘价 12.35".chars().collect();
        assert_eq!(
            chars[c.start as usize..c.end as usize]
                .iter()
                .collect::<String>(),
            "12.35"
        );
    }

    #[test]
    fn classifies_with_rounding_and_unit_tolerance() {
        let result = json!({
            "code": "600519", "name": "贵州茅台", "latest_date": "2024-01-05",
            "close": 12.345, "pct_chg": 0.0523, "amount": 123_400_000.0,
            "volume": 25_000, "ma": {"ma20": 11.8},
            "signals": [{"date": "2023-12-28", "kind": "SOS"}, {"date": "2024-01-03", "kind": "LPS"}],
            "formatted_text": "换手率 3.4%，量比 2.3"
        });
        let tools = [tool("call_1", &result)];
        type Want<'a> = &'a [(&'a str, ClaimKind, &'a str)];
        let cases: &[(&str, Want<'_>)] = &[
            (
                "收盘 12.35 元",
                &[("12.35 元", ClaimKind::Price, "sourced")],
            ),
            ("收盘 12.3", &[("12.3", ClaimKind::Price, "sourced")]),
            ("收盘 12.36", &[("12.36", ClaimKind::Price, "unsupported")]),
            ("收盘 36 元", &[("36 元", ClaimKind::Price, "unsupported")]),
            ("涨 5.23%", &[("5.23%", ClaimKind::Percent, "sourced")]),
            ("涨 5.2%", &[("5.2%", ClaimKind::Percent, "sourced")]),
            ("成交额 1.23亿", &[("1.23亿", ClaimKind::Amount, "sourced")]),
            (
                "成交额 12340万",
                &[("12340万", ClaimKind::Amount, "sourced")],
            ),
            ("成交 2.5万手", &[("2.5万", ClaimKind::Amount, "sourced")]),
            ("换手率 3.4%", &[("3.4%", ClaimKind::Percent, "sourced")]),
            (
                "600519 在 2024-01-05",
                &[
                    ("600519", ClaimKind::Code, "sourced"),
                    ("2024-01-05", ClaimKind::Date, "sourced"),
                ],
            ),
            (
                "LPS 出现在 1月3日",
                &[("1月3日", ClaimKind::Date, "sourced")],
            ),
            ("000858 更强", &[("000858", ClaimKind::Code, "unsupported")]),
            (
                "2024-02-01 放量",
                &[("2024-02-01", ClaimKind::Date, "unsupported")],
            ),
            // 12.345 − 11.8 = 0.545: derived from two sourced numbers.
            (
                "收盘 12.35 高于 MA20 的 11.8 约 0.55 元",
                &[
                    ("12.35", ClaimKind::Price, "sourced"),
                    ("11.8", ClaimKind::Number, "sourced"),
                    ("0.55 元", ClaimKind::Price, "derived"),
                ],
            ),
            // (12.345 − 11.8) / 11.8 = 4.6%
            (
                "收盘 12.35 高出 11.8 的 4.6%",
                &[
                    ("12.35", ClaimKind::Price, "sourced"),
                    ("11.8", ClaimKind::Number, "sourced"),
                    ("4.6%", ClaimKind::Percent, "derived"),
                ],
            ),
            ("信号 2 个，共 2 条", &[]),
        ];
        for (answer, want) in cases {
            let g = check(answer, &tools, &[]);
            let want: Vec<(String, ClaimKind, &str)> = want
                .iter()
                .map(|(t, k, c)| ((*t).to_owned(), *k, *c))
                .collect();
            assert_eq!(kinds(&g), want, "answer: {answer}");
        }
    }

    #[test]
    fn a_worked_calculation_is_derived_step_by_step() {
        let result = json!({"latest_close": 12.89});
        let g = check(
            "收盘 12.89 元，每股盈利 2.89 元，共 1000 股，浮动盈亏 2890 元，收益率 28.9%。",
            &[tool("c1", &result)],
            &["我以 10.0 元买入 1000 股"],
        );
        assert_eq!(
            kinds(&g)
                .into_iter()
                .map(|(t, _, c)| (t, c))
                .collect::<Vec<_>>(),
            [
                ("12.89 元".to_owned(), "sourced"),
                ("2.89 元".to_owned(), "derived"),
                ("1000".to_owned(), "sourced"),
                ("2890 元".to_owned(), "derived"),
                ("28.9%".to_owned(), "derived"),
            ]
        );
        assert!(matches!(
            g.claims[3].support,
            Support::Derived {
                op: DerivedOp::Product,
                ..
            }
        ));
        assert!(!g.needs_correction());
    }

    #[test]
    fn a_field_beats_the_same_number_in_text() {
        let result = json!({"a_text": "收盘 10.71 元", "latest_close": 10.71});
        let g = check("收盘 10.71", &[tool("c1", &result)], &[]);
        assert!(matches!(
            &g.claims[0].support,
            Support::Sourced { source: Source::Tool { path, .. } } if path == "latest_close"
        ));
    }

    #[test]
    fn sources_name_the_call_and_field() {
        let older = json!({"data": [{"date": "2024-01-04", "close": 9.8}]});
        let newer = json!({"code": "000001", "latest_close": 9.8, "name": "平安银行"});
        let g = check(
            "000001 收于 9.80，前一日 2024-01-04",
            &[tool("c_old", &older), tool("c_new", &newer)],
            &[],
        );
        let sources: Vec<Source> = g
            .claims
            .iter()
            .map(|c| match &c.support {
                Support::Sourced { source } => source.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        let t = |id: &str, path: &str| Source::Tool {
            call_id: id.into(),
            tool: "analyze_stock".into(),
            path: path.into(),
        };
        assert_eq!(
            sources,
            [
                t("c_new", "code"),
                t("c_new", "latest_close"),
                t("c_old", "data[0].date")
            ]
        );
        assert_eq!(
            (g.sourced, g.derived, g.unsupported, g.invented_codes),
            (3, 0, 0, 0)
        );
    }

    #[test]
    fn the_users_words_count_and_invented_codes_are_counted() {
        let result = json!({"holdings": [{"code": "600519", "shares": 300}]});
        let g = check(
            "你 1500 元买入的 600519 共 300 股；建议换成 601318",
            &[tool("c1", &result)],
            &["我以 1500 元买了 600519"],
        );
        assert_eq!(
            kinds(&g),
            [
                ("1500 元".to_owned(), ClaimKind::Price, "sourced"),
                ("600519".to_owned(), ClaimKind::Code, "sourced"),
                ("300".to_owned(), ClaimKind::Count, "sourced"),
                ("601318".to_owned(), ClaimKind::Code, "unsupported"),
            ]
        );
        assert!(matches!(
            g.claims[0].support,
            Support::Sourced {
                source: Source::User {}
            }
        ));
        assert_eq!((g.sourced, g.unsupported, g.invented_codes), (3, 1, 1));
        assert!(g.needs_correction());
        assert!(correction_prompt(&g).contains("「601318」"));
    }

    #[test]
    fn inputs_from_messages_read_tool_json_and_text_and_the_users_words() {
        let messages = vec![
            Message::user("看看 000001"),
            Message::Tool {
                tool_call_id: "c1".into(),
                name: "get_stock_price".into(),
                content: r#"{"close": 10.5}"#.into(),
                is_error: false,
            },
            Message::Tool {
                tool_call_id: "c2".into(),
                name: "web_fetch".into(),
                content: "收盘 11.2 元".into(),
                is_error: false,
            },
            Message::Tool {
                tool_call_id: "c3".into(),
                name: "x".into(),
                content: "错误 99.9".into(),
                is_error: true,
            },
        ];
        let mut inputs = Inputs::from_messages(&messages);
        assert_eq!(inputs.tools.len(), 2);
        let g = inputs.check("000001 收盘 10.5，另见 11.2 元，99.9 元");
        assert_eq!(
            kinds(&g).into_iter().map(|k| k.2).collect::<Vec<_>>(),
            ["sourced", "sourced", "sourced", "unsupported"]
        );
        inputs.put_tool(
            "c1",
            "get_stock_price",
            json!({"close": 10.5, "high": 10.9}),
        );
        assert_eq!(inputs.tools.len(), 2);
        assert_eq!(inputs.check("最高 10.9").sourced, 1);
    }

    #[test]
    fn an_answer_without_numbers_is_empty() {
        let g = check("趋势偏弱，暂不介入。", &[], &[]);
        assert_eq!(g, Grounding::default());
        assert!(!g.needs_correction());
    }
}
