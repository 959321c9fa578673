//! `annotate_chart`: the agent draws on a stock's chart — a trading-range
//! box, a support/resistance line or a text note on a bar — lists the notes there, or
//! removes its own. It changes only notes, so it runs without approval and alongside
//! other calls; every note carries the conversation it came from.

use serde_json::{Value, json};
use wyckoff_agent::ToolError;
use wyckoff_annotations::{AnnotationError, AnnotationStore, Author, NotePeriod, Remover, Shape};
use wyckoff_market::MarketData;
use wyckoff_time::iso;

use crate::common::{opt_f64, opt_i64, opt_str};

pub const NAME: &str = "annotate_chart";
pub const DISPLAY_NAME: &str = "图表标注";
pub const DESCRIPTION: &str = "在个股 K 线图上标注，用户在个股页看到（标明由 Agent 在本对话中所画及时间）。\
action=add（默认）按 kind 画：box 交易区间框（from、to 日期，low、high 价格），line 支撑/阻力线（price，可选 from、to），\
text 某根 K 线上的文字（date、text，最多 200 字）。action=list 列出该股票图上的标注；action=remove 按 id 删除 Agent 画的标注（用户画的不能删）。\
日期 YYYY-MM-DD，价格为元；只画由工具数据得出的价位，不要编造。";

pub fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "6 位 A 股代码，如 000001"},
            "action": {"type": "string", "enum": ["add", "list", "remove"], "description": "默认 add"},
            "kind": {"type": "string", "enum": ["box", "line", "text"], "description": "action=add 时必填"},
            "period": {"type": "string", "enum": ["day", "week", "month"], "description": "哪张图，默认 day（日线）"},
            "from": {"type": "string", "description": "box 必填、line 可选：起始日期 YYYY-MM-DD"},
            "to": {"type": "string", "description": "box 必填、line 可选：结束日期 YYYY-MM-DD"},
            "low": {"type": "number", "description": "box：区间下沿价格"},
            "high": {"type": "number", "description": "box：区间上沿价格"},
            "price": {"type": "number", "description": "line：支撑/阻力价格"},
            "date": {"type": "string", "description": "text：K 线日期 YYYY-MM-DD"},
            "text": {"type": "string", "description": "text：标注文字"},
            "id": {"type": "integer", "description": "action=remove：标注 id"}
        },
        "required": ["code"],
        "additionalProperties": false
    })
}

fn bad(message: impl Into<String>) -> ToolError {
    ToolError::InvalidArgs(message.into())
}

fn store_err(e: AnnotationError) -> ToolError {
    match e {
        AnnotationError::Db(_) | AnnotationError::Migrate(_) => ToolError::Failed(e.to_string()),
        other => ToolError::InvalidArgs(other.to_string()),
    }
}

/// A date argument as `YYYYMMDD`: absent is `None`, a string that is not a calendar day
/// is an error naming the field.
fn date_arg(args: &Value, key: &'static str) -> Result<Option<u32>, ToolError> {
    match opt_str(args, key) {
        None => Ok(None),
        Some(s) => wyckoff_market::date::parse_date(s)
            .map(Some)
            .ok_or_else(|| bad(format!("{key} {s} is not a calendar day (YYYY-MM-DD)"))),
    }
}

fn need<T>(v: Option<T>, kind: &str, key: &str) -> Result<T, ToolError> {
    v.ok_or_else(|| bad(format!("kind={kind} needs {key}")))
}

/// The shape the arguments describe (not yet validated as a whole).
pub fn shape_of(args: &Value) -> Result<Shape, ToolError> {
    let kind =
        opt_str(args, "kind").ok_or_else(|| bad("action=add needs kind: box, line or text"))?;
    Ok(match kind {
        "box" => Shape::Box {
            from: need(date_arg(args, "from")?, kind, "from")?,
            to: need(date_arg(args, "to")?, kind, "to")?,
            low: need(opt_f64(args, "low"), kind, "low")?,
            high: need(opt_f64(args, "high"), kind, "high")?,
        },
        "line" => Shape::Line {
            price: need(opt_f64(args, "price"), kind, "price")?,
            from: date_arg(args, "from")?,
            to: date_arg(args, "to")?,
        },
        "text" => Shape::Text {
            date: need(date_arg(args, "date")?, kind, "date")?,
            text: need(opt_str(args, "text").map(str::to_owned), kind, "text")?,
        },
        other => return Err(bad(format!("unknown kind {other}: box, line or text"))),
    })
}

/// A note as the model reads it (dates as YYYY-MM-DD).
pub fn describe(a: &wyckoff_annotations::Annotation) -> Value {
    let shape = match &a.shape {
        Shape::Box {
            from,
            to,
            low,
            high,
        } => json!({"kind": "box", "from": iso(*from), "to": iso(*to), "low": low, "high": high}),
        Shape::Line { price, from, to } => {
            json!({"kind": "line", "price": price, "from": from.map(iso), "to": to.map(iso)})
        }
        Shape::Text { date, text } => json!({"kind": "text", "date": iso(*date), "text": text}),
    };
    let author = match &a.author {
        Author::User => json!("user"),
        Author::Agent { conversation } => json!(format!("agent ({conversation})")),
    };
    json!({
        "id": a.id,
        "code": a.code,
        "period": a.period.as_str(),
        "shape": shape,
        "author": author,
        "created_at": a.created_at,
    })
}

/// Runs one call for conversation `conversation`.
pub async fn run(md: &MarketData, args: &Value, conversation: &str) -> Result<Value, ToolError> {
    let code = opt_str(args, "code").ok_or_else(|| bad("code is required"))?;
    let period = match opt_str(args, "period") {
        None => NotePeriod::Day,
        Some(p) => NotePeriod::parse(p)
            .ok_or_else(|| bad(format!("unknown period {p}: day, week or month")))?,
    };
    let store = AnnotationStore::new(md.pool().clone())
        .await
        .map_err(store_err)?;
    match opt_str(args, "action").unwrap_or("add") {
        "add" => {
            let shape = shape_of(args)?;
            let note = store
                .add(
                    md,
                    code,
                    period,
                    &shape,
                    Author::Agent {
                        conversation: conversation.to_owned(),
                    },
                    md.clock().now(),
                )
                .await
                .map_err(store_err)?;
            Ok(json!({"added": describe(&note), "message": "已画在个股页的图上，用户可删除"}))
        }
        "list" => {
            let code = wyckoff_annotations::known_code(md, code).map_err(store_err)?;
            let notes = store.list(&code, period).await.map_err(store_err)?;
            Ok(json!({
                "code": code,
                "period": period.as_str(),
                "count": notes.len(),
                "notes": notes.iter().map(describe).collect::<Vec<_>>(),
            }))
        }
        "remove" => {
            let id = opt_i64(args, "id").ok_or_else(|| bad("action=remove needs id"))?;
            let code = wyckoff_annotations::known_code(md, code).map_err(store_err)?;
            let note = store
                .list(&code, period)
                .await
                .map_err(store_err)?
                .into_iter()
                .find(|n| i64::from(n.id) == id)
                .ok_or_else(|| {
                    bad(format!(
                        "no chart note {id} on {code}'s {} chart",
                        period.as_str()
                    ))
                })?;
            let gone = store
                .remove(i64::from(note.id), Remover::Agent)
                .await
                .map_err(store_err)?;
            Ok(json!({"removed": describe(&gone)}))
        }
        other => Err(bad(format!("unknown action {other}: add, list or remove"))),
    }
}
