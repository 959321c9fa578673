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

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::AssertSqlSafe;

use crate::scoring::{self, Ranked, Signals};
use crate::store::{MEMORY_COLUMNS, MemoryRow};
use crate::tokenize::{fts_expression, index_tokens, keywords, query_terms, stock_codes};
use crate::{Memory, MemoryStore, MemoryType, Result, time};

pub const MAX_MEMORIES: usize = 8;
pub const MAX_PREFERENCES: usize = 5;
pub const MAX_KEYWORDS: usize = 5;
/// FTS terms taken from one message; later ones add little and cost postings.
pub const MAX_FTS_TERMS: usize = 12;
/// Candidates per channel before scoring.
pub const CHANNEL_LIMIT: usize = 48;
/// Preferences considered per recall (their cap is 50).
pub const PREFERENCE_SCAN: usize = 200;
/// Characters of one memory shown in the block.
pub const MAX_CHARS_PER_MEMORY: usize = 200;

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
/// Dates are Beijing dates. A section without items is left out; nothing → "".
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
                time::beijing_date(m.created_at),
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
    let coverages: Vec<f64> = memories
        .iter()
        .map(|m| {
            let mut tokens: HashSet<String> = index_tokens(&m.content).into_iter().collect();
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

/// Ranks loaded candidates: non-preferences with decay (top 8, score > 0) and
/// preferences without (top 5, matched first, then newest).
pub fn select(
    candidates: Vec<(Memory, Signals)>,
    now: DateTime<Utc>,
) -> (Vec<RecalledMemory>, Vec<RecalledMemory>) {
    let mut prefs = Vec::new();
    let mut others = Vec::new();
    let mut by_id: HashMap<i64, (Memory, Signals)> = HashMap::new();
    for (m, s) in candidates {
        let sc = scoring::score(&s, m.memory_type, m.created_at, now);
        let r = Ranked {
            id: m.id,
            score: sc,
            created_at: m.created_at,
        };
        if m.memory_type == MemoryType::Preference {
            prefs.push(r);
        } else if sc > 0.0 {
            others.push(r);
        }
        by_id.insert(m.id, (m, s));
    }
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
    let p = take(scoring::rank(prefs, MAX_PREFERENCES));
    let o = take(scoring::rank(others, MAX_MEMORIES));
    (p, o)
}

impl MemoryStore {
    /// Recall for a user message, on the store's clock.
    pub async fn recall(&self, message: &str) -> Result<Recall> {
        self.recall_at(message, self.now()).await
    }

    /// Recall for a user message as of `now` (decay is computed against it).
    pub async fn recall_at(&self, message: &str, now: DateTime<Utc>) -> Result<Recall> {
        let query = RecallQuery::from_message(message);
        let loaded = self.load_candidates(&query).await?;
        let (prefs, others): (Vec<&Memory>, Vec<&Memory>) = loaded
            .iter()
            .partition(|m| m.memory_type == MemoryType::Preference);
        let mut candidates = Vec::with_capacity(loaded.len());
        for group in [prefs, others] {
            let signals = candidate_signals(&query, &group);
            candidates.extend(group.into_iter().cloned().zip(signals));
        }
        let (preferences, memories) = select(candidates, now);
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

    /// Loads every candidate in one statement (one round trip to the database thread):
    /// the union of the bounded channel lookups described in the module docs. Each FTS
    /// lookup orders by rowid so FTS5 walks its doclists backwards and stops at the
    /// limit (ids grow with insertion time).
    async fn load_candidates(&self, query: &RecallQuery) -> Result<Vec<Memory>> {
        let mut parts: Vec<String> = Vec::new();
        let mut binds: Vec<String> = Vec::new();
        let fts_part = format!(
            "SELECT rowid FROM (SELECT rowid FROM agent_memory_fts
             WHERE agent_memory_fts MATCH ? ORDER BY rowid DESC LIMIT {CHANNEL_LIMIT})"
        );
        let mut expressions = Vec::new();
        if query.fts_terms.len() > 1 {
            expressions.extend(fts_expression(&query.fts_terms, " AND "));
        }
        expressions.extend(fts_expression(&query.fts_terms, " OR "));
        expressions.extend(fts_expression(&query.keywords, " OR "));
        for e in expressions {
            parts.push(fts_part.clone());
            binds.push(e);
        }
        if !query.codes.is_empty() {
            let placeholders = vec!["?"; query.codes.len()].join(", ");
            parts.push(format!(
                "SELECT memory_id FROM (SELECT DISTINCT memory_id FROM agent_memory_code
                 WHERE code IN ({placeholders}) ORDER BY memory_id DESC LIMIT {CHANNEL_LIMIT})"
            ));
            binds.extend(query.codes.iter().cloned());
        }
        // Preferences that did not match still compete (score 0) for the free slots.
        parts.push(format!(
            "SELECT id FROM (SELECT id FROM agent_memory WHERE memory_type = 'preference'
             ORDER BY created_at DESC, id DESC LIMIT {PREFERENCE_SCAN})"
        ));
        // Only constant fragments, constant limits and "?" placeholders are interpolated;
        // every value from the message is bound.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM agent_memory m WHERE m.id IN ({})",
            parts.join(" UNION ")
        );
        let mut q = sqlx::query_as::<_, MemoryRow>(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        q.fetch_all(self.pool())
            .await?
            .into_iter()
            .map(Memory::try_from)
            .collect()
    }
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
