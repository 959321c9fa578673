//! Chart notes: a trading-range box, a support/resistance line or a text
//! note on a bar, drawn on one stock's chart of one period by the agent (`annotate_chart`,
//! with the conversation it came from) or by the user, kept in `wyckoff.db`.
//!
//! Every shape is checked before anything is stored ([`validate`]): real calendar days,
//! `from` not after `to`, `low` not above `high`, positive finite prices, a text that says
//! something. The agent may remove only the agent's notes; the user may remove any.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sqlx::sqlite::SqlitePool;
use wyckoff_market::{MarketData, StockCode};
use wyckoff_time::iso;

/// The longest text note, in characters.
pub const MAX_TEXT_CHARS: usize = 200;
/// Notes one stock's chart of one period may hold: enough for any reading, and a loop in
/// the agent cannot bury the chart.
pub const MAX_PER_CHART: usize = 100;

#[derive(Debug, thiserror::Error)]
pub enum AnnotationError {
    #[error("{0}")]
    BadCode(String),
    #[error("unknown stock code {0}: not in the stock list")]
    UnknownCode(String),
    #[error("{field} {value} is not a calendar day (YYYY-MM-DD)")]
    BadDate { field: &'static str, value: String },
    #[error("from {from} is after to {to}")]
    BadRange { from: String, to: String },
    #[error("low {low} is above high {high}")]
    LowAboveHigh { low: f64, high: f64 },
    #[error("{field} must be a positive price, not {value}")]
    BadPrice { field: &'static str, value: f64 },
    #[error("a text note needs some text")]
    EmptyText,
    #[error("a text note is at most {MAX_TEXT_CHARS} characters, this one has {0}")]
    TextTooLong(usize),
    #[error("{code} already has {MAX_PER_CHART} notes on this chart: remove some first")]
    TooMany { code: String },
    #[error("no chart note {0}")]
    NotFound(i64),
    #[error("chart note {0} was drawn by the user: only the user removes it")]
    NotYours(i64),
    #[error("{0}")]
    BadArgs(String),
    #[error("chart notes store: {0}")]
    Db(#[from] sqlx::Error),
    #[error("chart notes migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

/// The chart a note belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum NotePeriod {
    Day,
    Week,
    Month,
}

impl NotePeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            NotePeriod::Day => "day",
            NotePeriod::Week => "week",
            NotePeriod::Month => "month",
        }
    }

    pub fn parse(s: &str) -> Option<NotePeriod> {
        match s {
            "day" | "daily" => Some(NotePeriod::Day),
            "week" | "weekly" => Some(NotePeriod::Week),
            "month" | "monthly" => Some(NotePeriod::Month),
            _ => None,
        }
    }
}

/// What is drawn. Dates are `YYYYMMDD` (the chart's own), prices in yuan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A trading range: the bars from `from` to `to` between `low` and `high`.
    Box {
        from: u32,
        to: u32,
        low: f64,
        high: f64,
    },
    /// Support or resistance at `price`, over [from, to] when given (else the whole chart).
    Line {
        price: f64,
        from: Option<u32>,
        to: Option<u32>,
    },
    /// A few words on one bar.
    Text { date: u32, text: String },
}

/// Who drew a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Author {
    User,
    /// The agent, in this conversation (a sub-agent's calls carry its parent's).
    Agent {
        conversation: String,
    },
}

/// A stored note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Annotation {
    pub id: i32,
    /// Six digits.
    pub code: String,
    pub period: NotePeriod,
    pub shape: Shape,
    pub author: Author,
    /// RFC 3339 UTC.
    pub created_at: String,
}

fn day(field: &'static str, d: u32) -> Result<u32, AnnotationError> {
    NaiveDate::from_ymd_opt(
        i32::try_from(d / 10_000).unwrap_or(0),
        (d / 100) % 100,
        d % 100,
    )
    .filter(|_| (19_900_101..=21_001_231).contains(&d))
    .map(|_| d)
    .ok_or_else(|| AnnotationError::BadDate {
        field,
        value: d.to_string(),
    })
}

fn price(field: &'static str, p: f64) -> Result<f64, AnnotationError> {
    if p.is_finite() && p > 0.0 {
        Ok(p)
    } else {
        Err(AnnotationError::BadPrice { field, value: p })
    }
}

fn span(from: u32, to: u32) -> Result<(), AnnotationError> {
    if from > to {
        Err(AnnotationError::BadRange {
            from: iso(from),
            to: iso(to),
        })
    } else {
        Ok(())
    }
}

/// The shape as it will be stored (the text trimmed), or why it cannot be.
pub fn validate(shape: &Shape) -> Result<Shape, AnnotationError> {
    match shape {
        Shape::Box {
            from,
            to,
            low,
            high,
        } => {
            let (from, to) = (day("from", *from)?, day("to", *to)?);
            span(from, to)?;
            let (low, high) = (price("low", *low)?, price("high", *high)?);
            if low > high {
                return Err(AnnotationError::LowAboveHigh { low, high });
            }
            Ok(Shape::Box {
                from,
                to,
                low,
                high,
            })
        }
        Shape::Line { price: p, from, to } => {
            let p = price("price", *p)?;
            let from = from.map(|d| day("from", d)).transpose()?;
            let to = to.map(|d| day("to", d)).transpose()?;
            if let (Some(f), Some(t)) = (from, to) {
                span(f, t)?;
            }
            Ok(Shape::Line { price: p, from, to })
        }
        Shape::Text { date, text } => {
            let date = day("date", *date)?;
            let text = text.trim();
            if text.is_empty() {
                return Err(AnnotationError::EmptyText);
            }
            let n = text.chars().count();
            if n > MAX_TEXT_CHARS {
                return Err(AnnotationError::TextTooLong(n));
            }
            Ok(Shape::Text {
                date,
                text: text.to_owned(),
            })
        }
    }
}

/// The six digits of a stock in the stock list.
pub fn known_code(md: &MarketData, code: &str) -> Result<String, AnnotationError> {
    let parsed = StockCode::parse(code).map_err(|e| AnnotationError::BadCode(e.to_string()))?;
    if md.stock_info(&parsed).is_none() {
        return Err(AnnotationError::UnknownCode(parsed.digits().to_owned()));
    }
    Ok(parsed.digits().to_owned())
}

/// Who asks for a removal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remover {
    User,
    Agent,
}

#[derive(Clone)]
pub struct AnnotationStore {
    pool: SqlitePool,
}

type Row = (i64, String, String, String, String, Option<String>, String);

fn from_row(
    (id, code, period, shape, author, conversation, created_at): Row,
) -> Option<Annotation> {
    Some(Annotation {
        id: i32::try_from(id).ok()?,
        code,
        period: NotePeriod::parse(&period)?,
        shape: serde_json::from_str(&shape).ok()?,
        author: match (author.as_str(), conversation) {
            ("agent", Some(conversation)) => Author::Agent { conversation },
            _ => Author::User,
        },
        created_at,
    })
}

impl AnnotationStore {
    /// Uses the shared `wyckoff.db` pool (runs this crate's migrations).
    pub async fn new(pool: SqlitePool) -> Result<AnnotationStore, AnnotationError> {
        let mut migrator = sqlx::migrate!("./migrations");
        migrator.set_ignore_missing(true);
        migrator.run(&pool).await?;
        Ok(AnnotationStore { pool })
    }

    /// Stores a note on `code`'s chart of `period` after checking the code is a listed
    /// stock and the shape holds together; nothing is stored otherwise.
    pub async fn add(
        &self,
        md: &MarketData,
        code: &str,
        period: NotePeriod,
        shape: &Shape,
        author: Author,
        now: DateTime<Utc>,
    ) -> Result<Annotation, AnnotationError> {
        let code = known_code(md, code)?;
        let shape = validate(shape)?;
        if self.list(&code, period).await?.len() >= MAX_PER_CHART {
            return Err(AnnotationError::TooMany { code });
        }
        let (who, conversation) = match &author {
            Author::User => ("user", None),
            Author::Agent { conversation } => ("agent", Some(conversation.clone())),
        };
        let created_at = now.to_rfc3339_opts(SecondsFormat::Secs, true);
        let json = serde_json::to_string(&shape)
            .map_err(|e| AnnotationError::BadArgs(format!("shape not stored: {e}")))?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO chart_annotation (code, period, shape, author, conversation, created_at)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&code)
        .bind(period.as_str())
        .bind(json)
        .bind(who)
        .bind(conversation)
        .bind(&created_at)
        .fetch_one(&self.pool)
        .await?;
        Ok(Annotation {
            id: i32::try_from(id).unwrap_or(i32::MAX),
            code,
            period,
            shape,
            author,
            created_at,
        })
    }

    /// The notes on `code`'s chart of `period`, oldest first.
    pub async fn list(
        &self,
        code: &str,
        period: NotePeriod,
    ) -> Result<Vec<Annotation>, AnnotationError> {
        let rows: Vec<Row> = sqlx::query_as("SELECT id, code, period, shape, author, conversation, created_at FROM chart_annotation WHERE code = ? AND period = ? ORDER BY id")
        .bind(code)
        .bind(period.as_str())
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().filter_map(from_row).collect())
    }

    /// Every note, oldest first.
    pub async fn all(&self) -> Result<Vec<Annotation>, AnnotationError> {
        let rows: Vec<Row> = sqlx::query_as("SELECT id, code, period, shape, author, conversation, created_at FROM chart_annotation ORDER BY id")
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().filter_map(from_row).collect())
    }

    /// Removes note `id` and returns it; the agent may not remove the user's notes.
    pub async fn remove(&self, id: i64, by: Remover) -> Result<Annotation, AnnotationError> {
        let row: Option<Row> = sqlx::query_as("SELECT id, code, period, shape, author, conversation, created_at FROM chart_annotation WHERE id = ?")
        .bind(id)
        .fetch_optional(&self.pool)
        .await?;
        let note = row
            .and_then(from_row)
            .ok_or(AnnotationError::NotFound(id))?;
        if by == Remover::Agent && note.author == Author::User {
            return Err(AnnotationError::NotYours(id));
        }
        sqlx::query("DELETE FROM chart_annotation WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(shape: Shape) -> String {
        match validate(&shape) {
            Err(e) => e.to_string(),
            Ok(s) => format!("accepted {s:?}"),
        }
    }

    #[test]
    fn shapes_are_checked_before_they_are_stored() {
        let table = [
            (
                Shape::Box {
                    from: 20200105,
                    to: 20200301,
                    low: 12.0,
                    high: 10.0,
                },
                "low 12 is above high 10",
            ),
            (
                Shape::Box {
                    from: 20200301,
                    to: 20200105,
                    low: 10.0,
                    high: 12.0,
                },
                "from 2020-03-01 is after to 2020-01-05",
            ),
            (
                Shape::Box {
                    from: 20200230,
                    to: 20200301,
                    low: 10.0,
                    high: 12.0,
                },
                "from 20200230 is not a calendar day (YYYY-MM-DD)",
            ),
            (
                Shape::Line {
                    price: -1.0,
                    from: None,
                    to: None,
                },
                "price must be a positive price, not -1",
            ),
            (
                Shape::Line {
                    price: f64::NAN,
                    from: None,
                    to: None,
                },
                "price must be a positive price, not NaN",
            ),
            (
                Shape::Line {
                    price: 10.0,
                    from: Some(20200601),
                    to: Some(20200501),
                },
                "from 2020-06-01 is after to 2020-05-01",
            ),
            (
                Shape::Text {
                    date: 20201301,
                    text: "x".into(),
                },
                "date 20201301 is not a calendar day (YYYY-MM-DD)",
            ),
            (
                Shape::Text {
                    date: 20200601,
                    text: "  ".into(),
                },
                "a text note needs some text",
            ),
            (
                Shape::Text {
                    date: 20200601,
                    text: "长".repeat(201),
                },
                "a text note is at most 200 characters, this one has 201",
            ),
        ];
        for (shape, want) in table {
            assert_eq!(err(shape), want);
        }
    }

    #[test]
    fn good_shapes_pass_trimmed() {
        assert_eq!(
            validate(&Shape::Text {
                date: 20200601,
                text: "  Spring? ".into()
            })
            .unwrap(),
            Shape::Text {
                date: 20200601,
                text: "Spring?".into()
            }
        );
        let flat = Shape::Box {
            from: 20200601,
            to: 20200601,
            low: 10.0,
            high: 10.0,
        };
        assert_eq!(validate(&flat).unwrap(), flat);
        let line = Shape::Line {
            price: 9.5,
            from: Some(20200601),
            to: None,
        };
        assert_eq!(validate(&line).unwrap(), line);
    }

    #[test]
    fn shapes_and_authors_cross_ipc_tagged() {
        let s = serde_json::to_value(Shape::Line {
            price: 9.5,
            from: None,
            to: Some(20200601),
        })
        .unwrap();
        assert_eq!(
            s,
            serde_json::json!({"kind": "line", "price": 9.5, "from": null, "to": 20200601})
        );
        let a = serde_json::to_value(Author::Agent {
            conversation: "c1".into(),
        })
        .unwrap();
        assert_eq!(
            a,
            serde_json::json!({"type": "agent", "conversation": "c1"})
        );
    }
}
