//! Dated industry membership from Tushare: Shenwan 2021 level-1 industries
//! (`index_classify`) and each one's members with the day they joined and left
//! (`index_member` `in_date`/`out_date`), kept as spans so a past day reads the industry a
//! stock was in then. When the token's points do not reach the Shenwan tables, the
//! `industry` field of `stock_basic` stands in: today's membership, with no dates, stored
//! as an undated load of the day it was read (a past day then reads it as a later load
//! and says so).
//!
//! A stock is a member of an industry on day D when `in_date <= D` and D is before its
//! `out_date` (the day it was taken out), or it has none.

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::Serialize;
use specta::Type;
use sqlx::{QueryBuilder, Sqlite};

use crate::cache::CacheError;
use crate::industries::{
    IndustrySource, IndustryStore, LoadWrite, Member, MemberKind, ROWS_PER_INSERT, latest_load,
    write_load,
};

/// One stock in one industry from `from` until the day before `until` (open when `None`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct IndustrySpan {
    /// Six digits.
    pub code: String,
    pub name: String,
    /// `YYYYMMDD`, the first day in the industry.
    pub from: u32,
    /// `YYYYMMDD`, the first day out of it.
    pub until: Option<u32>,
}

impl IndustrySpan {
    pub fn covers(&self, day: u32) -> bool {
        self.from <= day && self.until.is_none_or(|u| day < u)
    }
}

/// What a vendor gave of industry membership.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum IndustryFetch {
    /// The source has no industries, or was not asked.
    #[default]
    None,
    /// Shenwan level-1 membership with its dates.
    Shenwan {
        spans: Vec<IndustrySpan>,
        /// Level-1 industries `index_classify` named.
        industries: usize,
    },
    /// `stock_basic`'s `industry` (today's, undated): `why` says why not Shenwan.
    StockBasic {
        members: Vec<(String, String)>,
        why: String,
    },
    /// Neither could be read; the rest of the history sync stands.
    Failed { error: String },
}

/// What a sync did with the industry membership, for the sync's report.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IndustrySync {
    /// Shenwan level-1 membership with dates.
    Shenwan {
        industries: usize,
        /// Stocks in an industry today.
        stocks: usize,
        /// Spans stored, past ones included.
        spans: usize,
        /// The day of the load that holds them (an unchanged one keeps its day).
        loaded_on: u32,
        #[serde(flatten)]
        write: LoadWrite,
    },
    /// Today's `stock_basic` industries, undated: a past day reads them as a later load.
    StockBasic {
        industries: usize,
        stocks: usize,
        loaded_on: u32,
        /// Why the Shenwan tables were not used.
        why: String,
        #[serde(flatten)]
        write: LoadWrite,
    },
    Failed {
        error: String,
    },
}

impl IndustrySync {
    /// One line for the sync's text report.
    pub fn line(&self) -> String {
        let write = |w: &LoadWrite| match w {
            LoadWrite::Added => "new",
            LoadWrite::Replaced => "replaced today's",
            LoadWrite::Unchanged => "unchanged since",
        };
        match self {
            IndustrySync::Shenwan {
                industries,
                stocks,
                spans,
                loaded_on,
                write: w,
            } => format!(
                "industries: Shenwan level 1 (tushare), {stocks} stock(s) in {industries} industries today, {spans} dated span(s); {} {}",
                write(w),
                crate::date::iso(*loaded_on)
            ),
            IndustrySync::StockBasic {
                industries,
                stocks,
                loaded_on,
                why,
                write: w,
            } => format!(
                "industries: tushare stock_basic, {stocks} stock(s) in {industries} industries, today's membership without dates ({why}); {} {}",
                write(w),
                crate::date::iso(*loaded_on)
            ),
            IndustrySync::Failed { error } => format!("industries: not loaded: {error}"),
        }
    }
}

/// The spans in force on `day` (today's open ones when `None`): code → industry, and the
/// codes whose industry came from their earliest span starting after the day (no span
/// covers the day, a later one exists: the later membership stands in).
pub fn spans_on(
    spans: &[IndustrySpan],
    day: Option<u32>,
) -> (HashMap<String, String>, HashSet<String>) {
    let mut now: HashMap<String, (u32, String)> = HashMap::new();
    let mut later: HashMap<String, (u32, String)> = HashMap::new();
    for s in spans {
        let covers = match day {
            None => s.until.is_none(),
            Some(d) => s.covers(d),
        };
        if covers {
            // two covering spans (a vendor overlap): the one that started last
            let slot = now
                .entry(s.code.clone())
                .or_insert((s.from, s.name.clone()));
            if s.from > slot.0 {
                *slot = (s.from, s.name.clone());
            }
        } else if let Some(d) = day
            && s.from > d
        {
            let slot = later
                .entry(s.code.clone())
                .or_insert((s.from, s.name.clone()));
            if s.from < slot.0 {
                *slot = (s.from, s.name.clone());
            }
        }
    }
    let mut fell_back = HashSet::new();
    for (code, (_, name)) in later {
        if let std::collections::hash_map::Entry::Vacant(e) = now.entry(code) {
            fell_back.insert(e.key().clone());
            e.insert((0, name));
        }
    }
    (
        now.into_iter().map(|(c, (_, n))| (c, n)).collect(),
        fell_back,
    )
}

impl IndustryStore {
    /// Stores Shenwan spans as the load of `day` (source `tushare_sw`), unless the latest
    /// such load holds exactly them; its members are the open spans (today's membership).
    pub async fn record_spans(
        &self,
        day: u32,
        spans: &[IndustrySpan],
        now: DateTime<Utc>,
    ) -> Result<(LoadWrite, u32), CacheError> {
        let key = IndustrySource::TushareSw.as_str();
        let mut sorted = spans.to_vec();
        sorted.sort();
        // one row per (code, start, industry): the store's key
        sorted.dedup_by(|a, b| (&a.code, a.from, &a.name) == (&b.code, b.from, &b.name));
        let mut tx = wyckoff_db::begin_write(self.pool()).await?;
        if let Some((id, loaded_on)) = latest_load(&mut tx, key).await? {
            let mut held = read_spans(&mut tx, id).await?;
            held.sort();
            if held == sorted {
                tx.commit().await?;
                return Ok((LoadWrite::Unchanged, loaded_on));
            }
        }
        // its members: the open spans, today's membership
        let current: Vec<Member> = sorted
            .iter()
            .filter(|s| s.until.is_none())
            .map(|s| Member {
                kind: MemberKind::Industry,
                code: s.code.clone(),
                name: s.name.clone(),
            })
            .collect::<BTreeSet<Member>>()
            .into_iter()
            .collect();
        let (id, write) = write_load(
            &mut tx,
            day,
            key,
            "tushare index_classify SW2021 L1 + index_member",
            &current,
            now,
        )
        .await?;
        for chunk in sorted.chunks(ROWS_PER_INSERT) {
            let mut qb = QueryBuilder::<Sqlite>::new(
                "INSERT INTO market_industry_span (load_id, code, name, in_date, out_date) ",
            );
            qb.push_values(chunk, |mut row, s| {
                row.push_bind(id)
                    .push_bind(s.code.as_str())
                    .push_bind(s.name.as_str())
                    .push_bind(i64::from(s.from))
                    .push_bind(s.until.map(i64::from));
            });
            qb.build().execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok((write, day))
    }

    /// Every span of a dated load.
    pub async fn spans(&self, load_id: i64) -> Result<Vec<IndustrySpan>, CacheError> {
        let mut conn = self.pool().acquire().await?;
        let mut out = read_spans(&mut conn, load_id).await?;
        out.sort();
        Ok(out)
    }
}

async fn read_spans(
    conn: &mut sqlx::SqliteConnection,
    load_id: i64,
) -> Result<Vec<IndustrySpan>, CacheError> {
    let rows: Vec<(String, String, i64, Option<i64>)> = sqlx::query_as(
        "SELECT code, name, in_date, out_date FROM market_industry_span WHERE load_id = ?",
    )
    .bind(load_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(code, name, from, until)| IndustrySpan {
            code,
            name,
            from: u32::try_from(from).unwrap_or(0),
            until: until.and_then(|u| u32::try_from(u).ok()),
        })
        .collect())
}

/// Stores what a history sync fetched of the industries, dated `day`.
pub async fn record_fetch(
    store: &IndustryStore,
    fetch: IndustryFetch,
    day: u32,
    now: DateTime<Utc>,
) -> Result<Option<IndustrySync>, CacheError> {
    Ok(Some(match fetch {
        IndustryFetch::None => return Ok(None),
        IndustryFetch::Failed { error } => IndustrySync::Failed { error },
        IndustryFetch::Shenwan { spans, industries } => {
            let stocks: BTreeSet<&str> = spans
                .iter()
                .filter(|s| s.until.is_none())
                .map(|s| s.code.as_str())
                .collect();
            let stocks = stocks.len();
            let n = spans.len();
            let (write, loaded_on) = store.record_spans(day, &spans, now).await?;
            IndustrySync::Shenwan {
                industries,
                stocks,
                spans: n,
                loaded_on,
                write,
            }
        }
        IndustryFetch::StockBasic { members, why } => {
            let members: Vec<Member> = members
                .into_iter()
                .map(|(code, name)| Member {
                    kind: MemberKind::Industry,
                    code,
                    name,
                })
                .collect();
            let industries: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
            let industries = industries.len();
            let stocks = members.len();
            let (write, loaded_on) = store
                .record(
                    day,
                    IndustrySource::Tushare,
                    "tushare stock_basic industry",
                    &members,
                    now,
                )
                .await?;
            IndustrySync::StockBasic {
                industries,
                stocks,
                loaded_on,
                why,
                write,
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(code: &str, name: &str, from: u32, until: Option<u32>) -> IndustrySpan {
        IndustrySpan {
            code: code.into(),
            name: name.into(),
            from,
            until,
        }
    }

    #[test]
    fn a_day_reads_the_span_in_force_and_says_which_fell_back_to_a_later_one() {
        let spans = [
            span("000001", "银行", 20140101, Some(20210730)),
            span("000001", "非银金融", 20210730, None),
            span("600519", "食品饮料", 20210730, None),
            span("000002", "房地产", 20000101, Some(20200101)),
        ];
        let read = |day| {
            let (m, later) = spans_on(&spans, day);
            let mut m: Vec<(String, String)> = m.into_iter().collect();
            m.sort();
            let mut later: Vec<String> = later.into_iter().collect();
            later.sort();
            (m, later)
        };
        let pair = |c: &str, n: &str| (c.to_string(), n.to_string());
        // today: the open spans only; 000002 left and is in none
        assert_eq!(
            read(None),
            (
                vec![pair("000001", "非银金融"), pair("600519", "食品饮料")],
                vec![]
            )
        );
        // the day before the move, and the move's own day
        assert_eq!(
            read(Some(20210729)).0,
            vec![pair("000001", "银行"), pair("600519", "食品饮料"),]
        );
        assert_eq!(read(Some(20210729)).1, vec!["600519".to_string()]);
        assert_eq!(
            read(Some(20210730)),
            (
                vec![pair("000001", "非银金融"), pair("600519", "食品饮料")],
                vec![]
            )
        );
        // 2019: 000002 still in, 600519 only from a later span
        assert_eq!(
            read(Some(20190102)),
            (
                vec![
                    pair("000001", "银行"),
                    pair("000002", "房地产"),
                    pair("600519", "食品饮料")
                ],
                vec!["600519".to_string()]
            )
        );
        // out_date is the first day out
        assert!(!spans[3].covers(20200101) && spans[3].covers(20191231));
    }
}
