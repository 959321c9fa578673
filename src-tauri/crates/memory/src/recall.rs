//! Recall before every user turn (seed 记忆召回): find memories related to the message,
//! score them ([`crate::scoring`]), and format the block injected into the prompt.
//!
//! Candidates come from bounded index lookups, newest first (so recall stays fast at
//! 100 000 memories; nothing reads a whole doclist or scans the table):
//! - FTS: memories matching all of the message's terms (codes, words, stopword-filtered
//!   CJK bigrams), and memories matching any of them;
//! - code: memories tagged with a six-digit code of the message (`agent_memory_code`);
//! - keyword: memories containing one of the message's ≤5 Chinese 2-gram keywords (a
//!   2-character keyword is exactly one indexed bigram token);
//! - all preferences (capped at 50, so this is small).
//!
//! Signals are then computed in Rust on each candidate's own text by
//! [`candidate_signals`]: term coverage, code overlap, and a literal substring test for
//! the keywords (the seed's `LIKE '%kw%'`), so the channel a memory came through does not
//! change its score.
//!
//! Preferences are ranked among themselves without decay and fill up with the newest
//! ones when fewer than five match: they are standing rules ("不做创业板") that should
//! reach the model on every turn.
//!
//! # Where the time goes
//!
//! Measured at 10 000 and 100 000 memories (`benches/recall.rs`):
//! - FTS5 opening a term: every term is looked up in every segment of the index and,
//!   because we read newest first, positioned at the end of its doclist — tens of µs per
//!   term, whether one row or 48 are then read. The AND, OR and keyword lookups used to
//!   open the same terms two or three times. Now `LISTS_SQL` opens each distinct term
//!   once and returns its newest [`CHANNEL_LIMIT`] ids (and those of each code); the OR,
//!   keyword and code channels are the newest [`CHANNEL_LIMIT`] of the union of their
//!   lists, which is exactly what the OR lookup returned (a memory among the newest N
//!   matching any term is among the newest N of a term it contains). The AND lookup runs
//!   only when it can add a candidate: a term with fewer than [`CHANNEL_LIMIT`] memories
//!   has a complete list, holding every memory that matches all terms, so when that whole
//!   list is already among the candidates the lookup adds nothing. Most messages have
//!   such a term (a bigram across two words, like 块最 in 板块最近, occurs nowhere).
//! - Moving rows: sqlx-sqlite hands each result row from its database thread to the
//!   caller separately, a few µs per row. The ~150 candidate rows now come back as one
//!   JSON array in one row (`rows_sql`); only recalled memories get their metadata
//!   parsed and their strings copied.
//! - The pool: consecutive recalls landed on different pooled connections (sqlx returns
//!   a connection from a spawned task, after a ping), each with its own page cache and
//!   statement cache. Recall now has a connection of its own (`MemoryStore::recall_conn`).
//! - Scoring: a set of token strings per candidate. `Matcher` walks each candidate's
//!   tokens once, comparing bigrams as character pairs.
//!
//! `candidates_are_the_union_of_the_channel_lookups` (tests below) checks the candidates
//! against the plain union of the five channel lookups.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{ConnectOptions, SqliteConnection};
use wyckoff_engine::codes::stock_codes;

use crate::scoring::{self, Ranked, Signals};
use crate::store::{code_parts, split_codes};
use crate::tokenize::{
    Token, as_bigram, fts_expression, fts_phrase, keywords, query_terms, visit_index_tokens,
};
use crate::{Memory, MemoryError, MemoryStore, MemoryType, Result, time};

pub const MAX_MEMORIES: usize = 8;
pub const MAX_PREFERENCES: usize = 5;
pub const MAX_KEYWORDS: usize = 5;
/// FTS terms taken from one message; later ones add little and cost postings.
pub const MAX_FTS_TERMS: usize = 12;
/// Candidates per channel before scoring.
pub const CHANNEL_LIMIT: usize = 48;
/// Preferences considered per recall: their cap ([`crate::capacity::cap`]), so every
/// stored preference is still considered and the ranking cannot change. (It was 200; more
/// than 50 preferences exist only between an uncapped import and
/// [`MemoryStore::enforce_capacity`], which keeps the newest 50 — the ones read here.)
pub const PREFERENCE_SCAN: usize = 50;
/// Characters of one memory shown in the block.
pub const MAX_CHARS_PER_MEMORY: usize = 200;

/// Per-term and per-code candidate lists in one statement, as
/// `[[kind, index, [id, …]], …]` (kind 0: the index-th FTS phrase of `?1`; kind 1: the
/// index-th code of `?2`); each list holds the newest [`CHANNEL_LIMIT`] ids, read
/// backwards so FTS5 stops at the limit (ids grow with insertion time).
static LISTS_SQL: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT json_group_array(json_array(kind, idx, json(ids))) FROM (
             SELECT 0 AS kind, j.key AS idx, (SELECT json_group_array(rowid) FROM (
                 SELECT rowid FROM agent_memory_fts WHERE agent_memory_fts MATCH j.value
                 ORDER BY rowid DESC LIMIT {CHANNEL_LIMIT})) AS ids
             FROM json_each(?1) j
             UNION ALL
             SELECT 1, j.key, (SELECT json_group_array(memory_id) FROM (
                 SELECT memory_id FROM agent_memory_code WHERE code = j.value
                 ORDER BY memory_id DESC LIMIT {CHANNEL_LIMIT}))
             FROM json_each(?2) j)"
    )
});

/// The candidate rows as one JSON array: the ids in `?1` and the preferences; with
/// `and_lookup`, also the newest [`CHANNEL_LIMIT`] memories matching the FTS expression `?2`.
fn rows_sql(and_lookup: bool) -> String {
    let and = if and_lookup {
        format!(
            "UNION SELECT rowid FROM (SELECT rowid FROM agent_memory_fts
             WHERE agent_memory_fts MATCH ?2 ORDER BY rowid DESC LIMIT {CHANNEL_LIMIT})"
        )
    } else {
        String::new()
    };
    format!(
        "SELECT json_group_array(json_array(
             m.id, m.memory_type, m.content, m.codes, m.created_at, m.source_ref, m.metadata))
         FROM agent_memory m WHERE m.id IN (
             SELECT value FROM json_each(?1)
             UNION SELECT id FROM (SELECT id FROM agent_memory WHERE memory_type = 'preference'
                 ORDER BY created_at DESC, id DESC LIMIT {PREFERENCE_SCAN})
             {and})"
    )
}

static ROWS_SQL: LazyLock<String> = LazyLock::new(|| rows_sql(false));
static ROWS_AND_SQL: LazyLock<String> = LazyLock::new(|| rows_sql(true));

/// What recall looks for in a message.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RecallQuery {
    pub codes: Vec<String>,
    pub keywords: Vec<String>,
    pub fts_terms: Vec<String>,
}

impl RecallQuery {
    pub fn from_message(message: &str) -> Self {
        RecallQuery {
            codes: stock_codes(message),
            keywords: keywords(message, MAX_KEYWORDS),
            fts_terms: query_terms(message, MAX_FTS_TERMS),
        }
    }
}

/// One memory recalled this turn, with why and how strongly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecalledMemory {
    pub memory: Memory,
    pub score: f64,
    pub signals: Signals,
}

/// The result of recall: the block for the prompt and the items (for the UI's "what the
/// agent remembered this turn").
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Recall {
    /// Empty when nothing was recalled.
    pub block: String,
    pub preferences: Vec<RecalledMemory>,
    pub memories: Vec<RecalledMemory>,
    pub query: RecallQuery,
}

impl Recall {
    pub fn is_empty(&self) -> bool {
        self.preferences.is_empty() && self.memories.is_empty()
    }
}

fn one_line(content: &str) -> String {
    let flat: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > MAX_CHARS_PER_MEMORY {
        let cut: String = flat.chars().take(MAX_CHARS_PER_MEMORY).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// The seed's injection format:
///
/// ```text
/// # 用户偏好
/// - 不做创业板，风险承受偏保守
///
/// # 历史记忆
/// - [2026-04-20] 分析过600519，认为处于吸筹末期
/// ```
///
/// Dates are Beijing dates (A-share users think in exchange time). A section without items is left out; nothing → "".
pub fn format_block(preferences: &[&Memory], memories: &[&Memory]) -> String {
    let mut sections = Vec::new();
    if !preferences.is_empty() {
        let mut s = String::from("# 用户偏好");
        for m in preferences {
            s.push_str("\n- ");
            s.push_str(&one_line(&m.content));
        }
        sections.push(s);
    }
    if !memories.is_empty() {
        let mut s = String::from("# 历史记忆");
        for m in memories {
            s.push_str(&format!(
                "\n- [{}] {}",
                wyckoff_time::beijing_date(m.created_at),
                one_line(&m.content)
            ));
        }
        sections.push(s);
    }
    sections.join("\n\n")
}

/// Signals of each memory for a query: FTS coverage (made relative to the best of
/// `memories`), code overlap, and whether a keyword occurs in the content.
pub fn candidate_signals(query: &RecallQuery, memories: &[&Memory]) -> Vec<Signals> {
    let codes: Vec<Vec<&str>> = memories
        .iter()
        .map(|m| m.codes.iter().map(String::as_str).collect())
        .collect();
    let items: Vec<(&str, &[&str])> = memories
        .iter()
        .zip(&codes)
        .map(|(m, c)| (m.content.as_str(), c.as_slice()))
        .collect();
    signals_of(query, &items)
}

/// The query's FTS terms and keywords, prepared to be checked against many candidates in
/// one walk over each candidate's index tokens.
struct Matcher<'q> {
    /// Slots `0..terms` are the FTS terms, `terms..slots` the keywords.
    terms: usize,
    slots: usize,
    /// Slots whose string is one CJK bigram, found among the bigram tokens.
    bigrams: Vec<((char, char), usize)>,
    /// FTS terms compared with the other tokens (words, digit runs, lone characters) and
    /// the codes.
    texts: Vec<(&'q str, usize)>,
    /// Keywords that are not one bigram: a substring test on the content.
    substrings: Vec<(&'q str, usize)>,
}

impl<'q> Matcher<'q> {
    fn new(query: &'q RecallQuery) -> Self {
        let terms = query.fts_terms.len();
        let mut m = Matcher {
            terms,
            slots: terms + query.keywords.len(),
            bigrams: Vec::new(),
            texts: Vec::new(),
            substrings: Vec::new(),
        };
        for (slot, t) in query.fts_terms.iter().enumerate() {
            match as_bigram(t) {
                Some(pair) => m.bigrams.push((pair, slot)),
                None => m.texts.push((t, slot)),
            }
        }
        // A keyword of two CJK characters occurs in the content exactly when it is one of
        // the content's bigram tokens (both characters are in one CJK run, side by side).
        for (i, k) in query.keywords.iter().enumerate() {
            match as_bigram(k) {
                Some(pair) => m.bigrams.push((pair, terms + i)),
                None => m.substrings.push((k, terms + i)),
            }
        }
        m
    }

    /// Marks the slots found in `content` (and, for FTS terms, in `codes`); returns the
    /// share of FTS terms found (as [`scoring::coverage`] over the tokens and codes) and
    /// whether a keyword occurs.
    fn check(&self, content: &str, codes: &[&str], hit: &mut [bool]) -> (f64, bool) {
        hit.fill(false);
        let texts = !self.texts.is_empty();
        visit_index_tokens(content, texts, |token| match token {
            Token::Bigram(a, b) => {
                for &(pair, slot) in &self.bigrams {
                    if pair == (a, b) {
                        hit[slot] = true;
                    }
                }
            }
            Token::Text(s) => {
                for &(t, slot) in &self.texts {
                    if t == s {
                        hit[slot] = true;
                    }
                }
            }
        });
        for code in codes {
            for &(t, slot) in &self.texts {
                if t == *code {
                    hit[slot] = true;
                }
            }
        }
        for &(k, slot) in &self.substrings {
            hit[slot] = content.contains(k);
        }
        let coverage = if self.terms == 0 {
            0.0
        } else {
            hit[..self.terms].iter().filter(|h| **h).count() as f64 / self.terms as f64
        };
        (coverage, hit[self.terms..].iter().any(|h| *h))
    }
}

/// [`candidate_signals`] over (content, codes) pairs.
fn signals_of(query: &RecallQuery, items: &[(&str, &[&str])]) -> Vec<Signals> {
    let matcher = Matcher::new(query);
    let mut hit = vec![false; matcher.slots];
    let checked: Vec<(f64, bool)> = items
        .iter()
        .map(|(content, codes)| matcher.check(content, codes, &mut hit))
        .collect();
    let coverages: Vec<f64> = checked.iter().map(|c| c.0).collect();
    let relevance = scoring::fts_relevance(&coverages);
    items
        .iter()
        .zip(checked.iter().zip(relevance))
        .map(|((_, codes), (&(cov, keyword), rel))| Signals {
            fts: (cov > 0.0).then_some(rel),
            code: codes.iter().any(|c| query.codes.iter().any(|q| q == c)),
            keyword,
        })
        .collect()
}

/// Scores and ranks: preferences without decay (top 5, matched first, then newest) and
/// other memories with decay (top 8, score > 0).
fn rank_split<'a>(
    items: impl Iterator<Item = (i64, MemoryType, DateTime<Utc>, &'a Signals)>,
    now: DateTime<Utc>,
) -> (Vec<Ranked>, Vec<Ranked>) {
    let mut prefs = Vec::new();
    let mut others = Vec::new();
    for (id, memory_type, created_at, s) in items {
        let score = scoring::score(s, memory_type, created_at, now);
        let r = Ranked {
            id,
            score,
            created_at,
        };
        if memory_type == MemoryType::Preference {
            prefs.push(r);
        } else if score > 0.0 {
            others.push(r);
        }
    }
    (
        scoring::rank(prefs, MAX_PREFERENCES),
        scoring::rank(others, MAX_MEMORIES),
    )
}

/// Ranks loaded candidates: non-preferences with decay (top 8, score > 0) and
/// preferences without (top 5, matched first, then newest).
pub fn select(
    candidates: Vec<(Memory, Signals)>,
    now: DateTime<Utc>,
) -> (Vec<RecalledMemory>, Vec<RecalledMemory>) {
    let (prefs, others) = rank_split(
        candidates
            .iter()
            .map(|(m, s)| (m.id, m.memory_type, m.created_at, s)),
        now,
    );
    let mut by_id: HashMap<i64, (Memory, Signals)> =
        candidates.into_iter().map(|c| (c.0.id, c)).collect();
    let mut take = |ranked: Vec<Ranked>| -> Vec<RecalledMemory> {
        ranked
            .into_iter()
            .filter_map(|r| {
                by_id.remove(&r.id).map(|(memory, signals)| RecalledMemory {
                    memory,
                    score: r.score,
                    signals,
                })
            })
            .collect()
    };
    let p = take(prefs);
    let o = take(others);
    (p, o)
}

/// One candidate row of [`ROWS_SQL`], borrowing from the JSON text where it can.
#[derive(Deserialize)]
struct CandidateRow<'a>(
    i64,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Cow<'a, str>,
);

/// A candidate with what scoring needs decoded; the rest stays raw until recalled.
struct Candidate<'a> {
    id: i64,
    memory_type: MemoryType,
    created_at: DateTime<Utc>,
    content: Cow<'a, str>,
    codes: Cow<'a, str>,
    source_ref: Cow<'a, str>,
    metadata: Cow<'a, str>,
}

impl<'a> Candidate<'a> {
    /// Decodes like `Memory::try_from(MemoryRow)`: a bad type or timestamp is an error.
    fn decode(row: CandidateRow<'a>) -> Result<Self> {
        let CandidateRow(id, memory_type, content, codes, created_at, source_ref, metadata) = row;
        Ok(Candidate {
            id,
            memory_type: memory_type.parse()?,
            created_at: time::from_db(&created_at)?,
            content,
            codes,
            source_ref,
            metadata,
        })
    }

    fn to_memory(&self) -> Memory {
        Memory {
            id: self.id,
            memory_type: self.memory_type,
            content: self.content.to_string(),
            codes: split_codes(&self.codes),
            created_at: self.created_at,
            source_ref: self.source_ref.to_string(),
            // Metadata is advisory; a broken value must not hide the memory.
            metadata: serde_json::from_str(&self.metadata).unwrap_or(Value::Null),
        }
    }
}

/// One per-term or per-code list of [`LISTS_SQL`].
#[derive(Deserialize)]
struct IdList(u8, usize, Vec<i64>);

/// The newest [`CHANNEL_LIMIT`] ids of the union of newest-first lists, newest first.
fn newest_of<'a>(lists: impl Iterator<Item = &'a [i64]>) -> Vec<i64> {
    let mut ids: Vec<i64> = lists.flatten().copied().collect();
    ids.sort_unstable_by(|a, b| b.cmp(a));
    ids.dedup();
    ids.truncate(CHANNEL_LIMIT);
    ids
}

fn corrupt(what: &str, e: serde_json::Error) -> MemoryError {
    MemoryError::Corrupt(format!("recall {what}: {e}"))
}

impl MemoryStore {
    /// Recall for a user message, on the store's clock.
    pub async fn recall(&self, message: &str) -> Result<Recall> {
        self.recall_at(message, self.now()).await
    }

    /// Recall for a user message as of `now` (decay is computed against it).
    pub async fn recall_at(&self, message: &str, now: DateTime<Utc>) -> Result<Recall> {
        let query = RecallQuery::from_message(message);
        let json = self.load_candidates(&query).await?;
        let rows: Vec<CandidateRow> =
            serde_json::from_str(&json).map_err(|e| corrupt("candidates", e))?;
        let loaded = rows
            .into_iter()
            .map(Candidate::decode)
            .collect::<Result<Vec<_>>>()?;
        let (prefs, others): (Vec<&Candidate>, Vec<&Candidate>) = loaded
            .iter()
            .partition(|c| c.memory_type == MemoryType::Preference);
        let mut scored: Vec<(&Candidate, Signals)> = Vec::with_capacity(loaded.len());
        for group in [prefs, others] {
            let codes: Vec<Vec<&str>> = group
                .iter()
                .map(|c| code_parts(&c.codes).collect())
                .collect();
            let items: Vec<(&str, &[&str])> = group
                .iter()
                .zip(&codes)
                .map(|(c, codes)| (c.content.as_ref(), codes.as_slice()))
                .collect();
            let signals = signals_of(&query, &items);
            scored.extend(group.into_iter().zip(signals));
        }
        let (ranked_prefs, ranked_others) = rank_split(
            scored
                .iter()
                .map(|(c, s)| (c.id, c.memory_type, c.created_at, s)),
            now,
        );
        let recalled = |ranked: Vec<Ranked>| -> Vec<RecalledMemory> {
            ranked
                .into_iter()
                .filter_map(|r| {
                    scored
                        .iter()
                        .find(|(c, _)| c.id == r.id)
                        .map(|(c, signals)| RecalledMemory {
                            memory: c.to_memory(),
                            score: r.score,
                            signals: *signals,
                        })
                })
                .collect()
        };
        let preferences = recalled(ranked_prefs);
        let memories = recalled(ranked_others);
        let block = format_block(
            &preferences.iter().map(|r| &r.memory).collect::<Vec<_>>(),
            &memories.iter().map(|r| &r.memory).collect::<Vec<_>>(),
        );
        Ok(Recall {
            block,
            preferences,
            memories,
            query,
        })
    }

    /// Loads every candidate (see the module docs) in at most two statements on recall's
    /// own connection, and returns the rows as the JSON text of [`rows_sql`].
    async fn load_candidates(&self, query: &RecallQuery) -> Result<String> {
        let mut slot = self.recall_conn.lock().await;
        let conn = match slot.as_mut() {
            Some(conn) => conn,
            None => slot.insert(self.pool().connect_options().connect().await?),
        };
        let rows = candidate_rows(conn, query).await;
        if rows.is_err() {
            // Whatever went wrong, the next recall starts on a fresh connection.
            *slot = None;
        }
        rows
    }
}

async fn candidate_rows(conn: &mut SqliteConnection, query: &RecallQuery) -> Result<String> {
    let lookup = lookup(conn, query).await?;
    let ids = serde_json::to_string(&lookup.ids).map_err(|e| corrupt("ids", e))?;
    let rows = match lookup.and_expression {
        Some(expression) => {
            sqlx::query_scalar(ROWS_AND_SQL.as_str())
                .bind(ids)
                .bind(expression)
                .fetch_one(&mut *conn)
                .await?
        }
        None => {
            sqlx::query_scalar(ROWS_SQL.as_str())
                .bind(ids)
                .fetch_one(&mut *conn)
                .await?
        }
    };
    Ok(rows)
}

/// The outcome of the per-term and per-code lookups ([`LISTS_SQL`]).
#[derive(Debug, PartialEq)]
struct Lookup {
    /// The OR, keyword and code channels, ascending.
    ids: Vec<i64>,
    /// The AND-of-all-terms expression, when its lookup can add a candidate.
    and_expression: Option<String>,
}

async fn lookup(conn: &mut SqliteConnection, query: &RecallQuery) -> Result<Lookup> {
    // Each distinct term once: the FTS terms, then keywords that are not among them.
    let mut terms: Vec<&String> = Vec::new();
    for t in query.fts_terms.iter().chain(&query.keywords) {
        if !terms.contains(&t) {
            terms.push(t);
        }
    }
    if terms.is_empty() && query.codes.is_empty() {
        return Ok(Lookup {
            ids: Vec::new(),
            and_expression: None,
        });
    }
    let phrases: Vec<String> = terms.iter().map(|t| fts_phrase(t)).collect();
    let lists_json: String = sqlx::query_scalar(LISTS_SQL.as_str())
        .bind(serde_json::to_string(&phrases).map_err(|e| corrupt("terms", e))?)
        .bind(serde_json::to_string(&query.codes).map_err(|e| corrupt("codes", e))?)
        .fetch_one(&mut *conn)
        .await?;
    let lists: Vec<IdList> = serde_json::from_str(&lists_json).map_err(|e| corrupt("lists", e))?;
    let mut term_lists: Vec<&[i64]> = vec![&[]; terms.len()];
    let mut code_lists: Vec<&[i64]> = vec![&[]; query.codes.len()];
    for IdList(kind, index, list) in &lists {
        let slot = match kind {
            0 => term_lists.get_mut(*index),
            _ => code_lists.get_mut(*index),
        };
        if let Some(slot) = slot {
            *slot = list.as_slice();
        }
    }
    let list_of = |term: &String| -> &[i64] {
        terms
            .iter()
            .position(|t| *t == term)
            .and_then(|i| term_lists.get(i).copied())
            .unwrap_or(&[])
    };
    let mut ids = newest_of(query.fts_terms.iter().map(list_of));
    ids.extend(newest_of(query.keywords.iter().map(list_of)));
    ids.extend(newest_of(code_lists.iter().copied()));
    ids.sort_unstable();
    ids.dedup();
    // The AND lookup only finds memories containing every term. A term with fewer than
    // CHANNEL_LIMIT memories has a complete list, which holds all of those; when that
    // whole list is already among the candidates, the lookup cannot add one.
    let covered = query.fts_terms.iter().any(|t| {
        let list = list_of(t);
        list.len() < CHANNEL_LIMIT && list.iter().all(|id| ids.binary_search(id).is_ok())
    });
    let and_expression = if query.fts_terms.len() > 1 && !covered {
        fts_expression(&query.fts_terms, " AND ")
    } else {
        None
    };
    Ok(Lookup {
        ids,
        and_expression,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone};
    use serde_json::Value;

    fn mem(id: i64, t: MemoryType, content: &str, created: DateTime<Utc>) -> Memory {
        Memory {
            id,
            memory_type: t,
            content: content.into(),
            codes: vec![],
            created_at: created,
            source_ref: String::new(),
            metadata: Value::Null,
        }
    }

    #[test]
    fn block_matches_the_seed_format() {
        let d = Utc.with_ymd_and_hms(2026, 4, 20, 2, 0, 0).unwrap();
        let p1 = mem(1, MemoryType::Preference, "不做创业板，风险承受偏保守", d);
        let p2 = mem(2, MemoryType::Preference, "持仓不超过5只", d);
        let m1 = mem(3, MemoryType::Session, "分析过600519，认为处于吸筹末期", d);
        let m2 = mem(
            4,
            MemoryType::Session,
            "用户对尾盘策略\n表示满意",
            d - Duration::days(2),
        );
        assert_eq!(
            format_block(&[&p1, &p2], &[&m1, &m2]),
            "# 用户偏好\n- 不做创业板，风险承受偏保守\n- 持仓不超过5只\n\n# 历史记忆\n- [2026-04-20] 分析过600519，认为处于吸筹末期\n- [2026-04-18] 用户对尾盘策略 表示满意"
        );
        assert_eq!(
            format_block(&[], &[&m1]),
            "# 历史记忆\n- [2026-04-20] 分析过600519，认为处于吸筹末期"
        );
        assert_eq!(format_block(&[&p2], &[]), "# 用户偏好\n- 持仓不超过5只");
        assert_eq!(format_block(&[], &[]), "");
    }

    #[test]
    fn long_memories_are_cut() {
        let d = Utc.with_ymd_and_hms(2026, 4, 20, 2, 0, 0).unwrap();
        let long = "涨".repeat(250);
        let block = format_block(&[], &[&mem(1, MemoryType::Session, &long, d)]);
        assert!(block.ends_with(&format!("{}…", "涨".repeat(200))));
        assert!(!block.contains(&"涨".repeat(201)));
    }

    #[test]
    fn candidate_signals_table() {
        let d = Utc.with_ymd_and_hms(2026, 4, 20, 2, 0, 0).unwrap();
        let q = RecallQuery::from_message("600519 贵州茅台 spring");
        // terms: 600519 贵州 州茅 茅台 spring
        let mut a = mem(1, MemoryType::Session, "贵州茅台出现Spring", d);
        a.codes = vec!["600519".into()];
        let b = mem(2, MemoryType::Session, "茅台酒价回落", d);
        let mut c = mem(3, MemoryType::Session, "另一只股票", d);
        c.codes = vec!["600519".into()];
        let e = mem(4, MemoryType::Session, "银行板块", d);
        let s = candidate_signals(&q, &[&a, &b, &c, &e]);
        assert_eq!(
            s[0],
            Signals {
                fts: Some(1.0),
                code: true,
                keyword: true
            }
        );
        assert_eq!(
            s[1],
            Signals {
                fts: Some(0.2),
                code: false,
                keyword: true
            }
        );
        assert_eq!(
            s[2],
            Signals {
                fts: Some(0.2),
                code: true,
                keyword: false
            }
        );
        assert_eq!(s[3], Signals::default());
    }

    #[test]
    fn candidate_signals_match_token_sets() {
        // The signals as computed before the allocation-free walk: a set of index tokens
        // and codes per memory, and a substring test per keyword.
        fn by_token_sets(query: &RecallQuery, memories: &[&Memory]) -> Vec<Signals> {
            let coverages: Vec<f64> = memories
                .iter()
                .map(|m| {
                    let mut tokens: std::collections::HashSet<String> =
                        crate::tokenize::index_tokens(&m.content)
                            .into_iter()
                            .collect();
                    tokens.extend(m.codes.iter().cloned());
                    scoring::coverage(&query.fts_terms, &tokens)
                })
                .collect();
            let relevance = scoring::fts_relevance(&coverages);
            memories
                .iter()
                .zip(coverages.iter().zip(relevance))
                .map(|(m, (&cov, rel))| Signals {
                    fts: (cov > 0.0).then_some(rel),
                    code: m.codes.iter().any(|c| query.codes.contains(c)),
                    keyword: query
                        .keywords
                        .iter()
                        .any(|k| m.content.contains(k.as_str())),
                })
                .collect()
        }
        let d = Utc.with_ymd_and_hms(2026, 4, 20, 2, 0, 0).unwrap();
        let pieces = [
            "贵州茅台",
            "600519",
            "Spring",
            "ＳＰＲＩＮＧ",
            "６００５１９",
            "茅",
            "台",
            "，",
            " ",
            "白酒板块",
            "wyckoff",
            "sos",
            "中",
            "x1",
            "酒",
            "州茅台酒",
            "ǅx",
            "😀",
            "000001",
        ];
        let mut seed = 7u64;
        let mut next = move |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n as u64) as usize
        };
        let mut text =
            |len: usize| -> String { (0..len).map(|_| pieces[next(pieces.len())]).collect() };
        let mut memories = Vec::new();
        for i in 0..300 {
            let mut m = mem(i, MemoryType::Session, &text(1 + i as usize % 7), d);
            if i % 3 == 0 {
                m.codes = vec!["600519".into(), "300750".into()];
            }
            memories.push(m);
        }
        let refs: Vec<&Memory> = memories.iter().collect();
        let mut queries: Vec<RecallQuery> = (0..60)
            .map(|i| RecallQuery::from_message(&text(1 + i % 9)))
            .collect();
        // hand-made queries too: repeated terms, a one-character term, non-bigram keywords
        queries.push(RecallQuery {
            codes: vec!["600519".into()],
            keywords: vec!["茅台".into(), "酒".into(), "Spring".into(), "茅台".into()],
            fts_terms: vec![
                "茅台".into(),
                "茅台".into(),
                "茅".into(),
                "spring".into(),
                "300750".into(),
            ],
        });
        queries.push(RecallQuery::default());
        for q in &queries {
            assert_eq!(
                candidate_signals(q, &refs),
                by_token_sets(q, &refs),
                "{q:?}"
            );
        }
    }

    #[test]
    fn select_splits_ranks_and_caps() {
        let now = Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap();
        let hit = Signals {
            keyword: true,
            ..Default::default()
        };
        let mut c = Vec::new();
        for i in 0..12 {
            // older ids are older memories
            c.push((
                mem(i, MemoryType::Session, "x", now - Duration::days(20 - i)),
                hit,
            ));
        }
        for i in 100..108 {
            let s = if i == 100 { hit } else { Signals::default() };
            c.push((
                mem(
                    i,
                    MemoryType::Preference,
                    "p",
                    now - Duration::days(200 - i),
                ),
                s,
            ));
        }
        // an unmatched non-preference is never recalled
        c.push((mem(50, MemoryType::Decision, "z", now), Signals::default()));
        let (p, o) = select(c, now);
        let pids: Vec<i64> = p.iter().map(|r| r.memory.id).collect();
        let oids: Vec<i64> = o.iter().map(|r| r.memory.id).collect();
        assert_eq!(pids, vec![100, 107, 106, 105, 104]);
        assert_eq!(oids, vec![11, 10, 9, 8, 7, 6, 5, 4]);
        assert!((p[0].score - 0.6).abs() < 1e-9);
    }

    /// The candidates as the single statement before this layout loaded them: one UNION
    /// of the channel lookups (AND of all terms, OR of all terms, OR of the keywords,
    /// codes, preferences).
    async fn union_of_channels(store: &MemoryStore, query: &RecallQuery) -> Vec<i64> {
        let fts = format!(
            "SELECT rowid FROM (SELECT rowid FROM agent_memory_fts WHERE agent_memory_fts \
             MATCH ? ORDER BY rowid DESC LIMIT {CHANNEL_LIMIT})"
        );
        let mut parts = Vec::new();
        let mut binds = Vec::new();
        let mut expressions = Vec::new();
        if query.fts_terms.len() > 1 {
            expressions.extend(fts_expression(&query.fts_terms, " AND "));
        }
        expressions.extend(fts_expression(&query.fts_terms, " OR "));
        expressions.extend(fts_expression(&query.keywords, " OR "));
        for e in expressions {
            parts.push(fts.clone());
            binds.push(e);
        }
        if !query.codes.is_empty() {
            let placeholders = vec!["?"; query.codes.len()].join(", ");
            parts.push(format!(
                "SELECT memory_id FROM (SELECT DISTINCT memory_id FROM agent_memory_code \
                 WHERE code IN ({placeholders}) ORDER BY memory_id DESC LIMIT {CHANNEL_LIMIT})"
            ));
            binds.extend(query.codes.iter().cloned());
        }
        parts.push(format!(
            "SELECT id FROM (SELECT id FROM agent_memory WHERE memory_type = 'preference' \
             ORDER BY created_at DESC, id DESC LIMIT {PREFERENCE_SCAN})"
        ));
        let sql = format!("SELECT * FROM ({}) ORDER BY 1", parts.join(" UNION "));
        let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(store.pool()).await.unwrap()
    }

    #[tokio::test]
    async fn candidates_are_the_union_of_the_channel_lookups() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::open_pool(dir.path().join("t.db")).await.unwrap();
        let now = Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap();
        let store =
            MemoryStore::with_clock(pool, std::sync::Arc::new(crate::ManualClock::new(now)));
        // Common words (hundreds of memories), rare ones only in old memories (complete
        // lists that are not among the newest candidates), words written next to each
        // other or apart (so cross-word bigrams exist or not), and codes.
        let common = ["白酒", "光伏", "银行", "券商", "医药"];
        let rare = ["稀土", "芯片", "航运"];
        let codes = ["600519", "000001", "300750"];
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move |n: usize| {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
        };
        let mut batch = Vec::new();
        for i in 0..700 {
            let mut words: Vec<&str> = (0..1 + next(3))
                .map(|_| common[next(common.len())])
                .collect();
            if i < 120 && next(3) == 0 {
                words.push(rare[next(rare.len())]);
            }
            let sep = if next(2) == 0 { "" } else { "，" };
            let mut text = words.join(sep);
            if next(4) == 0 {
                text.push_str(codes[next(codes.len())]);
            }
            let t = if i % 40 == 0 {
                MemoryType::Preference
            } else {
                MemoryType::Session
            };
            let at = now - Duration::minutes(10_000 - i as i64);
            batch.push(crate::NewMemory::new(t, format!("{text}（{i}）")).at(at));
        }
        store.bulk_insert_uncapped(&batch).await.unwrap();
        let mut messages: Vec<String> = vec!["你好".into(), "600519".into(), String::new()];
        for _ in 0..150 {
            let mut words: Vec<&str> = (0..1 + next(3))
                .map(|_| common[next(common.len())])
                .collect();
            if next(2) == 0 {
                words.push(rare[next(rare.len())]);
            }
            let sep = ["", "和", " "][next(3)];
            let mut m = words.join(sep);
            if next(3) == 0 {
                m.push_str(codes[next(codes.len())]);
            }
            messages.push(m);
        }
        let (mut with_and, mut without_and) = (0, 0);
        for m in &messages {
            let query = RecallQuery::from_message(m);
            let want = union_of_channels(&store, &query).await;
            let mut conn = store.pool().acquire().await.unwrap();
            match lookup(&mut conn, &query).await.unwrap().and_expression {
                Some(_) => with_and += 1,
                None if query.fts_terms.len() > 1 => without_and += 1,
                None => {}
            }
            drop(conn);
            let rows = store.load_candidates(&query).await.unwrap();
            let rows: Vec<CandidateRow> = serde_json::from_str(&rows).unwrap();
            let mut got: Vec<i64> = rows.iter().map(|r| r.0).collect();
            got.sort_unstable();
            assert_eq!(got, want, "message {m:?}");
        }
        // both ways of settling the AND lookup were exercised
        assert!(with_and > 5 && without_and > 5, "{with_and} {without_and}");
    }

    #[test]
    fn query_from_message() {
        let q = RecallQuery::from_message("600519 贵州茅台的Wyckoff阶段");
        assert_eq!(q.codes, vec!["600519"]);
        assert_eq!(q.keywords, vec!["贵州", "州茅", "茅台", "阶段"]);
        assert_eq!(
            q.fts_terms,
            vec!["600519", "贵州", "州茅", "茅台", "wyckoff", "阶段"]
        );
    }
}
